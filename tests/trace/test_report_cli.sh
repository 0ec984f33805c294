#!/usr/bin/env bash
# tests/trace/test_report_cli.sh — shim-report's command line says what is wrong: `NAME --help`
# (or -h) prints that subcommand's help on standard output and exits 0, for every subcommand;
# a subcommand given no trace, or shim-report no command, says so (status 2) before its usage; an
# unknown option is named.
set -u
source "$(dirname "$0")/../check.sh"
scratch
REPORT=${BUILD:-build}/shim-report

# The subcommands, as `shim-report --help` lists them (two spaces, the name).
mapfile -t cmds < <("$REPORT" --help | sed -n 's/^  \([a-z]*\) .*/\1/p')
traced=(summary kernels allocs moves html perfetto memviz model plan) # take a trace
plan $((2 + 2 * ${#cmds[@]} + 2 * ${#traced[@]} + 1))
check "shim-report --help lists the ten subcommands (${cmds[*]})" [ ${#cmds[@]} -eq 10 ]

# helps NAME FLAG: exit 0, "usage: shim-report NAME" on standard output, nothing on stderr.
helps() {
    "$REPORT" "$1" "$2" >"$tmp/h.out" 2>"$tmp/h.err"
    local rc=$?
    echo "status $rc"
    [ $rc -eq 0 ] && grep -q "^usage: shim-report $1\b" "$tmp/h.out" && [ ! -s "$tmp/h.err" ]
}
for c in "${cmds[@]}"; do
    check "$c --help: its usage on standard output, status 0" helps "$c" --help
    check "$c -h: the same" helps "$c" -h
done
# names NAME WANT ARGS...: status 2 and WANT on the first line of stderr.
names() {
    local c=$1 want=$2
    shift 2
    "$REPORT" "$c" "$@" >/dev/null 2>"$tmp/n.err"
    local rc=$?
    head -n 2 "$tmp/n.err"
    [ $rc -eq 2 ] && head -n 1 "$tmp/n.err" | grep -qF -- "$want"
}
for c in "${traced[@]}"; do
    extra=()
    [ "$c" = plan ] && extra=(--budget 75%)
    [ "$c" = memviz ] && extra=(-o "$tmp/m.pickle")
    check "$c with no trace: 'no trace given', status 2" names "$c" "shim-report: no trace given" "${extra[@]}"
    check "$c --frobnicate: the unknown option named" names "$c" "unknown option '--frobnicate'" --frobnicate x
done
"$REPORT" >/dev/null 2>"$tmp/none.err"
none_rc=$?
check "shim-report alone: status 2, names the missing command, then lists them" \
    all [ $none_rc -eq 2 ] '&&' grep -qx "shim-report: no command given: COMMAND, one of those below" "$tmp/none.err" '&&' grep -q "^  plan " "$tmp/none.err"
check "config with an argument: named, status 2" \
    names config "shim-report: config: unexpected argument 'x'" x
exit $((fails > 0))
