/* report_html_verdict.c — the top of the page: the verdict (report_verdict.c), the answer a
 * person looks for first, each figure also as data-key/data-value (summary --json's "verdict"
 * keys, written the same way) for tests/trace/check_report_html.py. */
#include "report_html.h"

#include <string.h>

/* One verdict figure: label, the figure as a person reads it, and its JSON value. */
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

static void vfig_bytes(html_page *p, const char *key, const char *label, int have, uint64_t b)
{
    fprintf(p->out, "<div class=\"vfig\" data-key=\"%s\" data-value=\"", key);
    if (have)
        html_u(p->out, b);
    else
        fprintf(p->out, "null");
    fprintf(p->out, "\"><b>");
    if (have)
        html_bytes(p->out, b);
    else
        fprintf(p->out, "unknown");
    fprintf(p->out, "</b><span>%s</span></div>\n", label);
}

static void vfig_slowdown(html_page *p, const report_verdict *v)
{
    fprintf(p->out, "<div class=\"vfig\" data-key=\"slowdown\" data-value=\"");
    if (v->slowdown >= 0)
        html_double(p->out, v->slowdown);
    else
        fprintf(p->out, "null");
    fprintf(p->out, "\"><b>");
    if (v->slowdown >= 0)
        fprintf(p->out, "%.2fx", v->slowdown);
    else
        fprintf(p->out, "unknown");
    const char *src = v->step_source;
    fprintf(p->out, "</b><span>step time against native (%s)</span></div>\n",
            strcmp(src, "plan estimate") == 0 ? "the plan's estimate from measured kernel times"
            : strcmp(src, "measured") == 0    ? "measured"
            : strcmp(src, "no budget") == 0   ? "no budget: every step native"
                                              : "not known");
}

/* Contract in report_html.h. */
void html_verdict(html_page *p)
{
    report_verdict v;
    report_verdict_make(p->t, p->s, &v);
    const char *cls = v.fitted == 1 ? "fitted" : v.fitted == 0 ? "unfitted" : "unknown";
    fprintf(p->out,
            "<section id=\"%sverdict\" class=\"verdict %s\" data-answer=\"%s\" "
            "data-step-source=\"%s\">\n<p class=\"answer\">",
            p->pfx, cls, v.answer, v.step_source);
    report_verdict_sentence(p->out, &v);
    fprintf(p->out, "</p>\n<div class=\"vfigs\">\n");
    vfig_bytes(p, "resident_peak_bytes", "resident peak (what the budget bounds)",
               v.have_resident_peak, v.resident_peak_bytes);
    vfig_bytes(p, "budget_bytes", "budget", v.budget_bytes != 0, v.budget_bytes);
    vfig_bytes(p, "allocated_peak_bytes", "allocations' peak (evicted ones counted)", 1,
               v.allocated_peak_bytes);
    int plan = strcmp(v.step_source, "plan estimate") == 0;
    vfig_ms(p, "step_ms",
            plan ? "step under the budget (plan's estimate)" : "step under the budget", v.step_ms);
    vfig_ms(p, "native_step_ms", plan ? "native step (plan's estimate)" : "native step",
            v.native_step_ms);
    vfig_slowdown(p, &v);
    vfig_bytes(p, "bytes_moved_per_step", "moved per step (both ways)", 1,
               report_verdict_moved_bytes(&v));
    vfig_ms(p, "stall_ms_per_step", "stalled per step", v.stall_ms_per_step);
    fprintf(p->out, "</div>\n</section>\n");
}
