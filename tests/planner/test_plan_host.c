/* tests/planner/test_plan_host.c — the third placement (issue 24): what the simulator charges a
 * host-resident allocation, plan_check's rules for it, the placement the planners choose for a
 * sparse table as the budget and the link change, a brute-force check of the choice and the
 * bound on small random models, and the option off leaving every result as it was. */
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

static void parse(const char *text, plan_model *m)
{
    char msg[256];
    plan_model_init(m);
    if (plan_model_parse(text, strlen(text), "m.txt", m, msg, sizeof msg))
        fail_msg("%s", msg);
}

static void assert_near(double got, double want)
{
    if (fabs(got - want) > 1e-6 * (1 + fabs(want)))
        fail_msg("got %.9f, want %.9f", got, want);
}

/* At 1 GB/s (1000 bytes per us), a touch reading 4096 bytes costs 4.096 us, one reading 5000
   two pages (8.192 us), a whole read the moved bytes in pages: 1,000,000 -> 245 pages. */
static void test_sim_charge(void **state)
{
    (void)state;
    plan_model m;
    parse("hw 1 1 1 0\nop 100\nop 100\nop 100\nop 100\nop 100\n"
          "alloc 100000 -1 -1 0 1 2 3 4\n"
          "alloc 1000000 -1 -1 0@4096 3@5000 4\n",
          &m);
    plan p;
    plan_stats st;
    plan_init(&p);
    assert_int_equal(plan_push_host(&p, 1), PLAN_OK);
    assert_int_equal(plan_simulate(&m, &p, 100000, &st), PLAN_OK);
    double reads = 4.096 + 8.192 + 245 * 4096 / 1000.0;
    assert_int_equal(st.peak_bytes, 100000); /* it holds no device bytes */
    assert_true(st.feasible);
    assert_near(st.step_us, 500 + reads);
    assert_near(st.compute_us, 500);
    assert_near(st.stall_us, reads);
    assert_near(st.read_us, reads);
    assert_int_equal(st.bytes_read, 4096 + 5000 + 1000000);
    assert_int_equal(st.host_bytes, 1000000);
    assert_int_equal(st.nhost, 1);
    assert_int_equal(st.bytes_to_host, 0);
    assert_near(plan_host_read_us(&m.hw, 1), 4.096);
    assert_near(plan_host_read_us(&m.hw, 4097), 8.192);
    plan_free(&p);
    plan_model_free(&m);
}

static void test_check(void **state)
{
    (void)state;
    plan_model m;
    parse("hw 1 1 1 0\nop 1\nop 1\nop 1\n"
          "alloc 100 -1 -1 0\n"
          "alloc 1000 -1 -1 0@10 2\n",
          &m);
    char msg[256];
    plan p;
    plan_init(&p);
    assert_int_equal(plan_push_host(&p, 0), PLAN_OK);
    assert_int_equal(plan_check(&m, &p, msg, sizeof msg), PLAN_ERR_INVALID);
    assert_string_equal(msg, "host 0: allocation 0 is not read sparsely (no touch reads less than "
                             "its whole): it cannot stay on the host");
    p.host[0] = 1;
    assert_int_equal(plan_check(&m, &p, msg, sizeof msg), PLAN_OK);
    assert_int_equal(plan_push(&p, (plan_entry){1, 0, 2, PLAN_NO_OP, 2}), PLAN_OK);
    assert_int_equal(plan_check(&m, &p, msg, sizeof msg), PLAN_ERR_INVALID);
    assert_string_equal(msg, "entry 0: allocation 1 stays on the host: it has no entries");
    p.n = 0;
    assert_int_equal(plan_push_host(&p, 1), PLAN_OK);
    assert_int_equal(plan_check(&m, &p, msg, sizeof msg), PLAN_ERR_INVALID);
    assert_string_equal(msg, "host 1: allocation 1 listed twice");
    p.host[1] = 7;
    assert_int_equal(plan_check(&m, &p, msg, sizeof msg), PLAN_ERR_INVALID);
    assert_string_equal(msg, "host 1: allocation 7 out of range");
    plan_free(&p);
    plan_model_free(&m);
}

/* A weight touched whole by every operation, a 1 MB table read 4 KiB by operation 0 only, and an
   activation live and touched at operations 2 and 3. Native peak 1.6 MB; without host residency
   the floor is 1.1 MB (the table is touched at 0), with it 600 kB. */
static const char *table_model = "op 100\nop 100\nop 100\nop 100\nop 100\n"
                                 "alloc 100000 -1 -1 0 1 2 3 4\n"
                                 "alloc 1000000 -1 -1 0@4KiB\n"
                                 "alloc 500000 2 3 2 3\n";

enum { TABLE = 1 };
enum placement { ON_DEVICE, MOVED, ON_HOST };

static enum placement placement_of(const plan *p, uint32_t x)
{
    for (size_t i = 0; i < p->nhost; i++)
        if (p->host[i] == x)
            return ON_HOST;
    for (size_t i = 0; i < p->n; i++)
        if (p->entries[i].alloc == x)
            return MOVED;
    return ON_DEVICE;
}

