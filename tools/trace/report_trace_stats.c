/* report_trace_stats.c — what the trace subcommands report: steps, kernels, allocations, peak,
 * residency moves and stalls. */
#include "report_trace.h"

#include "base_array.h"
#include "base_order.h"
#include "shim_trace.h"
#include "shim_trace_format.h"

#include <stdlib.h>
#include <string.h>

#define FREED (UINT64_MAX - 1) /* live-map value of an allocation already freed */

/* The maps of one computation. */
typedef struct ctx {
    const report_trace *t;
    report_stats *s;
    report_map func_name; /* func_id -> offset of its name in t->text */
    report_map seq;       /* launch seq -> record index */
    report_map func;      /* func_id -> kernel index */
    report_map by_name;   /* hash of a kernel name -> kernel index */
    report_map live;      /* alloc_id -> allocation index, or FREED */
    size_t kcap, acap, scap, ycap, hcap;
    uint64_t *sync_t; /* times of the synchronisation records, sorted in step_pass */
    size_t nsyncs;
} ctx;

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The name of func_id: its func_name record, else "func#<id>" (kept in s->names). */
static const char *func_name_of(ctx *c, uint64_t func_id)
{
    uint64_t off;
    if (report_map_get(&c->func_name, func_id, &off))
        return c->t->text + off;
    char buf[32], **names = realloc(c->s->names, (c->s->nnames + 1) * sizeof *names);
    if (names == NULL)
        return NULL;
    c->s->names = names;
    snprintf(buf, sizeof buf, "func#%llu", (unsigned long long)func_id);
    if ((names[c->s->nnames] = strdup(buf)) == NULL)
        return NULL;
    return names[c->s->nnames++];
}

/* The kernel (aggregate by name) of func_id, made on first use. -1 when memory ran out. */
static long kernel_of(ctx *c, uint64_t func_id)
{
    uint64_t k;
    if (report_map_get(&c->func, func_id, &k))
        return (long)k;
    const char *name = func_name_of(c, func_id);
    if (name == NULL)
        return -1;
    uint64_t h = hash_name(name);
    int hit = report_map_get(&c->by_name, h, &k);
    if (!hit || strcmp(c->s->kernels[k].name, name) != 0) {
        for (k = 0; k < c->s->nkernels && strcmp(c->s->kernels[k].name, name) != 0; k++)
            ;
        if (k == c->s->nkernels) {
            if (base_array_grow((void **)&c->s->kernels, &c->kcap, k + 1, sizeof *c->s->kernels) !=
                0)
                return -1;
            c->s->kernels[k] = (report_kernel){.name = name};
            c->s->nkernels++;
        }
        if (!hit && report_map_put(&c->by_name, h, k) != 0)
            return -1;
    }
    return report_map_put(&c->func, func_id, k) == 0 ? (long)k : -1;
}

/* The step row of a step_summary record: its own figures (detailed records in its window, if
   any, are added by the later passes). Its window is the record's, whole. */
static report_step summary_step(const report_summary *m)
{
    report_step st = {.step = m->step,
                      .first_seq = m->first_seq,
                      .t_start = m->start_ns,
                      .t_mark = m->end_ns > m->start_ns ? m->end_ns : m->start_ns,
                      .covers = m->steps,
                      .summary = 1,
                      .launches = m->launches,
                      .allocations = m->allocations,
                      .frees = m->frees,
                      .peak_device_bytes = m->peak_device_bytes};
    st.residency =
        (report_residency){.moves = m->moves, .stalls = m->stalls, .stall_ns = m->stall_ns};
    return st;
}

