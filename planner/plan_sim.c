/* planner/plan_sim.c — the steady-state timeline simulator that judges every plan.
 *
 * One compute stream runs the operations in order; one copy engine per direction (one shared
 * engine when the link is not duplex) serves copies first come, first served; the host's mover
 * (plan_mover.c) remaps each move's range, one move at a time, for hw.remap_us, beside the
 * engines: a remap is not link time. Step after step, at each operation q:
 *   1. W = end of the previous operation, raised to the completion of every eviction whose
 *      wait_at is q (the room q's births and prefetches need);
 *   2. prefetches with prefetch_at q are issued in earliest-need order, each as soon as the
 *      evictions q waits for that complete first have given back the bytes it and the
 *      prefetches before it take (libshim's prefetch waits for moves, oldest first, only until
 *      it finds room), never before the end of the previous operation and at W at the latest:
 *      a copy back starts at max(issue, engine free, its own eviction done) and takes bytes /
 *      bandwidth; its remap can start when it takes its device bytes (libshim remaps a restore's
 *      range as it issues it, ordered before the copy ends), and the data is usable when both
 *      the copy and the remap are done;
 *   3. q starts at max(W, copies back it needs); the difference to the previous end is stall;
 *      its births are added at its start and its deaths removed at its end (allocations that
 *      exist before the step are added with the births of operation 0, those that outlive it
 *      removed with the deaths of the last operation);
 *   4. the program's own copies after q (model `copy` lines: a loss read, an input upload) run
 *      in stream order after q's end, each on its direction's engine behind the copies issued
 *      before it; q + 1 waits for the last; time spent queued behind the plan's moves is stall;
 *   5. evictions with evict_after q are issued after those copies (libshim issues them before
 *      the next launch, which the host makes after its copies; by allocation index): a copy to
 *      host starts at max(issue, engine free) and takes bytes / bandwidth; its remap can start
 *      only when the copy ends, and the device bytes are released when the remap is done (an
 *      allocation that dies on host releases them with the deaths of its last operation if
 *      that ends before the move is done); the engine serves its next copy meanwhile. A copy
 *      back takes device bytes when it is issued (or when its own eviction completes, if
 *      later): libshim maps its chunks before it enqueues the copy.
 * Device bytes are a step function of time; at equal times releases of copies come first, then
 * the compute stream's own events in order (an operation of zero duration still counts its
 * births), then the starts of copies back. The step is repeated until its time, peak and the
 * backlogs of the engines and the mover repeat (at most SIM_MAX_STEPS) and the last step is
 * reported. Positions >= n of an entry belong to the next step; the instance of a wrapping entry
 * from before the first step is taken as evicted long ago (or resident, if its eviction falls into
 * the first step), with its copy back issued at time 0 when its prefetch fell in that earlier step.
 * With link_both, a copy's bytes move at the rates of planner/plan_link.c's fluid rule, in the
 * order issued. */
#include "plan_internal.h"

#include "base_array.h"
#include "base_order.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SIM_MAX_STEPS 24

enum { L_EVICT, L_WAIT, L_PREFETCH, L_NEED, L_DEATH, L_COUNT };

typedef struct sim_item {
    uint32_t ent;
    uint32_t off; /* step offset of the position relative to the gap's start */
} sim_item;

typedef struct cev { /* compute-stream event, generated in time order */
    double t;
    int64_t d;
    uint32_t op;
} cev;

typedef struct hev { /* copy event, kept in a heap */
    double t;
    int64_t d;
    int cls; /* 0 release, 2 acquire */
} hev;

typedef struct sim {
    const plan_ctx *c;
    const plan *p;
    const uint32_t *gap_of;
    uint32_t *head[L_COUNT];
    sim_item *item[L_COUNT];
    double *evict_done, *restore_done, *d2h_us, *h2d_us;
    uint32_t *waits; /* scratch: the entries one operation waits for, by completion */
    int64_t *death_adj;
    cev *cv;
    size_t ncv;
    hev *hp;
    size_t nhp, chp;
    double eng[2], *d2h, *h2d;
    double t_end, stall;
    double step_t0; /* the start of the step being run (the previous one's end) */
    double *op_start, *op_end;
    uint32_t *copy_head, *copy_order; /* the program's copies after operation q, in order */
    uint64_t *win;
    int64_t level;
    plan_trace *tr;
    bool fluid; /* link_both: copies follow plan_link.c's rule */
    plan_link link;
    plan_mover mover; /* the remaps */
} sim;

