/* plan_test_model.h — the recorded train_sim step the planner tests share (test_plan_bound.c,
 * test_plan_mover.c): one loader, so every test reads the model the same way. */
#ifndef PLAN_TEST_MODEL_H
#define PLAN_TEST_MODEL_H

#include "plan.h"

#define TRAIN_SIM_MODEL "tests/planner/models/train_sim_step.model"

/* Loads train_sim's recorded step into m (the test fails with the parser's message if it
   cannot). */
static void load_train_sim(plan_model *m)
{
    FILE *f = fopen(TRAIN_SIM_MODEL, "rb");
    assert_non_null(f);
    static char buf[1 << 16];
    size_t len = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    assert_true(len > 0 && len < sizeof(buf));
    char msg[256];
    plan_model_init(m);
    if (plan_model_parse(buf, len, TRAIN_SIM_MODEL, m, msg, sizeof(msg)))
        fail_msg("%s", msg);
}

#endif
