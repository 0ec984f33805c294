/* planner/plan_improve.c — spends the budget's slack to remove stalls, judged by the simulator.
 *
 * Two stages, both keeping a change only when the simulated outcome improves (plan_stats_cmp):
 *   1. batch: every copy back that finished after its operation was ready is issued earlier by
 *      as much as it was late (on the simulated timeline), all at once; when that breaks the
 *      budget, the later half only, and so on;
 *   2. local search over single moves in the canonical space (drop an entry, issue its copy back
 *      one operation earlier or later, wait one operation earlier or later, stop or start
 *      waiting, add a gap), first improvement, until no move helps or the work budget is spent.
 *      The budget is IMPROVE_WORK operation-steps of simulation, so large models only get the
 *      batch stage and small ones are searched thoroughly. */
#include "plan_internal.h"

#include "base_order.h"

#include <stdlib.h>
#include <string.h>

#define BATCH_ROUNDS   6
#define BATCH_HALVINGS 5
#define MIN_EVALS      32 /* below this the local search is not worth starting */
#define IMPROVE_WORK   1000000.0
#define IMPROVE_EVALS  6000

typedef struct improver {
    const plan_ctx *c;
    uint64_t budget;
    plan *p;
    plan_stats st;
    plan_trace tr;
    uint32_t *gap_of;
    long evals_left;
} improver;

static plan_err sim_traced(improver *im, plan_stats *st)
{
    return plan_sim_run(im->c, im->p, im->budget, st, &im->tr);
}

/* ---- stage 1: batch ----------------------------------------------------------------------- */

typedef struct late_ent {
    double late;
    uint32_t ent;
    int32_t k;
} late_ent;

static int late_cmp(const void *a, const void *b)
{
    const late_ent *x = a, *y = b;
    return BASE_CMP_THEN(y->late, x->late, BASE_CMP(x->ent, y->ent));
}

/* Simulated time at which unrolled position q of an entry became ready, in the instance whose
 * event at position pos the trace recorded. */
static double ready_at(const improver *im, int32_t q, int32_t pos)
{
    int32_t n = (int32_t)im->c->n;
    int32_t qs = q % n;
    double t = qs ? im->tr.ops[qs - 1].end : im->tr.step_start;
    return t + im->st.step_us * ((q >= n) - (pos >= n));
}

/* Earliest-issue position for entry i so that its copy back starts `late` earlier. */
static int32_t earlier_k(const improver *im, size_t i, double late)
{
    const plan_entry *e = &im->p->entries[i];
    double target = im->tr.ents[i].restore_start - late;
    int32_t k = e->prefetch_at;
    while (k - 1 > e->evict_after && ready_at(im, k, e->prefetch_at) > target + 1e-12)
        k--;
    if (k == e->prefetch_at && k - 1 > e->evict_after)
        k--;
    if (e->wait_at != PLAN_NO_OP && k < e->wait_at)
        k = e->wait_at;
    return k;
}

static size_t collect_late(improver *im, late_ent *ls)
{
    size_t n = 0;
    for (size_t i = 0; i < im->p->n; i++) {
        const plan_entry *e = &im->p->entries[i];
        if (e->need == PLAN_NO_OP)
            continue;
        double late = im->tr.ents[i].restore_done - ready_at(im, e->need, e->prefetch_at);
        if (late > 1e-9 * PLAN_MAX(1.0, im->st.step_us)) {
            int32_t k = earlier_k(im, i, late);
            if (k < e->prefetch_at)
                ls[n++] = (late_ent){late, (uint32_t)i, k};
        }
    }
    qsort(ls, n, sizeof(*ls), late_cmp);
    return n;
}

/* Applies the first m moves of ls; keeps them if the outcome improves. */
static plan_err try_batch(improver *im, late_ent *ls, size_t m, bool *kept)
{
    int32_t *old = malloc((m ? m : 1) * sizeof(*old));
    if (!old)
        return PLAN_ERR_NOMEM;
    for (size_t j = 0; j < m; j++) {
        old[j] = im->p->entries[ls[j].ent].prefetch_at;
        im->p->entries[ls[j].ent].prefetch_at = ls[j].k;
    }
    plan_stats st;
    plan_err e = plan_sim_run(im->c, im->p, im->budget, &st, NULL);
    *kept = !e && plan_stats_cmp(&st, &im->st) < 0;
    if (*kept)
        im->st = st;
    else
        for (size_t j = 0; j < m; j++)
            im->p->entries[ls[j].ent].prefetch_at = old[j];
    free(old);
    return e;
}

