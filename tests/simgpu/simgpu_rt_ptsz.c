/* simgpu_rt_ptsz.c — the per-thread default stream exports (cudaLaunchKernel_ptsz,
 * cudaMemcpy_ptds, ...), generated from SIMGPU_RT_ORDERED (simgpu_rt.h). This file defines
 * CUDA_API_PER_THREAD_DEFAULT_STREAM, so the runtime header maps every name of the table to its
 * _ptsz / _ptds variant with its exact prototype; each runs its body with the driver table
 * resolved with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM. */
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#include "simgpu_rt.h"

#define SIMGPU_RT_DEFINE_PER_THREAD(name, params, body)                                            \
    SIMGPU_RT_DEFINE(SIMGPU_RT_PER_THREAD, name, params, body)
SIMGPU_RT_ORDERED(SIMGPU_RT_DEFINE_PER_THREAD)
