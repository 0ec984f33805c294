/* planner/plan_ctx.c — analyses a model once for the simulator and the planners: idle gaps of
 * every allocation, the nominal (stall-free) timeline, births and deaths per operation, bytes
 * live during each operation and the floor no plan can go below. */
#include "plan_internal.h"

#include "base_order.h"

#include <stdlib.h>
#include <string.h>

double plan_ctx_d2h_us(const plan_ctx *c, uint64_t bytes)
{
    return (double)bytes * c->d2h_us_per_byte;
}

double plan_ctx_h2d_us(const plan_ctx *c, uint64_t bytes)
{
    return (double)bytes * c->h2d_us_per_byte;
}

double plan_ctx_evict_us(const plan_ctx *c, uint64_t bytes)
{
    return plan_ctx_d2h_us(c, bytes) + c->m->hw.remap_us;
}

double plan_ctx_restore_us(const plan_ctx *c, uint64_t bytes)
{
    return PLAN_MAX(plan_ctx_h2d_us(c, bytes), c->m->hw.remap_us);
}

double plan_ctx_start_at(const plan_ctx *c, int64_t q)
{
    int64_t n = (int64_t)c->n;
    return q >= n ? c->compute + c->start[q - n] : c->start[q];
}

double plan_ctx_end_at(const plan_ctx *c, int64_t q)
{
    return plan_ctx_start_at(c, q + 1);
}

/* The anchors of an allocation: its touches, and its birth when that is an operation. */
static size_t anchors(const plan_model *m, const plan_alloc *a, int32_t *first, int32_t *last)
{
    const int32_t *t = m->touches + a->touch_first;
    size_t k = a->ntouch;
    if (a->birth >= 0 && (k == 0 || t[0] != a->birth))
        k++;
    if (k == 0)
        return 0;
    *first = a->birth >= 0 ? a->birth : t[0];
    *last = a->ntouch ? t[a->ntouch - 1] : a->birth;
    return k;
}

/* Appends the gaps of allocation x (when out is NULL, only counts them). */
static size_t alloc_gaps(const plan_ctx *c, uint32_t x, plan_gap *out)
{
    const plan_model *m = c->m;
    const plan_alloc *a = &m->allocs[x];
    int32_t first, last, prev;
    size_t n = 0;
    if (anchors(m, a, &first, &last) == 0)
        return 0;
    prev = first;
    for (uint32_t k = 0; k < a->ntouch; k++) {
        int32_t t = m->touches[a->touch_first + k];
        if (t >= prev + 2 && out)
            out[n] = (plan_gap){x, prev, t, t - 1, PLAN_GAP_INTERIOR};
        n += t >= prev + 2;
        prev = t;
    }
    int32_t nn = (int32_t)c->n;
    if (a->birth < 0 && a->death < 0 && first + nn >= last + 2) {
        if (out)
            out[n] = (plan_gap){x, last, first + nn, first + nn - 1, PLAN_GAP_WRAP};
        n++;
    } else if (a->death >= 0 && a->death >= last + 1) {
        if (out)
            out[n] = (plan_gap){x, last, PLAN_NO_OP, a->death, PLAN_GAP_TAIL};
        n++;
    }
    return n;
}

static plan_err build_gaps(plan_ctx *c)
{
    size_t na = c->m->nallocs, total = 0;
    c->gap0 = malloc((na + 1) * sizeof(*c->gap0));
    if (!c->gap0)
        return PLAN_ERR_NOMEM;
    for (size_t x = 0; x < na; x++) {
        c->gap0[x] = (uint32_t)total;
        total += alloc_gaps(c, (uint32_t)x, NULL);
    }
    c->gap0[na] = (uint32_t)total;
    c->gaps = malloc((total ? total : 1) * sizeof(*c->gaps));
    if (!c->gaps)
        return PLAN_ERR_NOMEM;
    for (size_t x = 0; x < na; x++)
        alloc_gaps(c, (uint32_t)x, c->gaps + c->gap0[x]);
    c->ngaps = total;
    return PLAN_OK;
}

/* Adds v to diff over the circular op range [lo, hi] (positions, hi may be >= n). */
static void range_add(int64_t *diff, size_t n, int64_t lo, int64_t hi, int64_t v)
{
    int64_t nn = (int64_t)n;
    if (lo > hi)
        return;
    if (lo >= nn)
        lo -= nn, hi -= nn;
    if (hi < nn) {
        diff[lo] += v, diff[hi + 1] -= v;
        return;
    }
    diff[lo] += v, diff[nn] -= v;
    diff[0] += v, diff[hi - nn + 1] -= v;
}

