/* planner/plan_slab.c — the chunks libshim's slabs hold during a model's step, for a model that
 * has no addresses (an imported or generated one; a model built from a trace groups its members
 * by the slab they were in, plan_build_mem.c).
 *
 * libshim packs each small managed allocation into the newest slab with a run of free blocks
 * (plan_rules_slab_find) and a slab holds a whole granule while any member lives, so a step's
 * slabs hold more than its members' blocks: on the HTA trace of shared/traces, 88 MiB of chunks
 * for 70.8 MiB of blocks (tests/bench/RESULTS-real.md, run 5). Here that packing is replayed in
 * the order replay makes and frees the model's allocations (tests/workloads/replay_sched.c):
 * cyclic members once, first; then at each operation its births, then its deaths, each in
 * allocation order. A slab emptied is kept for new members while fewer than
 * PLAN_RULES_SLAB_KEEP_EMPTY are, else released. The step runs twice and the second is recorded,
 * so slabs kept empty by the first take members as in every later step. Not modelled: a slab
 * evicted or made on the host takes no new members in libshim (a plan never evicts a slab; a
 * reactive eviction may), which then opens another. */
#include "plan_internal.h"

#include "base_array.h"

#include <stdlib.h>

#define NONE INT32_MIN /* a slab holding no members in the recorded pass */

typedef struct slab {
    uint64_t *used; /* a bit per block, set when taken */
    uint32_t members;
    bool kept_empty, gone;
    int32_t since; /* the recorded pass: the op from which it holds members (PLAN_NO_OP: from
                      before the step), NONE */
} slab;

typedef struct sim {
    slab *s; /* in the order they were made: the newest last */
    size_t n, cap;
    uint32_t nblocks, words, empty;
    uint32_t *in, *first; /* per allocation: its slab, its first block (while it lives) */
    plan_slab_life *out;
    size_t nout, capout;
} sim;

static void set_blocks(uint64_t *used, uint32_t first, uint32_t n, bool taken)
{
    for (uint32_t b = first; b < first + n; b++) {
        if (taken)
            used[b / 64] |= 1ull << (b % 64);
        else
            used[b / 64] &= ~(1ull << (b % 64));
    }
}

/* Member a of want blocks into the newest slab with room, or a new one. */
static plan_err take(sim *x, uint32_t a, uint32_t want)
{
    int64_t at = -1;
    size_t i = x->n;
    while (i > 0 && at < 0) {
        i--;
        if (!x->s[i].gone)
            at = plan_rules_slab_find(x->s[i].used, x->nblocks, want);
    }
    if (at < 0) {
        if (base_array_grow((void **)&x->s, &x->cap, x->n + 1, sizeof *x->s))
            return PLAN_ERR_NOMEM;
        slab *s = &x->s[x->n];
        *s = (slab){.used = calloc(x->words, sizeof *s->used), .since = NONE};
        if (!s->used)
            return PLAN_ERR_NOMEM;
        i = x->n++;
        at = 0;
    }
    slab *s = &x->s[i];
    set_blocks(s->used, (uint32_t)at, want, true);
    if (s->kept_empty) {
        s->kept_empty = false;
        x->empty--;
    }
    s->members++;
    x->in[a] = (uint32_t)i;
    x->first[a] = (uint32_t)at;
    return PLAN_OK;
}

/* Member a of want blocks freed; its slab kept empty or released when it was the last. */
static void give(sim *x, uint32_t a, uint32_t want)
{
    slab *s = &x->s[x->in[a]];
    set_blocks(s->used, x->first[a], want, false);
    if (--s->members)
        return;
    if (x->empty < PLAN_RULES_SLAB_KEEP_EMPTY) {
        s->kept_empty = true;
        x->empty++;
        return;
    }
    s->gone = true;
    free(s->used);
    s->used = NULL;
}

/* The recorded pass: slabs holding members at op q (after its births) open a life. */
static void open_lives(sim *x, int32_t q, bool at_start)
{
    for (size_t i = 0; i < x->n; i++)
        if (!x->s[i].gone && x->s[i].members && x->s[i].since == NONE)
            x->s[i].since = at_start ? PLAN_NO_OP : q;
}

/* The recorded pass: slabs emptied by op q's deaths close their life at q (death: PLAN_NO_OP
   for those still holding members at the step's end, closed with q < 0). */
static plan_err close_lives(sim *x, int32_t q)
{
    for (size_t i = 0; i < x->n; i++) {
        slab *s = &x->s[i];
        if (s->since == NONE || (q >= 0 && s->members && !s->gone))
            continue;
        if (base_array_grow((void **)&x->out, &x->capout, x->nout + 1, sizeof *x->out))
            return PLAN_ERR_NOMEM;
        x->out[x->nout++] = (plan_slab_life){s->since, q >= 0 ? q : PLAN_NO_OP};
        s->since = NONE;
    }
    return PLAN_OK;
}

