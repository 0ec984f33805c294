#!/usr/bin/env bash
# What the residency manager costs (not a test: `make bench-residency`): train_sim on the
# simulated device without the shim, then under it with budgets of 100%, 75% and 50% of the
# native peak, in each allocation mode, with the reactive policy and with the in-process plan.
# Prints a table of virtual device time per iteration against native, the plan's own prediction
# and the lower bound it computed; writes it to tests/bench/RESULTS-residency.md. Virtual time is
# deterministic, so one run of each suffices.
#   usage: tests/bench/residency_bench.sh [TRAIN_SIM FLAGS...]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--layers 4 --hidden 1024 --batch 7 --seq 1024 --iters 14)
steady=${RESIDENCY_BENCH_STEADY:-4} # the last iterations, run under the plan
make -s build/libshim.so build/train_sim
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LD_LIBRARY_PATH="$root/build/simgpu" SIMGPU_QUIET=1
# The simulated device charges no host time for VMM calls: the planner's remap cost is fixed at
# the figure these tables always used, so that they are the same every run (tests/shim/shim_env.sh).
export SHIM_LINK_REMAP=${SHIM_LINK_REMAP:-10us}
# The link's speed each way (SIMGPU_H2D_GBPS = SIMGPU_D2H_GBPS); "25-shared": one direction at a
# time (SIMGPU_LINK_SHARED=1), which the planner is told (SHIM_LINK_DUPLEX=shared); "25-both11":
# 25 GB/s each way alone, 11 to the device and 25 to the host while both copy (the PCIe Gen4 A100
# of nvbandwidth issue #53: SIMGPU_LINK_BOTH_GBPS), which the planner is told (SHIM_LINK_BOTH_GBPS).
links=${RESIDENCY_BENCH_GBPS:-25 50 25-shared 25-both11}

for gbps in $links; do
    rate=${gbps%%-*}
    export SIMGPU_H2D_GBPS=$rate SIMGPU_D2H_GBPS=$rate SIMGPU_LINK_SHARED=0 SHIM_LINK_DUPLEX=full
    export SIMGPU_LINK_BOTH_GBPS= SHIM_LINK_BOTH_GBPS=
    case $gbps in
    *-shared) export SIMGPU_LINK_SHARED=1 SHIM_LINK_DUPLEX=shared ;;
    *-both*) export SIMGPU_LINK_BOTH_GBPS=${gbps##*-both},$rate SHIM_LINK_BOTH_GBPS=${gbps##*-both},$rate ;;
    esac
    mkdir -p "$work/$gbps"
    for mode in segments async exact; do
        SIMGPU_STATS="$work/$gbps/native-$mode.json" build/train_sim --mode "$mode" "${args[@]}" \
            >"$work/$gbps/native-$mode.out"
        peak=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["peak_device_bytes"])' \
            "$work/$gbps/native-$mode.json")
        for pct in 100 75 50; do
            for planner in reactive scheduled; do
                name="$gbps/shim-$mode-$pct-$planner"
                SHIM_PLANNER=$planner SHIM_TRACE_PATH="$work/$name.trace" SHIM_LOG_LEVEL=info \
                    SHIM_BUDGET=$((peak * pct / 100)) SIMGPU_STATS="$work/$name.json" \
                    LD_PRELOAD="$root/build/libshim.so" build/train_sim --mode "$mode" "${args[@]}" \
                    >"$work/$name.out" 2>"$work/$name.err" || echo "shim run $name failed: exit $?" >&2
                build/shim-report summary --json "$work/$name.trace" >"$work/$name.sum.json"
                rm -f "$work/$name.trace"
            done
        done
    done
done

