#!/usr/bin/env bash
# host_resident: allocations of the listed sizes are made in host memory and stay there
# (shim/resid/shim_resid_place.c). The model: a cyclic table of 24 MiB + 4 KiB read by
# operations 0 and 3, cyclic 4 MiB weights read by every operation, two 2 MiB activations (native
# peak 30 MiB), replayed with cudaMalloc for 12 steps natively and under a 16 MiB budget, which
# the table alone exceeds:
#   - with the table's size listed: the native checksum, the resident peak without the table
#     (at most 8 MiB), no move at all (nothing restores the table), the exit line counts it, the
#     kernels read it through the link (zero-copy pages), the trace's create_host transition says
#     "placement", and the step model shim-report builds from the trace leaves it out and says
#     so, as shim-report plan does (the table host-resident, the rest on the device);
#   - a listed size no allocation has: a warning naming it at exit;
#   - threads_sim's 8 threads, with random stream timing (jitter), each of its 4 MiB buffers kept
#     on the host (12 over three rounds) while the 16 KiB ones live in slabs under a 12 MiB
#     budget: every thread's result right, no CUDA error;
#   - on a device without host VMM (unmapped eviction): said once, the table is made on the
#     device, and the job still ends with the native checksum (budget 40 MiB).
set -u
source "$(dirname "$0")/resid_env.sh"
REPLAY="$B/replay" REPORT="$B/shim-report"
TABLE=25169920 # 24 MiB + 4 KiB: not a whole number of granules, as a real table's size
model="$work/table.model"
printf '%s\n' 'hw 25 25 1 10' 'op 100' 'op 100' 'op 100' 'op 100' 'op 100' 'op 100' \
    "alloc $TABLE -1 -1 0 3" 'alloc 4MiB -1 -1 0 1 2 3 4 5' 'alloc 2MiB 1 2 1 2' \
    'alloc 2MiB 4 5 4 5' >"$model"
# traced NAME PROGRAM ARGS...: run_shimmed with a trace at $work/NAME.trace.
traced() {
    local name=$1
    shift
    SHIM_TRACE_PATH="$work/$name.trace" SHIM_LOG_LEVEL=info SIMGPU_STATS="$work/$name.json" \
        LD_PRELOAD="$PRELOAD" timeout -k 5 "$RUN_TIMEOUT" "$@" >"$work/$name.out" \
        2>"$work/$name.err"
    echo $? >"$work/$name.rc"
}
plan $((13 + SAN_CHECKS))
run_native native "$REPLAY" "$model" --steps 12 --malloc sync
want=$(checksum native)
check "native replay: exit 0, checksum ${want:-none}" test "$(rc native)" = 0 -a -n "$want"

SHIM_BUDGET=16MiB SHIM_HOST_RESIDENT=$TABLE,12345 traced kept "$REPLAY" "$model" --steps 12 \
    --malloc sync
check "16 MiB with the table kept on the host: exit $(rc kept), native checksum ($(checksum kept))" \
    test "$(rc kept)" = 0 -a -n "$want" -a "$(checksum kept)" = "$want"
check "the resident peak leaves the table out: $(resident_mib kept) MiB, at most 8, fitted" \
    all test "$(verdict kept)" = fitted '&&' \
    python3 -c 'import sys; sys.exit(not float(sys.argv[1]) <= 8)' "$(resident_mib kept)"
check "nothing moved: $(evictions kept) evictions, $(restores kept) restores" \
    test "$(evictions kept)" = 0 -a "$(restores kept)" = 0
check "the exit line counts it" \
    grep -q 'info: exit: .*; 1 allocations kept on the host (host_resident, 24.0 MiB)' \
    "$work/kept.err"
# The replay samples one 4 KiB page per 64 KiB (its default stride): 384 pages of the table per
# touch, two touches a step.
check "kernels read it through the link: $(figure kept zero_copy_pages) zero-copy pages, at least 12 steps of 768" \
    test "$(figure kept zero_copy_pages)" -ge $((12 * 768))
check "the trace: one create_host transition, reason placement, of the table's size" \
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
t = [(x["event"], x["reason"], x["from"], x["to"], x["bytes"]) for x in d["transitions"]
     if x["event"] == "create_host"]
sys.exit(t != [("create_host", "placement", "none", "host", int(sys.argv[2]))] or d["moves"] != [])' \
    <("$REPORT" moves --json "$work/kept.trace") "$TABLE"
"$REPORT" model "$work/kept.trace" >"$work/kept.model" 2>"$work/kept.model.err"
check "shim-report model of the trace: 3 allocations, none of the table's size" \
    all test "$(grep -c '^alloc ' "$work/kept.model")" = 3 '&&' \
    test "$(grep -c "^alloc $TABLE " "$work/kept.model")" = 0
check "shim-report model says the table was left out, kept on the host (its bytes)" \
    grep -q "^# 1 allocations of the step ($TABLE bytes) kept on the host by libshim's host_resident left out" \
    "$work/kept.model"
"$REPORT" plan "$work/kept.trace" --budget 16MiB --json >"$work/kept.plan.json" 2>&1
check "shim-report plan: the table host-resident (1, its bytes), the rest on the device (8 MiB)" \
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(not (d["host_resident_allocs"] == 1 and d["host_resident_bytes"] == int(sys.argv[2]) and
              d["device_resident_bytes"] == 8 << 20 and d["moved_allocs"] == 0 and d["feasible"]))' \
    "$work/kept.plan.json" "$TABLE"
check "a listed size no allocation has: a warning naming it" \
    grep -q 'warning: host_resident: no managed allocation of exactly 12345 bytes was made (entry 2' \
    "$work/kept.err"

SIMGPU_HOST_VMM=0 SHIM_UNMAPPED_EVICTION=true SHIM_BUDGET=40MiB SHIM_HOST_RESIDENT=$TABLE \
    run_shimmed novmm "$REPLAY" "$model" --steps 12 --malloc sync
check "no host VMM: said once, made on the device, native checksum (exit $(rc novmm))" \
    all test "$(rc novmm)" = 0 -a "$(checksum novmm)" = "$want" '&&' \
    test "$(grep -c 'warning: host_resident: this device cannot map host memory' "$work/novmm.err")" = 1
SIMGPU_JITTER=7 SHIM_MIN_MANAGED_BYTES=4KiB SHIM_BUDGET=12MiB SHIM_HOST_RESIDENT=4MiB \
    run_shimmed threads "$THREADS" --threads 8 --large-every 2 --large 4MiB --small 16KiB \
    --launches 8 --rounds 3
check "8 threads with jitter, their 4 MiB buffers kept on the host: 0 wrong (exit $(rc threads))" \
    all test "$(rc threads)" = 0 '&&' grep -qx 'threads_sim: 0 wrong of 8, 0 with a CUDA error' \
    "$work/threads.out" "$work/threads.err" '&&' \
    grep -q '; 12 allocations kept on the host (host_resident, 48.0 MiB)' "$work/threads.err"
check_sanitizers 2>/dev/null || true
[ "$failures" -eq 0 ]
