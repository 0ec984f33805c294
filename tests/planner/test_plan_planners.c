/* tests/planner/test_plan_planners.c — properties of the planners on hand-made and generated
 * models: the reactive choice, feasibility at every budget from the floor up, the maximal plan
 * at the floor, proposals, and the errors of the front door. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "plan_internal.h"

static void load(plan_model *m, const char *text)
{
    char msg[256];
    plan_model_init(m);
    if (plan_model_parse(text, strlen(text), "t", m, msg, sizeof(msg)))
        fail_msg("%s", msg);
}

static void generate(plan_model *m, const char *spec)
{
    char msg[256];
    plan_model_init(m);
    if (plan_generate(m, spec, msg, sizeof(msg)))
        fail_msg("%s: %s", spec, msg);
}

/* At op 2 the budget forces one eviction: B, used again later than A, goes; op 2 waits for it
 * (0.4 us) and op 4 for B's copy back (0.4 us). */
static void test_reactive_furthest_next_use(void **state)
{
    (void)state;
    plan_model m;
    load(&m, "hw 1 1 1 0\nop 10\nop 10\nop 10\nop 10\nop 10\n"
             "alloc 400 -1 -1 0 3\nalloc 400 -1 -1 0 4\nalloc 300 2 2 2\n");
    plan p;
    plan_stats st;
    plan_init(&p);
    assert_int_equal(plan_make(&m, PLAN_KIND_REACTIVE, 800, &p, &st), PLAN_OK);
    assert_int_equal(p.n, 1);
    plan_entry want = {1, 1, 4, 2, 4};
    assert_memory_equal(&p.entries[0], &want, sizeof(want));
    assert_true(st.feasible);
    assert_int_equal(st.peak_bytes, 800);
    assert_true(fabs(st.stall_us - 0.8) < 1e-9);
    assert_int_equal(st.bytes_to_host, 400);
    plan_free(&p);
    /* with room for everything, nothing moves */
    plan_init(&p);
    assert_int_equal(plan_make(&m, PLAN_KIND_REACTIVE, 1100, &p, &st), PLAN_OK);
    assert_int_equal(p.n, 0);
    assert_int_equal(st.peak_bytes, 1100);
    plan_free(&p);
    plan_model_free(&m);
}

static void test_none_is_native(void **state)
{
    (void)state;
    plan_model m;
    generate(&m, "unet:levels=3");
    uint64_t native, floor;
    assert_int_equal(plan_peaks(&m, &native, &floor), PLAN_OK);
    assert_true(floor < native);
    plan p;
    plan_stats st;
    plan_init(&p);
    assert_int_equal(plan_make(&m, PLAN_KIND_NONE, native / 2, &p, &st), PLAN_OK);
    assert_int_equal(p.n, 0);
    assert_int_equal(st.peak_bytes, native);
    assert_false(st.feasible);
    assert_true(st.stall_us == 0 && st.step_us == st.compute_us);
    assert_int_equal(st.bytes_to_host + st.bytes_to_device, 0);
    plan_free(&p);
    plan_model_free(&m);
}

/* The maximal plan reaches the floor exactly. */
static void test_maximal_reaches_floor(void **state)
{
    (void)state;
    static const char *const specs[] = {"transformer:layers=4", "unet:levels=3", "optim:params=20",
                                        "random:ops=40,allocs=30,seed=4",
                                        "random:ops=40,allocs=30,seed=5,duplex=0,remap=3"};
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        plan_model m;
        plan_ctx c;
        generate(&m, specs[i]);
        assert_int_equal(plan_ctx_init(&c, &m, NULL, 0), PLAN_OK);
        plan p;
        plan_stats st;
        plan_init(&p);
        assert_int_equal(plan_maximal(&c, &p), PLAN_OK);
        assert_int_equal(p.n, c.ngaps);
        assert_int_equal(plan_sim_run(&c, &p, c.floor_peak, &st, NULL), PLAN_OK);
        if (st.peak_bytes != c.floor_peak)
            fail_msg("%s: maximal peak %llu, floor %llu", specs[i],
                     (unsigned long long)st.peak_bytes, (unsigned long long)c.floor_peak);
        plan_free(&p);
        plan_ctx_free(&c);
        plan_model_free(&m);
    }
}

