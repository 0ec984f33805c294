/* report_trace_figures.c — the figures of a loaded trace (shim_trace_figures.h): the records fed
 * to the arithmetic libshim's exit line was fed, in the order of their times, so that every
 * report prints what the exit line printed. */
#include "report_trace.h"

#include "shim_trace.h"

#include <string.h>

/* Contract in report_trace.h. */
void report_figures_make(const report_trace *t, const report_stats *s, struct shim_figures *f)
{
    const report_residency *x = &s->device_residency[report_device_slot(s->primary_device)];
    memset(f, 0, sizeof *f);
    f->managed = s->budgets > 0;
    f->have_resident_peak = t->have_resident_peak;
    f->budget = s->budgets ? s->budget_bytes : 0;
    f->resident_peak = t->resident_peak_bytes;
    f->alloc_peak = s->peak_device_bytes;
    f->simulated = shim_fig_simulated(t->device_name);
    f->bytes_to_host = x->moves.bytes_to_host;
    f->bytes_to_device = x->moves.bytes_to_device;
    f->stall_ns = x->stall_ns;
    for (size_t i = 0; i < t->n; i++) { /* sorted by time, then file order */
        const report_rec *r = &t->recs[i];
        if (r->kind == SHIM_TRACE_STEP) {
            shim_fig_mark(&f->steps, r->a, r->t_ns);
        } else if (r->kind == SHIM_TRACE_PLAN) {
            const report_plan *p = &t->plans[r->a];
            shim_fig_plan(&f->steps, p->native_us, p->predicted_us, p->stall_us, p->bound_us);
        } else if (r->kind == SHIM_TRACE_PLAN_STEP) {
            const report_plan_step *ps = &t->plan_steps[r->a];
            shim_fig_plan_step(&f->steps, ps->step, ps->bytes_to_host, ps->bytes_to_device,
                               ps->stall_ns);
        } else if (r->kind == SHIM_TRACE_TRANSITION) {
            f->have_moves = 1;
            shim_fig_moves_transition(&f->moves, r->sub3, r->sub, r->sub2);
        }
    }
}