static plan_err batch(improver *im)
{
    late_ent *ls = malloc((im->p->n + 1) * sizeof(*ls));
    if (!ls)
        return PLAN_ERR_NOMEM;
    plan_err e = PLAN_OK;
    for (int round = 0; round < BATCH_ROUNDS && !e && im->st.stall_us > 0; round++) {
        plan_stats st;
        if ((e = sim_traced(im, &st)))
            break;
        size_t n = collect_late(im, ls);
        bool kept = false;
        int halvings = 0;
        for (size_t m = n; m > 0 && !kept && !e && halvings < BATCH_HALVINGS; m /= 2, halvings++)
            e = try_batch(im, ls, m, &kept);
        if (!kept)
            break;
    }
    free(ls);
    return e;
}

/* ---- stage 2: local search --------------------------------------------------------------- */

typedef enum move_kind { MOVE_SET, MOVE_DROP, MOVE_ADD } move_kind;

/* A single change: entry `ent` gets (k, w), or is dropped, or gap `gap` is added with (k, w). */
typedef struct move {
    move_kind kind;
    uint32_t ent, gap;
    int32_t k, w;
} move;

typedef struct undo {
    move_kind kind;
    uint32_t ent;
    plan_entry old;
} undo;

static plan_err apply(improver *im, const move *mv, undo *u)
{
    plan *p = im->p;
    u->kind = mv->kind;
    u->ent = mv->ent;
    switch (mv->kind) {
    case MOVE_SET:
        u->old = p->entries[mv->ent];
        p->entries[mv->ent].prefetch_at = mv->k;
        p->entries[mv->ent].wait_at = mv->w;
        return PLAN_OK;
    case MOVE_DROP: /* swap with the last entry, which undo swaps back */
        u->old = p->entries[mv->ent];
        p->entries[mv->ent] = p->entries[p->n - 1];
        p->entries[p->n - 1] = u->old;
        p->n--;
        return PLAN_OK;
    default:
        return plan_push(p, plan_ctx_entry(im->c, mv->gap, mv->k, mv->w));
    }
}

static void revert(improver *im, const undo *u)
{
    plan *p = im->p;
    if (u->kind == MOVE_SET) {
        p->entries[u->ent] = u->old;
    } else if (u->kind == MOVE_DROP) {
        p->n++;
        p->entries[p->n - 1] = p->entries[u->ent];
        p->entries[u->ent] = u->old;
    } else {
        p->n--;
    }
}

/* Simulates the plan as it is; true (and recorded) when it beats the current outcome. */
static bool better_now(improver *im, plan_err *err)
{
    plan_stats st;
    im->evals_left--;
    *err = plan_sim_run(im->c, im->p, im->budget, &st, NULL);
    if (*err || plan_stats_cmp(&st, &im->st) >= 0)
        return false;
    im->st = st;
    return true;
}

/* Canonical (prefetch_at, wait_at) pairs next to entry e's; returns how many. */
static int neighbours(const plan_entry *e, const plan_gap *g, int32_t out[][2])
{
    int n = 0;
    int32_t k = e->prefetch_at, w = e->wait_at, wmax = g->kind == PLAN_GAP_TAIL ? g->last : k;
    if (g->kind != PLAN_GAP_TAIL) {
        if (k - 1 > g->a && (w == PLAN_NO_OP || w <= k - 1))
            out[n][0] = k - 1, out[n++][1] = w;
        if (k + 1 <= g->b)
            out[n][0] = k + 1, out[n++][1] = w;
    }
    if (w == PLAN_NO_OP) {
        out[n][0] = k, out[n++][1] = wmax;
        out[n][0] = k, out[n++][1] = g->a + 1;
    } else {
        out[n][0] = k, out[n++][1] = PLAN_NO_OP;
        if (w - 1 > g->a)
            out[n][0] = k, out[n++][1] = w - 1;
        if (w + 1 <= wmax)
            out[n][0] = k, out[n++][1] = w + 1;
    }
    return n;
}

/* Every single move from the current plan into mv (capacity 6 per entry + 2 per gap + 1 per
 * entry); returns how many. */
