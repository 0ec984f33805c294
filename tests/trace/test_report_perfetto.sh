#!/usr/bin/env bash
# tests/trace/test_report_perfetto.sh — shim-report perfetto against the Chrome trace event
# format (chrome_trace_check.py: the fields each phase needs, numbers as numbers, nested slices,
# B/E order, named processes and tracks) on traces trace_gen writes and on traces libshim wrote
# for train_sim (record mode, and auto mode with moves and stalls); the processes of several
# traces given at once (one host and one GPU process per rank, distinct pids, names, order, times
# aligned on the wall clock); the checker failing broken files; and the errors.
# Prints "ok - NAME" / "not ok - NAME" lines (tests/run_tests.sh counts them).
set -u
source "$(dirname "$0")/../shim/shim_env.sh"
source "$root/tests/trace/report_checks.sh"
plan 54
CHECKER="$root/tests/trace/chrome_trace_check.py"

# json FILE PYTHON-EXPRESSION over d (the parsed file) and ev (its events): true when it is.
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); ev=d['traceEvents']; sys.exit(0 if ($2) else 1)" "$1"; }
# valid FILE: chrome_trace_check.py passes it (its problems are printed as comments otherwise).
valid() {
    python3 "$CHECKER" "$1" >"$work/check.out" && return 0
    sed 's/^/    # /' "$work/check.out" | head -10
    return 1
}
# The moves and stalls of a file as a Python expression: (name, pid, track name) of each slice of
# category residency.
residency="[(e['name'], e['pid'], [m['args']['name'] for m in ev if m['ph'] == 'M' \
    and m['name'] == 'thread_name' and (m['pid'], m['tid']) == (e['pid'], e['tid'])][0]) \
    for e in ev if e.get('cat') == 'residency']"

# ---- traces with known contents ----
for scenario in synthetic moves memviz threads plan empty devices lanes; do
    "$GEN" "$scenario" "$work/$scenario.trace"
    "$REPORT" perfetto -o "$work/$scenario.json" "$work/$scenario.trace"
    check "$scenario: perfetto exits 0" [ $? -eq 0 ]
    check "$scenario: the Chrome trace event format" valid "$work/$scenario.json"
done
S="$work/synthetic.json"
check "synthetic: a host process (pid 4242) and a GPU process, named with the rank" json "$S" \
    "sorted((e['pid'], e['args']['name']) for e in ev if e['name'] == 'process_name') == \
     [(4242, 'trace_gen --synthetic (rank 3, pid 4242)'), (4194304, 'GPU 0 (rank 3)')]"
check "synthetic: the host process first, then its GPU" json "$S" \
    "sorted((e['args']['sort_index'], e['pid']) for e in ev if e['name'] == 'process_sort_index') \
     == [(0, 4242), (1, 4194304)]"
check "synthetic: moves on the GPU's residency tracks, stalls on the host's, each track named" \
    json "$S" "sorted(set($residency)) == [('cancelled eviction', 4194304, 'residency: to host #2'), \
     ('evict', 4194304, 'residency: to host'), ('restore', 4194304, 'residency: to device'), \
     ('stall', 4242, 'residency: stalls')]"
# Allocations on three devices, managed memory (the primary device) on device 1: one GPU process
# per device, each with its own memory counter peaking at summary's per-device peak (before,
# one counter on "GPU 0" summed every device), each stream's kernels and each manager's moves on
# their device's process.
D="$work/devices.json"
"$REPORT" summary --json "$work/devices.trace" >"$work/devices.summary.json"
check "devices: one GPU process per device, named, each after the host" json "$D" \
    "sorted((e['pid'], e['args']['name']) for e in ev if e['name'] == 'process_name') == \
     [(4242, 'trace_gen --synthetic (rank 3, pid 4242)'), (4194304, 'GPU 0 (rank 3)'), \
      (4194305, 'GPU 1 (rank 3)'), (4194306, 'GPU 2 (rank 3)')] and \
     sorted((e['args']['sort_index'], e['pid']) for e in ev if e['name'] == 'process_sort_index') \
     == [(0, 4242), (1, 4194304), (2, 4194305), (3, 4194306)]"