/* Reactive and scheduled hold every budget from the floor to the native peak, and none below. */
static void test_feasible_from_floor(void **state)
{
    (void)state;
    static const char *const specs[] = {"transformer:layers=8", "unet:levels=4",
                                        "optim:params=60,layers=6",
                                        "random:ops=60,allocs=40,seed=11,cyclic=40",
                                        "random:ops=60,allocs=40,seed=12,duplex=0,remap=2"};
    unsigned cases = 0;
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        plan_model m;
        plan_ctx c;
        generate(&m, specs[i]);
        assert_int_equal(plan_ctx_init(&c, &m, NULL, 0), PLAN_OK);
        for (int pct = -5; pct <= 100; pct += 15) {
            uint64_t span = c.native_peak - c.floor_peak;
            uint64_t b = pct < 0 ? c.floor_peak - 1 : c.floor_peak + span / 100 * (uint64_t)pct;
            for (int k = PLAN_KIND_REACTIVE; k <= PLAN_KIND_SCHEDULED; k++) {
                plan p;
                plan_stats st;
                plan_init(&p);
                assert_int_equal(plan_make_ctx(&c, (plan_kind)k, b, &p, &st), PLAN_OK);
                if (st.feasible != (pct >= 0))
                    fail_msg("%s %s at %d%%: feasible %d, peak %llu, budget %llu", specs[i],
                             plan_kind_name((plan_kind)k), pct, st.feasible,
                             (unsigned long long)st.peak_bytes, (unsigned long long)b);
                assert_true(st.steps >= 2);
                plan_free(&p);
                cases++;
            }
        }
        plan_ctx_free(&c);
        plan_model_free(&m);
    }
    assert_int_equal(cases, 5 * 8 * 2);
}

/* Found by the fuzzer: operation 1 takes no time, so the eviction of an allocation dying at its
 * end and op 1's births happen at the same instant. The births count first (an operation of
 * zero duration still holds its allocations), unless op 1 waited for that eviction: the planners
 * must hold the budget, and the bound (1.17 us: 117 bytes to move between op 0 and op 1 at
 * 100 B/us) must stay below their stalls. */
static void test_zero_duration_op(void **state)
{
    (void)state;
    plan_model m;
    load(&m, "hw 1.1 0.1 1 0\nop 3\nop 0\nop 10\nop 1\nop 5\nop 2\nop 3\nop 3\nop 7\nop 9\n"
             "alloc 130 8 -1 8\nalloc 263 5 9 7 8\nalloc 498 1 7 2\nalloc 1704 0 5 0 4 5\n"
             "alloc 131 -1 1 0\n");
    double lb;
    assert_int_equal(plan_lower_bound(&m, 2216, &lb), PLAN_OK);
    assert_true(fabs(lb - 1.17) < 1e-9);
    for (int k = PLAN_KIND_REACTIVE; k <= PLAN_KIND_EXACT; k++) {
        plan p;
        plan_stats st;
        plan_init(&p);
        assert_int_equal(plan_make(&m, (plan_kind)k, 2216, &p, &st), PLAN_OK);
        assert_true(st.feasible);
        assert_true(st.stall_us >= lb);
        plan_free(&p);
    }
    /* allocation 4 sent to host after op 0: without a wait op 1 (instant) holds 1704 + 131 +
     * 498 bytes; waiting at op 1, the copy's release comes before op 1's births: 1704 + 498 */
    plan_ctx c;
    assert_int_equal(plan_ctx_init(&c, &m, NULL, 0), PLAN_OK);
    plan_sim_op ops[10];
    plan_sim_ent ents[1];
    plan_trace tr = {ops, ents, 0};
    plan p;
    plan_stats st;
    plan_init(&p);
    plan_push(&p, (plan_entry){4, 0, PLAN_NO_OP, PLAN_NO_OP, PLAN_NO_OP});
    assert_int_equal(plan_sim_run(&c, &p, 2216, &st, &tr), PLAN_OK);
    assert_int_equal(ops[1].level, 2333);
    assert_true(ops[1].start == ops[0].end); /* no stall */
    p.entries[0].wait_at = 1;
    assert_int_equal(plan_sim_run(&c, &p, 2216, &st, &tr), PLAN_OK);
    assert_int_equal(ops[1].level, 1704 + 131); /* before the barrier: op 0's allocations */
    assert_true(fabs(ops[1].start - ops[0].end - 1.31) < 1e-9); /* 131 B at 100 B/us */
    plan_free(&p);
    plan_ctx_free(&c);
    plan_model_free(&m);
}

