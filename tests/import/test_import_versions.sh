#!/usr/bin/env bash
# tests/import/test_import_versions.sh — profiles as they come (tools/import/IMPORT.md):
#   - an execution trace whose last ProfilerStep#N the profiler cut short (its annotation alone,
#     or fewer operations than any step before it) is imported from the last complete step, and
#     the note says so; a complete last step is taken; a step is judged by the operations it
#     holds, so a larger first step (warm-up) does not make the later ones look cut;
#   - the schema versions PyTorch's observer writes (1.0.1; 1.0.2, 1.0.3, 1.1.0, 1.1.1 in the
#     Chakra layout, written by tests/import/et_layout.py) make the same model of the same nodes;
#   - a Kineto trace in the first Kineto naming (PyTorch 1.8, 1.9: Kernel, Runtime, Operator,
#     "external id") makes the model of the same trace in today's.
# Made traces first (no ../shared needed); then, with ../shared, the same on the real ones: the
# resnet ET with its last step cut short, linear in every schema, DLRM's Kineto trace renamed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../check.sh"
scratch
plan=${BUILD:-build}/shim-plan
traces=${SHARED:-$here/../../../shared}/traces

# et NAME OPS...: an execution trace (schema 1.0.1) of one ProfilerStep#N per OPS argument
# (N from 1), each holding that many operators with GPU operands (0: its annotation alone, as a
# profiler stopped at the step's start leaves it): each reads a 1 MiB weight made before the
# steps and a 4 KiB input of its own and writes a 4 KiB output.
et() {
    python3 - "$tmp/$1.json" "${@:2}" <<'PY'
import json, sys
out, counts = sys.argv[1], [int(c) for c in sys.argv[2:]]
nodes, ids = [], iter(range(3, 1 << 30))
def tensor(tid, storage, numel):
    return [tid, storage, 0, numel, 4, "cuda:0"]
def node(name, nid, rf, parent, ins=(), outs=()):
    return {"name": name, "id": nid, "rf_id": rf, "parent": parent, "fw_parent": 0, "seq_id": -1,
            "scope": 0, "tid": 1, "fw_tid": 0, "op_schema": "",
            "inputs": [list(t) for t in ins], "input_shapes": [[t[3]] for t in ins],
            "input_types": ["Tensor(float)"] * len(ins),
            "outputs": [list(t) for t in outs], "output_shapes": [[t[3]] for t in outs],
            "output_types": ["Tensor(float)"] * len(outs)}
nodes.append(node("[pytorch|profiler|execution_graph|process]", 1, 0, 1))
nodes.append(node("[pytorch|profiler|execution_graph|thread]", 2, 0, 1))
rf, storage = 1, 100
for step, n in enumerate(counts, 1):
    sid = next(ids)
    nodes.append(node("ProfilerStep#%d" % step, sid, rf, 2))
    rf += 1
    for _ in range(n):
        storage += 2
        ins = (tensor(next(ids), 10, 262144), tensor(next(ids), storage, 1024))
        nodes.append(node("aten::mul", next(ids), rf, sid, ins, (tensor(next(ids), storage + 1, 1024),)))
        rf += 1
json.dump({"schema": "1.0.1", "pid": 1, "time": "", "start_ts": 0, "finish_ts": 0, "nodes": nodes},
          open(out, "w"))
PY
}
# import NAME [ARGS...]: shim-plan --import et of $tmp/NAME.json into NAME.model, notes NAME.err.
import() {
    local n=$1
    shift
    "$plan" --import et "$tmp/$n.json" "$@" -o "$tmp/$n.model" 2>"$tmp/$n.err"
}
ops() { grep -c '^op ' "$tmp/$1.model"; } # NAME: the model's operations
# took NAME STEP OPS: the import of NAME made the model of ProfilerStep#STEP, of OPS operations.
took() {
    cat "$tmp/$1.err"
    [ -s "$tmp/$1.model" ] && [ "$(ops "$1")" = "$3" ] &&
        grep -q "ProfilerStep#$2 (.* $3 operations;" "$tmp/$1.err"
}

