#!/usr/bin/env bash
# test_train_multidev.sh — train_sim on several simulated devices: two replicas in one process
# (--devices 2, cudaSetDevice before each step) and the torchrun layout (four processes, each
# with LOCAL_RANK=r and SIMGPU_DEVICES=4, so process r runs on device r) give the single-device
# checksum, and each device's memory is used only by the replica on it.
# Prints "ok - NAME" / "not ok - NAME" lines (tests/run_tests.sh counts them).
source "$(dirname "$0")/train_sim_env.sh"
plan 4
# peak STATS D: device D's peak_device_bytes in a SIMGPU_STATS file.
peak() {
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["devices"][int(sys.argv[2])]["peak_device_bytes"])' "$1" "$2"
}

SMALL=(--layers 3 --hidden 512 --batch 4 --seq 256 --iters 3)

"$bin" "${SMALL[@]}" >"$tmp/single.out" 2>"$tmp/single.err"
want=$(field checksum "$tmp/single.out")
if [ -n "$want" ]; then
    ok "single-device reference run"
else
    not_ok "single-device reference run"
    cat "$tmp/single.err"
fi

# 1. Two replicas in one process, one per device.
if SIMGPU_DEVICES=2 SIMGPU_STATS="$tmp/two.json" "$bin" "${SMALL[@]}" --devices 2 \
    >"$tmp/two.out" 2>"$tmp/two.err" &&
    [ "$(field checksum "$tmp/two.out")" = "$want" ] &&
    [ "$(grep -c '^iter [0-9]* device=1 ' "$tmp/two.out")" -eq 3 ] &&
    [ "$(peak "$tmp/two.json" 0)" -gt 0 ] &&
    [ "$(peak "$tmp/two.json" 0)" = "$(peak "$tmp/two.json" 1)" ]; then
    ok "two devices in one process: single-device checksum, the same peak on each device"
else
    not_ok "two devices in one process: single-device checksum, the same peak on each device"
    cat "$tmp/two.err"
fi

# 2. torchrun layout: four processes at once, process r on device r.
pids=()
for r in 0 1 2 3; do
    LOCAL_RANK=$r RANK=$r WORLD_SIZE=4 SIMGPU_DEVICES=4 SIMGPU_STATS="$tmp/rank$r.json" \
        "$bin" "${SMALL[@]}" --mode async >"$tmp/rank$r.out" 2>"$tmp/rank$r.err" &
    pids+=($!)
done
good=1
for r in 0 1 2 3; do
    wait "${pids[$r]}" || good=0
    [ "$(field checksum "$tmp/rank$r.out")" = "$want" ] || good=0
    for d in 0 1 2 3; do
        p=$(peak "$tmp/rank$r.json" $d 2>/dev/null || echo x)
        if [ "$d" = "$r" ]; then [ "$p" != x ] && [ "$p" -gt 0 ] || good=0; else [ "$p" = 0 ] || good=0; fi
    done
done
if [ $good = 1 ]; then
    ok "torchrun layout (4 ranks, LOCAL_RANK=r): single-device checksum, only device r used"
else
    not_ok "torchrun layout (4 ranks, LOCAL_RANK=r): single-device checksum, only device r used"
    cat "$tmp"/rank*.err
fi

# 3. A device the simulator does not have fails cleanly, naming the call.
SIMGPU_DEVICES=2 "$bin" "${SMALL[@]}" --device 1 --devices 2 >"$tmp/bad.out" 2>"$tmp/bad.err"
rc=$?
if [ $rc -eq 1 ] && grep -q 'cudaSetDevice.*cudaErrorInvalidDevice' "$tmp/bad.err"; then
    ok "a device past the count: exit 1, cudaSetDevice named"
else
    not_ok "a device past the count: exit 1, cudaSetDevice named (rc=$rc)"
    cat "$tmp/bad.err"
fi
exit $failed
