#!/usr/bin/env bash
# test_run_path.sh — the programs built for the simulated device find it without
# LD_LIBRARY_PATH (the README's examples run them so): train_sim, threads_sim and replay carry a
# RUNPATH of $ORIGIN/simgpu; LD_LIBRARY_PATH still wins over it (the tests pick
# build/simgpu/old that way); libshim.so carries no run path at all, so that in the host process
# it resolves the real libcuda.so.1.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
B="$root/${BUILD:-build}"
source "$root/tests/check.sh"
scratch

plan 6


check "train_sim --help without LD_LIBRARY_PATH" \
    sh -c "env -u LD_LIBRARY_PATH '$B/train_sim' --help | grep -q '^usage: train_sim'"
"$B/shim-plan" --generate transformer:layers=2 -o "$tmp/step.model" 2>/dev/null
check "replay MODEL without LD_LIBRARY_PATH: runs and prints its checksum" \
    sh -c "env -u LD_LIBRARY_PATH SIMGPU_QUIET=1 '$B/replay' '$tmp/step.model' --steps 2 | grep -q '^checksum='"
check "threads_sim finds libcuda.so.1 through its run path" \
    sh -c "env -u LD_LIBRARY_PATH ldd '$B/threads_sim' | grep -q 'libcuda.so.1 => $B/simgpu/libcuda.so.1'"
check "train_sim's run path is RUNPATH \$ORIGIN/simgpu (not RPATH)" \
    sh -c "[ \"\$(readelf -d '$B/train_sim' | sed -n 's/.*(RUNPATH).*\[\(.*\)\]\$/\1/p')\" = '\$ORIGIN/simgpu' ] && ! readelf -d '$B/train_sim' | grep -q '(RPATH)'"
check "LD_LIBRARY_PATH still wins: build/simgpu/old is the one loaded" \
    sh -c "LD_LIBRARY_PATH='$B/simgpu/old' ldd '$B/train_sim' | grep -q 'libcuda.so.1 => $B/simgpu/old/libcuda.so.1'"
check "libshim.so has no run path (it must find the host's libcuda.so.1)" \
    sh -c "! readelf -d '$B/libshim.so' | grep -qE '\((RUNPATH|RPATH)\)'"
[ "$fails" -eq 0 ]
