#!/usr/bin/env bash
# A free of a managed allocation waits for the program's queued work, as cuMemFree does, on
# every kind of stream; and where the program's streams can be told apart it does so without a
# context synchronisation (which would also wait for libshim's own copies). Natively, every case
# waits through the real cuMemFree. A free of a small driver allocation (below
# min_managed_bytes) while a copy of libshim's runs is kept for later: it waits for the program's
# work, not for the copy (cuMemFree would wait for both), and the real cuMemFree comes at the
# program's next allocation once the copy is over; with nothing moving it is freed at once.
set -u
source "$(dirname "$0")/shim_env.sh"
plan 19
prog="$B/tests/shim/free_wait_prog"
run() {
    SHIM_MODE=auto SHIM_BUDGET=64MiB SHIM_MIN_MANAGED_BYTES=1MiB SHIM_TRACE_PATH= \
        LD_PRELOAD="$PRELOAD" "$prog" "$1" 2>&1
}
for c in created legacy destroyed own-ptds other-ptds; do
    out=$("$prog" "$c" 2>&1)
    check "native $c: the free waited for the kernel, through the real cuMemFree ($out)" \
        grep -q "^$c done=1 ctx_syncs=0 real_frees=1$" <<<"$out"
done
# The program's streams are named: the free waits for each of them, not for the whole device.
for c in created legacy own-ptds; do
    out=$(run "$c")
    check "libshim $c: the free waited for the kernel, by stream, not the context ($out)" \
        grep -q "^$c done=1 ctx_syncs=0 real_frees=0$" <<<"$out"
done
# A destroyed stream or another thread's per-thread stream has no name that reaches it.
for c in destroyed other-ptds; do
    out=$(run "$c")
    check "libshim $c: the free waited for the kernel, through a context synchronisation ($out)" \
        grep -q "^$c done=1 ctx_syncs=1 real_frees=0$" <<<"$out"
done
for c in small-moving small-idle; do
    out=$("$prog" "$c" 2>&1)
    check "native $c: the free waited for the kernel, through the real cuMemFree ($out)" \
        grep -q "^$c done=1 ctx_syncs=0 real_frees=1$" <<<"$out"
done
out=$(run small-moving)
check "libshim small-moving: the free waited for the kernel, not for the restore, and was kept ($out)" \
    grep -q "^small-moving done=1 ctx_syncs=0 real_frees=0$" <<<"$out"
check "libshim small-moving: the kept free was made at the next allocation ($out)" \
    grep -q "^small-moving later_frees=1$" <<<"$out"
out=$(run small-idle)
check "libshim small-idle: nothing moving, freed at once ($out)" \
    grep -q "^small-idle done=1 ctx_syncs=0 real_frees=1$" <<<"$out"
check "libshim small-idle: nothing kept for later ($out)" grep -q "^small-idle later_frees=0$" <<<"$out"
# libshim's own calls on this path failing: the buffer id not known (freed at once, as without
# libshim), and the kept free refused by the driver later (said once; the program goes on).
out=$(SIMGPU_FAIL_CALLER=libshim SIMGPU_FAIL=cuPointerGetAttribute:1 run small-moving)
check "libshim small-moving, its buffer-id query failing: freed at once ($out)" \
    grep -q "^small-moving done=1 ctx_syncs=0 real_frees=1$" <<<"$out"
out=$(SIMGPU_FAIL_CALLER=libshim SIMGPU_FAIL=cuMemFree_v2:1 run small-moving)
check "libshim small-moving, the kept free failing later: said, and the program goes on ($out)" \
    test "$(grep -c -e "failed in the driver: their memory stays allocated" \
        -e "^small-moving later_frees=1$" <<<"$out")" = 2
# The simulator's timeline (SIMGPU_TIMELINE) shows the slow kernel on its engine with its cost.
tl=$(mktemp)
SIMGPU_TIMELINE="$tl" "$prog" created >/dev/null 2>&1
line=$(grep ' slow$' "$tl" | head -n 1)
check "SIMGPU_TIMELINE: the slow kernel ran on the compute engine for 10000 us (${line:-none})" \
    awk '$1 == "kernel" && $3 == 0 && $5 - $4 == 10000 { ok = 1 } END { exit !ok }' <<<"$line"
rm -f "$tl"
[ "$failures" -eq 0 ]
