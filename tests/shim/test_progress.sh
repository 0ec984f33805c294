#!/usr/bin/env bash
# Progress a person sees without asking: train_sim under libshim with no log setting at all
# (the default level) logs, each on one line, exactly once: the training step detected (with
# train_sim's own launches per iteration), the plan applied (from the step the trace's first
# plan_step record names, with the predicted slowdown against the step's native time that the
# trace's plan record gives), and the exit summary in two lines (the verdict and its figures;
# then the steps and what residency moved, as shim_log cuts a line at 1024 bytes), whose steps,
# peak, moves, bytes each way and
# stall are what shim-report finds in the trace of the same run (summary: steps, peak, stall,
# budget; moves: evictions and restores completed, evictions cancelled, bytes of every move
# started in each direction). In record mode the exit line says nothing moved; log.level =
# "warn" silences all three.
set -u
source "$(dirname "$0")/shim_env.sh"
plan 22
scratch work
ARGS=(--mode exact --layers 2 --hidden 512 --batch 2 --seq 256 --vocab 1024 --iters 12)
SIMGPU_STATS="$work/native.json" "$B/train_sim" "${ARGS[@]}" >"$work/native.out"
P=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["peak_device_bytes"])' \
    "$work/native.json")
# shimmed NAME [VAR=VALUE...]: train_sim under the shim, no log setting unless given, a trace.
shimmed() {
    local name=$1
    shift
    env -u SHIM_LOG_LEVEL -u SHIM_LOG_FILE -u SHIM_CONFIG SHIM_TRACE_PATH="$work/$name.trace" \
        "$@" LD_PRELOAD="$PRELOAD" "$B/train_sim" "${ARGS[@]}" >"$work/$name.out" 2>"$work/$name.err"
}
shimmed auto SHIM_BUDGET=$((P * 60 / 100))
check "auto at 60% of the native peak: exit 0, native checksum" \
    [ $? -eq 0 -a "$(tail -1 "$work/auto.out")" = "$(tail -1 "$work/native.out")" ]
sed 's/^/    | /' "$work/auto.err"
check "every line of the log is one libshim line" \
    bash -c "[ -s '$work/auto.err' ] && ! grep -qv '^libshim\[[0-9]*\]: [a-z]*: ' '$work/auto.err'"
"$B/shim-report" summary --json "$work/auto.trace" >"$work/auto.json"
"$B/shim-report" moves --json "$work/auto.trace" >"$work/auto.moves.json"
python3 - "$work/auto.err" "$work/auto.json" "$work/native.out" "$work/auto.moves.json" <<'PY'
import json, re, sys
log, summary = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
moves = json.load(open(sys.argv[4]))["moves"]
count = lambda event, outcome: sum(m["event"] == event and m["outcome"] == outcome for m in moves)
started = lambda event: sum(m["bytes"] for m in moves if m["event"] == event)
native = [dict(re.findall(r"(\w+)=(\S+)", l)) for l in open(sys.argv[3]) if l.startswith("iter ")]
bad = 0
def check(name, ok):
    global bad
    print(("ok" if ok else "not ok") + " - " + name)
    bad += not ok
def lines(pattern):
    return re.findall(r"^libshim\[\d+\]: info: " + pattern, log, re.M)

det = lines(r"training step detected: (\d+) launches per step \((\d+) segments?.*\), "
            r"step (\d+) begins at launch (\d+); kernels are timed for (\d+) steps?$")
check(f"one 'training step detected' line at info ({len(det)})", len(det) == 1)
if det:
    check(f"  ... {det[0][0]} launches per step, as train_sim counts ({native[-1]['launches']})",
          int(det[0][0]) == int(native[-1]["launches"]))
    check(f"  ... kernels timed for 3 steps, profile.iterations' default ({det[0][4]})",
          det[0][4] == "3")

app = lines(r"planner: plan applied from step (\d+): predicted (\S+ \S+) per step against "
            r"(\S+ \S+) native \(([+-]\d+\.\d)%, at least ([+-]\d+\.\d)% for any plan\), "
            r"(\S+ \S+) stalled, budget (\d+) MiB, peak (\d+) MiB.*, (\d+) evictions and (\d+) "
            r"prefetches per step; link .* GB/s to the device (measured|assumed), .*$")
