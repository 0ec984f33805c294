#!/usr/bin/env bash
# A model whose tensors are all under 2 MiB (hidden 256: weights of 256 KiB, activations of
# up to 1 MiB), one cudaMallocAsync per tensor, under budgets of 40%, 60% and 90% of its peak
# with libshim's default settings: small managed allocations share chunks (slabs), so they
# move, and the job completes with the native checksum within the budget. Before slabs each
# of these runs failed with out of memory after 0 evictions. Then the out-of-memory message
# for a budget smaller than one allocation names that reason.
set -u
source "$(dirname "$0")/resid_env.sh"
ARGS=(--layers 2 --hidden 256 --batch 2 --seq 128 --vocab 1024 --iters 3 --mode async)

native native "${ARGS[@]}"
want=$(checksum native)
peak=$(figure native peak_device_bytes)
pcts=(40 60 90)
plan $((1 + ${#pcts[@]} + 2 + SAN_CHECKS))
check "native run: checksum '$want', peak '$peak' bytes" all [ -n "$want" ] '&&' [ -n "$peak" ]
for pct in "${pcts[@]}"; do
    b=$((peak * pct / 100))
    SHIM_BUDGET=$b shimmed "p$pct" "${ARGS[@]}"
    ev=$(evictions "p$pct")
    ok=false
    [ "$(rc "p$pct")" = 0 ] && [ "$(checksum "p$pct")" = "$want" ] && [ "${ev:-0}" -gt 0 ] &&
        is "p$pct" peak_device_bytes -le "$b" && is "p$pct" unmap_hazards -eq 0 &&
        is "p$pct" illegal_accesses -eq 0 && ok=true
    check "budget $pct% ($b bytes): exit 0, checksum $want, $ev evictions, peak $(figure "p$pct" peak_device_bytes) <= budget, no hazard" $ok
    $ok || tail_err "p$pct"
done

# A budget of 1 MiB against the model's 1 MiB activations plus what the runtime holds.
SHIM_BUDGET=1MiB shimmed tiny "${ARGS[@]}"
check "budget 1 MiB: the program is told out of memory" [ "$(rc tiny)" = 1 ]
check "budget 1 MiB: the log says the allocation is larger than the budget" \
    grep -q "out of memory: an allocation of [0-9]* bytes is larger than the budget" "$work/tiny.err"
check_sanitizers
[ "$failures" -eq 0 ]
