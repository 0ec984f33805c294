#!/usr/bin/env bash
# End-to-end checks of shim-report's trace subcommands on traces written by the real writer
# (trace_gen): summary text and --json figures of a synthetic run with known steps, launches,
# allocations and kernel times, and residency budget, moves and stalls; kernels; allocs; moves
# (residency transitions paired into moves, slabs, totals) as text and JSON; the in-process
# plan and what it did per step (summary's plan section, text and JSON); perfetto
# JSON parsed by python3; a trace of format 1.0; a truncated trace; a corrupt chunk; usage errors.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/trace/report_checks.sh"
plan 161
build="$root/${BUILD:-build}"

"$GEN" synthetic "$work/syn.trace"
check "trace_gen writes the synthetic trace" [ -s "$work/syn.trace" ]

# ---- summary, text ----
"$REPORT" summary "$work/syn.trace" >"$work/sum" 2>"$work/err"
check "summary: exit 0" [ $? -eq 0 ]
check "summary: nothing on stderr for a complete trace" [ ! -s "$work/err" ]
for line in "status: complete" "records: 83" "iterations: 4" "warmup_launches: 3" \
    "launches: 24" "launches_per_iteration: 5" "allocations: 7" "allocations_per_iteration: 1" \
    "frees: 5" "copies: 2" "syncs: 6" "graph_launches: 1" "kernel_times: 20" \
    "peak_device_bytes: 14680064 (14.0 MiB)" "peak_host_pinned_bytes: 1048576" \
    "device_bytes_at_end: 4194304" "pid: 4242" "rank: 3" "command: trace_gen --synthetic" \
    "notes: 1" "note: synthetic trace: done"; do
    check "summary: '$line'" has_line "$work/sum" "$line"
done
# residency: a budget of 12 MiB (host 64 MiB, device 80 GiB); evictions of 4 MiB (warm-up, in no
# step), 4 MiB (step 1) and 2 MiB (step 2); a cancelled eviction of 4 MiB (step 2), whose copy
# counts in bytes_to_host; restores of 4 MiB (step 1) and 2 MiB (step 2); stalls of 250 us
# (step 1) and 1000 us (step 2)
for line in "budget_bytes: 12582912 (12.0 MiB)" "host_budget_bytes: 67108864 (64.0 MiB)" \
    "device_total_bytes: 85899345920" "evictions: 3" "cancelled_evictions: 1 (4194304 bytes)" \
    "restores: 2" "bytes_to_host: 14680064 (14.0 MiB)" "bytes_to_device: 6291456 (6.0 MiB)" \
    "stalls: 2" "stall_us: 1250.000" \
    "    step evictions cancelled restores  bytes_to_host bytes_to_device     stall_us" \
    "       0         0         0        0              0               0        0.000" \
    "       1         1         0        1        4194304         4194304      250.000" \
    "       2         1         1        1        6291456         2097152     1000.000" \
    "       3         0         0        0              0               0        0.000"; do
    check "summary: '$line'" has_line "$work/sum" "$line"
done
check "summary: the residency table follows the steps table" \
    sh -c "grep -A7 '^steps:' '$work/sum' | tail -n 1 | grep -qx 'residency by step:'"
check "summary: step 2 holds the 8 MiB temporary (peak 14 MiB)" \
    grep -qE '^ +2 +13 +5 +2 +2 +14680064 ' "$work/sum"
check "summary: the launch after the last step's mark belongs to no step" \
    grep -qE '^ +3 +18 +5 +1 +1 +6291456 ' "$work/sum"
check "summary: the largest allocation comes first, by its name (no id: allocs has them)" \
    sh -c "grep -A2 '^top allocations' '$work/sum' | tail -n 1 | grep -qE '^ +8388608 +plain .*  8\.0 MiB [a-z/ -]+ \(.*\)$'"
check "summary: top kernel is gemm with 800 us over 11 launches, 8 timed" \
    sh -c "grep -A2 '^top kernels' '$work/sum' | tail -n 1 | grep -qE '^ +800\.000 +11 +8 +100\.000  gemm$'"

# ---- summary --json ----
"$REPORT" summary --json "$work/syn.trace" >"$work/sum.json"
check "summary --json: exit 0" [ $? -eq 0 ]
check "summary --json: every note's text" json "$work/sum.json" \
    "d['notes'] == ['synthetic trace: done']"
check "summary --json: counts" json "$work/sum.json" \
    "d['iterations']==4 and d['launches']==24 and d['allocations']==7 and d['frees']==5 \
     and d['peak_device_bytes']==14680064 and d['launches_per_iteration']==5 \
     and d['warmup_launches']==3 and d['complete'] is True and d['truncated'] is False"