check(f"one 'plan applied' line at info ({len(app)})", len(app) == 1)
plans, steps = summary.get("plans", []), summary.get("plan_steps", [])
if app and plans and steps:
    a, p = app[0], plans[0]
    check(f"  ... from step {a[0]}, the trace's first step under the plan ({steps[0]['step']})",
          int(a[0]) == steps[0]["step"])
    want = 100 * (p["predicted_us"] / p["native_us"] - 1)
    check(f"  ... slowdown {a[3]}% = predicted / native - 1 of the trace's plan record ({want:.1f}%)",
          abs(float(a[3]) - want) <= 0.05 + 1e-9)
    floor = 100 * (p["bound_us"] / p["native_us"] - 1)
    check(f"  ... at least {a[4]}%: the plan's lower bound ({floor:.1f}%)",
          abs(float(a[4]) - floor) <= 0.05 + 1e-9)
    check(f"  ... budget {a[6]} MiB, {a[8]} evictions and {a[9]} prefetches per step, as recorded",
          int(a[6]) == p["budget_bytes"] >> 20 and int(a[8]) == p["evictions"]
          and int(a[9]) == p["prefetches"])
else:
    check("  ... the trace has the plan and the steps under it", False)

# Two exit lines: the verdict and its figures, then the steps and what residency moved.
head = lines(r"exit: fitted: resident peak \d+\.\d MiB within the \d+\.\d MiB budget \(allocations "
             r"peaked at (\d+\.\d) MiB, evicted ones counted\); step [^;]*; steady state under "
             r"the plan [^;]* per step[^;]*; warm-up apart [^;]*$")
ex = lines(r"exit: (\d+) steps?; "
           r"residency: (\d+) evictions \((\d+) cancelled\), (\d+) restores, (\d+) errors, (\d+\.\d) MiB to host, "
           r"(\d+\.\d) MiB to device, (\d+\.\d) ms stalled, budget (\d+) MiB; moves: [^;]*; [^;]*; plan: (\d+) planned "
           r"evictions and (\d+) prefetches.*$")
check(f"one exit line of each at info ({len(head)}, {len(ex)})", len(head) == 1 and len(ex) == 1)
if head and ex:
    s = summary
    e = (ex[0][0], head[0]) + ex[0][1:]  # steps first, then the allocations' peak
    mib = lambda b: f"{b / 2**20:.1f}"
    check(f"  ... {e[0]} steps, as the trace's ({s['iterations']})", int(e[0]) == s["iterations"])
    check(f"  ... peak {e[1]} MiB, the trace's peak_device_bytes ({mib(s['peak_device_bytes'])})",
          e[1] == mib(s["peak_device_bytes"]))
    done = (count("evict", "done"), count("evict", "cancelled"), count("restore", "done"))
    check(f"  ... {e[2]} evictions ({e[3]} cancelled) and {e[4]} restores, as the trace's moves "
          f"{done}", (int(e[2]), int(e[3]), int(e[4])) == done)
    check(f"  ... {e[5]} errors, as the trace's moves ({sum(m['outcome'] == 'error' for m in moves)})",
          int(e[5]) == sum(m["outcome"] == "error" for m in moves))
    check(f"  ... {e[6]} MiB to host and {e[7]} MiB to device, the moves started "
          f"({mib(started('evict'))}, {mib(started('restore'))})",
          (e[6], e[7]) == (mib(started("evict")), mib(started("restore"))))
    check(f"  ... {e[8]} ms stalled, as the trace's ({s['stall_us'] / 1e3:.1f})",
          abs(float(e[8]) - s["stall_us"] / 1e3) <= 0.051)
    check(f"  ... budget {e[9]} MiB, as the trace's ({s['budget_bytes'] >> 20})",
          int(e[9]) == s["budget_bytes"] >> 20)
    check(f"  ... the plan made moves: {e[10]} planned evictions, {e[11]} prefetches",
          int(e[10]) > 0 and int(e[11]) > 0)
sys.exit(1 if bad else 0)
PY
check "the progress lines agree with the trace" [ $? -eq 0 ]

shimmed record SHIM_MODE=record
check "record mode: the step line, no plan line, and an exit line that says nothing moved" \
    bash -c "[ \$(grep -c 'info: training step detected: ' '$work/record.err') -eq 1 ] &&
             ! grep -q 'plan applied' '$work/record.err' &&
             [ \$(grep -c \"info: exit: no budget: allocations peaked at [0-9.]* MiB; step time unknown: no plan gave an estimate, and the simulated device's wall time is the simulator's own; \" '$work/record.err') -eq 1 ] &&
             [ \$(grep -c 'info: exit: 12 steps; nothing moved (mode = record)$' '$work/record.err') -eq 1 ]"
shimmed warn SHIM_BUDGET=$((P * 60 / 100)) SHIM_LOG_LEVEL=warn
check "log.level = \"warn\": none of them" \
    bash -c "! grep -qE 'training step detected|plan applied|info: exit' '$work/warn.err'"
[ "$failures" -eq 0 ]
