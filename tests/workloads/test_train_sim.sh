#!/usr/bin/env bash
# test_train_sim.sh — train_sim on the simulated device: the checksum is the same on every run
# and in every allocation mode, a ~2 GiB-peak configuration runs in seconds, a lost 2 MiB chunk
# changes the checksum, and a device smaller than the peak fails cleanly with out-of-memory.
# Prints "ok - NAME" / "not ok - NAME" lines (tests/run_tests.sh counts them).
source "$(dirname "$0")/train_sim_env.sh"
plan 12

SMALL=(--layers 3 --hidden 512 --batch 4 --seq 256 --iters 4)
BIG=(--layers 4 --hidden 1024 --batch 7 --seq 1024 --iters 3)

# run NAME ARGS...: runs train_sim, output in $tmp/NAME.out / .err; returns its status.
run() {
    local name=$1
    shift
    "$bin" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
}

check_output_format() {
    local out=$1 iters=$2
    [ "$(grep -cE '^iter [0-9]+ device_us=[0-9.]+ peak_bytes=[0-9]+ loss=0x[0-9a-f]{8} launches=[0-9]+ allocs=[0-9]+$' "$out")" -eq "$iters" ] &&
        grep -qE '^summary mode=[a-z]+ .*native_peak_bytes=[0-9]+ ' "$out" &&
        [ "$(tail -n 1 "$out" | grep -cE '^checksum=[0-9a-f]{16}$')" -eq 1 ]
}

# 1. Output format and the same checksum on repeated runs (defaults).
if run default1 && run default2 && check_output_format "$tmp/default1.out" 10 &&
    [ -n "$(field checksum "$tmp/default1.out")" ] &&
    [ "$(field checksum "$tmp/default1.out")" = "$(field checksum "$tmp/default2.out")" ]; then
    ok "default configuration: output format, same checksum on two runs"
else
    not_ok "default configuration: output format, same checksum on two runs"
    cat "$tmp/default1.err" "$tmp/default2.err"
fi

# 2. The same checksum in every mode, also with jittered stream workers.
want=""
same=1
for mode in segments async exact; do
    if ! run "small-$mode" "${SMALL[@]}" --mode "$mode" ||
        ! SIMGPU_JITTER=11 run "jitter-$mode" "${SMALL[@]}" --mode "$mode"; then
        same=0
        cat "$tmp/small-$mode.err" "$tmp/jitter-$mode.err"
        continue
    fi
    for f in "small-$mode" "jitter-$mode"; do
        sum=$(field checksum "$tmp/$f.out")
        echo "# $f checksum=$sum"
        [ -z "$want" ] && want=$sum
        [ -n "$sum" ] && [ "$sum" = "$want" ] || same=0
    done
done
if [ "$same" -eq 1 ]; then ok "same checksum in segments, async and exact modes"; else not_ok "same checksum in segments, async and exact modes"; fi

# 2b. Sampling every 4 KiB page: still mode-independent, and a different sample set.
if run page-segments "${SMALL[@]}" --stride 4096 && run page-exact "${SMALL[@]}" --stride 4096 --mode exact &&
    [ "$(field checksum "$tmp/page-segments.out")" = "$(field checksum "$tmp/page-exact.out")" ] &&
    [ "$(field checksum "$tmp/page-segments.out")" != "$want" ]; then
    ok "--stride 4096 (every page): same checksum in segments and exact modes"
else
    not_ok "--stride 4096 (every page): same checksum in segments and exact modes"
fi

# 3. The ~2 GiB configuration, in every mode: finishes, same checksum, peak about 2 GiB.
want=""
for mode in segments async exact; do
    start=$(date +%s.%N)
    if run "big-$mode" "${BIG[@]}" --mode "$mode"; then
        end=$(date +%s.%N)
        peak=$(field native_peak_bytes "$tmp/big-$mode.out")
        sum=$(field checksum "$tmp/big-$mode.out")
        echo "# ${BIG[*]} --mode $mode: wall $(echo "$end - $start" | bc) s," \
            "native_peak_bytes=$peak tensor_peak_bytes=$(field tensor_peak_bytes "$tmp/big-$mode.out")" \
            "device_us_per_iter=$(field device_us_per_iter "$tmp/big-$mode.out") checksum=$sum"
        [ -z "$want" ] && want=$sum
        if [ "$sum" = "$want" ] && [ "$peak" -gt $((1800 << 20)) ] && [ "$peak" -lt $((4 << 30)) ]; then
            ok "2 GiB configuration, mode $mode"
        else
            not_ok "2 GiB configuration, mode $mode (checksum $sum, want $want; peak $peak)"
        fi
    else
        not_ok "2 GiB configuration, mode $mode"
        cat "$tmp/big-$mode.err"
    fi
