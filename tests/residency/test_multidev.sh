#!/usr/bin/env bash
# Several devices under the shim with a budget. One process with two replicas (train_sim
# --devices 2, cudaSetDevice before each replica's step): each device has its own residency
# manager, started at the first allocation made on it, and the budget applies to each; the
# checksum is the native one, nothing touches memory illegally, and both devices stay below the
# native peak with moves on each (the exit line gives the second device's own figures). The
# torchrun layout (4 processes, LOCAL_RANK=r, SIMGPU_DEVICES=4): rank r's manager serves device r:
# moves in every rank's trace, and only device r is used.
set -u
source "$(dirname "$0")/resid_env.sh"
plan $((45 + SAN_CHECKS))
REPORT="$B/shim-report"
ARGS=(--layers 3 --hidden 512 --batch 4 --seq 256 --iters 3)
# devpeak NAME D: device D's peak_device_bytes in the run's SIMGPU_STATS file.
devpeak() {
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["devices"][int(sys.argv[2])]["peak_device_bytes"])' \
        "$work/$1.json" "$2" 2>/dev/null
}

native ref "${ARGS[@]}"
P=$(sed -n 's/.*native_peak_bytes=\([0-9]*\).*/\1/p' "$work/ref.out")
check "native reference run (peak $P bytes)" [ "$(rc ref)" = 0 -a -n "$P" ]
want=$(checksum ref)

# 1. Two devices in one process (traced: the report keys device memory by device).
SIMGPU_DEVICES=2 SHIM_BUDGET=$((P / 2)) SHIM_TRACE_PATH="$work/two.trace" SHIM_LOG_LEVEL=info \
    SIMGPU_STATS="$work/two.json" SIMGPU_BACKTRACE=1 LD_PRELOAD="$PRELOAD" \
    timeout -k 5 "$RUN_TIMEOUT" "$TRAIN" "${ARGS[@]}" --devices 2 >"$work/two.out" 2>"$work/two.err"
echo $? >"$work/two.rc"
check "two devices, SHIM_BUDGET=P/2 on each: exit 0 and the native checksum" \
    [ "$(rc two)" = 0 -a "$(checksum two)" = "$want" ]
check "two devices: no illegal access" is two illegal_accesses -eq 0
check "two devices: no unmap hazard" is two unmap_hazards -eq 0
evs=$(evictions two)
check "two devices: residency moved memory on device 0 (evictions ${evs:-none})" [ "${evs:-0}" -gt 0 ]
# The second device's figures: "; device 1: E evictions (...), R restores, ..., budget B MiB".
evs1=$(sed -n 's/.*info: exit: .*; device 1: \([0-9]*\) evictions .*/\1/p' "$work/two.err" | tail -n 1)
budget1=$(sed -n 's/.*info: exit: .*; device 1: .*, budget \([0-9]*\) MiB.*/\1/p' "$work/two.err" | tail -n 1)
check "two devices: device 1 has its own manager: its evictions (${evs1:-none}) and budget (${budget1:-none} MiB, device 0's $(budget_mib two)) in the exit line" \
    [ "${evs1:-0}" -gt 0 -a -n "$budget1" -a "${budget1:-x}" = "$(budget_mib two)" ]
for d in 0 1; do
    check "two devices: device $d within its budget ($(devpeak two $d) <= $((P / 2)) + 2 chunks), below the native peak $P" \
        [ "$(devpeak two $d)" -le $((P / 2 + 4194304)) ]
done
check "two devices: the planner says it stays off with a second device" \
    grep -q "a second device (1) is managed, within its own budget" "$work/two.err"
check "two devices: no allocation left to the driver as on a device without a manager" \
    sh -c "! grep -q 'residency cannot serve' '$work/two.err'"

