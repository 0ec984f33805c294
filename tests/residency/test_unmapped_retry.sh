#!/usr/bin/env bash
# tests/residency/test_unmapped_retry.sh — on a device without host VMM (evicted ranges left
# unmapped, SHIM_UNMAPPED_EVICTION=true), a single failure of a restore's copy or mapping never
# reaches the program: the range is restored again (shim_resid_touch.c), as the next touch would,
# and the job ends with the native checksum. The fault loop found the case at indices its
# `make test` sample never reaches (cuMemMap 63 of 68, cuMemSetAccess 45 and 56 of 60,
# cuMemcpyAsync 32 and 34 of 43, 2026-11-29: the launch failed with cudaErrorUnknown); here
# every index in the last third of each entry's calls from libshim (where the restores are) fails
# once, in its own run. A sticky failure of the mapping still fails the operation (nothing can
# be mapped), and the log says after how many tries.
set -u
source "$(dirname "$0")/resid_env.sh"
ARGS=(--mode async --layers 1 --hidden 512 --batch 1 --seq 128 --vocab 1024 --iters 1)
ENTRIES=(cuMemMap cuMemSetAccess cuMemcpyAsync)
plan $((${#ENTRIES[@]} + 3 + SAN_CHECKS))

native native "${ARGS[@]}"
want=$(checksum native)
P=$(figure native peak_device_bytes)
check "native run: exit 0, checksum ${want:-none}" test "$(rc native)" = 0 -a -n "$want" -a -n "$P"
export SIMGPU_HOST_VMM=0 SHIM_UNMAPPED_EVICTION=true SHIM_BUDGET=$((${P:-0} / 2))
SIMGPU_FAIL_CALLER=libshim shimmed clean "${ARGS[@]}"
check "unmapped, half the peak, no failure: exit 0, the native checksum, $(restores clean) restores" \
    all test "$(rc clean)" = 0 '&&' test "$(checksum clean)" = "$want" '&&' \
    test "$(restores clean)" -gt 0

# calls ENTRY: how many calls of ENTRY libshim made in the clean run.
calls() {
    python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["caller_calls"].get(sys.argv[2], 0))' "$work/clean.json" "$1"
}
# each_once ENTRY: every N in the last third of ENTRY's calls failing once, each in its own run
# (two at a time); true when there were some and every run ended as the native one.
each_once() {
    local e=$1 n total first bad=0 ran=0
    total=$(calls "$e")
    [ "${total:-0}" -gt 0 ] || return 1
    first=$((total - total / 3))
    for n in $(seq "$first" "$total"); do
        SIMGPU_FAIL_CALLER=libshim SIMGPU_FAIL="$e:$n" shimmed "f-$e-$n" "${ARGS[@]}" &
        if [ $((n % 2)) = 0 ]; then wait; fi
    done
    wait
    for n in $(seq "$first" "$total"); do
        ran=$((ran + 1))
        if [ "$(rc "f-$e-$n")" != 0 ] || [ "$(checksum "f-$e-$n")" != "$want" ]; then
            bad=$((bad + 1))
            echo "# SIMGPU_FAIL=$e:$n: exit $(rc "f-$e-$n"), checksum $(checksum "f-$e-$n")"
            grep -E 'libshim.*error|failed:' "$work/f-$e-$n.err" | head -n 3 | sed 's/^/# | /'
        fi
    done
    echo "# $e: $ran runs (N = $first..$total), $bad not as the native run"
    [ "$bad" = 0 ] && [ "$ran" -gt 0 ]
}
for e in "${ENTRIES[@]}"; do
    check "unmapped: one failure of $e at each N of the last third of its $(calls "$e") calls: the native checksum every time" \
        each_once "$e"
done

# A mapping that fails for good: the operation fails, and the log says after how many tries.
SIMGPU_FAIL_CALLER=libshim SIMGPU_FAIL="cuMemMap:$(calls cuMemMap):sticky" shimmed sticky "${ARGS[@]}"
check "unmapped: cuMemMap failing for good from its last call: exit 1, no wrong checksum, 'failed 3 times' said" \
    all test "$(rc sticky)" = 1 '&&' test -z "$(checksum sticky)" '&&' \
    grep -q 'could not come back (its restore failed 3 times)' "$work/sticky.err"
check_sanitizers
[ "$failures" -eq 0 ]
