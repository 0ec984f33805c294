#!/usr/bin/env bash
# tests/shim/test_special_files.sh — no path libshim or its tools read or write is waited on: a FIFO
# named as the configuration (SHIM_CONFIG, shim-report config --file, shim-run --config), the log,
# the trace, shim-report's and shim-plan's inputs and outputs, shim-run's --report and --trace is
# refused at once with a message naming the path and what it is; a preloaded program runs on with
# its own result. Every command runs under `timeout`, so a regression fails (status 124) rather
# than hangs; a folder named as the configuration is refused the same way.
set -u
source "$(dirname "$0")/shim_env.sh"
scratch
source "$root/tests/check.sh"
REPORT="$B/shim-report" PLAN="$B/shim-plan" RUN="$B/shim-run" prog="$B/tests/shim/shim_prog"
fifo="$tmp/fifo"
mkfifo "$fifo"
plain=$("$prog" kinds)
# A trace and a model to read, made before the checks.
env SHIM_TRACE_PATH="$tmp/t.trace" SHIM_LOG_LEVEL=off LD_PRELOAD="$PRELOAD" "$B/train_sim" \
    --layers 2 --hidden 256 --batch 1 --seq 64 --vocab 512 --iters 4 >/dev/null
"$REPORT" model -o "$tmp/t.model" "$tmp/t.trace" 2>/dev/null
# Stops within 10 s: a command that waits on the FIFO is killed (status 124).
bounded() { timeout -k 2 10 "$@" >"$tmp/out" 2>&1; }

# refused COMMAND...: the command returns at once with a failure status and a message naming
# the FIFO and what it is.
refused() {
    bounded "$@"
    local rc=$?
    cat "$tmp/out"
    [ $rc -ne 124 ] && [ $rc -ne 137 ] && [ $rc -ne 0 ] && grep -qF "$fifo" "$tmp/out" &&
        grep -qi 'fifo' "$tmp/out"
}
# stepped_aside VAR=VALUE...: shim_prog kinds under libshim with the variables set returns at
# once with its native output and status, and the log names the FIFO and what it is.
stepped_aside() {
    bounded env SHIM_TRACE_PATH= "$@" LD_PRELOAD="$PRELOAD" "$prog" kinds
    local rc=$?
    cat "$tmp/out"
    [ $rc -eq 0 ] && [ "$(grep -v '^libshim' "$tmp/out")" = "$plain" ] &&
        grep -qF "$fifo" "$tmp/out" && grep -qiE 'fifo|not a regular file' "$tmp/out"
}
# folder_config: SHIM_CONFIG naming a folder is refused as such; the program runs unchanged.
folder_config() {
    bounded env SHIM_TRACE_PATH= SHIM_CONFIG="$tmp" LD_PRELOAD="$PRELOAD" "$prog" kinds
    local rc=$?
    cat "$tmp/out"
    [ $rc -eq 0 ] && grep -q "error: $tmp: .*a directory, not a regular file" "$tmp/out"
}
# fifo_trace: SHIM_TRACE_PATH naming a FIFO: no trace, said with the path; the program unchanged.
fifo_trace() {
    bounded env SHIM_TRACE_PATH="$fifo" LD_PRELOAD="$PRELOAD" "$prog" kinds
    local rc=$?
    cat "$tmp/out"
    [ $rc -eq 0 ] && grep -qF "trace: '$fifo' exists and is not a regular file" "$tmp/out"
}
# told_dir COMMAND...: as refused, for a folder named where a file is expected.
told_dir() {
    bounded "$@"
    local rc=$?
    cat "$tmp/out"
    [ $rc -ne 124 ] && [ $rc -ne 0 ] && grep -qF "$tmp" "$tmp/out" && grep -qi 'directory' "$tmp/out"
}

plan 26
check "SHIM_CONFIG=FIFO: the program runs at once, unchanged; the log names the FIFO" \
    stepped_aside SHIM_CONFIG="$fifo"
check "SHIM_CONFIG=FOLDER: refused as a directory, the program unchanged" folder_config
check "SHIM_LOG_FILE=FIFO: the program unchanged, the log names the FIFO" \
    stepped_aside SHIM_LOG_LEVEL=info SHIM_LOG_FILE="$fifo"
check "SHIM_TRACE_PATH=FIFO: the program unchanged, no trace, the log names it" fifo_trace
check "shim-report config --file FIFO" refused "$REPORT" config --file "$fifo"
check "shim-report config --file FOLDER" told_dir "$REPORT" config --file "$tmp"
check "SHIM_CONFIG=FIFO shim-report config" refused env SHIM_CONFIG="$fifo" "$REPORT" config
for cmd in summary kernels allocs moves html perfetto memviz model; do
    check "shim-report $cmd FIFO (a trace to read)" refused "$REPORT" $cmd "$fifo"
done
check "shim-report html -o FIFO" refused "$REPORT" html -o "$fifo" "$tmp/t.trace"
check "shim-report perfetto -o FIFO" refused "$REPORT" perfetto -o "$fifo" "$tmp/t.trace"
check "shim-report memviz -o FIFO" refused "$REPORT" memviz -o "$fifo" "$tmp/t.trace"
check "shim-report model -o FIFO" refused "$REPORT" model -o "$fifo" "$tmp/t.trace"
check "shim-plan FIFO (a model to read)" refused "$PLAN" "$fifo" --budget 1GiB
check "shim-plan --generate -o FIFO" refused "$PLAN" --generate transformer -o "$fifo"
check "shim-plan --import kineto FIFO" refused "$PLAN" --import kineto "$fifo"
check "shim-plan --import et ... --join-map FIFO" \
    refused "$PLAN" --import et "$tmp/t.model" --kineto "$tmp/t.model" --join-map "$fifo"
check "shim-run --config FIFO: refused before the command runs" \
    refused env LD_PRELOAD="$SAN_RT" "$RUN" --config "$fifo" -- touch "$tmp/ran1"
check "shim-run --report FIFO: refused before the command runs" \
    refused env LD_PRELOAD="$SAN_RT" "$RUN" --report "$fifo" -- touch "$tmp/ran2"
check "shim-run --trace FIFO: refused before the command runs" \
    refused env LD_PRELOAD="$SAN_RT" "$RUN" --trace "$fifo" -- touch "$tmp/ran3"
exit $((fails > 0))
