/* import_et_join.c — joins execution-trace nodes to Kineto CPU operators. The ids do not
 * join (in the shared DLRM traces, which a clone lacks, the ETs' rf_id drifts against Kineto's
 * External id, as their README says), so the join lines up operator names: per ET thread, the
 * Kineto thread whose names line up best, then the two name sequences in start order, skipping
 * what only one side recorded. */
#include "import_et.h"

#include "base_order.h"

#include <stdlib.h>
#include <string.h>

/* How far the line-up looks ahead on either side for the next equal name. */
#define IE_LOOKAHEAD 64

typedef struct seq {
    const char **name;
    size_t *idx; /* node index (ET) or t->op index (Kineto) */
    size_t n;
} seq;

/* Lines a up with b greedily; with join set, records the pairs. Returns the pairs found. */
static size_t line_up(const seq *a, const seq *b, ie_trace *e, int join)
{
    size_t i = 0, j = 0, found = 0;
    while (i < a->n && j < b->n) {
        if (!strcmp(a->name[i], b->name[j])) {
            if (join)
                e->node[a->idx[i]].kineto = (long)b->idx[j];
            found++, i++, j++;
            continue;
        }
        size_t da = 0, db = 0;
        for (size_t d = 1; d <= IE_LOOKAHEAD && !db && j + d < b->n; d++)
            db = !strcmp(a->name[i], b->name[j + d]) ? d : 0;
        for (size_t d = 1; d <= IE_LOOKAHEAD && !da && i + d < a->n; d++)
            da = !strcmp(a->name[i + d], b->name[j]) ? d : 0;
        if (db && (!da || db <= da))
            j += db;
        else if (da)
            i += da;
        else
            i++, j++;
    }
    return found;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Distinct values of v[0..n) into out (sorted); returns their count. */
static size_t distinct(int64_t *v, size_t n)
{
    qsort(v, n, sizeof(*v), cmp_i64);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!k || v[k - 1] != v[i])
            v[k++] = v[i];
    return k;
}

/* The ET nodes of thread tid (rf order) or the Kineto operators of it in the window (time). */
static void et_seq(const ie_trace *e, int64_t tid, seq *s)
{
    s->n = 0;
    for (size_t i = 0; i < e->nnode; i++)
        if (e->node[i].tid == tid)
            s->name[s->n] = e->node[i].name, s->idx[s->n++] = i;
}

static void kineto_seq(const ik_trace *t, const size_t *order, const ik_step *st, int64_t tid,
                       seq *s)
{
    s->n = 0;
    for (size_t k = 0; k < t->nop; k++) {
        const ik_span *p = &t->op[order[k]];
        if (p->tid == tid && p->ts >= st->start && p->ts < st->end)
            s->name[s->n] = p->name, s->idx[s->n++] = order[k];
    }
}

static int cmp_op(const void *a, const void *b, void *ctx)
{
    const ik_trace *t = ctx;
    const ik_span *x = &t->op[*(const size_t *)a], *y = &t->op[*(const size_t *)b];
    return BASE_CMP_THEN(x->tid, y->tid, BASE_CMP_THEN(x->ts, y->ts, BASE_CMP(y->end, x->end)));
}

static long join_all(ie_trace *e, const ik_trace *t, const ik_step *st, const size_t *order, seq *a,
                     seq *b, int64_t *etids, int64_t *ktids)
{
    for (size_t i = 0; i < e->nnode; i++)
        etids[i] = e->node[i].tid;
    for (size_t i = 0; i < t->nop; i++)
        ktids[i] = t->op[i].tid;
    size_t ne = distinct(etids, e->nnode), nk = distinct(ktids, t->nop);
    long joined = 0;
    for (size_t x = 0; x < ne; x++) {
        et_seq(e, etids[x], a);
        size_t best = 0, best_k = 0;
        for (size_t y = 0; y < nk; y++) {
            kineto_seq(t, order, st, ktids[y], b);
            size_t f = line_up(a, b, e, 0);
            if (f > best)
                best = f, best_k = y;
        }
        if (!best)
            continue;
        kineto_seq(t, order, st, ktids[best_k], b);
        joined += (long)line_up(a, b, e, 1);
    }
    return joined;
}

size_t *ie_op_order(const ik_trace *t)
{
    size_t *order = malloc(t->nop * sizeof(size_t) + 1);
    if (!order)
        return NULL;
    for (size_t i = 0; i < t->nop; i++)
        order[i] = i;
    qsort_r(order, t->nop, sizeof(size_t), cmp_op, (void *)t);
    return order;
}

long ie_join(ie_trace *e, const ik_trace *t, const ik_step *st, const size_t *order)
{
    size_t big = (e->nnode > t->nop ? e->nnode : t->nop) + 1;
    seq a = {malloc(big * sizeof(char *)), malloc(big * sizeof(size_t)), 0};
    seq b = {malloc(big * sizeof(char *)), malloc(big * sizeof(size_t)), 0};
    int64_t *etids = malloc(big * sizeof(int64_t)), *ktids = malloc(big * sizeof(int64_t));
    long joined = -1;
    if (a.name && a.idx && b.name && b.idx && etids && ktids)
        joined = join_all(e, t, st, order, &a, &b, etids, ktids);
    free(a.name), free(a.idx), free(b.name), free(b.idx);
    free(etids), free(ktids);
    return joined;
}

long ie_node_at(const ik_trace *t, const size_t *order, const long *by_op, int64_t tid, double ts)
{
    size_t lo = 0; /* first operator after (tid, ts) */
    BASE_BSEARCH(lo, t->nop, mid,
                 t->op[order[mid]].tid < tid ||
                     (t->op[order[mid]].tid == tid && t->op[order[mid]].ts <= ts));
    /* Walk back to the innermost joined operator holding ts; operators that ended before ts are
     * finished siblings. 512 back is deeper than any nesting seen in these traces. */
    for (size_t k = lo, n = 0; k-- > 0 && n < 512; n++) {
        const ik_span *p = &t->op[order[k]];
        if (p->tid != tid)
            break;
        if (p->end >= ts && by_op[order[k]] >= 0)
            return by_op[order[k]];
    }
    return -1;
}
