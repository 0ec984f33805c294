#!/usr/bin/env bash
# The simulated device without the driver-wide VMM lock (SIMGPU_VMM_SERIAL=0): the VMM cost tests
# again, where another thread's VMM calls delay only that thread and the work that touches what
# it mapped; then with a bad value, which is ignored (the default, 1, kept).
set -u
BUILD=${BUILD:-build}
SIMGPU_VMM_SERIAL=0 "$BUILD/tests/simgpu/test_sim_vmm_cost" || exit
SIMGPU_QUIET=1 SIMGPU_VMM_SERIAL=yes "$BUILD/tests/simgpu/test_sim_vmm_cost"
