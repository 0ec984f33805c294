/* tests/planner/test_plan_mover.c — the host's mover (planner/plan_mover.c): remaps placed one at
 * a time in the earliest idle stretch, and, with no remap time, predictions exactly those from
 * before the mover was modelled. The mover-bound step and the copies that do not wait for a
 * remap are golden timelines (tests/planner/golden/mover_bound.sim). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plan_internal.h"
#include "plan_test_model.h"

static double place(plan_mover *mv, double ready, double us)
{
    double start;
    assert_int_equal(plan_mover_place(mv, ready, us, &start), PLAN_OK);
    return start;
}

/* One remap at a time; a later one fills an idle stretch before an earlier one when it fits,
 * and takes the first stretch long enough otherwise. */
static void test_mover_first_fit(void **state)
{
    (void)state;
    plan_mover mv;
    plan_mover_init(&mv);
    assert_true(place(&mv, 0, 10) == 0);
    assert_true(place(&mv, 5, 10) == 10); /* behind the first: [0, 20) */
    assert_true(place(&mv, 30, 5) == 30); /* idle before it: [0, 20) [30, 35) */
    assert_true(place(&mv, 20, 5) == 20); /* fits the stretch [20, 30) */
    assert_true(place(&mv, 22, 6) == 35); /* [25, 30) too short: after [30, 35) */
    assert_int_equal(mv.n - mv.head, 2);  /* [0, 25) [30, 41), touching ones merged */
    assert_true(place(&mv, 25, 5) == 25); /* exactly fills [25, 30) */
    assert_int_equal(mv.n - mv.head, 1);  /* [0, 41) */
    assert_true(plan_mover_backlog(&mv, 40) == 1);
    assert_true(place(&mv, 3, 0) == 3); /* no time: starts at once, occupies nothing */
    assert_int_equal(mv.n - mv.head, 1);
    plan_mover_prune(&mv, 41);
    assert_true(plan_mover_backlog(&mv, 0) == 0);
    assert_true(place(&mv, 41, 2) == 41);
    plan_mover_free(&mv);
}

/* What the planner predicted for train_sim's step with REMAP_US 0 at commit c77a107, before the
 * mover was modelled: at 50% and 75% of the native peak, on the duplex and the shared link, the
 * reactive and scheduled step times and the lower bound. */
typedef struct recorded {
    int duplex, pct;
    double reactive, scheduled, bound;
} recorded;

static void test_remap_zero_unchanged(void **state)
{
    (void)state;
    static const recorded want[] = {
        {1, 50, 98810.812213449157, 70334.256390848197, 50949.798845812154},
        {1, 75, 57203.316533448953, 33101.755248785834, 15342.490676376536},
        {0, 50, 98810.812213449157, 86096.4508231738, 68125.110826550939},
        {0, 75, 57203.316533448953, 43216.571091586622, 26349.106826550942},
    };
    plan_model m;
    load_train_sim(&m);
    m.hw.remap_us = 0;
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        m.hw.duplex = want[i].duplex;
        plan_ctx c;
        assert_int_equal(plan_ctx_init(&c, &m, NULL, 0), PLAN_OK);
        uint64_t budget = c.native_peak / 100 * (uint64_t)want[i].pct;
        double got[3], exp[3] = {want[i].reactive, want[i].scheduled, want[i].bound};
        for (int k = PLAN_KIND_REACTIVE; k <= PLAN_KIND_SCHEDULED; k++) {
            plan p;
            plan_stats st;
            plan_init(&p);
            assert_int_equal(plan_make_ctx(&c, (plan_kind)k, budget, &p, &st), PLAN_OK);
            got[k - PLAN_KIND_REACTIVE] = st.step_us;
            plan_free(&p);
        }
        assert_int_equal(plan_bound_ctx(&c, budget, &got[2]), PLAN_OK);
        for (int k = 0; k < 3; k++)
            if (fabs(got[k] - exp[k]) > 1e-12 * exp[k])
                fail_msg("duplex %d at %d%%: %s %.17g, recorded %.17g", want[i].duplex, want[i].pct,
                         k == 2 ? "bound"
                         : k    ? "scheduled"
                                : "reactive",
                         got[k], exp[k]);
        plan_ctx_free(&c);
    }
    plan_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mover_first_fit),
        cmocka_unit_test(test_remap_zero_unchanged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