/* Names, launch sequence numbers and steps: what the later passes look up. */
static int index_pass(ctx *c)
{
    report_stats *s = c->s;
    for (size_t i = 0; i < c->t->n; i++) {
        const report_rec *r = &c->t->recs[i];
        uint64_t dummy;
        if (r->kind == SHIM_TRACE_FUNC_NAME && !report_map_get(&c->func_name, r->a, &dummy)) {
            if (report_map_put(&c->func_name, r->a, r->text) != 0)
                return -1;
        } else if (r->kind == SHIM_TRACE_LAUNCH && !report_map_get(&c->seq, r->a, &dummy)) {
            if (report_map_put(&c->seq, r->a, i) != 0)
                return -1;
        } else if (r->kind == SHIM_TRACE_SYNC) {
            if (base_array_grow((void **)&c->sync_t, &c->ycap, c->nsyncs + 1, sizeof *c->sync_t) !=
                0)
                return -1;
            c->sync_t[c->nsyncs++] = r->t_ns;
        } else if (r->kind == SHIM_TRACE_STEP) {
            if (base_array_grow((void **)&s->steps, &c->scap, s->nsteps + 1, sizeof *s->steps) != 0)
                return -1;
            s->steps[s->nsteps++] = (report_step){.step = r->a,
                                                  .first_seq = r->b,
                                                  .t_start = r->t_ns,
                                                  .t_mark = r->t_ns,
                                                  .covers = 1};
        } else if (r->kind == SHIM_TRACE_STEP_SUMMARY && c->t->summaries[r->a].steps > 0) {
            if (base_array_grow((void **)&s->steps, &c->scap, s->nsteps + 1, sizeof *s->steps) != 0)
                return -1;
            s->steps[s->nsteps++] = summary_step(&c->t->summaries[r->a]);
        }
    }
    return 0;
}

static void add_time(report_kernel *k, double usec)
{
    if (k->timed == 0 || usec < k->min_us)
        k->min_us = usec;
    if (k->timed == 0 || usec > k->max_us)
        k->max_us = usec;
    k->timed++;
    k->total_us += usec;
}

/* Launches and kernel times per kernel. */
static int kernel_pass(ctx *c)
{
    report_stats *s = c->s;
    for (size_t i = 0; i < c->t->n; i++) {
        const report_rec *r = &c->t->recs[i];
        uint64_t li;
        if (r->kind == SHIM_TRACE_LAUNCH) {
            long k = kernel_of(c, r->b);
            if (k < 0)
                return -1;
            s->kernels[k].launches++;
            s->launches++;
        } else if (r->kind == SHIM_TRACE_KERNEL_TIME) {
            s->kernel_times++;
            if (!report_map_get(&c->seq, r->a, &li)) {
                s->unmatched_times++;
                continue;
            }
            long k = kernel_of(c, c->t->recs[li].b);
            if (k < 0)
                return -1;
            add_time(&s->kernels[k], r->usec == r->usec ? r->usec : 0);
        }
    }
    return 0;
}

static int by_first_seq(const void *pa, const void *pb)
{
    const report_step *a = pa, *b = pb;
    return BASE_CMP_THEN(a->first_seq, b->first_seq, BASE_CMP(a->step, b->step));
}

static int by_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

/* Index of the first of n sorted values >= key. */
static size_t lower_bound(const uint64_t *v, size_t n, uint64_t key)
{
    size_t lo = 0;
    BASE_BSEARCH(lo, n, mid, v[mid] < key);
    return lo;
}

/* The first launch of seqs[from..m) recorded after time t (m if none). */
static size_t first_after(const ctx *c, const uint64_t *seqs, size_t from, size_t m, uint64_t t)
{
    for (size_t k = from; k < m; k++) {
        uint64_t li;
        if (report_map_get(&c->seq, seqs[k], &li) && c->t->recs[li].t_ns > t)
            return k;
    }
    return m;
}

/* The latest synchronisation strictly before t, or t itself when there is none. */
static uint64_t sync_before(const ctx *c, uint64_t t)
{
    size_t k = lower_bound(c->sync_t, c->nsyncs, t);
    return k ? c->sync_t[k - 1] : t;
}

/* Steps in launch order, repeated marks merged. Steps are separated by the host
   synchronisation that closes one (the loss read of a training loop): a step's time window
   starts at the last synchronisation before its first launch and ends where the next starts;
   its launches run up to the next step's first. The detector writes a step's mark at the
   synchronisation that closes the step, so the last step ends at its mark: launches after it
   (teardown, evaluation) belong to no step. */
