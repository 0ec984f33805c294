/* shim_resid_reap.c — frees in stream order: a managed allocation freed with cuMemFreeAsync is
 * queued, fenced by an event recorded on its stream at or after the free, and released (a unit)
 * or taken out of its slab (a small one) once that event is known done: its memory may still be
 * used by work queued before the free. */
#include "shim_resid_budget.h"

#include <stdlib.h>

/* Frees on a stream the shim can name are not fenced when they are made: an event recorded
   there for each (what the driver's own pool never does) would cost the program's thread one
   record per free (4.5 us on the simulated device, the H100's figure), one for one in a step
   whose pace the host sets. An event recorded on the same stream later covers the free too (it
   completes after every command queued before it), so they are fenced together, one event per
   stream: when RESID_UNFENCED_MAX of them are waiting, when an allocation finds no spare range
   (resid_reap_fence: a record is far cheaper than the range it would map), when room is wanted
   (resid_reap), and before their stream is destroyed (resid_reap_stream_gone). Until then the
   memory is reusable at once in that stream's order (shim_resid_spare.c, take_ordered), as
   before. With 64 waiting, frees came back too late to be the next step's spares and the
   allocations mapped new ranges in steady state (tests/residency/test_spares.sh); 16 and 32 keep
   none. */

/* Fences every unfenced free: one event per stream, recorded now (lock held). A stream whose
   record fails keeps its frees unfenced. */
static void fence_all(struct resid_ctx *r)
{
    enum { WAYS = 8 };
    while (r->unfenced > 0) {
        struct {
            CUstream s;
            struct resid_fence *f;
        } made[WAYS];
        unsigned nmade = 0, fenced = 0;
        for (struct resid_pending *p = r->pending; p; p = p->next) {
            if (p->fence)
                continue;
            unsigned k = 0;
            while (k < nmade && made[k].s != p->stream)
                k++;
            if (k == nmade) {
                if (nmade == WAYS)
                    continue; /* a later pass */
                CUevent e = resid_event_get(r);
                CUresult rc = e ? r->drv->record(e, p->stream) : CUDA_ERROR_NOT_READY;
                if (e)
                    resid_driver_failed(r, rc);
                made[nmade].s = p->stream;
                made[nmade++].f = rc == CUDA_SUCCESS ? resid_fence_new(r, e) : NULL;
                if (rc != CUDA_SUCCESS)
                    resid_event_put(r, e);
            }
            if (!made[k].f)
                continue;
            p->fence = resid_fence_ref(made[k].f);
            r->unfenced--;
            fenced++;
        }
        for (unsigned k = 0; k < nmade; k++)
            resid_fence_drop(r, made[k].f); /* the frees hold it */
        if (fenced == 0)
            return; /* what is left could not be fenced now */
    }
}

bool resid_pending_add(struct resid_ctx *r, struct resid_unit *u, struct resid_member *m,
                       CUstream stream, bool reusable)
{
    struct resid_pending *p = calloc(1, sizeof *p);
    if (!p)
        return false;
    struct resid_fence *f = NULL;
    if (!reusable) { /* a stream only its own thread names: fenced now */
        CUevent e = resid_event_get(r);
        if (!e || r->drv->record(e, stream) != CUDA_SUCCESS || !(f = resid_fence_new(r, e))) {
            if (e && !f)
                resid_event_put(r, e);
            free(p);
            return false;
        }
    }
    *p = (struct resid_pending){u, m, f, reusable ? stream : NULL, NULL};
    struct resid_pending **l = &r->pending;
    while (*l)
        l = &(*l)->next;
    *l = p;
    if (!f && ++r->unfenced >= RESID_UNFENCED_MAX)
        fence_all(r);
    return true;
}

/* Completes pending free *link (its fence is done): the range or the member goes. */
static void finish_pending(struct resid_ctx *r, struct resid_pending **link)
{
    struct resid_pending *p = *link;
    *link = p->next;
    if (!p->fence)
        r->unfenced--;
    resid_fence_drop(r, p->fence);
    if (p->unit) {
        resid_release(r, p->unit,
                      &(struct resid_cause){SHIM_REASON_FREED, p->stream, 0, UINT64_MAX});
    }
    if (p->member)
        resid_slab_free(r, p->member);
    free(p);
}

/* Whether free p is known done: fenced, and its fence complete. */
static bool known_done(struct resid_ctx *r, const struct resid_pending *p)
{
    return p->fence && r->drv->query(p->fence->event) == CUDA_SUCCESS;
}

uint32_t resid_reap_oldest(struct resid_ctx *r)
{
    uint32_t n = 0;
    while (r->pending && !(r->pending->unit && r->pending->unit->move) &&
           known_done(r, r->pending)) {
        finish_pending(r, &r->pending);
        n++;
    }
    return n;
}

bool resid_reap_fence(struct resid_ctx *r)
{
    fence_all(r);
    return resid_reap_oldest(r) > 0;
}

void resid_reap_stream_gone(struct resid_ctx *r, CUstream stream)
{
    for (struct resid_pending *p = r->pending; p; p = p->next)
        if (!p->fence && p->stream == stream) {
            fence_all(r);
            return;
        }
}

bool resid_reap(struct resid_ctx *r, bool wait)
{
    bool any = false;
    fence_all(r); /* room is wanted: every free can be known done from now on */
    for (struct resid_pending **l = &r->pending; *l;) {
        struct resid_unit *u = (*l)->unit;
        if ((!u || !u->move) && known_done(r, *l)) {
            finish_pending(r, l);
            any = true;
        } else {
            l = &(*l)->next;
        }
    }
    if (any || !wait || !r->pending)
        return any;
    struct resid_pending *p = r->pending;
    if (p->unit && p->unit->move) {
        resid_wait_move(r, p->unit, SHIM_REASON_BUDGET);
        return true;
    }
    struct resid_fence *f = resid_fence_ref(p->fence); /* held across the lock drop */
    uint64_t t0 = resid_now_ns();
    pthread_mutex_unlock(&r->lock);
    /* unfenced (its stream's record failed): the stream's own end covers it */
    CUresult rc = f ? r->drv->event_sync(f->event) : r->drv->stream_sync(p->stream);
    pthread_mutex_lock(&r->lock);
    resid_fence_drop(r, f);
    resid_stalled(r, t0, SHIM_REASON_BUDGET);
    resid_driver_failed(r, rc);
    if (rc == CUDA_SUCCESS && r->pending == p) {
        finish_pending(r, &r->pending);
        return true;
    }
    return rc == CUDA_SUCCESS;
}
