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
# The entry points: every one of libshim's real-function table (SHIM_HOOKS and SHIM_USES in
# shim/core/shim_api.h, read here, never copied) that a workload's clean run calls from libshim
# (SIMGPU_FAIL_CALLER=libshim counts them). A check keeps the list complete: every entry point
# libshim calls for itself (SHIM_USES, and SHIM_RESID_NEEDS: the residency manager's) must be
# faulted in some workload, but for the few named in UNREACHED below with the reason no workload
# here reaches it; a new call in the table fails that check until a workload reaches it.
#
# The rule, for single failures (SIMGPU_FAIL=E:N, only the Nth call from libshim fails) and
# sticky ones (SIMGPU_FAIL=E:N:sticky, every call from the Nth on) alike: no error reaches the
# program that the native run does not see. The run must end as the native one did: exit 0
# with the native result (train_sim: its checksum; threads_sim: "0 wrong of 8, 0 with a CUDA
# error"), no illegal access and no unmap hazard. libshim steps aside when its own machinery
# fails (shim/resid/shim_resid.h). One relaxation: entry points the program calls itself (those
# its runtime, or threads_sim itself, calls without the shim: launches, copies, events, ...)
# reach the driver through libshim's hooks, so the Nth failing call may be the program's own,
# which the native run would see too if its call failed: such a run may end as a clean failure
# of the program (exit 1 with its "... failed" line, no wrong result, no illegal access, no
# unmap hazard; train_sim's checksum, if it printed one, the native one), counted as
# "surfaced". The same for a sticky failure that leaves a range unmapped for good: in the
# unmapped workload an evicted range (its restore needs the failing call; there is no host
# mapping to read it through), in any workload a range whose move failed half way (unmapped,
# and neither mapping can be made again: a sticky cuMemMap or cuMemSetAccess from the last
# move on). No memory can appear at the program's address without a mapping; the operation on
# it fails, as the log says, rather than read wrong data. A single failure never may: the next
# touch maps the range again.
# Never a hang, never a wrong result. Single runs take every N (in the spread
# order below), sticky runs N = 1, the middle and the last call of each entry.
#
# Every run is under a time limit (20 times the slowest clean run, at least 10 s, at most
# $RUN_TIMEOUT); a run that reaches it is "hung", and the rest of its entry's runs of that kind
# are left out (each would wait as long). Every N is planned; runs start for a time budget and
# then stop, in an order that samples every entry evenly wherever it stops: each entry's N are
# spread (first, last, middle, then the middles of the halves, ...) and taken rank by rank over
# all entries and workloads, sticky before single. With six workloads about 11,700 runs are
# planned (every N single, 470 sticky); the default budget of `make test` samples the first N
# of every entry (a few hundred runs on 2 cores shared with other work; each entry's line says
# how many ran), `make faults` runs them all; a slower, sanitized or hanging build covers less,
# never nothing.
#
#   RESIDENCY_FAULT_ALL=1       every N, single and sticky, whatever the time (`make faults`)
#   RESIDENCY_FAULT_MODES=W     workloads, space-separated, of "exact async segments threads
#                               planned unmapped" (planned: async train_sim long enough for the
#                               in-process plan to apply; unmapped: async train_sim on a device
#                               without host VMM, SHIM_UNMAPPED_EVICTION=true); default all six,
#                               under a sanitizer fewer, so that the loop fits the suite's time
#                               limit: tsan "async threads", asan "exact segments planned",
#                               ubsan all six
#   RESIDENCY_FAULT_SECONDS=S   runs start for S seconds (default 120; 240 under a sanitizer)
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
# iterations, profiled for 3, recorded 1 more, installed at the next boundary: iterations 8-9),
# at 85% of its peak: below about 70% this small step has no plan that lowers its peak half way
# to the budget, and libshim then applies none (shim_plan_make.c, worth_applying); at 85% the
# plan holds the budget (19 planned evictions, 16 prefetches, 57 evictions in all, 2026-11-28).
PROG[planned]=$TRAIN SELF[planned]=libcudart WENV[planned]= SHARE[planned]=85
WARGS[planned]="--mode async $TARGS"
WARGS[planned]=${WARGS[planned]/--iters 1/--iters 10}
# unmapped: evicted ranges are left unmapped (no host VMM): host memory from cuMemHostAlloc.
PROG[unmapped]=$TRAIN SELF[unmapped]=libcudart SHARE[unmapped]=50 WARGS[unmapped]="--mode async $TARGS"
WENV[unmapped]="SIMGPU_HOST_VMM=0 SHIM_UNMAPPED_EVICTION=true"
PROG[threads]=$THREADS SELF[threads]=threads_sim WENV[threads]=SHIM_MIN_MANAGED_BYTES=4KiB
WARGS[threads]="--threads 8 --large-every 2 --large 4MiB --small 16KiB --launches 8 --rounds 2"
case "${SAN:-}" in
'' | ubsan) default_modes="exact async segments threads planned unmapped" ;;
tsan) default_modes="async threads" ;;
*) default_modes="exact segments planned" ;;
esac
read -r -a MODES <<<"${RESIDENCY_FAULT_MODES:-$default_modes}"
jobs=${RESIDENCY_JOBS:-$(nproc)}
[ "$jobs" -gt 4 ] && jobs=4
every=${RESIDENCY_FAULT_ALL:-0}
if [ -n "${SAN:-}" ]; then seconds=${RESIDENCY_FAULT_SECONDS:-240}; else seconds=${RESIDENCY_FAULT_SECONDS:-120}; fi

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

