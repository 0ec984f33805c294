/* planner/plan_bound.c — a lower bound on the stall of any plan that keeps the peak within a
 * budget B: the physical limit reported next to every plan.
 *
 * Notation. Nominal times are those of the stall-free step (prefix sums of durations); σ_j >= 0
 * is the stall before operation j in the steady state of some plan P whose peak is <= B, and S
 * its stall per step, the sum of σ_j over one step. Actual times are nominal plus the stalls
 * before them. live(p) is the number of bytes live during p, X_p = live(p) - B its excess.
 *
 * Claim 1 (who must leave). During the execution of p the device holds at most B bytes, so at
 * least X_p bytes of allocations live during p are off the device then. Each must be in an idle
 * gap covering p (a touched allocation is on the device; allocations no gap covers never leave):
 * its eviction was issued after the end of its last touch a < p and completed no later than the
 * start of p; unless it dies on host, its copy back started no earlier than the end of p and
 * ended no later than the start of its next touch b > p. If the bytes of the covering gaps do
 * not reach X_p, no plan holds B (bound = +infinity).
 *
 * Claim 2 (evictions before p). Let C be any set of covering gaps with at least X_p bytes and
 * q a position. All evictions of C whose last touch is at or after q run on one engine between
 * the actual end of q and the actual start of p, so
 *     start_p - end_q (nominal) + σ(q, p] >= bytes(C, a >= q) / bw_d2h + remap   (if > 0 bytes).
 * bytes(C, a >= q) >= X_p - bytes(all covering gaps with a < q) =: G(q), and the fractional
 * choice of the earliest-touched bytes reaches G(q) for every q at once. Hence
 *     σ(q, p] >= E_p := max over q of  G(q)^+ / bw_d2h + remap - (start_p - end_q).
 * Claim 3 (copies back after p), symmetrically with the next touches b and the bytes that must
 * come back (X_p minus covering gaps that die on host), latest need first:
 *     σ(p, b] >= R_p := max over b of  H(b)^+ / bw_h2d + remap - (start_b - end_p).
 * Claim 4 (combining). Both windows lie within n consecutive positions, so each σ sum is at
 * most S: S >= max(E_p, R_p). When no covering gap wraps around the step boundary the two
 * windows are disjoint parts of one step: S >= E_p + R_p.
 * Claim 5 (traffic). Every byte off the device at p is copied to host once per step, and back
 * once unless it dies on host, so a step moves at least D = max_p X_p bytes to host and
 * H = max_p (X_p - dying bytes)^+ back. One step lasts at least the compute time plus S and at
 * least the busy time of each engine (of the one shared engine when the link is not duplex):
 *     S >= D / bw_d2h + remap - compute, S >= H / bw_h2d + remap - compute (duplex), or
 *     S >= D / bw_d2h + H / bw_h2d + remaps - compute (shared link).
 * Claim 6 (both-busy link, link_both). Each both-busy rate is at most its direction's full rate
 * (plan_link_check), so under the fluid rule bytes never move faster than bw_d2h / bw_h2d: every
 * time used in claims 2, 3 and 5 is still a lower bound on the copies it counts, and the bound
 * holds unchanged (it ignores the slowdown, so it is weaker on such links, never wrong).
 * The bound is the largest of these, over the operations examined (all of them for small
 * models; the largest excesses up to a work limit otherwise: any subset gives a valid bound). */
#include "plan_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BOUND_WORK 400000.0 /* gap visits */

typedef struct bcand {
    double t_a, t_b; /* nominal end of the last touch, start of the next touch (relative to p) */
    uint64_t bytes;
    bool back; /* copied back */
} bcand;

static int by_a(const void *x, const void *y)
{
    const bcand *a = x, *b = y;
    return (a->t_a > b->t_a) - (a->t_a < b->t_a);
}

static int by_b(const void *x, const void *y)
{
    const bcand *a = x, *b = y;
    return (a->t_b > b->t_b) - (a->t_b < b->t_b);
}

