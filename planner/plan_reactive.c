/* planner/plan_reactive.c — the reactive planner: what the shim does without a plan.
 *
 * Walks the step in launch order with the set of resident allocations. Before operation p, when
 * the resident bytes (with p's births and the copies back p needs) exceed the budget, it evicts
 * resident allocations that p does not touch, furthest next use first (an allocation never used
 * again before its death goes first), and p waits for those copies; an evicted allocation is
 * copied back by the operation that touches it next (restore on touch). Allocations that no gap
 * can cover (before the first touch of one that exists before the step, after the last touch of
 * one that outlives it) are never chosen. The walk runs step after step from an all-resident
 * start; a decision, once made, is a plan entry that later steps repeat at the same point (the
 * plan has one entry per gap; an entry only ever moves earlier, when memory runs out before its
 * point), and the walk stops after a step that changes nothing: that step is exactly what the
 * plan replays (at most REACTIVE_PASSES steps). */
#include "plan_internal.h"

#include "base_array.h"

#include <stdlib.h>
#include <string.h>

#define REACTIVE_PASSES 16
#define NEVER           INT64_MAX /* next use of an allocation that dies before touching again */

typedef struct rheap_item {
    int64_t key;
    uint32_t alloc;
} rheap_item;

typedef struct reactive {
    const plan_ctx *c;
    uint64_t budget;
    uint32_t *op_head, *op_alloc;   /* allocations anchored at op p */
    uint32_t *die_head, *die_alloc; /* allocations dying at the end of op p */
    int64_t *key;                   /* next use (absolute position), -1: not evictable now */
    int64_t *last_abs;              /* last anchor (absolute position) */
    uint8_t *resident, *live;
    int64_t res;
    rheap_item *hp;
    size_t nhp, chp;
    int32_t *entry_of;        /* per gap: its plan entry, or -1 */
    uint32_t *due_head, *due; /* plan entries by the point (wait_at mod n) they evict at */
    size_t added;             /* entries added in this pass */
    plan *out;
} reactive;

static plan_err rpush(reactive *r, int64_t key, uint32_t x)
{
    if (base_array_grow((void **)&r->hp, &r->chp, r->nhp + 1, sizeof(*r->hp)))
        return PLAN_ERR_NOMEM;
    size_t i = r->nhp++;
    r->hp[i] = (rheap_item){key, x};
    while (i && r->hp[(i - 1) / 2].key < r->hp[i].key) {
        rheap_item t = r->hp[i];
        r->hp[i] = r->hp[(i - 1) / 2], r->hp[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
    return PLAN_OK;
}

static void rpop(reactive *r)
{
    r->hp[0] = r->hp[--r->nhp];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < r->nhp && r->hp[l].key > r->hp[m].key)
            m = l;
        if (l + 1 < r->nhp && r->hp[l + 1].key > r->hp[m].key)
            m = l + 1;
        if (m == i)
            return;
        rheap_item t = r->hp[i];
        r->hp[i] = r->hp[m], r->hp[m] = t;
        i = m;
    }
}

/* Transposes the anchors (touches and births) into per-operation lists. */
static plan_err build_anchors(reactive *r)
{
    const plan_model *m = r->c->m;
    size_t n = r->c->n;
    r->op_head = calloc(n + 2, sizeof(*r->op_head));
    r->op_alloc = malloc((m->ntouches + m->nallocs + 1) * sizeof(*r->op_alloc));
    if (!r->op_head || !r->op_alloc)
        return PLAN_ERR_NOMEM;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t x = 0; x < m->nallocs; x++) {
            const plan_alloc *a = &m->allocs[x];
            const int32_t *t = m->touches + a->touch_first;
            bool birth_extra = a->birth >= 0 && (a->ntouch == 0 || t[0] != a->birth);
            for (uint32_t k = 0; k < a->ntouch + birth_extra; k++) {
                int32_t q = (birth_extra && k == 0) ? a->birth : t[k - birth_extra];
                if (pass == 0)
                    r->op_head[q + 2]++;
                else
                    r->op_alloc[r->op_head[q + 1]++] = x;
            }
        }
        if (pass == 0)
            for (size_t q = 0; q < n; q++)
                r->op_head[q + 2] += r->op_head[q + 1];
    }
    return PLAN_OK;
}

