/* shim_resid_spare.c — freed units' ranges kept mapped, for the next allocation of their size.
 *
 * On a real driver the VMM calls behind a managed allocation cost the program's host thread far
 * more than the driver's stream-ordered pool. Measured on an H100 (driver 580.159.04, CUDA 13.0;
 * tests/gpu/vmm_facts.cu, `make gpu-test`) for 64 MiB in 32 chunks of 2 MiB: cuMemSetAccess
 * 0.90-1.00 ms, cuMemUnmap 0.53 ms, cuMemMap x32 0.04-0.06 ms, cuMemAddressReserve 0.01-0.02 ms,
 * against 0.10 ms for cuMemAllocAsync + cuMemFreeAsync with work queued; none of them waits for
 * queued work. A PyTorch job with its cudaMallocAsync backend makes about 85 allocations a step:
 * mapping each anew made its step 1.55x-1.94x slower with nothing moved (tests/gpu/
 * torch_budget.sh).
 *
 * So a unit freed whole on the device keeps its range and chunks mapped, as a spare: an
 * allocation of the same chunk count takes it without a driver call. A free still pending on a
 * stream gives its range at once to an allocation on that same stream, in that stream's order,
 * as the driver's pool does. Spare chunks count as free in the budget's view (cuMemGetInfo), and
 * a search for room unmaps spares, oldest first, before it waits for a move or evicts anything.
 * The data a spare held is the freed allocation's, as with cuMemAllocAsync reusing memory. */
#include "shim_resid_pools.h"

#include <stdlib.h>

#define SPARE_MAX 512 /* ranges kept at most: a search is linear, and fragments cost chunks */

struct resid_spare {
    CUdeviceptr va;
    uint64_t mapped;
    uint32_t n;
    struct resid_chunk **backing;
    struct resid_spare *next; /* older to newer */
};

/* Whether u is whole on the device with nothing in flight that a new owner must wait for
   beyond its chunks' own fences (lock held). */
static bool whole(struct resid_ctx *r, const struct resid_unit *u)
{
    if (u->state != SHIM_RS_DEVICE || u->slab || u->stuck || u->unsettled || u->held || u->graph ||
        u->move || u->prefetching || r->unmapped)
        return false;
    if (u->ready && r->drv->query(u->ready->event) != CUDA_SUCCESS)
        return false;
    uint32_t grans = 0;
    for (uint32_t i = 0; i < u->n && u->backing[i]; i++) {
        if (u->backing[i]->host)
            return false;
        grans += u->backing[i]->grans;
    }
    return grans == u->n; /* none taken for an ordered reuse */
}

/* Unmaps spare s and returns its chunks to the pool, or sets them aside if the range could
   not be unmapped; frees s. Returns the chunks returned (lock held). */
static uint32_t drop(struct resid_ctx *r, struct resid_spare *s)
{
    r->nspare_chunks -= s->n;
    r->nspares--;
    uint32_t n = resid_unmap_range(r, s->va, s->mapped, s->backing, s->n) ? s->n : 0;
    free(s->backing);
    free(s);
    return n;
}

bool resid_spare_keep(struct resid_ctx *r, struct resid_unit *u)
{
    if (!whole(r, u))
        return false;
    struct resid_spare *s = malloc(sizeof *s);
    if (!s)
        return false;
    *s = (struct resid_spare){u->va, u->mapped, u->n, u->backing, NULL};
    u->backing = NULL; /* the spare owns the chunk array now */
    struct resid_spare **l = &r->spares;
    while (*l)
        l = &(*l)->next;
    *l = s;
    r->nspares++;
    r->nspare_chunks += s->n;
    while (r->nspares > SPARE_MAX)
        resid_spare_drop(r, 1);
    return true;
}

/* Gives new unit u (no range yet) the range and chunks of dying unit d, or of spare s. */
static void adopt(struct resid_unit *u, CUdeviceptr va, uint64_t mapped,
                  struct resid_chunk **backing)
{
    u->va = va;
    u->mapped = mapped;
    for (uint32_t i = 0; i < u->n; i++) {
        u->backing[i] = backing[i];
        backing[i] = NULL;
    }
}

bool resid_spare_take(struct resid_ctx *r, struct resid_unit *u, CUstream stream, bool ordered,
                      bool *reused)
{
    *reused = false;
    for (struct resid_spare **l = &r->spares; *l; l = &(*l)->next) {
        struct resid_spare *s = *l;
        if (s->n != u->n)
            continue;
        *l = s->next;
        r->nspares--;
        r->nspare_chunks -= s->n;
        adopt(u, s->va, s->mapped, s->backing);
        free(s->backing);
        free(s);
        return true;
    }
    if (!ordered)
        return false;
    /* A free still pending on this stream: its range is reusable at once in the stream's
       order (the new owner's work is queued after the free). The dying unit ends here. */
    for (struct resid_pending *p = r->pending; p; p = p->next) {
        struct resid_unit *d = p->unit;
        if (!d || p->stream != stream || d->n != u->n || !whole(r, d))
            continue;
        p->unit = NULL; /* the pending entry only returns its fence now */
        resid_fsm(r, d, SHIM_EV_FREE,
                  &(struct resid_cause){SHIM_REASON_FREED, p->stream, 0, UINT64_MAX});
        adopt(u, d->va, d->mapped, d->backing);
        resid_unit_free(r, d);
        *reused = true;
        return true;
    }
    return false;
}

uint32_t resid_spare_drop(struct resid_ctx *r, uint32_t chunks)
{
    uint32_t done = 0;
    while (done < chunks && r->spares) {
        struct resid_spare *s = r->spares;
        r->spares = s->next;
        done += drop(r, s);
    }
    return done;
}
