#!/usr/bin/env bash
# train_sim under the shim: the same checksum as without it in every allocation mode, and
# shim-report finds its steps (every boundary from the second on, at the right launch) with
# the exact launch and allocation counts train_sim itself reports per iteration; kernel times
# measured in the profiled steps add up to the simulated device time of a step. Recording
# only (SHIM_MODE=record): in auto mode managed allocations reach the driver as VMM calls,
# which train_sim's own allocation counters do not see (tests/residency covers auto mode).
set -u
source "$(dirname "$0")/shim_env.sh"
plan 27
scratch work
args="--layers 3 --hidden 512 --batch 4 --seq 256 --iters 6"
for mode in segments async exact; do
    "$B/train_sim" --mode $mode $args >"$work/plain.$mode"
    SHIM_MODE=record SHIM_TRACE_PATH="$work/$mode.trace" LD_PRELOAD="$PRELOAD" "$B/train_sim" --mode $mode $args \
        >"$work/shim.$mode"
    check "$mode: exit 0 under the shim" [ $? -eq 0 ]
    check "$mode: same checksum as without the shim ($(tail -1 "$work/plain.$mode"))" \
        [ "$(tail -1 "$work/plain.$mode")" = "$(tail -1 "$work/shim.$mode")" ]
    "$B/shim-report" summary --json "$work/$mode.trace" >"$work/$mode.json"
    "$B/shim-report" kernels --json "$work/$mode.trace" >"$work/$mode.kernels.json"
    python3 - "$mode" "$work/shim.$mode" "$work/$mode.json" "$work/$mode.kernels.json" <<'PY'
import json, re, sys
mode, out, summary, kernels = sys.argv[1], open(sys.argv[2]).read(), json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
iters = [dict(re.findall(r"(\w+)=(\S+)", l)) for l in out.splitlines() if l.startswith("iter ")]
steps = summary["steps"]
bad = 0
def check(name, ok):
    global bad
    print(("ok" if ok else "not ok") + f" - {mode}: {name}")
    bad += not ok
n = len(iters)
check(f"steps found: {summary['iterations']} (train_sim ran {n})", summary["iterations"] in (n - 1, n))
# steps align with train_sim's iterations from the end: the last len(steps) iterations
tail = iters[n - len(steps):]
first = [s["first_seq"] for s in steps]
want_first = [first[-1] - sum(int(it["launches"]) for it in tail[k:-1]) for k in range(len(tail))]
check(f"every boundary at the first launch of its iteration {first}", first == want_first)
check("launches per step, the last one too, equal train_sim's " + str([s["launches"] for s in steps]),
      [s["launches"] for s in steps] == [int(it["launches"]) for it in tail])
check("allocations per step equal train_sim's " + str([s["allocations"] for s in steps]),
      [s["allocations"] for s in steps] == [int(it["allocs"]) for it in tail])
check(f"launches_per_iteration {summary['launches_per_iteration']} = {iters[-1]['launches']}",
      summary["launches_per_iteration"] == int(iters[-1]["launches"]))
timed = sum(k["total_us"] for k in kernels["kernels"])
profiled = 3  # profile.iterations default
step_us = float(iters[-1]["device_us"])
check(f"kernel times of the {profiled} profiled steps add up to {profiled} x the step's device time "
      f"({timed:.1f} vs {profiled * step_us:.1f} us; copies make the small rest)",
      abs(timed - profiled * step_us) <= 0.01 * profiled * step_us)
sys.exit(1 if bad else 0)
PY
    check "$mode: the report agrees with train_sim" [ $? -eq 0 ]
done
[ "$failures" -eq 0 ]
