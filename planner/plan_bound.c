/* planner/plan_bound.c — a lower bound on the stall of any plan that keeps the peak within a
 * budget B: the physical limit reported next to every plan.
 *
 * Notation. Nominal times are those of the stall-free step (prefix sums of durations and idle
 * times: claim 11); σ_j >= 0 is the stall before operation j in the steady state of some plan P
 * whose peak is <= B, and S its stall per step, the sum of σ_j over one step. Actual times are
 * nominal plus the stalls before them (without idle time; claim 11 says what holds with it). live(p) is the number of bytes live during p, X_p = live(p) - B its excess.
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
 * q a position. All evictions of C whose last touch is at or after q run between the actual end
 * of q and the actual start of p: their copies on one engine, and the remap of each (on the
 * host's mover, one at a time, remap each) after its copy and before its bytes are free. So the
 * window holds the copies and the remap of the last copy to end, and also every one of the
 * remaps:
 *     start_p - end_q (nominal) + σ(q, p] >= max(bytes(C, a >= q) / bw_d2h + remap,
 *                                                 count(C, a >= q) * remap)   (if > 0 bytes).
 * bytes(C, a >= q) >= X_p - bytes(all covering gaps with a < q) =: G(q), and the fractional
 * choice of the earliest-touched bytes reaches G(q) for every q at once; those G(q) bytes take
 * at least ⌈G(q) / M(q)⌉ gaps, M(q) the largest covering gap with a >= q. Hence
 *     σ(q, p] >= E_p := max over q of  max(G(q)^+ / bw_d2h + remap, ⌈G(q)^+ / M(q)⌉ remap)
 *                                      - (start_p - end_q).
 * Claim 3 (copies back after p), symmetrically with the next touches b and the bytes that must
 * come back (X_p minus covering gaps that die on host), latest need first. A copy back takes its
 * device bytes, and may start its remap, when it is issued, after the end of p (libshim remaps a
 * restore's range at once, beside its copy), so only the larger of the two is sure to lie in the
 * window (M(b): the largest covering gap copied back with a next touch at or before b):
 *     σ(p, b] >= R_p := max over b of  max(H(b)^+ / bw_h2d, ⌈H(b)^+ / M(b)⌉ remap)
 *                                      - (start_b - end_p).
 * Claim 4 (combining). Positions are on p's unrolled axis: the last touch q of a wrapping gap
 * that p follows in the next step is q - n < 0 there, its next touch b - n. Each σ sum above
 * covers at most n consecutive positions, so each is at most S: S >= every term of claims 2
 * and 3. A claim-2 window (q, p] and a claim-3 window (p, b] are disjoint and together cover
 * the b - q positions (q, b]; when b - q <= n that is at most one step's positions, and in the
 * steady state σ repeats every n positions, so S >= σ(q, p] + σ(p, b] >= E-term(q) +
 * R-term(b). The bound at p is the largest single term or such a sum. (Ties: with operations
 * of zero duration several positions share one nominal time; claim 2's term at a time t counts
 * as earlier exactly the gaps before the first position of time t, so it is stated there; claim
 * 3's at the last position of its time.)
 * Claim 5 (traffic). Every byte off the device at p is copied to host once per step, and back
 * once unless it dies on host, so a step moves at least D = max_p X_p bytes to host and
 * H = max_p (X_p - dying bytes)^+ back. One step lasts at least the compute time plus S and at
 * least the busy time of each engine (of the one shared engine when the link is not duplex):
 *     S >= D / bw_d2h - compute, S >= H / bw_h2d - compute (duplex), or
 *     S >= D / bw_d2h + H / bw_h2d - compute (shared link).
 * (A remap holds no engine: it is the mover's time, claim 8.)
 * Claim 6 (both-busy link, link_both). Each both-busy rate is at most its direction's full rate
 * (plan_link_check), so under the fluid rule bytes never move faster than bw_d2h / bw_h2d: every
 * time used in claims 2, 3 and 5 is still a lower bound on the copies it counts, and the bound
 * holds unchanged (it ignores the slowdown, so it is weaker on such links, never wrong).
 * Claim 7 (the program's own copies, model `copy` lines). Between the end of an operation and
 * the start of the next, actual time also holds the program's copies after the first: their own
 * duration (bytes at their direction's rate) is neither compute nor stall, and an eviction may
 * run beside them. So claims 2-4 measure windows on an axis where each such copy takes the most
 * it can (at its direction's both-busy rate when that is lower): a window then holds exactly
 * the copies after the operations it starts with and spans (one step holds them once).
 * Claim 5: one step lasts compute + S + those copies, and each engine's busy time also counts
 * the copies it serves, at least at its full rate.
 * Claim 8 (the mover). Every move of a step, eviction or copy back, costs the mover remap of
 * host time, one move at a time, and in the steady state the mover's time per step is at most
 * the step's. At an examined p, at least ⌈X_p / M_p⌉ evictions (M_p: the largest covering gap)
 * and ⌈(X_p - dying bytes)^+ / M'_p⌉ copies back (M'_p: the largest covering gap that comes back)
 * are moves of every step, so S >= (their number) remap - compute - the program's copies (the
 * most they can take, as in claim 7).
 * Claim 9 (bytes held and bytes copied). An allocation's move copies `moved` of the `bytes` it
 * holds (plan_alloc: libshim copies the allocation's own bytes of its whole granules), at least
 * moved_share (the least moved / bytes of the model) of them; so every copy time above, counted
 * in bytes freed, is counted at that share of them, and stays a lower bound.
 * The bound is the largest of these, over the operations examined (all of them for small
 * models; the largest excesses up to a work limit otherwise: any subset gives a valid bound).
 * Claim 10 (host residency, plan_opts.host: plan_bound_ctx_opts in plan_host_pick.c). A plan may
 * also keep a set K of allocations read sparsely on the host for the whole step. If K is empty it
 * is one of the plans above and their bound L holds. Otherwise each operation lasts its duration
 * plus the reads of K it makes (plan_host_read_us), which stall counts, and the rest of the plan
 * stalls >= 0 more; every allocation read sparsely is touched at least once per step, so
 * S >= r(K) >= r_min, the least read time per step of one such allocation. Hence S >= min(L,
 * r_min), and S = +infinity below the floor of the model without any of them (the most bytes
 * the host can take). Weaker than L (the reads of one allocation), never wrong; plain
 * plan_lower_bound and plan_bound_ctx are unchanged.
 * Claim 11 (idle time, plan_op.idle_us). Nominal times hold each operation's idle time before
 * it, and no operation starts before its nominal time after its step's start; the stall here is
 * S = step - compute - the program's copies, compute now the native step with its idle time.
 * The actual time between operations j-1 and j is at most idle_j + copies + σ_j (an operation
 * waits for the later of its nominal time and the previous end, which is at least nominal), so
 * claims 2 and 3 still hold of σ over their windows. But a stall may be absorbed by idle time
 * later in the step: one step lasts at least the durations, the program's copies and the time
 * between operations in one window of at most n positions, whose σ sum is at least the term, so
 * S >= term - (the idle time outside the window) >= term - (all idle time of a step). Claims
 * 2-4 give their term less the step's idle time (0 when the device sets the pace: unchanged);
 * claims 5 and 8 hold as they are (the step holds each engine's and the mover's busy time). */
