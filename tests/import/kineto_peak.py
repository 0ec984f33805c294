#!/usr/bin/env python3
"""tests/import/kineto_peak.py — an independent reckoning of an imported Kineto step's native
peak, for test_import.sh: the GPU's allocated bytes (the trace's own `Total Allocated`, not the
importer's pairing of Addr and Bytes) at each kernel launch of the step, the largest of them.

usage: kineto_peak.py TRACE.json[.gz] [STEP]   prints: PEAK NKERNELS
Without annotations the step is found from the pattern of kernel names (pattern_step).
At a launch at time L the allocated bytes are the Total Allocated after the last [memory] event
of the GPU before L, plus what is allocated at L itself (an allocation made in the same
microsecond as a launch is taken to be for it, a free in that microsecond to come after it)."""
import bisect
import gzip
import json
import sys
from collections import Counter


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    doc = json.loads(raw)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def pattern_step(kernels, device, launch_of):
    """The step of a trace without annotations, by the rule of tools/import/IMPORT.md, written
    anew: kernel names in launch order; for each period p, how far back every name equals the
    one p later; the smallest p reaching back furthest with two whole periods; its phase the
    launch after the longest summed host pause; the last whole occurrence another follows.
    Returns its launch window, or the whole trace."""
    seq = sorted((launch_of.get(k["args"].get("correlation"), k["ts"]), k["name"])
                 for k in kernels if k["args"].get("device", 0) == device)
    names = [n for _, n in seq]
    n, best = len(names), None
    for p in range(1, n // 2 + 1):
        i = n - p
        while i > 0 and names[i - 1] == names[i - 1 + p]:
            i -= 1
        if n - i >= 2 * p and (best is None or i < best[1]):
            best = (p, i)
    if best is None:
        return float("-inf"), float("inf")
    p, frm = best
    pause = [0.0] * p
    for i in range(frm + 1, n):
        pause[(i - frm) % p] += seq[i][0] - seq[i - 1][0]
    first = frm + max(range(p), key=lambda j: (pause[j], -j))
    while first + 2 * p < n:
        first += p
    return seq[first][0], seq[first + p][0]


def main():
    events = load(sys.argv[1])
    want = int(sys.argv[2]) if len(sys.argv) > 2 else None
    kernels = [e for e in events if e.get("cat") == "kernel"]
    device = Counter(e["args"].get("device", 0) for e in kernels).most_common(1)[0][0]
    steps = sorted((e["ts"], e["ts"] + e["dur"], int(e["name"].split("#")[1]))
                   for e in events if str(e.get("name", "")).startswith("ProfilerStep#")
                   and not str(e.get("cat", "")).startswith("gpu_"))
    if want is not None:
        start, end, _ = next(s for s in steps if s[2] == want)
    elif len(steps) >= 2:
        start, end, _ = steps[-2]
    elif steps:
        start, end, _ = steps[0]
    launch_of = {e["args"]["correlation"]: e["ts"] for e in events
                 if e.get("cat") in ("cuda_runtime", "cuda_driver")}
    if not steps:
        start, end = pattern_step(kernels, device, launch_of)
    launches = []
    for k in kernels:
        if k["args"].get("device", 0) != device:
            continue
        t = launch_of.get(k["args"].get("correlation"), k["ts"])
        if start <= t < end:
            launches.append(t)
    mem = [e for e in events if e.get("name") == "[memory]"
           and e["args"].get("Device Type", 1) == 1 and e["args"].get("Device Id", device) == device
           and e["args"]["Bytes"] != 0]
    mem.sort(key=lambda e: e["ts"])  # stable: file order within a microsecond
    if not mem:
        print(0, len(launches))
        return
    ts = [e["ts"] for e in mem]
    peak = 0
    for t in launches:
        i = bisect.bisect_left(ts, t)  # events before t: mem[:i]
        total = mem[i - 1]["args"]["Total Allocated"] if i else \
            mem[0]["args"]["Total Allocated"] - mem[0]["args"]["Bytes"]
        j = i
        while j < len(mem) and ts[j] == t:
            total += max(mem[j]["args"]["Bytes"], 0)
            j += 1
        peak = max(peak, total)
    print(peak, len(launches))


main()
