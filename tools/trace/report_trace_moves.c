/* report_trace_moves.c — residency transitions (format 1.2) paired into moves: each EVICT or
 * RESTORE with the transition of the same unit that ended it, slabs with the allocations that
 * live in them, each move's device (format 1.8), and the totals `shim-report moves` prints. */
#include "report_trace.h"

#include "base_array.h"
#include "base_order.h"
#include "shim_trace.h"
#include "shim_trace_format.h"

#include <stdlib.h>
#include <string.h>

#define CLOSED (UINT64_MAX - 1) /* open-move map value: the unit has no move in flight */

/* A slab's range. */
typedef struct slab {
    uint64_t addr, bytes;
} slab;

/* The state of one computation. */
typedef struct ctx {
    const report_trace *t;
    const report_stats *s;
    report_moves *m;
    size_t mcap, ocap;
    report_map open;    /* unit id -> index of its move in flight, or CLOSED */
    report_map slab_of; /* slab id -> index in slabs (the first record of an id wins) */
    slab *slabs;
    size_t nslabs;
    const report_alloc **by_addr; /* the device allocations, by address */
    size_t nby_addr;
} ctx;

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

static int by_addr(const void *pa, const void *pb)
{
    const report_alloc *a = *(report_alloc *const *)pa, *b = *(report_alloc *const *)pb;
    return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* The slab records, and the device allocations sorted by address to count their members. */
static int slab_pass(ctx *c)
{
    size_t cap = 0;
    for (size_t i = 0; i < c->t->n; i++) {
        const report_rec *r = &c->t->recs[i];
        uint64_t dummy;
        if (r->kind != SHIM_TRACE_SLAB)
            continue;
        c->m->slabs++;
        if (report_map_get(&c->slab_of, r->a, &dummy))
            continue;
        if (base_array_grow((void **)&c->slabs, &cap, c->nslabs + 1, sizeof *c->slabs) != 0 ||
            report_map_put(&c->slab_of, r->a, c->nslabs) != 0)
            return -1;
        c->slabs[c->nslabs++] = (slab){r->b, r->c};
    }
    if (c->nslabs == 0)
        return 0;
    c->by_addr = malloc((c->s->nallocs + 1) * sizeof *c->by_addr);
    if (c->by_addr == NULL)
        return -1;
    for (size_t i = 0; i < c->s->nallocs; i++)
        if (report_alloc_on_device(c->s->allocs[i].kind))
            c->by_addr[c->nby_addr++] = &c->s->allocs[i];
    if (c->nby_addr > 1)
        qsort(c->by_addr, c->nby_addr, sizeof *c->by_addr, by_addr);
    return 0;
}

/* Whether unit is a slab; if so, its allocations live at time t in *members. */
static int slab_members(const ctx *c, uint64_t unit, uint64_t t, uint64_t *members)
{
    uint64_t k;
    *members = 0;
    if (!report_map_get(&c->slab_of, unit, &k))
        return 0;
    const slab *sl = &c->slabs[k];
    size_t lo = 0; /* the first allocation at or after the slab's start */
    BASE_BSEARCH(lo, c->nby_addr, mid, c->by_addr[mid]->addr < sl->addr);
    for (size_t i = lo; i < c->nby_addr && c->by_addr[i]->addr - sl->addr < sl->bytes; i++) {
        const report_alloc *a = c->by_addr[i];
        *members += a->t_alloc <= t && (!a->freed || a->t_free > t);
    }
    return 1;
}

/* A transition that is not a move's start or its completion (COPY_DONE, ORDERED); ended: the
   move it ended. */
static int add_other(ctx *c, size_t rec, size_t ended)
{
    report_moves *m = c->m;
    if (base_array_grow((void **)&m->others, &c->ocap, m->nothers + 1, sizeof *m->others) != 0)
        return -1;
    report_other *o = &m->others[m->nothers++];
    *o = (report_other){.rec = rec,
                        .move = ended,
                        .device =
                            report_record_device(c->t, &c->t->recs[rec], c->s->primary_device)};
    o->slab = slab_members(c, c->t->recs[rec].a, c->t->recs[rec].t_ns, &o->members);
    return 0;
}

static uint32_t outcome_of(uint32_t event)
{
    return event == SHIM_EV_COPY_DONE || event == SHIM_EV_ORDERED ? REPORT_DONE
           : event == SHIM_EV_CANCEL                              ? REPORT_CANCELLED
           : event == SHIM_EV_ERROR                               ? REPORT_ERROR
                                                                  : REPORT_FREED;
}

/* Ends move k with the transition at rec (SIZE_MAX: with no transition, as outcome). */
static void end_move(ctx *c, size_t k, size_t rec, uint32_t outcome)
{
    report_move *mv = &c->m->moves[k];
    mv->outcome = outcome;
    if (rec == SIZE_MAX)
        return;
    const report_rec *r = &c->t->recs[rec];
    mv->end_rec = rec;
    mv->t_end = r->t_ns;
    mv->end_seq = r->c;
    mv->end_event = r->sub;
    mv->end_reason = r->sub2;
}

/* An EVICT or RESTORE: a new move of its unit (ending one still in flight as superseded). */
static int start_move(ctx *c, size_t rec, uint64_t open)
{
    const report_rec *r = &c->t->recs[rec];
    report_moves *m = c->m;
    if (open != CLOSED)
        end_move(c, open, SIZE_MAX, REPORT_SUPERSEDED);
    if (base_array_grow((void **)&m->moves, &c->mcap, m->nmoves + 1, sizeof *m->moves) != 0 ||
        report_map_put(&c->open, r->a, m->nmoves) != 0)
        return -1;
    report_move *mv = &m->moves[m->nmoves++];
    *mv = (report_move){.unit = r->a,
                        .bytes = r->b,
                        .seq = r->c,
                        .stream = r->d,
                        .score = r->e,
                        .next_use = r->f,
                        .t_start = r->t_ns,
                        .start_rec = rec,
                        .end_rec = SIZE_MAX,
                        .event = r->sub,
                        .reason = r->sub2,
                        .outcome = REPORT_UNFINISHED,
                        .device = report_record_device(c->t, r, c->s->primary_device)};
    mv->slab = slab_members(c, r->a, r->t_ns, &mv->members);
    return 0;
}

/* One transition record, in time order. */
static int on_transition(ctx *c, size_t rec)
{
    const report_rec *r = &c->t->recs[rec];
    uint64_t open;
    if (!report_map_get(&c->open, r->a, &open))
        open = CLOSED;
    c->m->transitions++;
    if (r->sub == SHIM_EV_EVICT || r->sub == SHIM_EV_RESTORE)
        return start_move(c, rec, open);
    int done = r->sub == SHIM_EV_COPY_DONE || r->sub == SHIM_EV_ORDERED;
    int ends =
        done || r->sub == SHIM_EV_CANCEL || r->sub == SHIM_EV_ERROR || r->sub == SHIM_EV_FREE;
    if (ends && open != CLOSED) {
        end_move(c, open, rec, outcome_of(r->sub));
        if (report_map_put(&c->open, r->a, CLOSED) != 0)
            return -1;
        return done ? 0 : add_other(c, rec, open);
    }
    return add_other(c, rec, SIZE_MAX);
}

/* The pairs' outcomes as the taxonomy every surface prints names them (shim_trace_figures.h). */
static void taxonomy_add(struct shim_fig_moves *x, const report_move *mv)
{
    static const int outcome[REPORT_OUTCOMES] = {
        [REPORT_DONE] = SHIM_FIG_DONE,   [REPORT_CANCELLED] = SHIM_FIG_CANCELLED,
        [REPORT_ERROR] = SHIM_FIG_ERROR, [REPORT_FREED] = SHIM_FIG_FREED,
        [REPORT_SUPERSEDED] = -1,        [REPORT_UNFINISHED] = -2};
    x->by_reason[mv->reason < SHIM_FIG_REASONS ? mv->reason : 0]++;
    (*(mv->event == SHIM_EV_EVICT ? &x->to_host : &x->to_device))++;
    int o = outcome[mv->outcome];
    if (o >= 0)
        x->by_outcome[o]++;
    else if (o == -1)
        x->superseded++;
}

static void totals(report_moves *m)
{
    for (size_t i = 0; i < m->nmoves; i++) {
        const report_move *mv = &m->moves[i];
        m->by_reason[mv->reason < REPORT_REASONS ? mv->reason : 0]++;
        m->by_outcome[mv->outcome]++;
        taxonomy_add(&m->taxonomy, mv);
        m->by_device[mv->device]++;
        uint64_t *b = mv->event == SHIM_EV_EVICT ? &m->bytes_to_host : &m->bytes_to_device;
        *b = sat_add(*b, mv->bytes);
    }
}

/* Contract in report_trace.h. */
int report_moves_compute(report_moves *m, const report_trace *t, const report_stats *s)
{
    memset(m, 0, sizeof *m);
    ctx c = {.t = t, .s = s, .m = m};
    int rc = slab_pass(&c);
    for (size_t i = 0; rc == 0 && i < t->n; i++)
        if (t->recs[i].kind == SHIM_TRACE_TRANSITION)
            rc = on_transition(&c, i);
    report_map_free(&c.open);
    report_map_free(&c.slab_of);
    free(c.slabs);
    free(c.by_addr);
    if (rc != 0) {
        report_moves_free(m);
        return -1;
    }
    totals(m);
    m->stats = s;
    for (size_t i = 0; i < m->nmoves; i++)
        if (!m->moves[i].slab)
            m->moves[i].alloc = report_alloc_find(s, m->moves[i].unit);
    return 0;
}

/* Contract in report_trace.h. */
void report_moves_free(report_moves *m)
{
    free(m->moves);
    free(m->others);
    memset(m, 0, sizeof *m);
}

/* Contract in report_trace.h. */
const char *report_outcome_name(uint32_t outcome)
{
    static const char *names[] = {"done",  "cancelled",  "error",
                                  "freed", "superseded", "unfinished"};
    return outcome < sizeof names / sizeof names[0] ? names[outcome] : "?";
}
