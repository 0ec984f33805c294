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
#
# For make gpu-check (tests/gpu/gpu_check.sh), which runs it once per job and mode:
#   TORCH_ALLOCS also takes "default" (PYTORCH_CUDA_ALLOC_CONF unset, as a user runs the job:
#     PyTorch's caching allocator natively, under libshim the backend libshim sets) and
#     "expandable" (expandable_segments:True, the job's own, which libshim leaves as it is);
#   TORCH_PEAK: "shim" (the default: the peak of libshim's trace in the default-budget run) or
#     "native" (PyTorch's max_memory_reserved() in the native run), what the shares are of;
#   TORCH_SHIM_AUTO: 0 leaves out the default-budget run (only with TORCH_PEAK=native);
#   TORCH_AT_SAVE_ON_CPU: 1 adds libshim with the save-on-cpu run's peak as its budget (the
#     same memory as the offload written by hand);
#   TORCH_JOB and TORCH_MANIFEST=FILE: each run appends a line to FILE, NAME<TAB>JOB<TAB>CASE<TAB>
#     STATUS<TAB>SECONDS<TAB>BUDGET<TAB>ALLOC (CASE: native, save-on-cpu, default, a share, soc;
#     STATUS: the exit status, "timeout" or "skipped"; BUDGET: SHIM_BUDGET's value; ALLOC: one
#     of TORCH_ALLOCS), which tests/gpu/gpu_tables.py reads with the runs' files;
#   TORCH_DEADLINE: a time (seconds since the epoch) after which no run starts; each run's
#     timeout is cut to what is left (TORCH_MIN_RUN: the fewest seconds worth starting, 20);
#   TORCH_PROBED=1: PyTorch and the device were found already (the probe imports torch: seconds).
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
peak_from=${TORCH_PEAK:-shim}
shim_auto=${TORCH_SHIM_AUTO:-1}
at_soc=${TORCH_AT_SAVE_ON_CPU:-0}
job=${TORCH_JOB:-job}
manifest=${TORCH_MANIFEST:-}
deadline=${TORCH_DEADLINE:-0}
out=${1:-$(mktemp -d)}
mkdir -p "$out"

if [ "${TORCH_PROBED:-0}" != 1 ] &&
    ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    echo "skip - torch_budget: no PyTorch with a CUDA device"
    exit 0
fi
for f in "$shim" "$report"; do
    [ -x "$f" ] || [ -f "$f" ] || { echo "not ok - torch_budget: $f missing (make first)"; exit 1; }
done
if [ "$peak_from" = shim ] && [ "$shim_auto" != 1 ]; then
    echo "not ok - torch_budget: TORCH_PEAK=shim needs the default-budget run (TORCH_SHIM_AUTO=1)"
    exit 1
fi

fail=0
rows=()

# note NAME CASE STATUS SECONDS [BUDGET]: the run's line in the manifest ($alloc: the allocator's)
note() {
    [ -n "$manifest" ] && printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$job" "$2" "$3" "$4" "${5:-}" \
        "$alloc" >>"$manifest"
    return 0
}

