#!/usr/bin/env bash
# gpu_check.sh — make gpu-check: the one command a session with a GPU runs first. Prints the card
# and its driver, then
#   1. vmm_handles (tests/gpu/vmm_handles.cu): VMM calls on 64 MiB as 1, 4 and 32 handles, 1, 2
#      and 4 threads remapping at once, a launch's host time while another thread remaps;
#   2. torch_train.py's MLP and eager transformer (tests/gpu/torch_budget.sh): natively, with
#      save_on_cpu(pin_memory=True) (the offload written by hand), under libshim at the default
#      budget, 75% and 50% of its peak and at save_on_cpu's peak (the same memory);
#   3. the same jobs under torch.compile(mode="reduce-overhead") (CUDA graphs) and with
#      PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, natively and under libshim at 75% of the
#      native peak: the present limits, whose failures do not change the exit status;
# then one table per part (tests/gpu/gpu_tables.py, the twins' predictions beside each figure).
#
# Every step has a timeout, and no run starts once the command's time (GPU_CHECK_SECONDS from
# the start, 420, then 30 s to pack the traces; part 2 until GPU_CHECK_PART2_END, 280) is spent:
# each skip says why. Without a GPU (no driver here), nvcc or PyTorch the parts say so and are
# skipped; with no GPU at all the command ends with "no GPU: nothing measured" and exit status 0.
# Exit status 1: a failure in part 1 or 2 (a run that failed or timed out, a checksum that
# differs from native's), or a driver but nothing measured.
#
# Environment (make gpu-check sets them): BUILD, PYTHON, NVCC (none: no CUDA build), MAKE;
# GPU_CHECK_OUT, $out below: the results, $out/gpu-check.md (the tables), gpu-check.log (all the
# command printed), gpu-check-runs.tar.gz (the runs' files but the traces) and
# gpu-check-traces.tar (the traces gzipped, as many as fit in 15 MiB); by default $OUT (the
# device machine's), else $BUILD/gpu-check. GPU_CHECK_WORK: the runs' own files
# ($BUILD/gpu-check-work, emptied first). GPU_CHECK_PARTS ("1 2 3"); GPU_TWINS (the twins'
# predictions); GPU_CHECK_COMMIT (the commit measured, for the header); GPU_CHECK_MLP and
# GPU_CHECK_TRANSFORMER (torch_train.py's arguments for the two jobs); GPU_CHECK_GRAPHS_ALLOCS
# (part 3's allocators for the CUDA-graph jobs, "caching default": PyTorch's caching allocator on
# both sides, then as a user runs the job, PYTORCH_CUDA_ALLOC_CONF unset: the caching allocator
# natively, under libshim the cudaMallocAsync backend libshim sets, which PyTorch's CUDA graph
# trees may refuse: they checkpoint the caching allocator's pool state, which that backend lacks).
# Timeouts: GPU_CHECK_VMM_TIMEOUT (part 1, 100 s), GPU_CHECK_RUN_TIMEOUT (a part-2 run, 150 s),
# GPU_CHECK_COMPILE_TIMEOUT (a part-3 run, 150 s).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root" || exit 1
BUILD=${BUILD:-build}
PY=${PYTHON:-python3}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
MAKE=${MAKE:-make}
out=${GPU_CHECK_OUT:-${OUT:-$BUILD/gpu-check}}
work=${GPU_CHECK_WORK:-$BUILD/gpu-check-work}
seconds=${GPU_CHECK_SECONDS:-420}
part2_end=${GPU_CHECK_PART2_END:-280}
parts=${GPU_CHECK_PARTS:-1 2 3}
twins=${GPU_TWINS:-tests/bench/twin-predictions.tsv}
mlp=${GPU_CHECK_MLP:---layers 8 --width 4096 --batch 4096 --steps 40}
transformer=${GPU_CHECK_TRANSFORMER:---model transformer --layers 6 --width 1024 --seq 512 --batch 16 --steps 30}
graphs_allocs=${GPU_CHECK_GRAPHS_ALLOCS:-caching default}
start=$(date +%s)

# The real driver only: the simulated device's libcuda.so.1 (make test puts it on the path) is
# never taken for a GPU.
LD_LIBRARY_PATH=$(printf '%s' "${LD_LIBRARY_PATH:-}" | tr ':' '\n' | grep -v simgpu | paste -sd: -)
if [ -n "$LD_LIBRARY_PATH" ]; then export LD_LIBRARY_PATH; else unset LD_LIBRARY_PATH; fi

