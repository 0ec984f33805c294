#!/usr/bin/env bash
# The both-busy link setting (SIMGPU_LINK_BOTH_GBPS) against the other link settings: with rates
# equal to the full ones it changes no virtual time (test_sim_time passes as on a duplex link);
# a malformed value, or one above a direction's full rate, is reported and ignored; with
# SIMGPU_LINK_SHARED=1 the shared link keeps its meaning.
set -u
source "$(dirname "$0")/../check.sh" # plan; check is this file's
BAD=("30,10" "20" "20,10,5" "0,10" "x,10" "20,-1")
plan $((1 + 2 * ${#BAD[@]} + 2))
BUILD=${BUILD:-build}
T="$BUILD/tests/simgpu/test_sim_time"
fails=0
check() { # name, command...
    local name=$1
    shift
    if "$@"; then echo "ok - $name"; else echo "not ok - $name"; fails=$((fails + 1)); fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# test_sim_time sets 20 GB/s up and 10 GB/s down
# (each run's cmocka lines kept out of this script's output: the runner counts ok/not ok here)
env -u SIMGPU_LINK_SHARED SIMGPU_LINK_BOTH_GBPS=20,10 "$T" >"$tmp/out" 2>&1
rc=$?
check "both-busy rates equal to the full ones: duplex times (test_sim_time exit $rc)" test "$rc" -eq 0
for bad in "${BAD[@]}"; do
    env -u SIMGPU_LINK_SHARED SIMGPU_LINK_BOTH_GBPS="$bad" "$T" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    check "SIMGPU_LINK_BOTH_GBPS=$bad: the duplex tests pass" test "$rc" -eq 0
    check "SIMGPU_LINK_BOTH_GBPS=$bad: reported" grep -q "ignoring SIMGPU_LINK_BOTH_GBPS=$bad" "$tmp/err"
done
SIMGPU_LINK_SHARED=1 SIMGPU_LINK_BOTH_GBPS=11,10 "$T" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "with SIMGPU_LINK_SHARED=1 the shared-link times hold" test "$rc" -eq 0
check "with SIMGPU_LINK_SHARED=1 the both-busy rates are reported ignored" \
    grep -q "SIMGPU_LINK_SHARED=1 already serves" "$tmp/err"
exit $((fails > 0))
