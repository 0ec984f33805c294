#!/usr/bin/env bash
# Runs each libFuzzer target given for FUZZ_SECONDS (default 60) against its
# seed corpus, tests/<component>/corpus-<target>/ (copied to a scratch folder so
# that the repository is not modified). Exits non-zero on the first crash, leak
# or sanitizer report. Prints the executions of each run.
set -eu
secs=${FUZZ_SECONDS:-60}
for t in "$@"; do
    name=$(basename "$t")
    seeds=$(find tests -type d -name "corpus-$name" | head -n 1)
    work=$(mktemp -d)
    [ -n "$seeds" ] && cp -r "$seeds"/. "$work"/
    echo "fuzz: $name for ${secs}s (seeds: ${seeds:-none})"
    "$t" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="build/fuzz-$name-" \
        "$work" 2>"build/fuzz-$name.log" || { tail -n 40 "build/fuzz-$name.log"; exit 1; }
    grep -E 'stat::number_of_executed_units|Done [0-9]+ runs' "build/fuzz-$name.log" || true
    rm -rf "$work"
done
