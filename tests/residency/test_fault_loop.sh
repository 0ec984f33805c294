#!/usr/bin/env bash
# SQLite-style fault injection over every driver call libshim makes while it evicts and restores:
# a clean run under SIMGPU_FAIL_CALLER=libshim counts the calls per entry point; then, for every
# entry E and N = 1..count(E), the same run with SIMGPU_FAIL=E:N (the Nth call from libshim
# fails) must end consistent: exit 0 with the clean checksum, no illegal access and no unmap
# hazard (the clean run has none). In two allocation modes: exact (cudaMalloc / cudaFree, which
# synchronises) and async (stream-ordered frees, chunks reused in stream order).
#
# Two relaxations, where the failure may rightly reach the program; such a run must then be a
# clean failure of the program (exit 1, "train_sim: ... failed", no illegal access, no unmap
# hazard, and the clean checksum if it got as far as printing one), counted as "surfaced":
#   - entry points the program calls itself (those its runtime calls without the shim:
#     launches, copies, events, ...): libshim forwards the program's calls and returns what the
#     driver returned, so the Nth call may be the program's own;
#   - entry points that fail with out of memory (allocations, reservations): the program may
#     then be told "out of memory", as it would be on a full device.
# A failure of any other call only libshim makes (mapping, access, its queries and waits) must
# not reach the program.
#
#   RESIDENCY_FAULT_ALL=1    every N even when the plan is long (see below)
#   RESIDENCY_FAULT_MODES=M  allocation modes, space-separated (default "exact async")
#   RESIDENCY_JOBS=J         runs at a time (default: the number of cores, at most 4)
set -u
source "$(dirname "$0")/resid_env.sh"
# The smallest workload found that both evicts and restores at half its peak (about 20 of each).
ARGS=(--layers 1 --hidden 512 --batch 1 --seq 128 --vocab 1024 --iters 1)
read -r -a MODES <<<"${RESIDENCY_FAULT_MODES:-exact async}"
jobs=${RESIDENCY_JOBS:-$(nproc)}
[ "$jobs" -gt 4 ] && jobs=4

declare -A C budget
pace=0
for mode in "${MODES[@]}"; do
    native "native-$mode" --mode "$mode" "${ARGS[@]}"
    C[$mode]=$(checksum "native-$mode")
    budget[$mode]=$(($(figure "native-$mode" peak_device_bytes) / 2))
    # The entry points the program's runtime calls without the shim.
    SIMGPU_FAIL_CALLER=libcudart native "runtime-$mode" --mode "$mode" "${ARGS[@]}"
    start=$(date +%s.%N)
    SIMGPU_FAIL_CALLER=libshim SHIM_BUDGET=${budget[$mode]} shimmed "clean-$mode" --mode "$mode" \
        "${ARGS[@]}"
    pace=$(echo "$pace + $(date +%s.%N) - $start" | bc)
    ev=$(evictions "clean-$mode") re=$(restores "clean-$mode")
    ok=false
    [ "$(rc "clean-$mode")" = 0 ] && [ -n "${C[$mode]}" ] && [ "$(checksum "clean-$mode")" = "${C[$mode]}" ] &&
        [ "${ev:-0}" -gt 0 ] && [ "${re:-0}" -gt 0 ] && is "clean-$mode" illegal_accesses -eq 0 &&
        is "clean-$mode" unmap_hazards -eq 0 && ok=true
    check "$mode: clean run, SHIM_BUDGET=${budget[$mode]} (P/2): exit 0, checksum ${C[$mode]}, $ev evictions, $re restores, no hazard" $ok
    $ok || {
        tail_err "clean-$mode"
        exit 1
    }
    echo "# $mode: train_sim --mode $mode ${ARGS[*]}, SHIM_BUDGET=${budget[$mode]}"
done

# The plan: "MODE ENTRY N LEEWAY" lines. When every N of every entry would take more than about
# three minutes at the clean runs' pace (plus a fifth for starting processes), N = 1..50 of each
# entry and every 7th N after that.
python3 - "$work" "$pace" "$jobs" "${RESIDENCY_FAULT_ALL:-0}" "${MODES[@]}" >"$work/plan" <<'PY'
import json, sys
work, pace, jobs, every, modes = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5:]
calls = {m: json.load(open(f"{work}/clean-{m}.json"))["caller_calls"] for m in modes}
program = {m: json.load(open(f"{work}/runtime-{m}.json"))["caller_calls"] for m in modes}
full = sum(sum(c.values()) for c in calls.values())
estimate = full * pace / len(modes) * 1.2 / jobs
sparse = not every and estimate > 180
# What the simulator fails with out of memory (tests/simgpu/simgpu_fail.c); the rest fail with
# CUDA_ERROR_UNKNOWN.
oom = {"cuMemAlloc_v2", "cuMemAllocAsync", "cuMemAllocAsync_ptsz", "cuMemCreate",
       "cuMemAllocHost_v2", "cuMemHostAlloc", "cuMemHostRegister_v2", "cuMemAddressReserve"}
