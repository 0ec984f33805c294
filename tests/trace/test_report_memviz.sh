#!/usr/bin/env bash
# tests/trace/test_report_memviz.sh — shim-report memviz: the pickled memory snapshot of
# torch.cuda.memory._dump_snapshot for pytorch.org/memory_viz. On traces trace_gen writes (known
# contents: every event and the segments at the end of its memviz scenario, slabs, a truncated
# trace, a trace of format 1.0) and on traces libshim wrote for train_sim on the simulated device
# (record mode in each allocation mode, auto mode with slabs and moves), memviz_check.py loads
# the file with Python's pickle and checks its structure, the viewer's own walks and the totals
# against summary --json and allocs --json. Then the errors: an output that cannot be written,
# a missing trace, bad usage.
# Prints "ok - NAME" / "not ok - NAME" lines (tests/run_tests.sh counts them).
set -u
source "$(dirname "$0")/../shim/shim_env.sh"
source "$root/tests/trace/report_checks.sh"
plan $((230 + $([ -w /dev/full ] && echo 2 || echo 0)))
CHECK="$root/tests/trace/memviz_check.py"

# snap FILE PYTHON-EXPRESSION over d (the unpickled snapshot): true when the expression is.
snap() { python3 -c "import pickle,sys; d=pickle.load(open(sys.argv[1],'rb')); sys.exit(0 if ($2) else 1)" "$1"; }
# memviz NAME [--slabs N M]: the snapshot of $work/NAME.trace, checked by memviz_check.py
# against the trace's summary and allocations.
memviz() {
    local name=$1
    shift
    "$REPORT" memviz -o "$work/$name.pickle" "$work/$name.trace" 2>"$work/$name.err"
    check "$name: memviz exits 0" [ $? -eq 0 ]
    "$REPORT" summary --json "$work/$name.trace" >"$work/$name.sum.json" 2>/dev/null
    "$REPORT" allocs --json "$work/$name.trace" >"$work/$name.allocs.json" 2>/dev/null
    python3 "$CHECK" "$name" "$work/$name.pickle" "$work/$name.sum.json" "$work/$name.allocs.json" "$@" ||
        failures=$((failures + 1))
}

# ---- traces with known contents ----
for scenario in synthetic moves memviz threads plan empty; do
    "$GEN" "$scenario" "$work/$scenario.trace"
done
memviz synthetic --slabs 0 0
memviz moves --slabs 1 6 # the slab holds 11, 12, 13, 14, 17, 18; 1, 2 and 15 (past it) are not
memviz memviz --slabs 2 4
memviz threads --slabs 0 0
memviz plan --slabs 0 0
memviz empty --slabs 0 0
check "synthetic: nothing on stderr for a complete trace" [ ! -s "$work/synthetic.err" ]
check "empty: an empty history and no segments" snap "$work/empty.pickle" \
    "d['device_traces'] == [[]] and d['segments'] == []"

# The memviz scenario, event by event (addresses from 0x7f0000000000): the pinned host allocation,
# the zero-byte one and the unmatched free give nothing; slab 100 is freed while 12 lives, so its
# segment goes with 12; slab 101 takes the same range; id 30 allocated again ends the first one.
M="$work/memviz.pickle"
check "memviz scenario: every event, in order" snap "$M" \
    "[(e['action'], e['addr'] - 0x7f0000000000, e['size'] >> 10, e['stream']) \
      for e in d['device_traces'][0]] == [ \
      ('segment_alloc', 0, 4096, 0), ('alloc', 0, 4096, 0), \
      ('segment_alloc', 0x400000, 2048, 0x5000), ('alloc', 0x400000, 2048, 0x5000), \
      ('free_requested', 0x400000, 2048, 0x5000), ('free_completed', 0x400000, 2048, 0x5000), \
      ('segment_free', 0x400000, 2048, 0x5000), \
      ('segment_alloc', 0x1000000000, 2048, 0), \
      ('alloc', 0x1000000000, 64, 0x5000), ('alloc', 0x1000010000, 128, 0x5000), \
      ('free_requested', 0x1000000000, 64, 0x5000), ('free_completed', 0x1000000000, 64, 0x5000), \
      ('free_requested', 0x1000010000, 128, 0x5000), ('free_completed', 0x1000010000, 128, 0x5000), \
      ('segment_free', 0x1000000000, 2048, 0), \
      ('segment_alloc', 0x1000000000, 2048, 0), \
      ('alloc', 0x1000020000, 64, 0x5000), ('alloc', 0x1000100000, 256, 0x5000), \
      ('segment_alloc', 0x3000000000, 2048, 0), ('alloc', 0x3000000000, 2048, 0), \
      ('free_requested', 0x3000000000, 2048, 0), ('free_completed', 0x3000000000, 2048, 0), \
      ('segment_free', 0x3000000000, 2048, 0), \
      ('segment_alloc', 0x3000200000, 2048, 0), ('alloc', 0x3000200000, 2048, 0), \
      ('segment_alloc', 0x2000000000, 6144, 0x5000), ('alloc', 0x2000000000, 6144, 0x5000), \
      ('free_requested', 0x2000000000, 6144, 0x5000), ('free_completed', 0x2000000000, 6144, 0x5000), \
      ('segment_free', 0x2000000000, 6144, 0x5000)]"
