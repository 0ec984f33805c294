#!/usr/bin/env bash
# What the host cost of VMM calls does to a budgeted run (not a test: `make bench-vmm-cost`).
# The simulated device charges each VMM call what it costs on a real driver when
# SIMGPU_VMM_HOST_COST=1: a cost per call and per physical handle (tests/simgpu/simgpu_vmm_cost.c,
# from the H100's figures in tests/bench/RESULTS-gpu.md, kvcached's and PyTorch's), charged to the
# calling thread's own clock. SIMGPU_VMM_SERIAL=1 models a driver-wide lock that also delays the
# launches of every other thread (the worse case, the simulated device's default until the GPU
# facts say otherwise); SIMGPU_VMM_SERIAL=0 lets libshim's mover remap while the program launches.
# This runs train_sim natively, then under libshim at 100%, 75% and 50% of the native peak three
# ways: VMM calls free (the plan told 0 us per remap: the plan of RESULTS-residency.md's model),
# and at their cost with and without the serialising lock, the plan told 64 us per move (the
# simulated device's cost of one unmap, one map and one set access of one handle: what libshim's
# link_remap = "measured" reads on a GPU, where its remaps take host time). Prints a table of
# virtual device time per iteration and writes it to tests/bench/RESULTS-vmm-cost.md. Rows with
# the cost vary by a few percent between runs (the mover's calls reach the clocks when that
# thread runs); rows without it are deterministic.
#   usage: tests/bench/vmm_cost_bench.sh [TRAIN_SIM FLAGS...]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--layers 4 --hidden 1024 --batch 7 --seq 1024 --iters 14)
steady=4 # the last iterations, run under the plan (as in residency_bench.sh)
modes=${VMM_BENCH_MODES:-async exact}
make -s build/libshim.so build/train_sim build/shim-report
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LD_LIBRARY_PATH="$root/build/simgpu" SIMGPU_QUIET=1 SIMGPU_H2D_GBPS=25 SIMGPU_D2H_GBPS=25

# shimmed NAME MODE PCT COST SERIAL REMAP: a run under libshim at PCT% of the mode's native peak.
shimmed() {
    SIMGPU_VMM_HOST_COST=$4 SIMGPU_VMM_SERIAL=$5 SHIM_LINK_REMAP=$6 \
        SHIM_TRACE_PATH="$work/$1.trace" SHIM_LOG_LEVEL=info SHIM_BUDGET=$((peak * $3 / 100)) \
        SIMGPU_STATS="$work/$1.json" LD_PRELOAD="$root/build/libshim.so" \
        build/train_sim --mode "$2" "${args[@]}" >"$work/$1.out" 2>"$work/$1.err" ||
        echo "shim run $1 failed: exit $?" >&2
    build/shim-report summary --json "$work/$1.trace" >"$work/$1.sum.json"
    rm -f "$work/$1.trace"
}

for mode in $modes; do
    SIMGPU_STATS="$work/native-$mode.json" build/train_sim --mode "$mode" "${args[@]}" \
        >"$work/native-$mode.out"
    peak=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["peak_device_bytes"])' \
        "$work/native-$mode.json")
    for pct in 100 75 50; do
        shimmed "$mode-$pct-free" "$mode" "$pct" 0 1 0us
        shimmed "$mode-$pct-serial" "$mode" "$pct" 1 1 64us
        shimmed "$mode-$pct-parallel" "$mode" "$pct" 1 0 64us
    done
done

