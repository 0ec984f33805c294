/* import_kineto.c — the Kineto importer: the step's kernels become operations
 * (import_kineto_step.c), its [memory] events allocations, and the CPU operators around those
 * events say which operations touch them (tools/import/IMPORT.md: the evidence and its holes). */
#include "import_kineto.h"

#include "base_array.h"
#include "base_order.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One allocation of the trace: made at ta (-inf: before the trace) on thread atid, freed at tf
 * (+inf: never in the trace) on thread ftid. */
typedef struct rec {
    uint64_t bytes;
    double ta, tf;
    int64_t atid, ftid;
} rec;

typedef struct recs {
    rec *r;
    size_t n, cap;
} recs;

static int mem_on(const ik_mem *m, int64_t dev)
{
    /* Device Type 1 is CUDA in PyTorch's c10::DeviceType; Type 0 (CPU) events are host memory. */
    return (m->dev_type < 0 || m->dev_type == 1) && (m->dev < 0 || m->dev == dev) && m->bytes;
}

static int cmp_addr(const void *a, const void *b)
{
    const ik_mem *x = *(const ik_mem *const *)a, *y = *(const ik_mem *const *)b;
    return BASE_CMP_THEN(x->addr, y->addr,
                         BASE_CMP_THEN(x->ts, y->ts, BASE_CMP(x->order, y->order)));
}

static int add_rec(recs *rs, rec r)
{
    if (base_array_grow((void **)&rs->r, &rs->cap, rs->n + 1, sizeof(rec)))
        return -1;
    rs->r[rs->n++] = r;
    return 0;
}

/* Pairs each address's allocs and frees in time order. A free with nothing open at its address
 * ends memory allocated before the trace; an alloc at an address still open ends the earlier
 * allocation there (its free was not recorded). */
static int pair(const ik_mem *const *ev, size_t n, recs *rs)
{
    rec open = {0};
    int64_t open_addr = 0;
    int is_open = 0;
    for (size_t i = 0; i < n; i++) {
        const ik_mem *m = ev[i];
        if (is_open && open_addr != m->addr) {
            if (add_rec(rs, open))
                return -1;
            is_open = 0;
        }
        if (m->bytes > 0) {
            if (is_open && (open.tf = m->ts, add_rec(rs, open)))
                return -1;
            open = (rec){(uint64_t)m->bytes, m->ts, INFINITY, m->tid, -1};
            open_addr = m->addr, is_open = 1;
        } else if (is_open) {
            open.tf = m->ts, open.ftid = m->tid;
            if (add_rec(rs, open))
                return -1;
            is_open = 0;
        } else if (add_rec(rs, (rec){(uint64_t)-m->bytes, -INFINITY, m->ts, -1, m->tid})) {
            return -1;
        }
    }
    return is_open ? add_rec(rs, open) : 0;
}

/* Allocated bytes just before the step: the Total Allocated after the last event before it, or
 * before the first event. -1 when the trace does not say. */
static int64_t total_before(const ik_trace *t, int64_t dev, double start)
{
    const ik_mem *last = NULL, *first = NULL;
    for (size_t i = 0; i < t->nmem; i++) {
        const ik_mem *m = &t->mem[i];
        if (!mem_on(m, dev) || !m->has_total)
            continue;
        if (!first || m->ts < first->ts || (m->ts == first->ts && m->order < first->order))
            first = m;
        if (m->ts < start &&
            (!last || m->ts > last->ts || (m->ts == last->ts && m->order > last->order)))
            last = m;
    }
    return last ? last->total : first ? first->total - first->bytes : -1;
}

static int cmp_rec(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    return BASE_CMP_THEN(x->ta, y->ta, BASE_CMP(x->tf, y->tf));
}

/* The allocations of the GPU's events, in the order they were made. */
static int collect_recs(const ik_trace *t, int64_t dev, recs *rs)
{
    const ik_mem **ev = malloc(t->nmem * sizeof(*ev) + 1);
    size_t n = 0;
    if (!ev)
        return -1;
    for (size_t i = 0; i < t->nmem; i++)
        if (mem_on(&t->mem[i], dev))
            ev[n++] = &t->mem[i];
    qsort(ev, n, sizeof(*ev), cmp_addr);
    int rc = pair(ev, n, rs);
    free(ev);
    if (!rc)
        qsort(rs->r, rs->n, sizeof(rec), cmp_rec);
    return rc;
}

