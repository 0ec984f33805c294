#!/usr/bin/env bash
# A function handle reused after an unload is read with its new layout: module (or library) A's
# k_ptr_int(ptr, int) is launched on buffer X and unloaded; B's k_int_int_ptr(int, int, ptr)
# gets the same handle value from the driver and is launched on buffer Y. The trace must show
# each kernel by its own name and each buffer touched once (a stale layout reads B's two ints
# as A's pointer: Y untouched, two launches of k_ptr_int).
set -u
source "$(dirname "$0")/shim_env.sh"
plan 7
scratch work
prog="$B/tests/shim/launch_prog"

for mode in reload reload-library; do
    plain=$("$prog" $mode | grep '^checksum=')
    SHIM_MODE=record SHIM_TRACE_PATH="$work/$mode.trace" LD_PRELOAD="$PRELOAD" "$prog" $mode \
        >"$work/$mode.out" 2>"$work/$mode.err"
    rc=$?
    check "$mode: under the shim, exit 0 (got $rc), the handle was reused, $plain" \
        bash -c "[ $rc -eq 0 ] && grep -q '^handle reused' '$work/$mode.out' &&
            grep -qx '$plain' '$work/$mode.out' && [ -n '$plain' ]"
    "$B/shim-report" kernels --json "$work/$mode.trace" >"$work/$mode.k.json" 2>/dev/null
    "$B/shim-report" allocs --json "$work/$mode.trace" >"$work/$mode.a.json" 2>/dev/null
    python3 - "$mode" "$work/$mode.k.json" "$work/$mode.a.json" <<'PY'
import json, sys
mode = sys.argv[1]
try:
    kernels = {k["name"]: k["launches"] for k in json.load(open(sys.argv[2]))["kernels"]}
    touches = [a["touches"] for a in json.load(open(sys.argv[3]))["allocations"]]
except Exception as e:
    kernels, touches = str(e), None
ok = kernels == {"k_ptr_int": 1, "k_int_int_ptr": 1}
print(("ok" if ok else "not ok") + f" - {mode}: one launch of each kernel, by its own name {kernels}")
ok2 = touches == [1, 1]
print(("ok" if ok2 else "not ok") + f" - {mode}: X and Y each touched once, Y through the new "
      f"layout's third parameter {touches}")
sys.exit(0 if ok and ok2 else 1)
PY
    [ $? -eq 0 ] || failures=$((failures + 1))
done

# Auto mode: the same program runs with the same result.
want=$("$prog" reload | grep '^checksum=')
out=$(SHIM_TRACE_PATH= LD_PRELOAD="$PRELOAD" "$prog" reload 2>&1)
check "reload in auto mode: $want (got $(grep '^checksum=' <<<"$out"))" grep -qx "$want" <<<"$out"
[ "$failures" -eq 0 ]
