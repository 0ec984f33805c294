/* planner/plan_host_pick.c — the third placement chosen (plan_opts.host): which allocations read
 * sparsely stay on the host, and the floor and lower bound over plans that may keep them there.
 *
 * The choice is a greedy over the allocations read sparsely, cheapest reads per byte freed first
 * (the time their touches' reads add, plan_host_read_us, over the bytes they hold), capped at
 * HOST_CANDIDATES of them. Each candidate set is verified by planning the rest with the same
 * planner and simulating it (plan_host_plan), judged by plan_stats_cmp, whose stall counts the
 * reads: first every prefix of that order, then rounds of local moves from the best set found
 * (add or remove one candidate; swap one in for one out) until a round improves nothing. The
 * plan without host residency is the first one judged, so the result is never worse than it;
 * HOST_TRIALS plannings at most, in a fixed order (deterministic, bounded on any model). */
#include "plan_internal.h"

#include "base_order.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HOST_CANDIDATES 12 /* allocations considered */
#define HOST_TRIALS     64 /* plannings at most */

/* Time allocation x's touches spend reading it from the host per step. */
static double alloc_read_us(const plan_model *m, size_t x)
{
    const plan_alloc *a = &m->allocs[x];
    double us = 0;
    for (uint32_t k = 0; k < a->ntouch; k++)
        us += plan_host_read_us(&m->hw, plan_touch_read(m, a, a->touch_first + k));
    return us;
}

typedef struct cand {
    uint32_t x;
    double per_byte; /* read time per byte freed */
} cand;

static int by_cost(const void *a, const void *b)
{
    const cand *p = a, *q = b;
    return BASE_CMP_THEN(p->per_byte, q->per_byte, BASE_CMP(p->x, q->x));
}

/* The allocations of c's model read sparsely, cheapest first, into a new array *out of *n. */
static plan_err candidates(const plan_ctx *c, cand **out, size_t *n)
{
    const plan_model *m = c->m;
    *n = 0;
    *out = malloc((m->nallocs + 1) * sizeof(**out));
    if (!*out)
        return PLAN_ERR_NOMEM;
    for (size_t x = 0; x < m->nallocs; x++)
        if (plan_alloc_sparse(m, x))
            (*out)[(*n)++] = (cand){(uint32_t)x, alloc_read_us(m, x) / (double)m->allocs[x].bytes};
    qsort(*out, *n, sizeof(**out), by_cost);
    return PLAN_OK;
}

/* Search state: the best plan and its set, a scratch plan for each trial, trials left. */
typedef struct pick {
    const plan_ctx *c;
    plan_kind kind;
    uint64_t budget;
    plan *best;
    plan_stats *bst;
    uint8_t *best_set, *trial_set;
    plan trial;
    unsigned left;
} pick;

/* Plans with trial_set on the host; keeps it when better than the best (*better). */
static plan_err try_set(pick *s, bool *better)
{
    plan_stats st;
    s->left--;
    plan_err e = plan_host_plan(s->c, s->kind, s->budget, s->trial_set, &s->trial, &st);
    if (e || plan_stats_cmp(&st, s->bst) >= 0)
        return e;
    plan swap = *s->best;
    *s->best = s->trial;
    s->trial = swap;
    *s->bst = st;
    memcpy(s->best_set, s->trial_set, s->c->m->nallocs);
    *better = true;
    return PLAN_OK;
}

/* The best set with candidate x flipped, and with y flipped too unless y is UINT32_MAX. */
static plan_err try_flip(pick *s, uint32_t x, uint32_t y, bool *better)
{
    memcpy(s->trial_set, s->best_set, s->c->m->nallocs);
    s->trial_set[x] ^= 1;
    if (y != UINT32_MAX)
        s->trial_set[y] ^= 1;
    return try_set(s, better);
}

/* Rounds of local moves from the best set: each candidate added or removed, then each pair of
   one in the set and one out swapped; until a round improves nothing or the trials run out. */
static plan_err local_moves(pick *s, const cand *cs, size_t n)
{
    bool better = true;
    plan_err e = PLAN_OK;
    while (better && s->left && !e) {
        better = false;
        for (size_t j = 0; j < n && s->left && !e; j++)
            e = try_flip(s, cs[j].x, UINT32_MAX, &better);
        for (size_t i = 0; i < n && !better && !e; i++)
            for (size_t j = 0; j < n && s->left && !better && !e; j++)
                if (s->best_set[cs[i].x] && !s->best_set[cs[j].x])
                    e = try_flip(s, cs[i].x, cs[j].x, &better);
    }
    return e;
}

/* Improves *best (the plan without host residency, *bst its outcome) by keeping candidates on
   the host (the file's comment). */
