#!/usr/bin/env bash
# A launch touching more allocations than the shim keeps on its stack (100 pointers in one
# by-value struct, 28 more pointing into the same buffers again; through kernelParams and
# through a CU_LAUNCH_PARAM_BUFFER_POINTER block): the trace lists all 100, each once, and
# under a budget that holds one set of 100 buffers but not two, every one is made resident
# before the launch (no zero-copy read, and with unmapped eviction no illegal access).
set -u
source "$(dirname "$0")/shim_env.sh"
plan 9
scratch work
prog="$B/tests/shim/launch_prog"
case "${SAN:-}" in '') limit=30 ;; *) limit=180 ;; esac
ROUNDS=3
sum() { sed -n 's/^checksum=\([0-9a-f]*\)$/\1/p' "$1" | tail -n 1; }
figure() { python3 -c 'import json, sys
try:
    print(json.load(open(sys.argv[1]))[sys.argv[2]])
except Exception:
    print("none")' "$1" "$2"; }

"$prog" wide $ROUNDS >"$work/plain.out"
C=$(sum "$work/plain.out")
check "launch_prog wide runs without the shim (checksum '$C')" [ -n "$C" ]

SHIM_MODE=record SHIM_TRACE_PATH="$work/rec.trace" LD_PRELOAD="$PRELOAD" "$prog" wide $ROUNDS \
    >"$work/rec.out"
check "record mode: same checksum" [ "$(sum "$work/rec.out")" = "$C" ]
"$B/shim-report" allocs --json "$work/rec.trace" >"$work/allocs.json"
"$B/shim-report" kernels --json "$work/rec.trace" >"$work/kernels.json"
python3 - "$work/allocs.json" "$work/kernels.json" "$ROUNDS" <<'PY'
import collections, json, sys
allocs = json.load(open(sys.argv[1]))["allocations"]
kernels = {k["name"]: k["launches"] for k in json.load(open(sys.argv[2]))["kernels"]}
rounds = int(sys.argv[3])
touches = collections.Counter(a["touches"] for a in allocs if a["bytes"] == 2 << 20)
ok = kernels.get("wide") == 2 * rounds and touches == {rounds: 200}
print(("ok" if ok else "not ok") + f" - record mode: {2 * rounds} launches of wide "
      f"({kernels.get('wide')}), each of the 200 buffers touched once per launch of its set, "
      f"{rounds} times (touches: count of buffers {dict(touches)})")
sys.exit(0 if ok else 1)
PY
[ $? -eq 0 ] || failures=$((failures + 1))

# run NAME ENV...: launch_prog wide under the shim in auto mode with a 256 MiB budget (one set
# of 100 x 2 MiB fits, two do not).
run() {
    local name=$1
    shift
    env "$@" SHIM_BUDGET=256MiB SHIM_TRACE_PATH= SHIM_LOG_LEVEL=info SIMGPU_STATS="$work/$name.json" \
        LD_PRELOAD="$PRELOAD" timeout -k 5 $limit "$prog" wide $ROUNDS >"$work/$name.out" 2>"$work/$name.err"
    echo $? >"$work/$name.rc"
}
run vmm
check "auto, budget 256 MiB: exit 0 (got $(cat "$work/vmm.rc")), checksum $C (got '$(sum "$work/vmm.out")')" \
    [ "$(cat "$work/vmm.rc")" = 0 -a "$(sum "$work/vmm.out")" = "$C" ]
check "auto: evictions happened ($(grep -o '[0-9]* evictions' "$work/vmm.err"))" \
    grep -q 'residency: [1-9][0-9]* evictions' "$work/vmm.err"
check "auto: every touched buffer was resident, none read through the host link (zero_copy_kernels $(figure "$work/vmm.json" zero_copy_kernels))" \
    [ "$(figure "$work/vmm.json" zero_copy_kernels)" = 0 ]
check "auto: peak device bytes $(figure "$work/vmm.json" peak_device_bytes) within the 256 MiB budget" \
    [ "$(figure "$work/vmm.json" peak_device_bytes)" -le $((256 << 20)) ]

run unmapped SIMGPU_HOST_VMM=0 SHIM_UNMAPPED_EVICTION=true
check "auto, unmapped eviction: exit 0 (got $(cat "$work/unmapped.rc")), checksum $C (got '$(sum "$work/unmapped.out")')" \
    [ "$(cat "$work/unmapped.rc")" = 0 -a "$(sum "$work/unmapped.out")" = "$C" ]
check "auto, unmapped eviction: no illegal access ($(figure "$work/unmapped.json" illegal_accesses))" \
    [ "$(figure "$work/unmapped.json" illegal_accesses)" = 0 ]
[ "$failures" -eq 0 ]
