#!/usr/bin/env bash
# The back-test (not a test: `make bench-twin`): the code the H100 ran (libshim at dbfd80c, built
# in a temporary worktree outside the repository) on the simulated device's twins of the H100's
# two PyTorch jobs (tests/workloads/twin_*.c), with the host's time modelled (the program's own
# time before each op, SIMGPU_HOST_CALLER=libshim) and the H100's VMM cost; prints the
# H100's ratios to native (tests/bench/RESULTS-gpu.md) beside the twins' and writes
# tests/bench/RESULTS-twin.md. Every figure of one table comes from this one run.
#   usage: tests/bench/twin_bench.sh
# TWIN_CODE=DIR: a tree of dbfd80c already built (build/libshim.so, build/shim-report) instead.
# TWIN_VMM_COSTS: the SIMGPU_VMM_HOST_COST factors to run (default "1 1.64": the idle figures the
# simulator's model is fitted to, and the H100's cost inside a job, RESULTS-twin.md says why).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
steps=${TWIN_STEPS:-14} # the plan applies from step 7
last=${TWIN_LAST:-6}    # the median of the last steps, as the H100's table took its last half
costs=${TWIN_VMM_COSTS:-1 1.64}
make -s build/twin build/replay
work=$(mktemp -d)
code=${TWIN_CODE:-}
cleanup() {
    if [ -z "${TWIN_CODE:-}" ] && [ -n "$code" ]; then
        git worktree remove --force "$code" >/dev/null 2>&1 || rm -rf "$code"
    fi
    rm -rf "$work"
}
trap cleanup EXIT
if [ -z "$code" ]; then
    code=$(mktemp -d "${TMPDIR:-/tmp}/libshim-dbfd80c.XXXXXX")
    rmdir "$code"
    git worktree add --detach "$code" dbfd80c >/dev/null 2>&1
    make -s -C "$code" -j2 build/libshim.so build/shim-report >"$work/build.log" 2>&1 ||
        { cat "$work/build.log" >&2; exit 1; }
fi
shim="$code/build/libshim.so"
report="$code/build/shim-report"

# The H100's device: 80 GiB; the link libshim measured of its own copies there (45-50 GB/s each
# way); the interposer's calls charged its per-call cost (SIMGPU_HOST_CALLER_US's default, the
# recording path's 25.7 ns); the driver-wide VMM lock on (the default, the worse case).
export SIMGPU_MEMORY=80GiB SIMGPU_H2D_GBPS=48 SIMGPU_D2H_GBPS=48 SIMGPU_HOST_CALLER=libshim
export SIMGPU_VMM_SERIAL=1 SIMGPU_QUIET=1
unset SHIM_BUDGET SHIM_LINK_REMAP SHIM_CONFIG

# run NAME MODEL [VAR=VALUE...]: one replay of the model; stdout, stderr, statistics in $work.
# The program's own host time before each op is charged by replay itself (--host-us:
# simgpu_host_work), before its allocations and its launch reach libshim, as a PyTorch op's Python
# runs before libshim sees its calls; SIMGPU_HOST_US_PER_LAUNCH=0 turns on the host's clocks.
run() {
    local name=$1 model=$2
    shift 2
    env SIMGPU_HOST_US_PER_LAUNCH=0 SIMGPU_STATS="$work/$name.json" "$@" build/replay "$model" \
        --carry --steps "$steps" --host-us "$(awk '/^# host_us_per_launch/ {print $3}' "$model")" \
        >"$work/$name.out" 2>"$work/$name.err" || echo "run $name failed: exit $?" >&2
}

# The remap each H100 row's plan was told (RESULTS-gpu.md: the median of libshim's own remaps,
# link_remap = "measured"; on the simulated device libshim would time the simulator's real time).
remap_mlp_75=2993us remap_mlp_50=2280us remap_transformer_75=902us remap_transformer_50=820us
for job in mlp transformer; do
    build/twin $job >"$work/$job.model"
    run "$job-native" "$work/$job.model"
    for f in $costs; do
        run "$job-$f-default" "$work/$job.model" SIMGPU_VMM_HOST_COST="$f" LD_PRELOAD="$shim" \
            SHIM_TRACE_PATH="$work/$job-$f-default.trace" SHIM_LOG_LEVEL=info
        peak=$("$report" summary --json "$work/$job-$f-default.trace" |
            python3 -c 'import json, sys; print(json.load(sys.stdin)["peak_device_bytes"])')
        for pct in 75 50; do
            remap=remap_${job}_$pct
            run "$job-$f-$pct" "$work/$job.model" SIMGPU_VMM_HOST_COST="$f" LD_PRELOAD="$shim" \
                SHIM_BUDGET="$((peak * pct / 100 / 1048576))MiB" SHIM_LINK_REMAP="${!remap}" \
                SHIM_TRACE_PATH= SHIM_LOG_LEVEL=info
        done
    done
done