static void test_proposals(void **state)
{
    (void)state;
    plan_model m;
    generate(&m, "transformer:layers=6");
    uint64_t native, floor;
    assert_int_equal(plan_peaks(&m, &native, &floor), PLAN_OK);
    plan_proposal pr[6];
    assert_int_equal(plan_proposals(&m, PLAN_KIND_SCHEDULED, 6, pr), PLAN_OK);
    assert_int_equal(pr[0].budget_bytes, native);
    assert_int_equal(pr[5].budget_bytes, floor);
    assert_true(pr[0].stats.stall_us == 0 && pr[0].lower_bound_us == 0);
    for (int i = 0; i < 6; i++) {
        assert_true(pr[i].stats.feasible);
        assert_true(pr[i].stats.peak_bytes <= pr[i].budget_bytes);
        assert_true(pr[i].lower_bound_us <= pr[i].stats.stall_us + 1e-6);
        if (i) {
            assert_true(pr[i].budget_bytes < pr[i - 1].budget_bytes);
            uint64_t step = (native - floor) / 5;
            assert_true(pr[i - 1].budget_bytes - pr[i].budget_bytes >= step);
            assert_true(pr[i - 1].budget_bytes - pr[i].budget_bytes <= step + 1);
        }
    }
    assert_true(pr[5].stats.stall_us > pr[1].stats.stall_us);
    assert_int_equal(plan_proposals(&m, PLAN_KIND_SCHEDULED, 0, pr), PLAN_ERR_INVALID);
    assert_int_equal(plan_proposals(&m, PLAN_KIND_NONE, 1, pr), PLAN_OK);
    assert_int_equal(pr[0].budget_bytes, native);
    plan_model_free(&m);
}

/* With link_both the lower bound (full rates) stays below the simulated stall of every plan, on
   generated models, for the scheduled and the reactive planners. */
static void test_link_both_bound_holds(void **state)
{
    (void)state;
    static const char *const specs[] = {"transformer:layers=4", "unet:levels=3",
                                        "random:ops=12,allocs=8,seed=3",
                                        "random:ops=20,allocs=12,seed=11"};
    static const double slow[][2] = {{0.44, 1.0}, {0.3, 0.5}, {1.0, 0.2}};
    static const plan_kind kinds[] = {PLAN_KIND_SCHEDULED, PLAN_KIND_REACTIVE};
    unsigned checked = 0;
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        for (size_t k = 0; k < sizeof(slow) / sizeof(slow[0]); k++) {
            plan_model m;
            generate(&m, specs[i]);
            m.hw.both_h2d_gbps = m.hw.h2d_gbps * slow[k][0];
            m.hw.both_d2h_gbps = m.hw.d2h_gbps * slow[k][1];
            for (size_t j = 0; j < sizeof(kinds) / sizeof(kinds[0]); j++) {
                plan_proposal pr[4];
                assert_int_equal(plan_proposals(&m, kinds[j], 4, pr), PLAN_OK);
                for (int q = 0; q < 4; q++) {
                    if (!pr[q].stats.feasible)
                        continue;
                    if (!(pr[q].lower_bound_us <= pr[q].stats.stall_us + 1e-6))
                        fail_msg("%s link_both %g,%g kind %d budget %" PRIu64
                                 ": bound %.6f above stall %.6f",
                                 specs[i], m.hw.both_h2d_gbps, m.hw.both_d2h_gbps, (int)kinds[j],
                                 pr[q].budget_bytes, pr[q].lower_bound_us, pr[q].stats.stall_us);
                    checked++;
                }
            }
            plan_model_free(&m);
        }
    }
    assert_true(checked >= 30);
}

