/* planner/plan_mover.c — the host's mover: the thread of libshim that remaps each move's range
 * (unmap, map, set access), one move at a time, beside the link's copies.
 *
 * A remap is host time, not link time: it moves no bytes, and the copy engines serve the next
 * copy while the mover remaps the last one. The simulator places each move's remap here in the
 * order it issues the moves; a remap takes the earliest idle stretch of the mover long enough
 * for it at or after the time it can start, and a remap placed earlier keeps its times (as
 * plan_link.c places copies). Not a strict queue in issue order: libshim's mover polls the
 * copies in flight and completes whichever is done (shim/resid/moves/shim_resid_mover.c), so an
 * eviction whose copy still runs does not hold back a restore's remap issued after it; and
 * with no remap time, a move is done when its copy is, as before the mover was modelled. */
#include "plan_internal.h"

#include "base_array.h"
#include "base_order.h"

#include <stdlib.h>
#include <string.h>

void plan_mover_init(plan_mover *mv)
{
    memset(mv, 0, sizeof(*mv));
}

void plan_mover_free(plan_mover *mv)
{
    free(mv->seg);
    memset(mv, 0, sizeof(*mv));
}

void plan_mover_prune(plan_mover *mv, double t)
{
    while (mv->head < mv->n && mv->seg[mv->head].end <= t)
        mv->head++;
    if (mv->head > 0 && mv->head * 2 >= mv->n) {
        memmove(mv->seg, mv->seg + mv->head, (mv->n - mv->head) * sizeof(*mv->seg));
        mv->n -= mv->head;
        mv->head = 0;
    }
}

double plan_mover_backlog(const plan_mover *mv, double t)
{
    return mv->n > mv->head && mv->seg[mv->n - 1].end > t ? mv->seg[mv->n - 1].end - t : 0;
}

/* Records [start, end) before interval i, merged with the neighbours it touches. */
static plan_err record(plan_mover *mv, size_t i, double start, double end)
{
    bool left = i > mv->head && mv->seg[i - 1].end == start;
    bool right = i < mv->n && mv->seg[i].start == end;
    if (left && right) {
        mv->seg[i - 1].end = mv->seg[i].end;
        memmove(mv->seg + i, mv->seg + i + 1, (mv->n - i - 1) * sizeof(*mv->seg));
        mv->n--;
    } else if (left) {
        mv->seg[i - 1].end = end;
    } else if (right) {
        mv->seg[i].start = start;
    } else {
        if (base_array_grow((void **)&mv->seg, &mv->cap, mv->n + 1, sizeof(*mv->seg)))
            return PLAN_ERR_NOMEM;
        memmove(mv->seg + i + 1, mv->seg + i, (mv->n - i) * sizeof(*mv->seg));
        mv->seg[i] = (plan_link_seg){start, end};
        mv->n++;
    }
    return PLAN_OK;
}

plan_err plan_mover_place(plan_mover *mv, double ready, double us, double *start)
{
    *start = ready;
    if (!(us > 0)) /* takes no time: occupies nothing */
        return PLAN_OK;
    /* the first interval ending after ready (ends are sorted), then the first idle stretch */
    size_t i = mv->head;
    BASE_BSEARCH(i, mv->n, mid, mv->seg[mid].end <= ready);
    double t = ready;
    for (; i < mv->n && mv->seg[i].start < t + us; i++)
        t = PLAN_MAX(t, mv->seg[i].end);
    *start = t;
    return record(mv, i, t, t + us);
}
