# report_checks.sh — the checks shim-report's test scripts share (tests/trace/test_report*.sh,
# tests/conf/report_config.sh), sourced after the script has set its own paths. Each check prints
# one "ok - NAME" / "not ok - NAME" line (tests/run_tests.sh counts them) and counts the
# failures in $failures, which the script's last line tests; check is the same as
# tests/shim/shim_env.sh's, so a script may source both.
failures=0

# The programs and the scratch folder these scripts use: $REPORT (shim-report), $GEN (trace_gen),
# $TRAIN (train_sim) of the build, and $work, removed at exit. The script sets $root (the
# checkout) before sourcing this, directly or through tests/shim/shim_env.sh.
REPORT="$root/${BUILD:-build}/shim-report"
GEN="$root/${BUILD:-build}/trace_gen"
TRAIN="$root/${BUILD:-build}/train_sim"

# plan, all and checker (tests/check.sh: the rules of a check); check is this file's.
source "$root/tests/check.sh"
scratch work
# check NAME COMMAND...: runs the command, prints ok / not ok.
check() {
    local name=$1
    shift
    if "$@"; then echo "ok - $name"; else echo "not ok - $name"; failures=$((failures + 1)); fi
}
# has_line FILE LINE: FILE holds LINE, whole.
has_line() { grep -qxF -- "$2" "$1"; }
# json FILE PYTHON-EXPRESSION: the expression (over d, the parsed file) must be true.
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }
# fails_with STATUS TEXT COMMAND...: exits with STATUS (never a crash) and says TEXT on stderr.
# Its output stays in $work/fail.out and $work/fail.err ($work: the script's scratch folder).
fails_with() {
    local want=$1 text=$2
    shift 2
    "$@" >"$work/fail.out" 2>"$work/fail.err"
    local rc=$?
    [ "$rc" = "$want" ] && grep -qF -- "$text" "$work/fail.err" && return 0
    echo "    # exit $rc (want $want); stderr:" && sed 's/^/    # /' "$work/fail.err" | head -5
    return 1
}
