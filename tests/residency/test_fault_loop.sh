#!/usr/bin/env bash
# SQLite-style fault injection over every driver call libshim makes while it evicts and restores:
# a clean run under SIMGPU_FAIL_CALLER=libshim counts the calls per entry point; then, for each
# entry E and sampled N = 1..count(E), the same run with the Nth call of E from libshim failing
# must end consistent. Four workloads: train_sim in its three allocation modes at half its
# native peak (exact: cudaMalloc / cudaFree, which synchronises; async: stream-ordered frees,
# chunks reused in stream order; segments: PyTorch-like cached 2 and 20 MiB segments), and
# threads_sim (8 threads on their own streams, 16 KiB and 4 MiB buffers, every one managed) at
# three quarters of its peak: at half, 12 MiB, the budget is within a chunk of the floor one call
# needs, where threads pinning their units together may rightly run out of memory (1 clean run
# in 20; test_threads.sh accepts it), which would blur what a failure injected here causes; at
# three quarters no clean run of 40 did, and each still evicts about 8 times.
#
# Single failures (SIMGPU_FAIL=E:N, only the Nth call fails): the run must exit 0 with the
# clean result (train_sim: the native checksum; threads_sim: "0 wrong of 8, 0 with a CUDA
# error"), no illegal access and no unmap hazard (the clean run has none). Two relaxations, where
# the failure may rightly reach the program; such a run must then be a clean failure of the
# program (exit 1 with its "... failed" line, no wrong result, no illegal access, no unmap
# hazard; train_sim's checksum, if it got as far as printing one, the clean one), counted as
# "surfaced":
#   - entry points the program calls itself (those its runtime, or threads_sim itself, calls
#     without the shim: launches, copies, events, ...): libshim forwards the program's calls and
#     returns what the driver returned, so the Nth call may be the program's own;
#   - entry points that fail with out of memory (allocations, reservations): the program may
#     then be told "out of memory" (and nothing else), as it would be on a full device.
# A single failure of any other call only libshim makes (mapping, access, its queries and
# waits) must not reach the program.
#
# Sticky failures (SIMGPU_FAIL=E:N:sticky, every call of E from libshim from the Nth on fail):
# libshim cannot always carry on without E, so the failure may surface to the program, as any
# CUDA error: exit 1 with the program's "... failed" line; or be absorbed: exit 0 with the clean
# result. Either way never a hang, never a wrong result (train_sim: a printed checksum is the
# clean one; threads_sim: 0 wrong), no unmap hazard and no illegal access: the program stops at
# its first error, so a fault can only come from a range libshim left unmapped or half moved.
# Sticky runs sample N = 1, the middle and the last call of each entry.
#
# Every run is under a time limit (20 times the slowest clean run, at least 10 s, at most
# $RUN_TIMEOUT); a run that reaches it is "hung", and the rest of its entry's runs of that kind
# are left out (each would wait as long). Every N is planned; runs start for a time budget and
# then stop, in an order that samples every entry evenly wherever it stops: each entry's N are
# spread (first, last, middle, then the middles of the halves, ...) and taken rank by rank over
# all entries and workloads, sticky before single. On 2 cores the default budget ran 1,900 to
# 2,400 of the 3,900 to 4,100 planned runs (every sticky run and about half of the single N;
# each entry's line says how many ran); a slower, sanitized or hanging build covers less, never
# nothing.
#
#   RESIDENCY_FAULT_ALL=1       every N, single and sticky, whatever the time
#   RESIDENCY_FAULT_MODES=W     workloads, space-separated, of "exact async segments threads
#                               planned" (planned: async train_sim long enough for the
#                               in-process plan to apply); default all five, under a sanitizer
#                               fewer, so that the loop fits the suite's time limit: tsan
#                               "async threads", asan "exact segments planned", ubsan all five
#   RESIDENCY_FAULT_SECONDS=S   runs start for S seconds (default 170; 240 under a sanitizer)
#   RESIDENCY_FAULT_TIMEOUT=S   time limit of one faulted run (default: see above)
#   RESIDENCY_JOBS=J            runs at a time (default: the number of cores, at most 4)
set -u
source "$(dirname "$0")/resid_env.sh"
# train_sim: the smallest workload found that both evicts and restores at half its peak (about
# 20 of each). threads_sim: four 4 MiB buffers and four of 16 KiB, two rounds of 8 launches.
TARGS="--layers 1 --hidden 512 --batch 1 --seq 128 --vocab 1024 --iters 1"
declare -A PROG WARGS SELF WENV SHARE # SHARE: the budget, percent of the native peak
for m in exact async segments; do
    PROG[$m]=$TRAIN WARGS[$m]="--mode $m $TARGS" SELF[$m]=libcudart WENV[$m]= SHARE[$m]=50
