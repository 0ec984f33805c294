#!/usr/bin/env bash
# Evictions and restores under random stream timing: many runs with SIMGPU_JITTER (random real
# delays before every command, so a missing fence shows up as lost or stale data) and a random
# budget between 40% and 100% of the native peak, cycling through the three allocation modes.
# Every run must exit 0 with the native checksum, no illegal access and no unmap hazard. Run i
# uses seed i + 1 and a budget drawn from i alone, so a failure reproduces from its line.
#
#   RESIDENCY_JITTER_RUNS=N  runs (default 200; 20 under a sanitizer build)
#   RESIDENCY_JOBS=J         runs at a time (default: the number of cores, at most 4)
set -u
source "$(dirname "$0")/resid_env.sh"
plan $((6 + SAN_CHECKS))
ARGS=(--layers 1 --hidden 512 --batch 2 --seq 512 --vocab 2048 --iters 2)
MODES=(segments async exact)
if [ -n "${SAN:-}" ]; then runs=${RESIDENCY_JITTER_RUNS:-20}; else runs=${RESIDENCY_JITTER_RUNS:-200}; fi
jobs=${RESIDENCY_JOBS:-$(nproc)}
[ "$jobs" -gt 4 ] && jobs=4

declare -A C P
for mode in "${MODES[@]}"; do
    native "native-$mode" --mode "$mode" "${ARGS[@]}"
    C[$mode]=$(checksum "native-$mode") P[$mode]=$(figure "native-$mode" peak_device_bytes)
    ok=false
    [ "$(rc "native-$mode")" = 0 ] && [ -n "${C[$mode]}" ] && [ -n "${P[$mode]}" ] && ok=true
    check "$mode: native run: checksum ${C[$mode]}, peak ${P[$mode]}" $ok
    $ok || exit 1
done

# draw I: "MODE SEED BUDGET PERCENT" of run I (a 32-bit integer hash of I: no state, no $RANDOM).
draw() {
    local i=$1 h pct mode=${MODES[$(($1 % 3))]}
    h=$(((i + 1) * 2654435761 % 4294967296))
    h=$(((h ^ (h >> 15)) * 2246822519 % 4294967296))
    pct=$((40 + (h ^ (h >> 13)) % 61))
    echo "$mode $((i + 1)) $((P[$mode] * pct / 100)) $pct"
}

one() {
    local i=$1 mode seed budget
    read -r mode seed budget _ < <(draw "$i")
    SIMGPU_JITTER=$seed SHIM_BUDGET=$budget shimmed "j$i" --mode "$mode" "${ARGS[@]}"
}
running=0
for ((i = 0; i < runs; i++)); do
    one "$i" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait -n
        running=$((running - 1))
    fi
done
wait

declare -A n bad evicted
names=()
for ((i = 0; i < runs; i++)); do names+=("j$i"); done
while read -r name rc sum ill haz e; do
    i=${name#j}
    read -r mode seed budget pct < <(draw "$i")
    n[$mode]=$((${n[$mode]:-0} + 1))
    [ "$e" != - ] && [ "$e" -gt 0 ] && evicted[$mode]=$((${evicted[$mode]:-0} + 1))
    if [ "$rc" = 0 ] && [ "$sum" = "${C[$mode]}" ] && [ "$ill" = 0 ] && [ "$haz" = 0 ]; then
        continue
    fi
    bad[$mode]=$((${bad[$mode]:-0} + 1))
    echo "# run $i failed: mode $mode, SIMGPU_JITTER=$seed, SHIM_BUDGET=$budget ($pct% of" \
        "${P[$mode]}): exit $rc, checksum $sum (want ${C[$mode]}), illegal_accesses $ill," \
        "unmap_hazards $haz, evictions $e"
    echo "#   again: LD_LIBRARY_PATH=$B/simgpu SIMGPU_JITTER=$seed SHIM_BUDGET=$budget" \
        "SHIM_TRACE_PATH= LD_PRELOAD='$PRELOAD' $TRAIN --mode $mode ${ARGS[*]}"
    [ "${bad[$mode]}" -le 2 ] && tail_err "$name" 4
done < <(summary "${names[@]}")
for mode in "${MODES[@]}"; do
    ok=false
    [ "${bad[$mode]:-0}" -eq 0 ] && [ "${evicted[$mode]:-0}" -gt 0 ] && ok=true
    check "$mode: ${n[$mode]:-0} jittered runs at budgets of 40-100%, ${evicted[$mode]:-0} evicting: exit 0, checksum ${C[$mode]}, no illegal access, no unmap hazard (${bad[$mode]:-0} failed)" $ok
done
check_sanitizers
[ "$failures" -eq 0 ]