layouts=(1.0.2-chakra.0.0.4 1.0.3-chakra.0.0.4 1.1.0-chakra.0.0.4 1.1.1-chakra.0.0.4)
n_shared=0
[ -d "$traces" ] && n_shared=$((3 + ${#layouts[@]} + 1))
plan $((7 + ${#layouts[@]} + 2 + n_shared))

et cut 3 0
import cut
cut_rc=$?
check "the last step cut short (its annotation alone): ProfilerStep#1, the complete one (exit $cut_rc)" \
    all [ $cut_rc -eq 0 ] '&&' took cut 1 3
check "... and the note says the last was cut short and which step was taken" \
    grep -q "ProfilerStep#2, the last step, holds 0 operations (1 nodes), fewer than any step before it: the profiler stopped it short; ProfilerStep#1, the last complete step, is the model" "$tmp/cut.err"
import cut --step 2
cut2_rc=$?
check "--step 2, the cut one: exit 1, no operator in it" \
    all [ $cut2_rc -eq 1 ] '&&' grep -q "error: no operator in ProfilerStep#2 has GPU tensor operands$" "$tmp/cut.err"
et whole 3 3
import whole
check "a complete last step is the model: ProfilerStep#2" took whole 2 3
et part 3 3 2
import part
check "a last step with fewer operations than any before it: the one before (ProfilerStep#2)" \
    took part 2 3
et warm 5 3 3
import warm
check "a larger first step (warm-up) leaves the last complete: ProfilerStep#3" took warm 3 3
et none 0 0
import none
none_rc=$?
check "no step holds an operator: exit 1, said of the last step and the others" \
    all [ $none_rc -eq 1 ] '&&' grep -q "no operator in ProfilerStep#2 has GPU tensor operands (nor in any other step of the trace)" "$tmp/none.err"

# The schema versions: the cut trace in each Chakra layout makes the model of the older one.
for v in "${layouts[@]}"; do
    python3 "$here/et_layout.py" "$tmp/cut.json" "$tmp/cut-$v.json" "$v" >/dev/null
    import "cut-$v"
    check "schema $v (Chakra layout): the same model, the same step" \
        all cmp "$tmp/cut.model" "$tmp/cut-$v.model" '&&' took "cut-$v" 1 3
done

# Kineto: the first naming of its categories and ids makes the same model.
cat >"$tmp/k.json" <<'JSON'
{"schemaVersion": 1, "traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1", "ts": 0, "dur": 100, "pid": 1, "tid": 1, "args": {"External id": 1}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "ts": 5, "dur": 20, "pid": 1, "tid": 1, "args": {"External id": 2}},
 {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "ts": 6, "pid": 1, "tid": 1, "s": "t", "args": {"Addr": 4096, "Bytes": 8388608, "Total Allocated": 8388608, "Total Reserved": 8388608, "Device Type": 1, "Device Id": 0}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 10, "dur": 2, "pid": 1, "tid": 1, "args": {"correlation": 7, "External id": 2}},
 {"ph": "X", "cat": "kernel", "name": "k", "ts": 20, "dur": 30, "pid": 0, "tid": 7, "args": {"correlation": 7, "External id": 2, "stream": 7, "device": 0}},
 {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "ts": 60, "pid": 1, "tid": 1, "s": "t", "args": {"Addr": 4096, "Bytes": -8388608, "Total Allocated": 0, "Total Reserved": 8388608, "Device Type": 1, "Device Id": 0}},
 {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#2", "ts": 100, "dur": 100, "pid": 1, "tid": 1, "args": {"External id": 3}}
]}
JSON
sed -e 's/"cat": "cpu_op"/"cat": "Operator"/; s/"cat": "cuda_runtime"/"cat": "Runtime"/' \
    -e 's/"cat": "kernel"/"cat": "Kernel"/; s/"External id"/"external id"/g' "$tmp/k.json" >"$tmp/k-old.json"
"$plan" --import kineto "$tmp/k.json" -o "$tmp/k.model" 2>/dev/null
"$plan" --import kineto "$tmp/k-old.json" -o "$tmp/k-old.model" 2>"$tmp/k-old.err"
check "a Kineto trace of today's naming: one operation, one allocation" \
    all [ "$(grep -c '^op ' "$tmp/k.model")" = 1 ] '&&' [ "$(grep -c '^alloc ' "$tmp/k.model")" = 1 ]
check "... and the same trace in the first Kineto naming (Kernel, Runtime, Operator): the same model" \
    cmp "$tmp/k.model" "$tmp/k-old.model"

if [ "$n_shared" -eq 0 ]; then
    echo "# $traces is absent: the real traces' checks are not run"
    exit $((fails > 0))
fi

# resnet (Chakra 1.0.3, ProfilerStep#4..#6) with its last step cut short: the subtree of
# ProfilerStep#6 and the autograd thread's nodes in its window removed, its annotation kept.
python3 - "$traces/resnet-1gpu.et.json.gz" "$tmp/resnet-cut.json" <<'PY'
import gzip, json, sys
doc = json.load(gzip.open(sys.argv[1]))
attr = lambda n, k: next((a["value"] for a in n.get("attrs", []) if a["name"] == k), None)
step = next(n for n in doc["nodes"] if n["name"] == "ProfilerStep#6")
lo = attr(step, "rf_id")
doc["nodes"] = [n for n in doc["nodes"] if n is step or (attr(n, "rf_id") or 0) < lo or
                n["name"].startswith("[pytorch|profiler")]
json.dump(doc, open(sys.argv[2], "w"))
PY
"$plan" --import et "$tmp/resnet-cut.json" -o "$tmp/resnet-cut.model" 2>"$tmp/resnet-cut.err"
"$plan" --import et "$traces/resnet-1gpu.et.json.gz" --step 5 -o "$tmp/resnet5.model" 2>/dev/null
check "resnet with ProfilerStep#6 cut short: imports (it failed: no operator in the step)" \
    test -s "$tmp/resnet-cut.model"
check "... from ProfilerStep#5, the last complete step, and says so" \
    grep -q "ProfilerStep#6, the last step, holds 0 operations .* ProfilerStep#5, the last complete step, is the model" "$tmp/resnet-cut.err"
check "... the model of the whole trace's --step 5" cmp "$tmp/resnet5.model" "$tmp/resnet-cut.model"

"$plan" --import et "$traces/linear.et.json.gz" -o "$tmp/linear.model" 2>/dev/null
for v in "${layouts[@]}"; do
    python3 "$here/et_layout.py" "$traces/linear.et.json.gz" "$tmp/linear-$v.json" "$v" >/dev/null
    "$plan" --import et "$tmp/linear-$v.json" -o "$tmp/linear-$v.model" 2>/dev/null
    check "linear in schema $v: the model of its 1.0.1 trace" \
        all [ -s "$tmp/linear.model" ] '&&' cmp "$tmp/linear.model" "$tmp/linear-$v.model"
done

# DLRM rank 0's Kineto trace in the first naming, joined with its ET: the same model.
python3 - "$traces/dlrm-rank0.kineto.json.gz" "$tmp/dlrm0-old.kineto.json" <<'PY'
import gzip, json, sys
doc = json.load(gzip.open(sys.argv[1]))
names = {"cpu_op": "Operator", "cuda_runtime": "Runtime", "kernel": "Kernel"}
for e in doc["traceEvents"]:
    if e.get("cat") in names:
        e["cat"] = names[e["cat"]]
    args = e.get("args")
    if isinstance(args, dict) and "External id" in args:
        args["external id"] = args.pop("External id")
json.dump(doc, open(sys.argv[2], "w"))
PY
"$plan" --import et "$traces/dlrm-rank0.et.json.gz" --kineto "$traces/dlrm-rank0.kineto.json.gz" \
    -o "$tmp/dlrm0.model" 2>/dev/null
"$plan" --import et "$traces/dlrm-rank0.et.json.gz" --kineto "$tmp/dlrm0-old.kineto.json" \
    -o "$tmp/dlrm0-old.model" 2>/dev/null
check "dlrm-rank0 joined with its Kineto trace in the first naming: the same model" \
    all [ -s "$tmp/dlrm0.model" ] '&&' cmp "$tmp/dlrm0.model" "$tmp/dlrm0-old.model"
exit $((fails > 0))