static int step_pass(ctx *c)
{
    report_stats *s = c->s;
    if (s->nsteps > 1)
        qsort(s->steps, s->nsteps, sizeof *s->steps, by_first_seq);
    size_t n = 0;
    for (size_t i = 0; i < s->nsteps; i++)
        if (n == 0 || s->steps[n - 1].first_seq != s->steps[i].first_seq ||
            s->steps[n - 1].step != s->steps[i].step)
            s->steps[n++] = s->steps[i];
    s->nsteps = n;
    uint64_t *seqs = malloc((s->launches + 1) * sizeof *seqs);
    if (seqs == NULL)
        return -1;
    size_t m = 0;
    for (size_t i = 0; i < c->t->n; i++)
        if (c->t->recs[i].kind == SHIM_TRACE_LAUNCH)
            seqs[m++] = c->t->recs[i].a;
    qsort(seqs, m, sizeof *seqs, by_u64);
    s->warmup_launches = n ? lower_bound(seqs, m, s->steps[0].first_seq) : m;
    for (size_t i = 0; i < n; i++) {
        report_step *st = &s->steps[i];
        size_t begin = lower_bound(seqs, m, st->first_seq);
        size_t end = i + 1 < n ? lower_bound(seqs, m, s->steps[i + 1].first_seq) : m;
        size_t marked = i + 1 < n ? end : first_after(c, seqs, begin, end, st->t_mark);
        /* a summary row counts its record's launches and any detailed one in its range */
        st->launches = (st->summary ? st->launches : 0) + (marked - begin);
        st->end_seq = marked < m ? seqs[marked] : UINT64_MAX;
        uint64_t li;
        if (!st->summary && report_map_get(&c->seq, st->first_seq, &li))
            st->t_start = c->t->recs[li].t_ns;
        if (i > 0 && st->t_start < s->steps[i - 1].t_start)
            st->t_start = s->steps[i - 1].t_start;
    }
    if (c->nsyncs > 1)
        qsort(c->sync_t, c->nsyncs, sizeof *c->sync_t, by_u64);
    for (size_t i = 0; i < n; i++) /* windows in time: from the synchronisation before */
        if (!s->steps[i].summary)
            s->steps[i].t_start = sync_before(c, s->steps[i].t_start);
    for (size_t i = 1; i < n; i++) /* a summary's window never starts before the step's before */
        if (s->steps[i].t_start < s->steps[i - 1].t_start)
            s->steps[i].t_start = s->steps[i - 1].t_start;
    for (size_t i = 0; i < n; i++)
        s->steps[i].t_end = i + 1 < n ? s->steps[i + 1].t_start : s->steps[i].t_mark;
    free(seqs);
    return 0;
}

/* The value most steps share (the smallest on a tie), ignoring the last step, which may be
   cut short or carry the program's closing work, when there are at least two, and summary rows
   that stand for several steps. */
static uint64_t typical(const report_step *steps, size_t n, int launches)
{
    size_t use = n >= 2 ? n - 1 : n, best_count = 0;
    uint64_t best = 0;
    for (size_t i = 0; i < use; i++) {
        if (steps[i].covers != 1)
            continue;
        uint64_t v = launches ? steps[i].launches : steps[i].allocations;
        size_t count = 0;
        for (size_t j = 0; j < use; j++)
            count +=
                steps[j].covers == 1 && (launches ? steps[j].launches : steps[j].allocations) == v;
        if (count > best_count || (count == best_count && v < best)) {
            best = v;
            best_count = count;
        }
    }
    return best;
}

_Static_assert(REPORT_MAX_DEVICES <= 64, "held.changed has a bit per device slot");

/* Device and pinned host bytes held at the current point of the memory pass. */
typedef struct held {
    uint64_t device, host;           /* device: the primary device's */
    uint64_t on[REPORT_MAX_DEVICES]; /* every device's */
    uint64_t changed;                /* bit d: on[d] changed at this record */
    long step; /* the step being walked, -1 before the first or between steps */
    long next; /* the next step to start */
} held;