done
SHARE[threads]=75
# planned: async train_sim long enough for the in-process plan to apply (step detected after 2
# iterations, profiled for 3, recorded 1 more, installed at the next boundary: iterations 8-9).
PROG[planned]=$TRAIN SELF[planned]=libcudart WENV[planned]= SHARE[planned]=50
WARGS[planned]="--mode async $TARGS"
WARGS[planned]=${WARGS[planned]/--iters 1/--iters 10}
PROG[threads]=$THREADS SELF[threads]=threads_sim WENV[threads]=SHIM_MIN_MANAGED_BYTES=4KiB
WARGS[threads]="--threads 8 --large-every 2 --large 4MiB --small 16KiB --launches 8 --rounds 2"
case "${SAN:-}" in
'' | ubsan) default_modes="exact async segments threads planned" ;;
tsan) default_modes="async threads" ;;
*) default_modes="exact segments planned" ;;
esac
read -r -a MODES <<<"${RESIDENCY_FAULT_MODES:-$default_modes}"
jobs=${RESIDENCY_JOBS:-$(nproc)}
[ "$jobs" -gt 4 ] && jobs=4
every=${RESIDENCY_FAULT_ALL:-0}
if [ -n "${SAN:-}" ]; then seconds=${RESIDENCY_FAULT_SECONDS:-240}; else seconds=${RESIDENCY_FAULT_SECONDS:-170}; fi

# wrun native|shimmed NAME WORKLOAD [VAR=VALUE...]: one run of the workload with the variables
# set (each word of WARGS is one argument).
wrun() {
    local how=$1 name=$2 w=$3
    shift 3
    (
        for v in ${WENV[$w]} "$@"; do export "${v?}"; done
        # shellcheck disable=SC2086
        "run_$how" "$name" "${PROG[$w]}" ${WARGS[$w]}
    )
}
# correct NAME WORKLOAD: whether the run left the clean result.
correct() {
    case $2 in
    threads) grep -q '^threads_sim: 0 wrong of [0-9]*, 0 with a CUDA error$' "$work/$1.out" ;;
    *) [ -n "${C[$2]}" ] && [ "$(checksum "$1")" = "${C[$2]}" ] ;;
    esac
}