/* Covering gaps of step position p, with times on p's own unrolled axis; sets *wrap when one
 * crosses the step boundary. */
static size_t candidates(const plan_ctx *c, int32_t p, const uint8_t *skip, bcand *out, bool *wrap,
                         uint64_t *dying)
{
    size_t k = 0;
    *wrap = false;
    *dying = 0;
    for (size_t g = 0; g < c->ngaps; g++) {
        const plan_gap *gp = &c->gaps[g];
        if (skip && skip[g])
            continue;
        int32_t pr = p > gp->a ? p : p + (int32_t)c->n;
        if (pr > gp->last)
            continue;
        double shift = pr != p ? c->compute : 0; /* p lies in the next step of this gap */
        uint64_t b = c->m->allocs[gp->alloc].bytes;
        out[k].bytes = b;
        out[k].t_a = plan_ctx_end_at(c, gp->a) - shift;
        out[k].back = gp->kind != PLAN_GAP_TAIL;
        out[k].t_b = out[k].back ? plan_ctx_start_at(c, gp->b) - shift : INFINITY;
        *wrap |= gp->kind == PLAN_GAP_WRAP;
        if (!out[k].back)
            *dying += b;
        k++;
    }
    return k;
}

/* E_p: evictions that must finish by the start of p. */
static double evict_part(const plan_ctx *c, bcand *cs, size_t k, uint64_t x, double start_p)
{
    qsort(cs, k, sizeof(*cs), by_a);
    double best = 0;
    uint64_t before = 0;
    for (size_t i = 0; i < k; i++) {
        if (i && cs[i].t_a != cs[i - 1].t_a)
            for (size_t j = i; j-- > 0 && cs[j].t_a == cs[i - 1].t_a;)
                before += cs[j].bytes;
        if (before >= x)
            break;
        double need = (double)(x - before) * c->d2h_us_per_byte + c->m->hw.remap_us;
        best = PLAN_MAX(best, need - (start_p - cs[i].t_a));
    }
    return best;
}

/* R_p: copies back that must finish by their next touches. */
static double restore_part(const plan_ctx *c, bcand *cs, size_t k, uint64_t x, double end_p)
{
    qsort(cs, k, sizeof(*cs), by_b);
    double best = 0;
    uint64_t after = 0; /* bytes with a later next touch */
    for (size_t i = k; i-- > 0;) {
        if (!cs[i].back)
            continue;
        if (i + 1 < k && cs[i].t_b != cs[i + 1].t_b)
            for (size_t j = i + 1; j < k && cs[j].t_b == cs[i + 1].t_b; j++)
                after += cs[j].back ? cs[j].bytes : 0;
        if (after >= x)
            break;
        double need = (double)(x - after) * c->h2d_us_per_byte + c->m->hw.remap_us;
        best = PLAN_MAX(best, need - (cs[i].t_b - end_p));
    }
    return best;
}

static double op_bound(const plan_ctx *c, int32_t p, uint64_t budget, const uint8_t *skip,
                       bcand *cs)
{
    bool wrap;
    uint64_t dying, x = c->live[p] - budget, total = 0;
    size_t k = candidates(c, p, skip, cs, &wrap, &dying);
    for (size_t i = 0; i < k; i++)
        total += cs[i].bytes;
    if (total < x)
        return INFINITY;
    double e = evict_part(c, cs, k, x, c->start[p]);
    double r = x > dying ? restore_part(c, cs, k, x - dying, c->start[p + 1]) : 0;
    return wrap ? PLAN_MAX(e, r) : e + r;
}

/* Claim 5 from the largest excesses. */
static double traffic_bound(const plan_ctx *c, uint64_t budget, const uint64_t *dying_of)
{
    uint64_t d = 0, h = 0;
    for (size_t p = 0; p < c->n; p++) {
        if (c->live[p] <= budget)
            continue;
        uint64_t x = c->live[p] - budget;
        d = PLAN_MAX(d, x);
        h = PLAN_MAX(h, x > dying_of[p] ? x - dying_of[p] : 0);
    }
    double rm = c->m->hw.remap_us;
    double td = d ? (double)d * c->d2h_us_per_byte + rm : 0;
    double th = h ? (double)h * c->h2d_us_per_byte + rm : 0;
    double busy = c->m->hw.duplex ? PLAN_MAX(td, th) : td + th;
    return PLAN_MAX(0.0, busy - c->compute);
}