static void release(const report_stats *s, report_alloc *a, uint64_t t_ns, held *h)
{
    bool dev = report_alloc_on_device(a->kind);
    if (dev) {
        uint32_t d = report_device_slot(a->device);
        h->on[d] -= a->bytes < h->on[d] ? a->bytes : h->on[d];
        h->changed |= 1ull << d;
    }
    uint64_t *b = !dev ? &h->host : a->device == s->primary_device ? &h->device : NULL;
    if (b)
        *b -= a->bytes < *b ? a->bytes : *b;
    a->freed = 1;
    a->t_free = t_ns;
    a->free_step = h->step;
}

static void hold(report_stats *s, const report_alloc *a, held *h)
{
    if (!report_alloc_on_device(a->kind)) {
        h->host = sat_add(h->host, a->bytes);
        if (h->host > s->peak_host_bytes)
            s->peak_host_bytes = h->host;
        return;
    }
    uint32_t d = report_device_slot(a->device);
    h->on[d] = sat_add(h->on[d], a->bytes);
    h->changed |= 1ull << d;
    s->device_allocs[d]++;
    if (h->on[d] > s->device_peak[d])
        s->device_peak[d] = h->on[d];
    if (d + 1 > s->ndevices)
        s->ndevices = d + 1;
    if (a->device != s->primary_device)
        return;
    h->device = sat_add(h->device, a->bytes);
    if (h->device > s->peak_device_bytes) {
        s->peak_device_bytes = h->device;
        s->peak_t_ns = a->t_alloc;
    }
    if (h->step >= 0 && !s->steps[h->step].summary &&
        h->device > s->steps[h->step].peak_device_bytes)
        s->steps[h->step].peak_device_bytes = h->device;
}

static int on_alloc(ctx *c, const report_rec *r, held *h)
{
    report_stats *s = c->s;
    uint64_t old;
    if (report_map_get(&c->live, r->a, &old) && old != FREED) {
        s->duplicate_allocs++; /* ids are never reused: take it as the end of the old one */
        release(s, &s->allocs[old], r->t_ns, h);
    }
    if (base_array_grow((void **)&s->allocs, &c->acap, s->nallocs + 1, sizeof *s->allocs) != 0 ||
        report_map_put(&c->live, r->a, s->nallocs) != 0)
        return -1;
    report_alloc *a = &s->allocs[s->nallocs++];
    *a = (report_alloc){.id = r->a,
                        .addr = r->b,
                        .bytes = r->c,
                        .stream = r->d,
                        .t_alloc = r->t_ns,
                        .kind = r->sub,
                        .device = r->sub2,
                        .tid = r->tid,
                        .step = h->step,
                        .free_step = -1};
    s->allocations++;
    if (h->step >= 0)
        s->steps[h->step].allocations++;
    hold(s, a, h);
    return 0;
}

static int on_free(ctx *c, const report_rec *r, held *h)
{
    report_stats *s = c->s;
    uint64_t idx;
    s->frees++;
    if (h->step >= 0)
        s->steps[h->step].frees++;
    if (!report_map_get(&c->live, r->a, &idx) || idx == FREED) {
        s->unmatched_frees++;
        return 0;
    }
    release(s, &s->allocs[idx], r->t_ns, h);
    return report_map_put(&c->live, r->a, FREED);
}

static void on_launch(ctx *c, const report_rec *r)
{
    const char *kernel = NULL; /* its name, looked up at the first allocation it touches */
    for (uint32_t i = 0; i < r->n_ids; i++) {
        uint64_t idx;
        if (!report_map_get(&c->live, c->t->ids[r->ids + i], &idx) || idx == FREED)
            continue;
        report_alloc *a = &c->s->allocs[idx];
        a->touches++;
        if (kernel == NULL) {
            long k = kernel_of(c, r->b); /* made by kernel_pass already: no allocation */
            kernel = k >= 0 ? c->s->kernels[k].name : "?";
        }
        if (a->first_kernel == NULL)
            a->first_kernel = kernel;
        a->last_kernel = kernel;
    }
}

