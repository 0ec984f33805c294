/* shim_resid_unmanaged.c — memory the budget counts but residency does not manage: unmanaged
 * allocations (small, or from explicit pools) made room for and counted, those stepped aside, and
 * the budget's view of cuMemGetInfo. */
#include "shim_resid_front.h"

/* What an unmanaged allocation of bytes holds on the device, as the driver rounds it. */
static uint64_t visible_bytes(struct resid_ctx *r, uint64_t bytes)
{
    uint64_t unit = bytes >= r->gran ? r->gran : 4096;
    return (bytes + unit - 1) / unit * unit;
}

enum shim_resid_verdict shim_resid_unmanaged_room(uint64_t bytes, CUresult *rc)
{
    struct resid_ctx *r = resid_start_current();
    if (!r)
        return SHIM_RESID_DRIVER;
    pthread_mutex_lock(&r->lock);
    enum shim_resid_verdict v = SHIM_RESID_DRIVER;
    if (r->stepped_aside) {
        v = SHIM_RESID_ASIDE;
    } else {
        if (r->plan)
            resid_plan_advance(r, atomic_load_explicit(&shim.launch_seq, memory_order_relaxed));
        uint64_t before = resid_driver_failures();
        if (resid_room_for_unmanaged(r, visible_bytes(r, bytes)) != 0) {
            if (resid_machinery_failed(r, before) || r->stepped_aside ||
                resid_short_by_set_aside(r, visible_bytes(r, bytes))) {
                resid_step_aside(r, bytes, before);
                v = SHIM_RESID_ASIDE;
            } else {
                resid_explain_oom(r, visible_bytes(r, bytes), bytes ? bytes : 1);
                *rc = r->sticky ? r->sticky : CUDA_ERROR_OUT_OF_MEMORY;
                v = SHIM_RESID_DONE;
            }
        }
    }
    pthread_mutex_unlock(&r->lock);
    return v;
}

void shim_resid_outside_add(uint64_t addr, uint64_t bytes)
{
    struct resid_ctx *r = resid_current_started();
    if (!r)
        return;
    pthread_mutex_lock(&r->lock);
    r->outside_allocs++;
    r->outside_bytes += bytes;
    pthread_mutex_unlock(&r->lock);
    resid_outside_remember(addr);
}

bool shim_resid_unmanaged_retry(uint64_t bytes)
{
    struct resid_ctx *r = resid_current_started();
    if (!r)
        return false;
    pthread_mutex_lock(&r->lock);
    /* The device is fuller than the budget says: give back pooled chunks, or move one. */
    bool progress = resid_shed(r, visible_bytes(r, bytes));
    pthread_mutex_unlock(&r->lock);
    return progress;
}

void shim_resid_unmanaged_add(uint64_t bytes, bool add)
{
    struct resid_ctx *r = resid_current_started();
    if (!r)
        return;
    uint64_t v = visible_bytes(r, bytes);
    pthread_mutex_lock(&r->lock);
    if (add) {
        resid_dev_grow(r, v);
        r->unmanaged_bytes += v;
    } else if (r->unmanaged_bytes >= v) {
        r->dev_bytes -= v;
        r->unmanaged_bytes -= v;
    }
    pthread_mutex_unlock(&r->lock);
}

void shim_resid_mem_info(size_t *free_bytes, size_t *total)
{
    struct resid_ctx *r;
    if (!free_bytes || !total || !(r = resid_start_current()))
        return;
    pthread_mutex_lock(&r->lock);
    uint64_t budget = r->budget < *total ? r->budget : *total;
    /* Held by the program: device chunks not sitting free in the pool or in spare ranges, and
       unmanaged bytes. */
    uint64_t idle = (r->nfree_dev + r->nspare_chunks) * r->gran;
    uint64_t held = r->dev_bytes - idle;
    uint64_t left = held < budget ? budget - held : 0;
    uint64_t phys = *free_bytes + idle;
    pthread_mutex_unlock(&r->lock);
    *total = budget;
    *free_bytes = left < phys ? left : phys;
}
