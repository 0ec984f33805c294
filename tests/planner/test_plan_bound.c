/* tests/planner/test_plan_bound.c — the stall lower bound (planner/plan_bound.c) is a true lower
 * bound and is tight enough to judge plans by: below the best of every plan, canonical or not,
 * found by brute force on small random models (some with program copies and a both-busy link),
 * below every planner's plan on train_sim's recorded step at each link, and within 1.25x of the
 * scheduled plan's step time there. */
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
#include "plan_test_model.h"

#define BRUTE_MAX_PLANS 40000 /* models with more plans are skipped */
#define MAX_GAPS        8

/* ---- brute force over every plan ------------------------------------------------------------ */

typedef struct choice {
    int32_t e, k, w;
    bool used;
} choice;

/* Every entry gap g may have (any eviction point, any prefetch and wait plan_check accepts, the
 * gap left alone) into out (NULL: count only); returns how many. */
static size_t gap_choices(const plan_gap *g, choice *out)
{
    size_t n = 0;
    if (out)
        out[n] = (choice){0, 0, 0, false};
    n++;
    bool tail = g->kind == PLAN_GAP_TAIL;
    int32_t elast = tail ? g->last - 1 : g->last, wlast = tail ? g->last : g->b;
    for (int32_t e = g->a; e <= elast; e++) {
        int32_t k0 = tail ? PLAN_NO_OP : e + 1, k1 = tail ? PLAN_NO_OP : g->b;
        for (int32_t k = k0; k <= k1; k++) {
            if (out)
                out[n] = (choice){e, k, PLAN_NO_OP, true};
            n++;
            for (int32_t w = e + 1; w <= wlast; w++) {
                if (out)
                    out[n] = (choice){e, k, w, true};
                n++;
            }
        }
    }
    return n;
}

/* Least stall of a feasible plan of c at budget, -1 when none holds it, -2 when skipped. */
static double brute_force(const plan_ctx *c, uint64_t budget, double native)
{
    size_t ng = c->ngaps, total = 1, nopt[MAX_GAPS], idx[MAX_GAPS] = {0};
    if (ng > MAX_GAPS)
        return -2;
    for (size_t g = 0; g < ng; g++) {
        nopt[g] = gap_choices(&c->gaps[g], NULL);
        total *= nopt[g];
        if (total > BRUTE_MAX_PLANS)
            return -2;
    }
    choice *opts[MAX_GAPS];
    for (size_t g = 0; g < ng; g++) {
        opts[g] = malloc(nopt[g] * sizeof(choice));
        gap_choices(&c->gaps[g], opts[g]);
    }
    double best = -1;
    plan p;
    plan_init(&p);
    for (size_t it = 0; it < total; it++) {
        p.n = 0;
        for (size_t g = 0; g < ng; g++) {
            const choice *o = &opts[g][idx[g]];
            if (o->used)
                plan_push(&p, (plan_entry){c->gaps[g].alloc, o->e, o->k, o->w, c->gaps[g].b});
        }
        plan_stats st;
        assert_int_equal(plan_check_ctx(c, &p, NULL, NULL, 0), PLAN_OK);
        assert_int_equal(plan_sim_run(c, &p, budget, &st, NULL), PLAN_OK);
        double cost = native < 0 ? st.stall_us : st.step_us - native;
        if (st.feasible && (best < 0 || cost < best))
            best = cost;
        for (size_t g = 0; g < ng && ++idx[g] == nopt[g]; g++) /* next combination */
            idx[g] = 0;
    }
    plan_free(&p);
    for (size_t g = 0; g < ng; g++)
        free(opts[g]);
    return best;
}

/* Random small model `seed`: every third with a program copy or two, every fourth duplex one on
 * a both-busy link, every fifth with two operations of zero duration; remaps of 0 to 25 us on
 * the mover (copies take up to 10 us, operations up to 10 us: with 6 and 25 us the mover is
 * often busier than the link); budget from the floor to the native peak. */
