#!/usr/bin/env bash
# tests/shim/test_budget_floor.sh — a budget that cannot be kept is said when the device's manager
# starts, in every form it can be written in (SHIM_BUDGET, SHIM_BUDGETS, budget and budgets in the
# file, shim-run --budget): a budget under one granule (2 MiB on the simulated device) is raised
# to one granule with a warning naming the option and where it was set, and the program's
# allocations succeed (before, every managed allocation failed with out of memory); a share of
# the device that comes to less than the 1 MiB minimum gets the words SHIM_BUDGET=1 gets ("error:
# SOURCE: ... is out of range (1MiB to 1PiB)") and libshim keeps no budget there. With
# min_managed_bytes above the program's allocations, the out-of-memory message names the
# allocation unmanaged, with the option.
set -u
source "$(dirname "$0")/shim_env.sh"
scratch
source "$root/tests/check.sh"
prog="$B/tests/shim/shim_prog"
plain=$("$prog" kinds)
# kinds VAR=VALUE...: shim_prog kinds (1 MiB plain and stream-ordered allocations) under libshim.
kinds() {
    timeout -k 2 60 env SHIM_TRACE_PATH= SHIM_LOG_LEVEL=info "$@" LD_PRELOAD="$PRELOAD" \
        "$prog" kinds >"$tmp/out" 2>"$tmp/err"
}
# native: the last run's status was 0 and its output the native one.
native() { [ "$(cat "$tmp/out")" = "$plain" ]; }
# natively VAR=VALUE...: kinds under the variables exits 0 with the native output; what it
# printed is passed on (a failed check shows it).
natively() {
    kinds "$@"
    local rc=$?
    cat "$tmp/out" "$tmp/err"
    [ $rc -eq 0 ] && native
}
# said_once LINE ALSO VAR=VALUE...: the run completes as natively, its log holds LINE exactly
# once, and a line with ALSO.
said_once() {
    local line=$1 also=$2
    shift 2
    natively "$@" && [ "$(grep -cF "$line" "$tmp/err")" -eq 1 ] && grep -q "$also" "$tmp/err"
}
# raised SOURCE OPTION VALUE VAR=VALUE...: the run completes as natively, and one warning says
# the budget (OPTION = "VALUE", set at SOURCE) was raised to one granule.
raised() {
    said_once "warning: $1: $2 = \"$3\" (1048576 bytes on device 0) is less than one granule of the device's memory (2097152 bytes, the least libshim can map): raised to 2097152 bytes" \
        'info: budget 2 MiB of' "${@:4}"
}
# below_min SOURCE OPTION VALUE VAR=VALUE...: the run completes as natively; one error in the
# words of SHIM_BUDGET=1's ("error: SOURCE: ... is out of range (1MiB to 1PiB)"), and residency
# did not start.
below_min() {
    said_once "error: $1: $2 = \"$3\" is out of range (1MiB to 1PiB): on device 0" \
        'nothing moved (residency did not start)' "${@:4}"
}
# same_words_as_one: SHIM_BUDGET=1's message as libshim logs it names its severity once
# ("error: SHIM_BUDGET: 1 is ..."), and so do residency's own words for a share below the minimum
# (below_min) and under a granule (raised): "error: SOURCE: budget = ...".
same_words_as_one() {
    kinds SHIM_BUDGET=1
    cat "$tmp/err"
    grep -qF 'error: SHIM_BUDGET: 1 is out of range (1MiB to 1PiB)' "$tmp/err"
}
# shim_run_budget VALUE PATTERN: shim-run --budget VALUE runs kinds as natively; stderr has PATTERN.
shim_run_budget() {
    mkdir -p "$tmp/runs"
    timeout -k 2 60 env SHIM_LOG_LEVEL=info LD_PRELOAD="$SAN_RT" "$B/shim-run" --quiet \
        --budget "$1" --trace "$tmp/runs" -- "$prog" kinds >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    cat "$tmp/out" "$tmp/err"
    [ $rc -eq 0 ] && native && grep -qF -- "$2" "$tmp/err"
}
# shim_run_one: shim-run --budget 1 refuses (status 2) in SHIM_BUDGET=1's words; nothing runs.
shim_run_one() {
    LD_PRELOAD="$SAN_RT" "$B/shim-run" --budget 1 -- touch "$tmp/ran" 2>"$tmp/err"
    local rc=$?
    cat "$tmp/err"
    [ $rc -eq 2 ] && [ ! -e "$tmp/ran" ] &&
        grep -qF '(SHIM_BUDGET): 1 is out of range (1MiB to 1PiB)' "$tmp/err"
}
# unmanaged_named: min_managed_bytes = 1GiB and a 16 MiB budget: train_sim's first allocation
# larger than the budget is refused, and the message calls it unmanaged, with the option.
unmanaged_named() {
    timeout -k 2 60 env SHIM_TRACE_PATH= SHIM_MIN_MANAGED_BYTES=1GiB SHIM_BUDGET=16MiB \
        LD_PRELOAD="$PRELOAD" "$B/train_sim" --layers 2 --hidden 512 --batch 1 --seq 128 \
        --vocab 1024 --iters 2 >"$tmp/out" 2>"$tmp/err"
    cat "$tmp/err"
    grep -q 'out of memory: an unmanaged allocation of [0-9]* bytes (smaller than min_managed_bytes = 1GiB: left to the driver, never moved) does not fit in the budget of 16777216 bytes: unmanaged allocations hold [0-9]* bytes' "$tmp/err" &&
        ! grep -q 'leaves for managed memory' "$tmp/err"
}

