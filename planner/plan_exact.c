/* planner/plan_exact.c — the exact planner: the best canonical plan, by branch and bound.
 *
 * Canonical plans: every chosen gap is evicted right after its last touch (evict_after = a);
 * its copy back is issued at any k in (a, b] and any one operation w in (a, k] may wait for the
 * eviction, or none; a gap ending in a death has no copy back and w in (a, death]. The
 * scheduled planner only produces canonical plans, so exact <= scheduled holds by construction,
 * and the maximal plan (plan_place.c) reaching the floor is canonical, so exact finds a plan
 * within any budget at or above the floor.
 *
 * Objective: within the budget, the least stall (steady step time). Among plans of equal stall
 * the first found is kept, the seed first: the scheduled plan, which already prefers fewer bytes.
 *
 * Cut by memory: a gap decided resident holds its bytes during every operation it spans, on
 * top of the floor; when that exceeds the budget somewhere, no completion is feasible. Gaps are
 * decided largest first so that this cut bites early.
 *
 * Cut by time: adding an entry to a plan never makes any event earlier (every start time is a max
 * of earlier end times plus durations, and first-come-first-served engines only get busier), so
 * neither the steady step time nor the bytes moved can decrease. A partial plan (gaps decided in
 * order, the rest resident) therefore bounds every completion from below, and a node whose
 * partial plan's stall is not strictly below the best complete plan's is cut. The search starts
 * from the best of the scheduled and the maximal plans, and stops at once when that reaches the
 * lower bound of plan_bound.c. Two resources bend the premise: the mover (plan_mover.c) gives a
 * remap the first idle stretch long enough, so a move delayed by an added one can open a stretch
 * that lets a later remap start earlier; and under link_both a copy delayed past the other
 * direction's copies runs faster. A cut may then drop a better plan; the brute force of
 * tests/planner/test_plan_exact.c (remaps up to 25 us, copies up to 10 us) has found none. */
#include "plan_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct exact {
    const plan_ctx *c;
    uint64_t budget;
    uint32_t *order; /* gaps in decision order: largest first */
    uint64_t *kept;  /* per op: floor plus the bytes of gaps decided resident */
    uint8_t *fixed;  /* gaps decided resident */
    plan cur;
    plan best;
    plan_stats best_st;
    uint64_t nodes, max_nodes;
    plan_err err;
} exact;

/* Cost order of the objective: negative when a's stall is strictly below b's. */
static int cost_cmp(const plan_stats *a, const plan_stats *b)
{
    double tol = PLAN_EPS * PLAN_MAX(1.0, PLAN_MAX(a->step_us, b->step_us));
    if (fabs(a->stall_us - b->stall_us) > tol)
        return a->stall_us < b->stall_us ? -1 : 1;
    return 0;
}

static bool evaluate(exact *x, plan_stats *st)
{
    if (++x->nodes > x->max_nodes) {
        x->err = PLAN_ERR_LIMIT;
        return false;
    }
    plan_err e = plan_sim_run(x->c, &x->cur, x->budget, st, NULL);
    if (e) {
        x->err = e;
        return false;
    }
    return true;
}

static bool keep_if_better(exact *x, const plan_stats *st)
{
    if (!st->feasible || (x->best_st.feasible && cost_cmp(st, &x->best_st) >= 0))
        return true;
    x->best.n = 0;
    for (size_t i = 0; i < x->cur.n; i++)
        if ((x->err = plan_push(&x->best, x->cur.entries[i])))
            return false;
    x->best_st = *st;
    return true;
}

static void search(exact *x, size_t d);

/* Adds v to the kept bytes of the operations gap g covers; returns whether they all stay within
 * the budget. Whatever the other gaps do, a gap decided resident holds its bytes there. */
static bool keep_resident(exact *x, const plan_gap *g, int64_t v)
{
    int64_t n = (int64_t)x->c->n;
    bool fits = true;
    for (int64_t q = g->a + 1; q <= g->last; q++) {
        uint64_t *k = &x->kept[q % n];
        *k = (uint64_t)((int64_t)*k + v);
        fits &= *k <= x->budget;
    }
    return fits;
}

/* Whether plans keeping the gaps fixed so far resident may still beat the best stall. */
static bool bound_allows(exact *x)
{
    double lb;
    if (!x->best_st.feasible)
        return true;
    if ((x->err = plan_bound_fixed(x->c, x->budget, x->fixed, &lb)))
        return false;
    return lb < x->best_st.stall_us - PLAN_EPS * PLAN_MAX(1.0, x->best_st.step_us);
}

/* Tries the gap of depth d with the entry (k, w) appended, then the following gaps. */
static void try_option(exact *x, size_t d, int32_t k, int32_t w)
{
    if ((x->err = plan_push(&x->cur, plan_ctx_entry(x->c, x->order[d], k, w))))
        return;
    plan_stats st;
    if (evaluate(x, &st)) {
        bool cut = x->best_st.feasible && cost_cmp(&st, &x->best_st) >= 0;
        if (!cut) {
            if (keep_if_better(x, &st))
                search(x, d + 1);
        }
    }
    x->cur.n--;
}

