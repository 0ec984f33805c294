# tests/check.sh — sourced by test scripts that run a command per check and show its output only
# when it fails. Needs $tmp (the script's scratch folder). Prints "ok - NAME" / "not ok - NAME"
# (tests/run_tests.sh counts them) and counts failures in $fails.
fails=0

# check NAME COMMAND...: ok when the command succeeds; otherwise its output, indented as
# comments (20 lines at most).
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

# plan N: the number of checks this script will make, printed as TAP's "1..N" (first, or last
# when the count is only known at the end). tests/run_tests.sh fails a script whose count of
# ok/not ok/skip lines differs from its plan.
plan() { echo "1..$1"; }