declare -A C budget pace
slowest=0
live=()
for w in "${MODES[@]}"; do
    [ -n "${PROG[$w]:-}" ] || {
        check "workload '$w' is one of exact async segments threads planned" false
        continue
    }
    wrun native "native-$w" "$w"
    C[$w]=$(checksum "native-$w")
    P=$(figure "native-$w" peak_device_bytes)
    budget[$w]=$((${P:-0} * ${SHARE[$w]} / 100))
    ok=false
    [ "$(rc "native-$w")" = 0 ] && [ -n "$P" ] && correct "native-$w" "$w" && ok=true
    check "$w: native run: exit 0, clean result, peak ${P:-none}" $ok
    $ok || continue
    # The entry points the program (its runtime, or threads_sim itself) calls without the shim.
    wrun native "runtime-$w" "$w" SIMGPU_FAIL_CALLER="${SELF[$w]}"
    start=$(date +%s%N)
    wrun shimmed "clean-$w" "$w" SIMGPU_FAIL_CALLER=libshim SHIM_BUDGET="${budget[$w]}"
    pace[$w]=$((($(date +%s%N) - start) / 1000000))
    [ "${pace[$w]}" -gt "$slowest" ] && slowest=${pace[$w]}
    ev=$(evictions "clean-$w") re=$(restores "clean-$w")
    ok=false
    [ "$(rc "clean-$w")" = 0 ] && correct "clean-$w" "$w" && [ "${ev:-0}" -gt 0 ] &&
        { [ "$w" = threads ] || [ "${re:-0}" -gt 0 ]; } && is "clean-$w" illegal_accesses -eq 0 &&
        is "clean-$w" unmap_hazards -eq 0 && ok=true
    if [ "$w" = planned ]; then # the plan applied: planned moves of both kinds
        pl=$(sed -n 's/.*; plan: \([0-9]*\) planned evictions and \([0-9]*\) prefetches.*/\1 \2/p' \
            "$work/clean-$w.err")
        check "planned: clean run applies the plan (planned evictions and prefetches: ${pl:-none})" \
            test "${pl%% *}" -gt 0 -a "${pl##* }" -gt 0 2>/dev/null
    fi
    check "$w: clean run, SHIM_BUDGET=${budget[$w]} (${SHARE[$w]}% of P): exit 0, clean result, ${ev:-no} evictions, ${re:-no} restores, no illegal access, no unmap hazard (exit $(rc "clean-$w"), illegal_accesses $(figure "clean-$w" illegal_accesses), unmap_hazards $(figure "clean-$w" unmap_hazards), ${pace[$w]} ms)" $ok
    echo "# $w: again: LD_LIBRARY_PATH=$B/simgpu ${WENV[$w]} SIMGPU_FAIL_CALLER=libshim" \
        "SIMGPU_FAIL=ENTRY:N[:sticky] SHIM_BUDGET=${budget[$w]} SHIM_TRACE_PATH= SHIM_LOG_LEVEL=info" \
        "SIMGPU_STATS=stats.json LD_PRELOAD='$PRELOAD' ${PROG[$w]} ${WARGS[$w]}"
    if $ok; then
        live+=("$w")
    else # every faulted run would fail the same way: the workload is left out
        tail_err "clean-$w"
    fi