/* Decides the gaps of depth d.. : resident first, then every canonical entry. */
static void search(exact *x, size_t d)
{
    if (x->err || d >= x->c->ngaps)
        return;
    const plan_gap *gp = &x->c->gaps[x->order[d]];
    int64_t bytes = (int64_t)x->c->m->allocs[gp->alloc].bytes;
    x->fixed[x->order[d]] = 1;
    if (keep_resident(x, gp, bytes) && bound_allows(x))
        search(x, d + 1);
    keep_resident(x, gp, -bytes);
    x->fixed[x->order[d]] = 0;
    bool tail = gp->kind == PLAN_GAP_TAIL;
    int32_t kmax = tail ? gp->a + 1 : gp->b;
    for (int32_t k = kmax; k > gp->a && !x->err; k--) {
        int32_t wmax = tail ? gp->last : k;
        try_option(x, d, tail ? PLAN_NO_OP : k, PLAN_NO_OP);
        for (int32_t w = wmax; w > gp->a && !x->err; w--)
            try_option(x, d, tail ? PLAN_NO_OP : k, w);
    }
}

/* The starting incumbent: the better of the scheduled and maximal plans. */
static plan_err seed(exact *x)
{
    plan s, mx;
    plan_stats ss, ms;
    plan_init(&s);
    plan_init(&mx);
    plan_err e = plan_scheduled(x->c, x->budget, &s);
    if (!e)
        e = plan_maximal(x->c, &mx);
    if (!e)
        e = plan_sim_run(x->c, &s, x->budget, &ss, NULL);
    if (!e)
        e = plan_sim_run(x->c, &mx, x->budget, &ms, NULL);
    if (!e) {
        bool use_s = plan_stats_cmp(&ss, &ms) <= 0;
        plan_free(&x->best);
        x->best = use_s ? s : mx;
        x->best_st = use_s ? ss : ms;
        plan_free(use_s ? &mx : &s);
        return PLAN_OK;
    }
    plan_free(&s);
    plan_free(&mx);
    return e;
}

static int bigger_first(const void *a, const void *b, void *arg)
{
    const plan_ctx *c = arg;
    uint64_t x = c->m->allocs[c->gaps[*(const uint32_t *)a].alloc].bytes;
    uint64_t y = c->m->allocs[c->gaps[*(const uint32_t *)b].alloc].bytes;
    if (x != y)
        return x > y ? -1 : 1;
    return (*(const uint32_t *)a > *(const uint32_t *)b) -
           (*(const uint32_t *)a < *(const uint32_t *)b);
}

static plan_err exact_init(exact *x)
{
    const plan_ctx *c = x->c;
    x->order = malloc((c->ngaps + 1) * sizeof(*x->order));
    x->kept = malloc(c->n * sizeof(*x->kept));
    x->fixed = calloc(c->ngaps + 1, 1);
    if (!x->order || !x->kept || !x->fixed)
        return PLAN_ERR_NOMEM;
    for (size_t g = 0; g < c->ngaps; g++)
        x->order[g] = (uint32_t)g;
    qsort_r(x->order, c->ngaps, sizeof(*x->order), bigger_first, (void *)c);
    memcpy(x->kept, c->floor, c->n * sizeof(*x->kept));
    return PLAN_OK;
}

plan_err plan_exact(const plan_ctx *c, uint64_t budget, plan *out)
{
    if (c->ngaps > PLAN_EXACT_MAX_GAPS)
        return PLAN_ERR_LIMIT;
    double per = (double)(c->n + c->ngaps + 1);
    exact x = {.c = c,
               .budget = budget,
               .max_nodes =
                   (uint64_t)PLAN_MIN((double)PLAN_EXACT_MAX_NODES, PLAN_EXACT_WORK / per)};
    plan_init(&x.cur);
    plan_init(&x.best);
    double lb = 0;
    plan_err e = exact_init(&x);
    if (!e)
        e = seed(&x);
    if (!e)
        e = plan_bound_ctx(c, budget, &lb);
    bool done = x.best_st.stall_us <= lb + PLAN_EPS * PLAN_MAX(1.0, x.best_st.step_us);
    if (!e && x.best_st.feasible && !done) { /* below the floor nothing is feasible */
        plan_stats st;
        if (evaluate(&x, &st) && keep_if_better(&x, &st))
            search(&x, 0);
        e = x.err;
    }
    plan_free(&x.cur);
    free(x.order);
    free(x.kept);
    free(x.fixed);
    if (e) {
        plan_free(&x.best);
        return e;
    }
    plan_free(out);
    *out = x.best;
    return PLAN_OK;
}
