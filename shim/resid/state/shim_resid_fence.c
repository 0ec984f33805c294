/* shim_resid_fence.c — the manager's pooled events and the fences built on them (an event that
 * work must wait for before using chunks or data a move produced), the driver's failures as
 * the manager notes them, and its clock. */
#include "shim_resid_state.h"

#include <stdlib.h>
#include <time.h>

uint64_t resid_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

CUevent resid_event_get(struct resid_ctx *r)
{
    if (r->nevents)
        return r->events[--r->nevents];
    CUevent e = NULL;
    CUresult rc = r->drv->event_create(&e);
    if (rc != CUDA_SUCCESS) {
        resid_driver_failed(r, rc);
        return NULL;
    }
    return e;
}

void resid_event_put(struct resid_ctx *r, CUevent e)
{
    if (!e)
        return;
    if (base_array_grow((void **)&r->events, &r->event_cap, r->nevents + 1, sizeof *r->events))
        return; /* the event leaks: harmless */
    r->events[r->nevents++] = e;
}

struct resid_fence *resid_fence_new(struct resid_ctx *r, CUevent e)
{
    struct resid_fence *f = e ? malloc(sizeof *f) : NULL;
    if (f)
        *f = (struct resid_fence){e, 1, ++r->fence_seq};
    else
        resid_event_put(r, e);
    return f;
}

struct resid_fence *resid_fence_ref(struct resid_fence *f)
{
    if (f)
        f->refs++;
    return f;
}

void resid_fence_drop(struct resid_ctx *r, struct resid_fence *f)
{
    if (f && --f->refs == 0) {
        resid_event_put(r, f->event);
        free(f);
    }
}

void resid_chunk_fence(struct resid_ctx *r, struct resid_chunk *c, struct resid_fence *f)
{
    if (!c || !f || (c->fence && c->fence->seq >= f->seq))
        return;
    resid_fence_drop(r, c->fence);
    c->fence = resid_fence_ref(f);
}

void resid_driver_failed(struct resid_ctx *r, CUresult rc)
{
    if (rc != CUDA_SUCCESS)
        r->last_error = rc;
    if (!resid_sticky_error(rc) || r->sticky)
        return;
    r->sticky = rc;
    shim_log(SHIM_LOG_ERROR,
             "residency: the device reported a permanent error (%d): libshim "
             "moves nothing more, and the program will see the error",
             (int)rc);
}
