/* report_verdict.c — the answer every report opens with (summary text and JSON, the HTML page):
 * did the job fit (the resident peak against the budget), and what did it cost (the step time
 * against native, the steady state under the plan per step, the warm-up apart, the moves by
 * reason and outcome). The figures and their words are shim_trace_figures.h's, which libshim's
 * exit line prints too: this file only lays them out. */
#include "report.h"

#include "shim_trace.h"

#include <math.h>

#define U(x) ((unsigned long long)(x))

/* Contract in report.h. */
void report_verdict_make(const report_trace *t, const report_stats *s, report_verdict *v)
{
    *v = (report_verdict){.answer = "no budget", .fitted = -1, .device_name = t->device_name};
    report_figures_make(t, s, &v->f);
    shim_fig_derive(&v->f, &v->d);
    if (v->f.managed && !v->f.have_resident_peak) {
        v->answer = "unknown";
    } else if (v->f.managed) {
        v->fitted = v->f.resident_peak <= v->f.budget;
        v->answer = v->fitted ? "fitted" : "did not fit";
    }
}

/* Contract in report.h. */
void report_verdict_sentence(FILE *out, const report_verdict *v)
{
    char w[512];
    fputs(shim_fig_verdict_words(w, sizeof w, &v->f), out);
}

/* Contract in report.h. */
void report_verdict_text(FILE *out, const report_verdict *v)
{
    char w[1024];
    fprintf(out, "verdict: %s\n", shim_fig_verdict_words(w, sizeof w, &v->f));
    fprintf(out, "step: %s\n", shim_fig_step_words(w, sizeof w, &v->f, &v->d));
    if (*shim_fig_steady_words(w, sizeof w, &v->f, &v->d))
        fprintf(out, "steady_state: %s\n", w);
    if (*shim_fig_warmup_words(w, sizeof w, &v->f, &v->d))
        fprintf(out, "warm_up: %s\n", w);
    if (v->f.have_moves)
        fprintf(out, "moves: %s\n", shim_fig_moves_words(w, sizeof w, &v->f.moves));
    if (v->f.have_resident_peak)
        fprintf(out, "resident_peak_bytes: %llu (%.1f MiB)\n", U(v->f.resident_peak),
                (double)v->f.resident_peak / 1048576.0);
    else
        fprintf(out, "resident_peak_bytes: unknown (not recorded)\n");
}

/* "key": bytes rounded to a whole byte, null when not known (have 0). */
static void json_bytes(FILE *out, const char *key, int have, double b)
{
    if (have)
        fprintf(out, "\"%s\": %llu, ", key, U((uint64_t)(b + 0.5)));
    else
        fprintf(out, "\"%s\": null, ", key);
}

/* "key": a figure, null when it is not known (negative or not finite). */
static void json_num(FILE *out, const char *key, double v)
{
    fprintf(out, "\"%s\": ", key);
    if (v >= 0 && isfinite(v))
        report_json_double(out, v);
    else
        fprintf(out, "null");
    fprintf(out, ", ");
}

static void json_words(FILE *out, const report_verdict *v)
{
    char w[1024];
    fprintf(out, "\"words\": {\"verdict\": ");
    report_json_string(out, shim_fig_verdict_words(w, sizeof w, &v->f));
    fprintf(out, ", \"step\": ");
    report_json_string(out, shim_fig_step_words(w, sizeof w, &v->f, &v->d));
    fprintf(out, ", \"steady_state\": ");
    report_json_string(out, shim_fig_steady_words(w, sizeof w, &v->f, &v->d));
    fprintf(out, ", \"warm_up\": ");
    report_json_string(out, shim_fig_warmup_words(w, sizeof w, &v->f, &v->d));
    fprintf(out, ", \"moves\": ");
    if (v->f.have_moves)
        report_json_string(out, shim_fig_moves_words(w, sizeof w, &v->f.moves));
    else
        fprintf(out, "null");
    fprintf(out, "}");
}