table=$(python3 - "$work" "$steady" $modes <<'PY'
import json, re, sys
work, steady, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def run(name):
    out = open(f"{work}/{name}.out").read()
    iters = [float(v) for v in re.findall(r"^iter \d+ device_us=([0-9.]+)", out, re.M)]
    sel = iters[-steady:]
    st = json.load(open(f"{work}/{name}.json"))
    sums = re.findall(r"^checksum=(\w+)$", out, re.M)
    return sum(sel) / len(sel), len(iters), st, sums[-1] if sums else None
def predicted(name):
    plans = json.load(open(f"{work}/{name}.sum.json")).get("plans") or []
    return plans[-1]["predicted_us"] if plans else None
print("| mode | budget | VMM calls | remap told | us/iter | / native | plan predicts | / plan "
      "| plan / free plan | VMM host ms per iter (on the shared clock) | moves per iter "
      "| remaps by the mover | handles created, released | same checksum, no hazard |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for mode in modes:
    nat_us, _, nat, nat_sum = run(f"native-{mode}")
    print(f"| {mode} | native | - | - | {nat_us:.0f} | 1.00x | - | - | - | - | - | - | - | - |")
    for pct in (100, 75, 50):
        free_pred = predicted(f"{mode}-{pct}-free")
        for variant, cost, remap in (("free", "free", "0us"), ("serial", "cost, serialising", "64us"),
                                     ("parallel", "cost, parallel", "64us")):
            name = f"{mode}-{pct}-{variant}"
            us, n, st, s = run(name)
            pred = predicted(name)
            err = open(f"{work}/{name}.err").read()
            m = re.findall(r"(\d+) evictions \((\d+) cancelled\), (\d+) restores", err)
            moves = f"{int(m[-1][0]) / n:.1f}, {int(m[-1][2]) / n:.1f}" if m else "-"
            rm = re.findall(r"remaps: (\d+) \((\d+) by the mover\), (\d+) handles created, (\d+) released", err)
            remaps = f"{rm[-1][1]} of {rm[-1][0]}" if rm else "-"
            handles = f"{rm[-1][2]}, {rm[-1][3]}" if rm else "-"
            ok = "yes" if s == nat_sum and st["unmap_hazards"] == 0 else \
                 f"NO (checksum {s}, hazards {st['unmap_hazards']})"
            vmm = f"{st['vmm_host_us'] / n / 1e3:.2f} ({st.get('vmm_serial_us', 0) / n / 1e3:.2f})"
            print(f"| {mode} | {pct}% | {cost} | {remap} | {us:.0f} | {us / nat_us:.2f}x | "
                  f"{f'{pred:.0f}' if pred else 'no plan'} | {f'{us / pred:.2f}x' if pred else '-'} | "
                  f"{f'{pred / free_pred:.2f}x' if pred and free_pred else '-'} | "
                  f"{vmm} | {moves} | {remaps} | {handles} | {ok} |")
PY
)
echo "$table"
{
    echo "# Residency under the host cost of VMM calls"
    echo
    echo "Command: \`tests/bench/vmm_cost_bench.sh ${args[*]}\` ($(date -u +%Y-%m-%d), $(nproc) cores,"
    echo "$(uname -m); libshim at $(git rev-parse --short HEAD)$(git diff --quiet -- shim tests/simgpu || echo ' with uncommitted changes'))."
    echo "train_sim on the simulated device (25 GB/s each way), natively, then under libshim at 100%,"
    echo "75% and 50% of the mode's native peak: with VMM calls free (the plan told 0 us per remap),"
    echo "and with \`SIMGPU_VMM_HOST_COST=1\` (each VMM call charges the calling thread's host clock"
    echo "per call and per physical handle, \`tests/simgpu/simgpu_vmm_cost.c\`), with the driver-wide"
    echo "lock (\`SIMGPU_VMM_SERIAL=1\`, the worse case: every VMM call also delays every thread's"
    echo "launches) and without it (\`SIMGPU_VMM_SERIAL=0\`); the plan told 64 us per move, the"
    echo "simulated cost of remapping one handle (\`SHIM_LINK_REMAP\`)."
    echo
    echo "- *us/iter*: virtual device time per iteration, the mean of the last $steady (under the plan)."
    echo "- *plan / free plan*: the plan's prediction over the same step's plan with VMM calls free."
    echo "- *VMM host ms per iter*: \`vmm_host_us\` of the run over its iterations (setup included), and"
    echo "  in brackets the part that reached the shared clock (\`vmm_serial_us\`)."
    echo "- *remaps by the mover*, *handles created, released*: from libshim's exit line."
    echo
    echo "$table"
    echo
    # The analysis written by hand below the marker is kept across runs.
    [ ! -f tests/bench/RESULTS-vmm-cost.md ] || sed -n '/^<!-- analysis -->$/,$p' tests/bench/RESULTS-vmm-cost.md
} >"$work/results.md"
mv "$work/results.md" tests/bench/RESULTS-vmm-cost.md
