#!/usr/bin/env bash
# Runs every test given on the command line and prints one closing line that CI
# reads: "tests: N passed, N failed, N skipped".
#
# A test is an executable (a cmocka program, or a script). Counting:
#   - cmocka summary lines ("[  PASSED  ] N test(s)." / "[  FAILED  ] N test(s)"
#     / "[  SKIPPED ] N test(s)") give the counts of a program;
#   - otherwise lines "ok - NAME" / "not ok - NAME" / "skip - NAME" count one each;
#   - otherwise the exit status counts once: 0 pass, 77 skip, anything else fail.
# A non-zero exit status is a failure even when the counted lines say otherwise.
# Environment for every test: BUILD (artifact folder), LD_LIBRARY_PATH
# including $BUILD/simgpu, and SHARED (the ../shared folder).
set -u
BUILD=${BUILD:-build}
TIMEOUT=${TEST_TIMEOUT:-600}
root=$(cd "$(dirname "$0")/.." && pwd)
export BUILD SHARED=${SHARED:-$root/../shared}
export LD_LIBRARY_PATH="$root/$BUILD/simgpu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
logdir="$BUILD/test-logs"
mkdir -p "$logdir"
passed=0 failed=0 skipped=0 failed_names=()

count() { grep -E "$1" "$2" | sed -E "s/$1/\\1/" | awk '{s+=$1} END {print s+0}'; }

for t in "$@"; do
    name=$(basename "$t")
    log="$logdir/$name.log"
    timeout --kill-after=10 "$TIMEOUT" "$t" >"$log" 2>&1
    rc=$?
    p=$(count '^\[  PASSED  \] ([0-9]+) test.*' "$log")
    f=$(count '^\[  FAILED  \] ([0-9]+) test.*' "$log")
    s=$(count '^\[  SKIPPED \] ([0-9]+) test.*' "$log")
    if [ $((p + f + s)) -eq 0 ]; then
        p=$(grep -c '^ok - ' "$log")
        f=$(grep -c '^not ok - ' "$log")
        s=$(grep -c '^skip - ' "$log")
    fi
    if [ $((p + f + s)) -eq 0 ]; then
        case $rc in 0) p=1 ;; 77) s=1 ;; *) f=1 ;; esac
    elif [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ "$f" -eq 0 ]; then
        f=1
    fi
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
    if [ "$f" -gt 0 ]; then
        failed_names+=("$name")
        printf 'FAIL  %-32s %d passed, %d failed (exit %d, log %s)\n' "$name" "$p" "$f" "$rc" "$log"
        tail -n 30 "$log" | sed 's/^/    | /'
    else
        printf 'ok    %-32s %d passed, %d skipped\n' "$name" "$p" "$s"
    fi
done

if [ ${#failed_names[@]} -gt 0 ]; then
    echo "failed: ${failed_names[*]}"
fi
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
