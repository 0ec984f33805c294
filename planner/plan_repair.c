/* planner/plan_repair.c — brings a scheduled plan within the budget, judged by the simulator.
 *
 * Round by round: first the simulated excess of every operation is added to its estimated
 * level and the gaps are chosen and placed again (copy contention and transients show up as
 * excess where they happen); then the operations still over budget are fixed directly, in this
 * order until their excess is covered: gaps covering them that are not in the plan yet, copies
 * back that started before the operation ended (issued one operation later), evictions not
 * finished when its window opened (the operation waits, then the one before). Each direct fix
 * moves an entry toward the maximal plan, so the last resort, when the budget is at or above the
 * floor, is the maximal plan itself. The best plan seen is kept. */
#include "plan_internal.h"

#include "base_array.h"
#include "base_order.h"

#include <stdlib.h>
#include <string.h>

#define FEEDBACK_ROUNDS 4
#define FIX_ROUNDS      10

typedef struct piece { /* part of a gap's idle range inside one step */
    int32_t lo, hi;
    uint32_t gap;
} piece;

/* A way to free an allocation during one operation's window, and its estimated stall. */
typedef struct option {
    double cost;
    uint64_t bytes;
    uint32_t gap;
} option;

typedef struct repair {
    const plan_ctx *c;
    uint64_t budget;
    plan *p;
    plan_stats st;
    plan best;
    plan_stats best_st;
    plan_trace tr;
    size_t ents_cap;   /* capacity of tr.ents */
    size_t traced;     /* entries the trace describes */
    int32_t *entry_of; /* per gap: its entry, or -1 */
    piece *pc;
    size_t npc;
    uint32_t *act; /* active pieces of the sweep */
    uint32_t *cand;
    option *opt;
} repair;

static plan_err copy_plan(plan *dst, const plan *src)
{
    dst->n = 0;
    for (size_t i = 0; i < src->n; i++)
        if (plan_push(dst, src->entries[i]))
            return PLAN_ERR_NOMEM;
    return PLAN_OK;
}

/* Simulates r->p with a trace and remembers it if it is the best so far. */
static plan_err judge(repair *r)
{
    if (base_array_grow((void **)&r->tr.ents, &r->ents_cap, r->p->n + 1, sizeof(*r->tr.ents)))
        return PLAN_ERR_NOMEM;
    plan_err e = plan_sim_run(r->c, r->p, r->budget, &r->st, &r->tr);
    r->traced = r->p->n;
    if (!e && plan_stats_cmp(&r->st, &r->best_st) < 0) {
        r->best_st = r->st;
        e = copy_plan(&r->best, r->p);
    }
    return e;
}

static plan_err feedback(repair *r)
{
    const plan_ctx *c = r->c;
    uint64_t *extra = calloc(c->n, sizeof(*extra));
    uint8_t *sel = malloc(c->ngaps ? c->ngaps : 1);
    plan_span *force = malloc((c->ngaps ? c->ngaps : 1) * sizeof(*force));
    plan_err e = extra && sel && force ? PLAN_OK : PLAN_ERR_NOMEM;
    for (int round = 0; round < FEEDBACK_ROUNDS && !e && !r->st.feasible; round++) {
        for (size_t q = 0; q < c->n; q++)
            if (r->tr.ops[q].level > r->budget)
                extra[q] += r->tr.ops[q].level - r->budget;
        e = plan_select(c, r->budget, extra, sel, force);
        if (!e)
            e = plan_place(c, sel, force, r->p);
        if (!e)
            e = judge(r);
    }
    free(extra);
    free(sel);
    free(force);
    return e;
}

/* ---- direct fixes ------------------------------------------------------------------------ */