check "summary --json: kernels by time with launches and total_us" json "$work/sum.json" \
    "[(k['name'],k['launches'],k['total_us']) for k in d['kernels']] == \
     [('gemm',11,800.0),('softmax_kernel<float>',4,200.0),('relu',8,80.0),('loss \"readback\"',1,0.0)]"
check "summary --json: per-step launches, allocations and peaks" json "$work/sum.json" \
    "[(s['step'],s['first_seq'],s['launches'],s['allocations'],s['peak_device_bytes']) \
      for s in d['steps']] == [(0,3,5,1,6291456),(1,8,5,1,6291456),(2,13,5,2,14680064),(3,18,5,1,6291456)]"
check "summary --json: residency totals" json "$work/sum.json" \
    "(d['budget_bytes'],d['host_budget_bytes'],d['device_total_bytes'],d['evictions'], \
      d['restores'],d['cancelled_evictions'],d['bytes_to_host'],d['bytes_to_device'],d['stalls'], \
      d['stall_us']) == (12582912,67108864,85899345920,3,2,1,14680064,6291456,2,1250.0)"
check "summary --json: residency per step (the warm-up eviction in none)" json "$work/sum.json" \
    "[(s['evictions'],s['cancelled_evictions'],s['restores'],s['bytes_to_host'], \
       s['bytes_to_device'],s['stall_us']) for s in d['steps']] == [(0,0,0,0,0,0.0), \
      (1,0,1,4194304,4194304,250.0),(1,1,1,6291456,2097152,1000.0),(0,0,0,0,0,0.0)]"
check "summary --json --top 2: two top allocations" sh -c \
    "'$REPORT' summary --json --top 2 '$work/syn.trace' >'$work/top2.json'"
check "summary --json --top 2: the 8 MiB and the 4 MiB ones" json "$work/top2.json" \
    "[a['alloc_id'] for a in d['top_allocations']] == [99, 1]"

# ---- kernels and allocs ----
"$REPORT" kernels "$work/syn.trace" >"$work/kern"
check "kernels: one line per kernel plus the header" [ "$(wc -l <"$work/kern")" -eq 5 ]
check "kernels: relu's min and max" grep -qE '^ +80\.000 +8 +8 +10\.000 +10\.000 +10\.000  relu$' \
    "$work/kern"
"$REPORT" kernels --json "$work/syn.trace" >"$work/kern.json"
check "kernels --json: softmax mean 50 us" json "$work/kern.json" \
    "[k['mean_us'] for k in d['kernels'] if k['name']=='softmax_kernel<float>'] == [50.0]"
"$REPORT" allocs "$work/syn.trace" >"$work/allocs"
check "allocs: seven allocations plus the header" [ "$(wc -l <"$work/allocs")" -eq 8 ]
check "allocs: the weights are touched by 11 launches and never freed" \
    grep -qE '^ +1 +4194304 +plain +0 +0x7f1000000000 +0x0 +-1 +[0-9.]+ +- +11  4\.0 MiB weights/state \(gemm\)$' "$work/allocs"
"$REPORT" allocs --json "$work/syn.trace" >"$work/allocs.json"
check "allocs --json: the 8 MiB one is made in step 2 and freed" json "$work/allocs.json" \
    "[(a['step'],a['freed_ms'] is not None) for a in d['allocations'] if a['alloc_id']==99] == [(2,True)]"
# Allocations on three devices (trace_gen devices): each one's device, in text and JSON.
"$GEN" devices "$work/dev-allocs.trace"
"$REPORT" allocs --json "$work/dev-allocs.trace" >"$work/dev-allocs.json"
"$REPORT" allocs "$work/dev-allocs.trace" >"$work/dev-allocs"
check "allocs: each allocation's device (two on each of 0, 1 and 2), text and JSON alike" \
    json "$work/dev-allocs.json" "sorted(a['device'] for a in d['allocations']) == [0, 0, 1, 1, 2, 2] \
     and sorted(a['device'] for a in d['allocations']) == sorted(int(l.split()[3]) for l in \
     open('$work/dev-allocs').read().splitlines()[1:])"

# ---- moves: residency transitions (format 1.2), trace_gen's moves scenario ----
"$GEN" moves "$work/mv.trace"
"$REPORT" moves "$work/mv.trace" >"$work/mv" 2>"$work/mv.err"
check "moves: exit 0" [ $? -eq 0 ]
check "moves: nothing on stderr" [ ! -s "$work/mv.err" ]
check "moves: the header" has_line "$work/mv" \
    "unit                         device direction          bytes reason    outcome            stream        seq       start_us         end_us       dur_us        score   next_use  name"
