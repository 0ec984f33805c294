/* simgpu_exports.h — prototypes of exported entry points that <cuda.h> does not declare in
 * legacy-stream mode: the per-thread default stream variants (defined in simgpu_ordered.c,
 * generated from SIMGPU_ORDERED). */
#ifndef SIMGPU_EXPORTS_H
#define SIMGPU_EXPORTS_H

#include "simgpu_entries.h"

#include <cuda.h>

#define SIM_ORDERED_DECLARE(legacy, per_thread, params, body) CUresult CUDAAPI per_thread params;
SIMGPU_ORDERED(SIM_ORDERED_DECLARE)
#undef SIM_ORDERED_DECLARE

#endif
