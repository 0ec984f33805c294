#!/usr/bin/env bash
# tests/import/test_import_et_alone.sh — execution traces without their Kineto trace, and in
# either layout (tools/import/IMPORT.md): the Chakra layout (fields in `attrs`, `ctrl_deps`,
# operands as {values, ...}) makes the same model as the older one; an ET alone makes the memory
# model the joined import makes (same native peak and floor) with times labelled as estimated;
# steps come from ProfilerStep annotations; a model without memory gets no what-if; an
# infeasible budget says what the job needs instead of a step time.
set -u
source "$(dirname "$0")/import_env.sh"

# ---- hand-made: no memory in the trace, and an infeasible budget (no ../shared needed).
cat >"$tmp/nomem.json" <<'JSON'
{"traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 100, "pid": 1, "tid": 1},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 10, "dur": 2, "pid": 1, "tid": 1, "args": {"correlation": 1}},
 {"ph": "X", "cat": "kernel", "name": "k", "ts": 20, "dur": 30, "pid": 0, "tid": 7, "args": {"correlation": 1, "stream": 7, "device": 0}}
]}
JSON
"$shimplan" --import kineto "$tmp/nomem.json" --budget 75% >"$tmp/nomem.out" 2>"$tmp/nomem.err"
nomem_rc=$?
nomem_refused() { [ "$nomem_rc" -eq 1 ] && [ ! -s "$tmp/nomem.out" ] &&
    grep -q "no memory information" "$tmp/nomem.err" && grep -q "profile_memory=True" "$tmp/nomem.err"; }
infeasible() { # FILE: an answer line that says the least it needs; no step time
    grep -q '^answer: cannot fit in .*: the least this job can run in is [0-9.]* GiB' "$1" &&
        grep -qx 'feasible: no' "$1" && ! grep -q '^step_us:' "$1"
}
cat >"$tmp/small.model" <<'M'
hw 25 25 1 10
op 100
op 100
alloc 1000 0 1 0 1
alloc 1000 0 0 0
M
"$shimplan" "$tmp/small.model" --budget 1500B >"$tmp/small.out" 2>&1
"$shimplan" "$tmp/small.model" --budget 1500B --json >"$tmp/small.json" 2>&1
json_nulls() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1]));
sys.exit(0 if not j["feasible"] and j["step_us"] is None and j["stall_us"] is None else 1)' "$1"; }
"$shimplan" "$tmp/small.model" --budget 100% >"$tmp/fits.out" 2>&1
fits() { grep -q '^answer: fits in .* at 1.00x native' "$1" && grep -q '^step_us: 200.000' "$1"; }

n_shared=0
[ -d "$traces" ] && n_shared=13
plan $((5 + n_shared))
check "a Kineto trace without memory events: no what-if, exit 1, names what to record" nomem_refused
check "infeasible budget: 'cannot fit', the least it needs, no step time" infeasible "$tmp/small.out"
check "infeasible budget (JSON): step_us and stall_us are null" json_nulls "$tmp/small.json"
check "a feasible budget: the answer line first, then the figures" fits "$tmp/fits.out"
check "the answer line is the first line" test "$(head -1 "$tmp/fits.out" | cut -c1-7)" = "answer:"

if [ "$n_shared" -eq 0 ]; then
    echo "# $traces is absent: the real execution traces' checks are not run"
    exit 0
fi

# ---- the Chakra layout: the same nodes rewritten (reversed) make the same model.
python3 "$here/et_layout.py" "$traces/linear.et.json.gz" "$tmp/linear.chakra.json" >/dev/null
"$shimplan" --import et "$traces/linear.et.json.gz" -o "$tmp/old.model" 2>/dev/null
"$shimplan" --import et "$tmp/linear.chakra.json" -o "$tmp/chakra.model" 2>"$tmp/chakra.err"
same_model() { [ -s "$tmp/old.model" ] && cmp "$tmp/old.model" "$tmp/chakra.model"; }
check "linear in the Chakra layout makes the model of the older layout" same_model