# native_ok W P: the workload's native run exited 0 with the clean result and a peak P.
native_ok() { [ "$(rc "native-$1")" = 0 ] && [ -n "$2" ] && correct "native-$1" "$1"; }
# clean_ok W EVICTIONS RESTORES: its clean run under the budget exited 0 with the clean result,
# evicted (and restored, but threads_sim), with no illegal access and no unmap hazard.
clean_ok() {
    [ "$(rc "clean-$1")" = 0 ] && correct "clean-$1" "$1" && [ "${2:-0}" -gt 0 ] &&
        { [ "$1" = threads ] || [ "${3:-0}" -gt 0 ]; } && is "clean-$1" illegal_accesses -eq 0 &&
        is "clean-$1" unmap_hazards -eq 0
}
# plan_applied EVICTIONS_AND_PREFETCHES: both counts of the planned moves are above 0.
plan_applied() { [ "${1%% *}" -gt 0 ] 2>/dev/null && [ "${1##* }" -gt 0 ] 2>/dev/null; }
# known W: W is one of the workloads.
known() { [ -n "${PROG[$1]:-}" ]; }

declare -A C budget pace
slowest=0
live=()
nchecks=0
for w in "${MODES[@]}"; do
    nchecks=$((nchecks + 1))
    known "$w" || {
        check "workload '$w' is one of exact async segments threads planned unmapped" known "$w"
        continue
    }
    wrun native "native-$w" "$w"
    C[$w]=$(checksum "native-$w")
    P=$(figure "native-$w" peak_device_bytes)
    budget[$w]=$((${P:-0} * ${SHARE[$w]} / 100))
    check "$w: native run: exit 0, clean result, peak ${P:-none}" native_ok "$w" "$P"
    native_ok "$w" "$P" || continue
    # The entry points the program (its runtime, or threads_sim itself) calls without the shim.
    wrun native "runtime-$w" "$w" SIMGPU_FAIL_CALLER="${SELF[$w]}"
    start=$(date +%s%N)
    wrun shimmed "clean-$w" "$w" SIMGPU_FAIL_CALLER=libshim SHIM_BUDGET="${budget[$w]}"
    pace[$w]=$((($(date +%s%N) - start) / 1000000))
    [ "${pace[$w]}" -gt "$slowest" ] && slowest=${pace[$w]}
    ev=$(evictions "clean-$w") re=$(restores "clean-$w")
    if [ "$w" = planned ]; then # the plan applied: planned moves of both kinds
        pl=$(sed -n 's/.*; plan: \([0-9]*\) planned evictions and \([0-9]*\) prefetches.*/\1 \2/p' \
            "$work/clean-$w.err")
        nchecks=$((nchecks + 1))
        check "planned: clean run applies the plan (planned evictions and prefetches: ${pl:-none})" \
            plan_applied "${pl:-}"
    fi
    nchecks=$((nchecks + 1))
    check "$w: clean run, SHIM_BUDGET=${budget[$w]} (${SHARE[$w]}% of P): exit 0, clean result, ${ev:-no} evictions, ${re:-no} restores, no illegal access, no unmap hazard (exit $(rc "clean-$w"), illegal_accesses $(figure "clean-$w" illegal_accesses), unmap_hazards $(figure "clean-$w" unmap_hazards), ${pace[$w]} ms)" \
        clean_ok "$w" "$ev" "$re"
    echo "# $w: again: LD_LIBRARY_PATH=$B/simgpu ${WENV[$w]} SIMGPU_FAIL_CALLER=libshim" \
        "SIMGPU_FAIL=ENTRY:N[:sticky] SHIM_BUDGET=${budget[$w]} SHIM_TRACE_PATH= SHIM_LOG_LEVEL=info" \
        "SIMGPU_STATS=stats.json LD_PRELOAD='$PRELOAD' ${PROG[$w]} ${WARGS[$w]}"
    if clean_ok "$w" "$ev" "$re"; then
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
# Also $work/coverage: the real-function table's entries no workload reached, and one CHECK line
# for the entry points libshim calls for itself.
python3 - "$work" "$every" "$root/shim/core/shim_api.h" "${live[@]}" >"$work/plan" <<'PY'
import json, re, sys
work, every, api, workloads = sys.argv[1], sys.argv[2] == "1", sys.argv[3], sys.argv[4:]
calls = {w: json.load(open(f"{work}/clean-{w}.json"))["caller_calls"] for w in workloads}
program = {w: json.load(open(f"{work}/runtime-{w}.json"))["caller_calls"] for w in workloads}

