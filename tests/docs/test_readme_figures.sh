#!/usr/bin/env bash
# test_readme_figures.sh — every figure README.md (and docs/recording.md) quotes from a results
# file in tests/bench/ says what that file says (the table of quotes is FIGURES in
# readme_figures.py); and a control: a README whose figure drifted fails.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/tests/check.sh"
scratch
FIG="$root/tests/docs/readme_figures.py"
mapfile -t names < <(python3 "$FIG" "$root" --list)

plan $((${#names[@]} + 1))

for name in "${names[@]}"; do
    check "$name" python3 "$FIG" "$root" "$name"
done

# The control: a copy of the tree whose README quotes 415 instructions per launch again.
drifted_fails() {
    mkdir -p "$tmp/copy/docs" "$tmp/copy/tests"
    cp -r "$root/tests/bench" "$tmp/copy/tests/"
    cp "$root/docs/recording.md" "$tmp/copy/docs/"
    sed 's/443 instructions per launch/415 instructions per launch/' "$root/README.md" \
        >"$tmp/copy/README.md"
    ! python3 "$FIG" "$tmp/copy" "recording: instructions per launch (README)"
}
check "control: a README quoting 415 instructions (the results say 443) fails" drifted_fails
[ "$fails" -eq 0 ]
