#!/usr/bin/env bash
# The shim changes nothing the program sees: same results, fork and threads work, and a
# configuration error or mode = "off" leaves the program running untouched (pass-through).
# Copies and memsets are traced on the stream the entry point meant: NULL in a _ptsz/_ptds
# variant is the per-thread default stream, CU_STREAM_LEGACY the legacy one in any variant.
set -u
source "$(dirname "$0")/shim_env.sh"
scratch work
prog="$B/tests/shim/shim_prog"
run() { SHIM_TRACE_PATH="$work/t-%p.trace" LD_PRELOAD="$PRELOAD" "$prog" "$@"; }
# The copy and memset variants shim_prog's streams mode calls, one line each.
STREAM_CALLS=7
plan $((10 + STREAM_CALLS))

plain=$("$prog" basic)
shimmed=$(run basic)
check "same checksum with and without the shim ($plain)" all [ -n "$plain" ] '&&' [ "$plain" = "$shimmed" ]

rm -f "$work"/t-*.trace
out=$(run fork 2>&1)
echo "$out" | sed 's/^/    /'
check "fork: the child is refused by the device and exits cleanly, the parent goes on" \
    grep -q "child exit 0, parent checksum=" <<<"$out"
check "fork: one trace, the parent's" [ "$(ls "$work"/t-*.trace | wc -l)" -eq 1 ]
rm -f "$work"/t-*.trace

out=$(run threads 4 2>&1)
rc=$?
check "threads: four concurrent launchers agree, exit 0, no sanitizer report ($(grep '^threads=' <<<"$out"))" \
    bash -c '[ "$1" -eq 0 ] && grep -q "^threads=4 checksum=" <<<"$2" && ! grep -q Sanitizer <<<"$2"' _ "$rc" "$out"

cat >"$work/bad.toml" <<'TOML'
mode = "auto"
budget = "12 potatoes"
TOML
err=$(SHIM_CONFIG="$work/bad.toml" SHIM_TRACE_PATH="$work/bad-%p.trace" LD_PRELOAD="$PRELOAD" "$prog" basic 2>&1 >"$work/out")
check "bad configuration: the program still runs and gives the same result" \
    all [ -n "$plain" ] '&&' [ "$(cat "$work/out")" = "$plain" ]
check "bad configuration: the error names file:line:col ($(head -1 <<<"$err"))" \
    grep -qE "^libshim\[[0-9]+\]: error: .*bad.toml:2:10: budget: invalid size" <<<"$err"
check "bad configuration: pass-through, no trace" bash -c "! ls '$work'/bad-*.trace 2>/dev/null"

out=$(SHIM_MODE=off SHIM_TRACE_PATH="$work/off-%p.trace" LD_PRELOAD="$PRELOAD" "$prog" basic)
check "mode off: same result, no trace" \
    bash -c "[ -n '$plain' ] && [ '$out' = '$plain' ] && ! ls '$work'/off-*.trace 2>/dev/null"

SHIM_TRACE_PATH="$work/x.trace" LD_PRELOAD="$PRELOAD" "$prog" basic >/dev/null 2>&1
err=$(SHIM_TRACE_PATH="$work/x.trace" LD_PRELOAD="$PRELOAD" "$prog" basic 2>&1 >"$work/out")
check "an existing trace file is never overwritten; the program still runs" \
    bash -c '[ -n "$2" ] && [ "$1" = "$2" ] && grep -q "no trace" <<<"$3"' _ "$(cat "$work/out")" "$plain" "$err"
out=$(SHIM_TRACE_PATH="$work/streams.trace" LD_PRELOAD="$PRELOAD" "$prog" streams 2>"$work/streams.err")
check "streams: every copy variant ran ($(grep -c . <<<"$out") calls of $STREAM_CALLS)" \
    all [ "$(grep -c . <<<"$out")" = "$STREAM_CALLS" ] '&&' grep -q '^cuMemsetD8_v2_ptds ' <<<"$out"
"$B/shim-report" perfetto -o "$work/streams.json" "$work/streams.trace"
while read -r call bytes stream; do
    got=$(python3 - "$work/streams.json" "${bytes#bytes=}" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}
hits = [names.get((e["pid"], e["tid"]), "?") for e in ev
        if e.get("cat") == "gpu_memcpy" and e["args"]["bytes"] == int(sys.argv[2])]
print(",".join(hits) or "none")
PY
)
    want=${stream#stream=}
    track="stream 0x$([ "$want" = legacy ] && echo 0 || echo 2) ($want default)"
    check "$call on the $want stream traced on the $want stream (${got})" [ "$got" = "$track" ]
done <<<"$out"
[ "$failures" -eq 0 ]