typedef struct excess {
    uint64_t x;
    int32_t p;
} excess;

static int by_excess(const void *a, const void *b)
{
    const excess *x = a, *y = b;
    if (x->x != y->x)
        return x->x > y->x ? -1 : 1;
    return (x->p > y->p) - (x->p < y->p);
}

/* Bytes of gaps dying on host that cover each operation. */
static uint64_t *dying_bytes(const plan_ctx *c)
{
    int64_t *d = calloc(c->n + 1, sizeof(*d));
    uint64_t *out = malloc(c->n * sizeof(*out));
    if (!d || !out) {
        free(d);
        free(out);
        return NULL;
    }
    for (size_t g = 0; g < c->ngaps; g++) {
        if (c->gaps[g].kind != PLAN_GAP_TAIL)
            continue;
        int64_t b = (int64_t)c->m->allocs[c->gaps[g].alloc].bytes;
        d[c->gaps[g].a + 1] += b, d[c->gaps[g].last + 1] -= b;
    }
    int64_t v = 0;
    for (size_t p = 0; p < c->n; p++)
        out[p] = (uint64_t)(v += d[p]);
    free(d);
    return out;
}

static plan_err per_op(const plan_ctx *c, uint64_t budget, double *lb)
{
    excess *xs = malloc(c->n * sizeof(*xs));
    bcand *cs = malloc((c->ngaps + 1) * sizeof(*cs));
    if (!xs || !cs) {
        free(xs);
        free(cs);
        return PLAN_ERR_NOMEM;
    }
    size_t nx = 0;
    for (size_t p = 0; p < c->n; p++)
        if (c->live[p] > budget)
            xs[nx++] = (excess){c->live[p] - budget, (int32_t)p};
    qsort(xs, nx, sizeof(*xs), by_excess);
    size_t limit = (size_t)PLAN_MAX(4.0, BOUND_WORK / (double)(c->ngaps + 1));
    for (size_t i = 0; i < nx && i < limit; i++)
        *lb = PLAN_MAX(*lb, op_bound(c, xs[i].p, budget, NULL, cs));
    free(xs);
    free(cs);
    return PLAN_OK;
}

plan_err plan_bound_ctx(const plan_ctx *c, uint64_t budget, double *lb_us)
{
    *lb_us = 0;
    if (budget >= c->native_peak)
        return PLAN_OK;
    if (budget < c->floor_peak) {
        *lb_us = INFINITY;
        return PLAN_OK;
    }
    uint64_t *dying = dying_bytes(c);
    if (!dying)
        return PLAN_ERR_NOMEM;
    *lb_us = traffic_bound(c, budget, dying);
    free(dying);
    return per_op(c, budget, lb_us);
}

plan_err plan_bound_fixed(const plan_ctx *c, uint64_t budget, const uint8_t *skip, double *lb_us)
{
    bcand *cs = malloc((c->ngaps + 1) * sizeof(*cs));
    if (!cs)
        return PLAN_ERR_NOMEM;
    *lb_us = 0;
    for (size_t p = 0; p < c->n && *lb_us < INFINITY; p++)
        if (c->live[p] > budget)
            *lb_us = PLAN_MAX(*lb_us, op_bound(c, (int32_t)p, budget, skip, cs));
    free(cs);
    return PLAN_OK;
}

plan_err plan_lower_bound(const plan_model *m, uint64_t budget, double *lb_us)
{
    plan_ctx c;
    plan_err e = plan_ctx_init(&c, m, NULL, 0);
    if (e)
        return e;
    e = plan_bound_ctx(&c, budget, lb_us);
    plan_ctx_free(&c);
    return e;
}