check "devices: each GPU's memory counter peaks at summary --json's peak for its device" \
    python3 -c "
import json, sys
ev = json.load(open(sys.argv[1]))['traceEvents']
devs = json.load(open(sys.argv[2]))['devices']
peak = {}
for e in ev:
    if e['ph'] == 'C' and e['name'] == 'device memory':
        peak[e['pid'] - 4194304] = max(peak.get(e['pid'] - 4194304, 0), e['args']['allocated_bytes'])
want = {d['device']: d['peak_bytes'] for d in devs}
sys.exit(0 if peak == want and len(set(want.values())) == 3 else 1)
" "$D" "$work/devices.summary.json"
check "devices: each stream's kernels on the process of the device whose memory they touch" \
    json "$D" "sorted((e['args']['stream'], e['pid']) for e in ev if e.get('cat') == 'kernel') == \
     [('0x5000', 4194305), ('0x6000', 4194304), ('0x7000', 4194306)]"
# device 1's two evictions overlap (a second lane); device 0's overlaps them on its own track
check "devices: each device's moves on its own process's residency tracks (1.7), named there" \
    json "$D" "sorted(set($residency)) == [('evict', 4194304, 'residency: to host'), \
     ('evict', 4194305, 'residency: to host'), ('evict', 4194305, 'residency: to host #2'), \
     ('restore', 4194305, 'residency: to device'), \
     ('stall', 4242, 'residency: stalls')] and \
     sorted(e['args']['device'] for e in ev if e.get('cat') == 'residency') == [0, 1, 1, 1, 1]"
# 20 evictions that all overlap: 20 lanes (there were 16 at most, the last shared by 5 moves that
# overlapped there); 8 kernels timed at 1000.0006 us, back to back: each ends where the next starts
# (written rounded apart, one ended 1 ns after the next began); a command line longer than a
# process name: whole arguments only.
L="$work/lanes.json"
lanes_each_move_alone() {
    json "$L" "sorted({m['args']['name'] for m in ev if m['ph'] == 'M' and \
        m['name'] == 'thread_name' and m['args']['name'].startswith('residency: to host')}) == \
        sorted(['residency: to host'] + ['residency: to host #%d' % i for i in range(2, 21)]) \
        and len({(e['pid'], e['tid']) for e in ev if e.get('cat') == 'residency'}) == 20"
}
kernels_back_to_back() {
    json "$L" "[round(a['ts'] * 1000) + round(a['dur'] * 1000) - round(b['ts'] * 1000) for a, b in \
        zip(*[sorted((e for e in ev if e.get('cat') == 'kernel'), key=lambda e: e['ts'])[k:] \
        for k in (0, 1)])] == [0] * 7 and all(round(e['dur'] * 1000) == 1000001 \
        for e in ev if e.get('cat') == 'kernel')"
}
process_name_whole_words() {
    json "$L" "[e['args']['name'] for e in ev if e['name'] == 'process_name' and e['pid'] == 4242] \
        == ['python3 -m torch.distributed.run ... (rank 3, pid 4242)']"
}
check "lanes: 20 overlapping moves, 20 lanes, one move each" lanes_each_move_alone
check "lanes: kernels back to back end where the next starts, to the ns" kernels_back_to_back
check "lanes: the process name holds the program and whole arguments" process_name_whole_words
"$REPORT" perfetto "$work/synthetic.trace" >"$work/stdout.json"
check "synthetic: without -o, the same JSON on standard output" cmp -s "$work/stdout.json" "$S"

# ---- traces of train_sim written by libshim ----
ARGS=(--layers 2 --hidden 512 --batch 4 --seq 512 --iters 6)
rm -f "$work/rec.trace" "$work/auto.trace"
SHIM_MODE=record SHIM_TRACE_PATH="$work/rec.trace" LD_PRELOAD="$PRELOAD" \
    "$TRAIN" --mode async "${ARGS[@]}" >/dev/null 2>"$work/rec.log"
