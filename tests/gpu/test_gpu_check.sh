#!/usr/bin/env bash
# make gpu-check's own logic, without a GPU (seconds): gpu_tables.py turns a work folder written
# here (what torch_budget.sh and shim-report leave, by hand) into tables whose ratios, checksum and
# loss comparisons, verdicts and twin predictions are the right ones, names a malformed
# prediction by file and line and says "n/a" without predictions; gpu_check.sh on a machine with
# no CUDA driver (the simulated device on LD_LIBRARY_PATH is no GPU) says "no GPU: nothing
# measured" and exits 0, and refuses to empty a work folder it did not make.
set -u
source "$(dirname "$0")/../check.sh" # plan, check, all
plan 17
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d) # check.sh's scratch folder too
trap 'rm -rf "$tmp"' EXIT
w=$tmp/work
mkdir -p "$w"
MIB=1048576

# json NAME STEP_MS CHECKSUM LOSSES PEAK_RESERVED [ALLOC_CONF]: a job's JSON line, as torch_train.py
# prints it (after a warning line, which the reader must pass over)
json() {
    printf 'UserWarning: something\n{"checksum": "%s", "losses": %s, "step_ms": %s, "peak_reserved": %s, "device_used_max": %s, "alloc_conf": "%s", "allocator": "native"}\n' \
        "$3" "$4" "$2" "$5" "$5" "${6:-}" >"$w/$1.json"
}
# summary NAME ANSWER RESIDENT BUDGET PREDICTED_US NATIVE_US: shim-report summary --json's keys read
summary() {
    printf '{"verdict": {"answer": "%s", "resident_peak_bytes": %s, "bytes_moved_per_step": %s}, "budget_bytes": %s, "iterations": 10, "graph_launches": 20, "plans": [{"predicted_us": %s, "native_us": %s}]}\n' \
        "$2" "$3" $((64 * MIB)) "$4" "$5" "$6" >"$w/$1.summary.json"
}
# m NAME CASE STATUS SECONDS BUDGET [JOB [ALLOC]]: the run's manifest line, as torch_budget.sh writes it
m() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "${6:-mlp}" "$2" "$3" "$4" "$5" "${7:-async}" >>"$w/manifest.tsv"; }

json mlp-native-async 10 aaaa "[1.5, 1.25]" $((400 * MIB))
m mlp-native-async native 0 9 ""
json mlp-save-on-cpu-async 16 aaaa "[1.5, 1.25]" $((300 * MIB))
m mlp-save-on-cpu-async save-on-cpu 0 12 ""
json mlp-shim-async-75 25 aaaa "[1.5, 1.25]" 0
summary mlp-shim-async-75 fitted $((290 * MIB)) $((300 * MIB)) 20000 10000
echo "libshim[1]: info: exit: fitted: resident peak 290.0 MiB within the 300 MiB budget; 10 steps" >"$w/mlp-shim-async-75.log"
m mlp-shim-async-75 75 0 20 300MiB
m mlp-shim-async-50 50 timeout 150 200MiB
json mlp-shim-async-soc 12 bbbb "[1.5, 1.375]" 0
summary mlp-shim-async-soc fitted $((299 * MIB)) $((300 * MIB)) 11000 10000
m mlp-shim-async-soc soc 0 18 300MiB
# part 3: expandable segments, which libshim leaves alone: PyTorch's own count is over the budget
json mlp-expandable-native-expandable 10 cccc "[2.0]" $((400 * MIB)) expandable_segments:True
m mlp-expandable-native-expandable native 0 8 "" mlp-expandable expandable
json mlp-expandable-shim-expandable-75 10 cccc "[2.0]" $((400 * MIB)) expandable_segments:True
echo "libshim[2]: info: exit: no budget: peak 400.0 MiB allocated on the device; 1 step" >"$w/mlp-expandable-shim-expandable-75.log"
m mlp-expandable-shim-expandable-75 75 0 9 300MiB mlp-expandable expandable
# two allocators of one job: each run under libshim is held to its own allocator's native run
json mlp-graphs-native-caching 5 dddd "[3.0]" $((400 * MIB)) backend:native
m mlp-graphs-native-caching native 0 30 "" mlp-graphs caching
json mlp-graphs-shim-caching-75 10 dddd "[3.0]" 0 backend:native
m mlp-graphs-shim-caching-75 75 0 20 300MiB mlp-graphs caching
json mlp-graphs-native-default 4 eeee "[3.5]" $((400 * MIB))
m mlp-graphs-native-default native 0 10 "" mlp-graphs default
m mlp-graphs-shim-default-75 75 skipped 0 300MiB mlp-graphs default
printf '# predictions\nmlp\t75\t2.0\nmlp\t50\tfast\n\nmlp-expandable\t75\t1.0\n' >"$tmp/twins.tsv"

tables=$tmp/tables.md
python3 "$root/tests/gpu/gpu_tables.py" "$w" --twins "$tmp/twins.tsv" -o "$tables" >"$tmp/stdout" 2>&1
check "gpu_tables.py reads the folder (exit 0) and prints what it writes" \
    all [ -s "$tables" ] '&&' cmp -s "$tables" "$tmp/stdout"
# row RUN: the markdown row of the part-2 table whose first cell is RUN
row() { grep -F "| $1 |" "$tables" | head -n 1; }
check "75%: step against native (2.50x) and save_on_cpu's (1.56x), plan 20.00 ms (2.00x), achieved / plan 1.25x" \
    bash -c '[[ "$1" == *"| 25.00 | 2.50x | 1.56x | 20.00 (2.00x) | 1.25x |"* ]]' _ "$(row "libshim, 75% of the peak")"
