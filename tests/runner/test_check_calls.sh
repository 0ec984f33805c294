#!/usr/bin/env bash
# The static guard of tests/check.sh's rule, that a check holds its whole condition: no check
# call in any script under tests/ goes on past an unquoted &&, || or ; (nor runs only when a
# condition before it holds); and the guard (check_calls.py) finds each such call planted on
# purpose, at its file:line, while it passes the forms that keep the condition inside.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$root/tests/check.sh"
guard="$root/tests/runner/check_calls.py"
mapfile -t scripts < <(cd "$root" && find tests -name '*.sh' | sort)

# flags LINE TEXT: the guard, given a script whose only check call is TEXT at line LINE (after
# LINE-1 filler lines), exits 1 naming file:LINE.
flags() {
    { for ((i = 1; i < $1; i++)); do echo ": filler"; done; printf '%s\n' "$2"; } >"$tmp/bad.sh"
    python3 "$guard" "$tmp/bad.sh" >"$tmp/out"
    local rc=$?
    cat "$tmp/out"
    [ "$rc" = 1 ] && grep -q "^$tmp/bad.sh:$1: " "$tmp/out"
}
# passes TEXT: the guard finds nothing in a script made of TEXT.
passes() {
    printf '%s\n' "$1" >"$tmp/good.sh"
    python3 "$guard" "$tmp/good.sh"
}

bad=(
    'check "both" [ -n "$a" ] && [ "$a" -ge 3 ]'
    'check "either" grep -q x f || grep -q y f'
    'check "then" true; echo more'
    'check "piped" cat f | grep -q x'
    $'check "continued" [ -n "$a" ] \\\n    && [ "$a" = b ]'
    $'check "quoted across lines" python3 -c \'\nimport sys\n\' && [ -s f ]'
    '[ "$r" = 0 ] && check "only when r is 0" true'
    'if true; then check "in a block" [ a ] && [ b ]; fi'
    'case $x in a) check "in a case" [ a ] || [ b ] ;; esac'
)
good=(
    $'check "all" all [ -n "$a" ] \'&&\' [ "$a" -ge 3 ]'
    $'check "bash -c" bash -c \'[ -n "$a" ] && [ "$a" -ge 3 ]\''
    $'check "a substitution" [ "$(cat f || echo none)" = x ]'
    $'for x in 1 2; do check "in a loop $x" true; done'
    $'check "continued" grep -q \\\n    x f\ncheck "next" true'
    $'cat <<EOF\ncheck "in a here-document" true && false\nEOF'
    $'check "a comment after" true # && false'
)
# wrapped: a function that hands its arguments to check is followed as check is.
wrapped() {
    printf '%s\n' 'exact() { if true; then check "$@"; fi; }' 'exact "wrapped" [ a ] && [ b ]' >"$tmp/wrap.sh"
    python3 "$guard" "$tmp/wrap.sh" >"$tmp/out"
    local rc=$?
    cat "$tmp/out"
    [ "$rc" = 1 ] && grep -q "^$tmp/wrap.sh:2: " "$tmp/out"
}
plan $((1 + ${#bad[@]} + ${#good[@]} + 1))
check "the ${#scripts[@]} scripts under tests/: every check holds its whole condition" \
    bash -c 'cd "$1" && shift && python3 "$@"' _ "$root" "$guard" "${scripts[@]}"
for i in "${!bad[@]}"; do
    check "flagged at its line: ${bad[$i]//$'\n'/ ⏎ }" flags $((i + 2)) "${bad[$i]}"
done
for g in "${good[@]}"; do
    check "passed: ${g//$'\n'/ ⏎ }" passes "$g"
done
check "flagged at its line: a call of exact(), which hands its arguments to check" wrapped
exit $((fails > 0))
