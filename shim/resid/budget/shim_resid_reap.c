/* shim_resid_reap.c — frees in stream order: a managed allocation freed with cuMemFreeAsync is
 * queued with an event recorded at the free on its stream, and released (a unit) or taken out of
 * its slab (a small one) once that event is known done: its memory may still be used by work
 * queued before the free. */
#include "shim_resid_budget.h"

#include <stdlib.h>

bool resid_pending_add(struct resid_ctx *r, struct resid_unit *u, struct resid_member *m,
                       CUstream stream, bool reusable)
{
    struct resid_pending *p = calloc(1, sizeof *p);
    CUevent e = p ? resid_event_get(r) : NULL;
    if (!e || r->drv->record(e, stream) != CUDA_SUCCESS) {
        resid_event_put(r, e);
        free(p);
        return false;
    }
    *p = (struct resid_pending){u, m, e, reusable ? stream : NULL, NULL};
    struct resid_pending **l = &r->pending;
    while (*l)
        l = &(*l)->next;
    *l = p;
    return true;
}

/* Completes pending free *link (its event is done): the range or the member goes. */
static void finish_pending(struct resid_ctx *r, struct resid_pending **link)
{
    struct resid_pending *p = *link;
    *link = p->next;
    resid_event_put(r, p->event);
    if (p->unit) {
        resid_release(r, p->unit,
                      &(struct resid_cause){SHIM_REASON_FREED, p->stream, 0, UINT64_MAX});
    }
    if (p->member)
        resid_slab_free(r, p->member);
    free(p);
}

uint32_t resid_reap_oldest(struct resid_ctx *r)
{
    uint32_t n = 0;
    while (r->pending && !(r->pending->unit && r->pending->unit->move) &&
           r->drv->query(r->pending->event) == CUDA_SUCCESS) {
        finish_pending(r, &r->pending);
        n++;
    }
    return n;
}

bool resid_reap(struct resid_ctx *r, bool wait)
{
    bool any = false;
    for (struct resid_pending **l = &r->pending; *l;) {
        struct resid_unit *u = (*l)->unit;
        if ((!u || !u->move) && r->drv->query((*l)->event) == CUDA_SUCCESS) {
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
    CUevent e = p->event;
    uint64_t t0 = resid_now_ns();
    pthread_mutex_unlock(&r->lock);
    CUresult rc = r->drv->event_sync(e);
    pthread_mutex_lock(&r->lock);
    resid_stalled(r, t0, SHIM_REASON_BUDGET);
    resid_driver_failed(r, rc);
    if (rc == CUDA_SUCCESS && r->pending == p) {
        finish_pending(r, &r->pending);
        return true;
    }
    return rc == CUDA_SUCCESS;
}
