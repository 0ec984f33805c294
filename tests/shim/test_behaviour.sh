#!/usr/bin/env bash
# The shim changes nothing the program sees: same results, fork and threads work, and a
# configuration error or mode = "off" leaves the program running untouched (pass-through).
set -u
source "$(dirname "$0")/shim_env.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prog="$B/tests/shim/shim_prog"
run() { SHIM_TRACE_PATH="$work/t-%p.trace" LD_PRELOAD="$PRELOAD" "$prog" "$@"; }

plain=$("$prog" basic)
shimmed=$(run basic)
check "same checksum with and without the shim ($plain)" [ "$plain" = "$shimmed" ]

rm -f "$work"/t-*.trace
out=$(run fork 2>&1)
echo "$out" | sed 's/^/    /'
check "fork: the child is refused by the device and exits cleanly, the parent goes on" \
    grep -q "child exit 0, parent checksum=" <<<"$out"
check "fork: one trace, the parent's" [ "$(ls "$work"/t-*.trace | wc -l)" -eq 1 ]
rm -f "$work"/t-*.trace

out=$(run threads 4 2>&1)
rc=$?
check "threads: four concurrent launchers agree, exit 0, no sanitizer report ($(head -1 <<<"$out"))" \
    bash -c "[ $rc -eq 0 ] && grep -q '^threads=4 checksum=' <<<'$out' && ! grep -q Sanitizer <<<'$out'"

cat >"$work/bad.toml" <<'TOML'
mode = "auto"
budget = "12 potatoes"
TOML
err=$(SHIM_CONFIG="$work/bad.toml" SHIM_TRACE_PATH="$work/bad-%p.trace" LD_PRELOAD="$PRELOAD" "$prog" basic 2>&1 >"$work/out")
check "bad configuration: the program still runs and gives the same result" \
    [ "$(cat "$work/out")" = "$plain" ]
check "bad configuration: the error names file:line:col ($(head -1 <<<"$err"))" \
    grep -q "bad.toml:2:10: error" <<<"$err"
check "bad configuration: pass-through, no trace" bash -c "! ls '$work'/bad-*.trace 2>/dev/null"

out=$(SHIM_MODE=off SHIM_TRACE_PATH="$work/off-%p.trace" LD_PRELOAD="$PRELOAD" "$prog" basic)
check "mode off: same result, no trace" \
    bash -c "[ '$out' = '$plain' ] && ! ls '$work'/off-*.trace 2>/dev/null"

SHIM_TRACE_PATH="$work/x.trace" LD_PRELOAD="$PRELOAD" "$prog" basic >/dev/null 2>&1
err=$(SHIM_TRACE_PATH="$work/x.trace" LD_PRELOAD="$PRELOAD" "$prog" basic 2>&1 >"$work/out")
check "an existing trace file is never overwritten; the program still runs" \
    bash -c "[ '$(cat "$work/out")' = '$plain' ] && grep -q 'no trace' <<<'$err'"
[ "$failures" -eq 0 ]
