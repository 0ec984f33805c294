/* planner/plan_cover.c — which operations a chosen gap keeps entirely free of its allocation:
 * those that start after its eviction has completed and end before its copy back starts. With
 * many gaps chosen, the copies queue on the engines and the covered range shrinks; the
 * engine schedules here follow the simulator's rules (first come first served in issue order)
 * for evictions issued right after the last touch, and the backward, as-late-as-possible order
 * that plan_place gives the copies back. A move's remap (plan_ctx_evict_us, plan_ctx_restore_us)
 * is counted in its own time but holds no engine; the mover is taken as idle (the simulator
 * judges the plan with its queue). */
#include "plan_internal.h"

#include "base_order.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* First position in [lo, hi] whose nominal start is >= t, or hi + 1. */
static int64_t first_start_after(const plan_ctx *c, int64_t lo, int64_t hi, double t)
{
    while (lo <= hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (plan_ctx_start_at(c, mid) >= t)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Last position in [lo, hi] whose nominal end is <= t, or lo - 1. */
static int64_t last_end_before(const plan_ctx *c, int64_t lo, int64_t hi, double t)
{
    while (lo <= hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (plan_ctx_end_at(c, mid) <= t)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return hi;
}

static plan_span span_of(const plan_ctx *c, const plan_gap *g, double off, double on)
{
    plan_span sp = {first_start_after(c, g->a + 1, g->last, off), 0};
    sp.hi = last_end_before(c, sp.lo, g->last, on);
    return sp;
}

/* The bytes gap g's moves copy (its timing: what it frees is the allocation's bytes). */
static uint64_t gap_bytes(const plan_ctx *c, size_t g)
{
    return c->m->allocs[c->gaps[g].alloc].moved;
}

/* Need time of a gap's copy back, folded into the step. */
static double need_mod(const plan_ctx *c, size_t g)
{
    const plan_gap *gp = &c->gaps[g];
    return plan_ctx_start_at(c, gp->b) - (gp->b >= (int32_t)c->n ? c->compute : 0);
}

/* Eviction issue order: last touch, then allocation (as the simulator). */
static int d_cmp(const void *x, const void *y, void *arg)
{
    const plan_ctx *c = arg;
    const plan_gap *a = &c->gaps[*(const uint32_t *)x], *b = &c->gaps[*(const uint32_t *)y];
    return BASE_CMP_THEN(a->a, b->a, BASE_CMP(a->alloc, b->alloc));
}

static int h_cmp(const void *x, const void *y, void *arg)
{
    const plan_ctx *c = arg;
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    double na = need_mod(c, a), nb = need_mod(c, b);
    return BASE_CMP_THEN(nb, na, BASE_CMP(b, a));
}

static void schedule_d(plan_engines *en, const plan_ctx *c)
{
    double free_at = -INFINITY;
    for (int turn = 0; turn < 2; turn++) {
        double shift = turn ? c->compute : 0;
        for (size_t i = 0; i < en->nd; i++) {
            size_t g = en->d_gap[i];
            double end = PLAN_MAX(plan_ctx_end_at(c, c->gaps[g].a) + shift, free_at) +
                         plan_ctx_d2h_us(c, gap_bytes(c, g));
            free_at = end;
            en->d_end[i] = end - shift;
        }
    }
}

static void schedule_h(plan_engines *en, const plan_ctx *c)
{
    double next = INFINITY;
    for (int turn = 0; turn < 2; turn++) {
        if (turn && en->nh)
            next = en->h_start[en->nh - 1] + c->compute;
        for (size_t i = 0; i < en->nh; i++) {
            /* usable by its need, and off the engine when the next one starts */
            uint64_t b = gap_bytes(c, en->h_gap[i]);
            en->h_start[i] =
                PLAN_MIN(en->h_need[i] - plan_ctx_restore_us(c, b), next - plan_ctx_h2d_us(c, b));
            next = en->h_start[i];
        }
    }
}

static plan_err engines_alloc(plan_engines *en, const plan_ctx *c, size_t nd, size_t nh)
{
    size_t ng = c->ngaps + 1;
    en->d_gap = malloc((nd + 1) * sizeof(*en->d_gap));
    en->d_end = malloc((nd + 1) * sizeof(*en->d_end));
    en->h_gap = malloc((nh + 1) * sizeof(*en->h_gap));
    en->h_start = malloc((nh + 1) * sizeof(*en->h_start));
    en->h_need = malloc((nh + 1) * sizeof(*en->h_need));
    en->evict_done = malloc(ng * sizeof(double));
    en->restore_start = malloc(ng * sizeof(double));
    if (!en->d_gap || !en->d_end || !en->h_gap || !en->h_start || !en->h_need || !en->evict_done ||
        !en->restore_start)
        return PLAN_ERR_NOMEM;
    return PLAN_OK;
}

plan_err plan_engines_build(plan_engines *en, const plan_ctx *c, const uint8_t *sel)
{
    size_t nd = 0, nh = 0;
    memset(en, 0, sizeof(*en));
    for (size_t g = 0; g < c->ngaps; g++)
        if (sel[g])
            nd++, nh += c->gaps[g].kind != PLAN_GAP_TAIL;
    if (engines_alloc(en, c, nd, nh)) {
        plan_engines_free(en);
        return PLAN_ERR_NOMEM;
    }
    for (size_t g = 0; g < c->ngaps; g++) {
        if (!sel[g])
            continue;
        en->d_gap[en->nd++] = (uint32_t)g;
        if (c->gaps[g].kind != PLAN_GAP_TAIL)
            en->h_gap[en->nh++] = (uint32_t)g;
    }
    qsort_r(en->d_gap, en->nd, sizeof(uint32_t), d_cmp, (void *)c);
    qsort_r(en->h_gap, en->nh, sizeof(uint32_t), h_cmp, (void *)c);
    for (size_t i = 0; i < en->nh; i++)
        en->h_need[i] = need_mod(c, en->h_gap[i]);
    schedule_d(en, c);
    schedule_h(en, c);
    for (size_t i = 0; i < en->nd; i++)
        en->evict_done[en->d_gap[i]] = en->d_end[i] + c->m->hw.remap_us;
    for (size_t i = 0; i < en->nh; i++) {
        size_t g = en->h_gap[i];
        en->restore_start[g] = en->h_start[i] + (c->gaps[g].b >= (int32_t)c->n ? c->compute : 0);
    }
    return PLAN_OK;
}

void plan_engines_free(plan_engines *en)
{
    free(en->d_gap), free(en->d_end), free(en->h_gap), free(en->h_start), free(en->h_need);
    free(en->evict_done), free(en->restore_start);
    memset(en, 0, sizeof(*en));
}

/* Completion of gap g's eviction if it joined the queue. */
static double estimate_off(const plan_ctx *c, const plan_engines *en, size_t g)
{
    size_t lo = 0, hi = en->nd; /* first job issued after g */
    uint32_t key = (uint32_t)g;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (d_cmp(&en->d_gap[mid], &key, (void *)c) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    double prev =
        lo ? en->d_end[lo - 1] : (en->nd ? en->d_end[en->nd - 1] - c->compute : -INFINITY);
    return PLAN_MAX(plan_ctx_end_at(c, c->gaps[g].a), prev) + plan_ctx_evict_us(c, gap_bytes(c, g));
}

/* Start of gap g's copy back if it joined the backward schedule. */
static double estimate_on(const plan_ctx *c, const plan_engines *en, size_t g)
{
    double need = need_mod(c, g);
    size_t lo = 0, hi = en->nh; /* jobs with need >= g's come first */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (en->h_need[mid] >= need)
            lo = mid + 1;
        else
            hi = mid;
    }
    double next =
        lo ? en->h_start[lo - 1] : (en->nh ? en->h_start[en->nh - 1] + c->compute : INFINITY);
    uint64_t b = gap_bytes(c, g);
    double st = PLAN_MIN(need - plan_ctx_restore_us(c, b), next - plan_ctx_h2d_us(c, b));
    return st + (c->gaps[g].b >= (int32_t)c->n ? c->compute : 0);
}

plan_span plan_cover(const plan_ctx *c, const plan_engines *en, size_t g)
{
    const plan_gap *gp = &c->gaps[g];
    bool tail = gp->kind == PLAN_GAP_TAIL;
    uint64_t b = gap_bytes(c, g);
    double off, on;
    if (!en) {
        off = plan_ctx_end_at(c, gp->a) + plan_ctx_evict_us(c, b);
        on = tail ? plan_ctx_end_at(c, gp->last)
                  : plan_ctx_start_at(c, gp->b) - plan_ctx_restore_us(c, b);
        return span_of(c, gp, off, on);
    }
    bool chosen = false;
    for (size_t lo = 0, hi = en->nd; lo < hi && !chosen;) { /* is g in the schedule? */
        size_t mid = (lo + hi) / 2;
        uint32_t key = (uint32_t)g;
        int k = d_cmp(&en->d_gap[mid], &key, (void *)c);
        chosen = k == 0;
        if (k < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    off = chosen ? en->evict_done[g] : estimate_off(c, en, g);
    on = tail     ? plan_ctx_end_at(c, gp->last)
         : chosen ? en->restore_start[g]
                  : estimate_on(c, en, g);
    return span_of(c, gp, off, on);
}