check "moves: header, eight rows and the totals line" [ "$(wc -l <"$work/mv")" -eq 10 ]
num='[0-9]+\.[0-9]{3}'
# row N (0 for the first move) must match the extended regex
row() { sed -n "$(($1 + 2))p" "$work/mv" | grep -qE "$2"; }
check "moves: 0, a budget eviction paired with the mover's completion, score and next use" \
    row 0 "^1 +0 +to host +4194304 +budget +done +0x5000 +10 +$num +$num +$num +900 +40  [0-9.]+ [KM]iB [a-z/ -]+ \([^)]*\)$"
check "moves: 1, the slab and its 3 live allocations (not the freed one, not the one past it)" \
    row 1 "^slab 100 \(3 allocations\) +0 +to host +2097152 +planned +done +0x5000 +12 +$num +$num +$num +- +-$"
check "moves: 2, a cancelled budget eviction; its next use unknown" \
    row 2 "^2 +0 +to host +2097152 +budget +cancelled +0x5000 +13 +$num +$num +$num +500 +unknown  [0-9.]+ [KM]iB [a-z/ -]+ \([^)]*\)$"
check "moves: 3, a restore on demand (no score for a restore)" \
    row 3 "^1 +0 +to device +4194304 +demand +done +0x5000 +20 +$num +$num +$num +- +-  [0-9.]+ [KM]iB [a-z/ -]+ \([^)]*\)$"
check "moves: 4, the slab prefetched: its members changed to 4" \
    row 4 "^slab 100 \(4 allocations\) +0 +to device +2097152 +prefetch +done +0x5000 +25 +$num +$num +$num +- +-$"
check "moves: 5, an eviction undone after a driver error" \
    row 5 "^2 +0 +to host +2097152 +budget +error +0x5000 +30 +$num +$num +$num +7 +50  [0-9.]+ [KM]iB [a-z/ -]+ \([^)]*\)$"
check "moves: 6, an eviction ended by the program's free" \
    row 6 "^2 +0 +to host +2097152 +budget +freed +0x5000 +32 +$num +$num +$num +3 +33  [0-9.]+ [KM]iB [a-z/ -]+ \([^)]*\)$"
check "moves: 7, unfinished at the trace's end: no end time, no duration" \
    row 7 "^slab 100 \(3 allocations\) +0 +to host +2097152 +planned +unfinished +0x5000 +35 +$num +- +- +- +-$"
check "moves: the totals line" has_line "$work/mv" \
    "total: 8 moves (6 to the host, 2 to the device): by reason budget 4, demand 1, prefetch 1, planned 2; by outcome done 4, cancelled 1, error 1, freed 1, unfinished 1; bytes to host: 14680064; bytes to device: 6291456; by device: 0 8"

"$REPORT" moves --json "$work/mv.trace" >"$work/mv.json"
check "moves --json: exit 0" [ $? -eq 0 ]
mv="d['moves']"
check "moves --json: units, directions, reasons and outcomes in start order" json "$work/mv.json" \
    "[(m['unit'],m['direction'],m['event'],m['reason'],m['outcome']) for m in $mv] == [ \
      ('1','to host','evict','budget','done'), \
      ('slab 100 (3 allocations)','to host','evict','planned','done'), \
      ('2','to host','evict','budget','cancelled'), \
      ('1','to device','restore','demand','done'), \
      ('slab 100 (4 allocations)','to device','restore','prefetch','done'), \
      ('2','to host','evict','budget','error'), ('2','to host','evict','budget','freed'), \
      ('slab 100 (3 allocations)','to host','evict','planned','unfinished')]"
check "moves --json: unit ids, slab flags and member counts" json "$work/mv.json" \
    "[(m['unit_id'],m['slab'],m['allocations']) for m in $mv] == [(1,False,None),(100,True,3), \
      (2,False,None),(1,False,None),(100,True,4),(2,False,None),(2,False,None),(100,True,3)]"
check "moves --json: bytes, streams and seqs of the starting transitions" json "$work/mv.json" \
    "[(m['bytes'],m['stream'],m['seq']) for m in $mv] == [(4194304,'0x5000',10), \
      (2097152,'0x5000',12),(2097152,'0x5000',13),(4194304,'0x5000',20),(2097152,'0x5000',25), \
      (2097152,'0x5000',30),(2097152,'0x5000',32),(2097152,'0x5000',35)]"
check "moves --json: each move paired with the transition that ended it" json "$work/mv.json" \
    "[(m['end_event'],m['end_reason'],m['end_seq']) for m in $mv] == [('copy_done','budget',10), \
      ('copy_done','planned',12),('cancel','demand',14),('copy_done','demand',20), \
      ('copy_done','prefetch',25),('error','error',30),('free','freed',33),(None,None,None)]"
