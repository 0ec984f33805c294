/* report_verdict.c — the answer every report opens with (summary text and JSON, the HTML page):
 * did the job fit (the resident peak against the budget), and what did it cost (the step time
 * against native, bytes moved and stall per step). The shim's exit line says the same from
 * inside the process (shim/shim_main.c). */
#include "report.h"

#include <math.h>
#include <stdlib.h>

#define U(x) ((unsigned long long)(x))

static int by_value(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

/* The median of v[0..n) (sorted here), -1 when n is 0. */
static double median(double *v, size_t n)
{
    if (n == 0)
        return -1.0;
    qsort(v, n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Whether anything moved in the step (a stall alone moved nothing: the exit line's rule too). */
static int moved(const report_step *st)
{
    const report_residency *x = &st->residency;
    return x->evictions + x->cancelled_evictions + x->restores > 0;
}

/* The median wall time in ms of the steps whose moved() is want (-1: any step), their count in
 *n, and the means of their bytes moved and stall in *bytes and *stall_ms. */
static double steps_ms(const report_stats *s, int want, size_t *n, double *bytes, double *stall_ms)
{
    double *v = malloc((s->nsteps + 1) * sizeof *v);
    size_t k = 0;
    *bytes = *stall_ms = 0;
    for (size_t i = 0; v && i < s->nsteps; i++) {
        const report_step *st = &s->steps[i];
        double w = report_step_wall_us(st);
        if (w < 0 || (want >= 0 && moved(st) != want))
            continue;
        v[k++] = w / 1e3;
        *bytes += (double)st->residency.bytes_to_host + (double)st->residency.bytes_to_device;
        *stall_ms += (double)st->residency.stall_ns / 1e6;
    }
    if (k) {
        *bytes /= (double)k;
        *stall_ms /= (double)k;
    }
    double m = median(v, k);
    free(v);
    *n = k;
    return m;
}

static void step_figures(const report_trace *t, const report_stats *s, report_verdict *v)
{
    size_t all, moving, still;
    double b, st, b_all, st_all, b_still, st_still;
    v->measured_step_ms = steps_ms(s, -1, &all, &b_all, &st_all);
    double moving_ms = steps_ms(s, 1, &moving, &b, &st);
    double still_ms = steps_ms(s, 0, &still, &b_still, &st_still);
    v->bytes_moved_per_step = moving ? b : b_all;
    v->stall_ms_per_step = moving ? st : st_all;
    if (!v->budget_bytes && all) { /* no budget: every step is native */
        v->step_ms = v->native_step_ms = v->measured_step_ms;
        v->step_source = "no budget";
        v->native_steps = all;
    } else if (all && (moving == 0 || still >= 2)) {
        /* measured: the steps in which nothing moved ran as native (all of them, or at least
           two beside those that moved) */
        v->step_ms = moving ? moving_ms : still_ms;
        v->native_step_ms = still_ms;
        v->step_source = "measured";
        v->native_steps = still;
    } else if (t->nplans > 0 && t->plans[t->nplans - 1].native_us > 0) {
        const report_plan *p = &t->plans[t->nplans - 1];
        v->step_ms = p->predicted_us / 1e3;
        v->native_step_ms = p->native_us / 1e3;
        v->step_source = "plan estimate";
    } else {
        v->step_ms = v->measured_step_ms;
    }
    if (v->step_ms >= 0 && v->native_step_ms > 0)
        v->slowdown = v->step_ms / v->native_step_ms;
}

/* Contract in report.h. */
uint64_t report_verdict_moved_bytes(const report_verdict *v)
{
    return (uint64_t)(v->bytes_moved_per_step + 0.5);
}

/* Contract in report.h. */
void report_verdict_make(const report_trace *t, const report_stats *s, report_verdict *v)
{
    *v = (report_verdict){.answer = "no budget",
                          .fitted = -1,
                          .have_resident_peak = t->have_resident_peak,
                          .resident_peak_bytes = t->resident_peak_bytes,
                          .allocated_peak_bytes = s->peak_device_bytes,
                          .budget_bytes = s->budgets ? s->budget_bytes : 0,
                          .step_ms = -1,
                          .native_step_ms = -1,
                          .slowdown = -1,
                          .step_source = "none"};
    if (v->budget_bytes && !v->have_resident_peak) {
        v->answer = "unknown";
    } else if (v->budget_bytes) {
        v->fitted = v->resident_peak_bytes <= v->budget_bytes;
        v->answer = v->fitted ? "fitted" : "did not fit";
    }
    step_figures(t, s, v);
}

static double mib(double bytes)
{
    return bytes / 1048576.0;
}

static void step_words(FILE *out, const report_verdict *v)
{
    if (v->step_ms < 0) {
        fprintf(out, "no step measured");
        return;
    }
    if (v->native_step_ms <= 0) {
        fprintf(out, "%.1f ms per step measured, native unknown (no plan in the trace)",
                v->step_ms);
        return;
    }
    fprintf(out, "%.1f ms per step against %.1f ms native, %.2fx", v->step_ms, v->native_step_ms,
            v->slowdown);
    if (v->step_source[0] == 'p')
        fprintf(out, " (the plan's estimate from measured kernel times; measured %.1f ms)",
                v->measured_step_ms);
    else if (v->step_source[0] == 'n')
        fprintf(out, " (no budget: every step native)");
    else
        fprintf(out, " (measured: native is the %zu step%s in which nothing moved)",
                v->native_steps, v->native_steps == 1 ? "" : "s");
}

/* Contract in report.h. */
void report_verdict_sentence(FILE *out, const report_verdict *v)
{
    if (v->fitted >= 0)
        fprintf(out,
                "%s: resident peak %.1f MiB %s the %.1f MiB budget (allocations peaked at "
                "%.1f MiB, evicted ones counted)",
                v->fitted ? "fitted" : "did not fit", mib((double)v->resident_peak_bytes),
                v->fitted ? "within" : "over", mib((double)v->budget_bytes),
                mib((double)v->allocated_peak_bytes));
    else if (v->budget_bytes)
        fprintf(out,
                "unknown: the trace has no resident peak (format before 1.9, or cut short); "
                "budget %.1f MiB, allocations peaked at %.1f MiB",
                mib((double)v->budget_bytes), mib((double)v->allocated_peak_bytes));
    else
        fprintf(out, "no budget: allocations peaked at %.1f MiB",
                mib((double)v->allocated_peak_bytes));
}

/* Contract in report.h. */
void report_verdict_text(FILE *out, const report_verdict *v)
{
    fprintf(out, "verdict: ");
    report_verdict_sentence(out, v);
    fprintf(out, "\nstep: ");
    step_words(out, v);
    fputc('\n', out);
    if (v->budget_bytes)
        fprintf(out, "moved_per_step: %.1f MiB to and from the host, %.1f ms stalled\n",
                mib(v->bytes_moved_per_step), v->stall_ms_per_step);
    if (v->have_resident_peak)
        fprintf(out, "resident_peak_bytes: %llu (%.1f MiB)\n", U(v->resident_peak_bytes),
                mib((double)v->resident_peak_bytes));
    else
        fprintf(out, "resident_peak_bytes: unknown (not recorded)\n");
}

static void json_ms(FILE *out, const char *key, double v)
{
    fprintf(out, "\"%s\": ", key);
    if (v >= 0 && isfinite(v))
        report_json_double(out, v);
    else
        fprintf(out, "null");
    fprintf(out, ", ");
}

/* Contract in report.h. */
void report_verdict_json(FILE *out, const report_verdict *v)
{
    fprintf(out, "\"verdict\": {\"answer\": \"%s\", \"fitted\": %s, ", v->answer,
            v->fitted < 0 ? "null"
            : v->fitted   ? "true"
                          : "false");
    if (v->have_resident_peak)
        fprintf(out, "\"resident_peak_bytes\": %llu, ", U(v->resident_peak_bytes));
    else
        fprintf(out, "\"resident_peak_bytes\": null, ");
    fprintf(out, "\"allocated_peak_bytes\": %llu, ", U(v->allocated_peak_bytes));
    if (v->budget_bytes)
        fprintf(out, "\"budget_bytes\": %llu, ", U(v->budget_bytes));
    else
        fprintf(out, "\"budget_bytes\": null, ");
    json_ms(out, "step_ms", v->step_ms);
    json_ms(out, "native_step_ms", v->native_step_ms);
    json_ms(out, "slowdown", v->slowdown);
    fprintf(out, "\"step_source\": \"%s\", \"native_steps\": %zu, ", v->step_source,
            v->native_steps);
    json_ms(out, "measured_step_ms", v->measured_step_ms);
    fprintf(out, "\"bytes_moved_per_step\": %llu, \"stall_ms_per_step\": ",
            U(report_verdict_moved_bytes(v)));
    report_json_double(out, v->stall_ms_per_step);
    fprintf(out, "}, ");
    if (v->have_resident_peak)
        fprintf(out, "\"resident_peak_bytes\": %llu, ", U(v->resident_peak_bytes));
    else
        fprintf(out, "\"resident_peak_bytes\": null, ");
}