static void make_model(unsigned seed, plan_model *m, plan_ctx *c, uint64_t *budget, char *spec,
                       size_t cap)
{
    static const unsigned remaps[] = {0, 1, 0, 6, 25};
    char msg[256];
    snprintf(spec, cap, "random:ops=%u,allocs=%u,seed=%u,duplex=%u,remap=%u,cyclic=%u",
             4 + seed % 4, 2 + (seed / 4) % 2, seed, (seed / 3) % 2, remaps[(seed / 5) % 5],
             20 + seed % 50);
    plan_model_init(m);
    if (plan_generate(m, spec, msg, sizeof(msg)))
        fail_msg("%s: %s", spec, msg);
    if (seed % 3 == 0)
        assert_int_equal(plan_model_add_copy(m, (int32_t)(seed % m->nops), 0, 50 + seed % 300), 0);
    if (seed % 6 == 0)
        assert_int_equal(plan_model_add_copy(m, (int32_t)(seed / 6 % m->nops), 1, 120), 0);
    if (seed % 4 == 1 && m->hw.duplex)
        m->hw.both_h2d_gbps = m->hw.h2d_gbps / 2, m->hw.both_d2h_gbps = m->hw.d2h_gbps;
    if (seed % 5 == 2) /* operations of zero duration: several positions share one time */
        m->ops[seed % m->nops].dur_us = m->ops[(seed + 2) % m->nops].dur_us = 0;
    if (plan_ctx_init(c, m, msg, sizeof(msg)))
        fail_msg("%s: %s", spec, msg);
    uint64_t lo = c->floor_peak, hi = c->native_peak;
    *budget = lo + (hi - lo) * ((seed * 29) % 100) / 100;
}

static void test_bound_below_brute_force(void **state)
{
    (void)state;
    unsigned compared = 0, positive = 0, tight = 0;
    double ratio_sum = 0;
    for (unsigned seed = 1; seed <= 400; seed++) {
        plan_model m;
        plan_ctx c;
        uint64_t budget;
        char spec[200];
        make_model(seed, &m, &c, &budget, spec, sizeof(spec));
        double best = brute_force(&c, budget, -1), lb;
        assert_int_equal(plan_bound_ctx(&c, budget, &lb), PLAN_OK);
        if (best >= 0) {
            compared++;
            if (lb > best + 1e-9 * PLAN_MAX(1.0, c.compute + best))
                fail_msg("%s B=%llu: bound %.9g above the best plan's stall %.9g", spec,
                         (unsigned long long)budget, lb, best);
            if (best > 0) {
                positive += lb > 0;
                tight += lb >= best * (1 - 1e-9);
                ratio_sum += lb / best;
            }
        }
        plan_ctx_free(&c);
        plan_model_free(&m);
    }
    printf("bound <= best of every plan: %u models; with stall > 0: bound > 0 in %u, exact in %u, "
           "mean bound / best %.3f\n",
           compared, positive, tight, positive ? ratio_sum / positive : 0.0);
    assert_true(compared >= 300);
    assert_true(positive >= 40);
}

/* Host-bound models (idle time before operations, claim 11): the bound stays below what the best
 * plan adds to the native step, though stalls may hide in the idle time. Each random model of
 * make_model gets idle time before some operations, up to twice the longest operation. */
