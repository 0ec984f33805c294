/* simgpu_rt_ordered.c — the legacy default stream exports of the stream-ordered API functions
 * (cudaMemcpy, cudaLaunchKernel, ...), generated from SIMGPU_RT_ORDERED (simgpu_rt.h); their
 * per-thread twins come from the same table in simgpu_rt_ptsz.c. */
#include "simgpu_rt.h"

#define SIMGPU_RT_DEFINE_LEGACY(name, params, body)                                                \
    SIMGPU_RT_DEFINE(SIMGPU_RT_LEGACY, name, params, body)
SIMGPU_RT_ORDERED(SIMGPU_RT_DEFINE_LEGACY)