/* The table's placement and the step time with the link at gbps both ways and budget bytes. */
static void assert_choice(plan_kind kind, double gbps, uint64_t budget, enum placement want,
                          double step_us)
{
    char text[512];
    snprintf(text, sizeof text, "hw %g %g 1 0\n%s", gbps, gbps, table_model);
    plan_model m;
    parse(text, &m);
    plan p;
    plan_stats st;
    plan_opts o = {.host = true};
    plan_init(&p);
    assert_int_equal(plan_make_opts(&m, kind, budget, &o, &p, &st), PLAN_OK);
    if (placement_of(&p, TABLE) != want)
        fail_msg("%s at %g GB/s, budget %llu: table placed %d, want %d", plan_kind_name(kind), gbps,
                 (unsigned long long)budget, placement_of(&p, TABLE), want);
    assert_true(st.feasible);
    assert_near(st.step_us, step_us);
    assert_int_equal(plan_check(&m, &p, NULL, 0), PLAN_OK);
    plan_free(&p);
    plan_model_free(&m);
}

static void test_placement(void **state)
{
    (void)state;
    for (plan_kind k = PLAN_KIND_REACTIVE; k <= PLAN_KIND_SCHEDULED; k++) {
        /* room for everything: the table stays on the device */
        assert_choice(k, 1, 1600000, ON_DEVICE, 500);
        /* 1 GB/s: a move of the table takes 1000 us each way, 400 us of compute hide it; its one
           4 KiB read costs 4.096 us */
        assert_choice(k, 1, 1100000, ON_HOST, 504.096);
    }
    /* 1000 GB/s: a move takes 1 us and hides behind operation 1 in the scheduled plan, while the
       read would cost 0.004096 us; the reactive planner evicts when the activation is born and
       restores on the touch, stalling 1 us each way, so it keeps the table on the host */
    assert_choice(PLAN_KIND_SCHEDULED, 1000, 1100000, MOVED, 500);
    assert_choice(PLAN_KIND_REACTIVE, 1000, 1100000, ON_HOST, 500.004096);
    /* below the floor without host residency, only the host holds the budget */
    assert_choice(PLAN_KIND_SCHEDULED, 1000, 700000, ON_HOST, 500.004096);
    /* the floor and the bound with and without the option */
    plan_model m;
    char text[512];
    snprintf(text, sizeof text, "hw 1 1 1 0\n%s", table_model);
    parse(text, &m);
    uint64_t native, floor;
    plan_opts o = {.host = true};
    assert_int_equal(plan_peaks_opts(&m, NULL, &native, &floor), PLAN_OK);
    assert_int_equal(floor, 1100000);
    assert_int_equal(plan_peaks_opts(&m, &o, &native, &floor), PLAN_OK);
    assert_int_equal(native, 1600000);
    assert_int_equal(floor, 600000);
    double lb, lb_host;
    assert_int_equal(plan_lower_bound(&m, 700000, &lb), PLAN_OK);
    assert_true(isinf(lb));
    assert_int_equal(plan_lower_bound_opts(&m, 700000, &o, &lb_host), PLAN_OK);
    assert_near(lb_host, 4.096); /* the table's read: the only way to fit */
    assert_int_equal(plan_lower_bound_opts(&m, 500000, &o, &lb_host), PLAN_OK);
    assert_true(isinf(lb_host));
    plan_model_free(&m);
}

/* Brute force: on small random models with sparse reads, every host-resident subset of the
   allocations read sparsely, the rest planned with the same planner. The choice is never worse
   than the best by more than TOLERANCE of the step time, is exactly the best on most seeds, and
   the bound is never above the stall of any enumerated plan that holds the budget. */
#define SEEDS     150
#define TOLERANCE 0.10

typedef struct bf_result {
    bool exact;
    bool any_sparse;
} bf_result;

