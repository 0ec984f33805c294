/* report_summary_plan.c — the plan section of `shim-report summary`: each in-process plan
 * libshim installed (its prediction for one step) and, for every step with a plan_step record,
 * what was done in it next to that prediction and the step's wall time (format 1.3 on). */
#include "report.h"

#include "base_order.h"

#include <math.h>
#include <stdlib.h>

#define U(x) ((unsigned long long)(x))

typedef report_plan_row row;

static int by_first_seq(const void *pa, const void *pb)
{
    const row *a = pa, *b = pb;
    return BASE_CMP_THEN(a->ps->first_seq, b->ps->first_seq, BASE_CMP(a->ps->step, b->ps->step));
}

/* The plan in force when ps was recorded: the latest plan recorded at or before it. */
static size_t plan_of(const report_trace *t, const report_plan_step *ps)
{
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < t->nplans; i++)
        if (t->plans[i].t_ns <= ps->t_ns &&
            (best == SIZE_MAX || t->plans[i].t_ns >= t->plans[best].t_ns))
            best = i;
    return best;
}

static const report_step *step_of(const report_stats *s, const report_plan_step *ps)
{
    for (size_t i = 0; i < s->nsteps; i++)
        if (s->steps[i].step == ps->step && s->steps[i].first_seq == ps->first_seq)
            return &s->steps[i];
    return NULL;
}

/* The step numbered `step`, or NULL. */
static const report_step *step_numbered(const report_stats *s, uint64_t step)
{
    for (size_t i = 0; i < s->nsteps; i++)
        if (s->steps[i].step == step && !s->steps[i].summary)
            return &s->steps[i];
    return NULL;
}

/* Contract in report.h. */
report_plan_row *report_plan_rows(const report_trace *t, const report_stats *s)
{
    row *v = t->nplan_steps ? malloc(t->nplan_steps * sizeof *v) : NULL;
    for (size_t i = 0; v && i < t->nplan_steps; i++) {
        const report_plan_step *ps = &t->plan_steps[i];
        const report_step *before = ps->step ? step_numbered(s, ps->step - 1) : NULL;
        v[i] = (row){ps, plan_of(t, ps), step_of(s, ps), before};
    }
    if (v)
        qsort(v, t->nplan_steps, sizeof *v, by_first_seq);
    return v;
}

/* Contract in report.h. */
double report_plan_row_wall_us(const report_plan_row *r)
{
    if (!r->step || !r->before || r->step->t_mark < r->before->t_mark)
        return -1.0;
    return (double)(r->step->t_mark - r->before->t_mark) / 1e3;
}

static void text_plans(FILE *out, const report_trace *t)
{
    fprintf(out,
            "\nplans (the planner's prediction for one step, in its model's time):\n  %4s %10s "
            "%10s %8s %14s %12s %12s %12s %12s %14s %15s %9s %10s %8s\n",
            "plan", "first_seq", "model_step", "step_len", "budget_bytes", "predicted_us",
            "stall_us", "bound_us", "native_us", "bytes_to_host", "bytes_to_device", "evictions",
            "prefetches", "feasible");
    for (size_t i = 0; i < t->nplans; i++) {
        const report_plan *p = &t->plans[i];
        fprintf(out,
                "  %4zu %10llu %10llu %8llu %14llu %12.3f %12.3f %12.3f %12.3f %14llu %15llu %9llu "
                "%10llu %8s\n",
                i, U(p->first_seq), U(p->model_step), U(p->step_len), U(p->budget_bytes),
                p->predicted_us, p->stall_us, p->bound_us, p->native_us, U(p->bytes_to_host),
                U(p->bytes_to_device), U(p->evictions), U(p->prefetches),
                p->feasible ? "yes" : "no");
    }
}

static void text_row(FILE *out, const report_trace *t, const row *r)
{
    const report_plan_step *ps = r->ps;
    const report_plan *p = r->plan == SIZE_MAX ? NULL : &t->plans[r->plan];
    fprintf(out, "  %6llu ", U(ps->step));
    if (p)
        fprintf(out, "%4zu ", r->plan);
    else
        fprintf(out, "%4s ", "-");
    double wall = report_plan_row_wall_us(r);
    if (wall >= 0)
        fprintf(out, "%12.3f ", wall);
    else
        fprintf(out, "%12s ", "-");
    if (p)
        fprintf(out, "%12.3f ", p->predicted_us);
    else
        fprintf(out, "%12s ", "-");
    fprintf(out, "%9llu %10llu %7llu %10llu %8llu %14llu %15llu ", U(ps->evictions),
            U(ps->prefetches), U(ps->missing), U(ps->departures), U(ps->reactive_evictions),
            U(ps->bytes_to_host), U(ps->bytes_to_device));
    if (p)
        fprintf(out, "%17llu %19llu ", U(p->bytes_to_host), U(p->bytes_to_device));
    else
        fprintf(out, "%17s %19s ", "-", "-");
    fprintf(out, "%12.3f\n", (double)ps->stall_ns / 1e3);
}

