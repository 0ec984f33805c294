#!/usr/bin/env python3
"""tests/import/et_storages.py — an independent reckoning over an execution trace, for
test_import.sh: of the GPU storages its operators use, the bytes of the largest, and the total
bytes of those that exist before the step (first used, in rf_id order, as an input rather than
made as an output), each storage counted at its largest use (offset + numel) * itemsize; a
storage that an aten::empty* operator outputs again holds a new allocation from there on, so a
pre-existing storage counts only its uses before that.

usage: et_storages.py ET.json[.gz]   prints: LARGEST PRE_EXISTING_TOTAL TOTAL"""
import gzip
import json
import sys


def tensors(value, out, depth=0):
    if isinstance(value, list):
        if len(value) == 6 and all(type(x) is int for x in value[:5]) and isinstance(value[5], str):
            out.append(value)
        elif depth < 4:
            for x in value:
                tensors(x, out, depth + 1)


with open(sys.argv[1], "rb") as f:
    raw = f.read()
doc = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
size, made, reused, pre_size = {}, {}, set(), {}
for node in sorted(doc["nodes"], key=lambda n: n.get("rf_id", n["id"])):
    for key, is_out in (("inputs", False), ("outputs", True)):
        found = []
        tensors(node.get(key, []), found)
        for _, storage, offset, numel, itemsize, device in found:
            if not device.startswith("cuda"):
                continue
            nbytes = (offset + numel) * itemsize
            size[storage] = max(size.get(storage, 0), nbytes)
            if storage in made and is_out and node["name"].startswith("aten::empty"):
                reused.add(storage)
            made.setdefault(storage, is_out)
            if not made[storage] and storage not in reused:
                pre_size[storage] = max(pre_size.get(storage, 0), nbytes)
pre = sum(pre_size.values())
print(max(size.values()), pre, sum(size.values()))
