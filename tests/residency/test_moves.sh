#!/usr/bin/env bash
# Every move explained: train_sim in the demo's allocation mode (PyTorch-style segments) and in
# per-tensor mode with small tensors (slabs), and threads_sim (evictions cancelled by touches),
# each under a budget with a trace; `shim-report moves --json` must give every move a known
# reason and outcome, budget evictions a victim score, and agree with `shim-report summary`
# (evictions and restores that completed) and with the shim's own exit line.
set -u
source "$(dirname "$0")/resid_env.sh"
REPORT="$B/shim-report"

# traced NAME PROGRAM ARGS...: PROGRAM under the shim with a trace at $work/NAME.trace.
traced() {
    local name=$1
    shift
    rm -f "$work/$name.trace"
    SHIM_TRACE_PATH="$work/$name.trace" SHIM_LOG_LEVEL=info SIMGPU_STATS="$work/$name.json" \
        LD_PRELOAD="$PRELOAD" timeout -k 5 "$RUN_TIMEOUT" "$@" >"$work/$name.out" \
        2>"$work/$name.err"
    echo $? >"$work/$name.rc"
}

# explained NAME: the checks on NAME's trace, one line "ok - NAME: ..." / "not ok - NAME: ..."
# each (EXPLAINED of them); exits non-zero when shim-report or the checker fails.
EXPLAINED=5
explained() {
    "$REPORT" moves --json "$work/$1.trace" >"$work/$1.moves.json" 2>"$work/$1.moves.err" &&
        "$REPORT" summary --json "$work/$1.trace" >"$work/$1.summary.json" || {
        echo "shim-report failed: $(cat "$work/$1.moves.err")" >&2
        return 1
    }
    python3 - "$work/$1" "$1" <<'PY'
import json, re, sys
base, name = sys.argv[1], sys.argv[2]
m = json.load(open(base + ".moves.json"))
s = json.load(open(base + ".summary.json"))
err = open(base + ".err").read()
moves = m["moves"]
def say(ok, what):
    print(f"{'ok' if ok else 'not ok'} - {name}: {what}")
reasons = {"budget", "demand", "prefetch", "planned", "error", "cancelled"}
outcomes = {"done", "cancelled", "error", "freed"}
bad = [x for x in moves if x["reason"] not in reasons or x["outcome"] not in outcomes]
say(moves and not bad, f"{len(moves)} moves, each with a known reason and outcome"
    + (f" (not: {bad[:1]})" if bad else ""))
budget = [x for x in moves if x["reason"] == "budget"]
say(budget and all(isinstance(x["score"], int) for x in budget),
    f"{len(budget)} budget evictions, each with its victim score")
done_ev = sum(1 for x in moves if x["direction"] == "to host" and x["outcome"] == "done")
done_re = sum(1 for x in moves if x["direction"] == "to device" and x["outcome"] == "done")
say((done_ev, done_re) == (s["evictions"], s["restores"]),
    f"completed moves {done_ev} to host, {done_re} to device = summary's "
    f"{s['evictions']} evictions, {s['restores']} restores")
line = re.findall(r"residency: (\d+) evictions \((\d+) cancelled\), (\d+) restores", err)
cancelled = sum(1 for x in moves if x["outcome"] == "cancelled")
want = tuple(int(v) for v in line[-1]) if line else None
say(want == (done_ev, cancelled, done_re),
    f"(evictions, cancelled, restores) {(done_ev, cancelled, done_re)} = the exit line's {want}")
say(m["totals"]["by_outcome"]["unfinished"] == 0, "no move left unfinished")
PY
}

run_case() {
    local name=$1
    shift
    traced "$name" "$@"
    check "$name: exit 0 (got $(rc "$name"))" [ "$(rc "$name")" = 0 ]
    checker "$name: the moves checker" "$EXPLAINED" explained "$name"
    echo "# $name: $(tail -n 1 < <("$REPORT" moves "$work/$name.trace"))"
}

# Three runs: exit 0, the checker's items and the checker's own check each.
plan $((3 * (1 + EXPLAINED + 1) + SAN_CHECKS))
native seg --mode segments --layers 2 --hidden 512 --batch 4 --seq 512 --iters 3
run_case segments env SHIM_BUDGET=$(($(figure seg peak_device_bytes) / 2)) "$TRAIN" \
    --mode segments --layers 2 --hidden 512 --batch 4 --seq 512 --iters 3
native small --mode async --layers 2 --hidden 256 --batch 2 --seq 128 --vocab 1024 --iters 3
run_case small-tensors env SHIM_BUDGET=$(($(figure small peak_device_bytes) / 2)) "$TRAIN" \
    --mode async --layers 2 --hidden 256 --batch 2 --seq 128 --vocab 1024 --iters 3
run_case threads env SHIM_BUDGET=24MiB SHIM_MIN_MANAGED_BYTES=16KiB SIMGPU_JITTER=3 \
    "$B/threads_sim" --threads 16 --launches 100
check_sanitizers
[ "$failures" -eq 0 ]