check "moves --json: score and next use for budget evictions only" json "$work/mv.json" \
    "[(m['score'],m['next_use']) for m in $mv] == [(900,40),(None,None),(500,None),(None,None), \
      (None,None),(7,50),(3,33),(None,None)]"
# durations: at least what trace_gen waited, equal to end - start, and each move over before
# the next one starts (a wrong pairing would end a move at a later move's end)
check "moves --json: durations are at least the generator's waits" json "$work/mv.json" \
    "all(m['duration_us'] >= w for m, w in zip($mv, [300,200,100,400,150,50,80]))"
check "moves --json: duration is end minus start" json "$work/mv.json" \
    "all(abs(m['end_us']-m['start_us']-m['duration_us']) < 0.002 for m in $mv[:7])"
check "moves --json: every move ends before the next one starts" json "$work/mv.json" \
    "all(0 < a['start_us'] < a['end_us'] <= b['start_us'] for a, b in zip($mv[:7], $mv[1:]))"
check "moves --json: the unfinished move has no end" json "$work/mv.json" \
    "(lambda m: m['end_us'] is None and m['duration_us'] is None and m['start_us'] > 0)($mv[7])"
check "moves --json: the transitions that are not moves, with their reasons" json "$work/mv.json" \
    "[(x['event'],x['unit_id'],x['from'],x['to'],x['reason'],x['stream'],x['seq'],x['move']) \
      for x in d['transitions']] == [('cancel',2,'evicting','device','demand','0x6000',14,2), \
      ('error',2,'evicting','device','error','0x0',30,5), \
      ('error',1,'device','device','error','0x5000',31,None), \
      ('free',2,'evicting','none','freed','0x5000',33,6), \
      ('free',1,'device','none','freed','0x5000',34,None)]"
check "moves --json: a move ends at the time of the transition that ended it" json "$work/mv.json" \
    "all($mv[x['move']]['end_us'] == x['time_us'] for x in d['transitions'] if x['move'] is not None)"
check "moves --json: totals" json "$work/mv.json" \
    "d['totals'] == {'moves': 8, 'transitions': 17, 'slabs': 1, 'by_reason': {'budget': 4, \
      'demand': 1, 'prefetch': 1, 'cancelled': 0, 'planned': 2, 'error': 0, 'freed': 0, \
      'other': 0}, 'by_outcome': {'done': 4, 'cancelled': 1, 'error': 1, 'freed': 1, \
      'superseded': 0, 'unfinished': 1}, 'bytes_to_host': 14680064, 'bytes_to_device': 6291456, \
      'by_device': {'0': 8}}"
check "moves --json: every move has the documented keys" json "$work/mv.json" \
    "all(sorted(m) == sorted(['unit_id','unit','name','slab','allocations','device','direction','event','bytes', \
      'reason','outcome','stream','seq','start_us','end_us','duration_us','end_event', \
      'end_reason','end_seq','score','next_use']) for m in $mv)"
# an allocation made on the host (format 1.10): its create_host transition is listed (none to
# host, with its size), and its restore is a move from the host like any other
"$GEN" hostmade "$work/hm.trace"
"$REPORT" moves --json "$work/hm.trace" >"$work/hm.json"
check "moves --json, made on the host: exit 0" [ $? -eq 0 ]
check "moves --json, made on the host: the create_host transition, none to host" json "$work/hm.json" \
    "[(x['event'],x['unit_id'],x['from'],x['to'],x['seq'],x['move']) for x in d['transitions']] \
      == [('create_host',3,'none','host',5,None),('free',3,'device','none',7,None)]"
check "moves --json, made on the host: one restore on demand, done" json "$work/hm.json" \
    "[(m['unit_id'],m['direction'],m['reason'],m['outcome'],m['bytes']) for m in d['moves']] \
      == [(3,'to device','demand','done',2097152)]"