check "75%: the twin's 2.00x beside it, measured / twin 1.25x" \
    bash -c '[[ "$1" == *"| 2.00x | 1.25x | identical | = native |"* ]]' _ "$(row "libshim, 75% of the peak")"
check "75%: resident peak 290 MiB from the trace, budget 300, 64.0 MiB moved, verdict fitted" \
    bash -c '[[ "$1" == "| libshim, 75% of the peak | 300 |"* && "$1" == *"| 290 |"* && "$1" == *"| 64.0 | fitted |"* ]]' _ "$(row "libshim, 75% of the peak")"
check "50%: timed out, and no twin figure (its line was malformed): n/a" \
    bash -c '[[ "$1" == *"| timed out | 150 |" && "$1" != *"2.00x"* ]]' _ "$(row "libshim, 50% of the peak")"
check "soc: a checksum that differs is shown with both, the losses' worst relative difference (0.1)" \
    bash -c '[[ "$1" == *"**differs** (bbbb, native aaaa)"* && "$1" == *"max relative difference 0.1 |"* && "$1" == *"| n/a | n/a |"* ]]' _ "$(row "libshim at save_on_cpu's peak reserved")"
check "the malformed prediction is named by file and line" \
    grep -qF "twins.tsv:3: expected JOB<TAB>CASE<TAB>RATIO" "$tables"
check "the exit line of each run under libshim is listed, and the timed-out one says so" \
    all grep -qF '`mlp-shim-async-75`: fitted: resident peak 290.0 MiB' "$tables" '&&' \
    grep -qF '`mlp-shim-async-50`: no exit line (timed out)' "$tables"
check "expandable segments at 75%: not kept, PyTorch's own 400 MiB over the budget (libshim: no budget)" \
    grep -qF "| no: PyTorch reserved 400 MiB of its own VMM, over the budget (libshim: no budget) |" "$tables"
check "a run not started has its row, saying why" \
    bash -c '[[ "$1" == "| mlp-graphs | libshim, 75% of the peak |"*"| not started: the command'"'"'s time was spent | 0 |" ]]' _ \
    "$(grep -F "| mlp-graphs |" "$tables" | tail -n 1)"
check "two allocators of one job: libshim on the caching allocator against its own native (2.00x, = native)" \
    bash -c '[[ "$1" == *"| 10.00 | 2.00x |"* && "$1" == *"| = native |"* ]]' _ \
    "$(grep -F "| mlp-graphs | libshim, 75% of the peak | native (backend:native) |" "$tables")"

python3 "$root/tests/gpu/gpu_tables.py" "$w" --twins "$tmp/none.tsv" >"$tmp/bare.md" 2>&1
check "without a predictions file: n/a beside every figure, and the header says so" \
    all grep -qF "none ($tmp/none.tsv not found: n/a beside every figure)" "$tmp/bare.md" '&&' \
    bash -c '! grep -qF "2.00x | 1.25x" "$1"' _ "$tmp/bare.md"
python3 "$root/tests/gpu/gpu_tables.py" "$tmp/missing" >"$tmp/usage" 2>&1
rc=$?
check "a work folder that is not one: usage, exit 2 (got $rc)" \
    all [ $rc -eq 2 ] '&&' grep -q "usage: gpu_tables.py WORK" "$tmp/usage"

# The command itself where no driver is: every part skipped, exit 0, the line the task asks for.
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
    for _ in 1 2 3 4; do echo "skip - gpu_check.sh without a driver: this machine has one"; done
else
    build=${BUILD:-build}
    LD_LIBRARY_PATH="$root/$build/simgpu" BUILD=$build NVCC=none \
        GPU_CHECK_OUT="$tmp/out" GPU_CHECK_WORK="$tmp/gc-work" GPU_TWINS="$tmp/twins.tsv" \
        "$root/tests/gpu/gpu_check.sh" >"$tmp/gc.out" 2>&1
    rc=$?
    check "no driver: exit 0 (got $rc), and the last line is 'gpu-check: no GPU: nothing measured'" \
        all [ $rc -eq 0 ] '&&' bash -c '[ "$(tail -n 1 "$1")" = "gpu-check: no GPU: nothing measured" ]' _ "$tmp/gc.out"
    check "no driver: the card line comes first and says none; every part is skipped with its reason" \
        all bash -c 'head -n 1 "$1" | grep -q "^card: none (no CUDA driver"' _ "$tmp/gc.out" '&&' \
        [ "$(grep -c '^skip - part [123]: no GPU' "$tmp/gc.out")" -eq 3 ] '&&' \
        grep -q "^skip - part 1: no nvcc" "$tmp/gc.out"
    check "no driver: the results folder has the tables (parts skipped), the log and the runs' archive" \
        all grep -q "^Skipped: no GPU" "$tmp/out/gpu-check.md" '&&' [ -s "$tmp/out/gpu-check.log" ] '&&' \
        [ -s "$tmp/out/gpu-check-runs.tar.gz" ]
    mkdir -p "$tmp/theirs"
    echo keep >"$tmp/theirs/file"
    GPU_CHECK_OUT="$tmp/out2" GPU_CHECK_WORK="$tmp/theirs" NVCC=none \
        "$root/tests/gpu/gpu_check.sh" >"$tmp/gc2.out" 2>&1
    rc=$?
    check "a work folder holding someone else's files is not emptied (exit 1, got $rc)" \
        all [ $rc -eq 1 ] '&&' [ -f "$tmp/theirs/file" ] '&&' grep -q "not emptied" "$tmp/gc2.out"
fi
exit $((fails > 0))