# The report: each device's allocations and peak (trace format 1.6): the program's allocated
# bytes, the native peak on each; the summary's device figures are device 0's (the primary).
"$REPORT" summary --json "$work/two.trace" >"$work/two.sum.json" 2>/dev/null
"$REPORT" summary "$work/two.trace" >"$work/two.sum" 2>/dev/null
read -r primary ndev peak0 peak1 allocs0 allocs1 summary_peak < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
by = {x["device"]: x for x in d["devices"]}
print(d["primary_device"], len(by), by.get(0, {}).get("peak_bytes", -1),
      by.get(1, {}).get("peak_bytes", -1), by.get(0, {}).get("allocations", -1),
      by.get(1, {}).get("allocations", -1), d["peak_device_bytes"])' "$work/two.sum.json" 2>/dev/null)
check "two devices: the report lists both devices (${ndev:-none}), device 0 primary (${primary:-none})" \
    [ "${ndev:-0}" = 2 -a "${primary:-x}" = 0 ]
check "two devices: each device's allocated peak is the program's native $P (${peak0:-none}, ${peak1:-none}), the two replicas' allocations alike (${allocs0:-none}, ${allocs1:-none})" \
    [ "${peak0:-x}" = "$P" -a "${peak1:-x}" = "$P" -a "${allocs0:-x}" = "${allocs1:-y}" ]
check "two devices: the summary's peak is device 0's (${summary_peak:-none}), not both devices'" \
    [ "${summary_peak:-x}" = "${peak0:-y}" ]
# Each device's manager in the report (format 1.7: budget, moves and stalls name their device)
# is what the exit line says of it: evictions and restores per device, and its budget.
ev0=$(evictions two)
re0=$(sed -n 's/.*info: exit: .*; residency: [0-9]* evictions ([0-9]* cancelled), \([0-9]*\) restores.*/\1/p' "$work/two.err" | tail -n 1)
re1=$(sed -n 's/.*info: exit: .*; device 1: [0-9]* evictions ([0-9]* cancelled), \([0-9]*\) restores.*/\1/p' "$work/two.err" | tail -n 1)
check "two devices: the report's per-device evictions and restores are the exit line's (device 0: $ev0, $re0; device 1: ${evs1:-none}, ${re1:-none}) and each device's budget is P/2" \
    python3 -c '
import json, sys
d = {x["device"]: x for x in json.load(open(sys.argv[1]))["devices"]}
want = {0: (int(sys.argv[2]), int(sys.argv[3])), 1: (int(sys.argv[4]), int(sys.argv[5]))}
ok = all((d[k]["evictions"], d[k]["restores"]) == want[k] and d[k]["budget_bytes"] == int(sys.argv[6])
         for k in (0, 1))
sys.exit(0 if ok else 1)' "$work/two.sum.json" "${ev0:-x}" "${re0:-x}" "${evs1:-x}" "${re1:-x}" "$((P / 2))"
# The moves report pairs transitions (format 1.8: each names its device): per device, the
# evictions completed are the summary's evictions of that device, and the HTML page draws a memory
# chart for device 1 whose peak is its own.
"$REPORT" moves --json "$work/two.trace" >"$work/two.mv.json" 2>/dev/null
"$REPORT" html -o "$work/two.html" "$work/two.trace" 2>/dev/null
check "two devices: moves --json gives each move its device: completed evictions per device are the summary's, the totals count both" \
    python3 -c '
import json, re, sys
mv = json.load(open(sys.argv[1]))
dev = {x["device"]: x for x in json.load(open(sys.argv[2]))["devices"]}
done = {}
for m in mv["moves"]:
    if m["direction"] == "to host" and m["outcome"] == "done":
        done[m["device"]] = done.get(m["device"], 0) + 1
counts = {int(k): v for k, v in mv["totals"]["by_device"].items()}
page = open(sys.argv[3]).read()
chart = re.search(r"id=.gpu1-memory-chart. data-device=.1. data-peak-bytes=.([0-9]+).", page)
print("# completed evictions by device", done, "moves by device", counts)
sys.exit(0 if done == {0: dev[0]["evictions"], 1: dev[1]["evictions"]} and set(counts) == {0, 1}
         and sum(counts.values()) == len(mv["moves"]) and chart
         and int(chart.group(1)) == dev[1]["peak_bytes"] else 1)' "$work/two.mv.json" "$work/two.sum.json" "$work/two.html"