# auto mode below the native peak (238 MiB): evictions, restores and the stalls they cause
SHIM_BUDGET=180MiB SHIM_TRACE_PATH="$work/auto.trace" LD_PRELOAD="$PRELOAD" \
    "$TRAIN" --mode exact "${ARGS[@]}" >/dev/null 2>"$work/auto.log"
for name in rec auto; do
    "$REPORT" perfetto -o "$work/$name.json" "$work/$name.trace"
    check "$name: perfetto exits 0" [ $? -eq 0 ]
    check "$name: the Chrome trace event format" valid "$work/$name.json"
done
"$REPORT" summary --json "$work/auto.trace" >"$work/auto.sum.json"
check "auto: every move and stall of the trace is a slice on its own track" python3 -c "
import json, sys
p, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ev = p['traceEvents']
tracks = {(m['pid'], m['tid']): m['args']['name'] for m in ev if m['name'] == 'thread_name'}
res = [e for e in ev if e.get('cat') == 'residency']
kinds = {(e['name'], tracks[(e['pid'], e['tid'])].split(' #')[0]) for e in res}
n = lambda name: sum(e['name'] == name for e in res)
sys.exit(0 if n('evict') == s['evictions'] > 0 and n('restore') == s['restores'] > 0
         and n('stall') == s['stalls'] and kinds <= {('evict', 'residency: to host'),
         ('cancelled eviction', 'residency: to host'), ('restore', 'residency: to device'),
         ('stall', 'residency: stalls')} else 1)" "$work/auto.json" "$work/auto.sum.json"

# ---- several traces: one rank each ----
# synthetic.trace was written first, rec.trace before auto.trace; again.trace is a copy of
# synthetic.trace (the same pid: a rank in another container). Pids stay distinct; times follow
# the wall-clock starts.
cp "$work/synthetic.trace" "$work/again.trace"
M="$work/ranks.json"
"$REPORT" perfetto -o "$M" "$work/auto.trace" "$work/rec.trace" "$work/synthetic.trace" \
    "$work/again.trace"
check "ranks: perfetto of four traces exits 0" [ $? -eq 0 ]
check "ranks: the Chrome trace event format" valid "$M"
check "ranks: eight processes with distinct pids, a host and a GPU per trace" json "$M" \
    "len({e['pid'] for e in ev if e['name'] == 'process_name'}) == 8 and \
     sum(e['args']['name'].startswith('GPU 0 (rank ') for e in ev if e['name'] == 'process_name') == 4"
check "ranks: GPU pids 4194304 + 256 * position; the repeated host pid 4242 moved above them" \
    json "$M" "sorted(e['pid'] for e in ev if e['name'] == 'process_name' and \
     e['args']['name'].startswith(('GPU', 'trace_gen'))) == \
     [4242, 4194304, 4194560, 4194816, 4195072, 4195327]"
check "ranks: ordered as given, each host before its GPU" json "$M" \
    "[e['pid'] for e in sorted((e for e in ev if e['name'] == 'process_sort_index'), \
      key=lambda e: e['args']['sort_index'])][1::2] == [4194304, 4194560, 4194816, 4195072]"
check "ranks: the names carry each trace's rank" json "$M" \
    "sorted(e['args']['name'] for e in ev if e['name'] == 'process_name' and \
     e['args']['name'].startswith('GPU')) == ['GPU 0 (rank 0)'] * 2 + ['GPU 0 (rank 3)'] * 2"
# Times: the earliest trace (synthetic, third) keeps its own times and base; the others' events
# move by one constant each, and rec's host events all come before auto's.
check "ranks: times aligned on the wall-clock starts" python3 -c "
import json, sys
syn, auto, m = (json.load(open(f)) for f in sys.argv[1:4])
def events(d, pid):
    return sorted((e['name'], e['ts'], e.get('dur')) for e in d['traceEvents']
                  if e['ph'] in ('X', 'i') and e['pid'] == pid)