static void on_other(report_stats *s, const report_rec *r)
{
    if (r->kind == SHIM_TRACE_COPY) {
        s->copies++;
        if (r->sub < sizeof s->copy_bytes / sizeof s->copy_bytes[0])
            s->copy_bytes[r->sub] = sat_add(s->copy_bytes[r->sub], r->c);
    }
    s->syncs += r->kind == SHIM_TRACE_SYNC;
    s->graph_launches += r->kind == SHIM_TRACE_GRAPH_LAUNCH;
    s->notes += r->kind == SHIM_TRACE_NOTE;
}

/* Contract in report_trace.h. */
uint32_t report_primary_device(const report_trace *t)
{
    const report_rec *first = NULL;
    for (size_t i = 0; i < t->n; i++) {
        const report_rec *r = &t->recs[i];
        if (r->kind != SHIM_TRACE_ALLOC || !report_alloc_on_device(r->sub))
            continue;
        if (r->sub == PLAN_MEM_MANAGED)
            return r->sub2;
        if (!first)
            first = r;
    }
    return first ? first->sub2 : 0;
}

/* Contract in report_trace.h. */
uint32_t report_device_count(const report_trace *t)
{
    uint32_t n = 1;
    for (size_t i = 0; i < t->n; i++) {
        const report_rec *r = &t->recs[i];
        if (r->kind == SHIM_TRACE_ALLOC && report_alloc_on_device(r->sub) && r->sub2 >= n)
            n = r->sub2 < REPORT_MAX_DEVICES ? r->sub2 + 1 : REPORT_MAX_DEVICES;
    }
    return n;
}

/* Allocations, frees and touches in time order; peaks overall and per step. */
static int memory_pass(ctx *c)
{
    report_stats *s = c->s;
    held h = {.step = -1};
    s->primary_device = report_primary_device(c->t);
    for (size_t i = 0; i < c->t->n; i++) {
        const report_rec *r = &c->t->recs[i];
        while ((size_t)h.next < s->nsteps && r->t_ns >= s->steps[h.next].t_start) {
            h.step = h.next++;
            if (!s->steps[h.step].summary) /* a summary's peak is the writer's */
                s->steps[h.step].peak_device_bytes = h.device;
        }
        if (h.step >= 0 && r->t_ns >= s->steps[h.step].t_end)
            h.step = -1; /* past the end of the steady state */
        int rc = 0;
        h.changed = 0;
        if (r->kind == SHIM_TRACE_ALLOC)
            rc = on_alloc(c, r, &h);
        else if (r->kind == SHIM_TRACE_FREE)
            rc = on_free(c, r, &h);
        else if (r->kind == SHIM_TRACE_LAUNCH)
            on_launch(c, r);
        else
            on_other(s, r);
        for (uint64_t bits = h.changed; rc == 0 && bits; bits &= bits - 1) { /* each changed */
            uint32_t d = (uint32_t)__builtin_ctzll(bits);
            rc = base_array_grow((void **)&s->held, &c->hcap, s->nheld + 1, sizeof *s->held);
            if (rc == 0)
                s->held[s->nheld++] = (report_held){r->t_ns, i, h.on[d], d};
        }
        if (rc != 0)
            return -1;
    }
    s->end_device_bytes = h.device;
    return 0;
}

/* The step whose window [t_start, t_end) holds t, or NULL. Step windows follow one another
   (starts never decrease, each ends where the next starts), so the candidate is the last step
   that starts at or before t. */
static report_step *step_at(report_stats *s, uint64_t t)
{
    size_t lo = 0;
    BASE_BSEARCH(lo, s->nsteps, mid, s->steps[mid].t_start <= t);
    return lo > 0 && t < s->steps[lo - 1].t_end ? &s->steps[lo - 1] : NULL;
}

static void add_reason(report_stats *s, uint32_t reason)
{
    s->moves_by_reason[reason < sizeof s->moves_by_reason / sizeof s->moves_by_reason[0] ? reason
                                                                                         : 0]++;
}

/* A move record counts as the writer's step summaries count it (shim_trace_count_move). */
static void add_move(report_residency *x, const report_rec *r)
{
    shim_trace_count_move(&x->moves, r->sub, r->sub2, r->b);
}

static void add_stall(report_residency *x, const report_rec *r)
{
    x->stalls++;
    x->stall_ns = sat_add(x->stall_ns, r->d > r->c ? r->d - r->c : 0);
}

