#!/usr/bin/env bash
# tests/shim/test_verdict.sh — the answer first, everywhere, and nothing alarming at the end.
#   * The exit line opens with the verdict: train_sim at 60% of its native peak ends "exit:
#     fitted: resident peak R MiB within the B MiB budget (allocations peaked at A MiB...)", with
#     R <= B < A (the allocations' peak counts evicted ones: it is not what the budget bounds), R
#     the trace's resident_peak_bytes (format 1.9) and A its peak_device_bytes; then the step time
#     against native (the plan's estimate, labelled) with its lower bound, the steady state under
#     the plan per step (moves, a stall within the wall time, the simulator's wall time labelled)
#     and the warm-up apart.
#   * shim-report summary opens with the same verdict (text: its first lines; --json: "verdict"
#     first), its step figures those of the trace's plan record; a trace whose resident peak
#     passed the budget "did not fit"; one without a resident peak (older formats) is "unknown".
#   * Teardown is quiet: a normal run's log has no "plan withdrawn" or "pattern changed" line;
#     phase_prog, whose step really changes mid-run, still reports the change once, at the launch
#     where it happened, and the plan's withdrawal.
#   * Allocation names: allocs, summary's top allocations and moves name each allocation by its
#     size, role in the step and first .. last kernel, the same name everywhere.
set -u
source "$(dirname "$0")/shim_env.sh"
source "$root/tests/check.sh"
tmp=$(mktemp -d)
work=$tmp
trap 'rm -rf "$tmp"' EXIT
REPORT="$B/shim-report"
GEN="$B/trace_gen"
PHASE="$B/tests/shim/phase_prog"
CORPUS="$root/tests/trace/corpus-fuzz_trace"
plan 17

ARGS=(--mode exact --layers 2 --hidden 512 --batch 2 --seq 256 --vocab 1024 --iters 12)
SIMGPU_STATS="$work/native.json" "$B/train_sim" "${ARGS[@]}" >"$work/native.out"
P=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["peak_device_bytes"])' \
    "$work/native.json")
SHIM_TRACE_PATH="$work/auto.trace" SHIM_LOG_LEVEL=info SHIM_BUDGET=$((P * 60 / 100)) \
    LD_PRELOAD="$PRELOAD" "$B/train_sim" "${ARGS[@]}" >"$work/auto.out" 2>"$work/auto.err"
echo $? >"$work/auto.rc"
"$REPORT" summary "$work/auto.trace" >"$work/auto.txt" 2>&1
"$REPORT" summary --json "$work/auto.trace" >"$work/auto.json" 2>&1

ran_natively() {
    [ "$(cat "$work/auto.rc")" = 0 ] && [ "$(tail -1 "$work/auto.out")" = "$(tail -1 "$work/native.out")" ]
}
check "train_sim at 60% of its native peak under libshim: exit 0, native checksum" ran_natively

