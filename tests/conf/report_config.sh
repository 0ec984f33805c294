#!/usr/bin/env bash
# End-to-end checks of `shim-report config`: defaults, the example file, SHIM_CONFIG, environment
# overrides with provenance, every diagnostic and exit 1 on errors, and a TOML round trip.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
. "$root/tests/trace/report_checks.sh"
plan 25
# Runs shim-report with a clean SHIM_* environment plus the given assignments.
run() { env -u SHIM_CONFIG $(env | sed -n 's/^\(SHIM_[A-Z0-9_]*\)=.*/-u \1/p') "$@"; }

run "$REPORT" config >"$work/out" 2>"$work/err"
check "defaults: exit 0" [ $? -eq 0 ]
check "defaults: mode is auto from the default" \
    has_line "$work/out" 'mode = "auto"                                # default'
check "defaults: no diagnostics" [ ! -s "$work/err" ]

run "$REPORT" config --file conf/shim.toml >"$work/out" 2>"$work/err"
check "example: conf/shim.toml loads: exit 0" [ $? -eq 0 ]
check "example: conf/shim.toml loads cleanly" [ ! -s "$work/err" ]
check "example: sets every option" \
    [ "$(grep -c '# conf/shim.toml:[0-9]*$' "$work/out")" -eq "$(grep -c ' = ' "$work/out")" ]

printf 'budget = "40GiB"\n[log]\nlevel = "debug"\n' >"$work/job.toml"
run SHIM_CONFIG="$work/job.toml" SHIM_BUDGET=60% SHIM_TRACE_PATH= "$REPORT" config \
    >"$work/out" 2>"$work/err"
check "layers: exit 0" [ $? -eq 0 ]
check "layers: SHIM_BUDGET overrides the file" \
    has_line "$work/out" 'budget = "60%"                               # SHIM_BUDGET'
check "layers: the file named by SHIM_CONFIG is read, with its line" \
    has_line "$work/out" "log.level = \"debug\"                          # $work/job.toml:3"
check "layers: an empty SHIM_TRACE_PATH turns the trace off" \
    has_line "$work/out" 'trace.path = ""                              # SHIM_TRACE_PATH'

printf 'budget = "2PiB"\nmode = 1\n[trace]\npaht = "x"\n' >"$work/bad.toml"
run SHIM_PROFILE_ITERATIONS=0 "$REPORT" config --file "$work/bad.toml" >"$work/out" 2>"$work/err"
check "errors: exit 1" [ $? -eq 1 ]
check "errors: no configuration printed" [ ! -s "$work/out" ]
check "errors: out-of-range size" has_line "$work/err" \
    "$work/bad.toml:1:10: error: budget: 2PiB is out of range (1MiB to 1PiB)"
check "errors: wrong type" has_line "$work/err" \
    "$work/bad.toml:2:8: error: mode: expected one of off, record, auto (a string), not an integer"
check "errors: unknown key" has_line "$work/err" \
    "$work/bad.toml:4:1: error: unknown option 'trace.paht' (did you mean 'trace.path'?)"
check "errors: environment" has_line "$work/err" \
    "SHIM_PROFILE_ITERATIONS: error: 0 is out of range (1 to 1000)"
check "errors: every diagnostic and a count" [ "$(wc -l <"$work/err")" -eq 5 ]

printf 'mode = "record"\nbudget = [\n' >"$work/broken.toml"
run "$REPORT" config --file "$work/broken.toml" >"$work/out" 2>"$work/err"
check "malformed: exit 1" [ $? -eq 1 ]
check "malformed: the parse error" \
    has_line "$work/err" "$work/broken.toml:2:10: error: unterminated array"

run "$REPORT" config --file "$work/missing.toml" >"$work/out" 2>"$work/err"
check "missing file: exit 1" [ $? -eq 1 ]
check "missing file: the reason" has_line "$work/err" \
    "$work/missing.toml: error: cannot open the configuration file: No such file or directory"

printf 'budget = "12.5GiB"\n[trace]\nrecord = "allocs,moves"\npath = "a\\"b\\\\c"\n' \
    >"$work/rt.toml"
run "$REPORT" config --file "$work/rt.toml" >"$work/first" 2>&1
run "$REPORT" config --file "$work/first" >"$work/second" 2>&1
check "round trip: the output loads back to the same values" \
    [ "$(sed 's/ *#.*//' "$work/first")" = "$(sed 's/ *#.*//' "$work/second")" ]
check "round trip: values are canonical" \
    has_line "$work/first" "budget = \"12800MiB\"                          # $work/rt.toml:1"

"$REPORT" nonsense >/dev/null 2>&1
check "usage: unknown subcommand exits 2" [ $? -eq 2 ]
"$REPORT" config --bogus >/dev/null 2>&1
check "usage: unknown option exits 2" [ $? -eq 2 ]
[ "$failures" -eq 0 ]
