/* shim_ledger.c — what an operation leaves behind: the registry entry, the trace record and the
 * step study's event (through the listener the plan room registers, so that the core never
 * calls up into it). */
#include "shim_core.h"

static const struct shim_step_listener *listener;

void shim_step_listen(const struct shim_step_listener *l)
{
    listener = l;
}

const struct shim_step_listener *shim_step_listener(void)
{
    return listener;
}

void shim_step_studying_set(bool on)
{
    atomic_store_explicit(&shim.step_studying, on, memory_order_relaxed);
}

void shim_ledger_step_alloc(uint64_t id, uint64_t addr, uint64_t bytes, int kind, uint64_t stream)
{
    uint32_t ordinal = shim_steps_count_alloc(&shim.steps);
    if (shim_step_studying() && listener)
        listener->alloc(id, addr, bytes, kind, stream, ordinal);
}

uint64_t shim_ledger_alloc(uint64_t addr, uint64_t bytes, plan_mem_kind kind, uint64_t stream,
                           bool plan_on)
{
    uint64_t id = shim_registry_add(addr, bytes, kind);
    if (id && (shim.record & CONF_RECORD_ALLOCS))
        shim_trace_alloc_on(id, addr, bytes, kind, stream,
                            kind == PLAN_MEM_HOST ? 0 : shim_current_device());
    if (id && kind != PLAN_MEM_HOST && (shim_step_studying() || plan_on))
        shim_ledger_step_alloc(id, addr, bytes, kind, stream);
    return id;
}

uint64_t shim_ledger_alloc_kept_on_host(uint64_t addr, uint64_t bytes, uint64_t stream)
{
    uint64_t id = shim_registry_add(addr, bytes, PLAN_MEM_MANAGED);
    if (id && (shim.record & CONF_RECORD_ALLOCS))
        shim_trace_alloc_on(id, addr, bytes, PLAN_MEM_MANAGED, stream, shim_current_device());
    return id;
}

void shim_ledger_copy(enum shim_copy_dir dir, uint64_t dst, uint64_t src, uint64_t bytes,
                      CUstream stream, bool per_thread)
{
    bool studied = shim_step_studying() && listener;
    if (!(shim.record & CONF_RECORD_COPIES) && !studied)
        return;
    uint64_t d = dst ? shim_registry_find(dst) : 0, s = src ? shim_registry_find(src) : 0;
    if (shim.record & CONF_RECORD_COPIES)
        shim_trace_copy(dir, d, s, bytes, shim_stream_id(stream, per_thread));
    if (studied)
        listener->copy(d, s, dir, bytes);
}

void shim_ledger_sync(enum shim_sync_kind kind, CUstream stream, bool per_thread)
{
    if (shim.record & CONF_RECORD_SYNCS)
        shim_trace_sync(kind, shim_stream_id(stream, per_thread));
    shim_timing_collect();
    shim_steps_host_sync(&shim.steps);
}

uint32_t shim_current_device(void)
{
    CUdevice d = 0;
    if (!shim.real.cuCtxGetDevice || shim.real.cuCtxGetDevice(&d) != CUDA_SUCCESS || d < 0)
        return 0;
    return (uint32_t)d;
}