#include "plan_internal.h"

#include "base_order.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BOUND_WORK 400000.0 /* gap visits */

typedef struct bcand {
    double t_a, t_b; /* nominal end of the last touch, start of the next touch (relative to p) */
    int64_t pos_a, pos_b; /* their positions on p's axis */
    uint64_t bytes;
    bool back; /* copied back */
} bcand;

/* One term of claim 2 or 3: the stall it proves over the window it names by one end (the last
 * touch q of claim 2, the next touch b of claim 3). */
typedef struct bterm {
    int64_t pos;
    double us;
} bterm;

static int by_a(const void *x, const void *y)
{
    const bcand *a = x, *b = y;
    if (a->t_a != b->t_a)
        return a->t_a > b->t_a ? 1 : -1;
    return (a->pos_a > b->pos_a) - (a->pos_a < b->pos_a);
}

static int by_b(const void *x, const void *y)
{
    const bcand *a = x, *b = y;
    if (a->t_b != b->t_b)
        return a->t_b > b->t_b ? 1 : -1;
    return (a->pos_b > b->pos_b) - (a->pos_b < b->pos_b);
}

static int by_pos(const void *x, const void *y)
{
    const bterm *a = x, *b = y;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

/* Work arrays of claims 1-4 (ngaps + 1 items each), and the time axis they use: own[x] is the
 * most time the program's own copies after operations 0 .. x - 1 can take (claim 7), x in
 * [0, n], each at its direction's slowest rate. */
typedef struct bscratch {
    bcand *cs;
    bterm *ev, *re;
    double *own;
    uint64_t *mx; /* the largest bytes over a run of cs (claims 2 and 3's M) */
} bscratch;

/* Most time a copy of the program's can take: at its direction's both-busy rate when lower. */
static double copy_max_us(const plan_hw *hw, const plan_copy *cp)
{
    double full = cp->to_device ? hw->h2d_gbps : hw->d2h_gbps;
    double both = cp->to_device ? hw->both_h2d_gbps : hw->both_d2h_gbps;
    double gbps = plan_link_on(hw) && both > 0 ? PLAN_MIN(full, both) : full;
    return (double)cp->bytes / (gbps * 1e3);
}

static plan_err scratch_init(bscratch *s, const plan_ctx *c)
{
    s->cs = malloc((c->ngaps + 1) * sizeof(*s->cs));
    s->ev = malloc((c->ngaps + 1) * sizeof(*s->ev));
    s->re = malloc((c->ngaps + 1) * sizeof(*s->re));
    s->own = calloc(c->n + 1, sizeof(*s->own));
    s->mx = malloc((c->ngaps + 1) * sizeof(*s->mx));
    if (!s->cs || !s->ev || !s->re || !s->own || !s->mx)
        return PLAN_ERR_NOMEM;
    for (size_t k = 0; k < c->m->ncopies; k++)
        s->own[c->m->copies[k].after + 1] += copy_max_us(&c->m->hw, &c->m->copies[k]);
    for (size_t x = 1; x <= c->n; x++)
        s->own[x] += s->own[x - 1];
    return PLAN_OK;
}

static void scratch_free(bscratch *s)
{
    free(s->cs), free(s->ev), free(s->re), free(s->own), free(s->mx);
}

/* On claim 7's axis (nominal time plus the most the program's copies before can take): the
 * start of position x (x may be >= n: the next step), and the end of x before its own copies. */
static double axis_start(const plan_ctx *c, const bscratch *s, int64_t x)
{
    int64_t n = (int64_t)c->n;
    return x >= n ? c->compute + s->own[n] + c->start[x - n] + s->own[x - n]
                  : c->start[x] + s->own[x];
}

static double axis_end(const plan_ctx *c, const bscratch *s, int64_t x)
{
    int64_t n = (int64_t)c->n;
    return x >= n ? axis_end(c, s, x - n) + c->compute + s->own[n] : c->start[x + 1] + s->own[x];
}

/* Covering gaps of step position p, with times and positions on p's own unrolled axis. */
static size_t candidates(const plan_ctx *c, const bscratch *s, int32_t p, const uint8_t *skip,
                         uint64_t *dying)
{
    size_t k = 0;
    *dying = 0;
    for (size_t g = 0; g < c->ngaps; g++) {
        const plan_gap *gp = &c->gaps[g];
        if (skip && skip[g])
            continue;
        int32_t pr = p > gp->a ? p : p + (int32_t)c->n;
        if (pr > gp->last)
            continue;
        bool next = pr != p; /* p lies in the next step of this gap */
        double shift = next ? c->compute + s->own[c->n] : 0;
        int64_t pshift = next ? (int64_t)c->n : 0;
        uint64_t b = c->m->allocs[gp->alloc].bytes;
        bcand *out = s->cs;
        out[k].bytes = b;
        out[k].t_a = axis_end(c, s, gp->a) - shift;
        out[k].pos_a = gp->a - pshift;
        out[k].back = gp->kind != PLAN_GAP_TAIL;
        out[k].t_b = out[k].back ? axis_start(c, s, gp->b) - shift : INFINITY;
        out[k].pos_b = out[k].back ? gp->b - pshift : INT64_MAX;
        if (!out[k].back)
            *dying += b;
        k++;
    }
    return k;
}

/* Remaps of at least `bytes` bytes in moves of at most `most` bytes each (most >= 1): the
 * mover's least time for them. */
static double remaps_us(const plan_ctx *c, uint64_t bytes, uint64_t most)
{
    return (double)(bytes / most + (bytes % most != 0)) * c->m->hw.remap_us;
}

/* The least copy time of moves that free bytes of device memory, at us_per_byte (claim 9). */
static double copy_us(uint64_t bytes, double us_per_byte, const plan_ctx *c)
{
    return (double)bytes * c->moved_share * us_per_byte;
}

/* Claim 2's terms: evictions that must finish by the start of p, one per distinct last-touch
 * time (at the first position with that time, which makes the window the widest), positive
 * ones only, into out; returns how many. mx: k items of scratch. */
static size_t evict_terms(const plan_ctx *c, bcand *cs, size_t k, uint64_t x, double start_p,
                          uint64_t *mx, bterm *out)
{
    qsort(cs, k, sizeof(*cs), by_a);
    for (size_t i = k; i-- > 0;) /* mx[i]: the largest of cs[i..k) */
        mx[i] = PLAN_MAX(cs[i].bytes, i + 1 < k ? mx[i + 1] : 0);
    size_t nt = 0;
    uint64_t before = 0; /* bytes whose last touch is earlier */
    for (size_t i = 0, j; i < k && before < x; i = j) {
        uint64_t grp = 0;
        for (j = i; j < k && cs[j].t_a == cs[i].t_a; j++)
            grp += cs[j].bytes;
        double need = PLAN_MAX(copy_us(x - before, c->d2h_us_per_byte, c) + c->m->hw.remap_us,
                               remaps_us(c, x - before, mx[i]));
        double v = need - (start_p - cs[i].t_a);
        if (v > 0)
            out[nt++] = (bterm){cs[i].pos_a, v};
        before += grp;
    }
    return nt;
}

/* Claim 3's terms: copies back that must finish by their next touches, one per distinct
 * next-touch time (at the last position with that time), positive ones only, into out;
 * returns how many. mx: k items of scratch. */
static size_t restore_terms(const plan_ctx *c, bcand *cs, size_t k, uint64_t x, double end_p,
                            uint64_t *mx, bterm *out)
{
    qsort(cs, k, sizeof(*cs), by_b);
    for (size_t i = 0; i < k; i++) /* mx[i]: the largest of cs[0..i] copied back */
        mx[i] = PLAN_MAX(cs[i].back ? cs[i].bytes : 0, i ? mx[i - 1] : 0);
    size_t nt = 0;
    uint64_t after = 0; /* bytes copied back with a later next touch */
    for (size_t j = k, i; j > 0 && after < x; j = i) {
        uint64_t grp = 0;
        for (i = j; i > 0 && cs[i - 1].t_b == cs[j - 1].t_b; i--)
            grp += cs[i - 1].back ? cs[i - 1].bytes : 0;
        if (!cs[j - 1].back)
            continue; /* dying on host: sorted last, nothing comes back */
        double need =
            PLAN_MAX(copy_us(x - after, c->h2d_us_per_byte, c), remaps_us(c, x - after, mx[j - 1]));
        double v = need - (cs[j - 1].t_b - end_p);
        if (v > 0)
            out[nt++] = (bterm){cs[j - 1].pos_b, v};
        after += grp;
    }
    return nt;
}

/* Claim 4: the largest single term, or sum of a claim-2 term (window (q, p]) and a claim-3 term
 * (window (p, b]) whose windows together span at most n positions (b - q <= n). */
static double combine(bterm *ev, size_t ne, bterm *re, size_t nr, int64_t n)
{
    double best = 0, rmax = -INFINITY;
    for (size_t i = 0; i < ne; i++)
        best = PLAN_MAX(best, ev[i].us);
    for (size_t j = 0; j < nr; j++)
        best = PLAN_MAX(best, re[j].us);
    qsort(ev, ne, sizeof(*ev), by_pos);
    qsort(re, nr, sizeof(*re), by_pos);
    for (size_t i = 0, j = 0; i < ne; i++) {
        for (; j < nr && re[j].pos - ev[i].pos <= n; j++)
            rmax = PLAN_MAX(rmax, re[j].us);
        best = PLAN_MAX(best, ev[i].us + rmax);
    }
    return best;
}

/* Claim 8's moves at p: evictions and copies back that every step makes, at least. */
static uint64_t op_moves(const bcand *cs, size_t k, uint64_t x, uint64_t dying)
{
    uint64_t most = 0, most_back = 0;
    for (size_t i = 0; i < k; i++) {
        most = PLAN_MAX(most, cs[i].bytes);
        most_back = PLAN_MAX(most_back, cs[i].back ? cs[i].bytes : 0);
    }
    uint64_t back = x > dying ? x - dying : 0, n = x / most + (x % most != 0);
    return n + (back ? back / most_back + (back % most_back != 0) : 0);
}

/* Claims 1-4 (with 7) at step position p; claim 8's moves there into *moves (may be NULL). */
static double op_bound(const plan_ctx *c, int32_t p, uint64_t budget, const uint8_t *skip,
                       const bscratch *s, uint64_t *moves)
{
    uint64_t dying, x = c->live[p] - budget, total = 0;
    size_t k = candidates(c, s, p, skip, &dying);
    for (size_t i = 0; i < k; i++)
        total += s->cs[i].bytes;
    if (total < x)
        return INFINITY;
    if (moves)
        *moves = op_moves(s->cs, k, x, dying);
    size_t ne = evict_terms(c, s->cs, k, x, axis_start(c, s, p), s->mx, s->ev);
    size_t nr =
        x > dying ? restore_terms(c, s->cs, k, x - dying, axis_end(c, s, p), s->mx, s->re) : 0;
    return PLAN_MAX(0.0, combine(s->ev, ne, s->re, nr, (int64_t)c->n) - c->idle_total); /* 11 */
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
    double td = copy_us(d, c->d2h_us_per_byte, c), th = copy_us(h, c->h2d_us_per_byte, c);
    /* the program's copies keep their engines busy too, at least at the full rate */
    double od = 0, oh = 0, own = 0;
    for (size_t k = 0; k < c->m->ncopies; k++) {
        const plan_copy *cp = &c->m->copies[k];
        double full =
            (double)cp->bytes / ((cp->to_device ? c->m->hw.h2d_gbps : c->m->hw.d2h_gbps) * 1e3);
        *(cp->to_device ? &oh : &od) += full;
        own += copy_max_us(&c->m->hw, cp);
    }
    double busy = c->m->hw.duplex ? PLAN_MAX(td + od, th + oh) : td + th + od + oh;
    return PLAN_MAX(0.0, busy - c->compute - own);
}

typedef struct excess {
    uint64_t x;
    int32_t p;
} excess;

static int by_excess(const void *a, const void *b)
{
    const excess *x = a, *y = b;
    return BASE_CMP_THEN(y->x, x->x, BASE_CMP(x->p, y->p));
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
    bscratch s;
    if (scratch_init(&s, c) || !xs) {
        free(xs);
        scratch_free(&s);
        return PLAN_ERR_NOMEM;
    }
    size_t nx = 0;
    for (size_t p = 0; p < c->n; p++)
        if (c->live[p] > budget)
            xs[nx++] = (excess){c->live[p] - budget, (int32_t)p};
    qsort(xs, nx, sizeof(*xs), by_excess);
    size_t limit = (size_t)PLAN_MAX(4.0, BOUND_WORK / (double)(c->ngaps + 1));
    uint64_t moves = 0, most = 0;
    for (size_t i = 0; i < nx && i < limit; i++) {
        *lb = PLAN_MAX(*lb, op_bound(c, xs[i].p, budget, NULL, &s, &moves));
        most = PLAN_MAX(most, moves);
    }
    /* claim 8 */
    *lb = PLAN_MAX(*lb, (double)most * c->m->hw.remap_us - c->compute - s.own[c->n]);
    free(xs);
    scratch_free(&s);
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
    bscratch s;
    *lb_us = 0;
    if (scratch_init(&s, c)) {
        scratch_free(&s);
        return PLAN_ERR_NOMEM;
    }
    for (size_t p = 0; p < c->n && *lb_us < INFINITY; p++)
        if (c->live[p] > budget)
            *lb_us = PLAN_MAX(*lb_us, op_bound(c, (int32_t)p, budget, skip, &s, NULL));
    scratch_free(&s);
    return PLAN_OK;
}

plan_err plan_lower_bound(const plan_model *m, uint64_t budget, double *lb_us)
{
    return plan_lower_bound_opts(m, budget, NULL, lb_us); /* no host placement */
}