/* ---- the copy-event heap, ordered by (time, class) ---------------------------------------- */

static bool hev_less(const hev *a, const hev *b)
{
    return a->t < b->t || (a->t == b->t && a->cls < b->cls);
}

static plan_err heap_push(sim *s, double t, int64_t d, int cls)
{
    if (base_array_grow((void **)&s->hp, &s->chp, s->nhp + 1, sizeof(*s->hp)))
        return PLAN_ERR_NOMEM;
    size_t i = s->nhp++;
    s->hp[i] = (hev){t, d, cls};
    while (i > 0 && hev_less(&s->hp[i], &s->hp[(i - 1) / 2])) {
        hev x = s->hp[i];
        s->hp[i] = s->hp[(i - 1) / 2];
        s->hp[(i - 1) / 2] = x;
        i = (i - 1) / 2;
    }
    return PLAN_OK;
}

static hev heap_pop(sim *s)
{
    hev top = s->hp[0];
    s->hp[0] = s->hp[--s->nhp];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < s->nhp && hev_less(&s->hp[l], &s->hp[m]))
            m = l;
        if (r < s->nhp && hev_less(&s->hp[r], &s->hp[m]))
            m = r;
        if (m == i)
            break;
        hev x = s->hp[i];
        s->hp[i] = s->hp[m];
        s->hp[m] = x;
        i = m;
    }
    return top;
}

/* ---- per-position lists of entries -------------------------------------------------------- */

static int32_t entry_pos(const sim *s, size_t i, int list)
{
    const plan_entry *e = &s->p->entries[i];
    switch (list) {
    case L_EVICT:
        return e->evict_after;
    case L_WAIT:
        return e->wait_at;
    case L_PREFETCH:
        return e->prefetch_at;
    case L_NEED:
        return e->need;
    default:
        return s->c->gaps[s->gap_of[i]].kind == PLAN_GAP_TAIL ? s->c->gaps[s->gap_of[i]].last
                                                              : PLAN_NO_OP;
    }
}

/* Prefetches issued together: earliest need first, then by allocation. */
static int cmp_prefetch(const void *a, const void *b, void *arg)
{
    const sim *s = arg;
    const sim_item *x = a, *y = b;
    const plan_entry *ex = &s->p->entries[x->ent], *ey = &s->p->entries[y->ent];
    int32_t dx = ex->need - ex->prefetch_at, dy = ey->need - ey->prefetch_at;
    return BASE_CMP_THEN(dx, dy, BASE_CMP(ex->alloc, ey->alloc));
}

static int cmp_by_alloc(const void *a, const void *b, void *arg)
{
    const plan *p = arg;
    uint32_t x = p->entries[*(const uint32_t *)a].alloc, y = p->entries[*(const uint32_t *)b].alloc;
    return (x > y) - (x < y);
}

static plan_err build_list(sim *s, int list, const uint32_t *order)
{
    size_t n = s->c->n, E = s->p->n;
    uint32_t *h = s->head[list] = calloc(n + 2, sizeof(*h));
    s->item[list] = malloc((E ? E : 1) * sizeof(sim_item));
    if (!h || !s->item[list])
        return PLAN_ERR_NOMEM;
    for (size_t i = 0; i < E; i++) {
        int32_t pos = entry_pos(s, i, list);
        if (pos != PLAN_NO_OP)
            h[(size_t)pos % n + 2]++;
    }
    for (size_t q = 0; q < n; q++)
        h[q + 2] += h[q + 1];
    for (size_t k = 0; k < E; k++) { /* in allocation order */
        uint32_t i = order[k];
        int32_t pos = entry_pos(s, i, list);
        if (pos != PLAN_NO_OP)
            s->item[list][h[(size_t)pos % n + 1]++] = (sim_item){i, (uint32_t)((size_t)pos / n)};
    }
    if (list == L_PREFETCH)
        for (size_t q = 0; q < n; q++)
            if (h[q + 1] - h[q] > 1)
                qsort_r(s->item[list] + h[q], h[q + 1] - h[q], sizeof(sim_item), cmp_prefetch, s);
    return PLAN_OK;
}

