#!/usr/bin/env bash
# Per-thread host clocks (test_sim_host) without the driver-wide VMM lock (SIMGPU_VMM_SERIAL=0),
# under jitter (real-time delays before every command must not move virtual time), and twice
# with a timeline each, the second run jittered: the two timelines hold the same commands at the
# same virtual times (sorted: workers write their lines in real-time order). The cmocka runs
# report; a timeline that differs fails the script by its exit status.
set -u
BUILD=${BUILD:-build}
prog="$BUILD/tests/simgpu/test_sim_host"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
SIMGPU_VMM_SERIAL=0 "$prog" || exit
SIMGPU_JITTER=7 "$prog" || exit
SIMGPU_TIMELINE="$work/a" "$prog" >/dev/null 2>&1 || exit
SIMGPU_TIMELINE="$work/b" SIMGPU_JITTER=11 "$prog" >/dev/null 2>&1 || exit
sort "$work/a" >"$work/a.sorted"
sort "$work/b" >"$work/b.sorted"
n=$(wc -l <"$work/a.sorted")
if [ "$n" -gt 100 ] && cmp -s "$work/a.sorted" "$work/b.sorted"; then
    echo "# two runs, one jittered: the same $n commands at the same virtual times"
else
    echo "# two runs gave different timelines ($n lines in the first)"
    diff "$work/a.sorted" "$work/b.sorted" | head -n 10 | sed 's/^/#   /'
    exit 1
fi
