#!/usr/bin/env bash
# tests/trace/test_report_figures.sh — one set of figures: a traced job under shim-run (train_sim
# at 60% of its native peak, so that a plan applies and the warm-up moves apart from its steady
# state) and every surface of that one trace print the same figures: libshim's exit lines,
# shim-run's summary, shim-report summary (text and --json), the HTML page (its verdict's words
# and figures, its tables of moves) and shim-report moves (text and --json). The verdict, the step
# time against native and its lower bound, the steady state per step and over how many steps, the
# warm-up, and the moves by reason and outcome (tests/trace/figures_check.py compares them figure
# by figure). Then the control: a copy of each surface's output with one figure changed (the
# planted disagreement) is refused, naming the surface and the figure.
set -u
source "$(dirname "$0")/../shim/shim_env.sh"
tmp=$(mktemp -d)
work=$tmp
trap 'rm -rf "$tmp"' EXIT
FIG="$root/tests/trace/figures_check.py"
REPORT="$B/shim-report"
plan $((10 + 1 + 6))

ARGS=(--mode exact --layers 2 --hidden 512 --batch 2 --seq 256 --vocab 1024 --iters 12)
SIMGPU_STATS="$work/native.json" "$B/train_sim" "${ARGS[@]}" >/dev/null
P=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["peak_device_bytes"])' \
    "$work/native.json")
mkdir "$work/traces"
SHIM_LOG_LEVEL=info shim_run --budget $((P * 60 / 100)) --trace "$work/traces/" \
    --report "$work/page.html" -- "$B/train_sim" "${ARGS[@]}" >/dev/null 2>"$work/run.err"
T=$(ls "$work"/traces/*.trace)
"$REPORT" summary "$T" >"$work/summary.txt"
"$REPORT" summary --json "$T" >"$work/summary.json"
"$REPORT" moves "$T" >"$work/moves.txt"
"$REPORT" moves --json "$T" >"$work/moves.json"
surfaces() { # the files figures_check.py reads, in its order, from the folder $1
    echo "$1/run.err" "$1/run.err" "$1/summary.txt" "$1/summary.json" "$1/page.html" \
        "$1/moves.txt" "$1/moves.json"
}
# shellcheck disable=SC2046
checker "every surface prints the exit line's figures" 10 python3 "$FIG" $(surfaces "$work")

# planted SURFACE FIGURE FILE SED: a copy of the outputs with FILE changed by SED is refused,
# in a line that names the surface and the figure.
planted() {
    local surface=$1 figure=$2 file=$3 expr=$4
    rm -rf "$work/copy" && mkdir "$work/copy" && cp "$work"/*.err "$work"/*.txt "$work"/*.json \
        "$work"/*.html "$work/copy/"
    sed -E -i "$expr" "$work/copy/$file"
    cmp -s "$work/$file" "$work/copy/$file" && return 1 # the plant must change something
    # shellcheck disable=SC2046
    python3 "$FIG" $(surfaces "$work/copy") >"$work/copy/out"
    [ $? -eq 1 ] && grep -F "not ok - $surface: " "$work/copy/out" | grep -qF "$figure: "
}
check "planted: summary's stall per step 1 ms more is caught" \
    planted "summary (text)" "stall_ms" summary.txt \
    's/^(steady_state: .* MiB moved and )([0-9]+)\./\1\29./'
check "planted: summary --json's bytes moved per step 10 MiB more is caught" \
    planted "summary --json: the figures" "moved_mib" summary.json \
    's/"bytes_moved_per_step": ([0-9]+)/"bytes_moved_per_step": \19/'
check "planted: the page's count of steady steps one more is caught" \
    planted "html: the verdict's figures" "steady" page.html \
    's/data-key="steady_steps" data-value="([0-9]+)"/data-key="steady_steps" data-value="1\1"/'
check "planted: moves' planned evictions one more is caught" \
    planted "moves (text): the totals line" "reason:planned" moves.txt \
    's/^(total: .*planned )([0-9]+)/\1\29/'
check "planted: shim-run's summary naming another budget is caught" \
    planted "shim-run's summary" "budget_mib" run.err \
    's/^(verdict: .* the )([0-9]+)\./\19\2./'
check "planted: an exit line with another warm-up makes every surface disagree with it" \
    planted "summary (text)" "warmup_mib" run.err \
    's/^(libshim.*info: exit: .*warm-up apart .*: )([0-9]+)\./\19\2./'
[ "$failures" -eq 0 ]
