/* planner/plan_make.c — the planners' front door and the memory-time curve (proposals). */
#include "plan_internal.h"

plan_err plan_make_ctx(const plan_ctx *c, plan_kind kind, uint64_t budget, plan *out,
                       plan_stats *st)
{
    plan_err e;
    out->n = 0;
    out->nhost = 0;
    switch (kind) {
    case PLAN_KIND_NONE:
        e = PLAN_OK;
        break;
    case PLAN_KIND_REACTIVE:
        e = plan_reactive(c, budget, out);
        break;
    case PLAN_KIND_SCHEDULED:
        e = plan_scheduled(c, budget, out);
        break;
    case PLAN_KIND_EXACT:
        e = plan_exact(c, budget, out);
        break;
    default:
        return PLAN_ERR_INVALID;
    }
    if (!e)
        e = plan_sim_run(c, out, budget, st, NULL);
    return e;
}

plan_err plan_make(const plan_model *m, plan_kind kind, uint64_t budget, plan *out, plan_stats *st)
{
    return plan_make_opts(m, kind, budget, NULL, out, st); /* no options: plan_make_ctx's plan */
}

plan_err plan_proposals(const plan_model *m, plan_kind kind, size_t n, plan_proposal *out)
{
    return plan_proposals_opts(m, kind, n, NULL, out);
}

plan_err plan_proposals_opts(const plan_model *m, plan_kind kind, size_t n, const plan_opts *o,
                             plan_proposal *out)
{
    if (n == 0)
        return PLAN_ERR_INVALID;
    plan_ctx c;
    plan_err e = plan_ctx_init(&c, m, NULL, 0);
    if (e)
        return e;
    plan p;
    plan_init(&p);
    uint64_t hi = c.native_peak, lo;
    e = plan_floor_ctx_opts(&c, o, &lo);
    uint64_t span = hi - lo;
    for (size_t i = 0; i < n && !e; i++) {
        /* budget_i = hi - span * i / (n - 1), computed without overflow */
        uint64_t step = n > 1 ? span / (n - 1) : 0, rem = n > 1 ? span % (n - 1) : 0;
        uint64_t cut = step * i + (n > 1 ? (rem * i) / (n - 1) : 0);
        out[i].budget_bytes = hi - cut;
        e = plan_make_ctx_opts(&c, kind, out[i].budget_bytes, o, &p, &out[i].stats);
        if (!e)
            e = plan_bound_ctx_opts(&c, out[i].budget_bytes, o, &out[i].lower_bound_us);
    }
    plan_free(&p);
    plan_ctx_free(&c);
    return e;
}
