#!/usr/bin/env bash
# The mutation list of make mutate (tests/mutate/mutations.txt) cannot rot silently: it parses,
# every entry's file exists and its original text occurs exactly once in this tree, and every
# TEST= filter of an entry selects a test of this tree (make print-tests). One run of
# mutation.py reads the whole list; a check per entry then reads its verdict.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$root/tests/check.sh"

# no_problem FILE: FILE is empty (else its text is the check's output).
no_problem() { [ ! -s "$1" ] || { cat "$1"; return 1; }; }

make -s -C "$root" --no-print-directory BUILD="${BUILD:-build}" print-tests >"$tmp/tests" 2>/dev/null
if ! n=$("$root/tests/mutate/mutation.py" report "$root/tests/mutate/mutations.txt" "$root" \
    "$tmp/tests" "$tmp" 2>"$tmp/err"); then
    plan 1
    check "the list parses" no_problem "$tmp/err"
    exit 1
fi
plan $((2 * n + 2))
check "the list parses ($n entries)" test "$n" -ge 16
check "make print-tests lists the tests" test -s "$tmp/tests"
for k in $(seq 1 "$n"); do
    check "entry $k applies: $(cat "$tmp/$k.file")" no_problem "$tmp/$k.apply"
    check "entry $k's TEST= filters each select a test" no_problem "$tmp/$k.tests"
done
[ "$fails" -eq 0 ]
