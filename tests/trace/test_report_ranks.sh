#!/bin/sh
# shim-report summary of several traces (the ranks of one job), on traces written by the real
# writer (trace_gen, TRACE_GEN_RANK setting each header's rank): columns in rank order whatever
# the order given, the totals and per-step tables with the synthetic run's known figures, '-'
# for a step a rank does not have, labels with the pid when ranks repeat, --json as the list of
# each trace's own summary object, an unreadable trace among readable ones, and one trace
# summarised exactly as before.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build="$root/${BUILD:-build}"
report="$build/shim-report"
gen="$build/trace_gen"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$root/tests/trace/report_checks.sh"
# section FILE TITLE: the lines of the table under "TITLE:" up to the next blank line.
section() { sed -n "/^$2:\$/,/^\$/p" "$1" | sed '1d;/^$/d'; }

TRACE_GEN_RANK=2 "$gen" synthetic "$tmp/r2.trace"
TRACE_GEN_RANK=0 "$gen" synthetic "$tmp/r0.trace"
TRACE_GEN_RANK=1 "$gen" moves "$tmp/r1.trace"
# the format the writer writes (shim/trace/shim_trace_format.h), as summary prints it
format=$(sed -n 's/^#define SHIM_TRACE_MAJOR *\([0-9]*\).*/\1/p' "$root/shim/trace/shim_trace_format.h").$(
    sed -n 's/^#define SHIM_TRACE_MINOR *\([0-9]*\).*/\1/p' "$root/shim/trace/shim_trace_format.h")

# ---- text: given as 2, 0, 1 ----
"$report" summary "$tmp/r2.trace" "$tmp/r0.trace" "$tmp/r1.trace" >"$tmp/sum" 2>"$tmp/err"
check "three traces: exit 0" [ $? -eq 0 ]
check "three traces: nothing on stderr" [ ! -s "$tmp/err" ]
check "three traces: the count" has_line "$tmp/sum" "traces: 3, side by side by rank"
check "three traces: listed in rank order" sh -c "sed -n '2,4p' '$tmp/sum' | cut -d: -f1 | \
    tr -d ' ' | tr '\n' ,  | grep -qx 'rank0,rank1,rank2,'"
check "three traces: rank 1 is the moves trace" \
    has_line "$tmp/sum" "  rank 1: $tmp/r1.trace (pid 4242, format $format, complete)"
check "totals: columns in rank order" \
    has_line "$tmp/sum" "                                   rank 0         rank 1         rank 2"
for line in \
    "  iterations                            4              0              4" \
    "  launches                             24              0             24" \
    "  allocations                           7              9              7" \
    "  peak_device_bytes              14680064        6684672       14680064" \
    "  budget_bytes                   12582912              0       12582912" \
    "  evictions                             3              0              3" \
    "  bytes_to_host                  14680064              0       14680064" \
    "  stall_us                       1250.000          0.000       1250.000"; do
    check "totals: '$line'" has_line "$tmp/sum" "$line"
done
check "totals: median_step_ms '-' for the trace without steps" \
    grep -qE '^  median_step_ms +[0-9]+\.[0-9]{3} +- +[0-9]+\.[0-9]{3}$' "$tmp/sum"
section "$tmp/sum" "peak_device_bytes by step" >"$tmp/peak"
check "peak_device_bytes by step: steps 0 to 3, '-' for rank 1, which has none" sh -c "diff - '$tmp/peak' <<EOF
  step           rank 0         rank 1         rank 2
       0        6291456              -        6291456
       1        6291456              -        6291456
       2       14680064              -       14680064
       3        6291456              -        6291456
EOF"
section "$tmp/sum" "bytes_moved by step (to host and to device)" >"$tmp/moved"
check "bytes_moved by step: 8 MiB in step 1 (4 MiB each way) and in step 2 (2 MiB evicted, 4 MiB in a cancelled eviction, 2 MiB restored)" \
    sh -c "diff - '$tmp/moved' <<EOF
  step           rank 0         rank 1         rank 2
       0              0              -              0
       1        8388608              -        8388608
       2        8388608              -        8388608
       3              0              -              0
EOF"
section "$tmp/sum" "stall_us by step" >"$tmp/stall"
check "stall_us by step: 250 us in step 1, 1000 us in step 2" sh -c "diff - '$tmp/stall' <<EOF
  step           rank 0         rank 1         rank 2
       0          0.000              -          0.000
       1        250.000              -        250.000
       2       1000.000              -       1000.000
       3          0.000              -          0.000
EOF"
check "step_ms by step: four rows, a time for each synthetic rank, '-' for rank 1" \
    [ "$(section "$tmp/sum" "step_ms by step (wall time)" | grep -cE '^ +[0-3] +[0-9]+\.[0-9]{3} +- +[0-9]+\.[0-9]{3}$')" -eq 4 ]

# ---- the same rank twice: the pid tells the columns apart ----
TRACE_GEN_RANK=0 "$gen" plan "$tmp/p0.trace"
"$report" summary "$tmp/r0.trace" "$tmp/p0.trace" >"$tmp/dup"
check "a shared rank: labels with the pid" \
    has_line "$tmp/dup" "                            rank 0 pid 4242  rank 0 pid 4242"

# ---- --json ----
"$report" summary --json "$tmp/r2.trace" "$tmp/r0.trace" "$tmp/r1.trace" >"$tmp/sum.json"
check "--json: exit 0" [ $? -eq 0 ]
check "--json: ranks in order" json "$tmp/sum.json" "d['ranks'] == [0, 1, 2]"
for r in 0 1 2; do
    "$report" summary --json "$tmp/r$r.trace" >"$tmp/one$r.json"
    check "--json: traces[$r] is rank $r's own summary object" python3 -c "
import json, sys
many, one = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
sys.exit(0 if many['traces'][$r] == one and one['rank'] == $r else 1)" "$tmp/sum.json" "$tmp/one$r.json"
done
"$report" summary --json --top 1 "$tmp/r2.trace" "$tmp/r0.trace" >"$tmp/top.json"
check "--json --top 1: one top allocation per trace" json "$tmp/top.json" \
    "[len(t['top_allocations']) for t in d['traces']] == [1, 1]"

# ---- an unreadable trace among readable ones ----
"$report" summary "$tmp/r0.trace" "$tmp/missing.trace" "$tmp/r2.trace" >"$tmp/part" 2>"$tmp/part.err"
check "a missing trace: exit 1" [ $? -eq 1 ]
check "a missing trace: named on stderr" grep -q "missing.trace" "$tmp/part.err"
check "a missing trace: the others side by side" has_line "$tmp/part" "traces: 2, side by side by rank"

# ---- one trace: the summary as before, usage naming several ----
"$report" summary "$tmp/r2.trace" >"$tmp/single"
check "one trace: the single summary (no side by side)" \
    sh -c "head -n 1 '$tmp/single' | grep -qx 'trace: $tmp/r2.trace' && ! grep -q 'side by side' '$tmp/single'"
"$report" summary --json >/dev/null 2>"$tmp/usage"
check "no trace: exit 2" [ $? -eq 2 ]
check "no trace: usage names TRACE..." has_line "$tmp/usage" "usage: shim-report summary [--json] [--top N] TRACE..."

[ "$failures" -eq 0 ]
