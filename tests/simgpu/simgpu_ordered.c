/* simgpu_ordered.c — the stream-ordered entry points in both forms: the legacy default stream's
 * (cuMemcpyAsync) and the per-thread default stream's (cuMemcpyAsync_ptsz), generated from one
 * table (SIMGPU_ORDERED, simgpu_entries.h). A NULL stream means the legacy stream in the first
 * form and the calling thread's default stream in the second; both run the same body. */
#include "simgpu_exports.h"
#include "simgpu_internal.h"

#define SIM_ORDERED_DEFINE(legacy, per_thread, params, body)                                       \
    SIM_TWIN_ENTRIES(pt, legacy, params, per_thread, params, body)
SIMGPU_ORDERED(SIM_ORDERED_DEFINE)
