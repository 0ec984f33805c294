/* planner/plan_sched.c — the scheduled planner: choose gaps ahead of time, place the copies,
 * then let the simulator judge and correct.
 *
 *   1. plan_select chooses gaps on an estimated memory profile (plan_select.c);
 *   2. plan_place: evictions right after the last touch, copies back as late as the
 *      host-to-device engine allows (plan_place.c).
 *   3. plan_repair: while the simulated peak exceeds the budget, fix the operations over it
 *      (more gaps, later copies back, waits); the maximal plan is the last resort whenever the
 *      budget is at or above the floor (plan_repair.c).
 *   4. plan_improve: spend the slack to remove stalls (plan_improve.c). */
#include "plan_internal.h"

#include <stdlib.h>

/* The reactive plan made canonical: each eviction starts right after the last touch instead of
 * when memory runs out, and the operation that ran out of memory waits for it. A second starting
 * point for the improvement, good when the budget is tight. */
static plan_err canonical_reactive(const plan_ctx *c, uint64_t budget, plan *p, plan_stats *st)
{
    plan_err e = plan_reactive(c, budget, p);
    for (size_t i = 0; i < p->n && !e; i++)
        p->entries[i].evict_after =
            c->gaps[plan_ctx_find_gap(c, p->entries[i].alloc, p->entries[i].evict_after)].a;
    if (!e)
        e = plan_sim_run(c, p, budget, st, NULL);
    return e;
}

/* Plan from the chosen gaps, repaired until it fits when it does not. */
static plan_err from_selection(const plan_ctx *c, uint64_t budget, plan *p, plan_stats *st)
{
    uint8_t *sel = malloc(c->ngaps ? c->ngaps : 1);
    plan_span *force = malloc((c->ngaps ? c->ngaps : 1) * sizeof(*force));
    plan_err e = sel && force ? plan_select(c, budget, NULL, sel, force) : PLAN_ERR_NOMEM;
    if (!e)
        e = plan_place(c, sel, force, p);
    free(sel);
    free(force);
    if (!e)
        e = plan_sim_run(c, p, budget, st, NULL);
    if (!e && !st->feasible)
        e = plan_repair(c, budget, p, st);
    return e;
}

plan_err plan_scheduled(const plan_ctx *c, uint64_t budget, plan *out)
{
    plan p[2];
    plan_stats st[2];
    plan_init(&p[0]);
    plan_init(&p[1]);
    plan_err e = PLAN_OK;
    int best = 0;
    if (c->native_peak > budget) {
        e = from_selection(c, budget, &p[0], &st[0]);
        if (!e)
            e = canonical_reactive(c, budget, &p[1], &st[1]);
        for (int i = 0; i < 2 && !e; i++)
            e = plan_improve(c, budget, &p[i], &st[i]);
        best = !e && plan_stats_cmp(&st[1], &st[0]) < 0;
    }
    plan_free(&p[1 - best]);
    if (e) {
        plan_free(&p[best]);
        return e;
    }
    plan_free(out);
    *out = p[best];
    return PLAN_OK;
}
