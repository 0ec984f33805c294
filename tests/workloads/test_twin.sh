#!/usr/bin/env bash
# test_twin.sh — the twins of the H100's two PyTorch jobs (build/twin, tests/workloads/twin_*.c)
# and replay --carry:
#   (a) at the jobs' own shapes the twins hold what they were calibrated to (RESULTS-gpu.md): the
#       transformer 981 launches a step and a 39.92 ms step on one stream at its host time per
#       launch, the MLP 67.31 ms of GPU time; a bad job or flag is a usage error;
#   (b) small twins replayed with SIMGPU_HOST_US_PER_LAUNCH take the step the model's header
#       computes (the host's time, launch after launch: the transformer's host sets its pace),
#       the same on two runs and under jitter, and with replay --host-us instead;
#   (c) under libshim below the native peak, with the host's time and the VMM cost charged
#       (SIMGPU_HOST_CALLER=libshim, SIMGPU_VMM_HOST_COST=1), the native checksum, no hazard;
#   (d) replay --carry makes an allocation that outlives a step the next step's one of its size
#       that exists before it, in order: fewer allocations, the same checksum.
set -u
source "$(dirname "$0")/../shim/shim_env.sh"
TWIN="$B/twin" REPLAY="$B/replay"
scratch work

# run NAME CMD...: output in $work/NAME.out, .err, statistics in .json, status in .rc.
run() {
    local name=$1
    shift
    SIMGPU_STATS="$work/$name.json" timeout -k 5 300 "$@" >"$work/$name.out" 2>"$work/$name.err"
    echo $? >"$work/$name.rc"
}
rc() { cat "$work/$1.rc"; }
sum() { sed -n 's/^checksum=\([0-9a-f]\{16\}\)$/\1/p' "$work/$1.out" | tail -n 1; }
stat() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$work/$1.json" "$2" 2>/dev/null; }
steps() { grep -o 'device_us=[0-9.]*' "$work/$1.out" | cut -d= -f2 | tr '\n' ' '; }
host_us() { awk '/^# host_us_per_launch/ {print $3}' "$1"; }
# header MODEL WORD: the number before WORD in the model's "# launches" line.
header() { sed -n 's/^# launches \([0-9]*\), .*step on one stream \([0-9]*\) us.*/\1 \2/p' "$1"; }

plan 19
# (a)
"$TWIN" transformer >"$work/t.model"
"$TWIN" mlp >"$work/m.model"
read -r tl ts <<<"$(header "$work/t.model")"
check "transformer: 981 launches in the header ($tl) and in the model ($(grep -c '^op ' "$work/t.model"))" \
    [ "$tl" = 981 -a "$(grep -c '^op ' "$work/t.model")" = 981 ]
check "transformer: a 39920 us step on one stream at its host time ($ts us, $(host_us "$work/t.model") us a launch)" \
    [ "$ts" = 39920 ]
mg=$(sed -n 's/^# launches [0-9]*, GPU time \([0-9]*\) us.*/\1/p' "$work/m.model")
check "mlp: 67310 us of GPU time ($mg)" [ "$mg" = 67310 ]
"$TWIN" bert >/dev/null 2>&1
r1=$?
"$TWIN" mlp --layers 0 >/dev/null 2>&1
check "a bad job ($r1) or a bad flag ($?) is a usage error" [ $r1 = 2 -a $? = 2 ]

# (b)
"$TWIN" transformer --layers 1 --width 256 --seq 512 --batch 4 --heads 4 >"$work/ts.model"
"$TWIN" mlp --layers 2 --width 512 --batch 256 >"$work/ms.model"
for m in ts ms; do
    h=$(host_us "$work/$m.model")
    read -r _ want <<<"$(header "$work/$m.model")"
    run "$m-1" env SIMGPU_HOST_US_PER_LAUNCH="$h" "$REPLAY" "$work/$m.model" --carry --steps 3
    run "$m-2" env SIMGPU_HOST_US_PER_LAUNCH="$h" "$REPLAY" "$work/$m.model" --carry --steps 3
    run "$m-j" env SIMGPU_HOST_US_PER_LAUNCH="$h" SIMGPU_JITTER=5 "$REPLAY" "$work/$m.model" --carry --steps 3
    last=$(steps "$m-1" | awk '{print $NF}')
    # the two event records timing the step cost 4.5 us each (simgpu_host.c): within 10 us
    check "$m: the step takes the header's $want us at $h us a launch ($last)" \
        python3 -c "import sys; sys.exit(abs(float('$last') - $want) > 10)"
    check "$m: the same steps and checksum on two runs and under jitter ($(sum "$m-1"))" \
        [ "$(rc "$m-1")" = 0 -a -n "$(sum "$m-1")" -a "$(steps "$m-1")" = "$(steps "$m-2")" \
          -a "$(steps "$m-1")" = "$(steps "$m-j")" -a "$(sum "$m-1")" = "$(sum "$m-2")" \
          -a "$(sum "$m-1")" = "$(sum "$m-j")" ]
