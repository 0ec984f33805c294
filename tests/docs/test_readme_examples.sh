#!/usr/bin/env bash
# test_readme_examples.sh — every command block of README.md that needs no GPU runs verbatim, in
# order, in a scratch copy of the tree (its files and its build/), with LD_LIBRARY_PATH unset as
# in a fresh shell: a block passes when bash -e runs it to the end. Blocks marked
# <!-- example: skip (REASON) --> (a GPU, a reader's own file, a long run) are reported as
# skipped with their reason (readme_examples.py). A control: a README whose example is broken
# (shim-report movez) fails.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/tests/check.sh"
scratch
EX="$root/tests/docs/readme_examples.py"
mapfile -t blocks < <(python3 "$EX" "$root/README.md")

plan $((${#blocks[@]} + 1))

# The README's commands name build/: a sanitizer build (BUILD=build/asan...) cannot run them.
if [ "${BUILD:-build}" != build ] || [ ! -x "$root/build/shim-run" ]; then
    for b in "${blocks[@]}" control; do
        echo "skip - README block ${b%%$'\t'*}: the README's commands need the plain build in build/"
    done
    exit 0
fi

copy="$tmp/copy"
mkdir -p "$copy"
(cd "$root" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -a -t "$copy" 2>/dev/null)
cp -a "$root/build" "$copy/build"

# run_block FILE LINE: the block of FILE at LINE, verbatim, in the copy (bash -e, 10 minutes).
run_block() {
    python3 "$EX" "$1" "$2" >"$tmp/block.sh" &&
        (cd "$copy" && env -u LD_LIBRARY_PATH timeout 600 bash -e "$tmp/block.sh")
}
for b in "${blocks[@]}"; do
    IFS=$'\t' read -r line kind what <<<"$b"
    if [ "$kind" = skip ]; then
        echo "skip - README block at line $line: $what"
    else
        check "README block at line $line runs: $what" run_block "$root/README.md" "$line"
    fi
done

# The control: the same block with one command broken fails.
broken_block_fails() {
    sed 's|build/shim-report moves traces|build/shim-report movez traces|' "$root/README.md" \
        >"$tmp/broken.md"
    local line
    line=$(python3 "$EX" "$tmp/broken.md" | awk -F'\t' '$3 ~ /shim-report movez/ { print $1 }')
    [ -n "$line" ] && ! run_block "$tmp/broken.md" "$line"
}
check "control: a README whose example is broken (shim-report movez) fails" broken_block_fails
[ "$fails" -eq 0 ]
