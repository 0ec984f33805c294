/* shim_resid_ctx.c — one residency manager per device, and which one an entry point works on.
 *
 * A process that drives several devices (replicas in one process, or a torchrun worker that
 * touches a second device) keeps each device within its own budget: each device has its own
 * manager (chunks, units, moves, copy streams, mover thread), started at the first allocation
 * made while that device is current, with the budget applied to each. Each entry point finds its
 * manager here once and passes it down: by the current device (allocations, memory queries: the
 * CUDA runtime makes them with the device current), by the allocation (frees, pointer queries,
 * holds: any device may be current then), or the primary manager (the first started) for the
 * in-process plan, which models one device's step. */
#include "shim_resid_state.h"

#include <string.h>

#define RESID_CTX_INIT                                                                             \
    {                                                                                              \
        .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER,                       \
        .prefetched = PTHREAD_COND_INITIALIZER, .remapped = PTHREAD_COND_INITIALIZER,              \
    }

struct resid_ctx resid_ctxs[RESID_MAX_DEVICES] = {[0 ... RESID_MAX_DEVICES - 1] = RESID_CTX_INIT};

static struct resid_ctx *started[RESID_MAX_DEVICES]; /* in start order */
static _Atomic uint32_t nstarted;

void resid_ctx_init(struct resid_ctx *r, const struct resid_policy *policy)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->wake, NULL);
    pthread_cond_init(&r->prefetched, NULL);
    pthread_cond_init(&r->remapped, NULL);
    r->policy = policy;
}

uint32_t resid_current_device(const struct resid_driver *drv)
{
    CUdevice d = 0;
    if (drv->device(&d) != CUDA_SUCCESS || d < 0)
        return 0;
    return (uint32_t)d;
}

struct resid_ctx *resid_current(void)
{
    /* A driver seam without the call (NOT_SUPPORTED: no real driver, as in the unit tests) has
       device 0. A failed call (no current context, or a transient failure, which must not reach
       the program) gets one more try; then the only manager serves if one started, else none
       (rather than device 0's, started for an unknown device). */
    const struct resid_driver *drv = resid_driver_real();
    CUdevice d = 0;
    CUresult rc = drv->device(&d);
    if (rc == CUDA_ERROR_NOT_SUPPORTED)
        d = 0, rc = CUDA_SUCCESS;
    else if (rc != CUDA_SUCCESS)
        rc = drv->device(&d);
    if (rc != CUDA_SUCCESS)
        return atomic_load_explicit(&nstarted, memory_order_acquire) == 1 ? started[0] : NULL;
    return d >= 0 && d < RESID_MAX_DEVICES ? &resid_ctxs[d] : NULL;
}

struct resid_ctx *resid_current_started(void)
{
    struct resid_ctx *r = resid_current();
    return r && atomic_load_explicit(&r->on, memory_order_acquire) ? r : NULL;
}

struct resid_ctx *resid_for_operation(void)
{
    uint32_t n = atomic_load_explicit(&nstarted, memory_order_acquire);
    if (n == 1)
        return started[0];
    return n > 1 ? resid_current() : NULL;
}

struct resid_ctx *resid_for_id(uint64_t id)
{
    uint32_t n = atomic_load_explicit(&nstarted, memory_order_acquire);
    for (uint32_t k = 0; k < n; k++) {
        struct resid_ctx *r = started[k];
        pthread_mutex_lock(&r->lock);
        bool mine = resid_find(r, id) || resid_member_find(r, id);
        pthread_mutex_unlock(&r->lock);
        if (mine)
            return r;
    }
    return NULL;
}

uint32_t resid_note_started(struct resid_ctx *r)
{
    uint32_t n = atomic_load_explicit(&nstarted, memory_order_relaxed);
    if (n >= RESID_MAX_DEVICES)
        return n;
    started[n] = r;
    atomic_store_explicit(&nstarted, n + 1, memory_order_release);
    return n;
}

struct resid_ctx *resid_primary(void)
{
    return atomic_load_explicit(&nstarted, memory_order_acquire) ? started[0] : NULL;
}

struct resid_ctx *resid_started_at(uint32_t k)
{
    return k < atomic_load_explicit(&nstarted, memory_order_acquire) ? started[k] : NULL;
}

uint32_t resid_nstarted(void)
{
    return atomic_load_explicit(&nstarted, memory_order_acquire);
}
