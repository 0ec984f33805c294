/* planner/plan_pin.c — a model with the allocations a plan may not move touched throughout
 * their lives (plan.h, plan_model_pin). */
#include "plan.h"

#include <stdlib.h>

/* Contract in plan.h. */
plan_err plan_model_pin(const plan_model *m, const bool *movable, plan_model *out)
{
    out->hw = m->hw;
    int32_t *all = malloc(m->nops * sizeof *all + 1);
    plan_err e = all ? PLAN_OK : PLAN_ERR_NOMEM;
    for (size_t i = 0; i < m->nops && !e; i++) {
        all[i] = (int32_t)i;
        e = plan_model_add_op(out, m->ops[i].dur_us, m->ops[i].stream);
    }
    for (size_t i = 0; i < m->nallocs && !e; i++) {
        const plan_alloc *a = &m->allocs[i];
        if (movable[i]) {
            e = plan_model_add_alloc(out, a->bytes, a->birth, a->death, m->touches + a->touch_first,
                                     a->ntouch);
            continue;
        }
        int32_t lo = a->birth == PLAN_NO_OP ? 0 : a->birth;
        int32_t hi = a->death == PLAN_NO_OP ? (int32_t)m->nops - 1 : a->death;
        e = plan_model_add_alloc(out, a->bytes, a->birth, a->death, all + lo,
                                 hi >= lo ? (size_t)(hi - lo + 1) : 0);
    }
    for (size_t i = 0; i < m->ncopies && !e; i++)
        e = plan_model_add_copy(out, m->copies[i].after, m->copies[i].to_device,
                                m->copies[i].bytes);
    free(all);
    return e;
}
