#!/usr/bin/env bash
# Real-GPU check: a PyTorch training job (tests/gpu/torch_train.py) under libshim keeps its
# results bit for bit at budgets below its own peak, with each of PyTorch's allocators.
#
#   tests/gpu/torch_budget.sh [OUT_DIR]
#   (BUILD, PYTHON; TORCH_ARGS: torch_train.py's arguments; TORCH_ALLOCS: "async caching";
#   TORCH_BUDGETS: "75 50", shares of the peak; TORCH_NAME: a prefix for the runs' files)
#
# For each allocator (cudaMallocAsync, libshim's default; PyTorch's caching allocator) it runs
# the job natively, then under libshim with the default budget (nothing should move; the trace
# gives the job's peak), then at each share of that peak (75% and 50%). Prints a table (checksum, median step
# time against native, the shim's exit line) and fails when a run fails or a checksum differs.
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

# run NAME ALLOC_CONF [VAR=VALUE...]: one job, its JSON line in $out/NAME.json, stderr in .err
run() {
    local name=$1 conf=$2
    shift 2
    env PYTORCH_CUDA_ALLOC_CONF="$conf" "$@" timeout "${TORCH_TIMEOUT:-600}" "$PY" "$here/torch_train.py" $args \
        >"$out/$name.json" 2>"$out/$name.err"
    local rc=$?
    if [ $rc -ne 0 ]; then
        echo "not ok - $name: exit status $rc"
        tail -n 20 "$out/$name.err" | sed 's/^/#   /'
        fail=1
    fi
    return $rc
}

field() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

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
    rows+=("${pre}native-$alloc|$want|$base|1.00|-")
    shimmed ${pre}shim-$alloc-auto "$conf" auto "${extra[@]}" || continue
    "$report" summary --json "$out/${pre}shim-$alloc-auto.trace" >"$out/${pre}shim-$alloc-auto.summary.json" 2>&1
    peak=$(field "$out/${pre}shim-$alloc-auto.summary.json" peak_device_bytes)
    for name in auto $budgets; do
        if [ $name != auto ]; then
            shimmed ${pre}shim-$alloc-$name "$conf" "$((peak * name / 100 / 1048576))MiB" "${extra[@]}" \
                || continue
        fi
        got=$(field "$out/${pre}shim-$alloc-$name.json" checksum)
        ms=$(field "$out/${pre}shim-$alloc-$name.json" step_ms)
        ratio=$("$PY" -c "print(f'{$ms / $base:.2f}')")
        line=$(grep -h 'exit:' "$out/${pre}shim-$alloc-$name.log" | tail -n 1 | sed 's/.*exit: //')
        rows+=("${pre}shim-$alloc-$name|$got|$ms|$ratio|$line")
        if [ "$got" = "$want" ]; then
            echo "ok - ${pre}shim-$alloc-$name: checksum $got equals native's"
        else
            echo "not ok - ${pre}shim-$alloc-$name: checksum $got, native $want"
            fail=1
        fi
    done
    echo "# $alloc: native peak under libshim $peak bytes ($((peak / 1048576)) MiB)"
done

echo
echo "| run | checksum | median step ms | / native | libshim's exit line |"
echo "|---|---|---|---|---|"
for r in "${rows[@]}"; do
    IFS='|' read -r a b c d e <<<"$r"
    echo "| $a | $b | $c | ${d}x | $e |"
done
exit $fail