static void test_bound_with_idle(void **state)
{
    (void)state;
    unsigned compared = 0, absorbed = 0, positive = 0;
    for (unsigned seed = 1; seed <= 300; seed++) {
        plan_model m;
        plan_ctx c0, c;
        uint64_t budget;
        char spec[200], msg[256];
        make_model(seed, &m, &c0, &budget, spec, sizeof(spec));
        plan_ctx_free(&c0);
        double most = 0;
        for (size_t q = 0; q < m.nops; q++)
            most = PLAN_MAX(most, m.ops[q].dur_us);
        for (size_t q = 0; q < m.nops; q++)
            if ((seed + q) % 3 == 0)
                assert_int_equal(plan_model_set_idle(&m, q, most * (double)((seed * 7 + q) % 5) / 2),
                                 PLAN_OK);
        assert_int_equal(plan_ctx_init(&c, &m, msg, sizeof(msg)), PLAN_OK);
        plan p;
        plan_init(&p);
        plan_stats nat;
        assert_int_equal(plan_sim_run(&c, &p, UINT64_MAX, &nat, NULL), PLAN_OK);
        if (m.ncopies == 0) /* the native step is its durations and idle times */
            assert_true(fabs(nat.step_us - c.compute) <= 1e-9 * c.compute);
        double best = brute_force(&c, budget, nat.step_us), lb, stall_best = brute_force(&c, budget, -1);
        assert_int_equal(plan_bound_ctx(&c, budget, &lb), PLAN_OK);
        if (best >= 0) {
            compared++;
            if (lb > best + 1e-9 * PLAN_MAX(1.0, c.compute + best))
                fail_msg("%s B=%llu: bound %.9g above the best plan's cost %.9g", spec,
                         (unsigned long long)budget, lb, best);
            absorbed += stall_best > best + 1e-9;
            positive += lb > 0;
        }
        plan_free(&p);
        plan_ctx_free(&c);
        plan_model_free(&m);
    }
    printf("bound <= best plan's cost over native, with idle time: %u models, bound > 0 in %u, "
           "idle time absorbed part of the best stall in %u\n",
           compared, positive, absorbed);
    assert_true(compared >= 200);
    assert_true(absorbed >= 10); /* the idle time matters in the models tried */
}

/* Parses model text named name, then returns its bound and (through *best) its best plan's
   stall at budget; fails the test on a parse error. */
static double bound_and_best(const char *text, const char *name, uint64_t budget, double *best)
{
    char msg[256];
    plan_model m;
    plan_ctx c;
    plan_model_init(&m);
    if (plan_model_parse(text, strlen(text), name, &m, msg, sizeof(msg)))
        fail_msg("%s", msg);
    assert_int_equal(plan_ctx_init(&c, &m, NULL, 0), PLAN_OK);
    double lb;
    *best = brute_force(&c, budget, -1);
    assert_int_equal(plan_bound_ctx(&c, budget, &lb), PLAN_OK);
    plan_ctx_free(&c);
    plan_model_free(&m);
    return lb;
}

/* Two cyclic allocations of 10 us copies over four 1 us operations: A touched by op 2, B by op
 * 0; C (their size together) lives only in op 1, so both must be off then. A's eviction from the
 * step before (q = 2 - 4) with B's copy back (b = 4): 2 x 10 us over ops 3 and 0 (2 us), and the
 * same again: 36 us, but their windows overlap in op 0 (b - q = 6 > 4) and cannot add. The pairs
 * that fit in one step (A's eviction with A's copy back, B's eviction with B's) give 28 us, which
 * the best plan pays (the old bound took the larger term only, 18 us). */
static void test_pairs_within_one_step(void **state)
{
    (void)state;
    static const char text[] = "hw 1 1 1 0\nop 1\nop 1\nop 1\nop 1\n"
                               "alloc 10000 -1 -1 2\nalloc 10000 -1 -1 0\nalloc 20000 1 1 1\n";
    double best, lb = bound_and_best(text, "pairs", 20000, &best);
    if (fabs(lb - 28) > 1e-9 || fabs(best - 28) > 1e-9)
        fail_msg("bound %.9g, best plan %.9g, want 28 and 28", lb, best);
}

/* A program copy runs between the eviction's start and the operation that needs the room: A
 * (10 us each way) leaves after op 0 while the program uploads for 10 us after op 1, so op 2,
 * where C needs A's room, starts at 12 us without waiting. A bound that counted only compute in
 * that window claimed 9 us of stall; the best plan has none. */