done
h=$(host_us "$work/ts.model")
run ts-work env SIMGPU_HOST_US_PER_LAUNCH=0 "$REPLAY" "$work/ts.model" --carry --steps 3 --host-us "$h"
check "ts: --host-us (the program's work before each op, simgpu_host_work) gives the same steps" \
    [ "$(rc ts-work)" = 0 -a "$(steps ts-work)" = "$(steps ts-1)" ]
run ts-nomodel env -u SIMGPU_HOST_US_PER_LAUNCH "$REPLAY" "$work/ts.model" --steps 1 --host-us 5
check "--host-us without per-thread clocks fails, saying so ($(rc ts-nomodel))" \
    [ "$(rc ts-nomodel)" = 1 -a -n "$(grep -l 'per-thread host clocks' "$work/ts-nomodel.err")" ]
run ts-free "$REPLAY" "$work/ts.model" --carry --steps 3
check "ts: without the host's time the step is shorter (GPU time only: $(steps ts-free | awk '{print $NF}'))" \
    python3 -c "import sys; sys.exit(not float('$(steps ts-free | awk '{print $NF}')') < float('$(steps ts-1 | awk '{print $NF}')'))"

# (c)
for m in ts ms; do
    h=$(host_us "$work/$m.model")
    run "$m-native" env SIMGPU_HOST_US_PER_LAUNCH="$h" "$REPLAY" "$work/$m.model" --carry --steps 10
    peak=$(stat "$m-native" peak_device_bytes)
    run "$m-shim" env SIMGPU_HOST_US_PER_LAUNCH="$h" SIMGPU_HOST_CALLER=libshim SIMGPU_VMM_HOST_COST=1 \
        SHIM_BUDGET=$((peak * 75 / 100)) SHIM_TRACE_PATH= LD_PRELOAD="$PRELOAD" \
        "$REPLAY" "$work/$m.model" --carry --steps 10
    check "$m under libshim at 75%: exit 0, the native checksum ($(sum "$m-shim") = $(sum "$m-native"))" \
        [ "$(rc "$m-shim")" = 0 -a -n "$(sum "$m-native")" -a "$(sum "$m-shim")" = "$(sum "$m-native")" ]
    check "$m under libshim at 75%: no unmap hazard, no illegal access, libshim's calls charged" \
        [ "$(stat "$m-shim" unmap_hazards)" = 0 -a "$(stat "$m-shim" illegal_accesses)" = 0 \
          -a "$(stat "$m-shim" host_caller_calls)" -gt 0 ]
    check "$m under libshim at 75%: the device peak within the budget" \
        [ "$(stat "$m-shim" peak_device_bytes)" -le $((peak * 75 / 100)) ]
done

# (d) two pairs: 3 MiB (allocation 1 outlives the step, 0 exists before it) and 1 MiB (3 and 2)
cat >"$work/carry.model" <<'EOF'
hw 25 25 1 10
op 1
op 1
op 1
alloc 3MiB -1 0 0
alloc 3MiB 1 -1 1 2
alloc 1MiB -1 1 1
alloc 1MiB 0 -1 0 2
alloc 64KiB -1 -1 0 1 2
EOF
run plain "$REPLAY" "$work/carry.model" --steps 4
run carry "$REPLAY" "$work/carry.model" --steps 4 --carry
calls() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["calls"].get("cuMemAllocAsync", 0))' "$work/$1.json"; }
# plain: 4 allocations a step (the cyclic one is made once); carried: 4 in the first, 2 after
check "--carry: the carried allocations are not made again ($(calls plain), $(calls carry) allocations)" \
    [ "$(calls plain)" = $((1 + 4 * 4)) -a "$(calls carry)" = $((1 + 4 + 3 * 2)) ]
check "--carry: the same checksum ($(sum carry) = $(sum plain))" \
    [ "$(rc carry)" = 0 -a -n "$(sum plain)" -a "$(sum carry)" = "$(sum plain)" ]
all
