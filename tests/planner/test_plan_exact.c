/* tests/planner/test_plan_exact.c — the exact planner against an independent brute force, the
 * scheduled planner against the exact one (distribution printed), and the lower bound against
 * every plan. Random small models come from plan_generate("random:..."), so every case is
 * reproducible from its printed spec. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

#define BRUTE_MAX_PLANS 60000 /* models with more canonical plans are skipped */

typedef struct small {
    char spec[160];
    plan_model m;
    plan_ctx c;
    uint64_t budget;
} small;

/* Model `seed` of a family: ops in [4, 4 + ops_span), allocs in [2, 2 + alloc_span). */
static void make_small(small *s, unsigned seed, unsigned ops_span, unsigned alloc_span)
{
    static const unsigned remaps[] = {0, 1, 0, 6, 25}; /* up to a mover busier than the link */
    snprintf(s->spec, sizeof(s->spec), "random:ops=%u,allocs=%u,seed=%u,duplex=%u,remap=%u",
             4 + seed % ops_span, 2 + (seed / 7) % alloc_span, seed, (seed / 3) % 2,
             remaps[(seed / 5) % 5]);
    char msg[256];
    plan_model_init(&s->m);
    if (plan_generate(&s->m, s->spec, msg, sizeof(msg)) ||
        plan_ctx_init(&s->c, &s->m, msg, sizeof(msg)))
        fail_msg("%s: %s", s->spec, msg);
    /* from below the floor (1 in 10) to the native peak */
    uint64_t lo = s->c.floor_peak, hi = s->c.native_peak;
    unsigned pct = (seed * 37) % 110;
    s->budget = pct < 10 ? lo - PLAN_MIN(lo, 1 + pct) : lo + (hi - lo) * (pct - 10) / 100;
}

static void free_small(small *s)
{
    plan_ctx_free(&s->c);
    plan_model_free(&s->m);
}

/* ---- brute force over the canonical plans, written independently of plan_exact.c ------------ */

typedef struct option {
    int32_t k, w;
    bool used;
} option;

/* Canonical options of gap g: not chosen, or (k in (a, b], w none or in (a, k]); for a gap
 * dying on host, w none or in (a, last]. */
static size_t gap_options(const plan_gap *g, option *out)
{
    size_t n = 0;
    out[n++] = (option){0, 0, false};
    if (g->kind == PLAN_GAP_TAIL) {
        out[n++] = (option){PLAN_NO_OP, PLAN_NO_OP, true};
        for (int32_t w = g->a + 1; w <= g->last; w++)
            out[n++] = (option){PLAN_NO_OP, w, true};
        return n;
    }
    for (int32_t k = g->a + 1; k <= g->b; k++) {
        out[n++] = (option){k, PLAN_NO_OP, true};
        for (int32_t w = g->a + 1; w <= k; w++)
            out[n++] = (option){k, w, true};
    }
    return n;
}

/* Least stall of a feasible canonical plan, or -1 when none holds the budget. */
static double brute_force(const small *s, bool *skipped)
{
    size_t ng = s->c.ngaps, total = 1, nalloc = 0;
    option *opts[16];
    size_t nopt[16], idx[16] = {0};
    *skipped = ng > 16;
    for (size_t g = 0; g < ng && !*skipped; g++, nalloc++) {
        const plan_gap *gp = &s->c.gaps[g];
        opts[g] = malloc((size_t)(gp->last - gp->a + 2) * (size_t)(gp->last - gp->a + 3) *
                         sizeof(option));
        nopt[g] = gap_options(gp, opts[g]);
        total *= nopt[g];
        *skipped |= total > BRUTE_MAX_PLANS;
    }
    double best = -1;
    plan p;
    plan_init(&p);
    for (size_t it = 0; it < total && !*skipped; it++) {
        p.n = 0;
        for (size_t g = 0; g < ng; g++)
            if (opts[g][idx[g]].used)
                plan_push(&p, plan_ctx_entry(&s->c, g, opts[g][idx[g]].k, opts[g][idx[g]].w));
        plan_stats st;
        assert_int_equal(plan_sim_run(&s->c, &p, s->budget, &st, NULL), PLAN_OK);
        if (st.feasible && (best < 0 || st.stall_us < best))
            best = st.stall_us;
        for (size_t g = 0; g < ng && ++idx[g] == nopt[g]; g++) /* next combination */
            idx[g] = 0;
    }
    plan_free(&p);
    for (size_t g = 0; g < nalloc; g++)
        free(opts[g]);
    return best;
}

