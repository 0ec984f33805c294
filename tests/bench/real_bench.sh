#!/usr/bin/env bash
# What a budget costs on any iteration model (not a test: `make bench-real`): each model file is
# run by replay (tests/workloads/replay_*.c) on the simulated device natively, then under libshim
# at 75% and 50% of its native device peak (REAL_BENCH_BUDGETS). Prints one row per model,
# allocation mode and budget:
# native peak and virtual step time, the offline planners' predictions for that budget (shim-plan
# --planner scheduled / reactive), the prediction of the last plan libshim made in the process
# (shim-report summary's plans), the lower bound (compute time plus shim-plan's lower_bound_us),
# libshim's achieved step time, and whether the checksum is the native one. Where the scheduled
# plan keeps allocations on the host (a model with bytes read per touch), the libshim run gets
# the sizes shim-plan prints for it (SHIM_HOST_RESIDENT), as a user would carry the plan out;
# where those sizes match more allocations than the plan keeps on the host, libshim keeps them
# all there, and the last two columns compare the run with the plan so carried out (shim-plan's
# host_resident_as_sized).
#   usage: tests/bench/real_bench.sh [-o FILE] [MODEL...]
# Without MODEL, generated models (shim-plan --generate) are used.
# Environment: REAL_BENCH_MALLOC (default "async sync"), REAL_BENCH_STEPS (14),
# REAL_BENCH_STEADY (4: the last steps, run under the in-process plan, are averaged),
# REAL_BENCH_REPLAY (more replay options for every run, e.g. "--stride 1048576" for models of
# many GB, which replay samples more sparsely) and REAL_BENCH_BUDGETS ("75 50": percentages of
# the native peak, and "floor": the least the model can run in as libshim holds it, shim-plan's
# floor_bytes).
#
# Budgets and link, so that the planner and libshim see the same figures:
#   - the budget is pct% of the device peak replay measured natively with cudaMalloc, which is
#     the model's native peak with every size rounded as the simulated device holds it
#     (tests/workloads/test_replay.sh checks that equality); shim-plan plans the model as
#     libshim holds it (granules, slabs, min_managed_bytes: planner/plan_build.h) for those
#     bytes, the SHIM_BUDGET libshim gets. That model copies held bytes (whole granules) where
#     libshim copies the allocation's own, so on sizes far from multiples of 2 MiB its
#     predictions and bound are pessimistic (RESULTS-real.md), as libshim's own plan is;
#   - the simulated link is the model's hw line: SIMGPU_H2D_GBPS / SIMGPU_D2H_GBPS, and for
#     DUPLEX 0 SIMGPU_LINK_SHARED=1 with SHIM_LINK_DUPLEX=shared (as residency_bench.sh does).
#     The simulator has no remap cost of the model's REMAP_US: unknown there, so the planner's
#     prediction, which charges it, is the conservative side.
# Virtual time is deterministic, so one run of each suffices (the spread of the steady steps is
# libshim's dependence on thread timing, as in RESULTS-residency.md).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=
if [ "${1:-}" = -o ]; then
    out=$2
    shift 2
fi
mallocs=${REAL_BENCH_MALLOC:-async sync}
steps=${REAL_BENCH_STEPS:-14}
steady=${REAL_BENCH_STEADY:-4}
budgets=${REAL_BENCH_BUDGETS:-75 50}
read -r -a replay_args <<<"${REAL_BENCH_REPLAY:-}"
make -s build/libshim.so build/replay build/shim-plan build/shim-report
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LD_LIBRARY_PATH="$root/build/simgpu" SIMGPU_QUIET=1
# The planner's remap cost fixed as in the tables so far (see tests/shim/shim_env.sh).
export SHIM_LINK_REMAP=${SHIM_LINK_REMAP:-10us}

