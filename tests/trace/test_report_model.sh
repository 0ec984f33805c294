#!/usr/bin/env bash
# tests/trace/test_report_model.sh — shim-report model and plan on traces that libshim wrote in
# record mode for train_sim on the simulated device: the model's native peak against the
# device's measured peak in each allocation mode, the model read back by shim-plan, the planned
# step at 100%, 75% and 50% of the peak against its lower bound, the memory-time curve, and the
# errors (truncated trace, no step, no kernel times, a step out of range, bad options).
# Prints "ok - NAME" / "not ok - NAME" lines (tests/run_tests.sh counts them).
set -u
source "$(dirname "$0")/../shim/shim_env.sh"
source "$root/tests/trace/report_checks.sh"
plan 62
PLAN="$B/shim-plan"
# 2 layers, 6 iterations: the detector marks steps 0..5; steps 2, 3, 4 are profiled (kernel
# times), so the model's default step is 4.
ARGS=(--layers 2 --hidden 512 --batch 4 --seq 512 --iters 6)

# same A B: both set and equal.
same() { [ -n "$1" ] && [ "$1" = "$2" ]; }
# figure FILE KEY: a number from a SIMGPU_STATS file (empty when missing).
figure() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2" 2>/dev/null; }
# json FILE PYTHON-EXPRESSION over d: true when the expression is.
json() { python3 -c "import json,math,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }
# value FILE KEY: "KEY: VALUE" line of a text output.
value() { sed -n "s/^$2: //p" "$1" | head -n 1; }
# record NAME ARGS...: train_sim under libshim in record mode, trace $work/NAME.trace.
record() {
    local name=$1
    shift
    rm -f "$work/$name.trace"
    SHIM_MODE=record SHIM_TRACE_PATH="$work/$name.trace" SIMGPU_STATS="$work/$name.json" \
        LD_PRELOAD="$PRELOAD" "$TRAIN" "$@" >"$work/$name.out" 2>"$work/$name.err"
}

# ---- the model's native peak is the device's peak ----
# exact: one cudaMalloc per tensor, rounded by the simulated device (4 KiB below 2 MiB, 2 MiB
# from there); segments: 2 MiB and 20 MiB cudaMalloc'd segments, all made in step 0 and cached,
# so every one is cyclic from step 1 on. Both match the device to the byte.
# async: the model follows stream order (a tensor freed with cudaFreeAsync dies with the launch
# before the free), as the shim's managed allocations do. The simulated device's pool instead
# holds a range freed with cuMemFreeAsync until its stream has run the free
# (tests/simgpu/simgpu_alloc.c), and train_sim's host enqueues a whole step before the stream
# catches up: every range the step frees stays held until the step's end unless an allocation of
# the stream takes it again. The two 1 MiB Wo gradients find no freed range of a fitting size and
# come fresh while the layer's freed activations are still held, so the device peaks 2 MiB above
# the model. The trace says when the host freed, not when the stream ran the free: no rule on the
# trace can know how far behind the stream was. So for async the model's peak is that of the
# same tensors in exact mode, and at most the device's.
for mode in exact segments async; do
    SIMGPU_STATS="$work/native-$mode.json" "$TRAIN" --mode "$mode" "${ARGS[@]}" >"$work/native-$mode.out"
    native=$(figure "$work/native-$mode.json" peak_device_bytes)
    record "$mode" --mode "$mode" "${ARGS[@]}"
    recorded=$(figure "$work/$mode.json" peak_device_bytes)
    check "$mode: native and recorded runs measure the same device peak ($native, $recorded)" \
        same "$native" "$recorded"
    same "$native" "$recorded" || continue
    "$REPORT" model "$work/$mode.trace" -o "$work/$mode.model" 2>"$work/$mode.model.err"
    rc=$?
    check "$mode: shim-report model exits 0 (got $rc) and says nothing (every launch timed)" \
        [ $rc -eq 0 -a ! -s "$work/$mode.model.err" ]
    check "$mode: the model is of step 4, launches 131..156" \
        grep -qx '# step 4 of steps 0..5: launches 131..156' "$work/$mode.model"
    check "$mode: 26 operations, all timed" \
        grep -qx '# 26 operations: 26 timed, 0 filled (0 not recorded)' "$work/$mode.model"
    check "$mode: 26 op lines" [ "$(grep -c '^op ' "$work/$mode.model")" = 26 ]
    "$PLAN" "$work/$mode.model" --budget 100% >"$work/$mode.plan"
    check "$mode: shim-plan reads the model back" [ $? -eq 0 ]
    peak=$(value "$work/$mode.plan" native_peak_bytes)
    echo "# $mode: device peak $native, model native peak $peak"
    eval "peak_$mode=$peak native_$mode=$native"
done
check "exact: the model's native peak $peak_exact is the device's $native_exact" \
    [ "$peak_exact" = "$native_exact" ]
check "segments: the model's native peak $peak_segments is the device's $native_segments" \
    [ "$peak_segments" = "$native_segments" ]
check "async: the model's native peak $peak_async is that of the same tensors (exact: $peak_exact)" \
    [ "$peak_async" = "$peak_exact" ]
check "async: ... and at most the device's $native_async" [ "$peak_async" -le "$native_async" ]
# 2 layers x 12 weight and Adam tensors, the embedding and its 2 Adam tensors, tokens, loss and
# checksum buffers: 30 cyclic; segments: 18 segments, every one cyclic
# train_sim ends each step reading the loss (4 bytes) and uploads the next batch's tokens
# (batch x seq 32-bit ids): both after the step's last launch, in that order.
check "exact: the model holds the step's own copies: the loss read, then the token upload" \
    [ "$(grep '^copy ' "$work/exact.model" | tr '\n' ,)" = "copy 25 d2h 4,copy 25 h2d $((4 * 512 * 4)),"  ]
check "exact: 61 allocations, 30 cyclic" grep -q '^# 61 allocations: 30 cyclic;' "$work/exact.model"
check "segments: 18 allocations, 18 cyclic" grep -q '^# 18 allocations: 18 cyclic;' "$work/segments.model"
check "exact: a 4 MiB weight (W1, W2; Wqkv rounded up) is cyclic, touched in forward, backward, adam" \
    grep -qE '^alloc 4194304 -1 -1( [0-9]+){3}$' "$work/exact.model"

# ---- plan on the exact trace ----
T="$work/exact.trace"
device_us=$(sed -n 's/.*device_us_per_iter=\([0-9.]*\).*/\1/p' "$work/native-exact.out")
for pct in 100 75 50; do
    "$REPORT" plan "$T" --budget "$pct%" --json >"$work/plan$pct.json"
    check "plan --budget $pct%: exit 0" [ $? -eq 0 ]
    check "plan --budget $pct%: finite figures, step_us >= native_step_us + lower_bound_us, peak within the budget" \
        json "$work/plan$pct.json" "d['feasible'] and d['peak_bytes'] <= d['budget_bytes'] \
        and d['budget_bytes'] == d['native_peak_bytes'] * $pct // 100 \
        and d['lower_bound_us'] is not None and math.isfinite(d['step_us']) \
        and d['step_us'] >= d['native_step_us'] + d['lower_bound_us'] - 1e-3 \
        and abs(d['stall_us'] - (d['step_us'] - d['native_step_us'])) < 1e-2"
done
check "plan 100%: nothing moves, no stall, the step as measured by train_sim ($device_us us, within 1%)" \
    json "$work/plan100.json" "d['stall_us'] == 0 and d['bytes_to_host'] == 0 \
    and d['bytes_to_device'] == 0 and d['entries'] == 0 and abs(d['step_us'] - $device_us) < 0.01 * $device_us"
check "plan 75% and 50%: bytes move, the bound grows as the budget shrinks" \
    python3 -c "import json; a=json.load(open('$work/plan75.json')); b=json.load(open('$work/plan50.json')); \
    import sys; sys.exit(0 if a['bytes_to_host'] > 0 and b['bytes_to_host'] >= a['bytes_to_host'] \
    and b['lower_bound_us'] >= a['lower_bound_us'] > 0 else 1)"
"$REPORT" plan "$T" --budget 75% --planner reactive >"$work/reactive.txt"
check "plan --planner reactive (text): planner, feasible, a stall no lower than the bound" \
    python3 -c "import sys; d=dict(l.split(': ', 1) for l in open('$work/reactive.txt') if ': ' in l); \
    sys.exit(0 if d['planner'].strip() == 'reactive' and d['feasible'].strip() == 'yes' \
    and float(d['stall_us']) >= float(d['lower_bound_us']) else 1)"
"$REPORT" plan "$T" --proposals 4 --json >"$work/props.json"
check "plan --proposals 4: from the native peak down to the floor, each above its bound" \
    json "$work/props.json" "len(d['proposals']) == 4 and 'budget_bytes' not in d \
    and d['proposals'][0]['budget_bytes'] == d['native_peak_bytes'] \
    and d['proposals'][-1]['budget_bytes'] == d['floor_bytes'] \
    and all(p['step_us'] >= d['native_step_us'] + p['lower_bound_us'] - 1e-3 for p in d['proposals'])"
"$REPORT" plan "$T" --budget 50% --h2d 50 --d2h 50 --duplex 0 --remap 0 --json >"$work/link.json"
check "plan: link figures from the command line are used" \
    json "$work/link.json" "d['h2d_gbps'] == 50 and d['d2h_gbps'] == 50 and d['duplex'] == 0 \
    and d['remap_us'] == 0"
"$REPORT" model "$T" --step 2 >"$work/step2.model"
check "model --step 2: launches 79..104" grep -qx '# step 2 of steps 0..5: launches 79..104' "$work/step2.model"
check "model --step 2: the same step shape as step 4" \
    diff <(grep -v '^#\|^idle ' "$work/step2.model") <(grep -v '^#\|^idle ' "$work/exact.model")

# ---- errors: a message, the right exit status, never a crash ----
check "model --step 5: no kernel time (the last step is not profiled)" \
    fails_with 1 "step 5 (launches 157..182) has no kernel time" "$REPORT" model "$T" --step 5
check "model --step 9: out of range" \
    fails_with 1 "no step 9: the steps recorded are 0..5" "$REPORT" model "$T" --step 9
check "plan --step 9: out of range" \
    fails_with 1 "no step 9: the steps recorded are 0..5" "$REPORT" plan "$T" --budget 50% --step 9
check "model --step -1: usage" fails_with 2 "--step takes a step number" "$REPORT" model "$T" --step -1
check "plan: bad budget" fails_with 2 'bad --budget: invalid size "12 parsecs"' "$REPORT" plan "$T" --budget "12 parsecs"
check "plan: budget above 100%" fails_with 2 'bad --budget: invalid budget "150%"' "$REPORT" plan "$T" --budget 150%
check "plan: budget 0%" fails_with 2 'bad --budget: invalid budget "0%"' "$REPORT" plan "$T" --budget 0%
check "plan: budget auto" fails_with 2 'bad --budget: invalid budget "auto"' "$REPORT" plan "$T" --budget auto
check "plan: no budget" fails_with 2 "--budget or --proposals is required" "$REPORT" plan "$T"
check "plan: unknown planner" fails_with 2 "unknown planner 'magic'" "$REPORT" plan "$T" --budget 1GiB --planner magic
check "plan: exact planner on a model too large for it" \
    fails_with 1 "step 4 is too large for the exact planner" "$REPORT" plan "$T" --budget 50% --planner exact
check "model: unknown option" fails_with 2 "unknown option '--budget'" "$REPORT" model "$T" --budget 1GiB
check "model: two traces" fails_with 2 "unexpected argument" "$REPORT" model "$T" "$T"
check "model: a missing trace" fails_with 1 "$work/none.trace" "$REPORT" model "$work/none.trace"
check "model: an output that cannot be written" \
    fails_with 1 "cannot write $work/no/such/dir/m" "$REPORT" model "$T" -o "$work/no/such/dir/m"

# A trace cut after its first 4 KiB: read up to its last whole chunk, which holds no step.
head -c 4096 "$T" >"$work/cut.trace"
check "model: a truncated trace without a step says both" \
    fails_with 1 "no training step was detected" "$REPORT" model "$work/cut.trace"
check "... and that it is truncated" grep -q "truncated" "$work/fail.err"
# A trace written in many chunks (flushed every millisecond), its last chunk cut short: the steps
# marked before it are whole, so a model is built; the note says the trace is truncated.
SHIM_TRACE_FLUSH_INTERVAL=1ms record chunks --mode exact "${ARGS[@]}"
size=$(stat -c %s "$work/chunks.trace")
head -c $((size - 100)) "$work/chunks.trace" >"$work/cut-end.trace"
"$REPORT" model "$work/cut-end.trace" >"$work/cut-end.model" 2>"$work/cut-end.err"
rc=$?
check "model: a trace that lost its last chunk still gives the model of a whole step (exit $rc)" \
    [ $rc -eq 0 -a "$(grep -c '^op ' "$work/cut-end.model")" = 26 ]
check "... and says the trace is truncated" \
    grep -q 'truncated at byte' "$work/cut-end.err"
check "... in the model's comments too" grep -q '^# shim-report model: .* (truncated)$' "$work/cut-end.model"
head -c 10 "$T" >"$work/cut10.trace"
check "plan: a trace cut inside its preamble" fails_with 1 "cut10.trace" "$REPORT" plan "$work/cut10.trace" --budget 50%
# One iteration: no repeating step to detect.
record one --mode exact --layers 1 --hidden 64 --batch 2 --seq 64 --iters 1
check "model: a run without a detected step" \
    fails_with 1 "no training step was detected (no step marks)" "$REPORT" model "$work/one.trace"
# Two iterations: the detector marks steps 0 and 1 when the second ends; the steps it would
# profile never come, so no step has a kernel time.
record untimed --mode exact "${ARGS[@]:0:8}" --iters 2
check "plan: a trace whose steps have no kernel time" \
    fails_with 1 "step 1 (launches 53..78) has no kernel time" "$REPORT" plan "$work/untimed.trace" --budget 50%

[ "$failures" -eq 0 ]
