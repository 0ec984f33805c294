/* shim_resid_unit.c — unit records: made with their granule slots (and their range reserved),
 * and freed once their range and chunks are dealt with. */
#include "shim_resid_state.h"

#include <stdlib.h>

struct resid_unit *resid_unit_new(struct resid_ctx *r, uint64_t bytes)
{
    struct resid_unit *u = calloc(1, sizeof *u);
    if (!u)
        return NULL;
    u->n = (uint32_t)((bytes + r->gran - 1) / r->gran);
    u->size = bytes;
    u->plan_alloc = -1;
    u->mapped = (uint64_t)u->n * r->gran;
    if (!(u->backing = calloc(u->n, sizeof *u->backing))) {
        free(u);
        return NULL;
    }
    return u;
}

struct resid_unit *resid_unit_reserve(struct resid_ctx *r, uint64_t bytes)
{
    struct resid_unit *u = resid_unit_new(r, bytes);
    if (!u)
        return NULL;
    CUresult rc = r->drv->reserve(&u->va, u->mapped, r->gran);
    if (rc == CUDA_SUCCESS)
        return u;
    resid_driver_failed(r, rc);
    resid_unit_free(r, u);
    return NULL;
}

void resid_unit_free(struct resid_ctx *r, struct resid_unit *u)
{
    if (u->stays_on_host)
        resid_placed_forget(u->id);
    resid_plan_unbind(r, u);
    resid_fence_drop(r, u->ready);
    resid_fence_drop(r, u->reading);
    if (u->slab)
        free(u->slab->used);
    free(u->slab);
    free(u->backing);
    free(u);
}

void resid_plan_unbind(struct resid_ctx *r, struct resid_unit *u)
{
    if (r->plan && u->plan_alloc >= 0 && r->plan_units[u->plan_alloc] == u)
        r->plan_units[u->plan_alloc] = NULL;
    u->plan_alloc = -1;
}