gpu=0 # 1: a driver is here (vmm_handles and PyTorch then say whether a GPU answers)
torch_ok=0
torch_why=

say_header() { echo "$1: $2" >>"$work/header.txt"; }
skip() {
    echo "skip - part $1: $2"
    printf '%s\t%s\n' "$1" "$2" >>"$work/skipped.txt"
}
wanted() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
left() { echo $((start + seconds - $(date +%s))); }

# driver_here: whether libcuda.so.1 is in the linker's cache or on LD_LIBRARY_PATH
driver_here() {
    ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' && return 0
    local d
    local IFS=:
    for d in ${LD_LIBRARY_PATH:-}; do
        [ -e "$d/libcuda.so.1" ] && return 0
    done
    return 1
}

card() {
    local q name drv mem
    if ! driver_here; then
        echo "card: none (no CUDA driver: libcuda.so.1 is neither in the linker's cache nor on LD_LIBRARY_PATH)"
        say_header card none
        return
    fi
    gpu=1
    q=$(timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null |
        head -n 1 | sed 's/ *, */,/g')
    if [ -z "$q" ]; then
        echo "card: unknown (a CUDA driver is here; nvidia-smi answered nothing)"
        say_header card "unknown (nvidia-smi answered nothing)"
        return
    fi
    IFS=, read -r name drv mem <<<"$q"
    echo "card: $name, driver $drv, $mem"
    say_header card "$name ($mem)"
    say_header driver "$drv"
}

build_cuda() {
    # The toolkit's nvcc, else the one on PATH (an image whose CUDA lives elsewhere); NVCC=none
    # builds nothing.
    [ "$NVCC" = none ] || command -v "$NVCC" >/dev/null 2>&1 ||
        NVCC=$(command -v nvcc 2>/dev/null || echo "$NVCC")
    if ! command -v "$NVCC" >/dev/null 2>&1; then
        skip 1 "no nvcc ($NVCC): vmm_handles not built"
        return
    fi
    echo "== building tests/gpu's CUDA programs with $NVCC"
    if timeout 120 env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "$MAKE" --no-print-directory -j2 \
        SAN="${SAN:-}" NVCC="$NVCC" "$BUILD/gpu/vmm_handles" "$BUILD/gpu/vmm_facts"; then
        echo "ok - nvcc compiled vmm_handles and vmm_facts"
    else
        echo "not ok - nvcc did not compile tests/gpu's CUDA programs"
    fi
}

# part1: builds the CUDA programs (also without a GPU: a compile error shows here, not on a lent
# machine), then runs vmm_handles
part1() {
    local rc t0=$SECONDS
    build_cuda
    [ "$gpu" = 1 ] || { skip 1 "no GPU (no CUDA driver on this machine)"; return; }
    [ -x "$BUILD/gpu/vmm_handles" ] || { skip 1 "$BUILD/gpu/vmm_handles was not built"; return; }
    echo "== part 1: VMM facts ($BUILD/gpu/vmm_handles)"
    timeout -k 5 "${GPU_CHECK_VMM_TIMEOUT:-100}" "$BUILD/gpu/vmm_handles" >"$work/vmm_handles.txt" 2>&1
    rc=$?
    grep -E '^(ok|not ok|skip|fact)' "$work/vmm_handles.txt"
    case $rc in
    0) ;;
    77)
        rm -f "$work/vmm_handles.txt"
        skip 1 "vmm_handles found no usable GPU"
        ;;
    124 | 137) echo "not ok - part 1: vmm_handles timed out (its tables as far as they got are kept)" ;;
    *) echo "not ok - part 1: vmm_handles ended with status $rc" ;;
    esac
    printf '1\t%s\n' $((SECONDS - t0)) >>"$work/times.tsv"
}

probe_torch() {
    if ! timeout 120 "$PY" -c 'import json, torch
ok = torch.cuda.is_available()
print(json.dumps({"torch": torch.__version__, "cuda": torch.version.cuda, "gpu": ok,
                  "device": torch.cuda.get_device_name() if ok else None}))' \
        >"$work/torch.json" 2>"$work/torch.err"; then
        torch_why="no PyTorch for $PY ($(tail -n 1 "$work/torch.err"))"
        return
    fi
    say_header torch "$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["torch"], "(CUDA", str(d["cuda"]) + ")")' "$work/torch.json")"
    if grep -q '"gpu": true' "$work/torch.json"; then
        torch_ok=1
    else
        torch_why="PyTorch sees no CUDA device"
    fi
}