/* ---- issuing copies ----------------------------------------------------------------------- */

/* Time a copy of entry i's bytes in direction dir takes on the link from st. */
static plan_err copy_us(sim *s, uint32_t i, int dir, double st, double *us)
{
    const plan_ctx *c = s->c;
    if (!s->fluid) {
        *us = dir == PLAN_LINK_D2H ? s->d2h_us[i] : s->h2d_us[i];
        return PLAN_OK;
    }
    return plan_link_place(&s->link, dir, st, c->m->allocs[s->p->entries[i].alloc].moved, us);
}

/* When the remap of a move that can start at ready is done. PLAN_ERR_NOMEM. */
static plan_err remap_done(sim *s, double ready, double *done)
{
    double us = s->c->m->hw.remap_us, start;
    plan_err e = plan_mover_place(&s->mover, ready, us, &start);
    *done = start + us;
    return e;
}

static plan_err issue_evict(sim *s, uint32_t i, double ready)
{
    double st = PLAN_MAX(ready, *s->d2h), us, done;
    plan_err e = copy_us(s, i, PLAN_LINK_D2H, st, &us);
    if (e)
        return e;
    *s->d2h = st + us;
    if ((e = remap_done(s, st + us, &done)))
        return e;
    s->evict_done[i] = done;
    if (s->tr)
        s->tr->ents[i].evict_start = st, s->tr->ents[i].evict_done = done;
    if (s->c->gaps[s->gap_of[i]].kind == PLAN_GAP_TAIL)
        return PLAN_OK; /* released at min(done, death): see run_op */
    return heap_push(s, done, -(int64_t)s->c->m->allocs[s->p->entries[i].alloc].bytes, 0);
}

static plan_err issue_restore(sim *s, uint32_t i, double ready)
{
    double st = PLAN_MAX(PLAN_MAX(ready, *s->h2d), s->evict_done[i]), us, remapped;
    double taken = PLAN_MAX(ready, s->evict_done[i]);
    plan_err e = copy_us(s, i, PLAN_LINK_H2D, st, &us);
    if (e || (e = remap_done(s, taken, &remapped)))
        return e;
    *s->h2d = st + us;
    double done = PLAN_MAX(st + us, remapped);
    s->restore_done[i] = done;
    if (s->tr)
        s->tr->ents[i].restore_start = st, s->tr->ents[i].restore_done = done;
    /* The device bytes are taken when the copy back is issued, not when the engine starts
       it: libshim maps the allocation's chunks before it enqueues the copy (an earlier model
       took them at the start, and let a plan issue prefetches at an operation whose deaths
       had not yet made room: libshim then evicted for room). */
    return heap_push(s, taken, (int64_t)s->c->m->allocs[s->p->entries[i].alloc].bytes, 2);
}

/* ---- one step ------------------------------------------------------------------------------ */