/* The scheduled planner makes two plans (from its own choice of gaps, and from the reactive
 * plan made canonical), improves both and keeps the better: on these models, where the two
 * differ, it never stalls more than the reactive planner (keeping the worse one does, by up to
 * 6.5 us of 4.7). */
static void test_scheduled_keeps_the_better_plan(void **state)
{
    (void)state;
    static const char *const specs[] = {"random:ops=12,allocs=12,seed=22,duplex=0,remap=1",
                                        "random:ops=12,allocs=12,seed=30,duplex=0,remap=0",
                                        "random:ops=12,allocs=12,seed=37,duplex=1,remap=1",
                                        "random:ops=12,allocs=12,seed=90,duplex=0,remap=0"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        plan_model m;
        generate(&m, specs[i]);
        uint64_t peak, floor;
        assert_int_equal(plan_peaks(&m, &peak, &floor), PLAN_OK);
        for (int pct = 10; pct <= 90; pct += 40) {
            uint64_t budget = floor + (peak - floor) * (uint64_t)pct / 100;
            plan p;
            plan_stats reactive, scheduled;
            plan_init(&p);
            assert_int_equal(plan_make(&m, PLAN_KIND_REACTIVE, budget, &p, &reactive), PLAN_OK);
            plan_free(&p);
            plan_init(&p);
            assert_int_equal(plan_make(&m, PLAN_KIND_SCHEDULED, budget, &p, &scheduled), PLAN_OK);
            plan_free(&p);
            assert_true(reactive.feasible);
            assert_true(scheduled.feasible);
            if (scheduled.stall_us > reactive.stall_us + 1e-9)
                fail_msg("%s at %" PRIu64 " B: scheduled stalls %.3f us, reactive %.3f us",
                         specs[i], budget, scheduled.stall_us, reactive.stall_us);
        }
        plan_model_free(&m);
    }
}

static void test_errors(void **state)
{
    (void)state;
    plan_model m;
    plan p;
    plan_stats st;
    plan_init(&p);
    generate(&m, "transformer:layers=24");
    assert_int_equal(plan_make(&m, PLAN_KIND_EXACT, 1000, &p, &st), PLAN_ERR_LIMIT);
    assert_int_equal(plan_make(&m, (plan_kind)9, 1000, &p, &st), PLAN_ERR_INVALID);
    m.ops[3].dur_us = -1;
    assert_int_equal(plan_make(&m, PLAN_KIND_NONE, 1000, &p, &st), PLAN_ERR_INVALID);
    double lb;
    assert_int_equal(plan_lower_bound(&m, 1000, &lb), PLAN_ERR_INVALID);
    plan_free(&p);
    plan_model_free(&m);
    plan_kind k;
    assert_int_equal(plan_kind_parse("exact", &k), PLAN_OK);
    assert_int_equal(k, PLAN_KIND_EXACT);
    assert_int_equal(plan_kind_parse("greedy", &k), PLAN_ERR_INVALID);
    assert_null(plan_kind_name((plan_kind)7));
    assert_string_equal(plan_strerror(PLAN_ERR_LIMIT), "problem too large");
}

/* The configuration's `planner` option names planner kinds: libshim maps its choice to a
   plan_kind by name (shim_main.c), so every choice must parse as one, and there must be some. */
static void test_conf_planner_choices_are_kinds(void **state)
{
    (void)state;
    char name[32];
    int n = 0;
    for (int i = 0; conf_option_choice(CONF_PLANNER, i, name, sizeof name) > 0; i++, n++) {
        plan_kind k;
        assert_int_equal(plan_kind_parse(name, &k), PLAN_OK);
        assert_string_equal(plan_kind_name(k), name);
        assert_int_not_equal(k, PLAN_KIND_NONE);
    }
    assert_true(n >= 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reactive_furthest_next_use),
        cmocka_unit_test(test_none_is_native),
        cmocka_unit_test(test_maximal_reaches_floor),
        cmocka_unit_test(test_feasible_from_floor),
        cmocka_unit_test(test_zero_duration_op),
        cmocka_unit_test(test_proposals),
        cmocka_unit_test(test_link_both_bound_holds),
        cmocka_unit_test(test_scheduled_keeps_the_better_plan),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_conf_planner_choices_are_kinds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
