#!/usr/bin/env python3
"""chrome_trace_check.py — checks a JSON file against the Chrome trace event format (the
"Trace Event Format" document that chrome://tracing and Perfetto's JSON importer follow), for
`shim-report perfetto`'s output.

    chrome_trace_check.py FILE

Exit 0 when the file passes, 1 with one line per problem (at most 20) on stdout otherwise.

What is checked:
  * the file is JSON (Python's json module; NaN and infinities refused) and is either a list of
    events or an object whose "traceEvents" is one; displayTimeUnit, when given, is "ms" or "ns";
  * every event is an object with "name" (a string), "ph", "ts", "pid" and "tid": ts a finite
    number, pid and tid integers (numbers, not strings); "cat", when given, a string; "args",
    when given, an object;
  * by ph: "X" has a finite "dur" >= 0; "i" / "I" have "s" in g, p, t; "C" has args whose values
    are all finite numbers; "B" / "E" on a track (pid, tid) come in file order with ts never
    decreasing, an "E" always closes an open "B", and none is left open; "M" is one of
    process_name, process_labels, process_sort_index, thread_name, thread_sort_index with the
    argument it needs (args.name a string; args.labels a string; args.sort_index an integer);
    other phases are refused (the report writes none);
  * the complete ("X") slices of a track (a lane) never overlap, nested or not, compared in whole
    nanoseconds (ts and dur each rounded to a ns): each ends at or before the next one's start.
    Perfetto draws the slices of a lane nested, so two overlapping moves or kernels there would
    read as a parent and its child; the report puts overlapping moves on lanes of their own and
    writes times exact to the nanosecond, so no slack is allowed;
  * names: every pid that has an event has exactly one process_name, and every track (pid, tid)
    with a slice or an instant exactly one thread_name.
"""
import json
import math
import sys
from collections import Counter, defaultdict

META = {"process_name": "name", "process_labels": "labels", "process_sort_index": "sort_index",
        "thread_name": "name", "thread_sort_index": "sort_index"}


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v):
    return (is_int(v) or isinstance(v, float)) and math.isfinite(v)


def reject_constant(name):
    raise ValueError(f"not JSON: {name}")


def check_event(i, e, problems):
    """Field checks of one event; True when it is well-formed enough to go further."""
    if not isinstance(e, dict):
        problems.append(f"event {i}: not an object")
        return False
    where, before = f"event {i} ({e.get('ph')!r} {e.get('name')!r})", len(problems)
    bad = [k for k in ("name", "ph", "ts", "pid", "tid") if k not in e]
    if bad:
        problems.append(f"{where}: no {', '.join(bad)}")
        return False
    if not isinstance(e["name"], str) or not isinstance(e["ph"], str):
        problems.append(f"{where}: name and ph must be strings")
    if not is_num(e["ts"]):
        problems.append(f"{where}: ts {e['ts']!r} is not a finite number")
    if not is_int(e["pid"]) or not is_int(e["tid"]):
        problems.append(f"{where}: pid and tid must be integers")
    if "cat" in e and not isinstance(e["cat"], str):
        problems.append(f"{where}: cat is not a string")
    if "args" in e and not isinstance(e["args"], dict):
        problems.append(f"{where}: args is not an object")
        return False
    ph = e["ph"]
    if ph == "X":
        if not is_num(e.get("dur")) or e["dur"] < 0:
            problems.append(f"{where}: dur {e.get('dur')!r} is not a finite number >= 0")
    elif ph in ("i", "I"):
        if e.get("s") not in ("g", "p", "t"):
            problems.append(f"{where}: instant event without a scope s (g, p or t)")
    elif ph == "C":
        args = e.get("args")
        if not args or not all(is_num(v) for v in args.values()):
            problems.append(f"{where}: a counter's args must be numbers")
    elif ph == "M":
        key = META.get(e["name"])
        args = e.get("args", {})
        if key is None:
            problems.append(f"{where}: unknown metadata event")
        elif key == "sort_index" and not is_int(args.get(key)):
            problems.append(f"{where}: args.sort_index must be an integer")
        elif key != "sort_index" and not isinstance(args.get(key), str):
            problems.append(f"{where}: args.{key} must be a string")
    elif ph not in ("B", "E"):
        problems.append(f"{where}: phase {ph!r} is not one the report writes")
    return len(problems) == before


def check(doc):
    problems = []
    if isinstance(doc, dict):
        events = doc.get("traceEvents")
        if doc.get("displayTimeUnit", "ms") not in ("ms", "ns"):
            problems.append("displayTimeUnit is neither ms nor ns")
    else:
        events = doc
    if not isinstance(events, list):
        return problems + ["no list of events (an array, or an object with traceEvents)"]
    good = [e for i, e in enumerate(events) if check_event(i, e, problems)]

    open_b = defaultdict(list)
    last_ts = {}
    slices = defaultdict(list)
    pids, tracks = set(), set()
    names = Counter()
    for e in good:
        ph, track = e["ph"], (e["pid"], e["tid"])
        if ph == "M":
            if e["name"] == "process_name":
                names[("p", e["pid"])] += 1
            elif e["name"] == "thread_name":
                names[("t", track)] += 1
            continue
        pids.add(e["pid"])
        if ph in ("B", "E"):
            if track in last_ts and e["ts"] < last_ts[track]:
                problems.append(f"{ph} {e['name']!r} on {track}: ts {e['ts']} goes back "
                                f"(previous {last_ts[track]})")
            last_ts[track] = e["ts"]
            if ph == "B":
                open_b[track].append(e["name"])
            elif not open_b[track]:
                problems.append(f"E {e['name']!r} on {track} closes nothing")
            else:
                open_b[track].pop()
        if ph in ("B", "E", "X", "i", "I"):
            tracks.add(track)
        if ph == "X":
            start = round(e["ts"] * 1000)
            slices[track].append((start, start + round(e["dur"] * 1000), e["name"]))
    for track, names_open in open_b.items():
        if names_open:
            problems.append(f"B {names_open[-1]!r} on {track} is never closed")
    for track, v in slices.items():
        v.sort()
        prev = None
        for start, end, name in v:
            if prev is not None and start < prev[0]:
                problems.append(f"X {name!r} on {track} [{start / 1000:.3f}, {end / 1000:.3f}] "
                                f"overlaps {prev[1]!r} (ends {prev[0] / 1000:.3f}) in one lane")
                break
            if prev is None or end > prev[0]:
                prev = (end, name)
    for pid in sorted(pids):
        if names[("p", pid)] != 1:
            problems.append(f"pid {pid}: {names[('p', pid)]} process_name events, not one")
    for track in sorted(tracks):
        if names[("t", track)] != 1:
            problems.append(f"track {track}: {names[('t', track)]} thread_name events, not one")
    return problems


def main():
    if len(sys.argv) != 2:
        print("usage: chrome_trace_check.py FILE")
        return 2
    try:
        with open(sys.argv[1]) as f:
            doc = json.load(f, parse_constant=reject_constant)
    except (OSError, ValueError) as err:
        print(f"{sys.argv[1]}: {err}")
        return 1
    problems = check(doc)
    for p in problems[:20]:
        print(p)
    if len(problems) > 20:
        print(f"... and {len(problems) - 20} more")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
