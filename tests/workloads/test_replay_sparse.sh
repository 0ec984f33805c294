#!/usr/bin/env bash
# test_replay_sparse.sh — replay runs partial touches (OP@BYTES, planner/MODEL-FORMAT.md) as an
# embedding lookup reads: every 4 KiB page of a contiguous run of BYTES, at a per-step offset
# (tests/workloads/replay_kernel.c). With the table host-located (--host), the simulator counts
# exactly the run's pages per touch and charges their link time to the kernel; the checksum is
# the device-located run's, and under libshim at 75% of the native peak it is the native one.
set -u
source "$(dirname "$0")/../shim/shim_env.sh"
source "$(dirname "$0")/replay_env.sh" # run, rc, sum, field, stat
REPLAY="$B/replay" REPORT="$B/shim-report"
scratch work
# Every run on a 25 GB/s link (the figures below are reckoned at it).
export SIMGPU_H2D_GBPS=25

plan 10
# A 64 MiB table read 40000 bytes by ops 0 and 1 (ceil(40000 / 4096) = 10 pages each), beside a
# 1 MiB allocation both read whole; and the same model with whole touches.
cat >"$work/sparse.model" <<'M'
hw 25 25 1 10
op 10
op 10
alloc 64MiB -1 -1 0@40000 1@40000
alloc 1MiB -1 -1 0 1
M
sed 's/@40000//g' "$work/sparse.model" >"$work/whole.model"
run native "$REPLAY" "$work/sparse.model"
run host3 "$REPLAY" "$work/sparse.model" --host 0
run host1 "$REPLAY" "$work/sparse.model" --host 0 --steps 1
run whole3 "$REPLAY" "$work/whole.model" --host 0
run whole1 "$REPLAY" "$work/whole.model" --host 0 --steps 1
c=$(sum native)
check "native: exit $(rc native), checksum ${c:-none}" [ "$(rc native)" = 0 -a -n "$c" ]
check "table host-located: the native checksum ($(sum host3))" [ -n "$c" -a "$(sum host3)" = "$c" ]
# Two steps more: 2 steps x 2 touches x 10 pages (the setup's seeding and step 0 cancel out).
pages=$(($(stat host3 zero_copy_pages) - $(stat host1 zero_copy_pages)))
check "partial touches: $pages zero-copy pages in two steps = 2 x 2 x 10" [ "$pages" = 40 ]
# Whole touches read the sampled pages: 64 MiB / 64 KiB stride + the tail = 1025 per touch.
pages=$(($(stat whole3 zero_copy_pages) - $(stat whole1 zero_copy_pages)))
check "whole touches: $pages zero-copy pages in two steps = 2 x 2 x 1025" [ "$pages" = 4100 ]
# Each op: 10 us plus 10 pages of 4096 bytes at 25 GB/s = 1.6384 us.
got=$(field host3 device_us_per_step)
check "partial touches: a step takes ${got:-?} us = 2 x (10 + 1.6384) us" \
    python3 -c 'import sys; sys.exit(abs(float(sys.argv[1]) - 23.2768) > 1e-3)' "${got:-0}"
run lose "$REPLAY" "$work/sparse.model" --lose 1:0
check "op 0 of step 1 writing nothing changes the checksum (op 1 reads its run)" \
    [ -n "$(sum lose)" -a "$(sum lose)" != "$c" ]
run notcyclic "$REPLAY" "$work/sparse.model" --host 5
check "--host of no cyclic allocation: exit 2, named" \
    all [ "$(rc notcyclic)" = 2 ] '&&' grep -q "not a cyclic allocation" "$work/notcyclic.err"

# Under libshim: the table must leave the device between its touches at 75% of the peak.
cat >"$work/shim.model" <<'M'
hw 25 25 1 10
op 100
op 100
op 100
op 100
alloc 64MiB -1 -1 0@40000 3@40000
alloc 32MiB -1 -1 1 2
alloc 32MiB 1 2 1 2
M
run shim-native "$REPLAY" "$work/shim.model" --steps 12 --malloc sync
c=$(sum shim-native) P=$(stat shim-native peak_device_bytes)
SHIM_BUDGET=$((P * 3 / 4)) SHIM_TRACE_PATH="$work/shim.trace" \
    run shim env LD_PRELOAD="$PRELOAD" "$REPLAY" "$work/shim.model" --steps 12 --malloc sync
moves=$("$REPORT" moves --json "$work/shim.trace" 2>/dev/null |
    python3 -c 'import json, sys; print(len(json.load(sys.stdin)["moves"]))' 2>/dev/null)
check "under libshim at 75%: exit $(rc shim), the native checksum ${c:-none} ($(sum shim))" \
    [ "$(rc shim)" = 0 -a -n "$c" -a "$(sum shim)" = "$c" ]
check "under libshim: device peak $(stat shim peak_device_bytes) <= $((P * 3 / 4))" \
    [ "$(stat shim peak_device_bytes)" -le $((P * 3 / 4)) ]
check "under libshim: moves in the trace (${moves:-none}), no illegal access" \
    [ "${moves:-0}" -gt 0 -a "$(stat shim illegal_accesses)" = 0 ]
[ "$failures" -eq 0 ]