/* Contract in report.h. */
void report_summary_plan_text(FILE *out, const report_trace *t, const report_stats *s)
{
    if (t->nplans == 0 && t->nplan_steps == 0)
        return;
    text_plans(out, t);
    row *v = report_plan_rows(t, s);
    if (!v)
        return;
    fprintf(out,
            "\nplan by step (wall_us: from the mark of the step before to the step's, the host's "
            "time; predicted: the plan in force):\n  %6s %4s %12s %12s %9s %10s %7s %10s %8s %14s "
            "%15s %17s %19s %12s\n",
            "step", "plan", "wall_us", "predicted_us", "evictions", "prefetches", "missing",
            "departures", "reactive", "bytes_to_host", "bytes_to_device", "predicted_to_host",
            "predicted_to_device", "stall_us");
    for (size_t i = 0; i < t->nplan_steps; i++)
        text_row(out, t, &v[i]);
    free(v);
}

static void json_plan(FILE *out, const report_plan *p)
{
    fprintf(out,
            "{\"first_seq\": %llu, \"model_step\": %llu, \"model_first_seq\": %llu, "
            "\"step_len\": %llu, \"budget_bytes\": %llu, \"predicted_peak_bytes\": %llu, "
            "\"native_peak_bytes\": %llu, \"floor_bytes\": %llu, ",
            U(p->first_seq), U(p->model_step), U(p->model_first_seq), U(p->step_len),
            U(p->budget_bytes), U(p->predicted_peak_bytes), U(p->native_peak_bytes),
            U(p->floor_bytes));
    const char *keys[] = {"native_us", "predicted_us", "stall_us", "bound_us"};
    const double vals[] = {p->native_us, p->predicted_us, p->stall_us, p->bound_us};
    for (size_t i = 0; i < 4; i++) {
        fprintf(out, "\"%s\": ", keys[i]);
        if (isfinite(vals[i])) /* an infinite bound is not 0 */
            report_json_double(out, vals[i]);
        else
            fprintf(out, "null");
        fprintf(out, ", ");
    }
    fprintf(out,
            "\"bytes_to_host\": %llu, \"bytes_to_device\": %llu, \"evictions\": %llu, "
            "\"prefetches\": %llu, \"feasible\": %s, \"remap_us\": ",
            U(p->bytes_to_host), U(p->bytes_to_device), U(p->evictions), U(p->prefetches),
            p->feasible ? "true" : "false");
    if (p->remap_us > 0) /* 1.12: the mover's cost per move the plan was made with */
        report_json_double(out, p->remap_us);
    else
        fprintf(out, "null");
    fprintf(out, "}");
}

static void json_row(FILE *out, const report_trace *t, const row *r)
{
    const report_plan_step *ps = r->ps;
    const report_plan *p = r->plan == SIZE_MAX ? NULL : &t->plans[r->plan];
    fprintf(out, "{\"step\": %llu, \"first_seq\": %llu, \"plan\": ", U(ps->step), U(ps->first_seq));
    if (p)
        fprintf(out, "%zu", r->plan);
    else
        fprintf(out, "null");
    fprintf(out, ", \"wall_us\": ");
    if (report_plan_row_wall_us(r) >= 0)
        report_json_double(out, report_plan_row_wall_us(r));
    else
        fprintf(out, "null");
    fprintf(out,
            ", \"evictions\": %llu, \"prefetches\": %llu, \"missing\": %llu, \"departures\": "
            "%llu, \"reactive_evictions\": %llu, \"bytes_to_host\": %llu, \"bytes_to_device\": "
            "%llu, \"stall_us\": ",
            U(ps->evictions), U(ps->prefetches), U(ps->missing), U(ps->departures),
            U(ps->reactive_evictions), U(ps->bytes_to_host), U(ps->bytes_to_device));
    report_json_double(out, (double)ps->stall_ns / 1e3);
    if (p) {
        fprintf(out, ", \"predicted_us\": ");
        report_json_double(out, p->predicted_us);
        fprintf(out, ", \"predicted_bytes_to_host\": %llu, \"predicted_bytes_to_device\": %llu}",
                U(p->bytes_to_host), U(p->bytes_to_device));
    } else {
        fprintf(out, ", \"predicted_us\": null, \"predicted_bytes_to_host\": null, "
                     "\"predicted_bytes_to_device\": null}");
    }
}

/* Contract in report.h. */
void report_summary_plan_json(FILE *out, const report_trace *t, const report_stats *s)
{
    fprintf(out, "\"plans\": [");
    for (size_t i = 0; i < t->nplans; i++) {
        fprintf(out, "%s", i ? ", " : "");
        json_plan(out, &t->plans[i]);
    }
    fprintf(out, "], \"plan_steps\": [");
    row *v = report_plan_rows(t, s);
    for (size_t i = 0; v && i < t->nplan_steps; i++) {
        fprintf(out, "%s", i ? ", " : "");
        json_row(out, t, &v[i]);
    }
    free(v);
    fprintf(out, "], ");
}