#define FOR_ITEMS(s, list, q, it)                                                                  \
    for (const sim_item *it = (s)->item[list] + (s)->head[list][q],                                \
                        *it##_end = (s)->item[list] + (s)->head[list][(q) + 1];                    \
         it < it##_end; it++)

static void push_c(sim *s, double t, int64_t d, size_t op)
{
    if (d)
        s->cv[s->ncv++] = (cev){t, d, (uint32_t)op};
}

/* The program's copies after operation q, from its end *end, in stream order: each starts when
 * the previous one is done and its engine is free (behind evictions issued before it), and the
 * next operation waits for the last. libshim issues the evictions planned after q before the
 * next launch, which the host makes after the copies: they queue behind them. *end becomes the
 * end of the last copy (unchanged when there is none). PLAN_ERR_NOMEM (the link's record). */
static plan_err program_copies(sim *s, size_t q, double *end)
{
    const plan_model *m = s->c->m;
    for (uint32_t k = s->copy_head[q]; k < s->copy_head[q + 1]; k++) {
        const plan_copy *cp = &m->copies[s->copy_order[k]];
        double *eng = cp->to_device ? s->h2d : s->d2h;
        double st = PLAN_MAX(*end, *eng), us;
        s->stall += st - *end; /* queued behind the plan's moves */
        if (s->fluid) {
            plan_err e = plan_link_place(&s->link, cp->to_device ? PLAN_LINK_H2D : PLAN_LINK_D2H,
                                         st, cp->bytes, &us);
            if (e)
                return e;
        } else {
            us = (double)cp->bytes / ((cp->to_device ? m->hw.h2d_gbps : m->hw.d2h_gbps) * 1e3);
        }
        *end = *eng = st + us;
    }
    return PLAN_OK;
}

/* Runs operation q from `ready` (end of the previous one), and not before its nominal start after
 * the step's start (its idle time: the host submits it then); returns its end. */
static plan_err run_op(sim *s, size_t q, double ready, double *end_out)
{
    plan_err e = PLAN_OK;
    if (s->c->idle_total > 0) /* not before the host submits it (the test: same sums else) */
        ready = PLAN_MAX(ready, s->step_t0 + s->c->start[q]);
    double w = ready, st;
    size_t nw = 0;
    plan_mover_prune(&s->mover, ready); /* no move issued from here on can start before */
    FOR_ITEMS(s, L_WAIT, q, it)
    {
        w = PLAN_MAX(w, s->evict_done[it->ent]);
        uint32_t x = it->ent;
        size_t k = nw++; /* insertion by completion: an operation waits for few */
        for (; k > 0 && s->evict_done[s->waits[k - 1]] > s->evict_done[x]; k--)
            s->waits[k] = s->waits[k - 1];
        s->waits[k] = x;
    }
    uint64_t freed = 0, taken = 0;
    size_t k = 0;
    double issue = ready;
    FOR_ITEMS(s, L_PREFETCH, q, it)
    {
        taken += s->c->m->allocs[s->p->entries[it->ent].alloc].bytes;
        for (; freed < taken && k < nw; k++) {
            freed += s->c->m->allocs[s->p->entries[s->waits[k]].alloc].bytes;
            issue = PLAN_MAX(issue, s->evict_done[s->waits[k]]);
        }
        if ((e = issue_restore(s, it->ent, freed < taken ? w : issue)))
            return e;
    }
    st = w;
    FOR_ITEMS(s, L_NEED, q, it) st = PLAN_MAX(st, s->restore_done[it->ent]);
    s->stall += st - ready;
    double end = st + s->c->m->ops[q].dur_us;
    push_c(s, st, (int64_t)(s->c->birth_bytes[q] + (q ? 0 : s->c->head_bytes)), q);
    int64_t dying = s->death_adj[q];
    FOR_ITEMS(s, L_DEATH, q, it)
    { /* dying on host: released by the copy if it completed first, else by the death */
        int64_t b = (int64_t)s->c->m->allocs[s->p->entries[it->ent].alloc].bytes;
        if (s->evict_done[it->ent] > end)
            dying += b;
        else if ((e = heap_push(s, s->evict_done[it->ent], -b, 0)))
            return e;
    }
    push_c(s, end, -dying, q);
    if ((e = program_copies(s, q, &end)))
        return e;
    FOR_ITEMS(s, L_EVICT, q, it) if ((e = issue_evict(s, it->ent, end))) return e;
    s->op_start[q] = st, s->op_end[q] = end;
    *end_out = end;
    return PLAN_OK;
}

static plan_err run_step(sim *s)
{
    size_t n = s->c->n;
    double t = s->t_end;
    s->step_t0 = t;
    s->ncv = 0;
    s->stall = 0;
    for (size_t q = 0; q < n; q++) {
        plan_err e = run_op(s, q, t, &t);
        if (e)
            return e;
    }
    push_c(s, t, -(int64_t)s->c->outlive_bytes, n - 1);
    s->t_end = t;
    return PLAN_OK;
}

/* ---- device bytes of a step ---------------------------------------------------------------- */

/* Applies d to the level inside window `op` of the step. */
static void apply(sim *s, size_t *cur, size_t op, int64_t d)
{
    while (*cur < op)
        s->win[++*cur] = (uint64_t)s->level;
    s->level += d;
    if (s->level > (int64_t)s->win[*cur])
        s->win[*cur] = (uint64_t)s->level;
}

/* Consumes the step's compute events and the copy events before (end, compute class); returns
 * the step's peak. Windows: operation q owns [end of q-1, end of q). */
static uint64_t flush_step(sim *s, double t_end)
{
    size_t n = s->c->n, cur = 0, k = 0;
    s->win[0] = (uint64_t)s->level;
    for (;;) {
        bool have_h =
            s->nhp > 0 && (s->hp[0].t < t_end || (s->hp[0].t == t_end && s->hp[0].cls < 1));
        bool take_c = k < s->ncv && (!have_h || s->cv[k].t < s->hp[0].t ||
                                     (s->cv[k].t == s->hp[0].t && s->hp[0].cls > 1));
        if (take_c) {
            apply(s, &cur, PLAN_MAX(cur, s->cv[k].op), s->cv[k].d);
            k++;
        } else if (have_h) {
            hev h = heap_pop(s);
            size_t op = cur;
            while (op < n - 1 && h.t >= s->op_end[op])
                op++;
            apply(s, &cur, op, h.d);
        } else {
            break;
        }
    }
    while (cur < n - 1)
        s->win[++cur] = (uint64_t)s->level;
    uint64_t peak = 0;
    for (size_t q = 0; q < n; q++)
        peak = PLAN_MAX(peak, s->win[q]);
    return peak;
}

/* ---- set-up ------------------------------------------------------------------------------- */

static plan_err sim_alloc(sim *s)
{
    size_t n = s->c->n, E = s->p->n ? s->p->n : 1;
    s->evict_done = malloc(E * sizeof(double));
    s->restore_done = malloc(E * sizeof(double));
    s->d2h_us = malloc(E * sizeof(double));
    s->h2d_us = malloc(E * sizeof(double));
    s->waits = malloc(E * sizeof(uint32_t));
    s->death_adj = malloc(n * sizeof(int64_t));
    s->cv = malloc((2 * n + 2) * sizeof(cev));
    s->op_start = malloc(n * sizeof(double));
    s->op_end = malloc(n * sizeof(double));
    s->win = malloc(n * sizeof(uint64_t));
    s->copy_head = calloc(n + 1, sizeof(uint32_t));
    s->copy_order = malloc((s->c->m->ncopies ? s->c->m->ncopies : 1) * sizeof(uint32_t));
    if (!s->evict_done || !s->restore_done || !s->d2h_us || !s->h2d_us || !s->waits ||
        !s->death_adj || !s->cv || !s->op_start || !s->op_end || !s->win || !s->copy_head ||
        !s->copy_order)
        return PLAN_ERR_NOMEM;
    /* counting sort of the copies by operation, stable: the model's order is stream order */
    const plan_model *m = s->c->m;
    for (size_t k = 0; k < m->ncopies; k++)
        s->copy_head[m->copies[k].after + 1]++;
    for (size_t q = 0; q < n; q++)
        s->copy_head[q + 1] += s->copy_head[q];
    uint32_t *fill = s->copy_head; /* advanced per copy below, then shifted back */
    for (size_t k = 0; k < m->ncopies; k++)
        s->copy_order[fill[m->copies[k].after]++] = (uint32_t)k;
    for (size_t q = n; q > 0; q--)
        s->copy_head[q] = s->copy_head[q - 1];
    s->copy_head[0] = 0;
    return PLAN_OK;
}

static plan_err sim_lists(sim *s)
{
    size_t E = s->p->n;
    uint32_t *order = malloc((E ? E : 1) * sizeof(*order));
    if (!order)
        return PLAN_ERR_NOMEM;
    bool sorted = true;
    for (size_t i = 0; i < E; i++) {
        order[i] = (uint32_t)i;
        sorted &= i == 0 || s->p->entries[i - 1].alloc <= s->p->entries[i].alloc;
    }
    if (!sorted)
        qsort_r(order, E, sizeof(*order), cmp_by_alloc, (void *)s->p);
    plan_err e = PLAN_OK;
    for (int l = 0; l < L_COUNT && !e; l++)
        e = build_list(s, l, order);
    free(order);
    return e;
}

/* Per-entry copy times, deaths net of allocations dying on host, and the state before step 0. */
static plan_err sim_prepare(sim *s)
{
    const plan_ctx *c = s->c;
    size_t n = c->n;
    for (size_t q = 0; q < n; q++)
        s->death_adj[q] = (int64_t)c->death_bytes[q];
    s->level = (int64_t)c->cyclic_bytes;
    s->d2h = &s->eng[0];
    s->h2d = c->m->hw.duplex ? &s->eng[1] : &s->eng[0];
    s->fluid = plan_link_on(&c->m->hw);
    plan_link_init(&s->link, &c->m->hw);
    plan_mover_init(&s->mover);
    for (size_t i = 0; i < s->p->n; i++) {
        const plan_entry *e = &s->p->entries[i];
        const plan_gap *g = &c->gaps[s->gap_of[i]];
        uint64_t b = c->m->allocs[e->alloc].bytes, mv = c->m->allocs[e->alloc].moved;
        s->d2h_us[i] = plan_ctx_d2h_us(c, mv);
        s->h2d_us[i] = plan_ctx_h2d_us(c, mv);
        s->evict_done[i] = s->restore_done[i] = -INFINITY;
        if (g->kind == PLAN_GAP_TAIL)
            s->death_adj[g->last] -= (int64_t)b;
        if (g->kind == PLAN_GAP_WRAP && e->evict_after < (int32_t)n)
            s->level -= (int64_t)b; /* evicted in the step before the first */
    }
    /* copies back of that earlier instance whose prefetch also fell before the first step */
    for (size_t q = 0; q < n; q++) {
        FOR_ITEMS(s, L_PREFETCH, q, it)
        {
            const plan_entry *e = &s->p->entries[it->ent];
            if (it->off == 0 && e->need >= (int32_t)n)
                if (issue_restore(s, it->ent, 0.0))
                    return PLAN_ERR_NOMEM;
        }
    }
    return PLAN_OK;
}

static void sim_free(sim *s)
{
    for (int l = 0; l < L_COUNT; l++)
        free(s->head[l]), free(s->item[l]);
    free(s->evict_done), free(s->restore_done), free(s->d2h_us), free(s->h2d_us), free(s->waits);
    free(s->death_adj), free(s->cv), free(s->hp);
    free(s->op_start), free(s->op_end), free(s->win);
    free(s->copy_head), free(s->copy_order);
    plan_link_free(&s->link);
    plan_mover_free(&s->mover);
}

/* ---- the driver ---------------------------------------------------------------------------- */

typedef struct step_sig {
    double dur, back_d2h, back_h2d, back_mover;
    uint64_t peak;
} step_sig;

static bool same_step(const step_sig *a, const step_sig *b)
{
    double tol = PLAN_EPS * PLAN_MAX(1.0, a->dur);
    return a->peak == b->peak && fabs(a->dur - b->dur) <= tol &&
           fabs(a->back_d2h - b->back_d2h) <= tol && fabs(a->back_h2d - b->back_h2d) <= tol &&
           fabs(a->back_mover - b->back_mover) <= tol;
}

static void fill_stats(const sim *s, const step_sig *sig, unsigned steps, uint64_t budget,
                       plan_stats *st)
{
    memset(st, 0, sizeof(*st));
    st->peak_bytes = sig->peak;
    st->step_us = sig->dur;
    st->compute_us = s->c->compute;
    st->stall_us = s->stall;
    st->steps = steps;
    for (size_t i = 0; i < s->p->n; i++) {
        uint64_t b = s->c->m->allocs[s->p->entries[i].alloc].moved;
        st->bytes_to_host += b;
        if (s->p->entries[i].need != PLAN_NO_OP)
            st->bytes_to_device += b;
    }
    st->feasible = sig->peak <= budget;
}

static void fill_trace(const sim *s, double step_start)
{
    plan_trace *tr = s->tr;
    tr->step_start = step_start;
    for (size_t q = 0; q < s->c->n; q++)
        tr->ops[q] = (plan_sim_op){s->op_start[q], s->op_end[q], s->win[q]};
}

static plan_err sim_loop(sim *s, uint64_t budget, plan_stats *st)
{
    step_sig prev = {0}, cur = {0};
    unsigned steps = 0;
    double t0 = 0;
    for (;;) {
        t0 = s->t_end;
        plan_err e = run_step(s);
        if (e)
            return e;
        cur.peak = flush_step(s, s->t_end);
        cur.dur = s->t_end - t0;
        cur.back_d2h = PLAN_MAX(0.0, *s->d2h - s->t_end);
        cur.back_h2d = PLAN_MAX(0.0, *s->h2d - s->t_end);
        cur.back_mover = plan_mover_backlog(&s->mover, s->t_end);
        steps++;
        if ((steps >= 2 && same_step(&cur, &prev)) || steps >= SIM_MAX_STEPS)
            break;
        prev = cur;
    }
    fill_stats(s, &cur, steps, budget, st);
    if (s->tr)
        fill_trace(s, t0);
    return PLAN_OK;
}

plan_err plan_sim_run(const plan_ctx *c, const plan *p, uint64_t budget, plan_stats *st,
                      plan_trace *tr)
{
    sim s = {.c = c, .p = p, .tr = tr};
    uint32_t *gap_of = malloc((p->n ? p->n : 1) * sizeof(*gap_of));
    if (!gap_of)
        return PLAN_ERR_NOMEM;
    plan_err e = plan_check_ctx(c, p, gap_of, NULL, 0);
    if (!e && p->nhost) { /* host-resident allocations: the rest replayed on its own model */
        free(gap_of);
        return tr ? PLAN_ERR_INVALID : plan_host_sim(c, p, budget, st);
    }
    s.gap_of = gap_of;
    if (!e && tr)
        for (size_t i = 0; i < p->n; i++)
            tr->ents[i] = (plan_sim_ent){-1, -1, -1, -1};
    if (!e)
        e = sim_alloc(&s);
    if (!e)
        e = sim_lists(&s);
    if (!e)
        e = sim_prepare(&s);
    if (!e)
        e = sim_loop(&s, budget, st);
    sim_free(&s);
    free(gap_of);
    return e;
}

plan_err plan_simulate(const plan_model *m, const plan *p, uint64_t budget, plan_stats *st)
{
    plan_ctx c;
    plan_err e = plan_ctx_init(&c, m, NULL, 0);
    if (e)
        return e;
    e = plan_sim_run(&c, p, budget, st, NULL);
    plan_ctx_free(&c);
    return e;
}

int plan_stats_cmp(const plan_stats *a, const plan_stats *b)
{
    if (a->feasible != b->feasible)
        return a->feasible ? -1 : 1;
    if (!a->feasible && a->peak_bytes != b->peak_bytes)
        return a->peak_bytes < b->peak_bytes ? -1 : 1;
    double tol = PLAN_EPS * PLAN_MAX(1.0, PLAN_MAX(a->step_us, b->step_us));
    if (fabs(a->stall_us - b->stall_us) > tol)
        return a->stall_us < b->stall_us ? -1 : 1;
    uint64_t ma = a->bytes_to_host + a->bytes_to_device, mb = b->bytes_to_host + b->bytes_to_device;
    return BASE_CMP_THEN(ma, mb, BASE_CMP(a->peak_bytes, b->peak_bytes));
}
