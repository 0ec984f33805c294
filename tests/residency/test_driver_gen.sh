#!/usr/bin/env bash
# libshim's host-VMM detection on three driver generations of the simulator
# (SIMGPU_DRIVER_VERSION): 13.0 answers attributes 141/145; 12.4 does not know them, so libshim
# probes with a real cuMemCreate (HOST_NUMA on the node of attribute 134) and still evicts;
# a driver without host VMM (below 12.2, or SIMGPU_HOST_VMM=0) falls back, and says why. Each
# run is train_sim under a budget with the native checksum. Then the probe under injected
# failures (SIMGPU_FAIL, restricted to libshim's calls): nothing leaks, nothing crashes.
set -u
source "$(dirname "$0")/resid_env.sh"
ARGS=(--layers 2 --hidden 512 --batch 4 --seq 512 --iters 3 --mode exact)
# v13 4, v124 5, two drivers without host VMM 5 each, none-attr 3, probe-only 3, three failing
# probes 3 each and 4 log lines, every cuMemCreate failing 3.
plan $((4 + 5 + 2 * 5 + 3 + 3 + 3 * 3 + 4 + 3 + SAN_CHECKS))

native native "${ARGS[@]}"
C=$(checksum native) P=$(figure native peak_device_bytes)
if [ "$(rc native)" != 0 ] || [ -z "$C" ] || [ -z "$P" ]; then
    check "native run: exit 0, checksum '$C', peak '$P'" false
    exit 1
fi
half=$((P / 2))

# same NAME WHAT: the run finished with the native checksum and no illegal access.
same() {
    check "$2: exit 0 (got $(rc "$1")), checksum $C (got '$(checksum "$1")')" \
        all [ "$(rc "$1")" = 0 ] '&&' [ "$(checksum "$1")" = "$C" ]
    check "$2: illegal_accesses $(figure "$1" illegal_accesses) = 0" is "$1" illegal_accesses -eq 0
}
# says NAME WHAT PATTERN: the run's log has a line matching PATTERN.
says() { check "$2: the log says '$3'" grep -q -- "$3" "$work/$1.err"; }
evicted() {
    local e
    e=$(evictions "$1")
    check "$2: evictions '$e' > 0" [ "${e:-0}" -gt 0 ]
}

SIMGPU_DRIVER_VERSION=13000 SHIM_BUDGET=$half shimmed v13 "${ARGS[@]}"
same v13 "13.0, SHIM_BUDGET=$half"
says v13 "13.0" "host VMM: evicted memory goes to HOST node 0 (device attributes)"
evicted v13 "13.0"

SIMGPU_DRIVER_VERSION=12040 SHIM_BUDGET=$half shimmed v124 "${ARGS[@]}"
same v124 "12.4, SHIM_BUDGET=$half"
says v124 "12.4" "host VMM: evicted memory goes to HOST_NUMA node 0 (probed with cuMemCreate"
evicted v124 "12.4"
check "12.4: the probe and the 13.0 run evict alike ($(evictions v124) and $(evictions v13))" \
    [ "$(evictions v124)" = "$(evictions v13)" ]

# Without host VMM: an 11.8 driver knows no host location; a 12.4 one refuses it
# (SIMGPU_HOST_VMM=0). With unmapped_eviction the run still fits the budget.
for v in 11080 12040; do
    SIMGPU_HOST_VMM=$([ $v = 12040 ] && echo 0 || echo 1) SIMGPU_DRIVER_VERSION=$v \
        SHIM_UNMAPPED_EVICTION=true SHIM_BUDGET=$half shimmed "none-$v" "${ARGS[@]}"
    same "none-$v" "$v without host VMM, unmapped eviction, SHIM_BUDGET=$half"
    says "none-$v" "$v" "no host VMM: the driver has no host VMM attributes, and a probe with cuMemCreate failed"
    evicted "none-$v" "$v unmapped"
    check "$v: no host-located memory left (host_mapped_bytes $(figure "none-$v" host_mapped_bytes))" \
        is "none-$v" host_mapped_bytes -eq 0
done
SIMGPU_HOST_VMM=0 SIMGPU_DRIVER_VERSION=13000 SHIM_BUDGET=$P shimmed none-attr "${ARGS[@]}"
same none-attr "13.0 with SIMGPU_HOST_VMM=0, SHIM_BUDGET=$P"
says none-attr "13.0 without host VMM" "no host VMM: device attributes 141 and 145 say so"

# The probe's allocation is released: with a budget that never evicts, nothing host-located is
# left at exit.
SIMGPU_DRIVER_VERSION=12040 SHIM_BUDGET=$P shimmed probe-only "${ARGS[@]}"
same probe-only "12.4, SHIM_BUDGET=$P"
check "12.4: the probe left no host-located memory (host_mapped_bytes $(figure probe-only host_mapped_bytes))" \
    is probe-only host_mapped_bytes -eq 0

# Injected failures of libshim's own calls during the probe.
fail_run() {
    local name=$1 rule=$2
    SIMGPU_FAIL_CALLER=libshim SIMGPU_FAIL=$rule SIMGPU_DRIVER_VERSION=12040 \
        SHIM_UNMAPPED_EVICTION=true SHIM_BUDGET=$half shimmed "$name" "${ARGS[@]}"
    same "$name" "12.4, SIMGPU_FAIL=$rule"
    check "$name: the failure was injected ($(figure "$name" injected_failures))" \
        is "$name" injected_failures -ge 1
}
# The HOST_NUMA probe fails; HOST is unknown to 12.4: no host VMM, unmapped fallback.
fail_run numa-fails cuMemCreate:1
says numa-fails "HOST_NUMA probe failed" "a probe with cuMemCreate failed"
# Attribute 134 fails (libshim asks 102, then 145, which 12.4 does not know, then 134): node 0
# is assumed, the probe works.
fail_run node-fails cuDeviceGetAttribute:3
says node-fails "attribute 134 failed" "goes to HOST_NUMA node 0 (probed"
# The probe's release fails: the probe still counts, with a warning.
fail_run release-fails cuMemRelease:1
says release-fails "the probe's release failed" "releasing the probe allocation failed"
says release-fails "the probe's release failed" "goes to HOST_NUMA node 0 (probed"
# Every cuMemCreate fails from the first on: no host VMM, and no device chunk either; the run
# must end without a crash or hang (it may fail for lack of memory, with a clear error).
SIMGPU_FAIL_CALLER=libshim SIMGPU_FAIL=cuMemCreate:1:sticky SIMGPU_DRIVER_VERSION=12040 \
    SHIM_BUDGET=$half shimmed all-fail "${ARGS[@]}"
r=$(rc all-fail)
check "every cuMemCreate of libshim fails: no crash or hang (exit $r)" [ "$r" -lt 124 ]
if [ "$r" = 0 ]; then
    check "every cuMemCreate fails: a finished run has the checksum" [ "$(checksum all-fail)" = "$C" ]
else
    echo "skip - every cuMemCreate fails: the run stopped (exit $r), no checksum to compare"
fi
says all-fail "every cuMemCreate fails" "a probe with cuMemCreate failed"
check_sanitizers
[ "$failures" -eq 0 ]
