/* planner/plan_place.c — turns chosen gaps into canonical entries: evict right after the last
 * touch, copy back as late as the host-to-device engine allows, and the maximal plan.
 *
 * Copies back are scheduled backwards on the nominal timeline (plan_cover.c), latest need first:
 * each must be usable by its need (plan_ctx_restore_us: its remap counted) and off the engine by
 * the start of the copy scheduled after it. The prefetch is issued by the last operation that
 * becomes ready no later than that start. */
#include "plan_internal.h"

#include <stdlib.h>

/* Last position in [lo, hi] that becomes ready (nominally) no later than t, or lo. */
static int32_t last_ready_by(const plan_ctx *c, int32_t lo, int32_t hi, double t)
{
    int32_t l = lo, h = hi, best = lo;
    while (l <= h) {
        int32_t mid = l + (h - l) / 2;
        if (plan_ctx_start_at(c, mid) <= t)
            best = mid, l = mid + 1;
        else
            h = mid - 1;
    }
    return best;
}

/* Entry of chosen gap g from the engine schedules, kept off over force (when not empty). */
static plan_entry place_gap(const plan_ctx *c, const plan_engines *en, size_t g, plan_span force)
{
    const plan_gap *gp = &c->gaps[g];
    bool tail = gp->kind == PLAN_GAP_TAIL;
    int32_t k = tail ? PLAN_NO_OP : last_ready_by(c, gp->a + 1, gp->b, en->restore_start[g]);
    int32_t w = PLAN_NO_OP;
    if (force.lo <= force.hi) {
        if (en->evict_done[g] > plan_ctx_start_at(c, force.lo))
            w = (int32_t)force.lo;
        if (!tail && k <= force.hi)
            k = (int32_t)force.hi + 1;
    }
    return plan_ctx_entry(c, g, k, w);
}

plan_err plan_place(const plan_ctx *c, const uint8_t *sel, const plan_span *force, plan *out)
{
    plan_engines en;
    plan_err e = plan_engines_build(&en, c, sel);
    out->n = 0;
    for (size_t g = 0; g < c->ngaps && !e; g++)
        if (sel[g])
            e = plan_push(out, place_gap(c, &en, g, force ? force[g] : (plan_span){0, -1}));
    plan_engines_free(&en);
    return e;
}

plan_entry plan_place_one(const plan_ctx *c, size_t g, int32_t kmin)
{
    const plan_gap *gp = &c->gaps[g];
    if (gp->kind == PLAN_GAP_TAIL)
        return plan_ctx_entry(c, g, PLAN_NO_OP, PLAN_NO_OP);
    uint64_t b = c->m->allocs[gp->alloc].moved;
    double st = plan_ctx_start_at(c, gp->b) - plan_ctx_restore_us(c, b);
    int32_t k = last_ready_by(c, gp->a + 1, gp->b, st);
    return plan_ctx_entry(c, g, PLAN_MAX(k, PLAN_MIN(kmin, gp->b)), PLAN_NO_OP);
}

plan_err plan_maximal(const plan_ctx *c, plan *out)
{
    out->n = 0;
    for (size_t g = 0; g < c->ngaps; g++) {
        plan_err e = plan_push(out, plan_ctx_entry(c, g, c->gaps[g].b, c->gaps[g].a + 1));
        if (e)
            return e;
    }
    return PLAN_OK;
}