static size_t holding(const sim *x)
{
    size_t k = 0;
    for (size_t i = 0; i < x->n; i++)
        k += !x->s[i].gone && x->s[i].members;
    return k;
}

static bool cyclic(const plan_alloc *a)
{
    return a->birth == PLAN_NO_OP && a->death == PLAN_NO_OP;
}

static int32_t birth_op(const plan_alloc *a)
{
    return a->birth == PLAN_NO_OP ? 0 : a->birth;
}

static int32_t death_op(const plan_alloc *a, size_t nops)
{
    return a->death == PLAN_NO_OP ? (int32_t)nops - 1 : a->death;
}

/* One step of m: at each op its births, then its deaths (keys: op << 32 | allocation, sorted).
   The recorded pass opens a life for each slab that holds members at an op and closes it at the
   op whose deaths empty it (those of the last op are closed by the caller). */
static plan_err run_step(sim *x, const plan_model *m, const uint32_t *blocks,
                         const uint64_t *births, const uint64_t *deaths, size_t nm, bool record,
                         size_t *most)
{
    plan_err e = PLAN_OK;
    size_t pb = 0, pd = 0;
    if (record)
        open_lives(x, 0, true);
    for (int32_t q = 0; (size_t)q < m->nops && !e; q++) {
        for (; pb < nm && (int32_t)(births[pb] >> 32) == q && !e; pb++)
            e = take(x, (uint32_t)births[pb], blocks[(uint32_t)births[pb]]);
        if (record) {
            open_lives(x, q, false);
            size_t h = holding(x);
            *most = h > *most ? h : *most;
        }
        for (; pd < nm && (int32_t)(deaths[pd] >> 32) == q; pd++)
            give(x, (uint32_t)deaths[pd], blocks[(uint32_t)deaths[pd]]);
        if (record && !e && (size_t)q + 1 < m->nops)
            e = close_lives(x, q);
    }
    return e;
}

static int by_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

/* Contract in plan_internal.h. */
plan_err plan_slab_lives(const plan_model *m, const bool *member, const uint32_t *blocks,
                         uint64_t granule, plan_slab_life **out, size_t *n, size_t *most)
{
    *out = NULL;
    *n = *most = 0;
    sim x = {.nblocks = (uint32_t)(granule / PLAN_RULES_SLAB_BLOCK)};
    x.words = (x.nblocks + 63) / 64;
    size_t na = m->nallocs;
    x.in = malloc((na + 1) * sizeof *x.in);
    x.first = malloc((na + 1) * sizeof *x.first);
    uint64_t *births = malloc((na + 1) * sizeof *births);
    uint64_t *deaths = malloc((na + 1) * sizeof *deaths);
    uint32_t *want = malloc((na + 1) * sizeof *want); /* blocks: 1 to a slab's */
    plan_err e = x.in && x.first && births && deaths && want ? PLAN_OK : PLAN_ERR_NOMEM;
    size_t nm = 0;
    for (uint32_t a = 0; a < na && !e; a++)
        want[a] = blocks[a] < 1 ? 1 : blocks[a] > x.nblocks ? x.nblocks : blocks[a];
    blocks = want;
    for (uint32_t a = 0; a < na && !e; a++) /* cyclic members: made once, before every step */
        if (member[a] && cyclic(&m->allocs[a]))
            e = take(&x, a, blocks[a]);
    for (uint32_t a = 0; a < na && !e; a++)
        if (member[a] && !cyclic(&m->allocs[a])) {
            births[nm] = (uint64_t)birth_op(&m->allocs[a]) << 32 | a;
            deaths[nm++] = (uint64_t)death_op(&m->allocs[a], m->nops) << 32 | a;
        }
    if (!e && m->nops) {
        qsort(births, nm, sizeof *births, by_u64);
        qsort(deaths, nm, sizeof *deaths, by_u64);
        e = run_step(&x, m, blocks, births, deaths, nm, false, most);
        if (!e)
            e = run_step(&x, m, blocks, births, deaths, nm, true, most);
        if (!e) /* the lives still open at the step's end, and those closed by its last deaths */
            e = close_lives(&x, (int32_t)m->nops - 1);
        if (!e)
            e = close_lives(&x, -1);
    }
    for (size_t i = 0; i < x.n; i++)
        free(x.s[i].used);
    free(x.s);
    free(x.in);
    free(x.first);
    free(births);
    free(deaths);
    free(want);
    if (e) {
        free(x.out);
        return e;
    }
    *out = x.out;
    *n = x.nout;
    return PLAN_OK;
}