# The real-function table, from its X-macro lists: every name in SHIM_HOOKS and SHIM_USES, and
# the residency manager's own calls (SHIM_RESID_NEEDS).
def xnames(macro):
    text = open(api).read()
    block = text[text.index("#define " + macro + "(X)"):]
    block = block[:block.index("/* clang-format on */")]
    return re.findall(r"\bX\((cu\w+)", block)
table = xnames("SHIM_HOOKS") + xnames("SHIM_USES")
own = set(xnames("SHIM_USES")) | set(xnames("SHIM_RESID_NEEDS"))
# Calls libshim makes for itself that no workload here reaches, each with the reason.
UNREACHED = {
    "cuKernelGetName": "names CUkernel launches; the workloads' runtime launches by CUfunction",
    "cuEventRecord_ptsz": "timing on per-thread default streams; the workloads name streams",
    "cuCtxGetCurrent": "only for allocations shared through IPC or shareable handles",
    "cuCtxSynchronize": "program_sync's fallback when libshim knows none of the program's streams",
}
reached = {e for w in workloads for e in calls[w]}
missing = sorted(e for e in own if e not in reached and e not in UNREACHED)
# Only the six workloads together reach them all (planned: timing; unmapped: host allocations).
complete = set(workloads) >= {"exact", "async", "segments", "threads", "planned", "unmapped"}
with open(f"{work}/coverage", "w") as f:
    print(f"# the real-function table (shim/core/shim_api.h): {len(table)} entries; "
          f"{len(reached & set(table))} called from libshim in these workloads and faulted", file=f)
    print("# never called from libshim here (forwarded only when the program calls them, or "
          "not reached): " + " ".join(sorted(set(table) - reached)), file=f)
    for e, why in sorted(UNREACHED.items()):
        print(f"# not reached: {e}: {why}", file=f)
    verdict = ("CHECK bad" if missing else "CHECK ok") if complete else "SKIP"
    print(f"{verdict} every entry point libshim calls for itself "
          f"(SHIM_USES and SHIM_RESID_NEEDS, {len(own)}) is faulted in some workload, but the "
          f"{len(UNREACHED)} not reached" + (": missing " + " ".join(missing) if missing else "")
          + ("" if complete else " (not every workload ran)"), file=f)

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
        may = "program" if program[w].get(e) else "no"
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
leeway = {"program": "the program calls it too",
          "no": "libshim's own: no failure of it may reach the program"}

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
    # Only the program's own call may fail it: the native run would see that one too. And, as
    # correctness comes first, an evicted range left unmapped (no host VMM) whose restore the
    # sticky failure makes impossible: the operation on it fails rather than read nothing.
    stranded = ("an evicted range left unmapped could not come back" in err
                or "a managed range cannot be mapped again (the driver refuses)" in err)
    may_surface = may == "program" or (kind == "sticky" and stranded)
    if rc == "1" and told and safe and not wrong and may_surface:
        return "surfaced", ""
    why = ("hung" if rc in ("124", "137") else f"exit {rc or 'none'}") + f", {result}, " \
          f"illegal_accesses {illegal}, unmap_hazards {hazards}"
    if rc == "1" and told and not may_surface:
        why += ", the failure reached the program (" + " failed: ".join(told[0]) + ")"
    return "bad", why