/* Births, deaths, live bytes, floor and the two peaks. */
static void build_profile(plan_ctx *c, int64_t *live_d, int64_t *gap_d)
{
    const plan_model *m = c->m;
    size_t n = c->n;
    for (size_t x = 0; x < m->nallocs; x++) {
        const plan_alloc *a = &m->allocs[x];
        int64_t b = (int64_t)a->bytes;
        if (a->birth >= 0)
            c->birth_bytes[a->birth] += a->bytes;
        if (a->death >= 0)
            c->death_bytes[a->death] += a->bytes;
        if (a->birth < 0 && a->death < 0)
            c->cyclic_bytes += a->bytes;
        else if (a->birth < 0)
            c->head_bytes += a->bytes;
        else if (a->death < 0)
            c->outlive_bytes += a->bytes;
        range_add(live_d, n, a->birth < 0 ? 0 : a->birth, a->death < 0 ? (int64_t)n - 1 : a->death,
                  b);
    }
    for (size_t g = 0; g < c->ngaps; g++)
        range_add(gap_d, n, c->gaps[g].a + 1, c->gaps[g].last,
                  (int64_t)m->allocs[c->gaps[g].alloc].bytes);
    int64_t lv = 0, gv = 0;
    for (size_t p = 0; p < n; p++) {
        lv += live_d[p], gv += gap_d[p];
        c->live[p] = (uint64_t)lv;
        c->floor[p] = (uint64_t)(lv - gv);
        c->native_peak = PLAN_MAX(c->native_peak, c->live[p]);
        c->floor_peak = PLAN_MAX(c->floor_peak, c->floor[p]);
    }
}

static plan_err alloc_arrays(plan_ctx *c)
{
    size_t n = c->n;
    c->start = malloc((n + 1) * sizeof(*c->start));
    c->birth_bytes = calloc(n, sizeof(*c->birth_bytes));
    c->death_bytes = calloc(n, sizeof(*c->death_bytes));
    c->live = malloc(n * sizeof(*c->live));
    c->floor = malloc(n * sizeof(*c->floor));
    if (!c->start || !c->birth_bytes || !c->death_bytes || !c->live || !c->floor)
        return PLAN_ERR_NOMEM;
    return PLAN_OK;
}

plan_err plan_ctx_init(plan_ctx *c, const plan_model *m, char *msg, size_t cap)
{
    memset(c, 0, sizeof(*c));
    plan_err e = plan_model_check(m, NULL, msg, cap);
    if (e)
        return e;
    c->m = m;
    c->n = m->nops;
    c->d2h_us_per_byte = 1.0 / (m->hw.d2h_gbps * 1e3);
    c->h2d_us_per_byte = 1.0 / (m->hw.h2d_gbps * 1e3);
    c->moved_share = 1.0;
    for (size_t i = 0; i < m->nallocs; i++)
        c->moved_share =
            PLAN_MIN(c->moved_share, (double)m->allocs[i].moved / (double)m->allocs[i].bytes);
    if ((e = alloc_arrays(c)) || (e = build_gaps(c))) {
        plan_ctx_free(c);
        return e;
    }
    double t = 0;
    for (size_t p = 0; p < c->n; p++) {
        t += m->ops[p].idle_us;
        c->idle_total += m->ops[p].idle_us;
        c->start[p] = t;
        t += m->ops[p].dur_us;
    }
    c->start[c->n] = c->compute = t;
    int64_t *live_d = calloc(c->n + 1, sizeof(*live_d));
    int64_t *gap_d = calloc(c->n + 1, sizeof(*gap_d));
    if (!live_d || !gap_d) {
        free(live_d);
        free(gap_d);
        plan_ctx_free(c);
        return PLAN_ERR_NOMEM;
    }
    build_profile(c, live_d, gap_d);
    free(live_d);
    free(gap_d);
    return PLAN_OK;
}

void plan_ctx_free(plan_ctx *c)
{
    free(c->start);
    free(c->gaps);
    free(c->gap0);
    free(c->birth_bytes);
    free(c->death_bytes);
    free(c->live);
    free(c->floor);
    memset(c, 0, sizeof(*c));
}

size_t plan_ctx_find_gap(const plan_ctx *c, uint32_t alloc, int32_t evict_after)
{
    if (alloc >= c->m->nallocs)
        return SIZE_MAX;
    size_t lo = c->gap0[alloc]; /* first gap with a > evict_after */
    BASE_BSEARCH(lo, c->gap0[alloc + 1], mid, c->gaps[mid].a <= evict_after);
    if (lo == c->gap0[alloc])
        return SIZE_MAX;
    const plan_gap *g = &c->gaps[lo - 1];
    int32_t lim = g->kind == PLAN_GAP_TAIL ? g->last - 1 : g->last;
    return evict_after <= lim ? lo - 1 : SIZE_MAX;
}

plan_entry plan_ctx_entry(const plan_ctx *c, size_t g, int32_t prefetch_at, int32_t wait_at)
{
    const plan_gap *gp = &c->gaps[g];
    return (plan_entry){.alloc = gp->alloc,
                        .evict_after = gp->a,
                        .prefetch_at = gp->kind == PLAN_GAP_TAIL ? PLAN_NO_OP : prefetch_at,
                        .wait_at = wait_at,
                        .need = gp->b};
}

plan_err plan_peaks(const plan_model *m, uint64_t *native, uint64_t *floor)
{
    return plan_peaks_opts(m, NULL, native, floor); /* no host placement: the moving floor */
}