static bf_result brute_force(unsigned seed, plan_kind kind)
{
    char spec[160], msg[256];
    snprintf(spec, sizeof spec,
             "random:ops=8,allocs=6,maxbytes=1MiB,sparse=40,us=1000,h2d=1,d2h=1,seed=%u", seed);
    plan_model m;
    plan_model_init(&m);
    assert_int_equal(plan_generate(&m, spec, msg, sizeof msg), PLAN_OK);
    plan_ctx c;
    assert_int_equal(plan_ctx_init(&c, &m, NULL, 0), PLAN_OK);
    plan_opts o = {.host = true};
    uint64_t floor;
    assert_int_equal(plan_floor_ctx_opts(&c, &o, &floor), PLAN_OK);
    uint64_t budget = floor + (c.native_peak - floor) / 3;
    uint32_t sparse[8];
    size_t ns = 0;
    for (uint32_t x = 0; x < m.nallocs; x++)
        if (plan_alloc_sparse(&m, x))
            sparse[ns++] = x;
    plan p;
    plan_stats chosen, best, st;
    plan_init(&p);
    assert_int_equal(plan_make_ctx_opts(&c, kind, budget, &o, &p, &chosen), PLAN_OK);
    double lb;
    assert_int_equal(plan_bound_ctx_opts(&c, budget, &o, &lb), PLAN_OK);
    uint8_t on_host[8];
    for (size_t set = 0; set < ((size_t)1 << ns); set++) {
        memset(on_host, 0, sizeof on_host);
        for (size_t j = 0; j < ns; j++)
            on_host[sparse[j]] = (set >> j) & 1;
        assert_int_equal(plan_host_plan(&c, kind, budget, on_host, &p, &st), PLAN_OK);
        assert_int_equal(plan_check_ctx(&c, &p, NULL, NULL, 0), PLAN_OK);
        if (st.feasible && lb > st.stall_us + 1e-6)
            fail_msg("seed %u, set %zu: bound %.3f above a plan's stall %.3f", seed, set, lb,
                     st.stall_us);
        if (set == 0 || plan_stats_cmp(&st, &best) < 0)
            best = st;
    }
    if (best.feasible && !chosen.feasible)
        fail_msg("seed %u: the best holds the budget, the choice does not", seed);
    if (best.feasible && chosen.step_us > best.step_us * (1 + TOLERANCE))
        fail_msg("seed %u: chose %.3f us, the best is %.3f us", seed, chosen.step_us, best.step_us);
    bf_result r = {.exact = plan_stats_cmp(&chosen, &best) <= 0, .any_sparse = ns > 0};
    plan_free(&p);
    plan_ctx_free(&c);
    plan_model_free(&m);
    return r;
}

static void test_brute_force(void **state)
{
    (void)state;
    for (plan_kind k = PLAN_KIND_REACTIVE; k <= PLAN_KIND_SCHEDULED; k++) {
        unsigned exact = 0, with_sparse = 0;
        for (unsigned seed = 1; seed <= SEEDS; seed++) {
            bf_result r = brute_force(seed, k);
            exact += r.exact;
            with_sparse += r.any_sparse;
        }
        printf("# %s: the best on %u of %u seeds (%u with allocations read sparsely)\n",
               plan_kind_name(k), exact, SEEDS, with_sparse);
        assert_true(with_sparse >= SEEDS * 3 / 4); /* the generator makes them */
        assert_true(exact >= SEEDS * 9 / 10);
    }
}

/* Off (NULL or zeroed), the planners give exactly what plan_make gives, on a model with sparse
   reads too; on, a model without them gives exactly today's plan. */
static void assert_same(const plan *a, const plan_stats *sa, const plan *b, const plan_stats *sb)
{
    assert_memory_equal(sa, sb, sizeof(*sa));
    assert_int_equal(a->n, b->n);
    assert_int_equal(a->nhost, b->nhost);
    if (a->n)
        assert_memory_equal(a->entries, b->entries, a->n * sizeof(*a->entries));
}

static void test_option_off(void **state)
{
    (void)state;
    static const char *specs[] = {"random:ops=12,allocs=8,maxbytes=1MiB,sparse=50,us=1000,h2d=1",
                                  "transformer:layers=3", "unet:levels=3"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        plan_model m;
        char msg[256];
        plan_model_init(&m);
        assert_int_equal(plan_generate(&m, specs[i], msg, sizeof msg), PLAN_OK);
        uint64_t native, floor, n2, f2;
        assert_int_equal(plan_peaks(&m, &native, &floor), PLAN_OK);
        plan_opts off = {0}, on = {.host = true};
        uint64_t budget = floor + (native - floor) / 4;
        plan a, b;
        plan_stats sa, sb;
        plan_init(&a);
        plan_init(&b);
        assert_int_equal(plan_make(&m, PLAN_KIND_SCHEDULED, budget, &a, &sa), PLAN_OK);
        assert_int_equal(plan_make_opts(&m, PLAN_KIND_SCHEDULED, budget, &off, &b, &sb), PLAN_OK);
        assert_same(&a, &sa, &b, &sb);
        assert_int_equal(plan_make_opts(&m, PLAN_KIND_SCHEDULED, budget, NULL, &b, &sb), PLAN_OK);
        assert_same(&a, &sa, &b, &sb);
        assert_int_equal(plan_peaks_opts(&m, &off, &n2, &f2), PLAN_OK);
        assert_true(n2 == native && f2 == floor);
        double l1, l2;
        assert_int_equal(plan_lower_bound(&m, budget, &l1), PLAN_OK);
        assert_int_equal(plan_lower_bound_opts(&m, budget, &off, &l2), PLAN_OK);
        assert_true(l1 == l2 || (isinf(l1) && isinf(l2)));
        if (i > 0) { /* no reads: on changes nothing */
            assert_int_equal(plan_make_opts(&m, PLAN_KIND_SCHEDULED, budget, &on, &b, &sb),
                             PLAN_OK);
            assert_same(&a, &sa, &b, &sb);
            assert_int_equal(plan_peaks_opts(&m, &on, &n2, &f2), PLAN_OK);
            assert_true(n2 == native && f2 == floor);
        }
        plan_free(&a);
        plan_free(&b);
        plan_model_free(&m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sim_charge), cmocka_unit_test(test_check),
        cmocka_unit_test(test_placement),  cmocka_unit_test(test_brute_force),
        cmocka_unit_test(test_option_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
