#!/usr/bin/env bash
# Many threads, each on its own non-blocking stream with its own buffers (threads_sim), under
# libshim with every allocation managed (SHIM_MIN_MANAGED_BYTES=4KiB: the 16 KiB buffers and
# their 8 KiB scratch too), random stream timing (SIMGPU_JITTER) and a random budget between
# the group's floor and 100% of the native peak. Each thread clears its buffer, runs kernels,
# copies half of it through a scratch buffer and back, reads it back and checks every word, so
# a move that is not fenced against any stream's memset, copy or launch shows up as a wrong
# word or an unmap hazard.
#
# No run may give a wrong word, an unmap hazard or an illegal access, crash, or reach the time
# limit (reported "hung"). Out of memory is a clean CUDA error, not a wrong result, and can be
# right: the budget is never below the floor one call needs (a device-to-device copy between
# the 2 MiB-chunk-rounded large buffer and its scratch, plus two chunks), but many threads
# calling at once pin the units their calls use (a synchronous copy for its whole length), and
# what they pin together can exceed a budget near the floor. Such a run passes when every
# error is out of memory and libshim's log says why; each group must still complete at least
# half its runs with no error at all, so a libshim that gives up early fails (measured: 46, 47,
# 43 and 36 of 50 for t8, t16, t32 and t64, whose budgets go down to 10% for 64 threads).
#
# Groups (threads, buffers): the native peak P of each is measured once without the shim
# (SIMGPU_STATS peak_device_bytes); run i belongs to group i % 4 and uses jitter seed and data
# seed i + 1 and a budget drawn from i alone (percent of P, from max(10%, floor) to 100%), so a
# failure reproduces from its line.
#
#   RESIDENCY_THREADS_RUNS=N  runs (default 200; 40 under tsan, 100 under another sanitizer)
#   RESIDENCY_JOBS=J          runs at a time (default and at most: the number of cores)
#   RESIDENCY_MAX_HUNG=H      stop starting runs once H have hung (default 4): each costs the
#                             whole time limit, and the rest would only repeat it
set -u
source "$(dirname "$0")/resid_env.sh"
plan $((13 + SAN_CHECKS))
case "${SAN:-}" in
'') runs=${RESIDENCY_THREADS_RUNS:-200} ;;
tsan) runs=${RESIDENCY_THREADS_RUNS:-40} ;;
*) runs=${RESIDENCY_THREADS_RUNS:-100} ;;
esac
jobs=${RESIDENCY_JOBS:-$(nproc)}
[ "$jobs" -gt "$(nproc)" ] && jobs=$(nproc)
max_hung=${RESIDENCY_MAX_HUNG:-4}
CHUNK=$((2 * 1024 * 1024))
SMALL=$((16 * 1024))
# NAME THREADS LARGE_EVERY LARGE_BYTES: every LARGE_EVERY-th thread has a large buffer.
MIB=$((1024 * 1024))
GROUPS_=("t8 8 2 $((4 * MIB))" "t16 16 4 $((3 * MIB))" "t32 32 4 $((4 * MIB))" "t64 64 2 $((3 * MIB))")
COMMON=(--launches 16 --rounds 2 --small "$SMALL")

chunks() { echo $((($1 + CHUNK - 1) / CHUNK)); }
declare -A P LO FLOOR ARGS
for g in "${GROUPS_[@]}"; do
    read -r name threads every large <<<"$g"
    ARGS[$name]="--threads $threads --large-every $every --large $large ${COMMON[*]}"
    FLOOR[$name]=$((($(chunks "$large") + $(chunks $((large / 2))) + 2) * CHUNK))
    # shellcheck disable=SC2086
    run_native "native-$name" "$THREADS" ${ARGS[$name]}
    P[$name]=$(figure "native-$name" peak_device_bytes)
    ok=false
    [ "$(rc "native-$name")" = 0 ] && grep -q "^threads_sim: 0 wrong of $threads, 0 with" \
        "$work/native-$name.out" && [ -n "${P[$name]}" ] && ok=true
    lo=$(((FLOOR[$name] * 100 + ${P[$name]:-1} - 1) / ${P[$name]:-1}))
    [ "$lo" -lt 10 ] && lo=10
    LO[$name]=$lo
    check "$name: native run (threads_sim ${ARGS[$name]}): exit 0, 0 wrong, peak ${P[$name]:-none}; floor ${FLOOR[$name]}, budgets $lo-100% of the peak" $ok
    $ok || exit 1
    [ "$lo" -le 100 ] || {
        echo "# $name: the floor is above the native peak; the group would not evict"
        exit 1
    }
