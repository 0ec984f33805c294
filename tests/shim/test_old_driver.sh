#!/usr/bin/env bash
# A driver that lacks entry points the shim uses (build/simgpu/old: no cuCtxGetDevice, no
# cuMemCreate, no cuFuncGetParamInfo ..., as an older driver; the bench's null driver, which
# has almost nothing) never crashes the program: it completes with the same checksum, the
# shim says once what it cannot do, and it still records what it can.
set -u
source "$(dirname "$0")/shim_env.sh"
plan 9
scratch work
OLD="$B/simgpu/old"
prog="$B/tests/shim/shim_prog"
ARGS=(--mode async --layers 2 --hidden 512 --batch 4 --seq 512 --iters 3)
sum() { sed -n 's/^checksum=\([0-9a-f]*\)$/\1/p' "$1" | tail -n 1; }
# same RC FILE WANT: exit status 0 and the file's checksum is WANT (not empty).
same() { [ "$1" -eq 0 ] && [ -n "$3" ] && [ "$(sum "$2")" = "$3" ]; }

# The gate's list is what the residency files call.
# (the residency files reach the driver only through the seam's REAL(fn, ...) wrappers)
used=$( (grep -oh 'shim\.real\.cu[A-Za-z0-9_]*' "$root"/shim/resid/shim_resid_*.c | sed 's/shim\.real\.//'
    grep -oh 'REAL(cu[A-Za-z0-9_]*' "$root"/shim/resid/driver/shim_resid_driver.c | sed 's/REAL(//') | sort -u)
listed=$(sed -n '/^#define SHIM_RESID_NEEDS/,/^\/\*/p' "$root/shim/core/shim_api.h" |
    grep -o 'X(cu[A-Za-z0-9_]*)' | sed 's/X(\(.*\))/\1/' | sort -u)
check "SHIM_RESID_NEEDS lists exactly the driver entries the residency seam calls ($(echo $used | wc -w) names)" \
    [ -n "$used" -a "$used" = "$listed" ]

"$prog" basic >"$work/plain.out"
C=$(sum "$work/plain.out")
LD_LIBRARY_PATH="$OLD:$LD_LIBRARY_PATH" "$prog" basic >"$work/old.out"
check "shim_prog basic runs on the old driver without the shim (checksum $C)" \
    same 0 "$work/old.out" "$C"

# Default mode (auto): residency needs what the old driver lacks.
LD_LIBRARY_PATH="$OLD:$LD_LIBRARY_PATH" SHIM_TRACE_PATH="$work/basic.trace" \
    LD_PRELOAD="$PRELOAD" "$prog" basic >"$work/basic.out" 2>"$work/basic.err"
rc=$?
check "shim_prog basic under the shim on the old driver: exit 0 (got $rc), checksum $C (got '$(sum "$work/basic.out")')" \
    same $rc "$work/basic.out" "$C"
check "the log says once that residency is off, naming a missing entry point" \
    [ "$(grep -c 'lacks cuCtxGetDevice.*moves nothing' "$work/basic.err")" -eq 1 ]
"$B/shim-report" kernels --json "$work/basic.trace" >"$work/k.json" 2>/dev/null
check "still recorded, the name through the cuKernelGetName fallback: 10 launches of add_seed" \
    python3 -c 'import json, sys
k = {k["name"]: k["launches"] for k in json.load(open(sys.argv[1]))["kernels"]}
sys.exit(k != {"add_seed": 10})' "$work/k.json"

# train_sim through the runtime, with a budget that would make the shim evict if it could; its
# trace must hold what a recording on the full driver holds (layouts through the
# cuKernelGetParamInfo fallback).
"$B/train_sim" "${ARGS[@]}" >"$work/train.out"
T=$(sum "$work/train.out")
SHIM_MODE=record SHIM_TRACE_PATH="$work/full.trace" LD_PRELOAD="$PRELOAD" "$B/train_sim" "${ARGS[@]}" \
    >/dev/null
LD_LIBRARY_PATH="$OLD:$LD_LIBRARY_PATH" SHIM_TRACE_PATH="$work/old.trace" SHIM_BUDGET=64MiB \
    SIMGPU_STATS="$work/train.json" LD_PRELOAD="$PRELOAD" "$B/train_sim" "${ARGS[@]}" \
    >"$work/train-old.out" 2>"$work/train-old.err"
rc=$?
check "train_sim under the shim on the old driver, SHIM_BUDGET=64MiB: exit 0 (got $rc), checksum $T (got '$(sum "$work/train-old.out")')" \
    same $rc "$work/train-old.out" "$T"
check "train_sim: no illegal access" \
    python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["illegal_accesses"] != 0)' \
    "$work/train.json"
for t in full old; do
    "$B/shim-report" allocs --json "$work/$t.trace" >"$work/$t.allocs.json" 2>/dev/null
    "$B/shim-report" kernels --json "$work/$t.trace" >"$work/$t.kernels.json" 2>/dev/null
done
python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
def load(t):
    try:
        allocs = sorted((a["bytes"], a["kind"], a["touches"])
                        for a in json.load(open(f"{w}/{t}.allocs.json"))["allocations"])
        kernels = sorted((k["name"], k["launches"])
                         for k in json.load(open(f"{w}/{t}.kernels.json"))["kernels"])
        return allocs, kernels
    except Exception as e:
        return str(e), None
full, old = load("full"), load("old")
touches = sum(a[2] for a in old[0]) if isinstance(old[0], list) else 0
ok = full == old and touches > 0
print(("ok" if ok else "not ok") + f" - train_sim's trace on the old driver (auto mode, recording only) "
      f"equals the full driver's in record mode: {len(old[0] or [])} allocations, {touches} touches, "
      f"kernels {old[1]}")
sys.exit(0 if ok else 1)
PY
[ $? -eq 0 ] || failures=$((failures + 1))

# The bench's null driver: almost nothing but cuLaunchKernel.
LD_LIBRARY_PATH="$B/bench/null" SHIM_TRACE_PATH="$work/null.trace" LD_PRELOAD="$PRELOAD" \
    "$B/bench/launch_bench" 20000 >"$work/null.out" 2>"$work/null.err"
rc=$?
check "launch_bench on the null driver under the shim: exit 0 (got $rc), one result line" \
    bash -c "[ $rc -eq 0 ] && grep -q '^launches=20000 ns_per_launch=' '$work/null.out'"
[ "$failures" -eq 0 ]
