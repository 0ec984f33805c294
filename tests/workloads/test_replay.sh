#!/usr/bin/env bash
# test_replay.sh — replay runs iteration models (shim-plan --generate) as programs on the simulated
# device:
#   (a) the same model gives the same checksum on every run, with cudaMallocAsync or cudaMalloc,
#       on one stream or on the model's streams (also with random stream timing), and a step
#       takes the model's compute time (sum of durations, shim-plan's compute_us);
#   (b) with cudaMalloc the simulator's device peak is shim-plan's native peak of the model with
#       every size rounded as the simulated device rounds it (2 MiB from 2 MiB on, else 4 KiB
#       pages; tests/simgpu/simgpu_alloc.c); with cudaMallocAsync it is at least that (the pool
#       may hand a freed range up to twice the size, and frees land when the stream reaches them);
#   (c) a lost write (--lose STEP:OP, an op that writes nothing) changes the checksum; bad input
#       is a usage error naming what is wrong;
#   (d) under libshim at 75% and 50% of the native peak (SHIM_BUDGET, as tests/residency does),
#       with cudaMallocAsync and with cudaMalloc, and on three streams: the native checksum,
#       exit 0, no unmap hazard or illegal access in the simulator, the device peak within the
#       budget, and moves in the trace (shim-report moves --json);
#   (e) the model shim-report builds from a trace of train_sim replays at train_sim's step time,
#       and under libshim at 50% with the native result.
set -u
source "$(dirname "$0")/../shim/shim_env.sh"
source "$(dirname "$0")/replay_env.sh"
REPLAY="$B/replay" PLAN="$B/shim-plan" REPORT="$B/shim-report"
RUN_TIMEOUT=${REPLAY_RUN_TIMEOUT:-120}
scratch work