# The exit line's verdict against the trace of the same run. Per step is the steady state under
# the plan (its plan_step records: the figures' meaning since the figures were made one set,
# shim/trace/shim_trace_figures.h), with the warm-up apart; on the simulated device the wall time
# is labelled the simulator's own.
exit_verdict() {
    python3 - "$work/auto.err" "$work/auto.json" <<'PY'
import json, re, sys
log, s = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
m = re.findall(r"^libshim\[\d+\]: info: exit: (fitted|did not fit): resident peak (\d+\.\d) MiB "
               r"(within|over) the (\d+\.\d) MiB budget \(allocations peaked at (\d+\.\d) MiB, evicted "
               r"ones counted\); step (\d+\.\d) ms under the budget against (\d+\.\d) ms native, "
               r"(\d+\.\d\d)x, at least (\d+\.\d\d)x for any plan \(the plan's estimate from measured "
               r"kernel times\); steady state under the plan \((\d+) steps from step (\d+)\): "
               r"(\d+\.\d) MiB moved and (\d+\.\d) ms stalled per step, of (\d+\.\d) ms of wall time "
               r"per step \(the simulator's own, not the device's time\); warm-up apart \((\d+) other "
               r"steps, and the time outside any step\): (\d+\.\d) MiB moved, (\d+\.\d) ms stalled$",
               log, re.M)
assert len(m) == 1, f"one exit line with a verdict, got {m} in:\n{log[-1500:]}"
(ans, res, rel, bud, alloc, step, native, x, least, k, first, moved, stall, wall, other, omoved,
 ostall) = m[0]
n = re.findall(r"^libshim\[\d+\]: info: exit: (\d+) steps; residency: ", log, re.M)
assert len(n) == 1, f"one exit line of residency, got {n}"
mib = lambda b: f"{b / 2**20:.1f}"
assert ans == "fitted" and rel == "within", ans
assert float(res) <= float(bud) < float(alloc), (res, bud, alloc)
assert res == mib(s["resident_peak_bytes"]), (res, s["resident_peak_bytes"])
assert alloc == mib(s["peak_device_bytes"]), (alloc, s["peak_device_bytes"])
assert bud == mib(s["budget_bytes"]), (bud, s["budget_bytes"])
p = s["plans"][-1]
assert step == f"{p['predicted_us'] / 1e3:.1f}" and native == f"{p['native_us'] / 1e3:.1f}", (step, native, p)
assert x == f"{p['predicted_us'] / p['native_us']:.2f}", (x, p)
assert least == f"{p['bound_us'] / p['native_us']:.2f}" and float(least) <= float(x), (least, p)
assert int(n[0]) == s["iterations"], (n, s["iterations"])
ps = s["plan_steps"]
assert int(k) == len(ps) > 0 and int(first) == ps[0]["step"], (k, first, ps[:1])
want = sum(r["bytes_to_host"] + r["bytes_to_device"] for r in ps) / len(ps)
assert moved == mib(want), (moved, want)
assert float(stall) <= float(wall), ("a stall never exceeds the step it is part of", stall, wall)
assert int(other) == s["iterations"] - len(ps), (other, s["iterations"], len(ps))
rest = s["bytes_to_host"] + s["bytes_to_device"] - sum(r["bytes_to_host"] + r["bytes_to_device"] for r in ps)
assert omoved == mib(rest), (omoved, rest)
PY
}
check "exit line: 'fitted: resident peak R within the B MiB budget (allocations peaked at A)', R <= B < A, R and A the trace's, the plan's step estimate and lower bound, the steady state per step (the plan's steps, stall within the wall time, the simulator's), the warm-up apart" exit_verdict

# summary (text): the verdict is its first lines, in the exit line's words, the resident peak a
# line of its own.
summary_text() {
    python3 - "$work/auto.txt" "$work/auto.err" <<'PY'
import re, sys
text, log = open(sys.argv[1]).read().splitlines(), open(sys.argv[2]).read()
line = re.search(r"info: exit: (fitted: .*)$", log, re.M).group(1).split("; ")
assert text[0] == "verdict: " + line[0], (text[0], line[0])
assert text[1] == "step: " + line[1], (text[1], line[1])
assert text[2] == "steady_state: " + line[2], (text[2], line[2])
assert text[3] == "warm_up: " + line[3], (text[3], line[3])
assert text[4].startswith("moves: ") and text[5].startswith("resident_peak_bytes: "), text[4:6]
PY
}
check "summary: the verdict first (verdict, step, steady_state, warm_up, moves lines: the exit line's words), resident_peak_bytes a line of its own" summary_text

# summary --json: "verdict" is the first key, its figures the trace's.
summary_json() {
    python3 - "$work/auto.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert list(s)[:3] == ["verdict", "moves", "resident_peak_bytes"], list(s)[:3]
v, p, ps = s["verdict"], s["plans"][-1], s["plan_steps"]
assert v["answer"] == "fitted" and v["fitted"] is True, v
assert v["resident_peak_bytes"] == s["resident_peak_bytes"] <= v["budget_bytes"] == s["budget_bytes"], v
assert v["allocated_peak_bytes"] == s["peak_device_bytes"] > v["budget_bytes"], v
assert v["step_source"] == "plan estimate" and v["simulated_device"] is True, v
assert v["device_name"].startswith("simgpu"), v["device_name"]
assert abs(v["step_ms"] - p["predicted_us"] / 1e3) < 0.001 and abs(v["native_step_ms"] - p["native_us"] / 1e3) < 0.001, (v, p)
assert abs(v["slowdown"] - p["predicted_us"] / p["native_us"]) < 0.001, v
assert abs(v["bound_slowdown"] - p["bound_us"] / p["native_us"]) < 0.001, v
assert v["steady_steps"] == len(ps) and v["steady_from_step"] == ps[0]["step"], v
want = sum(r["bytes_to_host"] + r["bytes_to_device"] for r in ps) / len(ps)
assert abs(v["bytes_moved_per_step"] - want) <= 1, (v["bytes_moved_per_step"], want)
assert 0 <= v["stall_ms_per_step"] <= v["wall_ms_per_step"], v
assert v["warmup_steps"] + v["steady_steps"] == v["steps"] == s["iterations"], v
m = s["moves"]
assert m["started"] == m["to_host"] + m["to_device"] == sum(m["by_reason"].values()) > 0, m
assert m["by_reason"]["cancelled"] == 0 and m["by_outcome"]["cancelled"] == s["cancelled_evictions"], m
PY
}
check "summary --json: verdict first (fitted, resident peak <= budget < allocations' peak, the plan's step estimate and bound, the steady state per step of the plan's steps), the moves by reason and outcome (cancelled an outcome, not a reason)" summary_json