table=$(python3 - "$work" "$last" "$steps" $costs <<'PY'
import json, re, statistics, sys
work, last, nsteps, costs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
# RESULTS-gpu.md, libshim at dbfd80c, cudaMallocAsync: step ms and the plan's prediction (ms).
h100 = {("mlp", "native"): (67.31, None), ("mlp", "default"): (67.42, 67.02),
        ("mlp", "75"): (169.68, 141.30), ("mlp", "50"): (351.61, 310.56),
        ("transformer", "native"): (39.92, None), ("transformer", "default"): (46.65, 38.04),
        ("transformer", "75"): (449.23, 121.31), ("transformer", "50"): (841.38, 274.59)}
def run(name):
    out, err = open(f"{work}/{name}.out").read(), open(f"{work}/{name}.err").read()
    steps = [float(v) / 1000 for v in re.findall(r"^step \d+ device_us=([0-9.]+)", out, re.M)]
    sums = re.findall(r"^checksum=(\w+)$", out, re.M)
    plan = re.findall(r"predicted ([0-9.]+) ms per step.*?(\d+) evictions and (\d+) prefetches", err)
    st = json.load(open(f"{work}/{name}.json"))
    return (statistics.median(steps[-last:]) if steps else float("nan"), sums[-1] if sums else None,
            plan[-1] if plan else None, st)
print("| job | budget | VMM cost | H100 step ms (/ native) | twin step ms (/ native) | twin / H100 "
      "| H100 plan ms | twin plan ms (evictions, prefetches a step) | twin VMM host ms a step "
      "(program's thread / libshim's mover) | same checksum, no hazard |")
print("|---|---|---|---|---|---|---|---|---|---|")
for job in ("mlp", "transformer"):
    nat_ms, nat_sum, _, _ = run(f"{job}-native")
    hn = h100[(job, "native")][0]
    print(f"| {job} | native | - | {hn:.2f} (1.00x) | {nat_ms:.2f} (1.00x) | - | - | - | - | - |")
    for f in costs:
        for b in ("default", "75", "50"):
            ms, s, plan, st = run(f"{job}-{f}-{b}")
            hms, hplan = h100[(job, b)]
            hx, tx = hms / hn, ms / nat_ms
            vmm = " / ".join(f"{t['vmm_us'] / 1000 / nsteps:.0f}" for t in (st.get("threads") or [])[:2])
            ok = "yes" if s == nat_sum and st["unmap_hazards"] == 0 else \
                 f"NO ({s}, {st['unmap_hazards']} hazards)"
            pl = f"{float(plan[0]):.1f} ({plan[1]}, {plan[2]})" if plan else "-"
            label = "default" if b == "default" else f"{b}%"
            print(f"| {job} | {label} | {f}x | {hms:.2f} ({hx:.2f}x) | {ms:.2f} ({tx:.2f}x) | "
                  f"{tx / hx:.2f} | {hplan:.1f} | {pl} | {vmm or '-'} | {ok} |")
PY
)
echo "$table"
{
    echo "# The back-test: the code the H100 ran, on the simulated device's twins of its jobs"
    echo
    echo "Command: \`tests/bench/twin_bench.sh\` ($(date -u +%Y-%m-%d), $(nproc) cores, $(uname -m);"
    echo "the simulated device and the twins at $(git rev-parse --short HEAD)$(git diff --quiet -- tests/simgpu tests/workloads || echo ' with uncommitted changes'),"
    echo "libshim at dbfd80c, the code of RESULTS-gpu.md's third and fourth tables)."
    echo
    echo "- *H100*: RESULTS-gpu.md's figures for libshim at dbfd80c with cudaMallocAsync (the"
    echo "  median step of the last half of the job's steps), and its ratio to native."
    echo "- *twin*: \`build/twin JOB\` replayed (\`replay --carry --steps $steps --host-us US\`, US the"
    echo "  model's host time per launch) natively and under that"
    echo "  libshim, the median of the last $last steps (the plan applies from step 7); default budget,"
    echo "  then 75% and 50% of the peak libshim's trace records in the default run, as"
    echo "  tests/gpu/torch_budget.sh sets them. The plan is told each H100 row's measured remap"
    echo "  (2993, 2280, 902 and 820 us; the default rows move nothing)."
    echo "- *VMM cost*: SIMGPU_VMM_HOST_COST: 1, the H100's idle figures the simulator's model is fitted"
    echo "  to; 1.64, what the same calls cost inside the job (below)."
    echo "- The simulated device: 80 GiB, 48 GB/s each way, the driver-wide VMM lock on"
    echo "  (SIMGPU_VMM_SERIAL=1), per-thread host clocks (SIMGPU_HOST_US_PER_LAUNCH=0: replay charges"
    echo "  the program's own time), libshim's calls charged (SIMGPU_HOST_CALLER=libshim)."
    echo "- *twin VMM host ms a step*: the statistics file's \`threads\`, each thread's VMM host time"
    echo "  over the run's $steps steps (reactive ones included) per step."
    echo
    echo "$table"
    # The analysis written by hand below the marker is kept across runs.
    echo
    sed -n '/^<!-- analysis -->$/,$p' tests/bench/RESULTS-twin.md 2>/dev/null || true
} >"$work/results.md"
mv "$work/results.md" tests/bench/RESULTS-twin.md
