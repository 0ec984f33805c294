#!/usr/bin/env python3
"""tests/import/et_layout.py OLD.json[.gz] OUT.json [SCHEMA] — writes the execution trace OLD (the
older layout, 1.0.1: node fields at the top level, `parent`, operand lists) again in the Chakra
layout (rf_id, tid, seq_id, fw_parent, scope, fw_tid, op_schema in an `attrs` list of {name,
type, value}; `ctrl_deps` for the parent; operands as {values, shapes, types}), the same nodes in
reverse order, so that an importer that reads both layouts must make the same model of each.
SCHEMA (default 1.0.3-chakra.0.0.4) is the version PyTorch's observer writes the layout under;
from 1.1.0 a node's attrs also hold kernel_backend and kernel_file, and from 1.1.1 its operands
their strides (each tensor's, contiguous; [] for the rest) and its attrs a tensor_range, as
PyTorch's ExecutionTraceObserver writes them. Exits 1 if OLD is not in the older layout."""
import gzip
import json
import sys

src, out = sys.argv[1], sys.argv[2]
schema = sys.argv[3] if len(sys.argv) > 3 else "1.0.3-chakra.0.0.4"
version = tuple(int(x) for x in schema.split("-")[0].split("."))
opener = gzip.open if src.endswith(".gz") else open
with opener(src, "rt") as f:
    doc = json.load(f)
nodes = doc.get("nodes")
if not nodes or "tid" not in nodes[0] or "attrs" in nodes[0]:
    sys.exit("%s: not an execution trace in the older layout" % src)
ATTRS = [("rf_id", "uint64"), ("fw_parent", "uint64"), ("seq_id", "int64"), ("scope", "uint64"),
         ("tid", "uint64"), ("fw_tid", "uint64"), ("op_schema", "string")]
def strides(shape, kind):
    """A contiguous tensor's strides for its shape; [] for an operand that is not a tensor."""
    if not str(kind).startswith("Tensor(") or not all(isinstance(d, int) for d in shape):
        return []
    out, step = [], 1
    for d in reversed(shape):
        out.append(step)
        step *= max(d, 1)
    return out[::-1]


chakra = []
for n in nodes:
    c = {"id": n["id"], "name": n["name"], "ctrl_deps": n.get("parent", 0)}
    for side in ("inputs", "outputs"):
        c[side] = {"values": n.get(side, []), "shapes": n.get(side[:-1] + "_shapes", []),
                   "types": n.get(side[:-1] + "_types", [])}
        if version >= (1, 1, 1):
            c[side]["strides"] = [strides(sh, ty) for sh, ty in
                                  zip(c[side]["shapes"], c[side]["types"])]
    c["attrs"] = [{"name": k, "type": t, "value": n[k]} for k, t in ATTRS if k in n]
    if version >= (1, 1, 0):
        c["attrs"] += [{"name": "kernel_backend", "type": "string", "value": ""},
                       {"name": "kernel_file", "type": "string", "value": ""}]
    if version >= (1, 1, 1):
        c["attrs"].append({"name": "tensor_range", "type": "string", "value": ""})
    chakra.append(c)
doc["schema"] = schema
doc["nodes"] = chakra[::-1]
with open(out, "w") as f:
    json.dump(doc, f)
print(len(chakra))
