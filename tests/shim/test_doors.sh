#!/usr/bin/env bash
# Every door to the driver leads to the shim's hooks, the real answers are kept,
# dlsym(RTLD_NEXT) keeps the caller's identity, and libshim exports only what it must.
set -u
source "$(dirname "$0")/shim_env.sh"
plan 41
scratch work

SHIM_TRACE_PATH="$work/doors-%p.trace" LD_PRELOAD="$PRELOAD" "$B/tests/shim/doors_prog" >"$work/out" 2>&1
rc=$?
cat "$work/out"
check "doors_prog exits 0 under the shim" [ $rc -eq 0 ]
check "a trace was written, mode 0600" bash -c "stat -c %a '$work'/doors-*.trace | grep -qx 600"
trace=$(ls "$work"/doors-*.trace | head -1)
"$B/shim-report" kernels --json "$trace" >"$work/kernels.json" &&
    "$B/shim-report" allocs --json "$trace" >"$work/allocs.json"
check "shim-report reads the trace" [ $? -eq 0 ]
"$B/shim-report" summary --json "$trace" >"$work/summary.json"
python3 - "$work/kernels.json" "$work/allocs.json" "$work/summary.json" <<'PY'
import json, sys
kernels = {k["name"]: k["launches"] for k in json.load(open(sys.argv[1]))["kernels"]}
allocs = json.load(open(sys.argv[2]))["allocations"]
def check(name, ok):
    print(("ok" if ok else "not ok") + " - trace: " + name)
    return ok
ok = check("one launch through each door and form, by name (the captured one once) " + str(kernels),
           kernels == {"door_runtime": 1, "door_link": 1, "door_dlsym": 1, "door_gpa_ptsz": 1,
                       "form_ex": 1, "form_coop": 1, "form_extra": 1, "form_graph": 1})
touched = sorted((a["bytes"], a["kind"], a["touches"]) for a in allocs)
ok &= check("the buffer passed inside a by-value struct is touched by all 8 launches, the other by none "
            + str(touched), touched == [(1 << 20, "managed", 0), (1 << 20, "managed", 8)])
ok &= check("both allocations freed", all(a["freed_ms"] is not None for a in allocs))
summary = json.load(open(sys.argv[3]))
ok &= check("two graph launches recorded", summary["graph_launches"] == 2)
sys.exit(0 if ok else 1)
PY
check "the trace holds every launch with its touched allocations" [ $? -eq 0 ]

# Allocations of 1 MiB are managed by default (min_managed_bytes 64 KiB): raise the floor so
# that the plain and stream-ordered kinds are recorded as the driver's own.
SHIM_MIN_MANAGED_BYTES=4MiB SHIM_TRACE_PATH="$work/kinds.trace" LD_PRELOAD="$PRELOAD" \
    "$B/tests/shim/shim_prog" kinds >/dev/null
check "shim_prog kinds runs under the shim" [ $? -eq 0 ]
"$B/shim-report" allocs --json "$work/kinds.trace" | python3 -c '
import json, sys
a = json.load(sys.stdin)["allocations"]
kinds = sorted((x["kind"], x["bytes"], x["touches"], x["freed_ms"] is not None) for x in a)
want = [("async", 1 << 20, 1, True), ("host", 1 << 20, 0, True),
        ("plain", 1 << 20, 1, True), ("vmm", 2 << 20, 1, True)]
ok = kinds == want
print(("ok" if ok else "not ok") + " - trace: every allocation kind recorded, touched and freed " + str(kinds))
sys.exit(0 if ok else 1)'
check "allocation kinds in the trace" [ $? -eq 0 ]

"$B/tests/shim/next_prog" >/dev/null
check "next_prog passes without the shim" [ $? -eq 0 ]
LD_PRELOAD="$PRELOAD" "$B/tests/shim/next_prog"
check "next_prog passes under the shim" [ $? -eq 0 ]

needed=$(readelf -d "$SHIM_LIB" | grep NEEDED)
check "libshim has no DT_NEEDED on libcuda or libcudart" \
    bash -c "! grep -qE 'libcuda|libcudart' <<<'$needed'"
exports=$(nm -D --defined-only "$SHIM_LIB" | awk '{print $3}' | grep -v '^$')
others=$(grep -vE '^(cu[A-Za-z0-9_]+|dlsym)$' <<<"$exports")
check "libshim exports only cu* hooks and dlsym (others: ${others:-none})" [ -z "$others" ]
check "libshim exports cuLaunchKernel_ptsz and cuGetProcAddress_v2" \
    bash -c "grep -qx cuLaunchKernel_ptsz <<<'$exports' && grep -qx cuGetProcAddress_v2 <<<'$exports'"
[ "$failures" -eq 0 ]