/* Every entry canonical: evicted after its gap's last anchor, no wait after the copy back. */
static void assert_canonical(const small *s, const plan *p)
{
    for (size_t i = 0; i < p->n; i++) {
        const plan_entry *e = &p->entries[i];
        size_t g = plan_ctx_find_gap(&s->c, e->alloc, e->evict_after);
        assert_true(g != SIZE_MAX);
        if (e->evict_after != s->c.gaps[g].a)
            fail_msg("%s: entry %zu evicts after %d, gap starts at %d", s->spec, i, e->evict_after,
                     s->c.gaps[g].a);
        if (e->need != PLAN_NO_OP && e->wait_at > e->prefetch_at)
            fail_msg("%s: entry %zu waits at %d after its prefetch at %d", s->spec, i, e->wait_at,
                     e->prefetch_at);
    }
}

static void test_exact_equals_brute_force(void **state)
{
    (void)state;
    unsigned compared = 0, skipped = 0, infeasible = 0, positive = 0;
    for (unsigned seed = 1; seed <= 260; seed++) {
        small s;
        make_small(&s, seed, 3, 2); /* 4-6 ops, 2-3 allocations */
        bool skip;
        double brute = brute_force(&s, &skip);
        if (skip) {
            skipped++;
            free_small(&s);
            continue;
        }
        plan p;
        plan_stats st;
        plan_init(&p);
        assert_int_equal(plan_make_ctx(&s.c, PLAN_KIND_EXACT, s.budget, &p, &st), PLAN_OK);
        if (brute < 0) {
            infeasible++;
            if (st.feasible)
                fail_msg("%s B=%llu: exact feasible, brute force finds nothing", s.spec,
                         (unsigned long long)s.budget);
            assert_int_equal(st.peak_bytes, s.c.floor_peak); /* the smallest peak */
        } else {
            if (!st.feasible || fabs(st.stall_us - brute) > 1e-9 * PLAN_MAX(1.0, st.step_us))
                fail_msg("%s B=%llu: exact stall %.9g (feasible %d), brute force %.9g", s.spec,
                         (unsigned long long)s.budget, st.stall_us, st.feasible, brute);
            positive += brute > 0;
        }
        assert_canonical(&s, &p);
        compared++;
        plan_free(&p);
        free_small(&s);
    }
    printf("exact == brute force: %u models compared (%u with stall > 0, %u infeasible), %u "
           "skipped (more than %d plans)\n",
           compared, positive, infeasible, skipped, BRUTE_MAX_PLANS);
    assert_true(compared >= 200);
    assert_true(positive >= 30 && infeasible >= 10);
}

/* ---- scheduled against exact -------------------------------------------------------------- */

#define SLACK_US 1.0 /* absolute slack: ops last 1-10 us */
#define NMODELS  300

static void print_distribution(const double *ratio, unsigned n, unsigned exact_zero,
                               unsigned both_zero)
{
    static const double edges[] = {1.0 + 1e-9, 1.01, 1.05, 1.10, 1.25, 1.5, 2.0, INFINITY};
    static const char *const names[] = {"= exact", "<= +1%",  "<= +5%", "<= +10%",
                                        "<= +25%", "<= +50%", "<= 2x",  "> 2x"};
    unsigned count[8] = {0};
    for (unsigned i = 0; i < n; i++)
        for (int b = 0; b < 8; b++)
            if (ratio[i] <= edges[b]) {
                count[b]++;
                break;
            }
    printf("scheduled / exact stall over %u models with exact stall > 0:\n", n);
    for (int b = 0; b < 8; b++)
        printf("  %-8s %4u\n", names[b], count[b]);
    printf("models with exact stall 0: %u (scheduled also 0: %u)\n", exact_zero, both_zero);
}