# A resident peak over the budget did not fit; a trace without one (format 1.1) is unknown.
TRACE_GEN_RESIDENT_PEAK=$((13 << 20)) "$GEN" synthetic "$work/over.trace"
TRACE_GEN_RESIDENT_PEAK=$((11 << 20)) "$GEN" synthetic "$work/under.trace"
answer_of() { "$REPORT" summary --json "$1" | python3 -c 'import json,sys; v=json.load(sys.stdin)["verdict"]; print(v["answer"], v["fitted"], v["resident_peak_bytes"])'; }
verdicts() {
    [ "$(answer_of "$work/over.trace")" = "did not fit False $((13 << 20))" ] &&
        [ "$(answer_of "$work/under.trace")" = "fitted True $((11 << 20))" ] &&
        [ "$(answer_of "$CORPUS/residency.trace")" = "unknown None None" ] &&
        "$REPORT" summary "$work/over.trace" | head -n 1 | grep -q '^verdict: did not fit: resident peak 13.0 MiB over the 12.0 MiB budget'
}
check "summary: 13 MiB resident under a 12 MiB budget did not fit, 11 MiB fitted, a format 1.1 trace (no resident peak) is unknown" verdicts

# Teardown says nothing alarming.
quiet_end() { ! grep -E 'withdrawn|pattern changed' "$work/auto.err"; }
check "train_sim's log: no 'plan withdrawn' or 'pattern changed' line at teardown" quiet_end

SHIM_LOG_LEVEL=info LD_PRELOAD="$PRELOAD" "$PHASE" 8 0 >"$work/steady.out" 2>"$work/steady.err"
SHIM_LOG_LEVEL=info LD_PRELOAD="$PRELOAD" "$PHASE" 8 6 >"$work/change.out" 2>"$work/change.err"
steady_quiet() {
    grep -q 'planner: plan applied' "$work/steady.err" &&
        ! grep -E 'withdrawn|pattern changed' "$work/steady.err" &&
        grep -q '^checksum=' "$work/steady.out"
}
check "phase_prog 8 0 (a steady run, then its teardown): a plan applied, and no withdrawal or change said" steady_quiet
real_change() {
    local at
    at=$(sed -n 's/^change_at=//p' "$work/change.out")
    [ -n "$at" ] &&
        [ "$(grep -c "info: training step pattern changed at launch $at\$" "$work/change.err")" = 1 ] &&
        [ "$(grep -c "info: planner: plan withdrawn (the training step changed at launch $at): moves are reactive again" "$work/change.err")" = 1 ] &&
        [ "$(grep -c 'pattern changed' "$work/change.err")" = 1 ] &&
        grep -q 'training step detected: 5 launches per step' "$work/change.err"
}
check "phase_prog 8 6 (the step really changes at launch 24): said once, with the plan's withdrawal, and the new step found" real_change

# Names: trace_gen synthetic's allocations, as its scenario makes them.
"$REPORT" allocs --json "$work/under.trace" >"$work/allocs.json"
"$REPORT" allocs "$work/under.trace" >"$work/allocs.txt"
"$REPORT" summary --json --top 50 "$work/under.trace" >"$work/under.json"
names_known() {
    python3 - "$work/allocs.json" <<'PY'
import json, sys
a = {x["alloc_id"]: x for x in json.load(open(sys.argv[1]))["allocations"]}
want = {1: ("weights/state", "4.0 MiB weights/state (gemm)"),
        2: ("pinned host", "1.0 MiB pinned host (no kernel used it)"),
        10: ("activation/temp", "2.0 MiB activation/temp (gemm .. relu)")}
for i, (role, name) in want.items():
    assert (a[i]["role"], a[i]["name"]) == (role, name), (i, a[i])
assert a[10]["first_kernel"] == "gemm" and a[10]["last_kernel"] == "relu", a[10]
PY
}
check "allocs --json: the weight is '4.0 MiB weights/state (gemm)', the pinned buffer and an activation named by role and first .. last kernel" names_known
names_text() {
    grep -qE '^ +10 .* 2\.0 MiB activation/temp \(gemm \.\. relu\)$' "$work/allocs.txt" &&
        head -n 1 "$work/allocs.txt" | grep -qE ' name$'
}
check "allocs (text): a name column, last" names_text
names_everywhere() {
    python3 - "$work/allocs.json" "$work/under.json" <<'PY'
import json, sys
a = {x["alloc_id"]: x["name"] for x in json.load(open(sys.argv[1]))["allocations"]}
top = json.load(open(sys.argv[2]))["top_allocations"]
assert top and all(t["name"] == a[t["alloc_id"]] for t in top), top
PY
}
check "summary --json: each top allocation has the name allocs gives it" names_everywhere
"$GEN" moves "$work/moves.trace"
"$REPORT" allocs --json "$work/moves.trace" >"$work/moves.allocs.json"
"$REPORT" moves --json "$work/moves.trace" >"$work/moves.json"
"$REPORT" moves "$work/moves.trace" >"$work/moves.txt"
moves_named() {
    python3 - "$work/moves.allocs.json" "$work/moves.json" "$work/moves.txt" <<'PY'
import json, sys
a = {x["alloc_id"]: x["name"] for x in json.load(open(sys.argv[1]))["allocations"]}
mv = json.load(open(sys.argv[2]))["moves"]
own = [m for m in mv if not m["slab"]]
assert own and all(m["name"] == a[m["unit_id"]] for m in own), own[:2]
assert all(m["name"] is None for m in mv if m["slab"]), "a slab has no one name"
text = open(sys.argv[3]).read().splitlines()
assert text[0].rstrip().endswith("name"), text[0]
assert all(any(l.endswith("  " + m["name"]) for l in text) for m in own)
PY
}
check "moves (text and --json): each move of an allocation carries its name, a slab's none" moves_named