totals = {"runs": 0, "single": 0, "sticky": 0, "wrong": 0, "hung": 0, "reached": 0,
          "surfaced": 0}
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
        totals["runs"] += 1
        totals[kind] += 1
        totals["surfaced"] += verdict == "surfaced"
        if verdict == "bad":
            kind_of = ("hung" if why.startswith("hung") else
                       "wrong" if "(wrong)" in why or re.search(r", [1-9]\d* wrong", why) else
                       "reached")
            totals[kind_of] += 1
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
print(f"# all: {totals['runs']} runs ({totals['single']} single, {totals['sticky']} sticky): "
      f"{totals['wrong']} wrong results, {totals['hung']} hangs, {totals['reached']} others with "
      f"an error the native run does not see; {totals['surfaced']} surfaced (the program's own "
      f"call failed)")
PY
judged=$?
# Never pass for want of verdicts: the judge must have run and checked at least one entry.
checked=$(grep -c '^CHECK ' "$work/verdicts" 2>/dev/null)
# judged EXIT CHECKED: the judge exited 0 and checked at least one entry.
judged_all() { [ "$1" -eq 0 ] && [ "${2:-0}" -gt 0 ]; }
# verdict_ok VERDICT: the judge's verdict on an entry (or on the coverage) is ok.
verdict_ok() { [ "$1" = ok ]; }
check "fault: every run judged (judge exit $judged, ${checked:-0} entries checked)" \
    judged_all "$judged" "${checked:-0}"
nchecks=$((nchecks + 1))
while read -r first rest; do
    case $first in
    CHECK)
        nchecks=$((nchecks + 1))
        check "fault ${rest#* }" verdict_ok "${rest%% *}"
        ;;
    SKIP)
        nchecks=$((nchecks + 1))
        echo "skip - fault $rest"
        ;;
    *) echo "$first $rest" ;;
    esac
done < <(cat "$work/coverage" "$work/verdicts")
[ -n "${SAN:-}" ] && nchecks=$((nchecks + 1))
check_sanitizers
plan "$nchecks"
[ "$failures" -eq 0 ]