static size_t list_moves(improver *im, uint8_t *in_plan, move *mv)
{
    const plan_ctx *c = im->c;
    size_t n = 0;
    memset(in_plan, 0, c->ngaps ? c->ngaps : 1);
    for (uint32_t i = 0; i < im->p->n; i++) {
        const plan_entry *e = &im->p->entries[i];
        size_t g = plan_ctx_find_gap(c, e->alloc, e->evict_after);
        int32_t nb[6][2];
        int k = neighbours(e, &c->gaps[g], nb);
        in_plan[g] = 1;
        for (int j = 0; j < k; j++)
            mv[n++] = (move){MOVE_SET, i, (uint32_t)g, nb[j][0], nb[j][1]};
        mv[n++] = (move){MOVE_DROP, i, (uint32_t)g, 0, 0};
    }
    for (uint32_t g = 0; g < c->ngaps; g++) {
        if (in_plan[g])
            continue;
        plan_entry late = plan_place_one(c, g, 0);
        mv[n++] = (move){MOVE_ADD, 0, g, late.prefetch_at, PLAN_NO_OP};
        mv[n++] =
            (move){MOVE_ADD, 0, g, late.prefetch_at ? c->gaps[g].b : PLAN_NO_OP, c->gaps[g].a + 1};
    }
    return n;
}

/* Whether two moves may be combined: different entries and gaps, no drop (it reorders). */
static bool compatible(const move *a, const move *b)
{
    if (a->kind == MOVE_DROP || b->kind == MOVE_DROP || a->gap == b->gap)
        return false;
    return true;
}

/* First improving single move, then first improving pair. */
static plan_err try_moves(improver *im, move *mv, size_t n, bool *better)
{
    plan_err e = PLAN_OK;
    undo u, u2;
    *better = false;
    for (size_t i = 0; i < n && im->evals_left > 0; i++) {
        if ((e = apply(im, &mv[i], &u)))
            return e;
        if ((*better = better_now(im, &e)) || e)
            return e;
        revert(im, &u);
    }
    for (size_t i = 0; i < n && im->evals_left > 0; i++) {
        for (size_t j = i + 1; j < n && im->evals_left > 0; j++) {
            if (!compatible(&mv[i], &mv[j]))
                continue;
            if ((e = apply(im, &mv[i], &u)) || (e = apply(im, &mv[j], &u2)))
                return e;
            if ((*better = better_now(im, &e)) || e)
                return e;
            revert(im, &u2);
            revert(im, &u);
        }
    }
    return PLAN_OK;
}

static plan_err local_search(improver *im)
{
    const plan_ctx *c = im->c;
    double per = (double)(c->n + c->ngaps + 8) * 3.0;
    im->evals_left = (long)PLAN_MIN((double)IMPROVE_EVALS, IMPROVE_WORK / per);
    if (im->evals_left < MIN_EVALS)
        return PLAN_OK;
    uint8_t *in_plan = malloc(c->ngaps ? c->ngaps : 1);
    move *mv = malloc((7 * c->ngaps + 2 * c->ngaps + 1) * sizeof(*mv));
    plan_err e = in_plan && mv ? PLAN_OK : PLAN_ERR_NOMEM;
    bool better = true;
    while (better && im->evals_left > 0 && !e) {
        size_t n = list_moves(im, in_plan, mv);
        e = try_moves(im, mv, n, &better);
    }
    free(in_plan);
    free(mv);
    return e;
}

plan_err plan_improve(const plan_ctx *c, uint64_t budget, plan *p, plan_stats *st)
{
    improver im = {.c = c, .budget = budget, .p = p, .st = *st};
    im.tr.ops = malloc(c->n * sizeof(*im.tr.ops));
    plan_err e = im.tr.ops ? PLAN_OK : PLAN_ERR_NOMEM;
    if (!e && p->n) {
        im.tr.ents = malloc(p->n * sizeof(*im.tr.ents));
        e = im.tr.ents ? batch(&im) : PLAN_ERR_NOMEM;
    }
    if (!e && st->feasible == 0 && budget < c->floor_peak)
        goto out; /* nothing to win below the floor but peak, which the repair already did */
    if (!e)
        e = local_search(&im);
out:
    if (!e)
        *st = im.st;
    free(im.tr.ops);
    free(im.tr.ents);
    return e;
}
