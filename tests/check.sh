# tests/check.sh — sourced by test scripts that run a command per check and show its output only
# when it fails. Needs $tmp (the script's scratch folder: scratch below makes one). Prints "ok - NAME" / "not ok - NAME"
# (tests/run_tests.sh counts them) and counts failures in $fails.
#
# The whole condition of a check is inside the call: the shell ends a command at an unquoted
# &&, || or ;, so `check NAME [ a ] && [ b ]` would check [ a ] alone and throw [ b ] away.
# Write a condition of several parts as
#   check NAME all [ a ] '&&' [ b ] '&&' grep -q x file     (each part a command, quoted &&), or
#   check NAME some_function ARGS...                          (a small named function), or
#   check NAME bash -c '...'                                  (a script of its own).
# tests/runner/test_check_calls.sh fails on any check call whose line goes on past an unquoted
# &&, || or ; (backslash continuations included), and on a check that runs only when a
# condition before it holds.
#
# Every script prints its plan with plan N: first, computed from what it will check (a count of
# inputs), or last where the count is known only at the end (not from the count of checks
# made: that would always agree). tests/run_tests.sh fails a script whose ok/not ok/skip lines
# differ in number from its plan, and one that prints no plan.
fails=0

# scratch [VAR]: a fresh scratch folder, its path in VAR (tmp when not named), removed with all it
# holds when the script exits. It sets the script's one EXIT trap: a script that needs more at exit
# sets its own trap instead.
scratch() {
    local dir
    dir=$(mktemp -d) || exit 1
    printf -v "${1:-tmp}" '%s' "$dir"
    trap "rm -rf '$dir'" EXIT
}

# check NAME COMMAND...: ok when the command succeeds; otherwise its output, indented as
# comments (20 lines at most). (tests/shim/shim_env.sh and tests/trace/report_checks.sh source
# this file for plan, all and checker, and keep their own check, which shows the output.)
check() {
    local name=$1
    shift
    if "$@" >"$tmp/check.out" 2>"$tmp/check.err"; then
        echo "ok - $name"
    else
        echo "not ok - $name"
        sed 's/^/    # /' "$tmp/check.out" "$tmp/check.err" | head -20
        fails=$((fails + 1))
    fi
}

# all CMD1 '&&' CMD2 '&&' ...: succeeds when every command succeeds, run in order, stopping at
# the first that fails (named on standard error). For check NAME all ...
all() {
    local cmd=()
    while [ $# -gt 0 ]; do
        cmd=()
        while [ $# -gt 0 ] && [ "$1" != '&&' ]; do
            cmd+=("$1")
            shift
        done
        [ $# -gt 0 ] && shift
        if [ ${#cmd[@]} -eq 0 ]; then
            echo "all: an empty condition" >&2
            return 2
        fi
        if ! "${cmd[@]}"; then
            echo "failed: ${cmd[*]}" >&2
            return 1
        fi
    done
}

# plan N: the number of checks this script will make, printed as TAP's "1..N" (first, or last
# when the count is only known at the end). tests/run_tests.sh fails a script whose count of
# ok/not ok/skip lines differs from its plan.
plan() { echo "1..$1"; }

# checker NAME N COMMAND...: runs a checker (Python or C) that prints one "ok - ..." / "not ok -
# ..." line per item and passes those lines on; then one more check, NAME, ok only when the
# checker exited 0 and printed exactly N items, none of them "not ok". A checker that crashes,
# exits non-zero or stops early is a failed check, whatever it printed before. Counts N + 1 in
# the plan. Uses whichever check the script has (this file's, or shim_env.sh's).
checker() {
    local name=$1 want=$2 out rc n bad
    shift 2
    out=$(mktemp)
    "$@" >"$out" 2>"$out.err"
    rc=$?
    grep -E '^(ok|not ok|skip)([[:space:]]|$)' "$out"
    n=$(grep -cE '^(ok|not ok|skip)([[:space:]]|$)' "$out")
    bad=$(grep -cE '^not ok([[:space:]]|$)' "$out")
    check "$name: exit 0 (got $rc), $want items (got $n), none failed (got $bad)" \
        all [ "$rc" -eq 0 ] '&&' [ "$n" -eq "$want" ] '&&' [ "$bad" -eq 0 ]
    [ "$rc" -eq 0 ] || sed 's/^/    # /' "$out.err" | tail -n 20
    rm -f "$out" "$out.err"
}