printf 'budget = "1MiB"\n' >"$tmp/budget.toml"
printf '\nbudget = "0.0001%%"\n' >"$tmp/share.toml"
printf 'budgets = "1MiB"\n' >"$tmp/budgets.toml"
printf '# one per device\nbudgets = "0.0001%%,4GiB"\n' >"$tmp/budgets-share.toml"

plan 13
check "SHIM_BUDGET=1MiB: raised to one granule, said once; the program runs as natively" \
    raised SHIM_BUDGET budget 1MiB SHIM_BUDGET=1MiB
check "SHIM_BUDGET=0.0001%: below the minimum on this device, said as SHIM_BUDGET=1 is" \
    below_min SHIM_BUDGET budget 0.0001% SHIM_BUDGET=0.0001%
check "SHIM_BUDGET=1: said with its severity once" same_words_as_one
check "SHIM_BUDGETS=1MiB: device 0's budget raised, said with its entry" \
    raised SHIM_BUDGETS "budgets entry 1" 1MiB SHIM_BUDGETS=1MiB
check "SHIM_BUDGETS=0.0001%: below the minimum, said as SHIM_BUDGET=1 is" \
    below_min SHIM_BUDGETS "budgets entry 1" 0.0001% SHIM_BUDGETS=0.0001%
check "budget = \"1MiB\" in the file: raised, said with FILE:LINE" \
    raised "$tmp/budget.toml:1" budget 1MiB SHIM_CONFIG="$tmp/budget.toml"
check "budget = \"0.0001%\" in the file: below the minimum, said with FILE:LINE" \
    below_min "$tmp/share.toml:2" budget 0.0001% SHIM_CONFIG="$tmp/share.toml"
check "budgets = \"1MiB\" in the file: raised" \
    raised "$tmp/budgets.toml:1" "budgets entry 1" 1MiB SHIM_CONFIG="$tmp/budgets.toml"
check "budgets = \"0.0001%,4GiB\" in the file: device 0's entry below the minimum" \
    below_min "$tmp/budgets-share.toml:2" "budgets entry 1" 0.0001% \
    SHIM_CONFIG="$tmp/budgets-share.toml"
check "shim-run --budget 1MiB: raised to one granule; the command runs as natively" \
    shim_run_budget 1MiB 'warning: SHIM_BUDGET: budget = "1MiB" (1048576 bytes on device 0) is less than one granule'
check "shim-run --budget 0.0001%: said as SHIM_BUDGET=1 is; the command runs as natively" \
    shim_run_budget 0.0001% 'error: SHIM_BUDGET: budget = "0.0001%" is out of range (1MiB to 1PiB)'
check "shim-run --budget 1: refused before the run, in the same words" shim_run_one
check "min_managed_bytes above every allocation: the message says unmanaged, with the option" \
    unmanaged_named
exit $((fails > 0))
