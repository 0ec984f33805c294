/* planner/plan_seg.c — a segment tree over the operations of a step: add a value over a
 * circular range of positions, read the maximum over one. The planners' estimated memory
 * profile lives in it. */
#include "plan_internal.h"

#include <stdlib.h>

plan_err plan_seg_init(plan_seg *s, const uint64_t *v, size_t n)
{
    s->n = n;
    s->size = 1;
    while (s->size < n)
        s->size *= 2;
    s->mx = malloc(2 * s->size * sizeof(int64_t));
    s->lz = calloc(2 * s->size, sizeof(int64_t));
    if (!s->mx || !s->lz) {
        plan_seg_free(s);
        return PLAN_ERR_NOMEM;
    }
    for (size_t i = 0; i < s->size; i++)
        s->mx[s->size + i] = i < n ? (int64_t)v[i] : INT64_MIN / 4;
    for (size_t i = s->size - 1; i >= 1; i--)
        s->mx[i] = PLAN_MAX(s->mx[2 * i], s->mx[2 * i + 1]);
    return PLAN_OK;
}

void plan_seg_free(plan_seg *s)
{
    free(s->mx);
    free(s->lz);
    s->mx = s->lz = NULL;
}

static void add_rec(plan_seg *s, size_t node, size_t nl, size_t nr, size_t l, size_t r, int64_t v)
{
    if (r < nl || nr < l)
        return;
    if (l <= nl && nr <= r) {
        s->mx[node] += v;
        s->lz[node] += v;
        return;
    }
    size_t mid = (nl + nr) / 2;
    add_rec(s, 2 * node, nl, mid, l, r, v);
    add_rec(s, 2 * node + 1, mid + 1, nr, l, r, v);
    s->mx[node] = PLAN_MAX(s->mx[2 * node], s->mx[2 * node + 1]) + s->lz[node];
}

static int64_t max_rec(const plan_seg *s, size_t node, size_t nl, size_t nr, size_t l, size_t r)
{
    if (r < nl || nr < l)
        return INT64_MIN / 2;
    if (l <= nl && nr <= r)
        return s->mx[node];
    size_t mid = (nl + nr) / 2;
    int64_t a = max_rec(s, 2 * node, nl, mid, l, r);
    int64_t b = max_rec(s, 2 * node + 1, mid + 1, nr, l, r);
    return PLAN_MAX(a, b) + s->lz[node];
}

/* Splits a circular span into at most two ranges of [0, n). */
static int split(const plan_seg *s, plan_span sp, size_t lo[2], size_t hi[2])
{
    int64_t n = (int64_t)s->n;
    if (sp.lo > sp.hi)
        return 0;
    if (sp.lo >= n)
        sp.lo -= n, sp.hi -= n;
    lo[0] = (size_t)sp.lo, hi[0] = (size_t)PLAN_MIN(sp.hi, n - 1);
    if (sp.hi < n)
        return 1;
    lo[1] = 0, hi[1] = (size_t)PLAN_MIN(sp.hi - n, n - 1);
    return 2;
}

void plan_seg_add(plan_seg *s, plan_span sp, int64_t v)
{
    size_t lo[2], hi[2];
    int k = split(s, sp, lo, hi);
    for (int i = 0; i < k; i++)
        add_rec(s, 1, 0, s->size - 1, lo[i], hi[i], v);
}

int64_t plan_seg_max(const plan_seg *s, plan_span sp)
{
    size_t lo[2], hi[2];
    int k = split(s, sp, lo, hi);
    int64_t m = INT64_MIN / 2;
    for (int i = 0; i < k; i++)
        m = PLAN_MAX(m, max_rec(s, 1, 0, s->size - 1, lo[i], hi[i]));
    return m;
}

int64_t plan_seg_top(const plan_seg *s)
{
    return s->mx[1];
}

/* First (or last) leaf in [l, r] of the node's range whose value exceeds v; -1 if none. */
static int64_t find_rec(const plan_seg *s, size_t node, size_t nl, size_t nr, size_t l, size_t r,
                        int64_t v, bool last)
{
    if (r < nl || nr < l || s->mx[node] <= v)
        return -1;
    if (nl == nr)
        return (int64_t)nl;
    size_t mid = (nl + nr) / 2;
    v -= s->lz[node];
    int64_t x = last ? find_rec(s, 2 * node + 1, mid + 1, nr, l, r, v, last)
                     : find_rec(s, 2 * node, nl, mid, l, r, v, last);
    if (x >= 0)
        return x;
    return last ? find_rec(s, 2 * node, nl, mid, l, r, v, last)
                : find_rec(s, 2 * node + 1, mid + 1, nr, l, r, v, last);
}

plan_span plan_seg_above(const plan_seg *s, plan_span sp, int64_t v)
{
    size_t lo[2], hi[2];
    int k = split(s, sp, lo, hi);
    int64_t base = sp.lo >= (int64_t)s->n ? (int64_t)s->n : 0; /* unroll back to sp's axis */
    plan_span out = {0, -1};
    bool found = false;
    for (int i = 0; i < k; i++) {
        int64_t off = base + (i ? (int64_t)s->n : 0);
        int64_t f = find_rec(s, 1, 0, s->size - 1, lo[i], hi[i], v, false);
        if (f < 0)
            continue;
        int64_t l = find_rec(s, 1, 0, s->size - 1, lo[i], hi[i], v, true);
        if (!found)
            out.lo = f + off;
        out.hi = l + off;
        found = true;
    }
    return out;
}