# run NAME CASE ALLOC_CONF [VAR=VALUE...] [-- ARG...]: one job (torch_train.py with $args and the
# ARGs), its JSON line in $out/NAME.json, stderr in .err; ALLOC_CONF "-" leaves
# PYTORCH_CUDA_ALLOC_CONF unset. Returns the job's status (124: timed out; 125: not started,
# the time is spent).
run() {
    local name=$1 case=$2 conf=$3 vars=() limit=${TORCH_TIMEOUT:-600} left budget=
    shift 3
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        vars+=("$1")
        case $1 in SHIM_BUDGET=*) budget=${1#SHIM_BUDGET=} ;; esac
        shift
    done
    [ $# -gt 0 ] && shift
    if [ "$deadline" -gt 0 ]; then
        left=$((deadline - $(date +%s)))
        if [ "$left" -lt "${TORCH_MIN_RUN:-20}" ]; then
            echo "skip - $name: not started, the command's time is spent ($left s left)"
            note "$name" "$case" skipped 0 "$budget"
            return 125
        fi
        [ "$left" -lt "$limit" ] && limit=$left
    fi
    local unset=()
    [ "$conf" = - ] && unset=(-u PYTORCH_CUDA_ALLOC_CONF) || vars=(PYTORCH_CUDA_ALLOC_CONF="$conf" "${vars[@]}")
    local t0=$SECONDS
    env "${unset[@]}" "${vars[@]}" timeout -k 5 "$limit" "$PY" "$here/torch_train.py" \
        $args "$@" >"$out/$name.json" 2>"$out/$name.err"
    local rc=$? status
    status=$rc
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        status=timeout
        rc=124
        echo "not ok - $name: timed out after $limit s"
        fail=1
    elif [ $rc -ne 0 ]; then
        echo "not ok - $name: exit status $rc"
        tail -n 20 "$out/$name.err" | sed 's/^/#   /'
        fail=1
    fi
    note "$name" "$case" "$status" $((SECONDS - t0)) "$budget"
    return $rc
}

# field FILE KEY: KEY of the JSON in FILE (a job's JSON line is its last line that opens an object:
# a library may print before it)
field() {
    "$PY" -c 'import json, sys
text = open(sys.argv[1]).read()
try:
    d = json.loads(text)
except ValueError:
    d = json.loads([l for l in text.splitlines() if l.lstrip().startswith("{")][-1])
print(d[sys.argv[2]])' "$1" "$2"
}
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

# shimmed NAME CASE ALLOC_CONF BUDGET [VAR=VALUE...]: the job under libshim, with its trace and log
shimmed() {
    local name=$1 case=$2 conf=$3 budget=$4
    shift 4
    rm -f "$out/$name.trace" "$out/$name.log"
    run "$name" "$case" "$conf" LD_PRELOAD="$shim" SHIM_BUDGET="$budget" \
        SHIM_TRACE_PATH="$out/$name.trace" SHIM_LOG_FILE="$out/$name.log" "$@"
}

# judged NAME: the checksum check, the trace's summary and the row of a libshim run that ended;
# sets held (the trace's peak device bytes; empty without a summary)
judged() {
    local name=$1
    timeout -k 5 "${TORCH_REPORT_TIMEOUT:-120}" "$report" summary --json "$out/$name.trace" \
        >"$out/$name.summary.json" 2>&1 || echo "# $name: shim-report summary failed (status $?)"
    held=$(field "$out/$name.summary.json" peak_device_bytes 2>/dev/null)
    same "$name" "$want"
    row "$name" "${held:-0}" "$(grep -h 'exit:' "$out/$name.log" 2>/dev/null | tail -n 1 | sed 's/.*exit: //')"
}

for alloc in $allocs; do
    extra=()
    case $alloc in
    async) conf=backend:cudaMallocAsync ;;
    caching)
        conf=backend:native
        extra=(SHIM_PYTORCH_ASYNC_BACKEND=false)
        ;;
    default) conf=- ;;
    expandable) conf=expandable_segments:True ;;
    *)
        echo "not ok - torch_budget: allocator '$alloc' (TORCH_ALLOCS) is none of async, caching, default, expandable"
        exit 1
        ;;
    esac
    run ${pre}native-$alloc native "$conf" || continue
    want=$(field "$out/${pre}native-$alloc.json" checksum)
    base=$(field "$out/${pre}native-$alloc.json" step_ms)
    row ${pre}native-$alloc "$(field "$out/${pre}native-$alloc.json" peak_reserved)" -
    name=${pre}save-on-cpu-$alloc
    soc_peak=
    if [ "${TORCH_SAVE_ON_CPU:-1}" = 1 ] && run $name save-on-cpu "$conf" -- --save-on-cpu; then
        same $name "$want"
        soc_peak=$(field "$out/$name.json" peak_reserved)
        row $name "$soc_peak" -
    fi
    peak=
    [ "$peak_from" = native ] && peak=$(field "$out/${pre}native-$alloc.json" peak_reserved)
    if [ "$shim_auto" = 1 ]; then
        if shimmed ${pre}shim-$alloc-auto default "$conf" auto "${extra[@]}"; then
            judged ${pre}shim-$alloc-auto
            peak=${peak:-$held}
        elif [ "$peak_from" = shim ]; then
            continue
        fi
    fi
    if [ -z "$peak" ] || [ "$peak" -le 0 ]; then
        echo "not ok - ${pre}$alloc: no peak to take shares of (TORCH_PEAK=$peak_from)"
        fail=1
        continue
    fi
    for share in $budgets; do
        shimmed ${pre}shim-$alloc-$share "$share" "$conf" "$((peak * share / 100 / 1048576))MiB" \
            "${extra[@]}" && judged ${pre}shim-$alloc-$share
    done
    if [ "$at_soc" = 1 ] && [ -n "$soc_peak" ]; then
        shimmed ${pre}shim-$alloc-soc soc "$conf" "$((soc_peak / 1048576))MiB" "${extra[@]}" &&
            judged ${pre}shim-$alloc-soc
    fi
    echo "# $alloc: budgets are shares of $peak bytes ($((peak / 1048576)) MiB, $([ "$peak_from" = native ] && echo "PyTorch's peak reserved natively" || echo "the peak of libshim's trace at the default budget"))"
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
