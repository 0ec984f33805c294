/* shim_trace_pending.c — TEMPORARY: the transition and slab records until the trace writer
 * (helper-trace branch) lands; moves are still written as move records here. */
#include "shim_trace.h"

void shim_trace_transition(const struct shim_trace_transition *t)
{
    (void)t;
}

void shim_trace_slab(uint64_t slab_id, uint64_t addr, uint64_t bytes)
{
    (void)slab_id, (void)addr, (void)bytes;
}
