#!/usr/bin/env bash
# The thread campaign with the machine loaded as well as idle: many threads contending for a
# budget that holds one chunk, where every allocation finds the budget held by other threads'
# submissions in progress or by moves in flight. That state is transient: libshim must wait for
# it (bounded) rather than report out of memory, however slowly the threads are scheduled. The
# machine is loaded by a CPU hog of the script's own (a busy loop per core, each bounded by
# time and killed by its process id when the script exits), which is what made about 1 run
# in 6-10 fail with out of memory before allocations waited (issue 26).
#
# Every run: threads_sim with 64 threads of 1 MiB each (each a member of a 2 MiB slab, with its
# 512 KiB scratch), SHIM_MIN_MANAGED_BYTES=4KiB, SHIM_BUDGET=2MiB, SIMGPU_JITTER=1 (run i uses
# data seed i + 1). A run passes only as the native one does: exit 0, "0 wrong of 64, 0 with a
# CUDA error", no illegal access, no unmap hazard, within the time limit. Out of memory is a
# failure here: the device has room, only the budget is contended.
#
#   RESIDENCY_LOADED_RUNS=N  runs with the hog (default 6 in `make test`, about 40 s; none in
#                            a sanitizer build's suite, where 64 threads under a hog would
#                            outlast the runner's limit: `make SAN=... threads-loaded` runs them;
#                            `make threads-loaded`: 200). Before allocations held up by work in
#                            progress were made on the host, 11 of 200 saw out of memory after
#                            the 30 s wait (2026-11-28, a load average of 30-45 on 2 cores);
#                            since, 0 of 200 (tests/bench/RESULTS-residency.md).
#   RESIDENCY_IDLE_RUNS=N    runs without it, first (default 4; `make threads-loaded`: 20)
#   RESIDENCY_JOBS=J         runs at a time (default and at most: the number of cores)
set -u
source "$(dirname "$0")/resid_env.sh"
# A run of 64 threads on a loaded machine takes several times an idle one's wall time.
[ -n "${RESIDENCY_RUN_TIMEOUT:-}" ] || RUN_TIMEOUT=$((RUN_TIMEOUT * 4))
if [ -n "${SAN:-}" ]; then loaded=${RESIDENCY_LOADED_RUNS:-0}; else loaded=${RESIDENCY_LOADED_RUNS:-6}; fi
idle=${RESIDENCY_IDLE_RUNS:-4}
jobs=${RESIDENCY_JOBS:-$(nproc)}
[ "$jobs" -gt "$(nproc)" ] && jobs=$(nproc)
ARGS=(--threads 64 --large-every 1 --large 1MiB --small 16KiB --launches 2 --rounds 1)
ENV=(SHIM_MIN_MANAGED_BYTES=4KiB SHIM_BUDGET=2MiB SIMGPU_JITTER=1)

# The hog: one busy loop per core, each a subshell (no child of its own) that ends by itself
# after $1 seconds at most; their ids are kept so that the script's exit ends exactly them.
hogs=()
start_hog() {
    local i
    for ((i = 0; i < $(nproc); i++)); do
        (
            end=$((SECONDS + $1))
            while [ "$SECONDS" -lt "$end" ]; do :; done
        ) &
        hogs+=($!)
    done
}
stop_hog() {
    local p
    for p in "${hogs[@]}"; do kill -KILL "$p" 2>/dev/null; done
    for p in "${hogs[@]}"; do wait "$p" 2>/dev/null; done
    hogs=()
}
trap 'stop_hog; [ "${RESIDENCY_KEEP:-0}" = 1 ] && echo "# the runs'"'"' files are in $work" || rm -rf "$work"' EXIT

