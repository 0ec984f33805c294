#!/usr/bin/env bash
# tests/planner/test_shimplan_host.sh — shim-plan and the third placement (issue 24): a model with
# bytes read per touch is planned with host placement allowed and says what each placement holds
# (text, JSON, proposals); --no-host-placement, and any model without read bytes, print exactly
# what they printed before.
# Prints "ok - NAME" / "not ok - NAME" lines (tests/run_tests.sh counts them).
set -u
source "$(dirname "$0")/shimplan_env.sh"

SPECS=("transformer:layers=3" "random:ops=12,allocs=8,maxbytes=64MiB,us=1000,h2d=1,seed=4")
plan $((17 + 2 * ${#SPECS[@]}))

# A weight touched whole everywhere, a 1 MB table read 4 KiB at operation 0, an activation at 2-3
# (tests/planner/test_plan_host.c): at 1 GB/s the table stays on the host, its read 4.096 us.
table() { # GBPS: the model at that link speed, with or without @4KiB
    printf 'hw %s %s 1 0\nop 100\nop 100\nop 100\nop 100\nop 100\n' "$1" "$1"
    printf 'alloc 100000 -1 -1 0 1 2 3 4\nalloc 1000000 -1 -1 0%s\nalloc 500000 2 3 2 3\n' "$2"
}
table 1 @4KiB >"$tmp/m.model"
"$shimplan" "$tmp/m.model" --budget 1100000 --as-given >"$tmp/text"
check "host placement exits 0" test $? -eq 0
check "the table stays on the host" all grep -qx 'host_resident_allocs: 1' "$tmp/text" '&&' \
    grep -qx 'host_resident_bytes: 1000000' "$tmp/text" '&&' grep -qx 'entries: 0' "$tmp/text"
check "its read costs 4.096 us a step" all grep -qx 'step_us: 504.096' "$tmp/text" '&&' \
    grep -qx 'host_read_bytes_per_step: 4096' "$tmp/text" '&&' grep -qx 'device_resident_bytes: 600000' "$tmp/text"
check "the line that carries it out under libshim names the table's size" grep -qx \
    'libshim: host_resident = "1000000" (or SHIM_HOST_RESIDENT) keeps allocations of these sizes on the host: 1 in this model' \
    "$tmp/text"
check "the answer line says what stays on the host and what it reads" grep -q \
    '^answer: fits in .*, 1 allocation (0.00 GiB) kept on the host and read in place (0.00 MiB a step); the least' \
    "$tmp/text"
check "placement line with the share of the peak" grep -q '^placement: .*host-resident 1 allocations, 0.00 GiB (62.5% of the peak)' "$tmp/text"
check "floor without the table" grep -qx 'floor_bytes: 600000' "$tmp/text"

"$shimplan" "$tmp/m.model" --budget 1100000 --as-given --json --proposals 3 >"$tmp/json"
json_check "json keeps the placement fields" \
    "j['host_placement'] is True and j['host_resident_allocs'] == 1 and j['moved_allocs'] == 0 and j['host_read_bytes_per_step'] == 4096 and abs(j['host_resident_share'] - 0.625) < 1e-9"
json_check "json: the sizes for host_resident and how many allocations they match" \
    "j['host_resident_sizes'] == [1000000] and j['host_resident_size_matches'] == 1"
json_check "proposals say where the host placement enters" \
    "[p['host_resident_allocs'] for p in j['proposals']] == [0, 1, 1] and j['proposals'][2]['budget_bytes'] == 600000"

"$shimplan" "$tmp/m.model" --budget 1100000 --as-given --proposals 3 >"$tmp/text"
check "proposals placement table" all grep -qx 'proposal_placement 1600000 0 0 0 0' "$tmp/text" '&&' \
    grep -qx 'proposal_placement 600000 1000000 1 0 4096' "$tmp/text"

# --no-host-placement: the same output as the model without read bytes (which has no placement
# lines: the output of before).
"$shimplan" "$tmp/m.model" --budget 1100000 --as-given --proposals 3 --no-host-placement >"$tmp/off"
table 1 '' >"$tmp/m.model"
"$shimplan" "$tmp/m.model" --budget 1100000 --as-given --proposals 3 >"$tmp/plain"
check "--no-host-placement prints what a model without reads prints" cmp "$tmp/off" "$tmp/plain"
check "no placement lines without reads" bash -c "! grep -q 'placement' '$tmp/plain'"

table 1000 @4KiB >"$tmp/m.model"
"$shimplan" "$tmp/m.model" --budget 1100000 --as-given --entries >"$tmp/text"
check "at 1000 GB/s the table is moved on a schedule" all grep -qx 'moved_allocs: 1' "$tmp/text" '&&' \
    grep -qx 'entry 1 0 4 -1 5' "$tmp/text" '&&' grep -qx 'step_us: 500.000' "$tmp/text"

# A table and its optimizer state of one size, both read 4 KiB at operation 0: the budget holds
# one of them, so the plan keeps the other on the host; host_resident, which matches by size,
# keeps both there, and shim-plan says what the step is then (two reads: 504.096 -> 508.192 us).
printf 'hw 1 1 1 0\nop 100\nop 100\nop 100\nop 100\nop 100\nalloc 100000 -1 -1 0 1 2 3 4\nalloc 1000000 -1 -1 0@4KiB\nalloc 1000000 -1 -1 0@4KiB\nalloc 500000 2 3 2 3\n' \
    >"$tmp/two.model"
"$shimplan" "$tmp/two.model" --budget 2100000 --as-given >"$tmp/text"
check "two of one size: the plan keeps one on the host, at 504.096 us" \
    all grep -qx 'host_resident_allocs: 1' "$tmp/text" '&&' grep -qx 'step_us: 504.096' "$tmp/text"
check "... and says host_resident keeps both, and the step with both there" all grep -qx \
    'libshim: host_resident = "1000000" (or SHIM_HOST_RESIDENT) keeps allocations of these sizes on the host: 2 in this model, more than the plan keeps there' \
    "$tmp/text" '&&' grep -q '^libshim: with all 2 on the host the step is 508.192 us, 1.008x the plan' "$tmp/text"
"$shimplan" "$tmp/two.model" --budget 2100000 --as-given --json >"$tmp/json"
json_check "json: host_resident_as_sized, both on the host, two reads" \
    "j['host_resident_as_sized'] == {'allocs': 2, 'feasible': True, 'step_us': 508.192, 'stall_us': 8.192, 'host_read_bytes_per_step': 8192}"

# Generated models without read bytes: the output with the option's default and with it off is
# byte-identical, text and JSON.
for spec in "${SPECS[@]}"; do
    "$shimplan" --generate "$spec" -o "$tmp/g.model"
    "$shimplan" "$tmp/g.model" --budget 70% --proposals 4 --entries >"$tmp/a"
    "$shimplan" "$tmp/g.model" --budget 70% --proposals 4 --entries --no-host-placement >"$tmp/b"
    check "$spec: text unchanged" cmp "$tmp/a" "$tmp/b"
    "$shimplan" "$tmp/g.model" --budget 70% --proposals 4 --json >"$tmp/a"
    "$shimplan" "$tmp/g.model" --budget 70% --proposals 4 --json --no-host-placement >"$tmp/b"
    check "$spec: json unchanged" cmp "$tmp/a" "$tmp/b"
done

exit $((fails > 0))
