#!/usr/bin/env bash
# What the residency manager costs (not a test: `make bench-residency`): train_sim on the
# simulated device without the shim, then under it with budgets of 100%, 75% and 50% of the
# native peak, in each allocation mode. Prints a table of virtual device time per steady-state
# iteration (iteration 0 left out), its ratio to the native run, the device peak, bytes moved
# each way, and an approximate lower bound from the host link; writes it to
# tests/bench/RESULTS-residency.md. Virtual time is deterministic, so one run of each suffices.
#   usage: tests/bench/residency_bench.sh [TRAIN_SIM FLAGS...]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--layers 4 --hidden 1024 --batch 7 --seq 1024 --iters 4)
make -s build/libshim.so build/train_sim
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LD_LIBRARY_PATH="$root/build/simgpu" SIMGPU_QUIET=1
d2h_gbps=${SIMGPU_D2H_GBPS:-25}

for mode in segments async exact; do
    SIMGPU_STATS="$work/native-$mode.json" build/train_sim --mode "$mode" "${args[@]}" \
        >"$work/native-$mode.out"
    peak=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["peak_device_bytes"])' \
        "$work/native-$mode.json")
    for pct in 100 75 50; do
        SHIM_TRACE_PATH= SHIM_LOG_LEVEL=info SHIM_BUDGET=$((peak * pct / 100)) \
            SIMGPU_STATS="$work/shim-$mode-$pct.json" LD_PRELOAD="$root/build/libshim.so" \
            build/train_sim --mode "$mode" "${args[@]}" >"$work/shim-$mode-$pct.out" \
            2>"$work/shim-$mode-$pct.err" || echo "shim run $mode $pct% failed: exit $?" >&2
    done
done

table=$(python3 - "$work" "$d2h_gbps" <<'PY'
import json, re, sys
work, gbps = sys.argv[1], float(sys.argv[2])
def run(name):
    out = open(f"{work}/{name}.out").read()
    iters = [float(v) for v in re.findall(r"^iter \d+ device_us=([0-9.]+)", out, re.M)]
    steady = iters[1:] or iters
    st = json.load(open(f"{work}/{name}.json"))
    sums = re.findall(r"^checksum=(\w+)$", out, re.M)
    return sum(steady) / len(steady) if steady else float("nan"), len(iters), st, sums[-1] if sums else None
mib = lambda b: f"{b / 2**20:.0f}"
print("| mode | budget | native us/iter | shim us/iter | ratio | link bound us/iter | shim / bound "
      "| peak MiB | H2D MiB/iter | D2H MiB/iter | evictions, restores | same checksum, no hazard |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for mode in ("segments", "async", "exact"):
    nat_us, _, nat, nat_sum = run(f"native-{mode}")
    peak = nat["peak_device_bytes"]
    for pct in (100, 75, 50):
        name = f"shim-{mode}-{pct}"
        us, n, st, s = run(name)
        budget = peak * pct // 100
        err = open(f"{work}/{name}.err").read()
        m = re.findall(r"residency: (\d+) evictions \((\d+) cancelled\), (\d+) restores", err)
        moves = f"{m[-1][0]}, {m[-1][2]}" if m else "-"
        # Everything train_sim keeps is rewritten every step, so the bytes over the budget at
        # the peak leave the device at least once per step; copies can overlap compute.
        bound = max(nat_us, (peak - budget) / (gbps * 1e3))
        ok = "yes" if s == nat_sum and st["unmap_hazards"] == 0 else \
             f"NO (checksum {'same' if s == nat_sum else s}, {st['unmap_hazards']} hazards)"
        print(f"| {mode} | {pct}% ({mib(budget)} MiB) | {nat_us:.0f} | {us:.0f} | {us / nat_us:.2f}x "
              f"| {bound:.0f} | {us / bound:.2f}x | {mib(st['peak_device_bytes'])} "
              f"| {mib(st['bytes_h2d'] / n)} | {mib(st['bytes_d2h'] / n)} | {moves} | {ok} |")
PY
)
echo "$table"
{
    echo "# Residency manager: cost of a budget"
    echo
    echo "Command: \`tests/bench/residency_bench.sh ${args[*]}\` ($(date -u +%Y-%m-%d), $(nproc) cores,"
    echo "$(uname -m); libshim at $(git rev-parse --short HEAD)$(git diff --quiet -- shim || echo ' with uncommitted changes in shim/'))."
    echo "train_sim on the simulated device (SIMGPU_H2D_GBPS = SIMGPU_D2H_GBPS = $d2h_gbps), without"
    echo "libshim, then under it with SHIM_BUDGET at 100%, 75% and 50% of the mode's native peak."
    echo
    echo "- *us/iter*: virtual device time per iteration, the mean of iterations 1 and later"
    echo "  (iteration 0 allocates everything); the same on every run."
    echo "- *link bound*: an approximate floor, max(native us/iter, (peak - budget) / D2H bandwidth):"
    echo "  train_sim rewrites everything it keeps every step, so the bytes over the budget at the"
    echo "  peak must leave the device at least once per step, and copies can at best hide behind"
    echo "  compute. It ignores that what leaves must also come back (the other direction overlaps)."
    echo "- *H2D / D2H MiB/iter*: SIMGPU_STATS totals divided by the iterations (iteration 0 included)."
    echo "- *same checksum, no hazard*: the shim run's checksum equals the native one and the"
    echo "  simulator saw no unmap hazard."
    echo
    echo "$table"
} >tests/bench/RESULTS-residency.md
