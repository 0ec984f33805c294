/* report_html_verdict.c — the top of the page: the verdict (report_verdict.c), the answer a
 * person looks for first, in the words every surface prints (shim_trace_figures.h), each figure
 * also as data-key/data-value (summary --json's "verdict" keys, written the same way) for
 * tests/trace/check_report_html.py. */
#include "report_html.h"

#include <string.h>

/* One verdict figure: its key, the figure as a person reads it, a label, and its JSON value. */
static void vfig_ms(html_page *p, const char *key, const char *label, double ms)
{
    fprintf(p->out, "<div class=\"vfig\" data-key=\"%s\" data-value=\"", key);
    if (ms >= 0)
        html_double(p->out, ms);
    else
        fprintf(p->out, "null");
    fprintf(p->out, "\"><b>");
    if (ms >= 0)
        html_duration_us(p->out, ms * 1e3);
    else
        fprintf(p->out, "unknown");
    fprintf(p->out, "</b><span>%s</span></div>\n", label);
}

static void vfig_bytes(html_page *p, const char *key, const char *label, int have, double b)
{
    fprintf(p->out, "<div class=\"vfig\" data-key=\"%s\" data-value=\"", key);
    if (have)
        html_u(p->out, (uint64_t)(b + 0.5));
    else
        fprintf(p->out, "null");
    fprintf(p->out, "\"><b>");
    if (have)
        html_bytes(p->out, (uint64_t)(b + 0.5));
    else
        fprintf(p->out, "unknown");
    fprintf(p->out, "</b><span>%s</span></div>\n", label);
}

static void vfig_ratio(html_page *p, const char *key, const char *label, double x)
{
    fprintf(p->out, "<div class=\"vfig\" data-key=\"%s\" data-value=\"", key);
    if (x >= 0)
        html_double(p->out, x);
    else
        fprintf(p->out, "null");
    fprintf(p->out, "\"><b>");
    if (x >= 0)
        fprintf(p->out, "%.2fx", x);
    else
        fprintf(p->out, "unknown");
    fprintf(p->out, "</b><span>%s</span></div>\n", label);
}

static void vfig_count(html_page *p, const char *key, const char *label, uint64_t k)
{
    fprintf(p->out, "<div class=\"vfig\" data-key=\"%s\" data-value=\"%llu\"><b>%llu</b><span>%s",
            key, (unsigned long long)k, (unsigned long long)k, label);
    fprintf(p->out, "</span></div>\n");
}

/* One sentence of the verdict's words, under its own class (data-words: summary --json's
   verdict.words key). */
static void words(html_page *p, const char *key, const char *text)
{
    if (text[0])
        fprintf(p->out, "<p class=\"vwords\" data-words=\"%s\">%s</p>\n", key, text);
}

/* Contract in report_html.h. */
void html_verdict(html_page *p)
{
    report_verdict v;
    char w[1024];
    report_verdict_make(p->t, p->s, &v);
    const struct shim_fig_derived *d = &v.d;
    const char *cls = v.fitted == 1 ? "fitted" : v.fitted == 0 ? "unfitted" : "unknown";
    fprintf(p->out,
            "<section id=\"%sverdict\" class=\"verdict %s\" data-answer=\"%s\" "
            "data-step-source=\"%s\">\n<p class=\"answer\">",
            p->pfx, cls, v.answer, d->step_source);
    report_verdict_sentence(p->out, &v);
    fprintf(p->out, "</p>\n");
    words(p, "step", shim_fig_step_words(w, sizeof w, &v.f, d));
    words(p, "steady_state", shim_fig_steady_words(w, sizeof w, &v.f, d));
    words(p, "warm_up", shim_fig_warmup_words(w, sizeof w, &v.f, d));
    if (v.f.have_moves)
        words(p, "moves", shim_fig_moves_words(w, sizeof w, &v.f.moves));
    fprintf(p->out, "<div class=\"vfigs\">\n");
    vfig_bytes(p, "resident_peak_bytes", "resident peak (what the budget bounds)",
               v.f.have_resident_peak, (double)v.f.resident_peak);
    vfig_bytes(p, "budget_bytes", "budget", v.f.managed, (double)v.f.budget);
    vfig_bytes(p, "allocated_peak_bytes", "allocations' peak (evicted ones counted)", 1,
               (double)v.f.alloc_peak);
    int plan = strcmp(d->step_source, "plan estimate") == 0;
    vfig_ms(p, "step_ms",
            plan ? "step under the budget (the plan's estimate)" : "step under the budget",
            d->step_ms);
    vfig_ms(p, "native_step_ms", plan ? "native step (the plan's estimate)" : "native step",
            d->native_ms);
    vfig_ratio(p, "slowdown", "step time against native", d->slowdown);
    vfig_ratio(p, "bound_slowdown", "the least any plan could do", d->bound_slowdown);
    int steady = d->steady_steps > 0;
    vfig_count(p, "steady_steps", "steps in the steady state (under the plan)", d->steady_steps);
    if (steady)
        vfig_count(p, "steady_from_step", "the first step under the plan", d->steady_from);
    vfig_bytes(p, "bytes_moved_per_step", "moved per step of the steady state (both ways)", steady,
               d->bytes_per_step);
    vfig_ms(p, "stall_ms_per_step", "stalled per step of the steady state",
            steady ? d->stall_ms_per_step : -1);
    vfig_ms(p, "wall_ms_per_step",
            v.f.simulated ? "wall time per step (the simulator's own, not the device's)"
                          : "wall time per step (the host's clock)",
            steady ? d->wall_ms_per_step : d->wall_ms);
    vfig_count(p, "warmup_steps", "steps of the warm-up, reported apart", d->other_steps);
    vfig_bytes(p, "warmup_bytes_moved", "moved in the warm-up and outside any step", steady,
               d->other_bytes);
    vfig_ms(p, "warmup_stall_ms", "stalled in the warm-up and outside any step",
            steady ? d->other_stall_ms : -1);
    fprintf(p->out, "</div>\n</section>\n");
}
