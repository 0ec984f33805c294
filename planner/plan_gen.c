/* planner/plan_gen.c — synthetic iteration models for tests and benchmarks, from a spec string
 * "KIND[:KEY=VALUE,...]". Deterministic: the same spec gives the same model. Sizes and
 * durations get a seeded jitter of +-jitter% so that no two layers are identical.
 *
 *   transformer  forward: fwd ops per layer, each touching the layer's weights, the first acts
 *                of them keeping an activation; a loss op; backward in reverse (2x the time),
 *                each op touching weights and the layer's gradient (born at the layer's first
 *                backward op) and freeing its activation; one optimizer op per layer touching
 *                weights, gradient (freed there) and `optim` state tensors. Weights and state
 *                are cyclic: state is idle from one optimizer op to the next.
 *   unet         like transformer over `levels` down and `levels` up blocks of `convs` ops,
 *                activations halving per level down; the last activation of each down level is
 *                also read by the first conv of the mirrored up level (long skip gaps).
 *   optim        `params` parameter tensors in `layers` groups; forward and backward one op per
 *                group; one optimizer op per tensor touching it, its gradient and `optim` state
 *                tensors of the same size: optimizer state dominates memory.
 *   random       `ops` ops of 1..us us, `allocs` allocations of 1..maxbytes bytes, `cyclic` % of
 *                them cyclic, the others with random birth and death, 1..touches touches each;
 *                `sparse` % of the touches read 1 byte to a quarter of their allocation (drawn
 *                only when sparse > 0, so that sparse=0 gives the models of before). */
#include "plan_internal.h"

#include "base_array.h"

#include <stdlib.h>
#include <string.h>

typedef struct gparam {
    const char *key;
    double val, lo, hi;
    bool size;
} gparam;

#define GCOMMON                                                                                    \
    {"seed", 1, 0, 4e9, false}, {"h2d", 25, 1e-6, 1e6, false}, {"d2h", 25, 1e-6, 1e6, false},      \
        {"duplex", 1, 0, 1, false}, {"remap", 10, 0, 1e9, false}, {"jitter", 20, 0, 90, false},    \
    {                                                                                              \
        NULL, 0, 0, 0, false                                                                       \
    }

#define MiB (1024.0 * 1024.0)

static const gparam transformer_p[] = {{"layers", 24, 1, 2e6, false},
                                       {"fwd", 4, 1, 64, false},
                                       {"acts", 3, 0, 64, false},
                                       {"hidden", 64 * MiB, 1, 1e15, true},
                                       {"weights", 96 * MiB, 1, 1e15, true},
                                       {"optim", 2, 0, 8, false},
                                       {"us", 2000, 0, 1e9, false},
                                       GCOMMON};

static const gparam unet_p[] = {
    {"levels", 5, 1, 20, false},       {"convs", 3, 1, 1e5, false},
    {"act", 256 * MiB, 1, 1e15, true}, {"weights", 32 * MiB, 1, 1e15, true},
    {"us", 300, 0, 1e9, false},        GCOMMON};

static const gparam optim_p[] = {
    {"params", 200, 1, 2e6, false},       {"layers", 20, 1, 1e6, false},
    {"weights", 16 * MiB, 1, 1e15, true}, {"optim", 3, 0, 8, false},
    {"us", 500, 0, 1e9, false},           GCOMMON};

static const gparam random_p[] = {
    {"ops", 8, 1, 1e7, false},      {"allocs", 4, 0, 1e7, false}, {"maxbytes", 1000, 1, 1e15, true},
    {"cyclic", 30, 0, 100, false},  {"touches", 3, 1, 64, false}, {"us", 10, 1, 1e9, false},
    {"sparse", 0, 0, 100, false},   {"seed", 1, 0, 4e9, false},   {"h2d", 0.1, 1e-6, 1e6, false},
    {"d2h", 0.1, 1e-6, 1e6, false}, {"duplex", 1, 0, 1, false},   {"remap", 0, 0, 1e9, false},
    {"jitter", 0, 0, 90, false},    {NULL, 0, 0, 0, false}};

#define GMAX_PARAMS 16

typedef struct gen {
    plan_model *m;
    gparam p[GMAX_PARAMS];
    uint64_t rng;
    int32_t *tb; /* touches of the allocation being built */
    size_t ntb, ctb;
    plan_err err;
} gen;

static double P(const gen *g, const char *key)
{
    for (const gparam *p = g->p; p->key; p++)
        if (strcmp(p->key, key) == 0)
            return p->val;
    return 0;
}

