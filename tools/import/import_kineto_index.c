/* import_kineto_index.c — the step's operations seen from the CPU: which was launched
 * before or after a moment, and which outermost CPU operator launched each. The Kineto
 * importer guesses touches from it, since a Kineto trace lists no kernel operands. */
#include "import_kineto.h"

#include "base_order.h"

#include <stdlib.h>

typedef struct lk {
    double launch;
    int32_t op;
} lk;

static int cmp_lk(const void *a, const void *b)
{
    const lk *x = a, *y = b;
    return BASE_CMP_THEN(x->launch, y->launch, BASE_CMP(x->op, y->op));
}

static int cmp_top(const void *a, const void *b)
{
    const ik_top *x = a, *y = b;
    return BASE_CMP_THEN(
        x->tid, y->tid,
        BASE_CMP_THEN(x->ts, y->ts, BASE_CMP(y->end, x->end))); /* the enclosing span first */
}

static int build_launch(const ik_step *s, ik_index *ix)
{
    size_t n = s->n;
    lk *l = malloc(n * sizeof(*l) + 1);
    ix->launch = malloc(n * sizeof(double) + 1);
    ix->sufmin = malloc(n * sizeof(int32_t) + 1);
    ix->premax = malloc(n * sizeof(int32_t) + 1);
    if (!l || !ix->launch || !ix->sufmin || !ix->premax) {
        free(l);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        l[i] = (lk){s->launch[i], (int32_t)i};
    qsort(l, n, sizeof(*l), cmp_lk);
    for (size_t i = 0; i < n; i++) {
        ix->launch[i] = l[i].launch;
        ix->premax[i] = i && ix->premax[i - 1] > l[i].op ? ix->premax[i - 1] : l[i].op;
    }
    for (size_t i = n; i-- > 0;)
        ix->sufmin[i] = i + 1 < n && ix->sufmin[i + 1] < l[i].op ? ix->sufmin[i + 1] : l[i].op;
    free(l);
    return 0;
}

/* Outermost CPU operators: spans no other span of their thread holds. */
static int build_top(const ik_trace *t, ik_index *ix)
{
    ik_top *all = malloc(t->nop * sizeof(*all) + 1);
    if (!all)
        return -1;
    for (size_t i = 0; i < t->nop; i++)
        all[i] = (ik_top){t->op[i].ts, t->op[i].end, t->op[i].tid, 0, 0};
    qsort(all, t->nop, sizeof(*all), cmp_top);
    size_t n = 0;
    for (size_t i = 0; i < t->nop; i++)
        if (!n || all[n - 1].tid != all[i].tid || all[i].ts >= all[n - 1].end)
            all[n++] = all[i];
    ix->top = all, ix->ntop = n;
    return 0;
}

long ik_index_top_at(const ik_index *ix, int64_t tid, double ts, int next)
{
    size_t lo = 0; /* first entry after (tid, ts) */
    BASE_BSEARCH(lo, ix->ntop, mid,
                 ix->top[mid].tid < tid || (ix->top[mid].tid == tid && ix->top[mid].ts <= ts));
    if (next)
        return lo < ix->ntop && ix->top[lo].tid == tid ? (long)lo : -1;
    if (lo == 0)
        return -1;
    const ik_top *p = &ix->top[lo - 1];
    return p->tid == tid && ts <= p->end ? (long)(lo - 1) : -1;
}

/* Lists each outermost operator's operations and marks the optimizer's. */
static int group(const ik_trace *t, const ik_step *s, ik_index *ix)
{
    long *owner = malloc(s->n * sizeof(long) + 1);
    ix->top_ops = malloc(s->n * sizeof(int32_t) + 1);
    ix->opt = calloc(s->n + 1, 1);
    if (!owner || !ix->top_ops || !ix->opt) {
        free(owner);
        return -1;
    }
    for (size_t i = 0; i < s->n; i++) {
        owner[i] = s->tid[i] < 0 ? -1 : ik_index_top_at(ix, s->tid[i], s->launch[i], 0);
        if (owner[i] >= 0)
            ix->top[owner[i]].n++;
        for (size_t j = 0; j < t->nopt; j++)
            if (s->launch[i] >= t->opt[j].ts && s->launch[i] <= t->opt[j].end)
                ix->opt[i] = 1;
    }
    size_t at = 0;
    for (size_t k = 0; k < ix->ntop; k++)
        ix->top[k].first = at, at += ix->top[k].n, ix->top[k].n = 0;
    for (size_t i = 0; i < s->n; i++)
        if (owner[i] >= 0) {
            ik_top *p = &ix->top[owner[i]];
            ix->top_ops[p->first + p->n++] = (int32_t)i;
        }
    free(owner);
    return 0;
}

int ik_index_build(const ik_trace *t, const ik_step *s, ik_index *ix)
{
    *ix = (ik_index){.nops = s->n};
    if (build_launch(s, ix) || build_top(t, ix) || group(t, s, ix))
        return -1;
    return 0;
}

void ik_index_free(ik_index *ix)
{
    free(ix->launch);
    free(ix->sufmin);
    free(ix->premax);
    free(ix->top);
    free(ix->top_ops);
    free(ix->opt);
    *ix = (ik_index){0};
}

int32_t ik_index_first_from(const ik_index *ix, double ts)
{
    size_t lo = 0;
    BASE_BSEARCH(lo, ix->nops, mid, ix->launch[mid] < ts);
    return lo < ix->nops ? ix->sufmin[lo] : -1;
}

int32_t ik_index_last_by(const ik_index *ix, double ts)
{
    size_t lo = 0;
    BASE_BSEARCH(lo, ix->nops, mid, ix->launch[mid] <= ts);
    return lo ? ix->premax[lo - 1] : -1;
}

int ik_index_range(const ik_index *ix, int32_t birth, int32_t death, import_ivec *tv)
{
    int32_t lo = birth < 0 ? 0 : birth, hi = death < 0 ? (int32_t)ix->nops - 1 : death;
    for (int32_t i = lo; i <= hi; i++)
        if (import_ivec_push(tv, i))
            return -1;
    return 0;
}

/* Evidence limits (tools/import/IMPORT.md). An outermost operator launching more than IK_TOP_MAX
 * kernels is a whole compiled graph (torch.compile's CompiledFunction launches a step's forward
 * or backward): its kernels say nothing about one buffer, so it adds none. IK_NEAR kernels after
 * the birth and before the death stand for the readers next to the writer and to the last
 * reader, which is where compiled code allocates and frees its buffers. */
#define IK_TOP_MAX 256
#define IK_NEAR    16

/* The operations of outermost operator k that lie in [lo, hi]. */
static int add_top(const ik_index *ix, long k, int32_t lo, int32_t hi, import_ivec *tv)
{
    if (k < 0 || ix->top[k].n > IK_TOP_MAX)
        return 0;
    const ik_top *p = &ix->top[k];
    for (size_t i = 0; i < p->n; i++) {
        int32_t op = ix->top_ops[p->first + i];
        if (op >= lo && op <= hi && import_ivec_push(tv, op))
            return -1;
    }
    return 0;
}

/* The next operator of the thread after ts that launched any operation of the step: what ran
 * right after the producer, most often the first reader of what it made. Looks 64 ahead. */
static long next_launching(const ik_index *ix, int64_t tid, double ts)
{
    long k = ik_index_top_at(ix, tid, ts, 1);
    for (int i = 0; k >= 0 && (size_t)k < ix->ntop && ix->top[k].tid == tid && i < 64; k++, i++)
        if (ix->top[k].n)
            return k;
    return -1;
}

int ik_index_guess(const ik_index *ix, double ta, int64_t atid, double tf, int64_t ftid,
                   int32_t birth, int32_t death, import_ivec *tv)
{
    int32_t lo = birth < 0 ? 0 : birth, hi = death < 0 ? (int32_t)ix->nops - 1 : death;
    if ((birth >= 0 && import_ivec_push(tv, birth)) || (death >= 0 && import_ivec_push(tv, death)))
        return -1;
    if (birth >= 0 && (add_top(ix, ik_index_top_at(ix, atid, ta, 0), lo, hi, tv) ||
                       add_top(ix, next_launching(ix, atid, ta), lo, hi, tv)))
        return -1;
    if (death >= 0 && add_top(ix, ik_index_top_at(ix, ftid, tf, 0), lo, hi, tv))
        return -1;
    for (int32_t i = 1; i <= IK_NEAR; i++)
        if ((birth >= 0 && birth + i <= hi && import_ivec_push(tv, birth + i)) ||
            (death >= 0 && death - i >= lo && import_ivec_push(tv, death - i)))
            return -1;
    for (int32_t i = lo; i <= hi; i++)
        if (ix->opt[i] && import_ivec_push(tv, i))
            return -1;
    return 0;
}
