#!/usr/bin/env python3
"""tests/import/et_layout.py OLD.json[.gz] OUT.json — writes the execution trace OLD (the older
layout: node fields at the top level, `parent`, operand lists) again in the Chakra layout (rf_id,
tid, seq_id, fw_parent, scope, fw_tid, op_schema in an `attrs` list of {name, type, value};
`ctrl_deps` for the parent; operands as {values, shapes, types}), the same nodes in reverse
order, so that an importer that reads both layouts must make the same model of each. Exits 1 if
OLD is not in the older layout."""
import gzip
import json
import sys

src, out = sys.argv[1], sys.argv[2]
opener = gzip.open if src.endswith(".gz") else open
with opener(src, "rt") as f:
    doc = json.load(f)
nodes = doc.get("nodes")
if not nodes or "tid" not in nodes[0] or "attrs" in nodes[0]:
    sys.exit("%s: not an execution trace in the older layout" % src)
ATTRS = [("rf_id", "uint64"), ("fw_parent", "uint64"), ("seq_id", "int64"), ("scope", "uint64"),
         ("tid", "uint64"), ("fw_tid", "uint64"), ("op_schema", "string")]
chakra = []
for n in nodes:
    c = {"id": n["id"], "name": n["name"], "ctrl_deps": n.get("parent", 0)}
    for side in ("inputs", "outputs"):
        c[side] = {"values": n.get(side, []), "shapes": n.get(side[:-1] + "_shapes", []),
                   "types": n.get(side[:-1] + "_types", [])}
    c["attrs"] = [{"name": k, "type": t, "value": n[k]} for k, t in ATTRS if k in n]
    chakra.append(c)
doc["schema"] = "1.0.3-chakra.0.0.4"
doc["nodes"] = chakra[::-1]
with open(out, "w") as f:
    json.dump(doc, f)
print(len(chakra))
