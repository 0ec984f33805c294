/* tests/planner/fuzz_plan_model.c — libFuzzer target for the model reader: any bytes either
 * parse or give a FILE:LINE message; a parsed model writes back to text that parses to the same
 * model; small parsed models go through the simulator, the planners and the bound. Any
 * inconsistency aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_or_abort(const plan_model *a, const plan_model *b)
{
    if (memcmp(&a->hw, &b->hw, sizeof(a->hw)) || a->nops != b->nops || a->nallocs != b->nallocs ||
        a->ntouches != b->ntouches)
        abort();
    for (size_t i = 0; i < a->nops; i++)
        if (a->ops[i].dur_us != b->ops[i].dur_us || a->ops[i].stream != b->ops[i].stream)
            abort();
    if ((a->nallocs && memcmp(a->allocs, b->allocs, a->nallocs * sizeof(*a->allocs))) ||
        (a->ntouches && memcmp(a->touches, b->touches, a->ntouches * sizeof(*a->touches))))
        abort();
}

static void round_trip(const plan_model *m)
{
    char *text, msg[256];
    size_t len;
    if (plan_model_write(m, &text, &len))
        return;
    plan_model back;
    plan_model_init(&back);
    if (plan_model_parse(text, len, "written", &back, msg, sizeof(msg)))
        abort();
    same_or_abort(m, &back);
    plan_model_free(&back);
    free(text);
}

/* Planners on small models: every plan must check, simulate, and stay above the bound. */
static void plan_small(const plan_model *m)
{
    uint64_t native, floor;
    if (m->nops > 12 || m->nallocs > 6 || plan_peaks(m, &native, &floor))
        return;
    uint64_t budget = floor + (native - floor) / 2;
    double lb;
    if (plan_lower_bound(m, budget, &lb))
        abort();
    for (int k = PLAN_KIND_NONE; k <= PLAN_KIND_SCHEDULED; k++) {
        plan p;
        plan_stats st;
        plan_init(&p);
        if (plan_make(m, (plan_kind)k, budget, &p, &st) || plan_check(m, &p, NULL, 0))
            abort();
        if (k != PLAN_KIND_NONE && !st.feasible)
            abort(); /* budget >= floor: both planners must hold it */
        if (st.feasible && lb > st.stall_us + 1e-6 * (1.0 + st.step_us))
            abort();
        plan_free(&p);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    plan_model m;
    char msg[256];
    plan_model_init(&m);
    plan_err e = plan_model_parse((const char *)data, size, "fuzz", &m, msg, sizeof(msg));
    if (e == PLAN_ERR_PARSE && strncmp(msg, "fuzz:", 5) != 0)
        abort();
    if (e == PLAN_OK) {
        round_trip(&m);
        plan_small(&m);
    }
    plan_model_free(&m);
    return 0;
}
