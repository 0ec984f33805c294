#!/usr/bin/env bash
# test_messages.sh — what the command lines say to a person who got something wrong: a budget
# written as a bare number suggests the unit meant (shim-run --budget, SHIM_BUDGET and each
# SHIM_BUDGETS entry as libshim reads them); no message is cut (shim-run --budget abc, a long
# bad SHIM_BUDGETS entry); shim-run --trace DIR/ makes the folder; the command lines of shim-run,
# shim-plan and shim-report take getopt_long's "--opt=V" and options after the operands.
set -u
source "$(dirname "$0")/shim_env.sh"
scratch
source "$root/tests/check.sh"
RUN="$B/shim-run" REPORT="$B/shim-report" PLAN="$B/shim-plan"
# The whole sentence of a size error, as conf/ writes it (cut before: "..., a percentage,").
UNITS='(B; K, Ki, KiB, M, Mi, MiB, G, Gi, GiB, T, Ti, TiB, P, Pi, PiB: powers of 1024; KB, MB, GB, TB, PB: powers of 1000), a percentage, or auto'

plan 13
long=$(printf 'x%.0s' $(seq 60))

# says EXIT TEXT COMMAND...: the command exits EXIT and its stderr holds TEXT.
says() {
    local want=$1 text=$2
    shift 2
    LD_PRELOAD="$SAN_RT" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    cat "$tmp/err"
    [ "$rc" -eq "$want" ] && grep -qF -- "$text" "$tmp/err"
}
check "shim-run --budget 75: out of range, did you mean 75% or 75GiB" \
    says 2 "shim-run: --budget '75' (SHIM_BUDGET): 75 is out of range (1MiB to 1PiB); a number without a unit is bytes: did you mean 75% or 75GiB?" \
    "$RUN" --budget 75 -- true
check "shim-run --budget 512: did you mean 512MiB or 512GiB" \
    says 2 "did you mean 512MiB or 512GiB?" "$RUN" --budget 512 -- true
check "shim-run --budget abc: the whole message, to its last word" \
    says 2 "shim-run: --budget 'abc' (SHIM_BUDGET): invalid size \"abc\": expected a number of bytes, alone or with a unit $UNITS" \
    "$RUN" --budget abc -- true
# config TEXT VAR=VALUE: shim-report config (conf/, as libshim reads its variables) says TEXT.
config_says() {
    local text=$1
    shift
    env "$@" "$REPORT" config >"$tmp/out" 2>"$tmp/err"
    cat "$tmp/err"
    grep -qF -- "$text" "$tmp/err"
}
check "SHIM_BUDGET=75 as libshim reads it: the same question" \
    config_says "SHIM_BUDGET: error: 75 is out of range (1MiB to 1PiB); a number without a unit is bytes: did you mean 75% or 75GiB?" \
    SHIM_BUDGET=75
check "SHIM_BUDGETS=1GiB,60: the question for entry 2" \
    config_says 'entry 2 ("60"): 60 is out of range (1MiB to 1PiB); a number without a unit is bytes: did you mean 60% or 60GiB?' \
    SHIM_BUDGETS=1GiB,60
check "SHIM_BUDGETS with a long bad entry: its reason whole (it was cut at 256 bytes)" \
    config_says "expected a number of bytes, alone or with a unit $UNITS; ignored" \
    "SHIM_BUDGETS=1GiB,$long"
check "shim-plan --budget with a long bad size: its reason whole (it was cut at 256 bytes)" \
    says 2 "expected a number of bytes, alone or with a unit $UNITS" sh -c \
    "'$PLAN' --generate transformer:layers=2 -o '$tmp/s.model' && '$PLAN' '$tmp/s.model' --budget '$long'"
check "a budget with its unit: no question" \
    sh -c "! SHIM_BUDGET=10KiB '$REPORT' config 2>&1 | grep -q 'did you mean'"

# shim-run --trace DIR/: the folder is made, parents too, and the traces' pattern is in it.
trace_folder_made() {
    LD_PRELOAD="$SAN_RT" "$RUN" --trace "$tmp/traces/a/b/" -- true 2>"$tmp/err"
    local rc=$?
    cat "$tmp/err"
    [ "$rc" -eq 0 ] && [ -d "$tmp/traces/a/b" ] &&
        grep -qE "traces $tmp/traces/a/b/shim-[0-9]{8}-[0-9]{6}-[0-9]+-r%r-p%p.trace$" "$tmp/err"
}
check "shim-run --trace DIR/ makes the folder (mkdir -p)" trace_folder_made
check "shim-run --trace FILE/ where FILE is a file: exit 2, says so" \
    says 2 "cannot make the folder $tmp/afile: not a folder" sh -c \
    "touch '$tmp/afile' && LD_PRELOAD='$SAN_RT' '$RUN' --trace '$tmp/afile/' -- true"

# getopt_long: --opt=V, and options after the operands.
"$PLAN" --generate transformer:layers=2 -o "$tmp/step.model" 2>/dev/null
check "shim-plan MODEL --budget=75%: planned" \
    sh -c "'$PLAN' '$tmp/step.model' --budget=75% --json | grep -q '\"feasible\"'"
"$B/trace_gen" plan "$tmp/plan.trace"
check "shim-report plan TRACE --budget=75%: planned" \
    sh -c "'$REPORT' plan '$tmp/plan.trace' --budget=75% --json | grep -q '\"feasible\"'"
check "shim-report summary TRACE --json (the option after the trace)" \
    sh -c "'$REPORT' summary '$tmp/plan.trace' --json | python3 -c 'import json,sys; json.load(sys.stdin)'"
[ "$fails" -eq 0 ]
