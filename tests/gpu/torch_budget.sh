#!/usr/bin/env bash
# Real-GPU check: a PyTorch training job (tests/gpu/torch_train.py) under libshim keeps its
# results bit for bit at budgets below its own peak, with each of PyTorch's allocators.
#
#   tests/gpu/torch_budget.sh [OUT_DIR]
#   (BUILD, PYTHON; TORCH_ARGS: torch_train.py's arguments; TORCH_ALLOCS: "async caching";
#   TORCH_BUDGETS: "75 50", shares of the peak; TORCH_NAME: a prefix for the runs' files;
#   TORCH_SAVE_ON_CPU: 1 (the default) adds the save-on-cpu run, 0 leaves it out)
#
# For each allocator (cudaMallocAsync, libshim's default; PyTorch's caching allocator) it runs
# the job natively; natively again with torch.autograd.graph.save_on_cpu(pin_memory=True) around
# the forward pass (torch_train.py --save-on-cpu: the offload a user writes by hand instead of
# libshim); then under libshim with the default budget (nothing should move; the trace gives the
# job's peak), then at each share of that peak (75% and 50%). Prints a table (checksum, median
# step time against native, peak device memory, the shim's exit line) and fails when a run fails
# or a checksum differs from the native one.
# Skips cleanly (exit 0, a "skip" line) without PyTorch or a CUDA device.
# TORCH_TIMEOUT: seconds each run may take (600).
set -u
BUILD=${BUILD:-build}
PY=${PYTHON:-python3}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
shim="$root/$BUILD/libshim.so"
report="$root/$BUILD/shim-report"
args=${TORCH_ARGS:---layers 8 --width 4096 --batch 4096 --steps 40}
allocs=${TORCH_ALLOCS:-async caching}
budgets=${TORCH_BUDGETS:-75 50}
pre=${TORCH_NAME:-}
out=${1:-$(mktemp -d)}
mkdir -p "$out"

if ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    echo "skip - torch_budget: no PyTorch with a CUDA device"
    exit 0
fi
for f in "$shim" "$report"; do
    [ -x "$f" ] || [ -f "$f" ] || { echo "not ok - torch_budget: $f missing (make first)"; exit 1; }
done

fail=0
rows=()

# run NAME ALLOC_CONF [VAR=VALUE...] [-- ARG...]: one job (torch_train.py with $args and the ARGs),
# its JSON line in $out/NAME.json, stderr in .err
run() {
    local name=$1 conf=$2 vars=()
    shift 2
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        vars+=("$1")
        shift
    done
    [ $# -gt 0 ] && shift
    env PYTORCH_CUDA_ALLOC_CONF="$conf" "${vars[@]}" timeout "${TORCH_TIMEOUT:-600}" "$PY" "$here/torch_train.py" \
        $args "$@" >"$out/$name.json" 2>"$out/$name.err"
    local rc=$?
    if [ $rc -ne 0 ]; then
        echo "not ok - $name: exit status $rc"
        tail -n 20 "$out/$name.err" | sed 's/^/#   /'
        fail=1
    fi
    return $rc
}

field() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }
mib() { echo $((${1:-0} / 1048576)); }
ratio() { "$PY" -c "print(f'{$1 / $2:.2f}')"; }

# row NAME PEAK_BYTES EXIT_LINE: the table's row for run NAME (checksum and step time from its JSON
# line, the step time against native's, $base)
row() {
    local ms
    ms=$(field "$out/$1.json" step_ms)
    rows+=("$1|$(field "$out/$1.json" checksum)|$ms|$(ratio "$ms" "$base")|$(mib "$2")|$3")
}

# same NAME WANT: an "ok"/"not ok" line for run NAME's checksum against WANT (native's)
same() {
    local got
    got=$(field "$out/$1.json" checksum)
    if [ "$got" = "$2" ]; then
        echo "ok - $1: checksum $got equals native's"
    else
        echo "not ok - $1: checksum $got, native $2"
        fail=1
    fi
}

# shimmed NAME ALLOC_CONF BUDGET [VAR=VALUE...]: the job under libshim, with its trace and log
shimmed() {
    local name=$1 conf=$2 budget=$3
    shift 3
    rm -f "$out/$name.trace"
    run "$name" "$conf" LD_PRELOAD="$shim" SHIM_BUDGET="$budget" SHIM_TRACE_PATH="$out/$name.trace" \
        SHIM_LOG_FILE="$out/$name.log" "$@"
}

for alloc in $allocs; do
    if [ $alloc = async ]; then
        conf=backend:cudaMallocAsync
        extra=()
    else
        conf=backend:native
        extra=(SHIM_PYTORCH_ASYNC_BACKEND=false)
    fi
    run ${pre}native-$alloc "$conf" || continue
    want=$(field "$out/${pre}native-$alloc.json" checksum)
    base=$(field "$out/${pre}native-$alloc.json" step_ms)
    row ${pre}native-$alloc "$(field "$out/${pre}native-$alloc.json" peak_reserved)" -
    name=${pre}save-on-cpu-$alloc
    if [ "${TORCH_SAVE_ON_CPU:-1}" = 1 ] && run $name "$conf" -- --save-on-cpu; then
        same $name "$want"
        row $name "$(field "$out/$name.json" peak_reserved)" -
    fi
    shimmed ${pre}shim-$alloc-auto "$conf" auto "${extra[@]}" || continue
    peak=
    for name in auto $budgets; do
        if [ $name != auto ]; then
            shimmed ${pre}shim-$alloc-$name "$conf" "$((peak * name / 100 / 1048576))MiB" "${extra[@]}" \
                || continue
        fi
        run_name=${pre}shim-$alloc-$name
        "$report" summary --json "$out/$run_name.trace" >"$out/$run_name.summary.json" 2>&1
        held=$(field "$out/$run_name.summary.json" peak_device_bytes)
        peak=${peak:-$held}
        same $run_name "$want"
        row $run_name "$held" "$(grep -h 'exit:' "$out/$run_name.log" | tail -n 1 | sed 's/.*exit: //')"
    done
    echo "# $alloc: native peak under libshim $peak bytes ($((peak / 1048576)) MiB)"
done

echo
echo "peak MiB: PyTorch's max_memory_reserved() for the runs without libshim; the peak device bytes"
echo "of libshim's trace (shim-report summary) for the runs under it."
echo
echo "| run | checksum | median step ms | / native | peak MiB | libshim's exit line |"
echo "|---|---|---|---|---|---|"
for r in "${rows[@]}"; do
    IFS='|' read -r a b c d e f <<<"$r"
    echo "| $a | $b | $c | ${d}x | $e | $f |"
done
exit $fail