plan_field() { "$PLAN" "$1" --budget 100% --json | python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2"; }
tail_err() { tail -n 5 "$work/$1.err" | sed 's/^/    | /'; }

declare -A SPEC=(
    [transformer]="transformer:layers=4,hidden=4MiB,weights=8MiB"
    [random]="random:ops=300,allocs=200,maxbytes=6MiB,seed=3"
    [tiny]="random:ops=60,allocs=50,maxbytes=40,seed=9"
)
MODELS=(transformer random tiny edge)
# (a) 4 per model, edge on streams 1, two mallocs on streams 1 each, the stream rule's checker 2;
# (b) 2 per model; (c) 7; (d) native 1 and 5 shimmed runs of 4; (e) 2 and a shimmed run of 4.
plan $((${#MODELS[@]} * 4 + 1 + 2 + 2 + ${#MODELS[@]} * 2 + 7 + 1 + 5 * 4 + 2 + 4))
for m in transformer random tiny; do
    "$PLAN" --generate "${SPEC[$m]}" -o "$work/$m.model"
done
# Edge cases: zero-duration ops, untouched allocations (cyclic and not), one that exists before
# the step, one that outlives it, a 7-byte one touched by every op; on three streams.
cat >"$work/edge.model" <<'EOF'
hw 25 25 1 10
op 0
op 5 1
op 0 2
op 3 1
alloc 3MiB -1 -1
alloc 8192 -1 -1 0 3
alloc 5000 -1 1 1
alloc 1MiB 2 -1 2 3
alloc 100 1 2
alloc 7 0 3 0 1 2 3
EOF
# The transformer with its ops spread over three model streams (0, 1, 2).
awk '$1 == "op" { $3 = n++ % 3 } { print }' "$work/transformer.model" >"$work/streams.model"

# (a) determinism and the step's time
for m in "${MODELS[@]}"; do
    run "$m-a1" "$REPLAY" "$work/$m.model"
    run "$m-a2" "$REPLAY" "$work/$m.model"
    run "$m-sync" "$REPLAY" "$work/$m.model" --malloc sync
    c=$(sum "$m-a1")
    check "$m: exit 0 and a checksum (${c:-none})" [ "$(rc "$m-a1")" = 0 -a -n "$c" ]
    check "$m: the same checksum twice ($(sum "$m-a2"))" [ -n "$c" -a "$(sum "$m-a2")" = "$c" ]
    check "$m: the same checksum with cudaMalloc ($(sum "$m-sync"))" [ -n "$c" -a "$(sum "$m-sync")" = "$c" ]
    want=$(plan_field "$work/$m.model" compute_us) got=$(field "$m-sync" device_us_per_step)
    check "$m: virtual step time $got us = the model's compute time $want us (within 0.01%)" \
        python3 -c 'import sys; g, w = map(float, sys.argv[1:]); sys.exit(abs(g - w) > 1e-4 * w)' \
        "${got:-0}" "${want:-1}"
done
run edge-streams "$REPLAY" "$work/edge.model" --streams
check "edge: on its three streams, the one-stream checksum ($(sum edge-streams))" \
    [ "$(field edge-streams streams)" = 3 -a -n "$(sum edge-a1)" -a "$(sum edge-streams)" = "$(sum edge-a1)" ]
c=$(sum transformer-a1)
for malloc in async sync; do
    run "streams-$malloc" "$REPLAY" "$work/streams.model" --streams --malloc "$malloc"
    SIMGPU_JITTER=5 run "streams-jitter-$malloc" "$REPLAY" "$work/streams.model" --streams --malloc "$malloc"
    check "three streams, $malloc: $(field "streams-$malloc" streams) streams, the one-stream checksum ($(sum "streams-$malloc"), with SIMGPU_JITTER $(sum "streams-jitter-$malloc"))" \
        [ "$(field "streams-$malloc" streams)" = 3 -a "$(sum "streams-$malloc")" = "$c" \
        -a "$(sum "streams-jitter-$malloc")" = "$c" ]
done
# The stream rule on the random model spread over four streams: with the waits replay prints,
# every op comes after the previous op that touched the same allocation (vector clocks over the
# waits and stream order), and every wait is for such a previous toucher on another stream.
awk '$1 == "op" { $3 = n++ % 4 } { print }' "$work/random.model" >"$work/random4.model"
run random4 "$REPLAY" "$work/random4.model" --streams --waits --steps 1
checker "four streams: the stream rule's checker" 1 python3 - "$work/random4.model" "$work/random4.out" <<'PY'
import sys
ops, allocs, waits = [], [], {}
for line in open(sys.argv[1]):
    f = line.split("#")[0].split()
    if f and f[0] == "op":
        ops.append(int(f[2]) if len(f) > 2 else 0)
    elif f and f[0] == "alloc":
        allocs.append(sorted(set(map(int, f[4:]))))
for line in open(sys.argv[2]):
    if line.startswith("wait "):
        q, p = map(int, line.split()[1:])
        waits.setdefault(q, []).append(p)
by_op = {}
for a, ts in enumerate(allocs):
    for t in ts:
        by_op.setdefault(t, []).append(a)
# clock[q][s]: the latest op of stream s that op q is ordered after (its own stream: q).
prev, clock, last_on, bad, spurious = {}, {}, {}, 0, 0
for q, st in enumerate(ops):
    c = dict(clock[last_on[st]]) if st in last_on else {}
    for p in waits.get(q, []):
        for k, v in clock[p].items():
            c[k] = max(c.get(k, -1), v)
        if ops[p] == st or not any(prev.get(a) == p for a in by_op.get(q, [])):
            spurious += 1
    c[st] = q
    clock[q], last_on[st] = c, q
    for a in by_op.get(q, []):
        p = prev.get(a)
        if p is not None and c.get(ops[p], -1) < p:
            bad += 1
        prev[a] = q
n = sum(len(v) for v in waits.values())
print(("ok" if n and not bad and not spurious else "not ok") +
      f" - four streams: {n} waits order every touch after the previous one ({bad} unordered, {spurious} spurious)")
PY

# (b) the device peak against the planner's native peak
for m in "${MODELS[@]}"; do
    replay_rounded "$work/$m.model" "$work/$m.rounded"
    want=$(plan_field "$work/$m.rounded" native_peak_bytes)
    raw=$(plan_field "$work/$m.model" native_peak_bytes)
    got=$(stat "$m-sync" peak_device_bytes)
    check "$m, cudaMalloc: device peak $got = the planner's native peak of the rounded model $want (unrounded: $raw)" \
        [ -n "$got" -a "$got" = "$want" ]
    got=$(stat "$m-a1" peak_device_bytes)
    check "$m, cudaMallocAsync: device peak $got >= $want" all [ -n "$got" ] '&&' [ "$got" -ge "$want" ]
done

# (c) a lost write is seen; bad input is named
run lose-first "$REPLAY" "$work/transformer.model" --lose 0:0
run lose-last "$REPLAY" "$work/transformer.model" --lose 2:0
check "transformer: op 0 of step 0 writing nothing changes the checksum ($(sum lose-first) != $c)" \
    [ "$(rc lose-first)" = 0 -a -n "$(sum lose-first)" -a "$(sum lose-first)" != "$c" ]
check "transformer: op 0 of the last step writing nothing changes it ($(sum lose-last))" \
    [ -n "$(sum lose-last)" -a "$(sum lose-last)" != "$c" -a "$(sum lose-last)" != "$(sum lose-first)" ]
# In the random model: the first op that touches a cyclic allocation.
op=$(awk '$1 == "alloc" && $3 == -1 && $4 == -1 && NF > 4 { print $5; exit }' "$work/random.model")
run lose-random "$REPLAY" "$work/random.model" --lose "1:$op"
check "random: op $op (touches a cyclic allocation) of step 1 writing nothing changes the checksum" \
    [ -n "$(sum lose-random)" -a "$(sum lose-random)" != "$(sum random-a1)" ]
printf 'hw 25 25 1 10\nop 5\nalloc 4096 0 3 0\n' >"$work/bad.model"
run bad-model "$REPLAY" "$work/bad.model"
check "a model with a death past the last op: exit 2, its file:line named ($(head -c 120 "$work/bad-model.err"))" \
    all [ "$(rc bad-model)" = 2 ] '&&' grep -q "bad.model:3: error" "$work/bad-model.err"
run no-model "$REPLAY" "$work/absent.model"
check "a missing model file: exit 2, named" \
    all [ "$(rc no-model)" = 2 ] '&&' grep -q absent.model "$work/no-model.err"
run bad-lose "$REPLAY" "$work/transformer.model" --lose 0:37
check "--lose past the last op: exit 2, named ($(cat "$work/bad-lose.err"))" \
    all [ "$(rc bad-lose)" = 2 ] '&&' grep -q "the model has 37 ops" "$work/bad-lose.err"
run bad-flag "$REPLAY" "$work/transformer.model" --malloc sometimes
check "--malloc sometimes: usage error (exit 2)" \
    all [ "$(rc bad-flag)" = 2 ] '&&' grep -q "bad argument '--malloc sometimes'" "$work/bad-flag.err"

# (d) under libshim: 12 steps, so that the in-process plan applies in the last ones
STEPS=12
run native-12 "$REPLAY" "$work/transformer.model" --steps $STEPS --malloc sync
c=$(sum native-12) P=$(stat native-12 peak_device_bytes)
check "transformer, $STEPS steps natively: checksum ${c:-none}, peak ${P:-none}" [ -n "$c" -a -n "$P" ]
# shimmed NAME BUDGET ARGS...: replay under libshim with a trace, then the checks of (d).
shimmed() {
    local name=$1 budget=$2 bad=$failures
    shift 2
    SHIM_BUDGET=$budget SHIM_TRACE_PATH="$work/$name.trace" SHIM_LOG_LEVEL=info \
        run "$name" env LD_PRELOAD="$PRELOAD" "$REPLAY" "$@" --steps $STEPS
    local moves
    moves=$("$REPORT" moves --json "$work/$name.trace" 2>/dev/null |
        python3 -c 'import json, sys; print(len(json.load(sys.stdin)["moves"]))' 2>/dev/null)
    check "$name (budget $budget): exit $(rc "$name"), checksum $(sum "$name") = $c" \
        [ "$(rc "$name")" = 0 -a -n "$c" -a "$(sum "$name")" = "$c" ]
    check "$name: unmap_hazards $(stat "$name" unmap_hazards), illegal_accesses $(stat "$name" illegal_accesses)" \
        [ "$(stat "$name" unmap_hazards)" = 0 -a "$(stat "$name" illegal_accesses)" = 0 ]
    check "$name: device peak $(stat "$name" peak_device_bytes) <= $budget" \
        [ "$(stat "$name" peak_device_bytes)" -le "$budget" ]
    check "$name: moves in the trace: ${moves:-none}" [ "${moves:-0}" -gt 0 ]
    [ "$failures" -eq "$bad" ] || tail_err "$name"
}
for pct in 75 50; do
    for malloc in async sync; do
        shimmed "shim-$malloc-$pct" $((P * pct / 100)) "$work/transformer.model" --malloc "$malloc"
    done
done
SIMGPU_JITTER=3 shimmed shim-streams-50 $((P / 2)) "$work/streams.model" --streams --malloc async

# (e) a model built from a trace (shim-report model of train_sim recorded under libshim) replays:
# its step takes train_sim's step time (within 1%: train_sim also copies its tokens each step),
# and under libshim at 50% the result is the native one.
SHIM_MODE=record SHIM_TRACE_PATH="$work/train.trace" \
    run train env LD_PRELOAD="$PRELOAD" "$B/train_sim" --mode async --layers 2 --hidden 512 --batch 4 \
    --seq 256 --iters 6
"$REPORT" model "$work/train.trace" -o "$work/train.model" 2>"$work/train-model.err"
run train-replay "$REPLAY" "$work/train.model" --steps $STEPS --malloc sync
want=$(sed -n 's/^iter 5 device_us=\([0-9.]*\) .*/\1/p' "$work/train.out") got=$(field train-replay device_us_per_step)
check "model of a train_sim trace: replay's step $got us = train_sim's $want us (within 1%)" \
    python3 -c 'import sys; g, w = map(float, sys.argv[1:]); sys.exit(abs(g - w) > 0.01 * w)' \
    "${got:-0}" "${want:-1}"
c=$(sum train-replay) P=$(stat train-replay peak_device_bytes)
check "model of a train_sim trace: replay's checksum ${c:-none}, peak ${P:-none}" [ -n "$c" -a -n "$P" ]
shimmed shim-train-50 $((${P:-0} / 2)) "$work/train.model" --malloc async
[ "$failures" -eq 0 ]