done

# 4. A lost 2 MiB chunk of a weight or of an activation changes the checksum.
if run lose-base "${SMALL[@]}"; then
    base=$(field checksum "$tmp/lose-base.out")
    changed=1
    # layer 0's W1 is 4 MiB (2 chunks), its MLP activation 8 MiB (4 chunks) at this size.
    for spec in w1:0 w1:1 h:0 h:1 h:2 h:3; do
        run "lose-$spec" "${SMALL[@]}" --lose "$spec"
        sum=$(field checksum "$tmp/lose-$spec.out")
        if [ -z "$sum" ] || [ "$sum" = "$base" ]; then
            echo "# --lose $spec left the checksum at '$sum'"
            changed=0
        fi
    done
    if run lose-past "${SMALL[@]}" --lose h:4; then changed=0; fi
    if [ "$changed" -eq 1 ]; then ok "every lost 2 MiB chunk changes the checksum"; else not_ok "every lost 2 MiB chunk changes the checksum"; fi
else
    not_ok "every lost 2 MiB chunk changes the checksum"
fi

# 5. A device smaller than the tensor peak: non-zero exit, the failing call and out of memory named.
if [ -s "$tmp/big-exact.out" ]; then
    need=$(field tensor_peak_bytes "$tmp/big-exact.out")
    for mode in segments async exact; do
        SIMGPU_QUIET=1 SIMGPU_MEMORY=$((need - (1 << 20))) run "oom-$mode" "${BIG[@]}" --mode "$mode"
        rc=$?
        msg=$(head -n 1 "$tmp/oom-$mode.err")
        echo "# SIMGPU_MEMORY=$((need - (1 << 20))) --mode $mode: exit $rc: $msg"
        if [ "$rc" -eq 1 ] && grep -qE '^train_sim: cuda(Malloc|MallocAsync)\(.*failed: out of memory \(cudaErrorMemoryAllocation\)' "$tmp/oom-$mode.err" &&
            grep -q 'while allocating' "$tmp/oom-$mode.err" && ! grep -q '^checksum=' "$tmp/oom-$mode.out"; then
            ok "out of memory fails cleanly, mode $mode"
        else
            not_ok "out of memory fails cleanly, mode $mode"
            cat "$tmp/oom-$mode.err"
        fi
    done
    # Exactly the exact mode's native peak is enough.
    exact_peak=$(field native_peak_bytes "$tmp/big-exact.out")
    if SIMGPU_MEMORY=$exact_peak run fits "${BIG[@]}" --mode exact &&
        [ "$(field checksum "$tmp/fits.out")" = "$(field checksum "$tmp/big-exact.out")" ]; then
        ok "SIMGPU_MEMORY equal to the native peak is enough (exact mode)"
    else
        not_ok "SIMGPU_MEMORY equal to the native peak is enough (exact mode)"
        cat "$tmp/fits.err"
    fi
else
    not_ok "out of memory fails cleanly (no 2 GiB run to size it)"
fi

# 6. Usage errors exit with status 2; --help prints the usage and succeeds.
bad=0
"$bin" --help | grep -q '^usage: train_sim' || bad=1
for args in "--mode nope" "--layers 0" "--stride 1000" "--lose x:1" "--hidden"; do
    # shellcheck disable=SC2086
    "$bin" $args >/dev/null 2>&1
    [ $? -eq 2 ] || bad=1
done
if [ "$bad" -eq 0 ]; then ok "usage errors exit with status 2, --help with 0"; else not_ok "usage errors exit with status 2, --help with 0"; fi

exit "$failed"