runs = 0
for m in modes:
    for e, n in sorted(calls[m].items()):
        may = "program" if program[m].get(e) else "oom" if e in oom else "no"
        for k in range(1, n + 1):
            if not sparse or k <= 50 or (k - 50) % 7 == 0:
                print(m, e, k, may)
                runs += 1
print(f"# {full} calls from libshim in {len(modes)} modes; every N would take about "
      f"{estimate:.0f} s, {jobs} runs at a time: "
      + (f"N = 1..50 of each entry, then every 7th N ({runs} runs; RESIDENCY_FAULT_ALL=1 for all)"
         if sparse else f"every N of every entry ({runs} runs)"), file=sys.stderr)
PY

# fault MODE ENTRY N: one run with the Nth call of ENTRY from libshim failing.
fault() {
    SIMGPU_FAIL_CALLER=libshim SIMGPU_FAIL="$2:$3" SHIM_BUDGET=${budget[$1]} \
        shimmed "f-$1-$2-$3" --mode "$1" "${ARGS[@]}"
}
running=0
while read -r mode e n _; do
    fault "$mode" "$e" "$n" </dev/null &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait -n
        running=$((running - 1))
    fi
done <"$work/plan"
wait

# Judge every run; one check per mode and entry, its first failing runs shown in full.
python3 - "$work" "${MODES[@]}" >"$work/verdicts" <<'PY'
import json, re, sys
work, modes = sys.argv[1], sys.argv[2:]
want = {m: re.findall(r"^checksum=(\w+)$", open(f"{work}/native-{m}.out").read(), re.M)[-1]
        for m in modes}
entries = {}
for line in open(f"{work}/plan"):
    m, e, n, may = line.split()
    entries.setdefault((m, e), {"may": may, "ns": []})["ns"].append(int(n))
leeway = {"program": "the program calls it too", "oom": "fails with out of memory",
          "no": "libshim's own: must not reach the program"}
def read(path):
    try:
        return open(path, errors="replace").read()
    except OSError:
        return ""
for (m, e), info in entries.items():
    runs = injected = surfaced = hazards = 0
    bad = []
    for n in info["ns"]:
        base = f"{work}/f-{m}-{e}-{n}"
        rc = read(base + ".rc").strip()
        out, err = read(base + ".out"), read(base + ".err")
        try:
            st = json.load(open(base + ".json"))
        except Exception:
            st = {}
        runs += 1
        injected += st.get("injected_failures", 0)
        sums = re.findall(r"^checksum=([0-9a-f]+)$", out, re.M)
        illegal = st.get("illegal_accesses")
        hazard = st.get("unmap_hazards", 0) > 0  # unmapped memory queued work may still touch
        hazards += hazard
        if not hazard and rc == "0" and sums == [want[m]] and illegal == 0:
            continue
        told = re.search(r"^train_sim: .* failed" + (": out of memory" if info["may"] == "oom"
                                                     else ""), err, re.M)
        if (not hazard and info["may"] != "no" and rc == "1" and told and illegal == 0
                and sums in ([], [want[m]])):
            surfaced += 1
            continue
        why = ("timed out" if rc == "124" else f"exit {rc}") + \
              f", checksum {sums[-1] if sums else 'none'}, illegal_accesses {illegal}, " \
              f"unmap_hazards {st.get('unmap_hazards')}"
        bad.append((n, why, err.splitlines()[-8:]))
    shown = ", ".join(str(n) for n, _, _ in bad[:20]) + (" ..." if len(bad) > 20 else "")
    ns = info["ns"]
    span = f"N=1..{ns[-1]}" + (f" ({len(ns)} of them)" if len(ns) != ns[-1] else "")
    print(f"# {m} {e} ({leeway[info['may']]}): {runs} runs, {span}, {injected} failures "
          f"injected, {surfaced} surfaced to the program, {hazards} runs with unmap hazards")
    print(f"CHECK {'ok' if not bad and injected > 0 else 'bad'} {m}: {e}: {runs} runs consistent"
          + (f"; failing N: {shown}" if bad else "") + ("; nothing injected" if not injected else ""))
    for n, why, tail in bad[:3]:
        print(f"#   SIMGPU_FAIL={e}:{n} (--mode {m}): {why}")
        for l in tail:
            print(f"#     | {l}")
PY
while read -r first rest; do
    case $first in
    CHECK)
        verdict=${rest%% *}
        check "fault ${rest#* }" [ "$verdict" = ok ]
        ;;
    *) echo "$first $rest" ;;
    esac
done <"$work/verdicts"
check_sanitizers
[ "$failures" -eq 0 ]
