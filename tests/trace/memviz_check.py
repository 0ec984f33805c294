#!/usr/bin/env python3
"""memviz_check.py — checks a snapshot written by `shim-report memviz` (a pickle in the format of
torch.cuda.memory._dump_snapshot) against what pytorch.org/memory_viz needs and against the
trace's own figures.

    memviz_check.py LABEL SNAPSHOT SUMMARY_JSON ALLOCS_JSON [--slabs N M]

SUMMARY_JSON and ALLOCS_JSON are `shim-report summary --json` and `allocs --json` of the same
trace; --slabs N M: the trace has N slabs, which hold M of the allocations. Prints one "ok - LABEL: ..." or "not ok - LABEL: ..." line per check (tests/run_tests.sh
counts them) and exits 1 when one failed.

The checks:
  * opcodes: only those that Python's pickle (protocol 2) and memory_viz's own unpickler
    (torch/utils/viz/MemoryViz.js, `unpickle`) both read; integers in LONG1 at most 8 bytes
    (the viewer's limit before it switched to BigInt);
  * structure: the keys and types of torch.cuda.memory._snapshot's Snapshot, Segment, Block and
    TraceEntry (torch/cuda/memory.py), one device;
  * the history replayed forward: every alloc inside a segment live at that moment and clear of
    the other live blocks, every free of a live block of the same size, a segment freed only when
    empty, free_requested followed by its free_completed; the state at the end is the
    "segments" list, whose blocks tile each segment from its address (as MemoryViz.js's
    annotate_snapshot lays them out);
  * the viewer's own walks: the Active Memory Timeline (process_alloc_data: every live block at
    the end has its alloc in the trace, so nothing is "initially allocated"), and the Allocator
    State History undone from the end back to the start (simulate_memory), which must find every
    block and segment it undoes and end empty;
  * totals against the trace: alloc events are the device allocations of `allocs` (pinned host
    and zero-byte ones left out) with the same sizes, frees those of them that were freed, the
    running sum of allocated bytes peaks at summary's peak_device_bytes and ends at
    device_bytes_at_end, the time is monotone.
"""
import json
import pickle
import pickletools
import sys
from collections import Counter

from tap_check import Checks