# The exit line without a budget (record mode): no verdict on a budget, the steps native.
SHIM_MODE=record SHIM_LOG_LEVEL=info LD_PRELOAD="$PRELOAD" "$B/train_sim" "${ARGS[@]}" \
    >/dev/null 2>"$work/record.err"
record_line() {
    grep -qE "^libshim\[[0-9]+\]: info: exit: no budget: allocations peaked at [0-9.]+ MiB; step time unknown: no plan gave an estimate, and the simulated device's wall time is the simulator's own; [0-9.]+ ms of wall time per step \(the simulator's own, not the device's time\)$" "$work/record.err" &&
        grep -qE '^libshim\[[0-9]+\]: info: exit: 12 steps; nothing moved \(mode = record\)$' "$work/record.err"
}
check "record mode: the exit line says there is no budget, and that the simulated device's wall time is no step time" record_line
# A run that moved nothing under a budget fitted, at native speed.
SHIM_BUDGET=$((P * 2)) SHIM_LOG_LEVEL=info LD_PRELOAD="$PRELOAD" "$B/train_sim" "${ARGS[@]}" \
    >/dev/null 2>"$work/roomy.err"
roomy_line() {
    grep -qE "^libshim\[[0-9]+\]: info: exit: fitted: resident peak [0-9.]+ MiB within the [0-9.]+ MiB budget .*; step ([0-9.]+) ms against \1 ms native, 1\.00x, .*nothing moved\); steady state under the plan \([0-9]+ steps from step [0-9]+\): 0\.0 MiB moved and 0\.0 ms stalled per step" "$work/roomy.err" &&
        grep -qE '^libshim\[[0-9]+\]: info: exit: 12 steps; residency: 0 evictions' "$work/roomy.err"
}
check "a budget twice the peak: fitted, nothing moved, the step native (1.00x)" roomy_line
roomy_peak() {
    local r
    r=$(sed -n 's/.*info: exit: fitted: resident peak \([0-9.]*\) MiB .*/\1/p' "$work/roomy.err")
    python3 -c 'import sys; r, p = float(sys.argv[1]), int(sys.argv[2]) / 2**20; sys.exit(0 if p * 0.9 <= r <= p * 1.2 else 1)' "${r:-0}" "$P"
}
check "a budget twice the peak: the resident peak is about the native peak" roomy_peak
memviz_named() {
    "$REPORT" memviz -o "$work/under.pickle" "$work/under.trace" &&
        python3 - "$work/under.pickle" "$work/allocs.json" <<'PY'
import json, pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
a = json.load(open(sys.argv[2]))["allocations"]
names = [e["frames"][0]["name"] for e in d["device_traces"][0] if e["action"] == "alloc"]
assert names == [x["name"] for x in a if x["kind"] != "host" and x["bytes"] > 0], names[:3]
PY
}
check "memviz: each alloc entry's frame is the allocation's name" memviz_named
html_named() {
    "$REPORT" html -o "$work/under.html" "$work/under.trace" &&
        grep -q '<td[^>]*>2.0 MiB activation/temp (gemm .. relu)</td>' "$work/under.html"
}
check "html: the allocations table names them" html_named
[ "$fails" -eq 0 ]
