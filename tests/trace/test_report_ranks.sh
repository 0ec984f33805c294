#!/usr/bin/env bash
# shim-report summary of several traces (the ranks of one job), on traces written by the real
# writer (trace_gen, TRACE_GEN_RANK setting each header's rank): columns in rank order whatever
# the order given, the totals and per-step tables with the synthetic run's known figures, '-'
# for a step a rank does not have, labels with the pid when ranks repeat, --json as the list of
# each trace's own summary object, an unreadable trace among readable ones, and one trace
# summarised exactly as before.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/trace/report_checks.sh"
plan 32
build="$root/${BUILD:-build}"
# section FILE TITLE: the lines of the table under "TITLE:" up to the next blank line.
section() { sed -n "/^$2:\$/,/^\$/p" "$1" | sed '1d;/^$/d'; }

TRACE_GEN_RANK=2 "$GEN" synthetic "$work/r2.trace"
TRACE_GEN_RANK=0 "$GEN" synthetic "$work/r0.trace"
TRACE_GEN_RANK=1 "$GEN" moves "$work/r1.trace"
# the format the writer writes (shim/trace/shim_trace_format.h), as summary prints it
format=$(sed -n 's/^#define SHIM_TRACE_MAJOR *\([0-9]*\).*/\1/p' "$root/shim/trace/shim_trace_format.h").$(
    sed -n 's/^#define SHIM_TRACE_MINOR *\([0-9]*\).*/\1/p' "$root/shim/trace/shim_trace_format.h")

# ---- text: given as 2, 0, 1 ----
"$REPORT" summary "$work/r2.trace" "$work/r0.trace" "$work/r1.trace" >"$work/sum" 2>"$work/err"
check "three traces: exit 0" [ $? -eq 0 ]
check "three traces: nothing on stderr" [ ! -s "$work/err" ]
check "three traces: the count" has_line "$work/sum" "traces: 3, side by side by rank"
check "three traces: listed in rank order" sh -c "sed -n '/^traces: /,+3p' '$work/sum' | sed 1d | cut -d: -f1 | \
    tr -d ' ' | tr '\n' ,  | grep -qx 'rank0,rank1,rank2,'"
check "three traces: rank 1 is the moves trace" \
    has_line "$work/sum" "  rank 1: $work/r1.trace (pid 4242, format $format, complete)"
check "totals: columns in rank order" \
    has_line "$work/sum" "                                   rank 0         rank 1         rank 2"
for line in \
    "  iterations                            4              0              4" \
    "  launches                             24              0             24" \
    "  allocations                           7              9              7" \
    "  peak_device_bytes              14680064        6684672       14680064" \
    "  budget_bytes                   12582912              0       12582912" \
    "  evictions                             3              0              3" \
    "  bytes_to_host                  14680064              0       14680064" \
    "  stall_us                       1250.000          0.000       1250.000"; do
    check "totals: '$line'" has_line "$work/sum" "$line"
done
check "totals: median_step_ms '-' for the trace without steps" \
    grep -qE '^  median_step_ms +[0-9]+\.[0-9]{3} +- +[0-9]+\.[0-9]{3}$' "$work/sum"
section "$work/sum" "peak_device_bytes by step" >"$work/peak"
check "peak_device_bytes by step: steps 0 to 3, '-' for rank 1, which has none" sh -c "diff - '$work/peak' <<EOF
  step           rank 0         rank 1         rank 2
       0        6291456              -        6291456
       1        6291456              -        6291456
       2       14680064              -       14680064
       3        6291456              -        6291456
EOF"
section "$work/sum" "bytes_moved by step (to host and to device)" >"$work/moved"
check "bytes_moved by step: 8 MiB in step 1 (4 MiB each way) and in step 2 (2 MiB evicted, 4 MiB in a cancelled eviction, 2 MiB restored)" \
    sh -c "diff - '$work/moved' <<EOF
  step           rank 0         rank 1         rank 2
       0              0              -              0
       1        8388608              -        8388608
       2        8388608              -        8388608
       3              0              -              0
EOF"
section "$work/sum" "stall_us by step" >"$work/stall"
check "stall_us by step: 250 us in step 1, 1000 us in step 2" sh -c "diff - '$work/stall' <<EOF
  step           rank 0         rank 1         rank 2
       0          0.000              -          0.000
       1        250.000              -        250.000
       2       1000.000              -       1000.000
       3          0.000              -          0.000
EOF"
check "step_ms by step: four rows, a time for each synthetic rank, '-' for rank 1" \
    [ "$(section "$work/sum" "step_ms by step (wall time)" | grep -cE '^ +[0-3] +[0-9]+\.[0-9]{3} +- +[0-9]+\.[0-9]{3}$')" -eq 4 ]

# ---- the same rank twice: the pid tells the columns apart ----
TRACE_GEN_RANK=0 "$GEN" plan "$work/p0.trace"
"$REPORT" summary "$work/r0.trace" "$work/p0.trace" >"$work/dup"
check "a shared rank: labels with the pid" \
    has_line "$work/dup" "                            rank 0 pid 4242  rank 0 pid 4242"

# ---- --json ----
"$REPORT" summary --json "$work/r2.trace" "$work/r0.trace" "$work/r1.trace" >"$work/sum.json"
check "--json: exit 0" [ $? -eq 0 ]
check "--json: ranks in order" json "$work/sum.json" "d['ranks'] == [0, 1, 2]"
for r in 0 1 2; do
    "$REPORT" summary --json "$work/r$r.trace" >"$work/one$r.json"
    check "--json: traces[$r] is rank $r's own summary object" python3 -c "
import json, sys
many, one = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
sys.exit(0 if many['traces'][$r] == one and one['rank'] == $r else 1)" "$work/sum.json" "$work/one$r.json"
done
"$REPORT" summary --json --top 1 "$work/r2.trace" "$work/r0.trace" >"$work/top.json"
check "--json --top 1: one top allocation per trace" json "$work/top.json" \
    "[len(t['top_allocations']) for t in d['traces']] == [1, 1]"

# ---- an unreadable trace among readable ones ----
"$REPORT" summary "$work/r0.trace" "$work/missing.trace" "$work/r2.trace" >"$work/part" 2>"$work/part.err"
check "a missing trace: exit 1" [ $? -eq 1 ]
check "a missing trace: named on stderr" grep -q "missing.trace" "$work/part.err"
check "a missing trace: the others side by side" has_line "$work/part" "traces: 2, side by side by rank"

# ---- one trace: the summary as before, usage naming several ----
"$REPORT" summary "$work/r2.trace" >"$work/single"
check "one trace: the single summary, its verdict first (no side by side)" \
    sh -c "head -n 1 '$work/single' | grep -q '^verdict: ' && grep -qx 'trace: $work/r2.trace' '$work/single' && ! grep -q 'side by side' '$work/single'"
"$REPORT" summary --json >/dev/null 2>"$work/usage"
check "no trace: exit 2" [ $? -eq 2 ]
check "no trace: usage names TRACE..." has_line "$work/usage" "usage: shim-report summary [--json] [--top N] TRACE..."

[ "$failures" -eq 0 ]
