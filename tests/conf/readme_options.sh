#!/bin/sh
# Checks that README.md's option reference (between the options:begin and options:end markers)
# is what `shim-report config --reference` generates from conf/'s option table; with --update
# (`make docs`), rewrites that section instead. Only the lines between the markers change.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
report="$root/${BUILD:-build}/shim-report"
readme="$root/README.md"
ref=$(mktemp) new=$(mktemp)
trap 'rm -f "$ref" "$new"' EXIT

[ "${1:-}" = "--update" ] || echo "1..1" # one check (tests/run_tests.sh counts it)
if [ "$(grep -c '^<!-- options:begin' "$readme")" -ne 1 ] ||
    [ "$(grep -c '^<!-- options:end' "$readme")" -ne 1 ]; then
    echo "not ok - README.md must have one options:begin and one options:end marker"
    exit 1
fi
{ echo; "$report" config --reference; echo; } >"$ref"
awk -v ref="$ref" '
    /^<!-- options:begin/ { print; while ((getline line < ref) > 0) print line; skip = 1; next }
    /^<!-- options:end/ { skip = 0 }
    !skip { print }' "$readme" >"$new"

if [ "${1:-}" = "--update" ]; then
    cmp -s "$new" "$readme" || cat "$new" >"$readme"
    echo "README.md option reference is up to date"
elif cmp -s "$new" "$readme"; then
    echo "ok - README.md option reference matches the option table"
else
    diff -u "$readme" "$new" | head -n 40 || true
    echo "not ok - README.md option reference is out of date with the option table (run make docs)"
    exit 1
fi