table=$(python3 - "$work" "$steady" $links <<'PY'
import json, re, sys
work, steady, links = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def run(name, last=None):
    out = open(f"{work}/{name}.out").read()
    iters = [float(v) for v in re.findall(r"^iter \d+ device_us=([0-9.]+)", out, re.M)]
    sel = iters[-last:] if last else (iters[1:] or iters)
    spread = (max(sel) - min(sel)) / min(sel) if sel else float("nan")
    st = json.load(open(f"{work}/{name}.json"))
    sums = re.findall(r"^checksum=(\w+)$", out, re.M)
    return sum(sel) / len(sel) if sel else float("nan"), len(iters), st, sums[-1] if sums else None, spread
mib = lambda b: f"{b / 2**20:.0f}"
print("| link | mode | budget | native us/iter | reactive us/iter | scheduled us/iter | plan predicts | "
      "lower bound | scheduled / plan | scheduled / bound | scheduled / native | spread of the "
      "scheduled iterations | moves per iter (evictions, restores) | same checksum, no hazard |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for link in links:
  for mode in ("segments", "async", "exact"):
    nat_us, _, nat, nat_sum, _ = run(f"{link}/native-{mode}", steady)
    peak = nat["peak_device_bytes"]
    for pct in (100, 75, 50):
        budget = peak * pct // 100
        re_us, _, re_st, re_sum, _ = run(f"{link}/shim-{mode}-{pct}-reactive")
        name = f"{link}/shim-{mode}-{pct}-scheduled"
        us, n, st, s, spread = run(name, steady)
        err = open(f"{work}/{name}.err").read()
        plans = json.load(open(f"{work}/{name}.sum.json")).get("plans") or []
        pred, bound = (plans[-1]["predicted_us"], plans[-1]["bound_us"]) if plans else (None, None)
        m = re.findall(r"(\d+) evictions \((\d+) cancelled\), (\d+) restores", err)
        moves = f"{int(m[-1][0]) / n:.1f}, {int(m[-1][2]) / n:.1f}" if m else "-"
        ok = all(x == nat_sum for x in (s, re_sum)) and st["unmap_hazards"] == 0 and \
             re_st["unmap_hazards"] == 0
        ok = "yes" if ok else f"NO (checksums {s}, {re_sum}; hazards {st['unmap_hazards']}, {re_st['unmap_hazards']})"
        f = lambda v: f"{v:.0f}" if v is not None else "no plan"
        r = lambda a, b: f"{a / b:.2f}x" if b else "-"
        label = (link.replace('-shared', ' GB/s, shared') if 'shared' in link else
                 re.sub(r'^(\d+)-both(\d+)$', r'\1 GB/s, \2/\1 both busy', link) if 'both' in link else
                 link + ' GB/s')
        print(f"| {label} | {mode} | {pct}% ({mib(budget)} MiB) | {nat_us:.0f} | {re_us:.0f} | "
              f"{us:.0f} | {f(pred)} | {f(bound)} | {r(us, pred)} | {r(us, bound)} | "
              f"{us / nat_us:.2f}x | {100 * spread:.1f}% | {moves} | {ok} |")
PY
)
echo "$table"
{
    echo "# Residency manager: cost of a budget"
    echo
    echo "Command: \`tests/bench/residency_bench.sh ${args[*]}\` ($(date -u +%Y-%m-%d), $(nproc) cores,"
    echo "$(uname -m); libshim at $(git rev-parse --short HEAD)$(git diff --quiet -- shim || echo ' with uncommitted changes in shim/'))."
    echo "train_sim on the simulated device at each link speed (SIMGPU_H2D_GBPS = SIMGPU_D2H_GBPS ="
    echo "$links GB/s; the two directions do not slow each other, except in the \"shared\" rows where"
    echo "they queue on one engine and the planner is told so), without libshim, then under it"
    echo "with SHIM_BUDGET at 100%, 75% and 50% of the mode's native peak, once"
    echo "with \`planner = reactive\` and once with \`planner = scheduled\` (the default), all in one run."
    echo
    echo "- *us/iter*: virtual device time per iteration. *reactive*: the mean of"
    echo "  iterations 1 and later (iteration 0 allocates everything). *native* and *scheduled*: the"
    echo "  mean of the last $steady iterations, which run under the plan (the step is detected after"
    echo "  2 iterations, profiled for 3, recorded for 1 more; the plan is installed at the end of the"
    echo "  next and applies from iteration 8)."
    echo "- *plan predicts*, *lower bound*: the in-process plan's record in the trace (summary --json: plans)"
    echo "  (its model of the recorded step at this budget: scheduled plan's step time, and compute"
    echo "  plus the lower bound on stall, planner/plan_bound.c); \"no plan\" where none was needed."
    echo "- *spread*: (slowest - fastest) / fastest over those iterations: the same plan on the same"
    echo "  step should give one figure; a spread is the residency manager's dependence on thread"
    echo "  timing (which of its polls sees a copy done), which the bench would show (0.0% in every row since 1d0d413)."
    echo "- *moves per iter*: the shim's exit line totals over all iterations (reactive ones included)."
    echo "- *same checksum, no hazard*: both shim runs' checksums equal the native one and the"
    echo "  simulator saw no unmap hazard."
    echo
    echo "$table"
    # The analysis written by hand below the marker is kept across runs.
    echo
    sed -n '/^<!-- analysis -->$/,$p' tests/bench/RESULTS-residency.md 2>/dev/null
} >"$work/results.md"
mv "$work/results.md" tests/bench/RESULTS-residency.md