/* Adds one allocation for r, or none when it is live during no operation of the step. */
static int add_alloc(const ik_step *s, const ik_index *ix, const rec *r, const import_opts *o,
                     plan_model *m, size_t *left_out)
{
    if (r->tf < s->start || r->ta >= s->end)
        return 0; /* not live in the step's window at all */
    int before = r->ta < s->start || isinf(r->ta), after = r->tf >= s->end || isinf(r->tf);
    int32_t birth = before ? PLAN_NO_OP : ik_index_first_from(ix, r->ta);
    int32_t death = after ? PLAN_NO_OP : ik_index_last_by(ix, r->tf);
    if ((!before && birth < 0) || (!after && death < 0) ||
        (birth >= 0 && death >= 0 && birth > death)) {
        ++*left_out;
        return 0;
    }
    import_ivec tv = {0};
    /* Nothing recorded in the step says which operations use memory that neither starts nor
     * ends in it, nor what memory that only ends in it did before: every operation does. */
    int all = o->all_touches || before;
    int rc = all ? ik_index_range(ix, birth, death, &tv)
                 : ik_index_guess(ix, r->ta, r->atid, r->tf, r->ftid, birth, death, &tv);
    if (!rc)
        rc = plan_model_add_alloc(m, r->bytes, birth, death, tv.v, tv.n) ? -1 : 0;
    free(tv.v);
    return rc;
}

/* Memory allocated before the step that no event accounts for (weights and optimizer state
 * made before the profiler started): cyclic allocations that every operation touches, since
 * nothing says when each part is used. It is many tensors, not one block (the caching
 * allocator gives a large request its own segment), but nothing says how it divides: pieces
 * no larger than the largest allocation the trace records, so that a budget holding less than
 * all of it can still hold some (one block larger than the budget could not be allocated). */
static int add_resident(const ik_trace *t, const ik_step *s, const ik_index *ix, const recs *rs,
                        const import_opts *o, plan_model *m)
{
    int64_t total = total_before(t, s->device, s->start);
    uint64_t known = 0, largest = 0;
    for (size_t i = 0; i < rs->n; i++) {
        if ((rs->r[i].ta < s->start || isinf(rs->r[i].ta)) && rs->r[i].tf >= s->start)
            known += rs->r[i].bytes;
        if (rs->r[i].bytes > largest)
            largest = rs->r[i].bytes;
    }
    if (total <= 0 || (uint64_t)total <= known)
        return 0;
    uint64_t left = (uint64_t)total - known;
    uint64_t piece = largest && largest < left ? largest : left;
    import_note(
        o, t->path,
        "%llu bytes allocated before the step have no alloc event: %llu cyclic allocations of at "
        "most %llu bytes (the largest the trace records), each touched by every operation",
        (unsigned long long)left, (unsigned long long)((left + piece - 1) / piece),
        (unsigned long long)piece);
    import_ivec tv = {0};
    int rc = ik_index_range(ix, PLAN_NO_OP, PLAN_NO_OP, &tv);
    for (; !rc && left; left -= piece < left ? piece : left)
        rc =
            plan_model_add_alloc(m, piece < left ? piece : left, PLAN_NO_OP, PLAN_NO_OP, tv.v, tv.n)
                ? -1
                : 0;
    free(tv.v);
    return rc;
}

static int build(const ik_trace *t, const ik_step *s, const import_opts *o, plan_model *m,
                 char *msg, size_t cap)
{
    if (ik_step_ops(t, s, m, msg, cap))
        return -1;
    recs rs = {0};
    ik_index ix;
    size_t left_out = 0;
    int rc = ik_index_build(t, s, &ix);
    if (!rc)
        rc = collect_recs(t, s->device, &rs);
    if (!rc)
        rc = add_resident(t, s, &ix, &rs, o, m);
    for (size_t i = 0; !rc && i < rs.n; i++)
        rc = add_alloc(s, &ix, &rs.r[i], o, m, &left_out);
    if (rc)
        snprintf(msg, cap, "%s: error: out of memory, or too large for a model", t->path);
    else if (!t->nmem)
        import_note(
            o, t->path,
            "no [memory] events (profile with profile_memory=True): the model has operations only");
    if (!rc && left_out)
        import_note(o, t->path, "%zu allocations live during no kernel of the step left out",
                    left_out);
    free(rs.r);
    ik_index_free(&ix);
    return rc;
}

int import_kineto(const char *path, const import_opts *o, plan_model *m, char *msg, size_t cap)
{
    ik_trace t = {0};
    ik_step s = {0};
    int rc = ik_load(path, &t, msg, cap);
    if (!rc)
        rc = ik_step_select(&t, o, &s, msg, cap);
    if (!rc)
        rc = build(&t, &s, o, m, msg, cap);
    if (!rc)
        rc = import_check(path, m, msg, cap);
    ik_step_free(&s);
    ik_free(&t);
    return rc;
}