/* Contract in report_trace.h. */
uint32_t report_device_slot(uint64_t device)
{
    return device < REPORT_MAX_DEVICES ? (uint32_t)device : REPORT_MAX_DEVICES - 1;
}

/* Contract in report_trace.h. */
int report_device_shown(const report_stats *s, uint32_t d)
{
    const report_residency *x = d < REPORT_MAX_DEVICES ? &s->device_residency[d] : NULL;
    return x != NULL && (d == report_device_slot(s->primary_device) ||
                         (d < s->ndevices && s->device_allocs[d] > 0) ||
                         x->moves.evictions + x->moves.cancelled_evictions + x->moves.restores > 0);
}

/* Contract in report_trace.h. */
uint32_t report_record_device(const report_trace *t, const report_rec *r, uint32_t primary)
{
    int v17 = t->major > 1 || t->minor >= 7, v18 = t->major > 1 || t->minor >= 8;
    switch (r->kind) {
    case SHIM_TRACE_ALLOC:
        return report_device_slot(r->sub2);
    case SHIM_TRACE_BUDGET:
        return report_device_slot(v17 ? r->d : primary);
    case SHIM_TRACE_MOVE:
    case SHIM_TRACE_STALL:
        return report_device_slot(v17 ? r->e : primary);
    case SHIM_TRACE_TRANSITION:
    case SHIM_TRACE_SLAB:
        return report_device_slot(v18 ? r->device : primary);
    default:
        return report_device_slot(primary);
    }
}

/* Budget records (a device's last one is its budget, as a manager records a budget again if it
   changes; the trace's budget is the primary device's, else the last of any device), and moves
   and stalls overall, per step and per device: a move or a stall belongs to the step whose
   window holds its start_ns. */
static void residency_pass(ctx *c)
{
    report_stats *s = c->s;
    int primary_budget = 0;
    for (size_t i = 0; i < c->t->n; i++) {
        const report_rec *r = &c->t->recs[i];
        report_step *st =
            r->kind == SHIM_TRACE_MOVE || r->kind == SHIM_TRACE_STALL ? step_at(s, r->c) : NULL;
        if (r->kind == SHIM_TRACE_BUDGET) {
            uint32_t d = report_record_device(c->t, r, s->primary_device);
            s->device_budget[d] = r->a;
            s->budgets++;
            int primary = d == report_device_slot(s->primary_device);
            if (primary || !primary_budget) {
                s->budget_bytes = r->a;
                s->host_budget_bytes = r->b;
                s->device_total = r->c;
            }
            primary_budget |= primary;
        } else if (r->kind == SHIM_TRACE_STALL) {
            add_stall(&s->residency, r);
            add_stall(&s->device_residency[report_record_device(c->t, r, s->primary_device)], r);
            if (st != NULL)
                add_stall(&st->residency, r);
        } else if (r->kind == SHIM_TRACE_MOVE && r->sub != SHIM_MOVE_TO_HOST &&
                   r->sub != SHIM_MOVE_TO_DEVICE) {
            s->odd_moves++;
        } else if (r->kind == SHIM_TRACE_MOVE) {
            add_move(&s->residency, r);
            add_move(&s->device_residency[report_record_device(c->t, r, s->primary_device)], r);
            add_reason(s, r->sub2);
            if (st != NULL)
                add_move(&st->residency, r);
        }
    }
}

static void add_residency(report_residency *x, const report_summary *m)
{
    shim_trace_move_counts_add(&x->moves, &m->moves);
    x->stalls = sat_add(x->stalls, m->stalls);
    x->stall_ns = sat_add(x->stall_ns, m->stall_ns);
}

/* The step_summary records (format 1.4) counted into the totals: what they folded is in no
   other record. The peaks are the larger of the detail's and theirs; the device bytes at the
   end are the last summary's when it ends after the last allocation or free read. */
