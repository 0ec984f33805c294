/* shim_resid_ctx.c — one residency manager per device, and which one a call works on.
 *
 * A process that drives several devices (replicas in one process, or a torchrun worker that
 * touches a second device) keeps each device within its own budget: each device has its own
 * manager (chunks, units, moves, copy streams, mover thread), started at the first allocation
 * made while that device is current, with the budget applied to each. The residency code works on
 * `resid`, a thread's selection among them (shim_resid.h): the entry points select by the current
 * device (allocations, memory queries: the CUDA runtime makes them with the device current), by
 * the allocation (frees, pointer queries, holds: any device may be current then), or the primary
 * manager (the first started) for the in-process plan, which models one device's step. */
#include "shim_resid_internal.h"

#define RESID_CTX_INIT                                                                             \
    {                                                                                              \
        .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER,                       \
        .prefetched = PTHREAD_COND_INITIALIZER, .policy = &resid_policy_reactive,                  \
    }

struct resid_ctx resid_ctxs[RESID_MAX_DEVICES] = {[0 ... RESID_MAX_DEVICES - 1] = RESID_CTX_INIT};
_Thread_local struct resid_ctx *resid_cur = &resid_ctxs[0];

static struct resid_ctx *started[RESID_MAX_DEVICES]; /* in start order */
static _Atomic uint32_t nstarted;

bool resid_use_current(void)
{
    /* A driver seam without the call (the unit tests' fake driver) has device 0. A failed call
       (no current context, or a transient failure, which must not reach the program) gets one
       more try; then the only manager serves if one started, else none is selected (rather
       than device 0's started for an unknown device). */
    CUdevice d = 0;
    CUresult rc = CUDA_SUCCESS;
    if (shim.real.cuCtxGetDevice && (rc = shim.real.cuCtxGetDevice(&d)) != CUDA_SUCCESS)
        rc = shim.real.cuCtxGetDevice(&d);
    if (rc != CUDA_SUCCESS) {
        if (atomic_load_explicit(&nstarted, memory_order_acquire) != 1)
            return false;
        resid_cur = started[0];
        return true;
    }
    if (d < 0 || d >= RESID_MAX_DEVICES)
        return false;
    resid_cur = &resid_ctxs[d];
    return true;
}

bool resid_use_primary(void)
{
    if (!atomic_load_explicit(&nstarted, memory_order_acquire))
        return false;
    resid_cur = started[0];
    return true;
}

bool resid_use_for_operation(void)
{
    uint32_t n = atomic_load_explicit(&nstarted, memory_order_acquire);
    if (n == 1) {
        resid_cur = started[0];
        return true;
    }
    return n > 1 && resid_use_current();
}

bool resid_use_id(uint64_t id)
{
    uint32_t n = atomic_load_explicit(&nstarted, memory_order_acquire);
    for (uint32_t k = 0; k < n; k++) {
        struct resid_ctx *c = started[k];
        pthread_mutex_lock(&c->lock);
        resid_cur = c;
        bool mine = resid_find(id) || resid_member_find(id);
        pthread_mutex_unlock(&c->lock);
        if (mine)
            return true;
    }
    return false;
}

void resid_note_started(void)
{
    uint32_t n = atomic_load_explicit(&nstarted, memory_order_relaxed);
    if (n >= RESID_MAX_DEVICES)
        return;
    started[n] = resid_cur;
    atomic_store_explicit(&nstarted, n + 1, memory_order_release);
    if (n == 1) {
        shim_log(SHIM_LOG_INFO,
                 "residency: a second device (%d) is managed, within its own budget; the "
                 "in-process planner models one device's step, so moves are reactive from now on",
                 (int)resid.device);
        shim_resid_plan_withdraw("a second device is managed"); /* keeps the selection */
    }
}

struct resid_ctx *resid_primary(void)
{
    return atomic_load_explicit(&nstarted, memory_order_acquire) ? started[0] : NULL;
}

struct resid_ctx *resid_started_at(uint32_t k)
{
    return k < atomic_load_explicit(&nstarted, memory_order_acquire) ? started[k] : NULL;
}

bool shim_resid_several(void)
{
    return atomic_load_explicit(&nstarted, memory_order_acquire) > 1;
}
