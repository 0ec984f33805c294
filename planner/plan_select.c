/* planner/plan_select.c — chooses the gaps to evict for a budget, on an estimated profile of
 * device bytes per operation (a segment tree: live bytes minus the bytes of chosen gaps over the
 * operations each keeps free, plan_cover.c).
 *
 * Score of a gap: bytes freed x time it keeps free / copy time, for the gaps whose copies fit
 * inside the gap ("hideable"); the others come after, least exposed copy time first, and are
 * counted over their whole idle range (the repair makes that true with waits).
 * Pass 0 takes gaps in score order, each only while an operation it keeps free is still over
 * budget, on the nominal timeline, then drops every gap not needed any more, worst first. Each
 * further pass recomputes what the chosen gaps really keep free once their copies queue on the
 * engines, drops the gaps that no longer help, and adds gaps (as if joining the queues) where
 * operations are over budget again: iterate until the estimated peak fits or nothing changes. */
#include "plan_internal.h"

#include "base_order.h"

#include <stdlib.h>
#include <string.h>

#define SELECT_PASSES 8

typedef struct cand {
    double score;
    uint32_t gap;
} cand;

typedef struct selector {
    const plan_ctx *c;
    int64_t budget;
    const uint64_t *extra;
    cand *cs;
    plan_span *cover; /* of the chosen gaps */
    uint8_t *forced;  /* chosen gaps kept off over a span whatever the stall */
    uint8_t *sel;
    plan_span *force;
    uint64_t *lv;
    plan_seg seg;
} selector;

static int cand_cmp(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    return BASE_CMP_THEN(y->score, x->score, BASE_CMP(x->gap, y->gap));
}

static int64_t gbytes(const selector *s, size_t g)
{
    return (int64_t)s->c->m->allocs[s->c->gaps[g].alloc].bytes;
}

static plan_span whole(const plan_ctx *c, size_t g)
{
    return (plan_span){c->gaps[g].a + 1, c->gaps[g].last};
}

static void score_gaps(selector *s)
{
    const plan_ctx *c = s->c;
    for (size_t i = 0; i < c->ngaps; i++) {
        const plan_gap *g = &c->gaps[i];
        uint64_t b = c->m->allocs[g->alloc].bytes, mv = c->m->allocs[g->alloc].moved;
        double copy =
            plan_ctx_evict_us(c, mv) + (g->kind == PLAN_GAP_TAIL ? 0 : plan_ctx_restore_us(c, mv));
        plan_span sp = plan_cover(c, NULL, i);
        s->cs[i].gap = (uint32_t)i;
        if (sp.lo <= sp.hi) {
            double t = plan_ctx_end_at(c, sp.hi) - plan_ctx_start_at(c, sp.lo);
            s->cs[i].score = 1.0 + (double)b * (t + 1e-9) / (copy + 1e-9);
        } else {
            double idle = plan_ctx_start_at(c, g->last + 1) - plan_ctx_end_at(c, g->a);
            s->cs[i].score = -1.0 - PLAN_MAX(0.0, copy - idle) / (double)b;
        }
    }
    qsort(s->cs, c->ngaps, sizeof(*s->cs), cand_cmp);
}

/* The profile: live (+ extra) minus what the chosen gaps keep free. */
static plan_err rebuild(selector *s)
{
    plan_seg_free(&s->seg);
    plan_err e = plan_seg_init(&s->seg, s->lv, s->c->n);
    for (size_t g = 0; g < s->c->ngaps && !e; g++)
        if (s->sel[g])
            plan_seg_add(&s->seg, s->cover[g], -gbytes(s, g));
    return e;
}

static void take(selector *s, size_t g, plan_span sp, bool forced)
{
    s->sel[g] = 1;
    s->forced[g] = forced;
    s->cover[g] = sp;
    plan_seg_add(&s->seg, sp, -gbytes(s, g));
}

/* Adds gaps in score order where operations are over budget; returns whether any was added. */
static bool add_gaps(selector *s, const plan_engines *en)
{
    bool changed = false;
    for (int tier = 0; tier < 2; tier++) {
        for (size_t i = 0; i < s->c->ngaps && plan_seg_top(&s->seg) > s->budget; i++) {
            size_t g = s->cs[i].gap;
            if (s->sel[g])
                continue;
            plan_span sp = tier ? whole(s->c, g) : plan_cover(s->c, en, g);
            if ((tier || s->cs[i].score > 0) && sp.lo <= sp.hi &&
                plan_seg_max(&s->seg, sp) > s->budget) {
                if (tier)
                    sp = plan_seg_above(&s->seg, sp, s->budget);
                take(s, g, sp, tier);
                changed = true;
            }
        }
    }
    return changed;
}

/* Drops chosen gaps whose range stays within budget without them, worst first. */
static bool drop_gaps(selector *s)
{
    bool changed = false;
    for (size_t i = s->c->ngaps; i-- > 0;) {
        size_t g = s->cs[i].gap;
        if (!s->sel[g])
            continue;
        int64_t b = gbytes(s, g);
        if (plan_seg_max(&s->seg, s->cover[g]) + b <= s->budget) {
            s->sel[g] = 0;
            plan_seg_add(&s->seg, s->cover[g], b);
            changed = true;
        }
    }
    return changed;
}

/* One engine-aware pass; returns whether the choice changed. */
static plan_err pass(selector *s, bool *changed)
{
    plan_engines en;
    plan_err e = plan_engines_build(&en, s->c, s->sel);
    for (size_t g = 0; g < s->c->ngaps && !e; g++)
        if (s->sel[g] && !s->forced[g])
            s->cover[g] = plan_cover(s->c, &en, g);
    if (!e)
        e = rebuild(s);
    if (!e) {
        *changed = drop_gaps(s);
        *changed |= add_gaps(s, &en);
    }
    plan_engines_free(&en);
    return e;
}

static plan_err run(selector *s)
{
    const plan_ctx *c = s->c;
    for (size_t q = 0; q < c->n; q++)
        s->lv[q] = c->live[q] + (s->extra ? s->extra[q] : 0);
    score_gaps(s);
    plan_err e = rebuild(s);
    if (e)
        return e;
    add_gaps(s, NULL);
    drop_gaps(s);
    bool changed = true;
    for (int i = 0; i < SELECT_PASSES && changed && !e; i++)
        e = pass(s, &changed);
    for (size_t g = 0; g < c->ngaps; g++)
        s->force[g] = s->sel[g] && s->forced[g] ? s->cover[g] : (plan_span){0, -1};
    return e;
}

plan_err plan_select(const plan_ctx *c, uint64_t budget, const uint64_t *extra, uint8_t *sel,
                     plan_span *force)
{
    memset(sel, 0, c->ngaps);
    for (size_t g = 0; g < c->ngaps; g++)
        force[g] = (plan_span){0, -1};
    if ((c->native_peak <= budget && !extra) || c->ngaps == 0)
        return PLAN_OK;
    selector s = {.c = c,
                  .budget = (int64_t)PLAN_MIN(budget, (uint64_t)INT64_MAX / 2),
                  .extra = extra,
                  .sel = sel,
                  .force = force};
    s.cs = malloc(c->ngaps * sizeof(*s.cs));
    s.cover = malloc(c->ngaps * sizeof(*s.cover));
    s.forced = calloc(c->ngaps, 1);
    s.lv = malloc(c->n * sizeof(*s.lv));
    plan_err e = s.cs && s.cover && s.forced && s.lv ? run(&s) : PLAN_ERR_NOMEM;
    plan_seg_free(&s.seg);
    free(s.cs), free(s.cover), free(s.forced), free(s.lv);
    return e;
}