check "memviz scenario: the segments at the end, a slab's gaps as inactive blocks" snap "$M" \
    "[(s['address'] - 0x7f0000000000, s['total_size'] >> 10, s['allocated_size'] >> 10, \
       s['segment_type'], [(b['address'] - s['address'], b['size'] >> 10, b['state']) \
       for b in s['blocks']]) for s in d['segments']] == [ \
      (0, 4096, 4096, 'large', [(0, 4096, 'active_allocated')]), \
      (0x1000000000, 2048, 320, 'large', [(0, 128, 'inactive'), (0x20000, 64, 'active_allocated'), \
        (0x30000, 832, 'inactive'), (0x100000, 256, 'active_allocated'), (0x140000, 768, 'inactive')]), \
      (0x3000200000, 2048, 2048, 'large', [(0, 2048, 'active_allocated')])]"
check "memviz scenario: what was left out, counted" snap "$M" \
    "{k: d['libshim'][k] for k in ('allocations', 'frees', 'slabs', 'pinned_host_allocations_left_out', \
      'zero_byte_allocations_left_out', 'unmatched_frees', 'pid', 'rank', 'truncated')} == \
     {'allocations': 9, 'frees': 5, 'slabs': 2, 'pinned_host_allocations_left_out': 1, \
      'zero_byte_allocations_left_out': 1, 'unmatched_frees': 1, 'pid': 4242, 'rank': 3, 'truncated': False}"
# time_us: microseconds of the Unix epoch, from the trace's wall-clock start
check "memviz scenario: time_us is wall-clock time (within a day of now)" snap "$M" \
    "d['libshim']['time_us'] == 'unix epoch' and \
     all(abs(e['time_us'] / 1e6 - __import__('time').time()) < 86400 for e in d['device_traces'][0])"
"$REPORT" memviz "$work/memviz.trace" >"$work/stdout.pickle"
check "memviz without -o writes the same bytes on standard output" cmp -s "$work/stdout.pickle" "$M"

# memviz_check.py itself: a snapshot whose first segment_alloc is gone must fail it
python3 -c "import pickle,sys; d=pickle.load(open(sys.argv[1],'rb')); t=d['device_traces'][0]; \
    t.remove(next(e for e in t if e['action']=='segment_alloc')); \
    pickle.dump(d, open(sys.argv[2],'wb'), protocol=2)" "$M" "$work/broken.pickle"
python3 "$CHECK" broken "$work/broken.pickle" "$work/memviz.sum.json" "$work/memviz.allocs.json" \
    >"$work/broken.out"
check "memviz_check.py fails a snapshot that lost a segment_alloc" [ $? -ne 0 ]
check "... in its replay and the viewer's walk" \
    sh -c "grep -q '^not ok - broken: forward replay' '$work/broken.out' && \
           grep -q '^not ok - broken: Allocator State History' '$work/broken.out'"

# A trace of format 1.0 (no slabs, no moves) and a truncated one
cp "$root/tests/trace/corpus-fuzz_trace/synthetic.trace" "$work/v10.trace"
memviz v10 --slabs 0 0
size=$(wc -c <"$work/synthetic.trace")
head -c $((size - 10)) "$work/synthetic.trace" >"$work/cut.trace"
memviz cut --slabs 0 0
check "truncated: the note on stderr" grep -q "cut.trace: truncated at byte" "$work/cut.err"
check "truncated: the snapshot says so" snap "$work/cut.pickle" "d['libshim']['truncated'] is True"