static int piece_cmp(const void *a, const void *b)
{
    const piece *x = a, *y = b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

static plan_err build_pieces(repair *r)
{
    const plan_ctx *c = r->c;
    int32_t n = (int32_t)c->n;
    r->pc = malloc((2 * c->ngaps + 1) * sizeof(*r->pc));
    r->act = malloc((2 * c->ngaps + 1) * sizeof(*r->act));
    r->cand = malloc((2 * c->ngaps + 1) * sizeof(*r->cand));
    r->opt = malloc((2 * c->ngaps + 1) * sizeof(*r->opt));
    r->entry_of = malloc((c->ngaps + 1) * sizeof(*r->entry_of));
    if (!r->pc || !r->act || !r->cand || !r->opt || !r->entry_of)
        return PLAN_ERR_NOMEM;
    for (size_t g = 0; g < c->ngaps; g++) {
        const plan_gap *gp = &c->gaps[g];
        int32_t lo = gp->a + 1, hi = gp->last;
        if (lo < n)
            r->pc[r->npc++] = (piece){lo, PLAN_MIN(hi, n - 1), (uint32_t)g};
        if (hi >= n)
            r->pc[r->npc++] = (piece){PLAN_MAX(lo, n) - n, hi - n, (uint32_t)g};
    }
    qsort(r->pc, r->npc, sizeof(*r->pc), piece_cmp);
    return PLAN_OK;
}

static plan_err index_entries(repair *r)
{
    uint32_t *gap_of = malloc((r->p->n + 1) * sizeof(*gap_of));
    if (!gap_of)
        return PLAN_ERR_NOMEM;
    plan_err e = plan_check_ctx(r->c, r->p, gap_of, NULL, 0);
    for (size_t g = 0; g < r->c->ngaps; g++)
        r->entry_of[g] = -1;
    for (size_t i = 0; i < r->p->n && !e; i++)
        r->entry_of[gap_of[i]] = (int32_t)i;
    free(gap_of);
    return e;
}

/* Position of q inside gap g's unrolled range (q is a position of the step, 0 <= q < n). */
static int32_t in_gap(const plan_ctx *c, const plan_gap *g, int32_t q)
{
    return q > g->a ? q : q + (int32_t)c->n;
}

/* Time of an event recorded in the reported step at position pos of an entry, moved to the
 * instance of that entry that covers unrolled position qg. */
static double shift(const repair *r, double t, int32_t pos, int32_t qg)
{
    int32_t n = (int32_t)r->c->n;
    return t + r->st.step_us * ((pos >= n) - (qg >= n));
}

/* Simulated time at which unrolled position pos became ready / ended, in the instance covering
 * qg. */
static double ready_of(const repair *r, int32_t pos, int32_t qg)
{
    int32_t n = (int32_t)r->c->n, ps = pos % n;
    double t = ps ? r->tr.ops[ps - 1].end : r->tr.step_start;
    return shift(r, t, pos, qg);
}

static double end_of(const repair *r, int32_t pos, int32_t qg)
{
    return shift(r, r->tr.ops[pos % (int32_t)r->c->n].end, pos, qg);
}

static int option_cmp(const void *a, const void *b)
{
    const option *x = a, *y = b;
    return BASE_CMP_THEN(x->cost, y->cost,
                         BASE_CMP_THEN(y->bytes, x->bytes, BASE_CMP(x->gap, y->gap)));
}

/* What entry i of gap g still does on the device in the window of step position qs. */
static void entry_state(const repair *r, size_t i, int32_t qs, bool *restore_bad, bool *evict_bad)
{
    const plan_entry *e = &r->p->entries[i];
    const plan_sim_ent *t = &r->tr.ents[i];
    int32_t qg = in_gap(r->c, &r->c->gaps[plan_ctx_find_gap(r->c, e->alloc, e->evict_after)], qs);
    double win_start = qs ? r->tr.ops[qs - 1].end : r->tr.step_start;
    *restore_bad = e->need != PLAN_NO_OP && e->prefetch_at <= qg &&
                   shift(r, t->restore_start, e->prefetch_at, qg) < r->tr.ops[qs].end;
    *evict_bad = shift(r, t->evict_done, e->evict_after, qg) > win_start;
}

/* Estimated stall of freeing gap g during step position qs; false if nothing is to be won. */
static bool option_cost(const repair *r, uint32_t g, int32_t qs, double *cost)
{
    const plan_ctx *c = r->c;
    const plan_gap *gp = &c->gaps[g];
    int32_t qg = in_gap(c, gp, qs), i = r->entry_of[g];
    uint64_t bytes = c->m->allocs[gp->alloc].moved;
    bool restore = gp->kind != PLAN_GAP_TAIL, evict = true;
    double evict_done = end_of(r, gp->a, qg) + plan_ctx_evict_us(c, bytes);
    if (i >= 0) {
        if ((size_t)i >= r->traced)
            return false;
        entry_state(r, (size_t)i, qs, &restore, &evict);
        if (!restore && !evict)
            return false;
        evict_done = shift(r, r->tr.ents[i].evict_done, r->p->entries[i].evict_after, qg);
    }
    double wait = evict ? PLAN_MAX(0.0, evict_done - ready_of(r, qg, qg)) : 0;
    double late = restore ? PLAN_MAX(0.0, plan_ctx_restore_us(c, bytes) -
                                              (ready_of(r, gp->b, qg) - r->tr.ops[qs].end))
                          : 0;
    *cost = wait + late;
    return true;
}

/* Fixes entry i so that it is off the device during the whole window of step position qs;
 * returns whether anything changed. */
static bool fix_entry(repair *r, size_t i, int32_t qs)
{
    plan_entry *e = &r->p->entries[i];
    int32_t qg = in_gap(r->c, &r->c->gaps[plan_ctx_find_gap(r->c, e->alloc, e->evict_after)], qs);
    bool restore_bad, evict_bad, changed = false;
    entry_state(r, i, qs, &restore_bad, &evict_bad);
    if (restore_bad)
        e->prefetch_at = qg + 1, changed = true;
    if (evict_bad) {
        if (e->wait_at == PLAN_NO_OP || e->wait_at > qg)
            e->wait_at = qg, changed = true;
        else if (e->wait_at == qg && qg - 1 > e->evict_after)
            e->wait_at = qg - 1, changed = true;
    }
    if (e->need != PLAN_NO_OP && e->wait_at > e->prefetch_at)
        e->prefetch_at = e->wait_at; /* canonical: nothing waits after the copy back is issued */
    return changed;
}

/* Adds gap g, not in the plan yet, so that it is off the device during step position qs. */
static plan_err add_gap(repair *r, uint32_t g, int32_t qs)
{
    const plan_ctx *c = r->c;
    const plan_gap *gp = &c->gaps[g];
    int32_t qg = in_gap(c, gp, qs);
    plan_entry e = plan_place_one(c, g, qg + 1);
    double done = end_of(r, gp->a, qg) + plan_ctx_evict_us(c, c->m->allocs[gp->alloc].moved);
    if (done > r->tr.ops[qs].start)
        e.wait_at = qg;
    if (plan_push(r->p, e))
        return PLAN_ERR_NOMEM;
    r->entry_of[g] = (int32_t)(r->p->n - 1);
    return PLAN_OK;
}

/* Fixes step position q with the gaps covering it, cand[0..nc): cheapest estimated stall
 * first until the excess is covered. */
static plan_err fix_op(repair *r, int32_t q, size_t nc, bool *changed)
{
    const plan_ctx *c = r->c;
    int64_t excess = (int64_t)r->tr.ops[q].level - (int64_t)r->budget;
    size_t no = 0;
    for (size_t k = 0; k < nc; k++) {
        double cost;
        if (option_cost(r, r->cand[k], q, &cost))
            r->opt[no++] =
                (option){cost, c->m->allocs[c->gaps[r->cand[k]].alloc].bytes, r->cand[k]};
    }
    qsort(r->opt, no, sizeof(*r->opt), option_cmp);
    for (size_t k = 0; k < no && excess > 0; k++) {
        uint32_t g = r->opt[k].gap;
        if (r->entry_of[g] < 0) {
            if (add_gap(r, g, q))
                return PLAN_ERR_NOMEM;
        } else if (!fix_entry(r, (size_t)r->entry_of[g], q)) {
            continue;
        }
        excess -= (int64_t)r->opt[k].bytes;
        *changed = true;
    }
    return PLAN_OK;
}

/* One sweep over the step: the pieces covering q are kept in r->act. */
static plan_err fix_round(repair *r, bool *changed)
{
    const plan_ctx *c = r->c;
    size_t next = 0, nact = 0;
    plan_err e = index_entries(r);
    for (int32_t q = 0; q < (int32_t)c->n && !e; q++) {
        while (next < r->npc && r->pc[next].lo <= q)
            r->act[nact++] = (uint32_t)next++;
        size_t k = 0;
        for (size_t j = 0; j < nact; j++)
            if (r->pc[r->act[j]].hi >= q)
                r->act[k++] = r->act[j];
        nact = k;
        if (r->tr.ops[q].level <= r->budget)
            continue;
        for (size_t j = 0; j < nact; j++)
            r->cand[j] = r->pc[r->act[j]].gap;
        e = fix_op(r, q, nact, changed);
    }
    return e;
}

static plan_err direct(repair *r)
{
    plan_err e = build_pieces(r);
    for (int round = 0; round < FIX_ROUNDS && !e && !r->st.feasible; round++) {
        bool changed = false;
        e = fix_round(r, &changed);
        if (!e && !changed)
            break;
        if (!e)
            e = judge(r);
    }
    return e;
}

static plan_err last_resort(repair *r)
{
    if (r->best_st.feasible || r->budget < r->c->floor_peak)
        return PLAN_OK;
    plan_err e = plan_maximal(r->c, r->p);
    return e ? e : judge(r);
}

plan_err plan_repair(const plan_ctx *c, uint64_t budget, plan *p, plan_stats *st)
{
    repair r = {.c = c, .budget = budget, .p = p, .best_st = *st};
    plan_init(&r.best);
    r.tr.ops = malloc(c->n * sizeof(*r.tr.ops));
    plan_err e = r.tr.ops ? copy_plan(&r.best, p) : PLAN_ERR_NOMEM;
    if (!e)
        e = judge(&r);
    if (!e)
        e = feedback(&r);
    if (!e && !r.best_st.feasible) {
        e = copy_plan(p, &r.best);
        r.st = r.best_st;
        if (!e)
            e = judge(&r);
    }
    if (!e)
        e = direct(&r);
    if (!e)
        e = last_resort(&r);
    if (!e) {
        e = copy_plan(p, &r.best);
        *st = r.best_st;
    }
    plan_free(&r.best);
    free(r.tr.ops), free(r.tr.ents), free(r.entry_of);
    free(r.pc), free(r.act), free(r.cand), free(r.opt);
    return e;
}
