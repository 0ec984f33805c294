#!/usr/bin/env bash
# tests/run_tests.sh on tiny fake tests, one per rule: each good one passes, each broken one
# (no plan, a count that differs from the plan, nothing counted, cmocka lines beside ok/not ok
# lines, an indented or bare "not ok", a cmocka program that stops early) is a failure, and ok
# lines followed by exit 77 are a skip. RUNNER names another runner to judge (an old one: most
# of these fail against it).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
RUNNER=${RUNNER:-$root/tests/run_tests.sh}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$root/tests/check.sh"

# judged NAME WANT BODY: a fake test whose script is BODY, run alone by the runner, must get the
# closing line WANT and the runner's exit status (0 when WANT has 0 failed, 1 otherwise).
judged() {
    local name=$1 want=$2 body=$3 t="$tmp/$1" got rc wrc=0
    printf '#!/usr/bin/env bash\n%s\n' "$body" >"$t"
    chmod +x "$t"
    BUILD="$tmp/build" "$RUNNER" "$t" >"$tmp/$name.out" 2>&1
    rc=$?
    got=$(tail -n 1 "$tmp/$name.out")
    case $want in *" 0 failed"*) ;; *) wrc=1 ;; esac
    if [ "$got" != "$want" ] || [ "$rc" != "$wrc" ]; then
        echo "want '$want' (exit $wrc), got '$got' (exit $rc):"
        cat "$tmp/$name.out"
        return 1
    fi
}

plan 20
# What passes.
check "plan first, two ok: 2 passed" \
    judged plan-first 'tests: 2 passed, 0 failed, 0 skipped' 'echo 1..2; echo "ok - a"; echo "ok - b"'
check "plan last, two ok: 2 passed" \
    judged plan-last 'tests: 2 passed, 0 failed, 0 skipped' 'echo "ok - a"; echo "ok - b"; echo 1..2'
check "a skip line counts in the plan: 1 passed, 1 skipped" \
    judged skip-line 'tests: 1 passed, 0 failed, 1 skipped' 'echo 1..2; echo "ok - a"; echo "skip - b: absent"'
check "a script that skips in one line (exit 0): 1 skipped" \
    judged skip-only 'tests: 0 passed, 0 failed, 1 skipped' 'echo 1..1; echo "skip - no shared folder"'
check "a cmocka program: its Running line is the plan" \
    judged cmocka 'tests: 3 passed, 0 failed, 0 skipped' \
    'printf "[==========] tests: Running 3 test(s).\n[  PASSED  ] 3 test(s).\n"'
check "two cmocka groups in one program: 5 passed" \
    judged cmocka-two 'tests: 5 passed, 0 failed, 0 skipped' \
    'printf "[==========] Running 2 test(s).\n[  PASSED  ] 2 test(s).\n[==========] Running 3 test(s).\n[  PASSED  ] 3 test(s).\n"'
# What fails (or skips) now; each of these passed under the runner before issue 27.
check "prints nothing, exits 0: a failure" \
    judged nothing 'tests: 0 passed, 1 failed, 0 skipped' 'exit 0'
check "ok lines without a plan: a failure" \
    judged no-plan 'tests: 2 passed, 1 failed, 0 skipped' 'echo "ok - a"; echo "ok - b"'
check "fewer results than the plan (a checker that crashed): a failure" \
    judged short 'tests: 2 passed, 1 failed, 0 skipped' 'echo 1..3; echo "ok - a"; echo "ok - b"'
check "more results than the plan (a check counted twice): a failure" \
    judged long 'tests: 3 passed, 1 failed, 0 skipped' 'echo 1..2; echo "ok - a"; echo "ok - b"; echo "ok - c"'
check "two plan lines: a failure" \
    judged two-plans 'tests: 2 passed, 1 failed, 0 skipped' 'echo 1..1; echo "ok - a"; echo 1..1; echo "ok - b"'
check "a plan of 0, exit 0: counts nothing, a failure" \
    judged plan-zero 'tests: 0 passed, 1 failed, 0 skipped' 'echo 1..0'
check "a cmocka summary beside a not ok line: a failure" \
    judged mixed-not-ok 'tests: 1 passed, 1 failed, 0 skipped' \
    'printf "[==========] Running 1 test(s).\n[  PASSED  ] 1 test(s).\nnot ok - hidden\n"'
check "a cmocka summary beside ok lines it would ignore: a failure" \
    judged mixed-ok 'tests: 3 passed, 1 failed, 0 skipped' \
    'printf "1..2\nok - a\nok - b\n[==========] Running 1 test(s).\n[  PASSED  ] 1 test(s).\n"'
check "a cmocka program that stops before its plan (Running 3, 2 passed): a failure" \
    judged cmocka-short 'tests: 2 passed, 1 failed, 0 skipped' \
    'printf "[==========] Running 3 test(s).\n[  PASSED  ] 2 test(s).\n"'
check "ok lines then exit 77: a skip" \
    judged ok-77 'tests: 0 passed, 0 failed, 2 skipped' 'echo 1..2; echo "ok - a"; echo "ok - b"; exit 77'
check "an indented not ok: a failure" \
    judged indented 'tests: 1 passed, 1 failed, 0 skipped' 'echo 1..2; echo "ok - a"; echo "    not ok - b"'
check "a not ok without ' - ': a failure" \
    judged bare-not-ok 'tests: 1 passed, 1 failed, 0 skipped' 'echo 1..2; echo "ok - a"; echo "not ok"'
check "a not ok then exit 77: still a failure" \
    judged not-ok-77 'tests: 1 passed, 1 failed, 0 skipped' 'echo 1..2; echo "ok - a"; echo "not ok - b"; exit 77'
check "all ok with exit 1: a failure" \
    judged exit-1 'tests: 2 passed, 1 failed, 0 skipped' 'echo 1..2; echo "ok - a"; echo "ok - b"; exit 1'
exit $((fails > 0))
