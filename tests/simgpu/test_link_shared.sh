#!/usr/bin/env bash
# The simulated device's shared link (SIMGPU_LINK_SHARED=1): the virtual-time tests again, with
# copies to and from the device queued on one engine (test_sim_time expects them in sequence).
set -u
BUILD=${BUILD:-build}
SIMGPU_LINK_SHARED=1 exec "$BUILD/tests/simgpu/test_sim_time"
