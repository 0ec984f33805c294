#!/usr/bin/env bash
# tests/mutate/mutate.sh — make mutate: applies each source mutation of a list
# (tests/mutate/mutations.txt; its format in mutation.py) one at a time and expects a test to
# fail. Never touches the working tree: the tracked files as they are now (uncommitted changes
# and untracked, not ignored files included) are copied to a scratch folder under $TMPDIR, with
# the build folder when one exists (so only what a mutation changes is rebuilt), and built
# there. Each entry's tests (TEST= filters) first pass unmutated (once per filter); then the
# mutation is applied, the tree built (a mutation that does not build is an error, not a
# catch), its tests run, and the file restored. One line per mutation, "caught by TEST (failed:
# NAMES)" or "SURVIVED", then a summary. Exit status 1 when any mutation survives or an entry
# does not apply.
#   tests/mutate/mutate.sh [LIST [N...]]   N: only these entries (1-based)
# Environment: BUILD (default build), MUTATE_JOBS (make -j, default 2), MUTATE_TIMEOUT (seconds a
# test program may run, default 180: a mutation can make a test hang, which then counts as
# caught, marked "timed out"), TMPDIR, KEEP=1 keeps the scratch folder.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
shown=${1:-tests/mutate/mutations.txt}
list=$(cd "$(dirname "${1:-$root/tests/mutate/mutations.txt}")" && pwd)/$(basename "${1:-mutations.txt}")
shift $(($# > 0 ? 1 : 0))
BUILD=${BUILD:-build}
jobs=${MUTATE_JOBS:-2}
export TEST_TIMEOUT=${MUTATE_TIMEOUT:-180} # tests/run_tests.sh's limit per test program
tool="$root/tests/mutate/mutation.py"
start=$(date +%s)

scratch=$(mktemp -d "${TMPDIR:-/tmp}/mutate.XXXXXX") || exit 1
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$scratch"' EXIT
cp "$list" "$scratch/mutations.txt" || exit 1 # the list as it is now, however long the run
list="$scratch/mutations.txt"
n=$("$tool" count "$list") || exit 1
entries=("$@")
[ ${#entries[@]} -gt 0 ] || entries=($(seq 1 "$n"))
tree="$scratch/tree"
mkdir -p "$tree"
# The tracked tree as it is now; cp -p keeps modification times, so a copied build stays valid.
(cd "$root" && git ls-files -z --cached --others --exclude-standard |
    xargs -0 sh -c 'for f; do [ -f "$f" ] && cp -p --parents "$f" "$0"; done' "$tree") || exit 1
[ -d "$root/$BUILD" ] && cp -a "$root/$BUILD" "$tree/$BUILD"
export SHARED=${SHARED:-$(cd "$root/.." && pwd)/shared}
echo "mutate: ${#entries[@]} mutations of $shown in $tree"

# build LOG FILTER...: every artifact and the tests that make test TEST=FILTER runs (built
# apart from the run, so that a mutation that does not compile is told apart from a catch).
build() {
    local log=$1 f
    shift
    : >"$log"
    for f in "${@:-}"; do
        nice make -C "$tree" -j"$jobs" --no-print-directory BUILD="$BUILD" test-build TEST="$f" \
            >>"$log" 2>&1 || return 1
    done
}
# run FILTER LOG: the tests whose path contains FILTER.
run() { nice make -C "$tree" -j"$jobs" --no-print-directory BUILD="$BUILD" test TEST="$1" >"$2" 2>&1; }

logs="$scratch/logs"
mkdir -p "$logs"
all_filters=$(for k in "${entries[@]}"; do "$tool" get "$list" "$k" tests; done | sort -u)
if ! build "$logs/baseline-build.log" $all_filters; then
    echo "mutate: the unmutated tree does not build:"
    tail -n 20 "$logs/baseline-build.log"
    exit 1
fi
declare -A baseline # filter -> ok / fail
caught=0 survived=0 errors=0
for k in "${entries[@]}"; do
    file=$("$tool" get "$list" "$k" file) || exit 1
    why=$("$tool" get "$list" "$k" why)
    filters=$("$tool" get "$list" "$k" tests)
    label=$(printf '%2d %s: %s' "$k" "$file" "$why")
    bad=""
    for f in $filters; do
        if [ -z "${baseline[$f]:-}" ]; then
            if run "$f" "$logs/baseline-$f.log"; then baseline[$f]=ok; else baseline[$f]=fail; fi
        fi
        [ "${baseline[$f]}" = ok ] || bad="$bad $f"
    done
    if [ -n "$bad" ]; then
        echo "ERROR  $label: fails unmutated (TEST=${bad# })"
        errors=$((errors + 1))
        continue
    fi
    cp -p "$tree/$file" "$scratch/original"
    if ! msg=$("$tool" apply "$list" "$k" "$tree"); then
        echo "ERROR  $label: $msg"
        errors=$((errors + 1))
        continue
    fi
    result=""
    if ! build "$logs/$k-build.log" $filters; then
        result="ERROR  $label: does not build (log $logs/$k-build.log)"
        errors=$((errors + 1))
    else
        for f in $filters; do
            if ! run "$f" "$logs/$k-$f.log"; then
                names=$(sed -n 's/^failed: //p' "$logs/$k-$f.log")
                grep -qE '^FAIL .*\(exit (124|137),' "$logs/$k-$f.log" && names="$names, timed out"
                result="caught $label: caught by TEST=$f (failed: ${names:-the build})"
                caught=$((caught + 1))
                break
            fi
        done
        if [ -z "$result" ]; then
            result="SURVIVED $label (TEST=$(echo $filters))"
            survived=$((survived + 1))
        fi
    fi
    # Restored with a new modification time, so the next build compiles the original again.
    cat "$scratch/original" >"$tree/$file"
    echo "$result"
done
secs=$(($(date +%s) - start))
echo "mutate: ${#entries[@]} mutations: $caught caught, $survived survived, $errors errors" \
    "($((secs / 60))m$((secs % 60))s)"
[ $((survived + errors)) -eq 0 ]
