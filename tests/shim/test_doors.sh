#!/usr/bin/env bash
# Every door to the driver leads to the shim's hooks, the real answers are kept,
# dlsym(RTLD_NEXT) keeps the caller's identity, and libshim exports only what it must.
set -u
source "$(dirname "$0")/shim_env.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

SHIM_TRACE_PATH="$work/doors-%p.trace" LD_PRELOAD="$PRELOAD" "$B/tests/shim/doors_prog" >"$work/out" 2>&1
rc=$?
cat "$work/out"
check "doors_prog exits 0 under the shim" [ $rc -eq 0 ]
check "a trace was written, mode 0600" bash -c "stat -c %a '$work'/doors-*.trace | grep -qx 600"

"$B/tests/shim/next_prog" >/dev/null
check "next_prog passes without the shim" [ $? -eq 0 ]
LD_PRELOAD="$PRELOAD" "$B/tests/shim/next_prog"
check "next_prog passes under the shim" [ $? -eq 0 ]

needed=$(readelf -d "$SHIM_LIB" | grep NEEDED)
check "libshim has no DT_NEEDED on libcuda or libcudart" \
    bash -c "! grep -qE 'libcuda|libcudart' <<<'$needed'"
exports=$(nm -D --defined-only "$SHIM_LIB" | awk '{print $3}' | grep -v '^$')
others=$(grep -vE '^(cu[A-Za-z0-9_]+|dlsym)$' <<<"$exports")
check "libshim exports only cu* hooks and dlsym (others: ${others:-none})" [ -z "$others" ]
check "libshim exports cuLaunchKernel_ptsz and cuGetProcAddress_v2" \
    bash -c "grep -qx cuLaunchKernel_ptsz <<<'$exports' && grep -qx cuGetProcAddress_v2 <<<'$exports'"
[ "$failures" -eq 0 ]