# torch_job JOB ARGS ALLOC DEADLINE TIMEOUT [VAR=VALUE...]: torch_budget.sh for one job and mode
torch_job() {
    local job=$1 args=$2 alloc=$3 until=$4 limit=$5
    shift 5
    env BUILD="$BUILD" PYTHON="$PY" TORCH_PROBED=1 TORCH_JOB="$job" TORCH_NAME="$job-" \
        TORCH_ARGS="$args" TORCH_ALLOCS="$alloc" TORCH_MANIFEST="$work/manifest.tsv" \
        TORCH_DEADLINE="$until" TORCH_TIMEOUT="$limit" TORCH_REPORT_TIMEOUT=45 "$@" \
        tests/gpu/torch_budget.sh "$work"
}

part2() {
    local t0=$SECONDS job args
    [ "$torch_ok" = 1 ] || { skip 2 "$torch_why"; return; }
    echo "== part 2: the MLP and the eager transformer natively, by hand (save_on_cpu) and under libshim"
    for job in mlp transformer; do
        [ $job = mlp ] && args=$mlp || args=$transformer
        torch_job $job "$args" async $((start + part2_end)) "${GPU_CHECK_RUN_TIMEOUT:-150}" \
            TORCH_BUDGETS="75 50" TORCH_SAVE_ON_CPU=1 TORCH_AT_SAVE_ON_CPU=1
    done
    printf '2\t%s\n' $((SECONDS - t0)) >>"$work/times.tsv"
}

part3() {
    local t0=$SECONDS spec job args alloc
    [ "$torch_ok" = 1 ] || { skip 3 "$torch_why"; return; }
    echo "== part 3: CUDA graphs and expandable segments, natively and under libshim at 75% (the present limits)"
    # Cheapest first: the compiled jobs spend most of their time compiling.
    for spec in "mlp-expandable|$mlp|expandable" "transformer-expandable|$transformer|expandable" \
        "mlp-graphs|$mlp --compile-mode reduce-overhead|$graphs_allocs" \
        "transformer-graphs|$transformer --compile-mode reduce-overhead|$graphs_allocs"; do
        IFS='|' read -r job args alloc <<<"$spec"
        torch_job "$job" "$args" "$alloc" $((start + seconds)) "${GPU_CHECK_COMPILE_TIMEOUT:-150}" \
            TORCH_BUDGETS=75 TORCH_PEAK=native TORCH_SHIM_AUTO=0 TORCH_SAVE_ON_CPU=0 ||
            echo "# part 3: $job: torch_budget.sh reported a failure (not counted: a present limit)"
    done
    printf '3\t%s\n' $((SECONDS - t0)) >>"$work/times.tsv"
}