# ---- traces of train_sim written by libshim ----
ARGS=(--layers 2 --hidden 512 --batch 4 --seq 512 --iters 6)
for mode in exact segments async; do
    rm -f "$work/rec-$mode.trace"
    SHIM_MODE=record SHIM_TRACE_PATH="$work/rec-$mode.trace" LD_PRELOAD="$PRELOAD" \
        "$TRAIN" --mode "$mode" "${ARGS[@]}" >/dev/null 2>"$work/rec-$mode.log"
    check "record $mode: train_sim under libshim wrote a trace" [ -s "$work/rec-$mode.trace" ]
    memviz "rec-$mode" --slabs 0 0
done
# auto mode below the native peak (238 MiB): managed allocations, slabs, moves
rm -f "$work/auto.trace"
SHIM_BUDGET=180MiB SHIM_TRACE_PATH="$work/auto.trace" LD_PRELOAD="$PRELOAD" \
    "$TRAIN" --mode exact "${ARGS[@]}" >/dev/null 2>"$work/auto.log"
check "auto: train_sim under libshim wrote a trace" [ -s "$work/auto.trace" ]
"$REPORT" moves --json "$work/auto.trace" >"$work/auto.moves.json"
slabs=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['totals']['slabs'])" "$work/auto.moves.json")
"$REPORT" allocs --json "$work/auto.trace" >"$work/auto.allocs.json"
# managed allocations up to half a chunk (1 MiB) are packed into slabs (docs/residency.md)
members=$(python3 -c "import json,sys; print(sum(1 for a in json.load(open(sys.argv[1]))['allocations'] \
    if a['kind'] == 'managed' and a['bytes'] <= 1048576))" "$work/auto.allocs.json")
check "auto: the trace has slabs ($slabs, holding $members allocations) and moves" python3 -c \
    "import json,sys; d=json.load(open(sys.argv[1]))['totals']; \
     sys.exit(0 if d['slabs'] > 0 and d['moves'] > 0 and $members > 0 else 1)" \
    "$work/auto.moves.json"
memviz auto --slabs "$slabs" "$members"

# ---- errors ----
T="$work/memviz.trace"
check "an output in a folder that does not exist: exit 1, the path and the reason" \
    fails_with 1 "cannot write $work/no/such/dir/s.pickle: No such file or directory" \
    "$REPORT" memviz -o "$work/no/such/dir/s.pickle" "$T"
check "... and nothing written" [ ! -e "$work/no" ]
check "an output that is a folder: exit 1, the reason" \
    fails_with 1 "cannot write $work: Is a directory" "$REPORT" memviz -o "$work" "$T"
if [ -w /dev/full ]; then
    check "a device as the output: refused (not a regular file), exit 1, the reason" \
        fails_with 1 "cannot write /dev/full: a character device, not a regular file" \
        "$REPORT" memviz -o /dev/full "$T"
    check "... and the device is still there" [ -c /dev/full ]
fi
check "a missing trace: exit 1, its name" \
    fails_with 1 "$work/none.trace: cannot open" "$REPORT" memviz -o "$work/x.pickle" "$work/none.trace"
check "... and no snapshot written" [ ! -e "$work/x.pickle" ]
check "no trace: usage, exit 2" fails_with 2 "usage: shim-report memviz [-o FILE] TRACE" "$REPORT" memviz
check "two traces: usage, exit 2" fails_with 2 "usage: shim-report memviz" "$REPORT" memviz "$T" "$T"
check "an unknown option: usage, exit 2" fails_with 2 "usage: shim-report memviz" "$REPORT" memviz --json "$T"
if command -v script >/dev/null; then # a terminal as standard output (util-linux script)
    script -qec "'$REPORT' memviz '$T'" /dev/null >"$work/tty.out" 2>&1
    check "standard output a terminal and no -o: exit 2, says to give -o" \
        sh -c "[ $? -eq 2 ] && grep -q 'give -o FILE' '$work/tty.out'"
fi
check "shim-report --help lists memviz" sh -c "'$REPORT' --help | grep -q '^  memviz '"

[ "$failures" -eq 0 ]