static uint64_t rnd(gen *g) /* splitmix64 */
{
    uint64_t z = (g->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double unit(gen *g)
{
    return (double)(rnd(g) >> 11) * (1.0 / 9007199254740992.0);
}

static int64_t rint_in(gen *g, int64_t lo, int64_t hi) /* uniform in [lo, hi] */
{
    return lo + (int64_t)(rnd(g) % (uint64_t)(hi - lo + 1));
}

static double jit(gen *g, double v)
{
    double j = P(g, "jitter") / 100.0;
    return v * (1.0 - j + 2.0 * j * unit(g));
}

static int32_t op(gen *g, double us)
{
    if (!g->err)
        g->err = plan_model_add_op(g->m, us < 0 ? 0 : us, 0);
    return (int32_t)g->m->nops - 1;
}

static void touch(gen *g, int32_t q)
{
    if (base_array_grow((void **)&g->tb, &g->ctb, g->ntb + 1, sizeof(*g->tb))) {
        g->err = PLAN_ERR_NOMEM;
        return;
    }
    g->tb[g->ntb++] = q;
}

static void alloc(gen *g, double bytes, int32_t birth, int32_t death)
{
    uint64_t b = bytes < 1 ? 1 : (uint64_t)bytes;
    if (!g->err)
        g->err = plan_model_add_alloc(g->m, b, birth, death, g->tb, g->ntb);
    g->ntb = 0;
}

/* ---- transformer -------------------------------------------------------------------------- */

static void gen_transformer(gen *g)
{
    int32_t L = (int32_t)P(g, "layers"), F = (int32_t)P(g, "fwd");
    int32_t A = PLAN_MIN((int32_t)P(g, "acts"), F), O = (int32_t)P(g, "optim");
    double us = P(g, "us");
    int32_t *fw = malloc((size_t)L * (size_t)F * sizeof(*fw));
    int32_t *bw = malloc((size_t)L * (size_t)F * sizeof(*bw));
    int32_t *opt = malloc((size_t)L * sizeof(*opt));
    if (!fw || !bw || !opt) {
        g->err = PLAN_ERR_NOMEM;
        goto out;
    }
    for (int32_t l = 0; l < L; l++)
        for (int32_t j = 0; j < F; j++)
            fw[l * F + j] = op(g, jit(g, us));
    op(g, jit(g, us)); /* loss */
    for (int32_t l = L - 1; l >= 0; l--)
        for (int32_t j = F - 1; j >= 0; j--)
            bw[l * F + j] = op(g, jit(g, 2 * us));
    for (int32_t l = 0; l < L; l++)
        opt[l] = op(g, jit(g, us / 2));
    for (int32_t l = 0; l < L && !g->err; l++) {
        for (int32_t j = 0; j < A; j++) { /* activations */
            touch(g, fw[l * F + j]), touch(g, bw[l * F + j]);
            alloc(g, jit(g, P(g, "hidden")), fw[l * F + j], bw[l * F + j]);
        }
        for (int32_t j = 0; j < F; j++) /* weights */
            touch(g, fw[l * F + j]), touch(g, bw[l * F + j]);
        touch(g, opt[l]);
        alloc(g, jit(g, P(g, "weights")), PLAN_NO_OP, PLAN_NO_OP);
        for (int32_t j = F - 1; j >= 0; j--) /* gradient */
            touch(g, bw[l * F + j]);
        touch(g, opt[l]);
        alloc(g, jit(g, P(g, "weights")), bw[l * F + F - 1], opt[l]);
        for (int32_t k = 0; k < O; k++) { /* optimizer state */
            touch(g, opt[l]);
            alloc(g, jit(g, P(g, "weights")), PLAN_NO_OP, PLAN_NO_OP);
        }
    }
out:
    free(fw), free(bw), free(opt);
}

/* ---- unet ----------------------------------------------------------------------------------- */

/* Time of a conv at level lvl: the top level is the slowest. */
static double unet_us(double us, int32_t lvl)
{
    return us / (double)(1 << PLAN_MIN(lvl, 20)) + us / 4;
}

static void gen_unet(gen *g)
{
    int32_t D = (int32_t)P(g, "levels"), C = (int32_t)P(g, "convs"), nb = 2 * D;
    double us = P(g, "us"), act = P(g, "act");
    int32_t *f = malloc((size_t)nb * (size_t)C * sizeof(*f));
    int32_t *b = malloc((size_t)nb * (size_t)C * sizeof(*b));
    int32_t *opt = malloc((size_t)nb * sizeof(*opt));
    if (!f || !b || !opt) {
        g->err = PLAN_ERR_NOMEM;
        goto out;
    }
    /* block i: down level i for i < D, up level 2D-1-i otherwise */
    for (int32_t i = 0; i < nb; i++)
        for (int32_t k = 0; k < C; k++)
            f[i * C + k] = op(g, jit(g, unet_us(us, i < D ? i : nb - 1 - i)));
    op(g, jit(g, us)); /* loss */
    for (int32_t i = nb - 1; i >= 0; i--)
        for (int32_t k = C - 1; k >= 0; k--)
            b[i * C + k] = op(g, jit(g, 2 * unet_us(us, i < D ? i : nb - 1 - i)));
    for (int32_t i = 0; i < nb; i++)
        opt[i] = op(g, jit(g, us / 4));
    for (int32_t i = 0; i < nb && !g->err; i++) {
        int32_t lvl = i < D ? i : nb - 1 - i;
        double sz = act / (double)(1ull << PLAN_MIN(lvl, 40));
        for (int32_t k = 0; k < C; k++) {
            touch(g, f[i * C + k]), touch(g, b[i * C + k]);
            if (i < D && k == C - 1) { /* skip: read by the mirrored up block and its backward */
                touch(g, f[(nb - 1 - i) * C]), touch(g, b[(nb - 1 - i) * C]);
            }
            alloc(g, jit(g, sz), f[i * C + k], b[i * C + k]);
        }
        for (int32_t k = 0; k < C; k++)
            touch(g, f[i * C + k]), touch(g, b[i * C + k]);
        touch(g, opt[i]);
        alloc(g, jit(g, P(g, "weights")), PLAN_NO_OP, PLAN_NO_OP);
        for (int32_t k = 0; k < C; k++)
            touch(g, b[i * C + k]);
        touch(g, opt[i]);
        alloc(g, jit(g, P(g, "weights")), b[i * C + C - 1], opt[i]);
    }
out:
    free(f), free(b), free(opt);
}

/* ---- optimizer-heavy ------------------------------------------------------------------------ */

static void gen_optim(gen *g)
{
    int32_t N = (int32_t)P(g, "params"), L = PLAN_MIN((int32_t)P(g, "layers"), N);
    int32_t O = (int32_t)P(g, "optim");
    double us = P(g, "us");
    int32_t *fw = malloc((size_t)L * sizeof(*fw)), *bw = malloc((size_t)L * sizeof(*bw));
    int32_t *opt = malloc((size_t)N * sizeof(*opt));
    if (!fw || !bw || !opt) {
        g->err = PLAN_ERR_NOMEM;
        goto out;
    }
    for (int32_t l = 0; l < L; l++)
        fw[l] = op(g, jit(g, us));
    for (int32_t l = L - 1; l >= 0; l--)
        bw[l] = op(g, jit(g, 2 * us));
    for (int32_t i = 0; i < N; i++)
        opt[i] = op(g, jit(g, us / 10));
    for (int32_t l = 0; l + 1 < L && !g->err; l++) { /* small activations between layers */
        touch(g, fw[l]), touch(g, fw[l + 1]), touch(g, bw[l + 1]), touch(g, bw[l]);
        alloc(g, jit(g, P(g, "weights") / 8), fw[l], bw[l]);
    }
    for (int32_t i = 0; i < N && !g->err; i++) {
        int32_t l = (int32_t)((int64_t)i * L / N);
        double sz = jit(g, P(g, "weights"));
        touch(g, fw[l]), touch(g, bw[l]), touch(g, opt[i]);
        alloc(g, sz, PLAN_NO_OP, PLAN_NO_OP);
        touch(g, bw[l]), touch(g, opt[i]);
        alloc(g, sz, bw[l], opt[i]);
        for (int32_t k = 0; k < O; k++) {
            touch(g, opt[i]);
            alloc(g, sz, PLAN_NO_OP, PLAN_NO_OP);
        }
    }
out:
    free(fw), free(bw), free(opt);
}

/* ---- random -----------------------------------------------------------------------------------
 */

/* alloc, with sparse % of the touches reading 1 byte to a quarter of the bytes (at least 4). */
static void alloc_sparse(gen *g, uint64_t bytes, int32_t birth, int32_t death)
{
    uint64_t *reads = malloc((g->ntb + 1) * sizeof(*reads));
    if (!reads && !g->err)
        g->err = PLAN_ERR_NOMEM;
    for (size_t i = 0; reads && i < g->ntb; i++)
        reads[i] = bytes >= 4 && unit(g) * 100 < P(g, "sparse")
                       ? (uint64_t)rint_in(g, 1, (int64_t)(bytes / 4))
                       : 0;
    if (!g->err)
        g->err = plan_model_add_alloc_reads(g->m, bytes, birth, death, g->tb, reads, g->ntb);
    g->ntb = 0;
    free(reads);
}

static void gen_random(gen *g)
{
    int32_t n = (int32_t)P(g, "ops"), na = (int32_t)P(g, "allocs"), nt = (int32_t)P(g, "touches");
    for (int32_t q = 0; q < n; q++)
        op(g, (double)rint_in(g, 1, (int64_t)P(g, "us")));
    for (int32_t x = 0; x < na && !g->err; x++) {
        int32_t birth = PLAN_NO_OP, death = PLAN_NO_OP;
        if (unit(g) * 100 >= P(g, "cyclic")) {
            birth = (int32_t)rint_in(g, -1, n - 1);
            death = (int32_t)rint_in(g, birth < 0 ? 0 : birth, n - 1);
            if (birth >= 0 && unit(g) < 0.1)
                death = PLAN_NO_OP;
        }
        int32_t lo = birth < 0 ? 0 : birth, hi = death < 0 ? n - 1 : death;
        int32_t k = (int32_t)rint_in(g, 1, nt);
        for (int32_t i = 0; i < k; i++)
            touch(g, (int32_t)rint_in(g, lo, hi));
        uint64_t b = (uint64_t)rint_in(g, 1, (int64_t)P(g, "maxbytes"));
        if (P(g, "sparse") > 0)
            alloc_sparse(g, b, birth, death);
        else
            alloc(g, (double)b, birth, death);
    }
}

/* ---- spec parsing --------------------------------------------------------------------------- */

static plan_err set_param(gen *g, const char *kv, size_t len, char *msg, size_t cap)
{
    const char *eq = memchr(kv, '=', len);
    size_t kl = eq ? (size_t)(eq - kv) : len;
    for (gparam *p = g->p; eq && p->key; p++) {
        if (strlen(p->key) != kl || memcmp(p->key, kv, kl) != 0)
            continue;
        const char *v = eq + 1;
        size_t vl = len - kl - 1;
        uint64_t sz;
        double d;
        bool ok = p->size ? plan_parse_size_n(v, vl, &sz) == PLAN_OK : plan_parse_double(v, vl, &d);
        if (ok && p->size)
            d = (double)sz;
        if (!ok || !(d >= p->lo && d <= p->hi)) {
            plan_msg(msg, cap, "%s must be in [%g, %g]", p->key, p->lo, p->hi);
            return PLAN_ERR_PARSE;
        }
        p->val = d;
        return PLAN_OK;
    }
    plan_msg(msg, cap, "unknown or malformed parameter '%.*s'", (int)PLAN_MIN(len, 40), kv);
    return PLAN_ERR_PARSE;
}

static const gparam *kind_params(const char *spec, size_t kl, void (**fn)(gen *))
{
    static const struct {
        const char *name;
        const gparam *params;
        void (*fn)(gen *);
    } kinds[] = {{"transformer", transformer_p, gen_transformer},
                 {"unet", unet_p, gen_unet},
                 {"optim", optim_p, gen_optim},
                 {"random", random_p, gen_random}};
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (strlen(kinds[i].name) == kl && memcmp(kinds[i].name, spec, kl) == 0) {
            *fn = kinds[i].fn;
            return kinds[i].params;
        }
    return NULL;
}

static plan_err parse_spec(gen *g, const char *spec, void (**fn)(gen *), char *msg, size_t cap)
{
    const char *colon = strchr(spec, ':');
    size_t kl = colon ? (size_t)(colon - spec) : strlen(spec);
    const gparam *defs = kind_params(spec, kl, fn);
    if (!defs) {
        plan_msg(msg, cap, "unknown model kind '%.*s' (transformer, unet, optim, random)",
                 (int)PLAN_MIN(kl, 40), spec);
        return PLAN_ERR_PARSE;
    }
    size_t i = 0;
    for (; defs[i].key && i + 1 < GMAX_PARAMS; i++)
        g->p[i] = defs[i];
    g->p[i].key = NULL;
    for (const char *s = colon ? colon + 1 : NULL; s && *s;) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        plan_err e = set_param(g, s, len, msg, cap);
        if (e)
            return e;
        s = comma ? comma + 1 : NULL;
    }
    return PLAN_OK;
}

plan_err plan_generate(plan_model *m, const char *spec, char *msg, size_t cap)
{
    gen g = {.m = m};
    void (*fn)(gen *) = NULL;
    plan_msg(msg, cap, "%s", "");
    plan_err e = spec ? parse_spec(&g, spec, &fn, msg, cap) : PLAN_ERR_PARSE;
    if (e)
        return e;
    g.rng = (uint64_t)P(&g, "seed") * 0x2545f4914f6cdd1dull + 1;
    m->hw = (plan_hw){.h2d_gbps = P(&g, "h2d"),
                      .d2h_gbps = P(&g, "d2h"),
                      .duplex = (int)P(&g, "duplex"),
                      .remap_us = P(&g, "remap")};
    fn(&g);
    free(g.tb);
    if (!g.err && plan_model_check(m, NULL, msg, cap))
        g.err = PLAN_ERR_LIMIT;
    if (g.err) {
        if (g.err == PLAN_ERR_NOMEM)
            plan_msg(msg, cap, "out of memory");
        else if (g.err == PLAN_ERR_LIMIT && msg && !msg[0])
            plan_msg(msg, cap, "model too large");
        plan_model_free(m);
    }
    return g.err;
}
