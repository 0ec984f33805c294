#!/usr/bin/env bash
# What recording costs per launch (issue 4): the same launch loop without and with libshim, on a
# null driver so that the difference is the shim's own work. Prints a table (wall time per
# launch, both runs interleaved, best of R; instructions per launch under callgrind, counted
# inside cuLaunchKernel only, also for launches with 64 pointer parameters) and writes it to
# tests/bench/RESULTS-recording.md. libshim runs in its default mode (auto): the null driver
# lacks the residency manager's entry points, so it records only, as SHIM_MODE=record would.
#   usage: tests/bench/recording_bench.sh [LAUNCHES] [REPEATS]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
n=${1:-2000000}
reps=${2:-5}
make -s build/libshim.so build/bench/null/libcuda.so.1 build/bench/launch_bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LD_LIBRARY_PATH="$root/build/bench/null"
plain() { build/bench/launch_bench "$n" | sed -E 's/.*ns_per_launch=//'; }
shim() { SHIM_LOG_LEVEL=error SHIM_TRACE_PATH="$work/b-%p.trace" LD_PRELOAD="$root/build/libshim.so" build/bench/launch_bench "$n" | sed -E 's/.*ns_per_launch=//'; rm -f "$work"/b-*.trace; }
best_plain=1e9 best_shim=1e9
for _ in $(seq "$reps"); do
    p=$(plain) s=$(shim)
    best_plain=$(python3 -c "print(min($best_plain, $p))")
    best_shim=$(python3 -c "print(min($best_shim, $s))")
done
cg() { # instructions inside cuLaunchKernel per launch
    local out="$work/cg.$1"
    valgrind --tool=callgrind --toggle-collect=cuLaunchKernel --callgrind-out-file="$out" "${@:2}" 2>&1 >/dev/null |
        awk '/Collected :/ {print $NF}'
}
cn=200000
wide=64
ip=$(cg plain build/bench/launch_bench "$cn")
# valgrind hands LD_PRELOAD on to the program it runs
is=$(SHIM_LOG_LEVEL=error SHIM_TRACE_PATH="$work/c-%p.trace" LD_PRELOAD="$root/build/libshim.so" cg shim build/bench/launch_bench "$cn")
# Under callgrind the trace writer thread runs slowly and records may be dropped (a dropped
# record costs fewer instructions than a written one): say how many, so that runs compare.
make -s build/shim-report
ctrace=$(ls "$work"/c-*.trace 2>/dev/null | head -n 1)
dropped=$([ -n "$ctrace" ] && build/shim-report summary "$ctrace" 2>/dev/null |
    sed -n 's/^dropped_records: //p')
ipw=$(cg plainw build/bench/launch_bench "$cn" "$wide")
isw=$(SHIM_LOG_LEVEL=error SHIM_TRACE_PATH="$work/w-%p.trace" LD_PRELOAD="$root/build/libshim.so" cg shimw build/bench/launch_bench "$cn" "$wide")
table=$(python3 - "$best_plain" "$best_shim" "$ip" "$is" "$cn" "$n" "$reps" "$ipw" "$isw" "$wide" "${dropped:-unknown}" <<'PY'
import sys
dropped = sys.argv[11]
bp, bs, ip, is_, cn, n, reps = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6], sys.argv[7]
ipw, isw, wide = int(sys.argv[8]), int(sys.argv[9]), sys.argv[10]
# callgrind counts the warm-up launches too (5000) inside cuLaunchKernel
launches = cn + 5000
print(f"| measure | without shim | with shim (recording) | shim's own cost | ratio |")
print(f"|---|---|---|---|---|")
print(f"| wall time per launch, best of {reps} x {n} launches | {bp:.1f} ns | {bs:.1f} ns | {bs-bp:.1f} ns | {bs/bp:.2f}x |")
print(f"| instructions per launch in cuLaunchKernel (callgrind) | {ip/launches:.0f} | {is_/launches:.0f} | {(is_-ip)/launches:.0f} | {is_/ip:.2f}x |")
print(f"| the same, {wide} pointer parameters to {wide} allocations | {ipw/launches:.0f} | {isw/launches:.0f} | {(isw-ipw)/launches:.0f} | {isw/ipw:.2f}x |")
print()
print(f"Records dropped in the two-pointer callgrind run: {dropped} of about {launches} launches "
      "(the writer thread falls behind under callgrind; a dropped record costs fewer "
      "instructions, so a run that drops fewer counts more).")
PY
)
echo "$table"
{
    echo "# Recording overhead per launch"
    echo
    echo "Command: \`tests/bench/recording_bench.sh $n $reps\` ($(date -u +%Y-%m-%d), $(nproc) cores, $(uname -m))."
    echo "Null driver (tests/bench/null_driver.c): the difference is the shim's own work on the launch"
    echo "path in steady state (step detected, profiled steps over, trace written), in the default"
    echo "mode, which records only on this driver (it lacks the residency manager's entry points)."
    echo "Two pointer parameters unless noted. Goal: under 100 ns and under 400 instructions per launch."
    echo
    echo "$table"
} >tests/bench/RESULTS-recording.md
