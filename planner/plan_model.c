/* planner/plan_model.c — building, checking and freeing iteration models and plans. */
#include "plan_internal.h"

#include "base_array.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void plan_msg(char *msg, size_t cap, const char *fmt, ...)
{
    if (!msg || cap == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
}

const char *plan_strerror(plan_err err)
{
    switch (err) {
    case PLAN_OK:
        return "success";
    case PLAN_ERR_NOMEM:
        return "out of memory";
    case PLAN_ERR_INVALID:
        return "invalid model or plan";
    case PLAN_ERR_PARSE:
        return "malformed input";
    case PLAN_ERR_LIMIT:
        return "problem too large";
    }
    return "unknown error";
}

void plan_model_init(plan_model *m)
{
    memset(m, 0, sizeof(*m));
}

void plan_model_free(plan_model *m)
{
    free(m->ops);
    free(m->allocs);
    free(m->touches);
    free(m->touch_reads);
    free(m->copies);
    plan_model_init(m);
}

plan_err plan_model_add_op(plan_model *m, double dur_us, uint32_t stream)
{
    if (m->nops >= PLAN_MAX_OPS)
        return PLAN_ERR_LIMIT;
    if (base_array_grow((void **)&m->ops, &m->cap_ops, m->nops + 1, sizeof(*m->ops)))
        return PLAN_ERR_NOMEM;
    m->ops[m->nops++] = (plan_op){.dur_us = dur_us, .stream = stream};
    return PLAN_OK;
}

plan_err plan_model_set_idle(plan_model *m, size_t q, double idle_us)
{
    if (q >= m->nops || !(idle_us >= 0 && idle_us <= PLAN_MAX_DURATION))
        return PLAN_ERR_INVALID;
    m->ops[q].idle_us = idle_us;
    return PLAN_OK;
}

plan_err plan_model_add_copy(plan_model *m, int32_t after, int to_device, uint64_t bytes)
{
    if (m->ncopies >= PLAN_MAX_OPS)
        return PLAN_ERR_LIMIT;
    if (base_array_grow((void **)&m->copies, &m->cap_copies, m->ncopies + 1, sizeof(*m->copies)))
        return PLAN_ERR_NOMEM;
    m->copies[m->ncopies++] =
        (plan_copy){.after = after, .to_device = to_device ? 1 : 0, .bytes = bytes};
    return PLAN_OK;
}

/* A touch and the bytes it reads, sorted together. */
typedef struct touch_read {
    int32_t op;
    uint64_t read;
} touch_read;

static int cmp_touch(const void *a, const void *b)
{
    int32_t x = ((const touch_read *)a)->op, y = ((const touch_read *)b)->op;
    return (x > y) - (x < y);
}

/* Grows m's touch arrays to hold need touches, and creates touch_reads (zeroed: whole reads)
   when with_reads. On failure the capacity stays what both arrays hold. */
static plan_err grow_touches(plan_model *m, size_t need, bool with_reads)
{
    size_t ct = m->cap_touches, cr = m->cap_touches; /* both grow alike */
    if (base_array_grow((void **)&m->touches, &ct, need, sizeof(*m->touches)) ||
        (m->touch_reads &&
         base_array_grow((void **)&m->touch_reads, &cr, need, sizeof(*m->touch_reads))))
        return PLAN_ERR_NOMEM;
    m->cap_touches = ct;
    if (with_reads && !m->touch_reads) {
        m->touch_reads = calloc(m->cap_touches ? m->cap_touches : 1, sizeof(*m->touch_reads));
        if (!m->touch_reads)
            return PLAN_ERR_NOMEM;
    }
    return PLAN_OK;
}

/* Whether reads[0..n) gives bytes for any touch. */
static bool any_read(const uint64_t *reads, size_t n)
{
    for (size_t i = 0; reads && i < n; i++)
        if (reads[i])
            return true;
    return false;
}

/* Sorts the n pairs of tr by operation and merges duplicates (plan.h: the sum of their bytes,
   or 0, the whole, when one reads the whole or the sum reaches bytes); returns how many remain. */
static size_t merge_touches(touch_read *tr, size_t n, uint64_t bytes)
{
    qsort(tr, n, sizeof(*tr), cmp_touch);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k == 0 || tr[i].op != tr[k - 1].op) {
            tr[k++] = tr[i];
            continue;
        }
        uint64_t x = tr[k - 1].read, y = tr[i].read;
        if (x == 0 || y == 0)
            tr[k - 1].read = 0;
        else if (x > bytes || y > bytes) /* invalid: kept for plan_model_check to name */
            tr[k - 1].read = PLAN_MAX(x, y);
        else
            tr[k - 1].read = y >= bytes - x ? 0 : x + y;
    }
    return k;
}