# ---- an ET alone: the joined import's memory model, times labelled.
alone_vs_joined() { # NAME: the joined import's native peak; a floor no lower than its
    # (the ET alone misses no operator; the join leaves some kernels without one, and those
    # touch nothing: linear's optimizer, whose _foreach_add_ touches every weight)
    local et=$traces/$1.et.json.gz kt=$traces/$1.kineto.json.gz
    "$shimplan" --import et "$et" --budget 100% >"$tmp/$1.alone" 2>/dev/null || return 1
    "$shimplan" --import et "$et" --kineto "$kt" --budget 100% >"$tmp/$1.joined" 2>/dev/null || return 1
    local a b
    a=$(field native_peak_bytes "$tmp/$1.alone") b=$(field native_peak_bytes "$tmp/$1.joined")
    echo "peak alone $a joined $b"
    [ -n "$a" ] && [ "$a" = "$b" ] || return 1
    a=$(field floor_bytes "$tmp/$1.alone") b=$(field floor_bytes "$tmp/$1.joined")
    echo "floor alone $a joined $b"
    [ -n "$a" ] && [ -n "$b" ] && [ "$a" -ge "$b" ]
}
for t in linear dlrm-rank0 dlrm-rank3; do
    check "$t: the ET alone gives the joined import's native peak, a floor no lower" \
        alone_vs_joined "$t"
done
reckoned() { # ET MODEL MAP [STEP]: et_peak.py's peak, allocations, operations = the model's
    local want got
    want=$(python3 "$here/et_peak.py" "$1" "$3" ${4:+"$4"}) || return 1
    "$shimplan" "$2" --budget 100% --planner none >"$2.out" 2>/dev/null || return 1
    got="$(field native_peak_bytes "$2.out") $(grep -c '^alloc ' "$2") $(grep -c '^op ' "$2")"
    echo "et_peak.py: $want; model: $got"
    [ "$want" = "$got" ]
}
"$shimplan" --import et "$traces/linear.et.json.gz" -o "$tmp/la.model" --join-map "$tmp/la.map" 2>/dev/null
check "linear alone: peak, allocations and operations as et_peak.py reckons them" \
    reckoned "$traces/linear.et.json.gz" "$tmp/la.model" "$tmp/la.map"
check "an ET alone says its times are estimated" \
    grep -q '^times: not in an execution trace' "$tmp/linear.alone"
check "a joined import says its times are measured" grep -q '^times: measured' "$tmp/linear.joined"

# ---- resnet (Chakra layout, three ProfilerSteps, no Kineto trace).
resnet=$traces/resnet-1gpu.et.json.gz
"$shimplan" --import et "$resnet" -o "$tmp/r.model" --join-map "$tmp/r.map" 2>"$tmp/r.err"
check "resnet-1gpu imports (Chakra layout, no Kineto trace)" test "$(grep -c '^alloc ' "$tmp/r.model")" -gt 100
check "resnet-1gpu: the default step is the last, ProfilerStep#6" grep -q 'ProfilerStep#6 ' "$tmp/r.err"
check "resnet-1gpu (Chakra): peak, allocations and operations as et_peak.py reckons them" \
    reckoned "$resnet" "$tmp/r.model" "$tmp/r.map" "ProfilerStep#6"
"$shimplan" --import et "$resnet" --step 4 -o "$tmp/r4.model" 2>"$tmp/r4.err"
same_ops() { [ "$(grep -c '^op ' "$tmp/r.model")" = "$(grep -c '^op ' "$tmp/r4.model")" ] &&
    grep -q 'ProfilerStep#4 ' "$tmp/r4.err"; }
check "resnet-1gpu --step 4: the same number of operations as step 6 (steps repeat)" same_ops
"$shimplan" --import et "$resnet" --step 9 -o "$tmp/r9.model" 2>"$tmp/r9.err"
r9=$?
check "resnet-1gpu --step 9: exit 1 naming the missing step" \
    test "$r9" -eq 1 -a -n "$(grep 'no ProfilerStep#9' "$tmp/r9.err")"

# ---- pt2 (Chakra 1.1.1, strides, Triton kernels; a tar of the JSON and its kernels' sources).
mkdir -p "$tmp/pt2" && tar -xzf "$traces/pt2.et.json.tar.gz" -C "$tmp/pt2"
"$shimplan" --import et "$tmp/pt2/pt2_et.json" -o "$tmp/pt2.model" --join-map "$tmp/pt2.map" 2>/dev/null
pt2_ops() { # the step's two GPU operators, the Triton kernel among them
    [ "$(grep -c '^op ' "$tmp/pt2.model")" = 2 ] &&
        python3 - "$tmp/pt2/pt2_et.json" "$tmp/pt2.map" <<'PY'
import json, sys
names = {n["id"]: n["name"] for n in json.load(open(sys.argv[1]))["nodes"]}
ops = [names[int(l.split()[1])] for l in open(sys.argv[2])]
print(ops)
sys.exit(0 if sorted(ops) == ["aten::mm", "triton_poi_fused_add_cos_neg_sin_0"] else 1)
PY
}
check "pt2 (torch.compile): the step's operations are its Triton kernel and its mm" pt2_ops