static void test_scheduled_near_exact(void **state)
{
    (void)state;
    double ratio[NMODELS];
    unsigned nr = 0, within = 0, total = 0, exact_zero = 0, both_zero = 0;
    double worst = 1;
    for (unsigned seed = 1000; seed < 1000 + NMODELS; seed++) {
        small s;
        make_small(&s, seed, 4, 3); /* 4-7 ops, 2-4 allocations */
        plan pe, ps;
        plan_stats se, ss;
        plan_init(&pe);
        plan_init(&ps);
        assert_int_equal(plan_make_ctx(&s.c, PLAN_KIND_EXACT, s.budget, &pe, &se), PLAN_OK);
        assert_int_equal(plan_make_ctx(&s.c, PLAN_KIND_SCHEDULED, s.budget, &ps, &ss), PLAN_OK);
        assert_canonical(&s, &ps);
        assert_int_equal(ss.feasible, se.feasible); /* both find a plan whenever one exists */
        if (se.feasible) {
            total++;
            if (se.stall_us > ss.stall_us + 1e-9 * PLAN_MAX(1.0, ss.step_us))
                fail_msg("%s: exact %.9g above scheduled %.9g", s.spec, se.stall_us, ss.stall_us);
            within += ss.stall_us <= 1.10 * se.stall_us + SLACK_US;
            if (se.stall_us > 0) {
                ratio[nr] = ss.stall_us / se.stall_us;
                worst = PLAN_MAX(worst, ratio[nr]);
                nr++;
            } else {
                exact_zero++;
                both_zero += ss.stall_us == 0;
            }
            if (ss.stall_us > 1.10 * se.stall_us + SLACK_US)
                printf("outside: %s B=%llu exact %.3f scheduled %.3f\n", s.spec,
                       (unsigned long long)s.budget, se.stall_us, ss.stall_us);
        }
        plan_free(&pe);
        plan_free(&ps);
        free_small(&s);
    }
    print_distribution(ratio, nr, exact_zero, both_zero);
    printf("scheduled within 10%% + %.1f us of exact: %u of %u feasible models (%.1f%%), worst "
           "ratio %.3f\n",
           SLACK_US, within, total, 100.0 * within / total, worst);
    assert_true(total >= 250);
    assert_true(within * 100 >= total * 95);
}

/* ---- the lower bound --------------------------------------------------------------------- */

static void check_bound(const plan_ctx *c, uint64_t budget, const char *what)
{
    double lb;
    assert_int_equal(plan_bound_ctx(c, budget, &lb), PLAN_OK);
    if (budget < c->floor_peak) {
        assert_true(isinf(lb));
        return;
    }
    assert_true(lb >= 0 && !isinf(lb));
    if (budget >= c->native_peak)
        assert_true(lb == 0);
    for (int k = PLAN_KIND_NONE; k <= PLAN_KIND_EXACT; k++) {
        if (k == PLAN_KIND_EXACT && c->ngaps > 12)
            continue;
        plan p;
        plan_stats st;
        plan_init(&p);
        plan_err e = plan_make_ctx(c, (plan_kind)k, budget, &p, &st);
        assert_int_equal(e, PLAN_OK);
        if (st.feasible && lb > st.stall_us + 1e-6 * PLAN_MAX(1.0, st.step_us))
            fail_msg("%s B=%llu: bound %.6f above the %s plan's stall %.6f", what,
                     (unsigned long long)budget, lb, plan_kind_name((plan_kind)k), st.stall_us);
        plan_free(&p);
    }
}

static void test_bound_below_every_plan(void **state)
{
    (void)state;
    unsigned positive = 0;
    for (unsigned seed = 5000; seed < 5150; seed++) {
        small s;
        make_small(&s, seed, 4, 3);
        check_bound(&s.c, s.budget, s.spec);
        double lb;
        plan_bound_ctx(&s.c, s.budget, &lb);
        positive += lb > 0 && !isinf(lb);
        free_small(&s);
    }
    static const char *const specs[] = {"transformer:layers=6,us=300", "unet:levels=3,convs=2",
                                        "optim:params=30,layers=5,us=100"};
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        small s;
        char msg[256];
        plan_model_init(&s.m);
        assert_int_equal(plan_generate(&s.m, specs[i], msg, sizeof(msg)), PLAN_OK);
        assert_int_equal(plan_ctx_init(&s.c, &s.m, msg, sizeof(msg)), PLAN_OK);
        for (int pct = 20; pct <= 100; pct += 20) {
            uint64_t b = s.c.native_peak / 100 * (uint64_t)pct;
            check_bound(&s.c, b, specs[i]);
            double lb;
            plan_bound_ctx(&s.c, b, &lb);
            positive += lb > 0 && !isinf(lb);
        }
        free_small(&s);
    }
    printf("lower bound positive (and below every plan) in %u cases\n", positive);
    assert_true(positive >= 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_equals_brute_force),
        cmocka_unit_test(test_scheduled_near_exact),
        cmocka_unit_test(test_bound_below_every_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
