#!/usr/bin/env bash
# tests/planner/test_shimplan.sh — the shim-plan command line: text and JSON output, budgets with
# units and percentages, proposals, generated models, --remap, and errors (FILE:LINE, usage, exit
# codes).
# Prints "ok - NAME" / "not ok - NAME" lines (tests/run_tests.sh counts them).
set -u
source "$(dirname "$0")/shimplan_env.sh"

KEYS=(feasible peak_bytes step_us stall_us bytes_to_host bytes_to_device lower_bound_us)
plan $((3 + ${#KEYS[@]} + 1 + 9 + 1 + 2 + 1 + 2 + 3 + 2 + 2 + 6 + 12))
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
json_check "json budget is 60% of the native peak as libshim holds it" "j['budget_bytes'] == int(j['held_peak_bytes'] * 0.6)"
json_check "json plan holds the budget" "j['feasible'] is True and j['peak_bytes'] <= j['budget_bytes']"
json_check "json stall is step minus compute" "abs(j['step_us'] - j['compute_us'] - j['stall_us']) < 1e-2"
json_check "json bound below the stall" "j['lower_bound_us'] <= j['stall_us'] + 1e-3"
json_check "json entries listed" "len(j['entries']) == j['nentries'] > 0"
json_check "proposals: 5 points with budget, step, peak" \
    "len(j['proposals']) == 5 and all(set(['budget_bytes','step_us','peak_bytes']) <= set(p) for p in j['proposals'])"
json_check "proposals run from the peak as libshim holds it to the floor" \
    "j['proposals'][0]['budget_bytes'] == j['held_peak_bytes'] and j['proposals'][-1]['budget_bytes'] == j['floor_bytes']"
json_check "proposals hold their budgets" "all(p['peak_bytes'] <= p['budget_bytes'] for p in j['proposals'])"

"$shimplan" "$tmp/t.model" --budget 1B --json >"$tmp/json"
json_check "below the floor: infeasible, bound null" "j['feasible'] is False and j['lower_bound_us'] is None"

"$shimplan" "$tmp/t.model" --budget 4GiB --planner none --json >"$tmp/json"
json_check "none: the peak as libshim holds it, no stall" \
    "j['peak_bytes'] == j['held_peak_bytes'] and j['stall_us'] == 0 and j['bytes_to_host'] == 0"
json_check "4GiB read as 4*2^30 bytes" "j['budget_bytes'] == 4 << 30"

# 60% of the peak: the reactive planner moves something, and lists each entry it counts.
"$shimplan" "$tmp/t.model" --budget 60% --planner reactive --entries >"$tmp/text"
n=$(grep -c '^entry ' "$tmp/text") want=$(sed -n 's/^entries: //p' "$tmp/text")
check "reactive at 60%: $n entries printed of ${want:-no} counted, more than 0" \
    all [ "$n" -gt 0 ] '&&' [ "$n" = "$want" ]

printf 'hw 1 1 1 0\nop 5\nop 5\nop 5\nalloc 100 -1 -1 0\nalloc 50 1 2 1 2\n' >"$tmp/s.model"
# Tiny models of a few bytes test the planners on the model as given (--as-given): as libshim
# holds them, every allocation would be below min_managed_bytes and never move.
"$shimplan" "$tmp/s.model" --budget 120B --planner exact --as-given --json >"$tmp/json"
json_check "exact on a small model holds the budget" \
    "j['feasible'] is True and j['peak_bytes'] <= 120 and j['floor_bytes'] == 100"
"$shimplan" - --budget 120B --json <"$tmp/s.model" >"$tmp/json"
json_check "model read from standard input" "j['native_peak_bytes'] == 150"

# --remap: the mover's host time per move replaces the model's REMAP_US. A (100 B, 0.1 us of copy)
# must be off during ops 1-2: its eviction's remap (after the copy) and its copy back's remap
# (from the end of op 2, before op 0 of the next step) each stall the compute stream
"$shimplan" "$tmp/s.model" --budget 120B --remap 1000 --as-given --json >"$tmp/json"
json_check "--remap 1000: two remaps of stall per step, bound below" \
    "2000 <= j['stall_us'] < 2001 and 1990 < j['lower_bound_us'] <= j['stall_us']"
"$shimplan" "$tmp/s.model" --budget 120B --remap 0 --as-given --json >"$tmp/json"
json_check "--remap 0: the copies alone" "j['stall_us'] < 1"
"$shimplan" "$tmp/s.model" --budget 120B --remap -1 2>"$tmp/err"
check "negative --remap is a usage error" test $? -eq 2

printf 'hw 1 1 1 0\nop 1\nalloc 10 0 0 0 7\n' >"$tmp/bad.model"
"$shimplan" "$tmp/bad.model" --budget 1B 2>"$tmp/err"
check "bad model exits 1" test $? -eq 1
check "bad model message names FILE:LINE" grep -q "^$tmp/bad.model:3: error: TOUCH must be an integer in \[0, 0\], got '7'$" "$tmp/err"

"$shimplan" "$tmp/t.model" --budget 1GiB --planner exact 2>"$tmp/err"
check "exact refuses a large model" test $? -eq 1
check "exact says why" grep -q 'too large for the exact planner' "$tmp/err"

"$shimplan" "$tmp/t.model" --budget lots 2>"$tmp/err"
check "bad budget is a usage error (2), as in shim-report plan" test $? -eq 2
"$shimplan" "$tmp/t.model" 2>"$tmp/err"
check "missing budget is a usage error" test $? -eq 2
"$shimplan" "$tmp/t.model" --budget 1B --planner magic 2>"$tmp/err"
check "unknown planner is a usage error" test $? -eq 2
"$shimplan" "$tmp/t.model" --budget 1B --proposals 0 2>"$tmp/err"
check "zero proposals is a usage error" test $? -eq 2
"$shimplan" "$tmp/missing.model" --budget 1B 2>"$tmp/err"
check "missing file exits 1" test $? -eq 1
"$shimplan" --generate lstm 2>"$tmp/err"
check "unknown generator exits 1" test $? -eq 1

# As libshim holds memory (planner/plan_build.h, plan_model_hold): an allocation below
# min_managed_bytes (64KiB) is the driver's, one of at most the slab maximum (1MiB) lives in a
# slab, neither moves; a larger one rounds up to 2 MiB granules. Small (32KiB) and slab (512KiB)
# live through the step, touched at op 0 only; big (3,000,000 B) lives at ops 1-2. As given, a
# budget of 3,100,000 B is met by evicting slab while big lives; as libshim holds
# them they stay, slab's slab holds a granule (slab itself 1 byte, the model's least) and big
# takes 4 MiB: the floor is the whole held peak.
printf 'hw 25 25 1 10\nop 100\nop 100\nop 100\nop 100\nalloc 32KiB -1 -1 0\nalloc 512KiB -1 -1 0\nalloc 3000000 1 2 1 2\n' \
    >"$tmp/small.model"
"$shimplan" "$tmp/small.model" --budget 3100000 --as-given --json >"$tmp/json"
json_check "as given: the 512KiB evicted to fit 3,100,000 B" \
    "j['feasible'] is True and j['bytes_to_host'] == 524288 and j['held'] is None"
"$shimplan" "$tmp/small.model" --budget 3100000 --json >"$tmp/json"
json_check "as libshim holds it: 32KiB unmanaged, 512KiB in a slab, 3,000,000 B one 4 MiB unit" \
    "j['held'] == {'min_managed_bytes': 65536, 'slab_max_bytes': 1048576, 'granule_bytes': 2097152, 'unmanaged': 1, 'unmanaged_bytes': 32768, 'slab_members': 1, 'slab_member_bytes': 524288, 'slabs_at_most': 1, 'units': 1, 'unit_bytes': 4194304}"
json_check "as libshim holds it: peak and floor 6,324,225 B, the native peak as given" \
    "j['held_peak_bytes'] == j['floor_bytes'] == 32768 + 1 + 2097152 + 4194304 and j['native_peak_bytes'] == 32768 + 524288 + 3000000"
json_check "as libshim holds it: the small allocations pinned, 3,100,000 B cannot fit" \
    "j['feasible'] is False and j['bytes_to_host'] == 0 and j['step_us'] is None"
"$shimplan" "$tmp/small.model" --budget 3100000 >"$tmp/text"
check "text says what it assumed" grep -qx 'held: as libshim holds it (min_managed_bytes 64KiB, slab max 1MiB, 2MiB granules): 1 allocations left to the driver (32.00 KiB, never moved), 1 in slabs (512.00 KiB, packed into at most 1 slabs at once, a granule each, moved only with their slab), 1 units of their own (4.00 MiB, movable); peak 6.03 MiB' "$tmp/text"
"$shimplan" "$tmp/small.model" --budget 4300000 --slab-max 0 --json >"$tmp/json"
json_check "--slab-max 0: 512KiB a 2 MiB unit, evicted while big lives, copying its own 512KiB" \
    "j['held']['units'] == 2 and j['held']['unit_bytes'] == 6 << 20 and j['feasible'] is True and j['bytes_to_host'] == j['bytes_to_device'] == 512 << 10"
"$shimplan" "$tmp/small.model" --budget 3100000 --min-managed 16KiB --json >"$tmp/json"
json_check "--min-managed 16KiB: 32KiB managed, in a slab" \
    "j['held']['unmanaged'] == 0 and j['held']['slab_members'] == 2 and j['held']['min_managed_bytes'] == 16384"
"$shimplan" "$tmp/small.model" --budget 1MiB --min-managed 0 2>"$tmp/err"
check "--min-managed 0 (below libshim's bound) is a usage error" test $? -eq 2
check "... which says why" grep -q '^shim-plan: bad --min-managed: ' "$tmp/err"
"$shimplan" "$tmp/small.model" --budget 1MiB --slab-max 4MiB 2>"$tmp/err"
check "--slab-max above a granule is a usage error, says so" \
    all [ $? -eq 2 ] '&&' grep -q 'bad --slab-max: at most 2MiB' "$tmp/err"
"$shimplan" "$tmp/small.model" --budget 1MiB --slab-max 50% 2>"$tmp/err"
check "--slab-max takes bytes, not a share" all [ $? -eq 2 ] '&&' grep -q 'a size in bytes' "$tmp/err"
"$shimplan" "$tmp/small.model" --budget 1MiB --as-given --min-managed 1KiB 2>"$tmp/err"
check "--as-given with --min-managed is a usage error" test $? -eq 2

exit $((fails > 0))