host = {e['args']['sort_index']: e['pid'] for e in m['traceEvents'] if e['name'] == 'process_sort_index'}
same = events(syn, 4194304) == events(m, 4194816) and m['baseTimeNanoseconds'] == syn['baseTimeNanoseconds']
a, b = events(auto, 4194304), events(m, 4194304)
shift = [y[1] - x[1] for x, y in zip(a, b)]
order = max(e[1] + (e[2] or 0) for e in events(m, host[256])) < min(e[1] for e in events(m, host[0]))
sys.exit(0 if same and a and len(a) == len(b) and max(shift) - min(shift) < 0.01 and min(shift) > 0
         and order else 1)
" "$work/synthetic.json" "$work/auto.json" "$M"

# ---- the checker itself fails broken files ----
python3 - "$S" "$work" <<'EOF'
import copy, json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
x = next(i for i, e in enumerate(ev) if e["ph"] == "X")
i = next(i for i, e in enumerate(ev) if e["ph"] == "i")
def bad(name, change):
    b = copy.deepcopy(d)
    change(b["traceEvents"])
    json.dump(b, open(f"{sys.argv[2]}/bad-{name}.json", "w"))
bad("dur", lambda v: v[x].pop("dur"))
bad("ts-string", lambda v: v[x].update(ts=str(v[x]["ts"])))
bad("scope", lambda v: v[i].pop("s"))
bad("overlap", lambda v: v.append(dict(v[x], ts=v[x]["ts"] + v[x]["dur"] / 2, dur=v[x]["dur"] * 2)))
bad("nested", lambda v: v.append(dict(v[x], ts=v[x]["ts"] + 0.001, dur=v[x]["dur"] / 2)))
bad("by-1ns", lambda v: v.append(dict(v[x], ts=v[x]["ts"] + v[x]["dur"] - 0.001, dur=1.0)))
bad("unnamed", lambda v: v.append(dict(v[x], tid=999)))
bad("be", lambda v: v.extend([dict(ph="B", name="b", pid=1, tid=1, ts=5),
                              dict(ph="E", name="b", pid=1, tid=1, ts=4)]))
bad("meta", lambda v: v.append(dict(ph="M", name="process_name", pid=7, tid=0, ts=0, args={})))
EOF
# broken NAME TEXT: the checker fails bad-NAME.json, saying TEXT.
broken() {
    python3 "$CHECKER" "$work/bad-$1.json" >"$work/bad.out" && return 1
    grep -qF -- "$2" "$work/bad.out"
}
check "checker: an X event without dur fails" broken dur "dur None is not a finite number"
check "checker: a ts given as a string fails" broken ts-string "is not a finite number"
check "checker: an instant event without its scope fails" broken scope "without a scope"
check "checker: slices of a track that overlap without nesting fail" broken overlap "in one lane"
check "checker: a slice inside another of its lane fails" broken nested "in one lane"
check "checker: a slice that starts 1 ns before the previous one ends fails" broken by-1ns "in one lane"
check "checker: a track without thread_name fails" broken unnamed "0 thread_name events"
check "checker: B/E going back in time fails" broken be "goes back"
check "checker: process_name without args.name fails" broken meta "args.name must be a string"
printf '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": NaN, "dur": 1}]}' \
    >"$work/nan.json"
check "checker: NaN is not JSON" sh -c "! python3 '$CHECKER' '$work/nan.json' >/dev/null"

# ---- errors ----
T="$work/synthetic.trace"
check "an output that cannot be written: exit 1, the path and the reason" \
    fails_with 1 "cannot write $work/no/dir/p.json: No such file or directory" \
    "$REPORT" perfetto -o "$work/no/dir/p.json" "$T"
check "a missing trace among several: exit 1, its name" \
    fails_with 1 "$work/none.trace: cannot open" "$REPORT" perfetto -o "$work/x.json" "$T" "$work/none.trace"
check "... and no output written" [ ! -e "$work/x.json" ]
check "no trace: usage, exit 2" fails_with 2 "usage: shim-report perfetto [-o FILE] TRACE..." \
    "$REPORT" perfetto
check "an unknown option: usage, exit 2" fails_with 2 "usage: shim-report perfetto" \
    "$REPORT" perfetto --json "$T"

[ "$failures" -eq 0 ]