plan_err plan_model_add_alloc_reads(plan_model *m, uint64_t bytes, int32_t birth, int32_t death,
                                    const int32_t *touch, const uint64_t *reads, size_t n)
{
    if (m->nallocs >= PLAN_MAX_ALLOCS || n > PLAN_MAX_TOUCHES - m->ntouches)
        return PLAN_ERR_LIMIT;
    bool with_reads = any_read(reads, n);
    touch_read *tr = malloc(n * sizeof(*tr) + 1);
    if (!tr ||
        base_array_grow((void **)&m->allocs, &m->cap_allocs, m->nallocs + 1, sizeof(*m->allocs)) ||
        grow_touches(m, m->ntouches + n, with_reads)) {
        free(tr);
        return PLAN_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++)
        tr[i] = (touch_read){.op = touch[i], .read = reads ? reads[i] : 0};
    size_t k = merge_touches(tr, n, bytes);
    for (size_t i = 0; i < k; i++) {
        m->touches[m->ntouches + i] = tr[i].op;
        if (m->touch_reads)
            m->touch_reads[m->ntouches + i] = tr[i].read;
    }
    free(tr);
    m->allocs[m->nallocs++] = (plan_alloc){.bytes = bytes,
                                           .moved = bytes,
                                           .birth = birth,
                                           .death = death,
                                           .touch_first = (uint32_t)m->ntouches,
                                           .ntouch = (uint32_t)k};
    m->ntouches += k;
    return PLAN_OK;
}

plan_err plan_model_add_alloc(plan_model *m, uint64_t bytes, int32_t birth, int32_t death,
                              const int32_t *touch, size_t n)
{
    return plan_model_add_alloc_reads(m, bytes, birth, death, touch, NULL, n);
}

/* Contract in plan.h. */
uint64_t plan_touch_read(const plan_model *m, const plan_alloc *a, size_t k)
{
    uint64_t r = m->touch_reads ? m->touch_reads[k] : 0;
    return r ? r : a->moved;
}

/* Contract in plan.h. */
bool plan_alloc_sparse(const plan_model *m, size_t i)
{
    const plan_alloc *a = &m->allocs[i];
    for (uint32_t k = 0; m->touch_reads && k < a->ntouch; k++) {
        uint64_t r = m->touch_reads[a->touch_first + k];
        if (r && r < a->moved)
            return true;
    }
    return false;
}

/* Contract in plan.h. */
plan_err plan_model_set_moved(plan_model *m, size_t i, uint64_t moved)
{
    if (i >= m->nallocs || moved < 1 || moved > m->allocs[i].bytes)
        return PLAN_ERR_INVALID;
    m->allocs[i].moved = moved;
    return PLAN_OK;
}

static bool hw_ok(const plan_hw *hw, char *msg, size_t cap)
{
    if (!(hw->h2d_gbps > 0 && hw->h2d_gbps <= 1e6) || !(hw->d2h_gbps > 0 && hw->d2h_gbps <= 1e6)) {
        plan_msg(msg, cap, "bandwidths must be in (0, 1e6] GB/s");
        return false;
    }
    if (!(hw->remap_us >= 0 && hw->remap_us <= 1e9)) {
        plan_msg(msg, cap, "remap cost must be in [0, 1e9] us");
        return false;
    }
    return plan_link_check(hw, msg, cap);
}

static bool ops_ok(const plan_model *m, char *msg, size_t cap)
{
    if (m->nops == 0) {
        plan_msg(msg, cap, "model has no operations");
        return false;
    }
    if (m->nops > PLAN_MAX_OPS) {
        plan_msg(msg, cap, "more than %d operations", PLAN_MAX_OPS);
        return false;
    }
    for (size_t i = 0; i < m->nops; i++) {
        double d = m->ops[i].dur_us;
        if (!(d >= 0 && d <= PLAN_MAX_DURATION)) {
            plan_msg(msg, cap, "operation %zu: duration must be in [0, %g] us", i,
                     PLAN_MAX_DURATION);
            return false;
        }
        double idle = m->ops[i].idle_us;
        if (!(idle >= 0 && idle <= PLAN_MAX_DURATION)) {
            plan_msg(msg, cap, "operation %zu: idle time must be in [0, %g] us", i,
                     PLAN_MAX_DURATION);
            return false;
        }
    }
    return true;
}

