#!/usr/bin/env bash
# The mutation list of make mutate (tests/mutate/mutations.txt) cannot rot silently: it parses,
# every entry's file exists and its original text occurs exactly once in this tree, and every
# entry names at least one TEST= filter that selects a test of this tree.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$root/tests/check.sh"
list="$root/tests/mutate/mutations.txt"
tool="$root/tests/mutate/mutation.py"

# Every filter of entry k is a substring of some test's path (the TESTS of make test).
filters_select() {
    local f
    for f in $("$tool" get "$list" "$1" tests); do
        grep -qF -- "$f" "$tmp/tests" || { echo "TEST=$f selects no test"; return 1; }
    done
}

if ! n=$("$tool" count "$list" 2>"$tmp/err"); then
    plan 1
    check "the list parses" sh -c "cat '$tmp/err'; false"
    exit 1
fi
make -s -C "$root" --no-print-directory print-tests >"$tmp/tests" 2>/dev/null
plan $((2 * n + 2))
check "the list parses ($n entries)" test "$n" -ge 16
check "make print-tests lists the tests" test -s "$tmp/tests"
for k in $(seq 1 "$n"); do
    check "entry $k applies: $("$tool" get "$list" "$k" file)" "$tool" check "$list" "$k" "$root"
    check "entry $k's tests exist: $("$tool" get "$list" "$k" tests)" filters_select "$k"
done
[ "$fails" -eq 0 ]
