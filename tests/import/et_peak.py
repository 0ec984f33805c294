#!/usr/bin/env python3
"""tests/import/et_peak.py — a second reckoning of an ET model's native peak, for
test_import.sh. It reads the execution trace itself and takes from shim-plan only which ET node
launched each operation (--join-map: "OP NODE_ID" lines, NODE_ID -1 for none); everything else
follows the rules of tools/import/IMPORT.md ("Execution traces"), written here without the importer's
code:

- memory: GPU tensor operands [tensor_id, storage_id, offset, numel, itemsize, device] of a
  node's inputs and outputs (also inside lists); a use reaches (offset + numel) * itemsize bytes;
- allocations: a storage id holds one allocation until an aten::empty* operator outputs it again,
  which starts a new one there, unless the node that started the current one encloses that
  operator; an input belongs to the allocation current when its node starts, an output to the
  one current when its node's subtree ends; an allocation's bytes are its largest use;
- made before the step: a storage whose first node (in rf_id order) lists it among its inputs;
  its first allocation is cyclic, live at every operation;
- touches: an operation touches the allocations of the operands of its node, of every enclosing
  node, and, for each of those that is a backward node (fw_parent > 0) with a sequence number,
  of the forward nodes (fw_parent 0) with that seq_id; a backward node with a sequence number
  that no forward node carries touches every cyclic allocation; a CppNode<...> backward node with
  sequence number s has as forward the operators (a "::" in the name, with GPU operands, seq_id
  -1, not inside a node carrying s) that follow, on the thread of the last forward node carrying
  s, that node and precede the next forward node with a larger seq_id: an operation launched by
  the CppNode itself (or, for an ET alone, any under it) touches their cyclic allocations; found
  none, it touches every cyclic allocation;
- lives: any other allocation lives from its first to its last touching operation; one that no
  operation touches (or of 0 bytes) is left out, unless it is cyclic (held all step, untouched).

The native peak is the largest sum, over operations, of the bytes live there: model bytes as
they are, as the planner counts them (it does not round a model's sizes).

Either layout of an ET (the older one, or Chakra's attrs); STEP (ProfilerStep#N) keeps only that
step's nodes, as shim-plan does for an ET imported alone.

usage: et_peak.py ET.json[.gz] JOIN_MAP [STEP]   prints: NATIVE_PEAK ALLOCATIONS OPERATIONS"""
import bisect
import gzip
import json
import sys


def gpu_tensors(value):
    """The GPU tensor operands in value, searching nested lists."""
    if not isinstance(value, list):
        return
    if (len(value) == 6 and all(type(x) is int for x in value[:5])
            and isinstance(value[5], str)):
        if value[5].startswith("cuda"):
            yield value
        return
    for item in value:
        yield from gpu_tensors(item)