check "two devices: the text summary has the devices table" \
    grep -q "^devices: 2 (the device figures above are device 0's)" "$work/two.sum"
# memviz: one trace list per device, each peaking where the summary says that device peaks.
"$REPORT" memviz -o "$work/two.pickle" "$work/two.trace" 2>/dev/null
check "two devices: memviz has a trace list per device, each peaking at the summary's device peak" \
    python3 - "$work/two.pickle" "$work/two.sum.json" <<'PY'
import json, pickle, sys
snap = pickle.load(open(sys.argv[1], "rb"))
want = {d["device"]: d["peak_bytes"] for d in json.load(open(sys.argv[2]))["devices"]}
traces = snap["device_traces"]
peaks = {}
for dev, events in enumerate(traces):
    held = peak = 0
    for e in events:
        held += e["size"] if e["action"] == "alloc" else -e["size"] if e["action"] == "free_completed" else 0
        peak = max(peak, held)
    peaks[dev] = peak
devs = {seg["device"] for seg in snap["segments"]}
print("# memviz peaks", peaks, "summary", want, "segment devices", sorted(devs))
sys.exit(0 if len(traces) == 2 and peaks == want and devs <= {0, 1} and snap["libshim"]["devices"] == 2 else 1)
PY

# 1a. A budget per device (budgets): device 0 at P/2, device 1 at 3P/4, each manager within its
# own (the exit line's budgets, the simulated device's peaks), the native checksum; a malformed
# list is reported with its entry and ignored (every device takes budget).
SIMGPU_DEVICES=2 SHIM_BUDGET=$((P / 2)) SHIM_BUDGETS="$((P / 2)),$((P * 3 / 4))" \
    shimmed perdev "${ARGS[@]}" --devices 2
b0=$(sed -n 's/.*info: exit: .*; residency: [^;]*, budget \([0-9]*\) MiB.*/\1/p' "$work/perdev.err" | tail -n 1)
b1=$(sed -n 's/.*info: exit: .*; device 1: .*, budget \([0-9]*\) MiB.*/\1/p' "$work/perdev.err" | tail -n 1)
check "budgets = P/2,3P/4: native checksum, budgets ${b0:-none} and ${b1:-none} MiB, device peaks $(devpeak perdev 0) and $(devpeak perdev 1) within them" \
    [ "$(rc perdev)" = 0 -a "$(checksum perdev)" = "$want" -a "${b0:-0}" = $((P / 2 >> 20)) \
    -a "${b1:-0}" = $((P * 3 / 4 >> 20)) \
    -a "$(devpeak perdev 0)" -le $((P / 2 + 4194304)) -a "$(devpeak perdev 1)" -le $((P * 3 / 4 + 4194304)) \
    -a "$(devpeak perdev 1)" -gt "$(devpeak perdev 0)" ]
SIMGPU_DEVICES=2 SHIM_BUDGET=$((P / 2)) SHIM_BUDGETS="1GiB,soon" shimmed perdevbad "${ARGS[@]}" --devices 2
check "budgets = \"1GiB,soon\": reported with its entry, ignored: both devices at budget, native checksum" \
    [ "$(rc perdevbad)" = 0 -a "$(checksum perdevbad)" = "$want" \
    -a "$(grep -c 'budgets = "1GiB,soon": entry 2 ("soon")' "$work/perdevbad.err")" -ge 1 \
    -a "$(sed -n 's/.*info: exit: .*; device 1: .*, budget \([0-9]*\) MiB.*/\1/p' "$work/perdevbad.err")" = $((P / 2 >> 20)) ]