static plan_err build_deaths(reactive *r)
{
    const plan_model *m = r->c->m;
    size_t n = r->c->n;
    r->die_head = calloc(n + 2, sizeof(*r->die_head));
    r->die_alloc = malloc((m->nallocs + 1) * sizeof(*r->die_alloc));
    if (!r->die_head || !r->die_alloc)
        return PLAN_ERR_NOMEM;
    for (uint32_t x = 0; x < m->nallocs; x++)
        if (m->allocs[x].death >= 0)
            r->die_head[m->allocs[x].death + 2]++;
    for (size_t q = 0; q < n; q++)
        r->die_head[q + 2] += r->die_head[q + 1];
    for (uint32_t x = 0; x < m->nallocs; x++)
        if (m->allocs[x].death >= 0)
            r->die_alloc[r->die_head[m->allocs[x].death + 1]++] = x;
    return PLAN_OK;
}

/* Next use of x after the anchor at absolute position P (in pass P / n), or -1 if x cannot be
 * evicted until then, NEVER if it dies on host. */
static int64_t next_use(const reactive *r, uint32_t x, int64_t P)
{
    const plan_model *m = r->c->m;
    const plan_alloc *a = &m->allocs[x];
    int64_t n = (int64_t)r->c->n, base = P / n * n, p = P % n;
    const int32_t *t = m->touches + a->touch_first;
    size_t lo = 0, hi = a->ntouch; /* first touch > p */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t[mid] <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < a->ntouch)
        return base + t[lo];
    if (a->birth < 0 && a->death < 0 && a->ntouch)
        return base + n + t[0];
    return a->death >= 0 ? NEVER : -1;
}

/* Records the eviction of x before position P (absolute) as a plan entry. */
static plan_err record(reactive *r, uint32_t x, int64_t P)
{
    int64_t n = (int64_t)r->c->n, base = r->last_abs[x] / n * n;
    int32_t evict = (int32_t)(P - 1 - base), wait = (int32_t)(P - base);
    size_t g = plan_ctx_find_gap(r->c, x, evict);
    if (g == SIZE_MAX)
        return PLAN_OK;
    int32_t i = r->entry_of[g];
    if (i >= 0) { /* planned later: memory ran out before that, so evict here from now on */
        plan_entry *old = &r->out->entries[i];
        if (old->evict_after > evict) {
            old->evict_after = evict, old->wait_at = wait;
            r->added++;
        }
        return PLAN_OK;
    }
    r->entry_of[g] = (int32_t)r->out->n;
    r->added++;
    plan_entry e = plan_ctx_entry(r->c, g, r->c->gaps[g].b, wait);
    e.evict_after = evict; /* when memory runs out, not after the last touch */
    return plan_push(r->out, e);
}

/* Evicts furthest-next-use allocations until `demand` fits; p is the current absolute position. */
static plan_err make_room(reactive *r, int64_t demand, int64_t P)
{
    const plan_model *m = r->c->m;
    while (demand > (int64_t)r->budget && r->nhp) {
        rheap_item top = r->hp[0];
        uint32_t x = top.alloc;
        if (!r->resident[x] || !r->live[x] || r->key[x] != top.key) {
            rpop(r);
            continue;
        }
        if (top.key <= P)
            break; /* only allocations this operation touches are left */
        rpop(r);
        r->resident[x] = 0;
        r->res -= (int64_t)m->allocs[x].bytes;
        demand -= (int64_t)m->allocs[x].bytes;
        plan_err e = record(r, x, P);
        if (e)
            return e;
    }
    return PLAN_OK;
}

/* Repeats the plan's evictions due before absolute position P. */
static void forced(reactive *r, int64_t P)
{
    int64_t n = (int64_t)r->c->n;
    size_t p = (size_t)(P % n);
    for (uint32_t k = r->due_head[p]; k < r->due_head[p + 1]; k++) {
        const plan_entry *e = &r->out->entries[r->due[k]];
        uint32_t x = e->alloc;
        int64_t base = r->last_abs[x] / n * n;
        if (!r->resident[x] || !r->live[x] || base + e->wait_at != P ||
            r->last_abs[x] - base > e->evict_after)
            continue; /* this instance is not in that gap now */
        r->resident[x] = 0;
        r->res -= (int64_t)r->c->m->allocs[x].bytes;
    }
}

/* Indexes the plan's entries by the point they evict at. */
static plan_err index_due(reactive *r)
{
    size_t n = r->c->n, E = r->out->n;
    uint32_t *h = calloc(n + 2, sizeof(*h)), *d = malloc((E + 1) * sizeof(*d));
    if (!h || !d) {
        free(h);
        free(d);
        return PLAN_ERR_NOMEM;
    }
    for (size_t i = 0; i < E; i++)
        h[(size_t)r->out->entries[i].wait_at % n + 2]++;
    for (size_t q = 0; q < n; q++)
        h[q + 2] += h[q + 1];
    for (size_t i = 0; i < E; i++)
        d[h[(size_t)r->out->entries[i].wait_at % n + 1]++] = (uint32_t)i;
    free(r->due_head);
    free(r->due);
    r->due_head = h, r->due = d;
    return PLAN_OK;
}