done

# draw I: "GROUP SEED BUDGET PERCENT" of run I (a 32-bit integer hash of I: no state, no $RANDOM).
draw() {
    local i=$1 h pct name g=${GROUPS_[$(($1 % ${#GROUPS_[@]}))]} budget
    name=${g%% *}
    h=$(((i + 1) * 2654435761 % 4294967296))
    h=$(((h ^ (h >> 15)) * 2246822519 % 4294967296))
    pct=$((LO[$name] + (h ^ (h >> 13)) % (101 - LO[$name])))
    budget=$((P[$name] * pct / 100))
    [ "$budget" -lt "${FLOOR[$name]}" ] && budget=${FLOOR[$name]}
    echo "$name $((i + 1)) $budget $pct"
}

# one I: run I of threads_sim under the shim.
one() {
    local name seed budget
    read -r name seed budget _ < <(draw "$1")
    # shellcheck disable=SC2086
    SHIM_MIN_MANAGED_BYTES=4KiB SIMGPU_JITTER=$seed SHIM_BUDGET=$budget \
        run_shimmed "r$1" "$THREADS" ${ARGS[$name]} --seed "$seed"
}
hung() { grep -lxE '124|137' "$work"/r*.rc 2>/dev/null | wc -l; }
start=$(date +%s)
running=0 started=0
for ((i = 0; i < runs; i++)); do
    [ "$(hung)" -ge "$max_hung" ] && break
    one "$i" </dev/null &
    running=$((running + 1)) started=$((started + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait -n
        running=$((running - 1))
    fi
done
wait
echo "# $started of $runs runs in $(($(date +%s) - start)) s, $jobs at a time"

# Judge every run: one line per run, "I VERDICT EVICTIONS", VERDICT "ok" or what went wrong.
for ((i = 0; i < started; i++)); do echo "$i $(draw "$i")"; done >"$work/draws"
python3 - "$work" <<'PY' >"$work/verdicts"
import json, re, sys
work = sys.argv[1]
def read(path):
    try:
        return open(path, errors="replace").read()
    except OSError:
        return ""
for line in open(f"{work}/draws"):
    i = line.split()[0]
    base = f"{work}/r{i}"
    rc = read(base + ".rc").strip() or "none"
    try:
        st = json.load(open(base + ".json"))
    except Exception:
        st = {}
    m = re.findall(r"^threads_sim: (\d+) wrong of \d+, (\d+) with a CUDA error$",
                   read(base + ".out"), re.M)
    wrong, errors = (int(m[-1][0]), int(m[-1][1])) if m else (None, None)
    ev = re.findall(r"info: exit: .*; residency: (\d+) evictions", read(base + ".err"))
    ill, haz = st.get("illegal_accesses"), st.get("unmap_hazards")
    why = []
    if rc in ("124", "137"):
        why.append("hung")
    elif rc == "66":  # ThreadSanitizer's exit status after a report (check_sanitizers shows it)
        why.append("crashed (exit 66: a sanitizer report)")
    elif rc not in ("0", "1", "3"):  # 1: a CUDA error, 3: a wrong word (both told below)
        why.append(f"crashed (exit {rc})")
    if wrong:
        why.append(f"{wrong} threads with a wrong word")
    explained_oom = False
    if errors:
        told = re.findall(r"^threads_sim: thread \d+: (.*)$", read(base + ".err"), re.M)
        oom = sum(t.endswith("failed (2)") for t in told)
        explained_oom = (oom == errors == len(told) and rc == "1" and
                         re.search(r"libshim\[\d+\]: warning: out of memory: \w", read(base + ".err")))
        if not explained_oom:
            why.append(f"{errors} threads with a CUDA error ({oom} out of memory; first: "
                       + (told[0] if told else "?") + ")")
    if rc == "0" and wrong is None:
        why.append("no summary line")
    if explained_oom and not why:
        print(i, "oom", ev[-1] if ev else "-")
        continue
    if ill != 0:
        why.append(f"illegal_accesses {ill}")
    if haz != 0:
        why.append(f"unmap_hazards {haz}")
    print(i, "ok" if not why else "; ".join(why), ev[-1] if ev else "-")
PY

declare -A n bad evicted kinds oom
first=
total_bad=0 total_oom=0
while read -r i verdict_evictions; do
    verdict=${verdict_evictions% *} e=${verdict_evictions##* }
    read -r name seed budget pct < <(draw "$i")
    n[$name]=$((${n[$name]:-0} + 1))
    [ "$e" != - ] && [ "$e" -gt 0 ] && evicted[$name]=$((${evicted[$name]:-0} + 1))
    [ "$verdict" = ok ] && continue
    if [ "$verdict" = oom ]; then
        oom[$name]=$((${oom[$name]:-0} + 1)) total_oom=$((total_oom + 1))
        continue
    fi
    bad[$name]=$((${bad[$name]:-0} + 1)) total_bad=$((total_bad + 1))
    for k in hung wrong "CUDA error" unmap_hazards illegal_accesses crashed; do
        case $verdict in *"$k"*) kinds[$k]=$((${kinds[$k]:-0} + 1)) ;; esac
    done
    echo "# run $i failed ($name, SIMGPU_JITTER=$seed, SHIM_BUDGET=$budget, $pct% of ${P[$name]}): $verdict"
    if [ -z "$first" ]; then
        first=$i
        echo "#   again: LD_LIBRARY_PATH=$B/simgpu SHIM_MIN_MANAGED_BYTES=4KiB SIMGPU_JITTER=$seed" \
            "SHIM_BUDGET=$budget SHIM_TRACE_PATH= SHIM_LOG_LEVEL=info SIMGPU_STATS=stats.json" \
            "LD_PRELOAD='$PRELOAD' $THREADS ${ARGS[$name]} --seed $seed"
        tail_err "r$i" 12
    fi
done <"$work/verdicts"
for g in "${GROUPS_[@]}"; do
    read -r name threads every large <<<"$g"
    ok=false
    [ "${bad[$name]:-0}" -eq 0 ] && [ "${evicted[$name]:-0}" -gt 0 ] && ok=true
    check "$name: ${n[$name]:-0} runs, $threads threads ($((threads / every)) of $((large / MIB)) MiB, the others $((SMALL / 1024)) KiB), budgets ${LO[$name]}-100% of ${P[$name]}, ${evicted[$name]:-0} evicting: no wrong word, no unmap hazard, no illegal access, no crash or hang, no error but an explained out of memory (${bad[$name]:-0} failed)" $ok
    clean=$((${n[$name]:-0} - ${bad[$name]:-0} - ${oom[$name]:-0}))
    check "$name: $clean of ${n[$name]:-0} runs with no error at all (${oom[$name]:-0} out of memory, explained), at least half" \
        [ $((2 * clean)) -ge "${n[$name]:-0}" ]
done
summary_kinds=
for k in hung wrong "CUDA error" unmap_hazards illegal_accesses crashed; do
    summary_kinds+="${kinds[$k]:-0} $k, "
done
ok=false
[ "$total_bad" -eq 0 ] && [ "$started" -eq "$runs" ] && ok=true
check "all: $started of $runs runs started, $total_bad failed (${summary_kinds%, }; a run may count in several), $total_oom out of memory with the reason logged" $ok
[ "$started" -eq "$runs" ] || echo "# stopped starting runs after $max_hung hung"
check_sanitizers
[ "$failures" -eq 0 ]