static void summary_pass(ctx *c)
{
    report_stats *s = c->s;
    uint64_t last_memory = 0, last_end = 0;
    for (size_t i = 0; i < c->t->n; i++)
        if (c->t->recs[i].kind == SHIM_TRACE_ALLOC || c->t->recs[i].kind == SHIM_TRACE_FREE)
            last_memory = c->t->recs[i].t_ns;
    for (size_t i = 0; i < c->t->nsummaries; i++) {
        const report_summary *m = &c->t->summaries[i];
        s->summaries++;
        s->summarised_steps = sat_add(s->summarised_steps, m->steps);
        s->summarised_records = sat_add(s->summarised_records, m->records);
        if (m->steps > 0 && (s->summarised_steps == m->steps || m->step < s->first_summarised_step))
            s->first_summarised_step = m->step;
        s->launches = sat_add(s->launches, m->launches);
        s->allocations = sat_add(s->allocations, m->allocations);
        s->frees = sat_add(s->frees, m->frees);
        s->copies = sat_add(s->copies, m->copies);
        s->syncs = sat_add(s->syncs, m->syncs);
        s->graph_launches = sat_add(s->graph_launches, m->graph_launches);
        s->kernel_times = sat_add(s->kernel_times, m->kernel_times);
        add_residency(&s->residency, m);
        for (size_t k = 0; k < sizeof m->moves_by_reason / sizeof m->moves_by_reason[0]; k++)
            s->moves_by_reason[k] = sat_add(s->moves_by_reason[k], m->moves_by_reason[k]);
        if (m->peak_device_bytes > s->peak_device_bytes) {
            s->peak_device_bytes = m->peak_device_bytes;
            s->peak_t_ns = m->start_ns;
        }
        if (m->peak_host_bytes > s->peak_host_bytes)
            s->peak_host_bytes = m->peak_host_bytes;
        if (m->end_ns >= last_end && m->end_ns >= last_memory) {
            last_end = m->end_ns;
            s->end_device_bytes = m->device_bytes;
        }
    }
}

static int by_total(const void *pa, const void *pb)
{
    const report_kernel *a = pa, *b = pb;
    return BASE_CMP_THEN(b->total_us, a->total_us,
                         BASE_CMP_THEN(b->launches, a->launches, strcmp(a->name, b->name)));
}

/* Contract in report_trace.h. */
int report_stats_compute(report_stats *s, const report_trace *t)
{
    memset(s, 0, sizeof *s);
    ctx c = {.t = t, .s = s};
    int rc =
        index_pass(&c) == 0 && kernel_pass(&c) == 0 && step_pass(&c) == 0 && memory_pass(&c) == 0
            ? 0
            : -1;
    if (rc == 0) {
        residency_pass(&c);
        summary_pass(&c);
    }
    report_map_free(&c.func_name);
    report_map_free(&c.seq);
    report_map_free(&c.func);
    report_map_free(&c.by_name);
    report_map_free(&c.live);
    free(c.sync_t);
    if (rc != 0) {
        report_stats_free(s);
        return -1;
    }
    if (s->nkernels > 1)
        qsort(s->kernels, s->nkernels, sizeof *s->kernels, by_total);
    for (size_t i = 0; i < s->nsteps; i++)
        s->iterations = sat_add(s->iterations, s->steps[i].covers);
    s->launches_per_iteration = typical(s->steps, s->nsteps, 1);
    s->allocations_per_iteration = typical(s->steps, s->nsteps, 0);
    if (t->n > 0) {
        s->first_ns = t->recs[0].t_ns;
        s->last_ns = t->recs[t->n - 1].t_ns;
    }
    return 0;
}

/* Contract in report_trace.h. */
double report_step_wall_us(const report_step *st)
{
    return st->t_end >= st->t_start ? (double)(st->t_end - st->t_start) / 1e3 : -1.0;
}

/* Contract in report_trace.h. */
int report_alloc_on_device(uint32_t kind)
{
    return kind != PLAN_MEM_HOST;
}

/* Contract in report_trace.h. */
void report_stats_free(report_stats *s)
{
    for (size_t i = 0; i < s->nnames; i++)
        free(s->names[i]);
    free(s->names);
    free(s->steps);
    free(s->kernels);
    free(s->allocs);
    free(s->held);
    memset(s, 0, sizeof *s);
}
