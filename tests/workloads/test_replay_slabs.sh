#!/usr/bin/env bash
# test_replay_slabs.sh — small allocations are planned as libshim holds them: in slabs, whose
# chunks count whole (planner/plan_slab.c). A hand-made model of three units and eight slab
# members of 200-768 KiB (two 768 KiB members fill most of a 2 MiB slab, so a third opens
# another) is planned by shim-plan, and replayed under libshim at 90% of that held peak, where
# libshim's in-process plan must count the same memory: its native peak, floor and prediction
# equal shim-plan's for the same budget, and shim-report plan on the trace says the same.
# Counting members' blocks instead (the old rule, or `make mutate`'s entry) makes the in-process
# peak 4 MiB lower than shim-plan's.
set -u
source "$(dirname "$0")/../shim/shim_env.sh"
REPLAY="$B/replay" PLAN="$B/shim-plan" REPORT="$B/shim-report"
RUN_TIMEOUT=${REPLAY_RUN_TIMEOUT:-120}
scratch work
plan 9

{
    printf 'hw 25 25 1 10\n'
    for _ in $(seq 10); do printf 'op 200\n'; done
    printf 'alloc 8MiB -1 -1 0 5 9\n'     # a weight: a unit
    printf 'alloc 768KiB -1 -1 0 9\n'     # a member that lives throughout
    printf 'alloc 768KiB 0 3 0 3\nalloc 768KiB 1 5 1 5\nalloc 768KiB 2 2 2\n'
    printf 'alloc 512KiB 4 8 4 8\nalloc 640KiB 5 9 5 9\n'
    printf 'alloc 6MiB 1 6 1 6\nalloc 6MiB 3 8 3 8\n' # activations: units
    printf 'alloc 300KiB 6 7 6 7\nalloc 200KiB 7 9 7 9\n'
} >"$work/s.model"

# js FILE PYTHON-EXPRESSION: true when the expression over j (FILE's JSON) is.
js() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }

"$PLAN" "$work/s.model" --budget 100% --planner none --json >"$work/held.json"
# The peak: the units' 20 MiB, two slabs of 2 MiB, the four members then live at 1 byte each.
check "shim-plan: two slabs at most, the held peak 20 MiB of units + 2 slabs + 4 members" \
    js "$work/held.json" "j['held']['slabs_at_most'] == 2 and j['held_peak_bytes'] == (24 << 20) + 4"
budget=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["held_peak_bytes"] * 9 // 10)' \
    "$work/held.json")
"$PLAN" "$work/s.model" --budget "$budget" --json >"$work/plan.json"

rm -f "$work/s.trace"
SHIM_LINK_REMAP=10us SHIM_TRACE_PATH="$work/s.trace" SHIM_LOG_LEVEL=info SHIM_BUDGET="$budget" \
    LD_PRELOAD="$PRELOAD" timeout -k 5 "$RUN_TIMEOUT" "$REPLAY" "$work/s.model" --malloc sync \
    --steps 12 >"$work/shim.out" 2>"$work/shim.err"
rc=$?
timeout -k 5 "$RUN_TIMEOUT" "$REPLAY" "$work/s.model" --malloc sync --steps 12 >"$work/native.out" \
    2>"$work/native.err"
check "under libshim at 90%: exit 0, the native checksum" \
    all [ "$rc" = 0 ] '&&' [ -n "$(grep '^checksum=' "$work/native.out")" ] '&&' \
    [ "$(grep '^checksum=' "$work/shim.out")" = "$(grep '^checksum=' "$work/native.out")" ]
check "the budget held" grep -q 'info: exit: fitted' "$work/shim.err"
"$REPORT" summary --json "$work/s.trace" >"$work/sum.json" 2>"$work/sum.err"
check "the in-process plan was made and recorded" js "$work/sum.json" "len(j['plans']) == 1"
# in_process KEY OFFLINE-KEY: the in-process plan's figure equals shim-plan's.
same() {
    python3 - "$work/sum.json" "$work/plan.json" "$1" "$2" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["plans"][0][sys.argv[3]]
o = json.load(open(sys.argv[2]))[sys.argv[4]]
print(f"in process {p}, shim-plan {o}")
sys.exit(0 if abs(p - o) <= 1e-6 * max(abs(o), 1) else 1)
PY
}
check "in process and offline: the same native peak, slabs counted whole" \
    same native_peak_bytes held_peak_bytes
check "in process and offline: the same floor" same floor_bytes floor_bytes
check "in process and offline: the same prediction" same predicted_us step_us
read -r step pbudget < <(python3 -c "import json,sys
p = json.load(open(sys.argv[1]))['plans'][0]; print(p['model_step'], p['budget_bytes'])" \
    "$work/sum.json")
"$REPORT" plan "$work/s.trace" --step "$step" --budget "$pbudget" --json >"$work/report.json" \
    2>"$work/report.err"
check "shim-report plan on the trace: the in-process prediction" \
    js "$work/report.json" "abs(j['step_us'] - json.load(open('$work/sum.json'))['plans'][0]['predicted_us']) < 1e-3"
check "shim-report plan on the trace: the same floor" \
    js "$work/report.json" "j['floor_bytes'] == json.load(open('$work/sum.json'))['plans'][0]['floor_bytes']"
[ "$fails" -eq 0 ]
