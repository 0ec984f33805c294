#!/usr/bin/env bash
# The current code on the twins of the H100's two PyTorch jobs (not a test: `make bench-host-bound`):
# the plan's native estimate against the measured native step, and libshim's step against
# native and against its plan, at the default budget, 75% and 50% of the peak libshim records,
# with VMM calls free and at the H100's cost inside a job (SIMGPU_VMM_HOST_COST=1.64,
# RESULTS-twin.md), the driver-wide lock on. Prints a table whose ratios come from this one run
# and writes tests/bench/RESULTS-host-bound.md.
#   usage: tests/bench/host_bound_bench.sh
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
steps=14 last=6
make -s build/libshim.so build/twin build/replay build/shim-report
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LD_LIBRARY_PATH="$root/build/simgpu" SIMGPU_QUIET=1 SIMGPU_MEMORY=80GiB
export SIMGPU_H2D_GBPS=48 SIMGPU_D2H_GBPS=48 SIMGPU_HOST_CALLER=libshim SIMGPU_VMM_SERIAL=1
unset SHIM_BUDGET SHIM_LINK_REMAP SHIM_CONFIG

# run NAME MODEL [VAR=VALUE...]: one replay, the program's host time charged before each op.
run() {
    local name=$1 model=$2
    shift 2
    env SIMGPU_HOST_US_PER_LAUNCH=0 SIMGPU_STATS="$work/$name.json" "$@" build/replay "$model" \
        --carry --steps "$steps" --host-us "$(awk '/^# host_us_per_launch/ {print $3}' "$model")" \
        >"$work/$name.out" 2>"$work/$name.err" || echo "run $name failed: exit $?" >&2
}
# The remap each plan is told: the H100's medians inside the jobs (RESULTS-gpu.md).
remap_mlp=2993us remap_transformer=902us
for job in transformer mlp; do
    build/twin $job >"$work/$job.model"
    run "$job-native" "$work/$job.model"
    for cost in 0 1.64; do
        run "$job-$cost-default" "$work/$job.model" SIMGPU_VMM_HOST_COST=$cost \
            LD_PRELOAD="$root/build/libshim.so" SHIM_LOG_LEVEL=info \
            SHIM_TRACE_PATH="$work/$job-$cost-default.trace"
        peak=$(build/shim-report summary --json "$work/$job-$cost-default.trace" |
            python3 -c 'import json, sys; print(json.load(sys.stdin)["peak_device_bytes"])')
        remap=remap_$job
        for pct in 75 50; do
            run "$job-$cost-$pct" "$work/$job.model" SIMGPU_VMM_HOST_COST=$cost \
                LD_PRELOAD="$root/build/libshim.so" SHIM_LOG_LEVEL=info SHIM_TRACE_PATH= \
                SHIM_BUDGET="$((peak * pct / 100 / 1048576))MiB" SHIM_LINK_REMAP="${!remap}"
        done
    done
done

table=$(python3 - "$work" "$last" <<'PY'
import json, re, statistics, sys
work, last = sys.argv[1], int(sys.argv[2])
def run(name):
    out = open(f"{work}/{name}.out").read()
    steps = [float(x) for x in re.findall(r"^step \d+ device_us=([0-9.]+)", out, re.M)]
    ms = statistics.median(steps[-last:]) / 1e3 if steps else float("nan")
    s = re.findall(r"^checksum=(\w+)", out, re.M)
    err = open(f"{work}/{name}.err").read()
    p = re.findall(r"predicted ([0-9.]+) ms per step against ([0-9.]+) ms native", err)
    st = json.load(open(f"{work}/{name}.json"))
    rec = st["calls"].get("cuEventRecord", 0)
    return ms, s[-1] if s else None, p[-1] if p else None, st, rec
print("| job | budget | VMM calls | native step ms | libshim step ms (/ native) | plan predicts ms (libshim / plan) | plan's native estimate ms (/ native) | event records a step | same checksum, no hazard |")
print("|---|---|---|---|---|---|---|---|---|")
for job in ("transformer", "mlp"):
    nms, nsum, _, _, _ = run(f"{job}-native")
    for cost in ("0", "1.64"):
        for b in ("default", "75", "50"):
            ms, s, p, st, rec = run(f"{job}-{cost}-{b}")
            ok = "yes" if s == nsum and st["unmap_hazards"] == 0 and st["illegal_accesses"] == 0 else "NO"
            pred = f"{float(p[0]):.2f} ({ms / float(p[0]):.2f}x)" if p else "-"
            est = f"{float(p[1]):.2f} ({float(p[1]) / nms:.2f}x)" if p else "-"
            print(f"| {job} | {b if b == 'default' else b + '%'} | {'free' if cost == '0' else cost + 'x'} | "
                  f"{nms:.2f} | {ms:.2f} ({ms / nms:.2f}x) | {pred} | {est} | {rec / 14:.0f} | {ok} |")
PY
)
echo "$table"
out=tests/bench/RESULTS-host-bound.md
analysis=$(sed -n '/^<!-- analysis -->$/,$p' "$out" 2>/dev/null || true)
{
    echo "# The current code on the twins: host-bound steps in the plan"
    echo
    echo "Command: \`tests/bench/host_bound_bench.sh\` ($(date -u +%F), $(nproc) cores, $(uname -m);"
    echo "libshim at $(git rev-parse --short HEAD))."
    echo
    echo "- The twins (\`build/twin JOB\`, RESULTS-twin.md) replayed with \`replay --carry --steps $steps"
    echo "  --host-us US\` (the program's own host time before each op); the median of the last $last"
    echo "  steps (the plan applies from step 7). Default budget, then 75% and 50% of the peak"
    echo "  libshim's trace records in the default run; the plan told the H100's remap medians."
    echo "- The simulated device: 80 GiB, 48 GB/s each way, the driver-wide VMM lock on,"
    echo "  libshim's calls charged (SIMGPU_HOST_CALLER=libshim); VMM calls free or at 1.64x the"
    echo "  H100's idle figures (what they cost inside a job, RESULTS-twin.md)."
    echo "- *plan's native estimate*: what the plan's model says the step takes without moves"
    echo "  (libshim's log line \"against N ms native\"); *event records a step*: cuEventRecord"
    echo "  calls over the run's 14 steps (3 profiled steps time every launch with two)."
    echo
    echo "$table"
    echo
    if [ -n "$analysis" ]; then echo "$analysis"; else echo "<!-- analysis -->"; fi
} >"$out"