static void test_program_copy_in_window(void **state)
{
    (void)state;
    static const char text[] = "hw 1 1 1 0\nop 1\nop 1\nop 1\nop 20\nop 20\n"
                               "alloc 10000 -1 -1 0\nalloc 10000 2 2 2\ncopy 1 h2d 10000\n";
    double best, lb = bound_and_best(text, "copy", 10000, &best);
    if (best != 0 || lb != 0)
        fail_msg("bound %.9g, best plan %.9g, want 0 and 0", lb, best);
}

/* ---- train_sim's recorded step ----------------------------------------------------------------
 */

typedef struct tlink {
    const char *name;
    plan_hw hw;
} tlink;

/* Step time of the scheduled plan over compute + bound at budget; checks the bound against the
 * reactive and scheduled plans on the way. */
static double sched_over_bound(const plan_ctx *c, const char *name, uint64_t budget)
{
    double lb, sched = 0;
    assert_int_equal(plan_bound_ctx(c, budget, &lb), PLAN_OK);
    assert_true(lb > 0 && !isinf(lb));
    for (int k = PLAN_KIND_REACTIVE; k <= PLAN_KIND_SCHEDULED; k++) {
        plan p;
        plan_stats st;
        plan_init(&p);
        assert_int_equal(plan_make_ctx(c, (plan_kind)k, budget, &p, &st), PLAN_OK);
        assert_true(st.feasible);
        if (lb > st.stall_us + 1e-9 * st.step_us)
            fail_msg("%s B=%llu: bound %.3f above the %s plan's stall %.3f", name,
                     (unsigned long long)budget, lb, plan_kind_name((plan_kind)k), st.stall_us);
        if (k == PLAN_KIND_SCHEDULED)
            sched = st.step_us;
        plan_free(&p);
    }
    printf("  %-22s budget %4llu MiB: scheduled %8.0f us, compute + bound %8.0f us: %.3fx\n", name,
           (unsigned long long)(budget >> 20), sched, c->compute + lb, sched / (c->compute + lb));
    return sched / (c->compute + lb);
}

static void test_train_sim_step(void **state)
{
    (void)state;
    /* the budgets of tests/bench/residency_bench.sh: 50% and 75% of the simulated device's
       native peak in async (2202046464 B) and exact (2088800256 B) modes */
    static const uint64_t budgets[] = {1101023232, 1044400128, 1651534848, 1566600192};
    static const tlink links[] = {{"25 GB/s", {25, 25, 1, 10, 0, 0}},
                                  {"50 GB/s", {50, 50, 1, 10, 0, 0}},
                                  {"25 GB/s shared", {25, 25, 0, 10, 0, 0}},
                                  {"25 GB/s, 11/25 both", {25, 25, 1, 10, 11, 25}},
                                  {"25 GB/s, remap 936 us", {25, 25, 1, 936, 0, 0}},
                                  {"25 GB/s, remap 3 ms", {25, 25, 1, 3000, 0, 0}}};
    plan_model m;
    load_train_sim(&m);
    for (size_t l = 0; l < sizeof(links) / sizeof(links[0]); l++) {
        m.hw = links[l].hw;
        plan_ctx c;
        assert_int_equal(plan_ctx_init(&c, &m, NULL, 0), PLAN_OK);
        for (size_t b = 0; b < sizeof(budgets) / sizeof(budgets[0]); b++) {
            double r = sched_over_bound(&c, links[l].name, budgets[b]);
            /* the target of issue 11 at 50% on the duplex link (was 1.42x with a bound that
               took the larger of a step's eviction and restore terms when a gap wraps) */
            if (b < 2 && l == 0)
                assert_true(r <= 1.25);
        }
        plan_ctx_free(&c);
    }
    plan_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bound_below_brute_force),
        cmocka_unit_test(test_bound_with_idle),
        cmocka_unit_test(test_pairs_within_one_step),
        cmocka_unit_test(test_program_copy_in_window),
        cmocka_unit_test(test_train_sim_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
