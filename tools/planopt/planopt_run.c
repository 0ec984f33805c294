/* planopt_run.c — the planning the planner's options ask for (a budget, the memory-time curve)
 * and the figures both tools print of it in the same form. */
#include "planopt.h"

#include <math.h>
#include <stdlib.h>

#define U(x) ((unsigned long long)(x))

/* Contract in planopt.h. */
plan_err planopt_plan(const planopt *o, const plan_model *m, const plan_opts *po, uint64_t peak,
                      bool at_peak, planopt_run *r)
{
    *r = (planopt_run){0};
    plan_init(&r->p);
    plan_err e = PLAN_OK;
    if (o->budget || at_peak) {
        r->budget = planopt_budget_bytes(o, peak);
        e = plan_make_opts(m, o->kind, r->budget, po, &r->p, &r->st);
        if (!e)
            e = plan_lower_bound_opts(m, r->budget, po, &r->lb);
        r->planned = !e;
    }
    if (!e && o->proposals) {
        r->props = calloc(o->proposals, sizeof *r->props);
        if (!r->props)
            return PLAN_ERR_NOMEM;
        e = plan_proposals_opts(m, o->kind, o->proposals, po, r->props);
        r->nprops = e ? 0 : o->proposals;
    }
    return e;
}

/* Contract in planopt.h. */
void planopt_run_free(planopt_run *r)
{
    plan_free(&r->p);
    free(r->props);
    *r = (planopt_run){0};
}

/* Contract in planopt.h. */
void planopt_put_us(FILE *out, double us, bool json)
{
    if (!isfinite(us))
        fputs(json ? "null" : "inf", out);
    else
        fprintf(out, "%.3f", us);
}

/* Contract in planopt.h. */
void planopt_proposals_text(FILE *out, const planopt_run *r)
{
    if (r->nprops)
        fputs("proposals: budget_bytes peak_bytes step_us stall_us lower_bound_us feasible\n", out);
    for (size_t i = 0; i < r->nprops; i++) {
        const plan_proposal *pp = &r->props[i];
        fprintf(out, "proposal %llu %llu ", U(pp->budget_bytes), U(pp->stats.peak_bytes));
        planopt_put_us(out, pp->stats.step_us, false);
        fputc(' ', out);
        planopt_put_us(out, pp->stats.stall_us, false);
        fputc(' ', out);
        planopt_put_us(out, pp->lower_bound_us, false);
        fprintf(out, " %s\n", pp->stats.feasible ? "yes" : "no");
    }
}

/* Contract in planopt.h. */
void planopt_proposal_json(FILE *out, const plan_proposal *pp)
{
    const plan_stats *st = &pp->stats;
    fprintf(out, "\"budget_bytes\": %llu, \"feasible\": %s, \"peak_bytes\": %llu, \"step_us\": ",
            U(pp->budget_bytes), st->feasible ? "true" : "false", U(st->peak_bytes));
    planopt_put_us(out, st->step_us, true);
    fputs(", \"stall_us\": ", out);
    planopt_put_us(out, st->stall_us, true);
    fprintf(out, ", \"bytes_to_host\": %llu, \"bytes_to_device\": %llu, \"lower_bound_us\": ",
            U(st->bytes_to_host), U(st->bytes_to_device));
    planopt_put_us(out, pp->lower_bound_us, true);
}