# Opcodes of PyTorch's MemoryViz.js's unpickler that Python's protocol-2 pickler also has; we write a
# subset of these.
VIEWER_OPS = {
    "PROTO", "EMPTY_DICT", "EMPTY_LIST", "MARK", "SETITEMS", "SETITEM", "APPENDS", "APPEND",
    "BININT", "BININT1", "BININT2", "LONG1", "BINUNICODE", "SHORT_BINUNICODE", "BINFLOAT",
    "NONE", "NEWTRUE", "NEWFALSE", "TUPLE", "TUPLE1", "TUPLE2", "TUPLE3", "EMPTY_TUPLE",
    "BINGET", "LONG_BINGET", "BINPUT", "LONG_BINPUT", "MEMOIZE", "FRAME", "STOP", "LIST", "DICT",
}
ACTIONS = {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free"}
ENTRY_KEYS = {"action", "addr", "size", "stream", "time_us", "frames"}
SEGMENT_KEYS = {"device", "address", "total_size", "allocated_size", "active_size",
                "requested_size", "stream", "segment_type", "segment_pool_id", "is_expandable",
                "frames", "blocks"}
BLOCK_KEYS = {"address", "size", "requested_size", "state", "frames"}
NAMED = {"alloc", "free_requested", "free_completed", "active_allocated"}


def frames_ok(what, frames):
    """An allocation's entry or block names it in one frame (shim-report's allocation name, where
    PyTorch has the Python stack); a segment's or a gap's has none."""
    if what not in NAMED:
        return frames == []
    return (isinstance(frames, list) and len(frames) == 1 and isinstance(frames[0], dict) and
            set(frames[0]) == {"filename", "line", "name"} and frames[0]["filename"] == "libshim"
            and frames[0]["line"] == 0 and isinstance(frames[0]["name"], str) and
            frames[0]["name"] != "")

check = Checks(label="")


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def opcodes(raw):
    ops, long1_max = Counter(), 0
    for op, arg, _ in pickletools.genops(raw):
        ops[op.name] += 1
        if op.name == "LONG1":
            long1_max = max(long1_max, (int(arg).bit_length() + 8) // 8)
    return ops, long1_max


def structure(d):
    problems = []
    if not isinstance(d, dict) or not {"segments", "device_traces"} <= set(d):
        return ["top level is not a dict with segments and device_traces"]
    if not isinstance(d["device_traces"], list) or len(d["device_traces"]) != 1:
        problems.append("device_traces is not a list of one device's trace")
    for e in [e for t in d["device_traces"] for e in t]:
        if set(e) != ENTRY_KEYS or e["action"] not in ACTIONS or not frames_ok(e["action"], e["frames"]) or not all(
                is_int(e[k]) for k in ("addr", "size", "stream", "time_us")) or e["size"] <= 0:
            problems.append(f"trace entry {e}")
            break
    for s in d["segments"]:
        if set(s) != SEGMENT_KEYS or s["device"] != 0 or s["segment_pool_id"] != (0, 0) or \
                s["segment_type"] not in ("small", "large") or s["is_expandable"] is not False \
                or s["frames"] != [] or not all(is_int(s[k]) for k in (
                    "address", "total_size", "allocated_size", "active_size", "requested_size",
                    "stream")) or not s["blocks"]:
            problems.append(f"segment {dict((k, v) for k, v in s.items() if k != 'blocks')}")
            break
        for b in s["blocks"]:
            if set(b) != BLOCK_KEYS or b["state"] not in ("active_allocated", "inactive") or \
                    not frames_ok(b["state"], b["frames"]) or not all(is_int(b[k]) for k in ("address", "size",
                                                                        "requested_size")):
                problems.append(f"block {b}")
                break
    return problems


def replay(trace):
    """Forward replay; returns (problems, live segments {addr: [size, stream, {addr: size}]})."""
    problems, segs, pending = [], {}, None

    def holder(addr, size):
        for a, (ssize, _, _) in segs.items():
            if a <= addr and addr + size <= a + ssize:
                return a
        return None

    for i, e in enumerate(trace):
        act, addr, size = e["action"], e["addr"], e["size"]
        if pending is not None and (act != "free_completed" or addr != pending):
            problems.append(f"event {i}: free_requested of {pending:#x} not followed by its "
                            "free_completed")
        if act == "segment_alloc":
            if any(a < addr + size and addr < a + s for a, (s, _, _) in segs.items()):
                problems.append(f"event {i}: segment {addr:#x} overlaps a live one")
            segs[addr] = [size, e["stream"], {}]
        elif act == "segment_free":
            if addr not in segs or segs[addr][0] != size or segs[addr][2]:
                problems.append(f"event {i}: segment_free of {addr:#x}: not a live empty segment")
            segs.pop(addr, None)
        elif act == "alloc":
            h = holder(addr, size)
            if h is None:
                problems.append(f"event {i}: alloc {addr:#x}+{size} in no live segment")
                continue
            if any(b < addr + size and addr < b + bs for b, bs in segs[h][2].items()):
                problems.append(f"event {i}: alloc {addr:#x} overlaps a live block")
            segs[h][2][addr] = size
        elif act == "free_requested":
            h = holder(addr, size)
            if h is None or segs[h][2].get(addr) != size:
                problems.append(f"event {i}: free of {addr:#x}+{size}: no such live block")
            pending = addr
        elif act == "free_completed":
            if pending != addr:
                problems.append(f"event {i}: free_completed of {addr:#x} without free_requested")
            h = holder(addr, size)
            if h is not None:
                segs[h][2].pop(addr, None)
            pending = None
    if pending is not None:
        problems.append("the trace ends inside a free")
    return problems, segs


def end_state(d, segs):
    problems = []
    listed = {s["address"]: s for s in d["segments"]}
    if len(listed) != len(d["segments"]):
        problems.append("two segments at one address")
    if sorted(listed) != sorted(segs):
        problems.append(f"segments {sorted(listed)} are not the live ones {sorted(segs)}")
        return problems
    if [s["address"] for s in d["segments"]] != sorted(listed):
        problems.append("segments are not in address order")
    for a, s in listed.items():
        size, stream, blocks = segs[a]
        at, held = a, {}
        for b in s["blocks"]:
            if b["address"] != at:
                problems.append(f"segment {a:#x}: block at {b['address']:#x}, expected {at:#x}")
            if b["state"] == "active_allocated":
                held[b["address"]] = b["size"]
                if b["requested_size"] != b["size"]:
                    problems.append(f"block {b['address']:#x}: requested_size != size")
            at += b["size"]
        total = sum(held.values())
        if at != a + s["total_size"] or s["total_size"] != size or s["stream"] != stream:
            problems.append(f"segment {a:#x}: blocks or size or stream differ from the trace")
        if held != blocks:
            problems.append(f"segment {a:#x}: allocated blocks {held} are not the live {blocks}")
        if not s["allocated_size"] == s["active_size"] == s["requested_size"] == total:
            problems.append(f"segment {a:#x}: allocated/active/requested sizes are not {total}")
        if s["segment_type"] != ("large" if size > 1048576 else "small"):
            problems.append(f"segment {a:#x}: segment_type")
    return problems


def annotate(trace):
    """MemoryViz.js annotate_snapshot: a free_requested then free_completed of one address
    become one 'free' event."""
    out = []
    for e in trace:
        e = dict(e)
        if e["action"] == "free_completed" and out and out[-1]["action"] == "free_requested" \
                and out[-1]["addr"] == e["addr"]:
            out[-1]["action"] = "free"
            continue
        out.append(e)
    return out


def active_timeline(d, events):
    """MemoryViz.js process_alloc_data (not plot_segments): (max_size, initially allocated)."""
    elements, initially, actions, addr_to_alloc = [], [], [], {}
    for e in events:
        if e["action"] == "alloc":
            elements.append(e)
            addr_to_alloc[e["addr"]] = len(elements) - 1
            actions.append(len(elements) - 1)
        elif e["action"] in ("free", "free_completed"):
            if e["addr"] in addr_to_alloc:
                actions.append(addr_to_alloc.pop(e["addr"]))
            else:
                elements.append(e)
                initially.append(len(elements) - 1)
                actions.append(len(elements) - 1)
    for s in d["segments"]:
        at = s["address"]
        for b in s["blocks"]:
            if b["state"] == "active_allocated" and at not in addr_to_alloc:
                elements.append({"size": b["requested_size"]})
                initially.append(len(elements) - 1)
            at += b["size"]
    total = sum(elements[i]["size"] for i in initially)
    max_size, current = total, set(initially)
    for i in actions:
        if i in current:
            current.discard(i)
            total -= elements[i]["size"]
        else:
            current.add(i)
            total += elements[i]["size"]
        max_size = max(max_size, total)
    return max_size, len(initially)


def state_history(d, events):
    """MemoryViz.js MemoryView.simulate_memory(-1): every event undone from the end. Returns the
    problems it meets (where the viewer would throw or draw a block outside any segment)."""
    problems = []
    segments = [[s["address"], s["total_size"]] for s in d["segments"]]
    blocks = {}
    for s in d["segments"]:
        at = s["address"]
        for b in s["blocks"]:
            if b["state"] == "active_allocated":
                blocks[at] = b["size"]
            at += b["size"]
    for i in range(len(events) - 1, -1, -1):
        e = events[i]
        act, addr, size = e["action"], e["addr"], e["size"]
        if act == "free":
            blocks[addr] = size
        elif act == "free_requested":
            if addr not in blocks:
                problems.append(f"event {i}: undoing free_requested: no block {addr:#x}")
        elif act == "free_completed":
            blocks[addr] = size
        elif act == "alloc":
            blocks.pop(addr, None)
        elif act == "segment_free":
            segments.append([addr, size])
        elif act == "segment_alloc":
            idx = [k for k, s in enumerate(segments) if s[0] == addr]
            if not idx:
                problems.append(f"event {i}: undoing segment_alloc: no segment {addr:#x}")
            else:
                segments.pop(idx[0])
        for b, bs in blocks.items():
            if not any(a <= b < a + s for a, s in segments):
                problems.append(f"event {i}: block {b:#x} in no segment")
                break
        if len(problems) > 5:
            break
    if not problems and (segments or blocks):
        problems.append(f"at the start: {len(segments)} segments, {len(blocks)} blocks remain")
    return problems


def main():
    args = sys.argv[1:]
    slabs = members = None
    if "--slabs" in args:
        k = args.index("--slabs")
        slabs, members = int(args[k + 1]), int(args[k + 2])
        del args[k:k + 3]
    check.label, snap, summary_path, allocs_path = args
    raw = open(snap, "rb").read()
    summary = json.load(open(summary_path))
    allocs = json.load(open(allocs_path))["allocations"]

    ops, long1_max = opcodes(raw)
    check("protocol 2, only opcodes memory_viz's unpickler reads",
          raw[:2] == b"\x80\x02" and set(ops) <= VIEWER_OPS, f"{sorted(set(ops) - VIEWER_OPS)}")
    check("LONG1 integers of at most 8 bytes", long1_max <= 8, f"{long1_max}")
    d = pickle.loads(raw)
    problems = structure(d)
    if not check("keys and types of torch.cuda.memory._snapshot", not problems, "; ".join(problems)):
        return
    trace = d["device_traces"][0]
    times = [e["time_us"] for e in trace]
    check("time_us is monotone", times == sorted(times))

    problems, segs = replay(trace)
    check("forward replay: allocs in live segments, frees of live blocks", not problems,
          "; ".join(problems[:3]))
    problems = end_state(d, segs)
    check("segments are the state at the end, blocks tile them", not problems,
          "; ".join(problems[:3]))

    events = annotate(trace)
    max_size, initially = active_timeline(d, events)
    check("Active Memory Timeline: every live block's alloc is in the trace", initially == 0,
          f"{initially} initially allocated")
    check(f"Active Memory Timeline peaks at summary's peak_device_bytes "
          f"({summary['peak_device_bytes']})", max_size == summary["peak_device_bytes"],
          f"{max_size}")
    problems = state_history(d, events)
    check("Allocator State History undoes every event back to an empty device", not problems,
          "; ".join(problems[:3]))

    device = [a for a in allocs if a["kind"] != "host" and a["bytes"] > 0]
    alloc_ev = [e for e in trace if e["action"] == "alloc"]
    free_ev = [e for e in trace if e["action"] == "free_completed"]
    check(f"{len(device)} alloc events: the device allocations of the trace",
          len(alloc_ev) == len(device), f"{len(alloc_ev)}")
    check("alloc sizes and addresses are the allocations'",
          Counter((e["size"], e["addr"]) for e in alloc_ev) ==
          Counter((a["bytes"], int(a["addr"], 16)) for a in device))
    check("each alloc event's frame names its allocation as allocs --json does",
          [e["frames"][0]["name"] if e["frames"] else None for e in alloc_ev] ==
          [a["name"] for a in device])
    freed = [a for a in device if a["freed_ms"] is not None]
    check(f"{len(freed)} frees: those of them that were freed", len(free_ev) == len(freed) and
          Counter(e["size"] for e in free_ev) == Counter(a["bytes"] for a in freed),
          f"{len(free_ev)}")
    total = peak = 0
    for e in trace:
        total += e["size"] if e["action"] == "alloc" else -e["size"] \
            if e["action"] == "free_completed" else 0
        peak = max(peak, total)
    check(f"allocated bytes peak at {summary['peak_device_bytes']} and end at "
          f"{summary['device_bytes_at_end']}", peak == summary["peak_device_bytes"] and
          total == summary["device_bytes_at_end"], f"{peak}, {total}")
    meta = d.get("libshim", {})
    check("libshim's counts", meta.get("allocations") == len(alloc_ev) and
          meta.get("frees") == len(free_ev) and meta.get("pid") == summary["pid"] and
          meta.get("pinned_host_allocations_left_out") ==
          sum(a["kind"] == "host" for a in allocs), f"{meta}")
    if slabs is not None:
        own = sum(e["action"] == "segment_alloc" for e in trace) - slabs
        check(f"{slabs} slabs, each one segment, holding {members} of the allocations",
              meta.get("slabs") == slabs and len(alloc_ev) - own == members,
              f"{meta.get('slabs')} slabs, {len(alloc_ev) - own} members")

if __name__ == "__main__":
    main()
    sys.exit(1 if check.failures else 0)