models=("$@")
what="${models[*]}"
if [ ${#models[@]} -eq 0 ]; then
    what="(generated: shim-plan --generate"
    for spec in "transformer:layers=6,hidden=8MiB,weights=16MiB" \
        "unet:levels=4,act=32MiB,weights=4MiB" "optim:params=40,layers=5,weights=4MiB" \
        "random:ops=400,allocs=300,maxbytes=4MiB,h2d=25,d2h=25,remap=10"; do
        f="$work/${spec%%:*}.model"
        build/shim-plan --generate "$spec" -o "$f"
        models+=("$f")
        what="$what $spec"
    done
    what="$what)"
fi

i=0
for model in "${models[@]}"; do
    i=$((i + 1))
    d="$work/$i"
    mkdir -p "$d"
    echo "$model" >"$d/name"
    read -r h2d d2h duplex _ < <(awk '$1 == "hw" { print $2, $3, $4, $5 }' "$model")
    export SIMGPU_H2D_GBPS=$h2d SIMGPU_D2H_GBPS=$d2h
    if [ "$duplex" = 0 ]; then
        export SIMGPU_LINK_SHARED=1 SHIM_LINK_DUPLEX=shared
    else
        export SIMGPU_LINK_SHARED=0 SHIM_LINK_DUPLEX=full
    fi
    failed=
    for malloc in $mallocs; do
        SIMGPU_STATS="$d/native-$malloc.json" build/replay "$model" --malloc "$malloc" \
            --steps "$steps" ${replay_args[@]+"${replay_args[@]}"} >"$d/native-$malloc.out" 2>"$d/native-$malloc.err" || failed=$?
    done
    if [ -n "$failed" ]; then # no figures to compare with: the model gets no row
        echo "$model: native replay failed (exit $failed): $(tail -n 1 "$d"/native-*.err | tr '\n' ' ')" >&2
        continue
    fi
    peak=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["peak_device_bytes"])' \
        "$d/native-${mallocs%% *}.json")
    # The budget base is the cudaMalloc peak when that mode runs (see above).
    [ -f "$d/native-sync.json" ] &&
        peak=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["peak_device_bytes"])' \
            "$d/native-sync.json")
    echo "$peak" >"$d/peak"
    for pct in $budgets; do
        if [ "$pct" = floor ]; then
            build/shim-plan "$model" --budget "$peak" --planner none --json >"$d/held.json"
            python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["floor_bytes"])' \
                "$d/held.json" >"$d/budget-$pct"
        else
            echo $((peak * pct / 100)) >"$d/budget-$pct"
        fi
        for planner in scheduled reactive; do
            build/shim-plan "$model" --budget "$(cat "$d/budget-$pct")" --planner $planner \
                --json >"$d/plan-$pct-$planner.json"
        done
    done
    for malloc in $mallocs; do
        for pct in $budgets; do
            name="$d/shim-$malloc-$pct"
            # What the scheduled plan keeps on the host, carried out as a user would: the sizes
            # shim-plan prints for host_resident.
            hr=$(python3 -c 'import json, sys
print(",".join(str(s) for s in json.load(open(sys.argv[1])).get("host_resident_sizes", [])))' \
                "$d/plan-$pct-scheduled.json" 2>/dev/null || true)
            SHIM_HOST_RESIDENT="$hr" \
                SHIM_TRACE_PATH="$name.trace" SHIM_LOG_LEVEL=info SHIM_BUDGET="$(cat "$d/budget-$pct")" \
                SIMGPU_STATS="$name.json" LD_PRELOAD="$root/build/libshim.so" \
                build/replay "$model" --malloc "$malloc" --steps "$steps" \
                ${replay_args[@]+"${replay_args[@]}"} >"$name.out" 2>"$name.err" ||
                echo "shim run $name failed: exit $?" >&2
            build/shim-report summary --json "$name.trace" >"$name.sum.json" 2>/dev/null || true
            rm -f "$name.trace"
        done
    done
done

table=$(python3 - "$work" "$i" "$steady" "$budgets" $mallocs <<'PY'
import json, os, re, sys
work, n, steady, budgets, mallocs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split(), sys.argv[5:]
def load(path):
    try:
        return json.load(open(path))
    except Exception:
        return {}
def run(base):
    out = open(base + ".out").read() if os.path.exists(base + ".out") else ""
    steps = [float(v) for v in re.findall(r"^step \d+ device_us=([0-9.]+)", out, re.M)]
    sel = steps[-steady:]
    sums = re.findall(r"^checksum=(\w+)$", out, re.M)
    return (sum(sel) / len(sel) if sel else None), len(steps), (sums[-1] if sums else None), load(base + ".json")
f = lambda v: "-" if v is None else f"{v:.0f}"
r = lambda a, b: f"{a / b:.3f}x" if a is not None and b else "-"
print("| model | ops, allocs | malloc | native peak MiB | native us/step | budget | scheduled predicts "
      "| libshim's own plan predicted | reactive predicts | lower bound | libshim us/step | libshim / scheduled "
      "| libshim / native | moves per step (to host, to device) | kept on the host (plan, libshim) "
      "| same checksum, no hazard | scheduled, host_resident by size | libshim / that |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for k in range(1, n + 1):
    d = f"{work}/{k}"
    if not os.path.exists(f"{d}/peak"):
        continue
    name = os.path.basename(open(f"{d}/name").read().strip())
    peak = int(open(f"{d}/peak").read())
    for malloc in mallocs:
        nat_us, _, nat_sum, nat = run(f"{d}/native-{malloc}")
        summ = re.search(r"ops=(\d+) allocs=(\d+)", open(f"{d}/native-{malloc}.out").read())
        size = f"{summ.group(1)}, {summ.group(2)}" if summ else "-"
        for pct in budgets:
            bud = int(open(f"{d}/budget-{pct}").read())
            label = f"{pct}%" if pct != "floor" else "floor"
            sch = load(f"{d}/plan-{pct}-scheduled.json")
            rea = load(f"{d}/plan-{pct}-reactive.json")
            bound = sch["compute_us"] + sch["lower_bound_us"] if sch.get("lower_bound_us") is not None else None
            feas = lambda p: p.get("step_us") if p.get("feasible") else None
            base = f"{d}/shim-{malloc}-{pct}"
            us, nsteps, s, st = run(base)
            plans = load(base + ".sum.json").get("plans") or [{}]
            own = plans[-1].get("predicted_us") if plans[-1].get("feasible") else None
            err = open(base + ".err").read() if os.path.exists(base + ".err") else ""
            m = re.findall(r"(\d+) evictions \((\d+) cancelled\), (\d+) restores", err)
            moves = f"{int(m[-1][0]) / nsteps:.1f}, {int(m[-1][2]) / nsteps:.1f}" if m and nsteps else "-"
            kept = re.findall(r"(\d+) allocations kept on the host", err)
            host = f"{sch.get('host_resident_allocs', 0)}, {kept[-1] if kept else 0}"
            ok = s is not None and s == nat_sum and st.get("unmap_hazards") == 0 and st.get("illegal_accesses") == 0
            ok = "yes" if ok else f"NO (checksum {s} vs {nat_sum}, hazards {st.get('unmap_hazards')}, illegal {st.get('illegal_accesses')})"
            # The plan as host_resident carries it out: every allocation of a listed size on the
            # host (shim-plan's host_resident_as_sized), where that is more than the plan keeps.
            sized = sch.get("host_resident_as_sized")
            by_size = (sized.get("step_us") if sized.get("feasible") else None) if sized else feas(sch)
            print(f"| {name} | {size} | {malloc} | {peak / 2**20:.0f} | {f(nat_us)} | {label} ({bud / 2**20:.0f} MiB) "
                  f"| {f(feas(sch))} | {f(own)} | {f(feas(rea))} | {f(bound)} | {f(us)} | {r(us, feas(sch))} | {r(us, nat_us)} "
                  f"| {moves} | {host} | {ok} | {f(by_size)} | {r(us, by_size)} |")
PY
)
echo "$table"
if [ -n "$out" ]; then
    {
        echo "# Iteration models replayed under libshim"
        echo
        env_used=
        for v in REAL_BENCH_MALLOC REAL_BENCH_STEPS REAL_BENCH_STEADY REAL_BENCH_REPLAY REAL_BENCH_BUDGETS; do
            [ -n "${!v:-}" ] && env_used="$env_used$v=\"${!v}\" "
        done
        echo "Command: \`${env_used}tests/bench/real_bench.sh\` $what ($(date -u +%Y-%m-%d), $(nproc) cores, $(uname -m);"
        echo "libshim at $(git rev-parse --short HEAD)). $steps steps per run; us/step: the mean of the last $steady"
        echo "(virtual time); predictions: shim-plan on the model as libshim holds it, for the same budget"
        echo "in bytes; libshim's own plan: the prediction of the last plan it made in the process; lower"
        echo "bound: compute plus shim-plan's lower_bound_us; '-': infeasible or no figure."
        echo
        echo "$table"
        # The analysis written by hand below the marker is kept across runs.
        echo
        sed -n '/^<!-- analysis -->$/,$p' "$out" 2>/dev/null || true
    } >"$work/results.md"
    mv "$work/results.md" "$out"
fi
