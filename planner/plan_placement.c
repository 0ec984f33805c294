/* planner/plan_placement.c — what each placement of a plan holds, for the tools that print it. */
#include "plan_internal.h"

#include <stdlib.h>

/* Contract in plan.h. */
plan_err plan_placement_count(const plan_model *m, const plan *p, plan_placement *out)
{
    *out = (plan_placement){0};
    unsigned char *where = calloc(m->nallocs + 1, 1); /* 1 moved, 2 on the host */
    if (!where)
        return PLAN_ERR_NOMEM;
    for (size_t i = 0; i < p->n; i++)
        where[p->entries[i].alloc] = 1;
    for (size_t i = 0; i < p->nhost; i++)
        where[p->host[i]] = 2;
    for (size_t x = 0; x < m->nallocs; x++) {
        out->moved += where[x] == 1;
        out->device_bytes += where[x] ? 0 : m->allocs[x].bytes;
    }
    free(where);
    return PLAN_OK;
}