/* Checks one allocation; *total accumulates its bytes. */
static bool alloc_ok(const plan_model *m, size_t i, uint64_t *total, char *msg, size_t cap)
{
    const plan_alloc *a = &m->allocs[i];
    int64_t n = (int64_t)m->nops;
    if (a->bytes < 1 || a->bytes > PLAN_MAX_BYTES || a->bytes > PLAN_MAX_BYTES - *total) {
        plan_msg(msg, cap, "allocation %zu: bytes must be in [1, 2^60] (also in total)", i);
        return false;
    }
    *total += a->bytes;
    if (a->moved < 1 || a->moved > a->bytes) {
        plan_msg(msg, cap, "allocation %zu: a move must copy from 1 byte to its bytes", i);
        return false;
    }
    if (a->birth < -1 || a->birth >= n || a->death < -1 || a->death >= n) {
        plan_msg(msg, cap,
                 "allocation %zu: birth and death must be -1 or an operation in [0, %lld)", i,
                 (long long)n);
        return false;
    }
    if (a->birth >= 0 && a->death >= 0 && a->birth > a->death) {
        plan_msg(msg, cap, "allocation %zu: birth %d after death %d", i, a->birth, a->death);
        return false;
    }
    if ((size_t)a->touch_first + a->ntouch > m->ntouches) {
        plan_msg(msg, cap, "allocation %zu: touches out of the touch array", i);
        return false;
    }
    int64_t lo = a->birth < 0 ? 0 : a->birth, hi = a->death < 0 ? n - 1 : a->death;
    const int32_t *t = m->touches + a->touch_first;
    for (uint32_t k = 0; k < a->ntouch; k++) {
        if (t[k] < lo || t[k] > hi) {
            plan_msg(msg, cap, "allocation %zu: touch %d outside its life [%lld, %lld]", i, t[k],
                     (long long)lo, (long long)hi);
            return false;
        }
        if (k && t[k] <= t[k - 1]) {
            plan_msg(msg, cap, "allocation %zu: touches not sorted and distinct", i);
            return false;
        }
        uint64_t r = m->touch_reads ? m->touch_reads[a->touch_first + k] : 0;
        if (r > a->bytes) {
            plan_msg(msg, cap, "allocation %zu: touch %d reads %llu bytes, more than its %llu", i,
                     t[k], (unsigned long long)r, (unsigned long long)a->bytes);
            return false;
        }
    }
    return true;
}

plan_err plan_model_check(const plan_model *m, size_t *bad_alloc, char *msg, size_t cap)
{
    if (bad_alloc)
        *bad_alloc = SIZE_MAX;
    if (!m) {
        plan_msg(msg, cap, "no model");
        return PLAN_ERR_INVALID;
    }
    if (!hw_ok(&m->hw, msg, cap) || !ops_ok(m, msg, cap))
        return PLAN_ERR_INVALID;
    if (m->nallocs > PLAN_MAX_ALLOCS || m->ntouches > PLAN_MAX_TOUCHES) {
        plan_msg(msg, cap, "too many allocations or touches");
        return PLAN_ERR_INVALID;
    }
    for (size_t i = 0; i < m->ncopies; i++) {
        const plan_copy *c = &m->copies[i];
        if (c->after < 0 || (size_t)c->after >= m->nops || c->bytes < 1 ||
            c->bytes > PLAN_MAX_BYTES) {
            plan_msg(msg, cap,
                     "copy %zu: AFTER must be an operation in [0, %zu) and bytes in "
                     "[1, 2^60]",
                     i, m->nops);
            return PLAN_ERR_INVALID;
        }
    }
    uint64_t total = 0;
    for (size_t i = 0; i < m->nallocs; i++) {
        if (!alloc_ok(m, i, &total, msg, cap)) {
            if (bad_alloc)
                *bad_alloc = i;
            return PLAN_ERR_INVALID;
        }
    }
    return PLAN_OK;
}

void plan_init(plan *p)
{
    memset(p, 0, sizeof(*p));
}

void plan_free(plan *p)
{
    free(p->entries);
    free(p->host);
    plan_init(p);
}

plan_err plan_push_host(plan *p, uint32_t alloc)
{
    if (base_array_grow((void **)&p->host, &p->cap_host, p->nhost + 1, sizeof(alloc)))
        return PLAN_ERR_NOMEM;
    p->host[p->nhost++] = alloc;
    return PLAN_OK;
}

plan_err plan_push(plan *p, plan_entry e)
{
    if (base_array_grow((void **)&p->entries, &p->cap, p->n + 1, sizeof(e)))
        return PLAN_ERR_NOMEM;
    p->entries[p->n++] = e;
    return PLAN_OK;
}

static const char *const kind_names[] = {"none", "reactive", "scheduled", "exact"};

const char *plan_kind_name(plan_kind kind)
{
    if ((unsigned)kind >= sizeof(kind_names) / sizeof(kind_names[0]))
        return NULL;
    return kind_names[kind];
}

plan_err plan_kind_parse(const char *name, plan_kind *kind)
{
    for (unsigned i = 0; name && i < sizeof(kind_names) / sizeof(kind_names[0]); i++) {
        if (strcmp(name, kind_names[i]) == 0) {
            *kind = (plan_kind)i;
            return PLAN_OK;
        }
    }
    return PLAN_ERR_INVALID;
}