# pack: the runs' files (traces apart) into the results folder, then as many of the traces as fit
# in 15 MiB compressed (a file the device machine brings back holds 16 at most): the 75% runs'
# first, then 50%, save_on_cpu's memory and the default budget's
pack() {
    local limit=$((15 * 1048576)) size total=0 kept=() dropped=() order=() t z
    timeout 30 tar -czf "$out/gpu-check-runs.tar.gz" -C "$work" --exclude='*.trace' . 2>&1 | head -n 5
    size=$(stat -c %s "$out/gpu-check-runs.tar.gz" 2>/dev/null || echo 0)
    [ "$size" -le "$limit" ] || echo "# gpu-check-runs.tar.gz is $((size / 1048576)) MiB: over what a file may bring back"
    mkdir -p "$work/gz"
    for t in "$work"/*-75.trace "$work"/*-50.trace "$work"/*-soc.trace "$work"/*-auto.trace "$work"/*.trace; do
        [ -f "$t" ] && order+=("$(basename "$t")")
    done
    for t in $(printf '%s\n' "${order[@]}" | awk '!seen[$0]++'); do
        if [ "$(left)" -lt -30 ]; then
            dropped+=("$t (the command's time is spent)")
            continue
        fi
        z="$work/gz/$t.gz"
        timeout 20 gzip -1 -c "$work/$t" >"$z" 2>/dev/null || { rm -f "$z"; dropped+=("$t (gzip)"); continue; }
        size=$(stat -c %s "$z")
        if [ $((total + size)) -le "$limit" ]; then
            total=$((total + size))
            kept+=("$t.gz")
        else
            rm -f "$z"
            dropped+=("$t ($((size / 1048576)) MiB)")
        fi
    done
    [ ${#kept[@]} -gt 0 ] && tar -cf "$out/gpu-check-traces.tar" -C "$work/gz" -- "${kept[@]}"
    [ ${#dropped[@]} -gt 0 ] && echo "# traces left in $work, not in the results: ${dropped[*]}"
    return 0
}

count_not_ok() {
    local n=0
    [ -f "$1" ] && n=$(grep -c '^not ok' "$1")
    echo "${n:-0}"
}

# measured: whether anything ran on a GPU (vmm_handles' figures, a PyTorch run that started)
measured() {
    [ -s "$work/vmm_handles.txt" ] && return 0
    [ -f "$work/manifest.tsv" ] && awk -F'\t' '$4 != "skipped"' "$work/manifest.tsv" | grep -q .
}

main() {
    card
    say_header cpus "$(nproc 2>/dev/null || echo '?')"
    say_header date "$(date -u '+%Y-%m-%d %H:%M UTC')"
    say_header commit "${GPU_CHECK_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo 'unknown (no git here: give GPU_CHECK_COMMIT)')}"
    say_header command "make gpu-check (tests/gpu/gpu_check.sh; parts $parts)"
    for p in 1 2 3; do
        wanted $p || skip $p "not asked for (GPU_CHECK_PARTS=\"$parts\")"
    done
    if wanted 1; then part1 2>&1 | tee "$work/part1.txt"; fi
    grep -q '^fact: .*driver [0-9]' "$work/vmm_handles.txt" 2>/dev/null &&
        say_header cuda "$(grep -m1 '^fact: .*driver [0-9]' "$work/vmm_handles.txt" | sed 's/^fact: [^,]*, //')"
    if wanted 2 || wanted 3; then
        if [ "$gpu" = 1 ]; then
            probe_torch
        else
            torch_why="no GPU (no CUDA driver on this machine)"
        fi
    fi
    if wanted 2; then part2 2>&1 | tee "$work/part2.txt"; fi
    if wanted 3; then part3 2>&1 | tee "$work/part3.txt"; fi
    echo "== tables ($out/gpu-check.md)"
    timeout 30 "$PY" tests/gpu/gpu_tables.py "$work" --twins "$twins" -o "$out/gpu-check.md" ||
        echo "not ok - gpu_tables.py could not make the tables"
    pack
    local bad12 bad3
    bad12=$(($(count_not_ok "$work/part1.txt") + $(count_not_ok "$work/part2.txt")))
    bad3=$(count_not_ok "$work/part3.txt")
    echo "== $(($(date +%s) - start)) s; results in $out/"
    if [ "$gpu" = 0 ]; then
        echo "gpu-check: no GPU: nothing measured"
        # A compile error is one here too: it would cost a lent machine its minutes.
        ! grep -q '^not ok - nvcc' "$work/part1.txt" 2>/dev/null
        return
    fi
    if ! measured; then
        echo "gpu-check: a driver is here, but nothing was measured (the skip lines say why)"
        return 1
    fi
    echo "gpu-check: parts 1 and 2: $bad12 not ok; part 3: $bad3 not ok (the present limits: not counted)"
    [ "$bad12" -eq 0 ]
}

# The work folder is emptied only if it is this command's own (its mark is there) or empty.
if [ -d "$work" ] && [ ! -e "$work/.gpu-check-work" ] && [ -n "$(ls -A "$work" 2>/dev/null)" ]; then
    echo "not ok - gpu-check: $work (GPU_CHECK_WORK) holds files this command did not write: not emptied"
    exit 1
fi
rm -rf "$work"
mkdir -p "$work" "$out" || exit 1
touch "$work/.gpu-check-work"
work=$(cd "$work" && pwd)
out=$(cd "$out" && pwd)
rm -f "$out"/gpu-check.md "$out"/gpu-check.log "$out"/gpu-check-*.tar.gz "$out"/gpu-check-traces.tar
main 2>&1 | tee "$out/gpu-check.log"
exit "${PIPESTATUS[0]}"
