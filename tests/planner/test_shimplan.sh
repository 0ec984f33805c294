#!/usr/bin/env bash
# tests/planner/test_shimplan.sh — the shim-plan command line: text and JSON output, budgets with
# units and percentages, proposals, generated models, --remap, and errors (FILE:LINE, usage, exit
# codes).
# Prints "ok - NAME" / "not ok - NAME" lines (tests/run_tests.sh counts them).
set -u
BUILD=${BUILD:-build}
shimplan=$BUILD/shim-plan
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/../check.sh"

json_check() { # NAME PYTHON-EXPRESSION over j (the parsed JSON of $tmp/json)
    check "$1" python3 -c "import json,sys; j=json.load(open('$tmp/json')); sys.exit(0 if ($2) else 1)"
}

KEYS=(feasible peak_bytes step_us stall_us bytes_to_host bytes_to_device lower_bound_us)
plan $((3 + ${#KEYS[@]} + 1 + 9 + 1 + 2 + 1 + 2 + 3 + 2 + 2 + 6))
"$shimplan" --generate transformer:layers=6 -o "$tmp/t.model"
check "generate writes a model" grep -q '^hw 25 25 1 10$' "$tmp/t.model"
check "generated model has 6*(2*4+1)+1 ops" test "$(grep -c '^op ' "$tmp/t.model")" -eq 55

"$shimplan" "$tmp/t.model" --budget 75% >"$tmp/text"
check "text output exits 0" test $? -eq 0
for key in "${KEYS[@]}"; do
    check "text has $key" grep -q "^$key: " "$tmp/text"
done
check "75% budget holds" grep -qx 'feasible: yes' "$tmp/text"

"$shimplan" "$tmp/t.model" --budget 60% --json --proposals 5 --entries >"$tmp/json"
json_check "json has the required keys" \
    "all(k in j for k in ['feasible','peak_bytes','step_us','stall_us','bytes_to_host','bytes_to_device','lower_bound_us','proposals'])"
json_check "json budget is 60% of the native peak" "j['budget_bytes'] == int(j['native_peak_bytes'] * 0.6)"
json_check "json plan holds the budget" "j['feasible'] is True and j['peak_bytes'] <= j['budget_bytes']"
json_check "json stall is step minus compute" "abs(j['step_us'] - j['compute_us'] - j['stall_us']) < 1e-2"
json_check "json bound below the stall" "j['lower_bound_us'] <= j['stall_us'] + 1e-3"
json_check "json entries listed" "len(j['entries']) == j['nentries'] > 0"
json_check "proposals: 5 points with budget, step, peak" \
    "len(j['proposals']) == 5 and all(set(['budget_bytes','step_us','peak_bytes']) <= set(p) for p in j['proposals'])"
json_check "proposals run from the native peak to the floor" \
    "j['proposals'][0]['budget_bytes'] == j['native_peak_bytes'] and j['proposals'][-1]['budget_bytes'] == j['floor_bytes']"
json_check "proposals hold their budgets" "all(p['peak_bytes'] <= p['budget_bytes'] for p in j['proposals'])"

"$shimplan" "$tmp/t.model" --budget 1 --json >"$tmp/json"
json_check "below the floor: infeasible, bound null" "j['feasible'] is False and j['lower_bound_us'] is None"

"$shimplan" "$tmp/t.model" --budget 4GiB --planner none --json >"$tmp/json"
json_check "none: native peak, no stall" \
    "j['peak_bytes'] == j['native_peak_bytes'] and j['stall_us'] == 0 and j['bytes_to_host'] == 0"
json_check "4GiB read as 4*2^30 bytes" "j['budget_bytes'] == 4 << 30"

# 60% of the peak: the reactive planner moves something, and lists each entry it counts.
"$shimplan" "$tmp/t.model" --budget 60% --planner reactive --entries >"$tmp/text"
n=$(grep -c '^entry ' "$tmp/text") want=$(sed -n 's/^entries: //p' "$tmp/text")
check "reactive at 60%: $n entries printed of ${want:-no} counted, more than 0" \
    all [ "$n" -gt 0 ] '&&' [ "$n" = "$want" ]

printf 'hw 1 1 1 0\nop 5\nop 5\nop 5\nalloc 100 -1 -1 0\nalloc 50 1 2 1 2\n' >"$tmp/s.model"
"$shimplan" "$tmp/s.model" --budget 120 --planner exact --json >"$tmp/json"
json_check "exact on a small model holds the budget" \
    "j['feasible'] is True and j['peak_bytes'] <= 120 and j['floor_bytes'] == 100"
"$shimplan" - --budget 120 --json <"$tmp/s.model" >"$tmp/json"
json_check "model read from standard input" "j['native_peak_bytes'] == 150"

# --remap: the mover's host time per move replaces the model's REMAP_US. A (100 B, 0.1 us of copy)
# must be off during ops 1-2: its eviction's remap (after the copy) and its copy back's remap
# (from the end of op 2, before op 0 of the next step) each stall the compute stream
"$shimplan" "$tmp/s.model" --budget 120 --remap 1000 --json >"$tmp/json"
json_check "--remap 1000: two remaps of stall per step, bound below" \
    "2000 <= j['stall_us'] < 2001 and 1990 < j['lower_bound_us'] <= j['stall_us']"
"$shimplan" "$tmp/s.model" --budget 120 --remap 0 --json >"$tmp/json"
json_check "--remap 0: the copies alone" "j['stall_us'] < 1"
"$shimplan" "$tmp/s.model" --budget 120 --remap -1 2>"$tmp/err"
check "negative --remap is a usage error" test $? -eq 2

printf 'hw 1 1 1 0\nop 1\nalloc 10 0 0 0 7\n' >"$tmp/bad.model"
"$shimplan" "$tmp/bad.model" --budget 1 2>"$tmp/err"
check "bad model exits 1" test $? -eq 1
check "bad model message names FILE:LINE" grep -q "^$tmp/bad.model:3: error: TOUCH must be an integer in \[0, 0\], got '7'$" "$tmp/err"

"$shimplan" "$tmp/t.model" --budget 1GiB --planner exact 2>"$tmp/err"
check "exact refuses a large model" test $? -eq 1
check "exact says why" grep -q 'too large for the exact planner' "$tmp/err"

"$shimplan" "$tmp/t.model" --budget lots 2>"$tmp/err"
check "bad budget exits 1" test $? -eq 1
"$shimplan" "$tmp/t.model" 2>"$tmp/err"
check "missing budget is a usage error" test $? -eq 2
"$shimplan" "$tmp/t.model" --budget 1 --planner magic 2>"$tmp/err"
check "unknown planner is a usage error" test $? -eq 2
"$shimplan" "$tmp/t.model" --budget 1 --proposals 0 2>"$tmp/err"
check "zero proposals is a usage error" test $? -eq 2
"$shimplan" "$tmp/missing.model" --budget 1 2>"$tmp/err"
check "missing file exits 1" test $? -eq 1
"$shimplan" --generate lstm 2>"$tmp/err"
check "unknown generator exits 1" test $? -eq 1

exit $((fails > 0))