def load_nodes(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    nodes = json.loads(raw)["nodes"]
    for n in nodes:
        # The Chakra layout: fields in attrs, the parent as ctrl_deps, operands under "values".
        for a in n.pop("attrs", None) or []:
            n.setdefault(a["name"], a["value"])
        n.setdefault("parent", n.get("ctrl_deps", 0))
        for side in ("inputs", "outputs"):
            if isinstance(n.get(side), dict):
                n[side] = n[side].get("values", [])
        n.setdefault("rf_id", n["id"])
        n.setdefault("seq_id", -1)
        n.setdefault("fw_parent", 0)
        n["uses"] = [(t[1], (t[2] + t[3]) * t[4], False) for t in gpu_tensors(n.get("inputs"))]
        n["uses"] += [(t[1], (t[2] + t[3]) * t[4], True) for t in gpu_tensors(n.get("outputs"))]
    return sorted(nodes, key=lambda n: n["rf_id"])


def enclosing(by_id, node):
    """node, then its parent, its parent's parent, ... (a node that is its own parent ends it)."""
    seen = set()
    while node is not None and node["id"] not in seen:
        seen.add(node["id"])
        yield node
        node = by_id.get(node["parent"])


def subtree_ends(nodes, by_id):
    """Largest rf_id in each node's subtree, by node id."""
    end = {n["id"]: n["rf_id"] for n in nodes}
    for n in nodes:
        for a in enclosing(by_id, n):
            end[a["id"]] = max(end[a["id"]], n["rf_id"])
    return end


def allocation_starts(nodes, by_id):
    """Per storage: whether it was made before the step, and the rf_ids where new allocations
    start (an aten::empty* output at a storage already in use)."""
    before, starts, starter = {}, {}, {}
    for n in nodes:
        above = {a["id"] for a in enclosing(by_id, n)}
        for storage, _, out in n["uses"]:
            if storage not in before:
                before[storage] = not out
                starts[storage] = []
                starter[storage] = n["id"] if out else None
            elif (out and n["name"].startswith("aten::empty")
                  and starter[storage] not in above):
                starts[storage].append(n["rf_id"])
                starter[storage] = n["id"]
    return before, starts


def allocations(nodes, by_id):
    """Allocation (storage, k) of every use of every node, and each allocation's bytes."""
    before, starts = allocation_starts(nodes, by_id)
    end = subtree_ends(nodes, by_id)
    of_node, size = {}, {}
    for n in nodes:
        mine = []
        for storage, nbytes, out in n["uses"]:
            when = end[n["id"]] if out else n["rf_id"]
            key = (storage, bisect.bisect_right(starts[storage], when))
            size[key] = max(size.get(key, 0), nbytes)
            mine.append(key)
        of_node[n["id"]] = mine
    cyclic = {(s, 0) for s, b in before.items() if b}
    return of_node, size, cyclic


def custom_forward(nodes, by_id, node):
    """The forward operators of custom autograd node `node` (CppNode<...>)."""
    s = node["seq_id"]
    carrying = [n for n in nodes if n["fw_parent"] <= 0 and n["seq_id"] == s]
    if not carrying:
        return []
    last = max(carrying, key=lambda n: n["rf_id"])
    later = [n["rf_id"] for n in nodes if n["fw_parent"] <= 0 and n["tid"] == last["tid"]
             and n["seq_id"] > s and n["rf_id"] > last["rf_id"]]
    end = min(later) if later else float("inf")
    return [n for n in nodes if n["tid"] == last["tid"] and last["rf_id"] < n["rf_id"] < end
            and n["seq_id"] < 0 and "::" in n["name"] and n["uses"]
            and not any(a["seq_id"] == s for a in enclosing(by_id, n))]


def touched(node, by_id, of_node, forward, cyclic, custom, alone):
    """The allocations an operation launched by node touches."""
    out = set()
    for depth, a in enumerate(enclosing(by_id, node)):
        out.update(of_node[a["id"]])
        if a["fw_parent"] <= 0 or a["seq_id"] < 0:
            continue
        fws = forward.get(a["seq_id"], [])
        for f in fws:
            out.update(of_node[f["id"]])
        if "CppNode<" in a["name"]:
            fw = custom(a)
            if not fw:
                out.update(cyclic)
            elif depth == 0 or alone:
                for f in fw:
                    out.update(k for k in of_node[f["id"]] if k in cyclic)
        elif not fws:
            out.update(cyclic)
    return out


def step_window(nodes, step):
    """The nodes of annotation `step` (ProfilerStep#N): rf_id from its own to its subtree's
    last (the autograd thread's nodes run inside it)."""
    by_id = {n["id"]: n for n in nodes}
    mark = [n for n in nodes if n["name"] == step]
    assert mark, "no node named " + step
    lo, hi = mark[0]["rf_id"], subtree_ends(nodes, by_id)[mark[0]["id"]]
    return [n for n in nodes if lo <= n["rf_id"] <= hi]


def native_peak(et_path, map_path, step=None):
    nodes = load_nodes(et_path)
    if step:
        nodes = step_window(nodes, step)
    by_id = {n["id"]: n for n in nodes}
    of_node, size, cyclic = allocations(nodes, by_id)
    forward = {}
    for n in nodes:
        if n["fw_parent"] <= 0:
            forward.setdefault(n["seq_id"], []).append(n)
    memo = {}

    def custom(n):
        if n["id"] not in memo:
            memo[n["id"]] = custom_forward(nodes, by_id, n)
        return memo[n["id"]]

    with open(map_path) as f:
        ops = [tuple(map(int, line.split())) for line in f if line.strip()]
    assert [op for op, _ in ops] == list(range(len(ops))), "join map: ops not 0, 1, 2, ..."
    span = {}
    for op, node_id in ops:
        if node_id < 0:
            continue
        for key in touched(by_id[node_id], by_id, of_node, forward, cyclic, custom, bool(step)):
            lo, hi = span.get(key, (op, op))
            span[key] = (min(lo, op), max(hi, op))
    live = [0] * (len(ops) + 1)
    kept = 0
    for key, (lo, hi) in span.items():
        if not size[key]:
            continue
        kept += 1
        if key in cyclic:
            lo, hi = 0, len(ops) - 1
        live[lo] += size[key]
        live[hi + 1] -= size[key]
    for key in cyclic:
        if key not in span and size[key]:
            kept += 1
            live[0] += size[key]
            live[len(ops)] -= size[key]
    peak = total = 0
    for delta in live[:-1]:
        total += delta
        peak = max(peak, total)
    return peak, kept, len(ops)


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__.split("\n\n")[-1])
    print(*native_peak(*sys.argv[1:]))