done
[ ${#live[@]} -gt 0 ] || exit 1

# One faulted run's time limit: generous against the clean runs, a small part of the suite's.
limit=$(((slowest * 20 + 999) / 1000))
[ "$limit" -lt 10 ] && limit=10
[ "$limit" -gt "$RUN_TIMEOUT" ] && limit=$RUN_TIMEOUT
RUN_TIMEOUT=${RESIDENCY_FAULT_TIMEOUT:-$limit}

# The plan: "KIND WORKLOAD ENTRY N LEEWAY" lines in starting order. Each entry's N are spread
# (first, last, middle, then the middles of the halves, ...), and the runs go by that rank over
# every entry: all first N (sticky and single), then all last N, and so on, so that wherever the
# time budget stops the loop, every entry has been sampled about as densely.
python3 - "$work" "$every" "${live[@]}" >"$work/plan" <<'PY'
import json, sys
work, every, workloads = sys.argv[1], sys.argv[2] == "1", sys.argv[3:]
calls = {w: json.load(open(f"{work}/clean-{w}.json"))["caller_calls"] for w in workloads}
program = {w: json.load(open(f"{work}/runtime-{w}.json"))["caller_calls"] for w in workloads}
# What the simulator fails with out of memory (tests/simgpu/simgpu_fail.c); the rest fail with
# CUDA_ERROR_UNKNOWN.
oom = {"cuMemAlloc_v2", "cuMemAllocAsync", "cuMemAllocAsync_ptsz", "cuMemCreate",
       "cuMemAllocHost_v2", "cuMemHostAlloc", "cuMemHostRegister_v2", "cuMemAddressReserve"}

def spread(ns):
    """ns (ascending) in starting order: first, last, middle, then the middles of the halves."""
    out, seen, spans = [], set(), [(0, len(ns) - 1)]
    for i in (0, len(ns) - 1):
        if i not in seen:
            seen.add(i)
            out.append(ns[i])
    while spans:
        a, b = spans.pop(0)
        if b - a >= 2:
            m = (a + b) // 2
            seen.add(m)
            out.append(ns[m])
            spans += [(a, m), (m, b)]
    return out

lines = []
for w in workloads:
    for e, n in sorted(calls[w].items()):
        may = "program" if program[w].get(e) else "oom" if e in oom else "no"
        every_n = list(range(1, n + 1))
        for kind, ns in (("sticky", every_n if every else sorted({1, (n + 1) // 2, n})),
                         ("single", every_n)):
            for rank, x in enumerate(spread(ns)):
                lines.append((rank, kind == "single", f"{kind} {w} {e} {x} {may}"))
for *_, line in sorted(lines, key=lambda t: t[:2]):
    print(line)
sticky = sum(not single for _, single, _ in lines)
print(f"# {len(lines) - sticky} calls from libshim in {len(workloads)} workloads "
      f"({', '.join(workloads)}): a single run for each, and {sticky} sticky runs ("
      + ("every N)" if every else "N = 1, the middle and the last call of each entry)"),
      file=sys.stderr)
PY
planned=$(wc -l <"$work/plan")
if [ "$every" = 1 ]; then
    echo "# a faulted run's time limit: $RUN_TIMEOUT s; every planned run"
else
    echo "# a faulted run's time limit: $RUN_TIMEOUT s; runs start for $seconds s" \
        "(RESIDENCY_FAULT_SECONDS; RESIDENCY_FAULT_ALL=1 for every planned run)"
fi

# fault KIND WORKLOAD ENTRY N: one run with the Nth call of ENTRY from libshim failing (from the
# Nth on, sticky); a run that reaches its time limit marks its entry's KIND as hung.
fault() {
    local spec="$3:$4" name="f-$1-$2-$3-$4"
    [ "$1" = sticky ] && spec+=":sticky"
    wrun shimmed "$name" "$2" SIMGPU_FAIL_CALLER=libshim SIMGPU_FAIL="$spec" \
        SHIM_BUDGET="${budget[$2]}"
    case $(rc "$name") in 124 | 137) touch "$work/hung-$1-$2-$3" ;; esac
}
SECONDS=0
running=0 started=0 after_hang=0
while read -r kind w e n _; do
    [ "$every" = 1 ] || [ "$SECONDS" -lt "$seconds" ] || break
    if [ -e "$work/hung-$kind-$w-$e" ]; then
        after_hang=$((after_hang + 1))
        continue
    fi
    fault "$kind" "$w" "$e" "$n" </dev/null &
    running=$((running + 1)) started=$((started + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait -n
        running=$((running - 1))
    fi
done <"$work/plan"
wait
echo "# $started of $planned planned runs in $SECONDS s, $jobs at a time ($after_hang left out" \
    "after a hang of their entry)"

# Judge every run; one check per workload and entry, its first failing runs shown in full.
python3 - "$work" "$PRELOAD" >"$work/verdicts" <<'PY'
import json, os, re, sys
work, preload = sys.argv[1], sys.argv[2]
def read(path):
    try:
        return open(path, errors="replace").read()
    except OSError:
        return ""
want = {}
entries = {}
for line in open(f"{work}/plan"):
    kind, w, e, n, may = line.split()
    if w not in want:
        sums = re.findall(r"^checksum=(\w+)$", read(f"{work}/native-{w}.out"), re.M)
        want[w] = sums[-1] if sums else None
    entries.setdefault((w, e), {"may": may, "runs": []})["runs"].append((kind, int(n)))
leeway = {"program": "the program calls it too", "oom": "fails with out of memory",
          "no": "libshim's own: a single failure must not reach the program"}

def judge(w, kind, may, base):
    """(verdict, why): verdict ok, surfaced or bad."""
    rc = read(base + ".rc").strip()
    out, err = read(base + ".out"), read(base + ".err")
    try:
        st = json.load(open(base + ".json"))
    except Exception:
        st = {}
    illegal, hazards = st.get("illegal_accesses"), st.get("unmap_hazards")
    if w == "threads":
        m = re.findall(r"^threads_sim: (\d+) wrong of \d+, (\d+) with a CUDA error$", out, re.M)
        wrong = not m or int(m[-1][0]) > 0 or rc == "3"
        right = rc == "0" and m == [("0", "0")]
        told = re.findall(r"^threads_sim: thread \d+: (.*) failed \((\d+)\)$", err, re.M)
        told += [(t, "") for t in re.findall(r"^threads_sim: (could not set up the device)$",
                                             err, re.M)]
        told_oom = told and all(code == "2" for _, code in told)
        result = f"{m[-1][0]} wrong, {m[-1][1]} with a CUDA error" if m else "no summary line"
        wrong = wrong and not (rc == "1" and not m and told)  # stopped before any thread ran
    else:
        sums = re.findall(r"^checksum=([0-9a-f]+)$", out, re.M)
        wrong = sums not in ([], [want[w]])
        right = rc == "0" and sums == [want[w]]
        told = re.findall(r"^train_sim: (.*) failed: (.*)$", err, re.M)
        told_oom = told and all(msg.startswith("out of memory") for _, msg in told)
        result = f"checksum {sums[-1] if sums else 'none'}" + (" (wrong)" if wrong else "")
    safe = illegal == 0 and hazards == 0
    if rc not in ("124", "137") and safe and right:
        return "ok", ""
    may_surface = kind == "sticky" or may == "program" or (may == "oom" and told_oom)
    if rc == "1" and told and safe and not wrong and may_surface:
        return "surfaced", ""
    why = ("hung" if rc in ("124", "137") else f"exit {rc or 'none'}") + f", {result}, " \
          f"illegal_accesses {illegal}, unmap_hazards {hazards}"
    if rc == "1" and told and not may_surface:
        why += ", the failure reached the program (" + " failed: ".join(told[0]) + ")"
    return "bad", why

for (w, e), info in entries.items():
    count = {"single": 0, "sticky": 0}
    plan = {k: sum(kind == k for kind, _ in info["runs"]) for k in count}
    injected = surfaced = hazards = hung = notrun = 0
    bad = []
    for kind, n in info["runs"]:
        base = f"{work}/f-{kind}-{w}-{e}-{n}"
        if not os.path.exists(base + ".rc"):
            notrun += 1
            continue
        count[kind] += 1
        try:
            st = json.load(open(base + ".json"))
        except Exception:
            st = {}
        injected += st.get("injected_failures", 0)
        hazards += st.get("unmap_hazards", 0) > 0
        verdict, why = judge(w, kind, info["may"], base)
        surfaced += verdict == "surfaced"
        hung += why.startswith("hung")
        if verdict == "bad":
            bad.append((kind, n, why, read(base + ".err").splitlines()[-8:]))
    name = f"{w}: {e}"
    print(f"# {name} ({leeway[info['may']]}): {count['single']} single runs of "
          f"{plan['single']}, {count['sticky']} sticky of {plan['sticky']}, {injected} failures "
          f"injected, {surfaced} surfaced to the program, {hazards} runs with unmap hazards, "
          f"{hung} hung")
    if not count["single"] + count["sticky"]:
        print(f"SKIP {name}: no run started within the time budget")
        continue
    # threads_sim's calls depend on its threads' timing: an entry its clean run made may not
    # come again; train_sim's come again in every run.
    missed = not injected and w != "threads"
    shown = ", ".join(f"{n}{':sticky' if k == 'sticky' else ''}" for k, n, _, _ in bad[:12])
    print(f"CHECK {'ok' if not bad and not missed else 'bad'} {name}: "
          f"{count['single'] + count['sticky']} runs consistent"
          + (f"; failing N: {shown}{' ...' if len(bad) > 12 else ''}" if bad else "")
          + ("; nothing injected" if not injected else ""))
    for kind, n, why, tail in bad[:3]:
        print(f"#   SIMGPU_FAIL={e}:{n}{':sticky' if kind == 'sticky' else ''} ({w}): {why}")
        for l in tail:
            print(f"#     | {l}")
PY
judged=$?
# Never pass for want of verdicts: the judge must have run and checked at least one entry.
checked=$(grep -c '^CHECK ' "$work/verdicts" 2>/dev/null)
check "fault: every run judged (judge exit $judged, ${checked:-0} entries checked)" \
    test "$judged" -eq 0 -a "${checked:-0}" -gt 0
while read -r first rest; do
    case $first in
    CHECK)
        verdict=${rest%% *}
        check "fault ${rest#* }" [ "$verdict" = ok ]
        ;;
    SKIP) echo "skip - fault $rest" ;;
    *) echo "$first $rest" ;;
    esac
done <"$work/verdicts"
check_sanitizers
# The plan, known only now: per workload a native and a clean run (and the plan check of
# planned), the judge's own check, and one per entry of the plan file (a check or a skip).
entries=$(cut -d' ' -f2,3 "$work/plan" | sort -u | wc -l)
plan $((2 * ${#MODES[@]} + $([[ " ${MODES[*]} " == *" planned "* ]] && echo 1 || echo 0) + 1 + entries + SAN_CHECKS))
[ "$failures" -eq 0 ]