/* Contract in report.h. */
void report_verdict_moves_json(FILE *out, const report_verdict *v)
{
    const struct shim_fig_moves *m = &v->f.moves;
    if (!v->f.have_moves) {
        fprintf(out, "null");
        return;
    }
    fprintf(out, "{\"started\": %llu, \"to_host\": %llu, \"to_device\": %llu, \"by_reason\": {",
            U(shim_fig_moves_started(m)), U(m->to_host), U(m->to_device));
    for (uint32_t r = 1; r < SHIM_FIG_REASONS; r++)
        fprintf(out, "\"%s\": %llu, ", shim_move_reason_name(r), U(m->by_reason[r]));
    fprintf(out, "\"other\": %llu}, \"by_outcome\": {", U(m->by_reason[0]));
    for (uint32_t o = 0; o < SHIM_FIG_OUTCOMES; o++)
        fprintf(out, "\"%s\": %llu, ", shim_fig_outcome_name(o), U(m->by_outcome[o]));
    fprintf(out, "\"%s\": %llu}}", shim_fig_outcome_name(SHIM_FIG_OUTCOMES + 1),
            U(shim_fig_moves_unfinished(m)));
}

/* Contract in report.h. */
void report_verdict_json(FILE *out, const report_verdict *v)
{
    const struct shim_figures *f = &v->f;
    const struct shim_fig_derived *d = &v->d;
    fprintf(out, "\"verdict\": {\"answer\": \"%s\", \"fitted\": %s, ", v->answer,
            v->fitted < 0 ? "null"
            : v->fitted   ? "true"
                          : "false");
    if (f->have_resident_peak)
        fprintf(out, "\"resident_peak_bytes\": %llu, ", U(f->resident_peak));
    else
        fprintf(out, "\"resident_peak_bytes\": null, ");
    fprintf(out, "\"allocated_peak_bytes\": %llu, ", U(f->alloc_peak));
    if (f->managed)
        fprintf(out, "\"budget_bytes\": %llu, ", U(f->budget));
    else
        fprintf(out, "\"budget_bytes\": null, ");
    json_num(out, "step_ms", d->step_ms);
    json_num(out, "native_step_ms", d->native_ms);
    json_num(out, "slowdown", d->slowdown);
    json_num(out, "bound_ms", d->bound_ms);
    json_num(out, "bound_slowdown", d->bound_slowdown);
    fprintf(out, "\"step_source\": \"%s\", \"device_name\": ", d->step_source);
    if (v->device_name[0])
        report_json_string(out, v->device_name);
    else
        fprintf(out, "null");
    fprintf(out, ", \"simulated_device\": %s, \"steps\": %llu, \"steady_steps\": %llu, ",
            f->simulated ? "true" : "false", U(f->steps.marks), U(d->steady_steps));
    if (d->steady_steps)
        fprintf(out, "\"steady_from_step\": %llu, ", U(d->steady_from));
    else
        fprintf(out, "\"steady_from_step\": null, ");
    json_bytes(out, "bytes_moved_per_step", d->steady_steps > 0, d->bytes_per_step);
    json_num(out, "stall_ms_per_step", d->steady_steps ? d->stall_ms_per_step : -1);
    json_num(out, "wall_ms_per_step", d->steady_steps ? d->wall_ms_per_step : d->wall_ms);
    fprintf(out, "\"warmup_steps\": %llu, ", U(d->other_steps));
    json_bytes(out, "warmup_bytes_moved", d->steady_steps > 0, d->other_bytes);
    json_num(out, "warmup_stall_ms", d->steady_steps ? d->other_stall_ms : -1);
    json_words(out, v);
    fprintf(out, "}, \"moves\": ");
    report_verdict_moves_json(out, v);
    fprintf(out, ", ");
    if (f->have_resident_peak)
        fprintf(out, "\"resident_peak_bytes\": %llu, ", U(f->resident_peak));
    else
        fprintf(out, "\"resident_peak_bytes\": null, ");
}