static void kill(reactive *r, uint32_t x)
{
    if (r->live[x] && r->resident[x])
        r->res -= (int64_t)r->c->m->allocs[x].bytes;
    r->live[x] = 0, r->resident[x] = 0;
}

/* Births and copies back of operation p, room for them, then the new next uses. */
static plan_err visit_op(reactive *r, int64_t P)
{
    const plan_model *m = r->c->m;
    size_t p = (size_t)(P % (int64_t)r->c->n);
    forced(r, P);
    int64_t demand = r->res;
    for (uint32_t k = r->op_head[p]; k < r->op_head[p + 1]; k++) {
        uint32_t x = r->op_alloc[k];
        if (!r->resident[x] || !r->live[x])
            demand += (int64_t)m->allocs[x].bytes;
        r->key[x] = P; /* touched now: not a victim */
    }
    plan_err e = make_room(r, demand, P);
    for (uint32_t k = r->op_head[p]; k < r->op_head[p + 1] && !e; k++) {
        uint32_t x = r->op_alloc[k];
        if (!r->resident[x] || !r->live[x])
            r->res += (int64_t)m->allocs[x].bytes;
        r->resident[x] = r->live[x] = 1;
        r->last_abs[x] = P;
        r->key[x] = next_use(r, x, P);
        if (r->key[x] >= 0)
            e = rpush(r, r->key[x], x);
    }
    return e;
}

/* Allocations that exist at the start of a pass: those born before the step (again), and in
 * the first pass the cyclic ones, idle in their wrapping gap until their first touch. */
static plan_err start_pass(reactive *r, int pass)
{
    const plan_model *m = r->c->m;
    for (uint32_t x = 0; x < m->nallocs; x++) {
        const plan_alloc *a = &m->allocs[x];
        if (a->birth >= 0 || (a->death < 0 && pass > 0))
            continue;
        if (!r->live[x])
            r->res += (int64_t)a->bytes;
        r->live[x] = r->resident[x] = 1;
        r->key[x] = -1;
        if (a->death < 0 && a->ntouch) { /* cyclic: last touched in the step before */
            r->last_abs[x] = m->touches[a->touch_first + a->ntouch - 1];
            r->key[x] = next_use(r, x, r->last_abs[x]);
            plan_err e = rpush(r, r->key[x], x);
            if (e)
                return e;
        }
    }
    return PLAN_OK;
}

/* Pass `pass` covers absolute positions [(pass + 1) n, (pass + 2) n): never negative. */
static plan_err run_pass(reactive *r, int pass)
{
    const plan_model *m = r->c->m;
    int64_t n = (int64_t)r->c->n;
    plan_err e = index_due(r);
    if (!e)
        e = start_pass(r, pass);
    for (int64_t p = 0; p < n && !e; p++) {
        e = visit_op(r, (pass + 1) * n + p);
        for (uint32_t k = r->die_head[p]; k < r->die_head[p + 1]; k++)
            kill(r, r->die_alloc[k]);
    }
    for (uint32_t x = 0; x < m->nallocs; x++)
        if (m->allocs[x].birth >= 0 && m->allocs[x].death < 0)
            kill(r, x);
    return e;
}

static void reactive_free(reactive *r)
{
    free(r->op_head), free(r->op_alloc), free(r->die_head), free(r->die_alloc);
    free(r->key), free(r->last_abs);
    free(r->resident), free(r->live), free(r->hp), free(r->entry_of);
    free(r->due_head), free(r->due);
}

plan_err plan_reactive(const plan_ctx *c, uint64_t budget, plan *out)
{
    size_t na = c->m->nallocs ? c->m->nallocs : 1;
    reactive r = {.c = c, .budget = budget, .out = out};
    r.key = malloc(na * sizeof(*r.key));
    r.last_abs = calloc(na, sizeof(*r.last_abs));
    r.resident = calloc(na, 1);
    r.live = calloc(na, 1);
    r.entry_of = malloc((c->ngaps + 1) * sizeof(*r.entry_of));
    plan_err e = (!r.key || !r.last_abs || !r.resident || !r.live || !r.entry_of)
                     ? PLAN_ERR_NOMEM
                     : build_anchors(&r);
    for (size_t g = 0; g < c->ngaps && r.entry_of; g++)
        r.entry_of[g] = -1;
    if (!e)
        e = build_deaths(&r);
    for (size_t x = 0; x < na && r.key; x++)
        r.key[x] = -1;
    out->n = 0;
    for (int pass = 0; pass < REACTIVE_PASSES && !e; pass++) {
        r.added = 0;
        e = run_pass(&r, pass);
        if (pass && r.added == 0)
            break;
    }
    reactive_free(&r);
    return e;
}