# one KIND I: run I of threads_sim under the shim.
one() {
    (
        for v in "${ENV[@]}"; do export "${v?}"; done
        run_shimmed "$1$2" "$THREADS" "${ARGS[@]}" --seed $(($2 + 1))
    )
}
# campaign KIND N: N runs, $jobs at a time (waiting for the runs only, never for the hog).
campaign() {
    local i pids=()
    for ((i = 0; i < $2; i++)); do
        one "$1" "$i" </dev/null &
        pids+=($!)
        [ "${#pids[@]}" -ge "$jobs" ] || continue
        wait "${pids[0]}"
        pids=("${pids[@]:1}")
    done
    for i in "${pids[@]}"; do wait "$i"; done
}
# like_native NAME: the run ended as the native one: exit 0, every word right, no CUDA error,
# no illegal access, no unmap hazard.
like_native() {
    [ "$(rc "$1")" = 0 ] && grep -q '^threads_sim: 0 wrong of 64, 0 with a CUDA error$' \
        "$work/$1.out" && is "$1" illegal_accesses -eq 0 && is "$1" unmap_hazards -eq 0
}
# judge KIND N: $work/KIND.verdicts, one line per run, "NAME ok" or "NAME WHAT WENT WRONG" (one
# python start for all the runs' figures: one per run would cost minutes on a loaded machine).
judge() {
    local i name rc ill haz names=()
    for ((i = 0; i < $2; i++)); do names+=("$1$i"); done
    summary "${names[@]}" | while read -r name rc _ ill haz _; do
        if [ "$rc" = 0 ] && [ "$ill" = 0 ] && [ "$haz" = 0 ] &&
            grep -q '^threads_sim: 0 wrong of 64, 0 with a CUDA error$' "$work/$name.out"; then
            echo "$name ok"
        else
            echo "$name exit $rc, illegal_accesses $ill, unmap_hazards $haz," \
                "$(grep -m1 '^threads_sim: [0-9]* wrong' "$work/$name.out")"
        fi
    done >"$work/$1.verdicts"
}
# none_failed KIND N: every one of the N runs of KIND ended as the native one (judged); the
# first failures are shown.
none_failed() {
    local name why bad=0
    while read -r name why; do
        [ "$why" = ok ] && continue
        bad=$((bad + 1))
        [ "$bad" -le 3 ] || continue
        echo "# $name: $why; again: LD_LIBRARY_PATH=$B/simgpu ${ENV[*]} SHIM_TRACE_PATH=" \
            "SHIM_LOG_LEVEL=info LD_PRELOAD='$PRELOAD' $THREADS ${ARGS[*]} --seed $((${name#"$1"} + 1))"
        tail_err "$name" 6
    done <"$work/$1.verdicts"
    echo "# $1: $bad of $2 runs failed"
    [ "$bad" -eq 0 ] && [ "$(grep -c . "$work/$1.verdicts")" -eq "$2" ]
}
# count_ok KIND: how many runs of KIND ended as the native one (judged).
count_ok() { grep -c ' ok$' "$work/$1.verdicts"; }
# native_ok: the workload without the shim: exit 0, every word right.
native_ok() {
    run_native native "$THREADS" "${ARGS[@]}" --seed 1
    like_native native
}

if [ -n "${SAN:-}" ]; then plan 4; else plan 3; fi
check "native: threads_sim ${ARGS[*]}: exit 0, 0 wrong, no CUDA error" native_ok
start=$(date +%s)
campaign idle "$idle"
judge idle "$idle"
echo "# $idle idle runs in $(($(date +%s) - start)) s, $jobs at a time"
check "idle: $(count_ok idle) of $idle runs (${ENV[*]}) end as the native run" \
    none_failed idle "$idle"
if [ "$loaded" -eq 0 ]; then
    echo "skip - loaded runs: none asked for (RESIDENCY_LOADED_RUNS; make threads-loaded runs 200)"
else
    # The hog's bound: every loaded run taking its whole time limit, plus a minute.
    start_hog $(((loaded + jobs - 1) / jobs * RUN_TIMEOUT + 60))
    start=$(date +%s)
    campaign loaded "$loaded"
    stop_hog
    judge loaded "$loaded"
    echo "# $loaded loaded runs in $(($(date +%s) - start)) s, $jobs at a time, $(nproc) busy loops"
    check "loaded: $(count_ok loaded) of $loaded runs (${ENV[*]}) with $(nproc) busy loops end as the native run" \
        none_failed loaded "$loaded"
fi
check_sanitizers
[ "$failures" -eq 0 ]