# traces before format 1.2 have no transitions: an empty table, and exit 0
for seed in synthetic:1.0 residency:1.1; do
    old=${seed%:*} version=${seed#*:}
    "$REPORT" summary --json "$root/tests/trace/corpus-fuzz_trace/$old.trace" >"$work/old.sum.json"
    check "the $old seed is a trace of format $version" json "$work/old.sum.json" \
        "d['format'] == '$version'"
    "$REPORT" moves "$root/tests/trace/corpus-fuzz_trace/$old.trace" >"$work/old.mv"
    check "moves on the $old seed: exit 0" [ $? -eq 0 ]
    check "moves on the $old seed: header and a zero totals line" sh -c \
        "[ \$(wc -l <'$work/old.mv') -eq 2 ] && tail -n 1 '$work/old.mv' | grep -qxF \
        'total: 0 moves (0 to the host, 0 to the device); bytes to host: 0; bytes to device: 0; by device: none'"
    "$REPORT" moves --json "$root/tests/trace/corpus-fuzz_trace/$old.trace" >"$work/old.mv.json"
    check "moves --json on the $old seed: no moves, no transitions" json "$work/old.mv.json" \
        "d['moves'] == [] and d['transitions'] == [] and d['totals']['moves'] == 0"
done
"$REPORT" moves -o x "$work/mv.trace" 2>"$work/mv.usage"
check "moves -o: not an option of moves, exit 2" [ $? -eq 2 ]
check "moves -o: usage" grep -q '^usage: shim-report moves \[--json\] TRACE$' "$work/mv.usage"

# ---- devices (formats 1.6 to 1.8): trace_gen's devices scenario, three devices, managed memory on
# 1, managers on 1 (budget 12 MiB, 2 evictions, 1 restore) and 0 (5 MiB, 1 eviction) ----
"$GEN" devices "$work/dev.trace"
"$REPORT" summary "$work/dev.trace" >"$work/dev.sum" 2>&1
"$REPORT" summary --json "$work/dev.trace" >"$work/dev.json" 2>&1
check "devices: the figures are the primary device's (1, where managed memory is): peak 10 MiB" \
    has_line "$work/dev.sum" "peak_device_bytes: 10485760 (10.0 MiB)"
check "devices: the text lists three devices, device 1 primary" \
    has_line "$work/dev.sum" "devices: 3 (the device figures above are device 1's)"
check "devices: --json lists each device's allocations, peak, budget and moves; the trace's budget is the primary's" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
keys = ("device", "allocations", "peak_bytes", "budget_bytes", "evictions", "restores",
        "bytes_to_host", "bytes_to_device")
want = [(0, 2, 7 << 20, 5 << 20, 1, 0, 4 << 20, 0),
        (1, 2, 10 << 20, 12 << 20, 2, 1, 10 << 20, 8 << 20),
        (2, 2, (6 << 20) + (64 << 10), 0, 0, 0, 0, 0)]
got = [tuple(x[k] for k in keys) for x in d["devices"]]
stalls = [x["stall_ms"] > 0 for x in d["devices"]]
sys.exit(0 if got == want and stalls == [False, True, False] and d["primary_device"] == 1
         and d["budget_bytes"] == 12 << 20 and d["evictions"] == 3 and d["restores"] == 1
         else 1)' "$work/dev.json"
check "devices: the text table has each device's budget, evictions and restores" \
    has_line "$work/dev.sum" "         1            2           10485760           12582912          2         1"
"$REPORT" moves --json "$work/dev.trace" >"$work/dev.mv.json" 2>&1
check "devices: moves --json gives each move its manager's device, as summary counts them (1.8)" \
    json "$work/dev.mv.json" \
    "[(m['unit_id'],m['device'],m['direction'],m['outcome']) for m in d['moves']] == \
      [(4,1,'to host','done'),(1,1,'to host','done'),(2,0,'to host','done'), \
       (1,1,'to device','done')] and d['totals']['by_device'] == {'0': 1, '1': 3}"
"$REPORT" moves "$work/dev.trace" >"$work/dev.mv" 2>&1
check "devices: moves' text has the device column and the count by device" sh -c \
    "grep -qE '^2 +0 +to host +4194304 +budget +done ' '$work/dev.mv' && \
     grep -qE '^1 +1 +to device +8388608 +demand +done ' '$work/dev.mv' && \
     grep -q '; by device: 0 1, 1 3\$' '$work/dev.mv'"
"$REPORT" memviz -o "$work/dev.pickle" "$work/dev.trace" 2>/dev/null
check "devices: memviz puts device 2's slab (1.8) on device 2, its 64 KiB allocation a block in it" \
    python3 -c '
import pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
seg = [(s["device"], s["address"], s["total_size"], [b["size"] for b in s["blocks"]])
       for s in d["segments"] if s["address"] == 0x7c0000000000]
acts = [[(e["action"], e["size"]) for e in t if e["addr"] == 0x7c0000000000] for t in d["device_traces"]]
sys.exit(0 if seg == [(2, 0x7c0000000000, 2 << 20, [64 << 10, (2 << 20) - (64 << 10)])] and
         acts[2] == [("segment_alloc", 2 << 20), ("alloc", 64 << 10)] and acts[0] == acts[1] == []
         else 1)' "$work/dev.pickle"
"$REPORT" summary "$work/syn.trace" >"$work/syn1.sum" 2>&1
check "devices: a one-device trace has no devices list" \
    sh -c "grep -q '^peak_device_bytes:' '$work/syn1.sum' && ! grep -q '^devices:' '$work/syn1.sum'"

# ---- plan: the in-process plan and what it did (format 1.3), trace_gen's plan scenario ----
"$GEN" plan "$work/plan.trace"
"$REPORT" summary "$work/plan.trace" >"$work/plan.sum" 2>"$work/plan.err"
check "plan: summary exit 0" [ $? -eq 0 ]
check "plan: nothing on stderr" [ ! -s "$work/plan.err" ]
check "plan: a trace of the current format (plans since 1.3)" has_line "$work/plan.sum" "format: 1.14"
check "plan: the plan tables come after the steps and before the top allocations" sh -c \
    "grep -E '^(steps:|plans \\(|plan by step \\(|top allocations)' '$work/plan.sum' | cut -c1-9 | tr '\n' '|' \
     | grep -qx 'steps:|plans (th|plan by s|top alloc|'"
check "plan: one plan, installed at launch 5, made from step 1, 2 launches per step" \
    sh -c "grep -A2 '^plans (' '$work/plan.sum' | tail -n 1 | grep -qE \
    '^ +0 +5 +1 +2 +12582912 +380\.250 +150\.750 +300\.000 +210\.500 +2097152 +3145728 +3 +4 +yes$'"
check "plan: a row for step 2 with the plan's prediction beside what was done" \
    grep -qE '^ +2 +0 +[0-9]+\.[0-9]{3} +380\.250 +3 +4 +0 +1 +4 +2097152 +3145728 +2097152 +3145728 +250\.000$' \
    "$work/plan.sum"
check "plan: a row for step 3" \
    grep -qE '^ +3 +0 +[0-9]+\.[0-9]{3} +380\.250 +3 +5 +1 +1 +4 +3145728 +3145728 +2097152 +3145728 +250\.000$' \
    "$work/plan.sum"
check "plan: two rows, no more" [ "$(sed -n '/^plan by step/,/^$/p' "$work/plan.sum" | grep -cE '^ +[0-9]+ ')" -eq 2 ]
"$REPORT" summary --json "$work/plan.trace" >"$work/plan.json"
check "plan --json: the plan's fields" json "$work/plan.json" \
    "d['plans'] == [{'first_seq': 5, 'model_step': 1, 'model_first_seq': 3, 'step_len': 2, \
      'budget_bytes': 12582912, 'predicted_peak_bytes': 11534336, 'native_peak_bytes': 16777216, \
      'floor_bytes': 9437184, 'native_us': 210.5, 'predicted_us': 380.25, 'stall_us': 150.75, \
      'bound_us': 300.0, 'bytes_to_host': 2097152, 'bytes_to_device': 3145728, 'evictions': 3, \
      'prefetches': 4, 'feasible': True, 'remap_us': 37.5}]"
check "plan --json: steps 2 and 3 under plan 0, with their counts and bytes" json "$work/plan.json" \
    "[(s['step'],s['first_seq'],s['plan'],s['evictions'],s['prefetches'],s['missing'], \
       s['departures'],s['reactive_evictions'],s['bytes_to_host'],s['bytes_to_device'], \
       s['stall_us'],s['predicted_us'],s['predicted_bytes_to_host'], \
       s['predicted_bytes_to_device']) for s in d['plan_steps']] == \
     [(2,5,0,3,4,0,1,4,2097152,3145728,250.0,380.25,2097152,3145728), \
      (3,7,0,3,5,1,1,4,3145728,3145728,250.0,380.25,2097152,3145728)]"
check "plan --json: each step's wall time is its window: at least the 2 ms it lasted" \
    json "$work/plan.json" "all(2000 <= s['wall_us'] < 1e6 for s in d['plan_steps'])"
text_walls=$(sed -n '/^plan by step/,/^$/p' "$work/plan.sum" | awk '$1 ~ /^[0-9]+$/ {print $3}' | tr '\n' ' ')
check "plan: text and JSON give the same wall times ($text_walls)" json "$work/plan.json" \
    "' '.join('%.3f' % s['wall_us'] for s in d['plan_steps']) + ' ' == '$text_walls'"
for seed in synthetic:1.0 residency:1.1 moves:1.2; do
    old=${seed%:*} version=${seed#*:}
    "$REPORT" summary "$root/tests/trace/corpus-fuzz_trace/$old.trace" >"$work/old.plan"
    "$REPORT" summary --json "$root/tests/trace/corpus-fuzz_trace/$old.trace" >"$work/old.plan.json"
    check "plan: the $old seed (format $version) has no plan section" sh -c \
        "! grep -q '^plan' '$work/old.plan'"
    check "plan --json: the $old seed's plan lists are empty" \
        json "$work/old.plan.json" "d['format'] == '$version' and d['plans'] == [] and d['plan_steps'] == []"
done

# ---- perfetto ----
"$REPORT" perfetto -o "$work/p.json" "$work/syn.trace"
check "perfetto: exit 0" [ $? -eq 0 ]
ev="d['traceEvents']"
# the GPU process's pid is above Linux's pid range (4194304 for the first trace given)
check "perfetto: 20 timed kernels as complete events on the GPU process" json "$work/p.json" \
    "len([e for e in $ev if e['ph']=='X' and e.get('cat')=='kernel' and e['pid']==4194304]) == 20"
check "perfetto: the 4 untimed launches are instants" json "$work/p.json" \
    "len([e for e in $ev if e['ph']=='i' and e.get('cat')=='kernel']) == 4"
check "perfetto: gemm durations are 100 us" json "$work/p.json" \
    "sorted(set(e['dur'] for e in $ev if e['ph']=='X' and e['name']=='gemm')) == [100.0]"
check "perfetto: kernels on one stream do not overlap" json "$work/p.json" \
    "all(x[i]['ts']+x[i]['dur'] <= x[i+1]['ts']+1e-6 for x in [sorted([e for e in $ev \
      if e['ph']=='X' and e.get('cat')=='kernel' and e['tid']==t], key=lambda e: e['ts']) \
      for t in {e['tid'] for e in $ev if e.get('cat')=='kernel'}] for i in range(len(x)-1))"
check "perfetto: GPU 0 process of rank 3, one named track per stream and the residency tracks" \
    json "$work/p.json" \
    "{e['args']['name'] for e in $ev if e['ph']=='M' and e['pid']==4194304 and 'name' in e['args']} == \
     {'GPU 0 (rank 3)','stream 0x5000','stream 0x0 (legacy default)','residency: to host', \
      'residency: to host #2','residency: to device'}"
check "perfetto: memory counter peaks at 14 MiB and ends at 4 MiB" json "$work/p.json" \
    "max(e['args']['allocated_bytes'] for e in $ev if e['ph']=='C') == 14680064 and \
     sorted([e for e in $ev if e['ph']=='C'], key=lambda e:e['ts'])[-1]['args']['allocated_bytes'] == 4194304"
check "perfetto: ProfilerStep#0..3 on the host process" json "$work/p.json" \
    "sorted(e['name'] for e in $ev if e.get('cat')=='user_annotation' and e['pid']==4242) == \
     ['ProfilerStep#0','ProfilerStep#1','ProfilerStep#2','ProfilerStep#3']"

# on_track PID NAME: a Python list of (name, dur, reason) of the residency slices, in start
# order, on the track of process PID named NAME
on_track() {
    echo "[(e['name'],e['dur'],e['args']['reason']) for e in sorted($ev, key=lambda e: e['ts']) \
      if e.get('cat')=='residency' and e['pid']==$1 and (e['pid'],e['tid']) in \
      [(m['pid'],m['tid']) for m in $ev if m['ph']=='M' and m['args'].get('name')=='$2']]"
}
check "perfetto: evictions on 'residency: to host', in start order" json "$work/p.json" \
    "$(on_track 4194304 'residency: to host') == \
     [('evict',300.0,'budget'),('evict',300.0,'budget'),('evict',150.0,'budget')]"
check "perfetto: an eviction in flight beside another goes on a second lane" json "$work/p.json" \
    "$(on_track 4194304 'residency: to host #2') == [('cancelled eviction',100.0,'cancelled')]"
check "perfetto: restores on 'residency: to device'" json "$work/p.json" \
    "$(on_track 4194304 'residency: to device') == \
     [('restore',300.0,'demand'),('restore',150.0,'prefetch')]"
check "perfetto: stalls on the host process's 'residency: stalls'" json "$work/p.json" \
    "$(on_track 4242 'residency: stalls') == [('stall',250.0,'demand'),('stall',1000.0,'budget')]"
check "perfetto: residency slices carry alloc_id and bytes" json "$work/p.json" \
    "sorted((e['args']['alloc_id'],e['args']['bytes']) for e in $ev \
      if e.get('cat')=='residency' and e['pid']==4194304) == [(1,4194304)]*4 + [(12,2097152)]*2"
check "perfetto: no two slices of a residency track overlap" json "$work/p.json" \
    "all(x[i]['ts']+x[i]['dur'] <= x[i+1]['ts']+1e-6 for x in [sorted([e for e in $ev \
      if e.get('cat')=='residency' and (e['pid'],e['tid'])==k], key=lambda e: e['ts']) \
      for k in {(e['pid'],e['tid']) for e in $ev if e.get('cat')=='residency'}] \
      for i in range(len(x)-1))"

# ---- no residency records: zeros; a trace of format 1.0 (a fuzz seed the 1.0 writer made) ----
zeros="all(d[k]==0 for k in ['budget_bytes','host_budget_bytes','evictions','restores', \
      'cancelled_evictions','bytes_to_host','bytes_to_device','stall_us'])"
"$GEN" empty "$work/empty.trace"
"$REPORT" summary --json "$work/empty.trace" >"$work/empty.json"
check "empty: every residency key is 0" json "$work/empty.json" "$zeros"
"$REPORT" summary "$work/empty.trace" >"$work/empty.out"
check "empty: 'budget_bytes: 0 (none recorded)'" has_line "$work/empty.out" \
    "budget_bytes: 0 (none recorded)"
check "empty: no residency table" sh -c "! grep -q '^residency by step:' '$work/empty.out'"
"$REPORT" summary --json "$root/tests/trace/corpus-fuzz_trace/synthetic.trace" >"$work/old.json"
check "format 1.0: read, with its figures and every residency key 0" json "$work/old.json" \
    "d['format']=='1.0' and d['launches']==24 and d['iterations']==4 and $zeros"

# ---- a trace from four threads ----
"$GEN" threads "$work/threads.trace"
"$REPORT" summary --json "$work/threads.trace" >"$work/threads.json"
check "threads: 20 launches and allocations, 4 steps, 20 kernels" json "$work/threads.json" \
    "d['launches']==20 and d['allocations']==20 and d['frees']==20 and d['iterations']==4 \
     and len(d['kernels'])==20 and d['peak_device_bytes']>0"
check "threads: an eviction of 4096 bytes and a 10 us stall from each" json "$work/threads.json" \
    "(d['evictions'],d['bytes_to_host'],d['restores'],d['stalls'],d['stall_us']) == \
     (4,16384,0,4,40.0) and d['budget_bytes'] in (1,1001,2001,3001)"

# ---- truncated and corrupt traces ----
size=$(wc -c <"$work/syn.trace")
head -c $((size - 10)) "$work/syn.trace" >"$work/cut.trace"
"$REPORT" summary "$work/cut.trace" >"$work/cut.out" 2>"$work/cut.err"
check "truncated: still exit 0" [ $? -eq 0 ]
check "truncated: a note on stderr names the file and the byte offset" \
    grep -qE "^shim-report: $work/cut.trace: truncated at byte [0-9]+ \(the last chunk is cut short\)" \
    "$work/cut.err"
check "truncated: the summary says so" grep -q '^status: truncated at byte' "$work/cut.out"
"$REPORT" summary --json "$work/cut.trace" >"$work/cut.json" 2>/dev/null
check "truncated: --json says so" json "$work/cut.json" \
    "d['truncated'] is True and d['complete'] is False and d['status'].startswith('truncated at byte') \
     and d['launches']==24"
check "truncated: records of the whole chunks are read (all but the end chunk's)" \
    has_line "$work/cut.out" "records: 83"
cp "$work/syn.trace" "$work/bad.trace"
printf 'X' | dd of="$work/bad.trace" bs=1 seek=$((size - 200)) conv=notrunc 2>/dev/null
"$REPORT" summary "$work/bad.trace" >"$work/bad.out" 2>"$work/bad.err"
check "corrupt: exit 1" [ $? -eq 1 ]
check "corrupt: one line naming the file, the chunk's byte offset and the checksum" \
    grep -qE "^shim-report: $work/bad.trace: byte [0-9]+: chunk checksum mismatch" "$work/bad.err"
check "corrupt: nothing on stdout" [ ! -s "$work/bad.out" ]
echo "not a trace at all" >"$work/text.trace"
"$REPORT" kernels "$work/text.trace" 2>"$work/text.err"
check "not a trace: exit 1" [ $? -eq 1 ]
check "not a trace: says so at byte 0" grep -q "text.trace: byte 0: not a libshim trace" "$work/text.err"
"$REPORT" summary "$work/missing.trace" 2>"$work/missing.err"
check "missing file: exit 1" [ $? -eq 1 ]
check "missing file: the reason" grep -q 'missing.trace: cannot open: No such file' "$work/missing.err"
"$REPORT" summary --bogus "$work/syn.trace" 2>"$work/usage.err"
check "bad option: exit 2" [ $? -eq 2 ]
check "bad option: usage" grep -q '^usage: shim-report summary' "$work/usage.err"
"$REPORT" summary 2>/dev/null
check "no trace given: exit 2" [ $? -eq 2 ]

[ "$failures" -eq 0 ]
