#!/usr/bin/env bash
# Runs every test given on the command line and prints one closing line that CI
# reads: "tests: N passed, N failed, N skipped".
#
# A test is an executable: a cmocka program or a script that prints TAP-like lines. Each
# declares how many results it will report, and the runner holds it to that:
#   - a cmocka program: its plan is the sum of its "[==========] Running N test(s)." lines,
#     its results the "[  PASSED  ] N" / "[  FAILED  ] N" / "[  SKIPPED ] N" summary lines;
#   - a script: its plan is one line "1..N" (tests/check.sh's plan N), printed first or last;
#     its results are the lines "ok ...", "not ok ..." and "skip ...", one each, wherever they
#     are indented and with or without " - NAME".
# A test fails when
#   - it exits with a status other than 0 or 77, or a result is "not ok" / FAILED;
#   - it reports no plan, more than one plan line, or a plan of 0 (a test that counts nothing
#     is not a pass; there is no silent exit-status-only test);
#   - its count of results differs from its plan (a checker that crashed, a loop cut short);
#   - its log mixes cmocka lines with ok/not ok/skip lines (one of the two would be ignored).
# A test that exits 77 is skipped as a whole (its plan, or its result lines, or 1, counted as
# skipped) unless it reported a failure: a skip is a skip wherever it is.
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

# sum REGEX LOG: the sum of the numbers the regex's first group captures, one per matching line.
sum() { grep -E "$1" "$2" | sed -E "s/$1/\\1/" | awk '{s+=$1} END {print s+0}'; }
lines() { grep -cE "$1" "$2"; }

# judge LOG RC: sets p, f, s (the counts) and why (empty, or why the test failed as a whole).
judge() {
    local log=$1 rc=$2 plan plans cm
    why=''
    cm=$(lines '^\[ *(=+|PASSED|FAILED|SKIPPED|RUN|OK|ERROR) *\]' "$log")
    p=$(lines '^[[:space:]]*ok([[:space:]]|$)' "$log")
    f=$(lines '^[[:space:]]*not ok([[:space:]]|$)' "$log")
    s=$(lines '^[[:space:]]*skip([[:space:]]|$)' "$log")
    if [ "$cm" -gt 0 ]; then
        if [ $((p + f + s)) -gt 0 ]; then
            why="cmocka lines mixed with $((p + f + s)) ok/not ok/skip lines"
        fi
        plan=$(grep -E '^\[==========\] (.*: )?Running [0-9]+ test' "$log" |
            sed -E 's/.*Running ([0-9]+) test.*/\1/' | awk '{s+=$1} END {print s+0}')
        plans=1
        p=$((p + $(sum '^\[  PASSED  \] ([0-9]+) test.*' "$log")))
        f=$((f + $(sum '^\[  FAILED  \] ([0-9]+) test.*' "$log")))
        s=$((s + $(sum '^\[  SKIPPED \] ([0-9]+) test.*' "$log")))
    else
        plans=$(lines '^1\.\.[0-9]+([[:space:]]|$)' "$log")
        plan=$(grep -E '^1\.\.[0-9]+([[:space:]]|$)' "$log" | head -1 | sed -E 's/^1\.\.([0-9]+).*/\1/')
    fi
    if [ "$rc" -eq 77 ] && [ "$f" -eq 0 ] && [ -z "$why" ]; then
        s=$((s + p)) p=0
        [ "$plans" -eq 1 ] && [ "${plan:-0}" -gt "$s" ] && s=$plan
        [ "$s" -eq 0 ] && s=1
        return
    fi
    if [ -n "$why" ]; then
        :
    elif [ "$rc" -ne 0 ]; then
        why="exit $rc"
    elif [ "$plans" -eq 0 ]; then
        why="no plan line (1..N)"
    elif [ "$plans" -gt 1 ]; then
        why="$plans plan lines"
    elif [ "${plan:-0}" -eq 0 ]; then
        why="a plan of 0: the test counts nothing"
    elif [ $((p + f + s)) -ne "$plan" ]; then
        why="$((p + f + s)) results for a plan of $plan"
    fi
    if [ -n "$why" ] && [ "$f" -eq 0 ]; then f=1; fi
}

for t in "$@"; do
    name=$(basename "$t")
    log="$logdir/$name.log"
    timeout --kill-after=10 "$TIMEOUT" "$t" >"$log" 2>&1
    rc=$?
    judge "$log" "$rc"
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
    if [ "$f" -gt 0 ]; then
        failed_names+=("$name")
        printf 'FAIL  %-32s %d passed, %d failed (exit %d%s, log %s)\n' "$name" "$p" "$f" "$rc" \
            "${why:+; $why}" "$log"
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