# 1b. The two devices' managers under random stream timing (SIMGPU_JITTER) in each allocation
# mode, and with a driver call of the residency managers failing now and then (single failures
# of calls the program never makes: a move or an allocation step is undone and retried): every
# run keeps the native checksum, with no illegal access and no unmap hazard.
for mode in async exact segments; do
    native "ref-$mode" "${ARGS[@]}" --mode "$mode"
    Pm=$(sed -n 's/.*native_peak_bytes=\([0-9]*\).*/\1/p' "$work/ref-$mode.out")
    for seed in 3 11; do
        name="jit-$mode-$seed"
        SIMGPU_DEVICES=2 SIMGPU_JITTER=$seed SHIM_BUDGET=$((Pm / 2)) \
            shimmed "$name" "${ARGS[@]}" --mode "$mode" --devices 2
        ok=false
        [ "$(rc "$name")" = 0 -a "$(checksum "$name")" = "$(checksum "ref-$mode")" ] &&
            is "$name" illegal_accesses -eq 0 && is "$name" unmap_hazards -eq 0 && ok=true
        check "two devices, $mode, jitter seed $seed: native checksum, no illegal access, no hazard (exit $(rc "$name"))" $ok
        $ok || tail_err "$name"
    done
done
for fail in cuMemMap:40 cuMemSetAccess:25 cuMemCreate:12 cuMemAddressReserve:9; do
    name="fail-${fail%%:*}"
    SIMGPU_DEVICES=2 SIMGPU_FAIL=$fail SHIM_BUDGET=$((P / 2)) shimmed "$name" "${ARGS[@]}" --devices 2
    ok=false
    [ "$(rc "$name")" = 0 -a "$(checksum "$name")" = "$want" ] &&
        is "$name" illegal_accesses -eq 0 && is "$name" unmap_hazards -eq 0 &&
        is "$name" injected_failures -ge 1 && ok=true
    check "two devices, SIMGPU_FAIL=$fail: native checksum, no illegal access, no hazard, the failure injected ($(figure "$name" injected_failures))" $ok
    $ok || tail_err "$name"
done

# 2. torchrun layout, the four ranks at once.
pids=()
for r in 0 1 2 3; do
    LOCAL_RANK=$r RANK=$r WORLD_SIZE=4 SIMGPU_DEVICES=4 SHIM_BUDGET=$((P / 2)) \
        SHIM_TRACE_PATH="$work/rank$r.trace" SHIM_LOG_LEVEL=info SIMGPU_STATS="$work/rank$r.json" \
        LD_PRELOAD="$PRELOAD" timeout -k 5 "$RUN_TIMEOUT" "$TRAIN" "${ARGS[@]}" --mode async \
        >"$work/rank$r.out" 2>"$work/rank$r.err" &
    pids+=($!)
done
for r in 0 1 2 3; do
    wait "${pids[$r]}"
    echo $? >"$work/rank$r.rc"
done
for r in 0 1 2 3; do
    moves=$("$REPORT" moves --json "$work/rank$r.trace" 2>/dev/null |
        python3 -c 'import json, sys; print(len(json.load(sys.stdin)["moves"]))' 2>/dev/null)
    others=0
    for d in 0 1 2 3; do
        [ "$d" = "$r" ] || others=$((others + $(devpeak "rank$r" $d || echo 1)))
    done
    check "rank $r: exit 0 and the native checksum" \
        [ "$(rc "rank$r")" = 0 -a "$(checksum "rank$r")" = "$want" ]
    check "rank $r: no illegal access" is "rank$r" illegal_accesses -eq 0
    check "rank $r: moves in its trace (${moves:-none})" [ "${moves:-0}" -gt 0 ]
    check "rank $r: only device $r used, below the native peak ($(devpeak "rank$r" $r))" \
        [ "$others" = 0 -a "$(devpeak "rank$r" $r)" -gt 0 -a "$(devpeak "rank$r" $r)" -lt "$P" ]
done
check_sanitizers
[ "$failures" -eq 0 ]