static plan_err choose(const plan_ctx *c, plan_kind kind, uint64_t budget, plan *best,
                       plan_stats *bst)
{
    if (bst->feasible && bst->stall_us <= 0)
        return PLAN_OK; /* nothing to gain: reads only add time */
    cand *cs;
    size_t n;
    plan_err e = candidates(c, &cs, &n);
    size_t na = c->m->nallocs + 1;
    pick s = {.c = c, .kind = kind, .budget = budget, .best = best, .bst = bst};
    s.best_set = calloc(na, 1);
    s.trial_set = calloc(na, 1);
    s.left = HOST_TRIALS;
    plan_init(&s.trial);
    if (!e && (!s.best_set || !s.trial_set))
        e = PLAN_ERR_NOMEM;
    n = PLAN_MIN(n, HOST_CANDIDATES);
    bool better = false;
    for (size_t j = 0; j < n && !e; j++) { /* every prefix of the cheapest-first order */
        s.trial_set[cs[j].x] = 1;
        e = try_set(&s, &better);
    }
    if (!e)
        e = local_moves(&s, cs, n);
    plan_free(&s.trial);
    free(s.best_set);
    free(s.trial_set);
    free(cs);
    return e;
}

plan_err plan_make_ctx_opts(const plan_ctx *c, plan_kind kind, uint64_t budget, const plan_opts *o,
                            plan *out, plan_stats *st)
{
    plan_err e = plan_make_ctx(c, kind, budget, out, st);
    if (e || !o || !o->host || (kind != PLAN_KIND_SCHEDULED && kind != PLAN_KIND_REACTIVE))
        return e;
    return choose(c, kind, budget, out, st);
}

/* Whether any allocation of m is read sparsely. */
static bool any_sparse(const plan_model *m)
{
    for (size_t x = 0; x < m->nallocs; x++)
        if (plan_alloc_sparse(m, x))
            return true;
    return false;
}

plan_err plan_floor_ctx_opts(const plan_ctx *c, const plan_opts *o, uint64_t *floor)
{
    *floor = c->floor_peak;
    if (!o || !o->host || !any_sparse(c->m))
        return PLAN_OK;
    uint8_t *on_host = calloc(c->m->nallocs + 1, 1);
    uint32_t *idx = malloc((c->m->nallocs + 1) * sizeof(*idx));
    plan_model rm;
    plan_ctx rc = {0};
    plan_model_init(&rm);
    plan_err e = on_host && idx ? PLAN_OK : PLAN_ERR_NOMEM;
    for (size_t x = 0; x < c->m->nallocs && !e; x++)
        on_host[x] = plan_alloc_sparse(c->m, x);
    double us;
    uint64_t bytes;
    if (!e)
        e = plan_host_model(c->m, on_host, &rm, idx, &us, &bytes);
    if (!e)
        e = plan_ctx_init(&rc, &rm, NULL, 0);
    if (!e)
        *floor = rc.floor_peak;
    plan_ctx_free(&rc);
    plan_model_free(&rm);
    free(idx);
    free(on_host);
    return e;
}

/* The bound over plans that may keep allocations read sparsely on the host (the proof is in
 * plan_bound.c, claim 10): such a plan either keeps none there, and the bound of today's plans
 * holds, or keeps at least one there, and its operations spend at least the reads of the
 * cheapest one (r_min) on top of their durations, which counts as stall; below the floor without
 * them no plan holds the budget. */
plan_err plan_bound_ctx_opts(const plan_ctx *c, uint64_t budget, const plan_opts *o, double *lb_us)
{
    plan_err e = plan_bound_ctx(c, budget, lb_us);
    if (e || !o || !o->host || !any_sparse(c->m))
        return e;
    uint64_t floor;
    if ((e = plan_floor_ctx_opts(c, o, &floor)))
        return e;
    if (budget < floor) {
        *lb_us = INFINITY;
        return PLAN_OK;
    }
    double r_min = INFINITY;
    for (size_t x = 0; x < c->m->nallocs; x++)
        if (plan_alloc_sparse(c->m, x))
            r_min = PLAN_MIN(r_min, alloc_read_us(c->m, x));
    *lb_us = PLAN_MIN(*lb_us, r_min);
    return PLAN_OK;
}

plan_err plan_make_opts(const plan_model *m, plan_kind kind, uint64_t budget, const plan_opts *o,
                        plan *out, plan_stats *st)
{
    plan_ctx c;
    plan_err e = plan_ctx_init(&c, m, NULL, 0);
    if (e)
        return e;
    e = plan_make_ctx_opts(&c, kind, budget, o, out, st);
    plan_ctx_free(&c);
    return e;
}

plan_err plan_peaks_opts(const plan_model *m, const plan_opts *o, uint64_t *native, uint64_t *floor)
{
    plan_ctx c;
    plan_err e = plan_ctx_init(&c, m, NULL, 0);
    if (e)
        return e;
    *native = c.native_peak;
    e = plan_floor_ctx_opts(&c, o, floor);
    plan_ctx_free(&c);
    return e;
}

plan_err plan_lower_bound_opts(const plan_model *m, uint64_t budget, const plan_opts *o,
                               double *lb_us)
{
    plan_ctx c;
    plan_err e = plan_ctx_init(&c, m, NULL, 0);
    if (e)
        return e;
    e = plan_bound_ctx_opts(&c, budget, o, lb_us);
    plan_ctx_free(&c);
    return e;
}
