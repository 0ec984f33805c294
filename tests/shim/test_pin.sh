#!/usr/bin/env bash
# Allocations handed to users libshim cannot follow stay on the device for good; pointer queries
# on an evicted managed allocation answer as for device memory (tests/shim/pin_prog.c).
set -u
source "$(dirname "$0")/shim_env.sh"
plan 19
prog="$B/tests/shim/pin_prog"
REPORT="$B/shim-report"
scratch work
shim() { # shim NAME BUDGET MODE [ENV...]: the program under libshim, with a trace
    local name=$1 budget=$2 mode=$3
    shift 3
    env SHIM_MODE=auto SHIM_BUDGET="$budget" SHIM_LOG_LEVEL=info \
        SHIM_TRACE_PATH="$work/$name.trace" "$@" LD_PRELOAD="$PRELOAD" "$prog" "$mode" \
        >"$work/$name.out" 2>"$work/$name.err"
}

# The simulator answers for a VMM range mapped onto host memory as a driver does: host memory,
# and one mapping as the address range. Passing such answers on would show in the query test.
out=$("$prog" hostvmm 2>&1)
check "simgpu: a VMM range on host memory reads as host memory, one mapping as its range ($out)" \
    grep -qx 'hostvmm type 1 range 0 2097152' <<<"$out"

# Pinning: the budget (20 MiB) holds five of the nine 4 MiB allocations.
"$prog" pin >"$work/native.out" 2>&1
check "native pin run: legacy IPC of cuMemAlloc memory works, a retain of it is refused" \
    grep -qx 'ipc 0' "$work/native.out"
shim pin 20MiB pin
check "libshim pin run exits 0" test -s "$work/pin.out"
check "libshim: every checksum equals the native one" \
    diff <(grep '^sum' "$work/native.out") <(grep '^sum' "$work/pin.out")
check "libshim: cuMemGetAddressRange answers the whole allocation, not one chunk" \
    grep -qx 'range 0 0 4194304' "$work/pin.out"
check "libshim: cuMemRetainAllocationHandle of a managed allocation is refused, as natively ($(grep '^retain' "$work/native.out"))" \
    bash -c "grep -qx 'retain [1-9][0-9]*' '$work/pin.out' &&
             [ \"\$(grep '^retain' '$work/native.out')\" = \"\$(grep '^retain' '$work/pin.out')\" ]"
check "libshim: legacy IPC of a managed (VMM) allocation gets the driver's refusal" \
    grep -qx 'ipc 1' "$work/pin.out"
check "libshim: the refusal is explained once" \
    test "$(grep -c 'cuIpcGetMemHandle on a managed allocation failed' "$work/pin.err")" = 1
"$REPORT" moves --json "$work/pin.trace" >"$work/pin.json" 2>"$work/pin.report.err"
check "shim-report moves --json reads the pinned run" test -s "$work/pin.json"
verdict=$(python3 - "$work/pin.json" "$work/pin.out" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
addr = dict(l.split()[1:3] for l in open(sys.argv[2]) if l.startswith("addr "))
pins = {int(p["addr"], 16): p for p in m["pins"]}
want = {int(addr["P1"], 16): "address_range"}
bad = []
for a, why in want.items():
    p = pins.get(a)
    if not p or p["reason"] != why:
        bad.append("no %s pin at %x" % (why, a)); continue
    later = [v for v in m["moves"] if v["unit_id"] == p["unit_id"] and v["start_us"] >= p["time_us"]]
    before = [v for v in m["moves"] if v["unit_id"] == p["unit_id"] and v["start_us"] < p["time_us"]]
    if later: bad.append("%s moved after its pin" % why)
    if p["from"] == "host" and (not before or before[-1]["direction"] != "to device"):
        bad.append("%s pinned from the host without a restore" % why)
if int(addr["P0"], 16) in pins: bad.append("the refused IPC export left a pin")
if int(addr["P2"], 16) in pins: bad.append("the refused retain left a pin")
others = {v["unit_id"] for v in m["moves"] if v["direction"] == "to host"}
if len(others) < 6: bad.append("only %d units were evicted" % len(others))
print("; ".join(bad) or "ok")
EOF
)
check "trace: the pinned allocations never move after their pin, the others do ($verdict)" \
    test "$verdict" = ok
check "shim-report moves (text) lists the pin" \
    test "$("$REPORT" moves "$work/pin.trace" | grep -c '^pinned: allocation')" = 1

# Pointer queries: X is evicted (a 10 MiB budget holds two 4 MiB allocations), then queried.
"$prog" query >"$work/qnative.out" 2>&1
shim query 10MiB query
check "libshim: every pointer answer on the evicted allocation equals the native one" \
    diff "$work/qnative.out" "$work/query.out"
check "the answers say device memory (type 2) of device 0, range X..X+4MiB, the context" \
    grep -q '^attr 2 rc=0 value=2$' "$work/query.out"
"$REPORT" moves --json "$work/query.trace" >"$work/query.json" 2>/dev/null
xev=$(python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
first = min(v["unit_id"] for v in m["moves"])
d = [v["direction"] for v in m["moves"] if v["unit_id"] == first]
print(",".join(d))' "$work/query.json")
check "trace: X was evicted before the queries, and restored once, for its checksum ($xev)" \
    test "$xev" = "to host,to device"

# Failing calls: each hooked entry fails once; the program gets the error, nothing crashes, and
# the data stays intact.
for e in cuIpcGetMemHandle:1 cuMemGetAddressRange_v2:1 cuMemRetainAllocationHandle:1; do
    shim "fail-${e%%:*}" 20MiB pin SIMGPU_FAIL="$e"
    rc=$?
    check "SIMGPU_FAIL=$e: exit $rc, checksums intact" \
        diff <(grep '^sum' "$work/native.out") <(grep '^sum' "$work/fail-${e%%:*}.out")
done
check "SIMGPU_FAIL=cuMemGetAddressRange_v2:1: the program got the error, no range pin" \
    bash -c "grep -q '^range [1-9]' '$work/fail-cuMemGetAddressRange_v2.out' &&
             ! '$REPORT' moves '$work/fail-cuMemGetAddressRange_v2.trace' | grep -q 'by address_range'"
check "SIMGPU_FAIL=cuMemRetainAllocationHandle:1: the program got the error, no retain pin" \
    bash -c "grep -q '^retain [1-9]' '$work/fail-cuMemRetainAllocationHandle.out' &&
             ! '$REPORT' moves '$work/fail-cuMemRetainAllocationHandle.trace' | grep -q 'by retain'"
[ "$failures" -eq 0 ]
