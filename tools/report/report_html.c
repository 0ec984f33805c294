/* report_html.c — `shim-report html [--top N] [-o FILE] TRACE...`: one self-contained HTML page of
 * a trace (no network: inline style, script and SVG; a Content-Security-Policy forbids the
 * rest). This file writes the page's skeleton: the header, the headline figures, the sections
 * (charts from report_html_svg.c, tables from report_html_tables.c), the configuration the
 * trace recorded, and the data block <script type="application/json" id="shim-data">, which
 * holds summary --json's object as it is (report_summary_print), moves --json's totals, and
 * the memory series drawn. Several traces (the ranks of a job) make the page of
 * report_html_ranks.c, from the parts here. */
#include "report.h"
#include "report_html.h"
#include "util_file.h"

#include "shim_trace_format.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define USAGE "html [--top N] [-o FILE] TRACE..."
#define U(x)  ((unsigned long long)(x))

/* Contract in report_html.h. */
void html_text(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned char c = *p;
        int n;
        if (c == '&')
            fputs("&amp;", out);
        else if (c == '<')
            fputs("&lt;", out);
        else if (c == '>')
            fputs("&gt;", out);
        else if (c == '"')
            fputs("&quot;", out);
        else if (c == '\'')
            fputs("&#39;", out);
        else if (c == '\t' || c == '\n' || (c >= 0x20 && c < 0x7f))
            fputc(c, out);
        else if (c >= 0x80 && (n = report_utf8_len(p)) > 0) {
            fwrite(p, 1, (size_t)n, out);
            p += n;
            continue;
        } else
            fputs("&#xfffd;", out); /* a control byte, or not UTF-8 */
        p++;
    }
}

/* Contract in report_html.h. */
void html_u(FILE *out, uint64_t v)
{
    fprintf(out, "%llu", U(v));
}

/* Contract in report_html.h. */
void html_double(FILE *out, double v)
{
    report_json_double(out, v);
}

/* Contract in report_html.h. */
void html_bytes(FILE *out, uint64_t bytes)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) {
        fprintf(out, "%llu B", U(bytes));
        return;
    }
    double v = (double)bytes / 1024.0;
    size_t u = 0;
    while (v >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024.0;
        u++;
    }
    fprintf(out, v >= 100 ? "%.1f %s" : "%.2f %s", v, units[u]);
}

/* Contract in report_html.h. */
void html_duration_us(FILE *out, double us)
{
    if (!isfinite(us))
        fputs("-", out);
    else if (fabs(us) >= 1e6)
        fprintf(out, "%.3f s", us / 1e6);
    else if (fabs(us) >= 1e3)
        fprintf(out, "%.1f ms", us / 1e3);
    else
        fprintf(out, "%.1f us", us);
}

/* Contract in report_html.h. */
double html_ms(const report_trace *t, uint64_t ns)
{
    return ns >= t->start_ns ? (double)(ns - t->start_ns) / 1e6 : -(double)(t->start_ns - ns) / 1e6;
}

/* Copies JSON text into a <script> element: '<', '>' and '&' (only ever inside strings) as
   \u escapes, so that no "</script" or "<!--" can end or change the element. */
static void script_json(FILE *out, const char *json, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = json[i];
        if (c == '<' || c == '>' || c == '&')
            fprintf(out, "\\u%04x", (unsigned)c);
        else if (c != '\n')
            fputc(c, out);
    }
}

/* Contract in report_html.h. The memory series: parallel arrays. */
void html_json_memory(FILE *out, const html_page *p, const html_series *h)
{
    fprintf(out,
            "{\"changes\": %llu, \"buckets\": %zu, \"points\": %zu, \"t0_ms\": ", U(h->changes),
            h->buckets, h->n);
    report_json_double(out, html_ms(p->t, h->t_lo));
    fprintf(out, ", \"t1_ms\": ");
    report_json_double(out, html_ms(p->t, h->t_hi));
    const char *keys[] = {"t_ms", "total", "device", "host", "moving"};
    for (int k = 0; k < 5; k++) {
        fprintf(out, ", \"%s\": [", keys[k]);
        for (size_t i = 0; i < h->n; i++) {
            const html_point *pt = &h->pts[i];
            fputs(i ? "," : "", out);
            if (k == 0)
                report_json_double(out, html_ms(p->t, pt->t_ns));
            else
                html_u(out, k == 1   ? pt->total
                            : k == 2 ? pt->device
                            : k == 3 ? pt->host
                                     : pt->moving);
        }
        fputc(']', out);
    }
    fprintf(out, ", \"budget\": [");
    int first = 1;
    for (size_t i = 0; i < p->t->n; i++) {
        const report_rec *r = &p->t->recs[i];
        if (r->kind != SHIM_TRACE_BUDGET ||
            report_record_device(p->t, r, p->s->primary_device) != h->device)
            continue;
        fprintf(out, "%s[", first ? "" : ",");
        report_json_double(out, html_ms(p->t, r->t_ns));
        fprintf(out, ",%llu]", U(r->a));
        first = 0;
    }
    fprintf(out, "]}");
}

/* Contract in report_html.h. */
void html_json_device_memory(FILE *out, const html_page *p)
{
    fprintf(out, "[");
    for (size_t k = 1; k < p->nmem; k++) {
        fprintf(out, "%s{\"device\": %u, \"chart\": \"gpu%u-memory-chart\", \"memory\": ",
                k > 1 ? ", " : "", p->mem[k].device, p->mem[k].device);
        html_json_memory(out, p, &p->mem[k]);
        fprintf(out, "}");
    }
    fprintf(out, "]");
}

/* The data block of one trace's page, in *json (free it): what the page shows, for programs.
   0, or -1 when memory ran out. */
static int data_json(html_page *p, char **json, size_t *len)
{
    *json = NULL;
    FILE *mem = open_memstream(json, len);
    if (mem == NULL)
        return -1;
    fprintf(mem, "{\"generator\": \"shim-report html\", \"top\": %ld, \"summary\": ", p->top);
    report_summary_print(mem, p->t, p->s, 1, p->top);
    fprintf(mem, ", \"moves_totals\": ");
    report_moves_totals_json(mem, p->m);
    fprintf(mem, ", \"memory\": ");
    html_json_memory(mem, p, &p->mem[0]);
    fprintf(mem, ", \"device_memory\": ");
    html_json_device_memory(mem, p);
    fprintf(mem, "}");
    if (fclose(mem) != 0) {
        free(*json);
        *json = NULL;
        return -1;
    }
    return 0;
}

/* One headline figure: data-key is the summary --json key, data-value its value there. */
static void figure_u(html_page *p, const char *key, const char *label, uint64_t v, int bytes)
{
    fprintf(p->out, "<div class=\"fig\" data-key=\"%s\" data-value=\"%llu\"><b>", key, U(v));
    if (bytes)
        html_bytes(p->out, v);
    else
        fprintf(p->out, "%llu", U(v));
    fprintf(p->out, "</b><span>%s</span></div>\n", label);
}

static void figure_us(html_page *p, const char *key, const char *label, double us)
{
    fprintf(p->out, "<div class=\"fig\" data-key=\"%s\" data-value=\"", key);
    html_double(p->out, us);
    fprintf(p->out, "\"><b>");
    html_duration_us(p->out, us);
    fprintf(p->out, "</b><span>%s</span></div>\n", label);
}

static void figures(html_page *p)
{
    const report_stats *s = p->s;
    const report_residency *x = &s->residency;
    fprintf(p->out, "<section id=\"%sfigures\" class=\"figures\">\n", p->pfx);
    if (p->t->have_resident_peak)
        figure_u(p, "resident_peak_bytes", "resident peak (on the device)",
                 p->t->resident_peak_bytes, 1);
    figure_u(p, "peak_device_bytes", "peak device bytes (allocated)", s->peak_device_bytes, 1);
    figure_u(p, "budget_bytes", s->budgets ? "budget" : "budget (none recorded)", s->budget_bytes,
             1);
    figure_u(p, "device_total_bytes", "device memory", s->device_total, 1);
    figure_u(p, "iterations", "steps", s->nsteps, 0);
    figure_u(p, "launches", "launches", s->launches, 0);
    figure_u(p, "launches_per_iteration", "launches per step", s->launches_per_iteration, 0);
    figure_u(p, "allocations", "allocations", s->allocations, 0);
    figure_u(p, "evictions", "evictions", x->moves.evictions, 0);
    figure_u(p, "restores", "restores", x->moves.restores, 0);
    figure_u(p, "cancelled_evictions", "cancelled evictions", x->moves.cancelled_evictions, 0);
    figure_u(p, "bytes_to_host", "moved to host", x->moves.bytes_to_host, 1);
    figure_u(p, "bytes_to_device", "moved to device", x->moves.bytes_to_device, 1);
    figure_u(p, "stalls", "stalls", x->stalls, 0);
    figure_us(p, "stall_us", "stalled", (double)x->stall_ns / 1e3);
    figure_u(p, "kernel_times", "kernel times measured", s->kernel_times, 0);
    figure_u(p, "dropped_records", "records dropped", p->t->dropped, 0);
    fprintf(p->out, "</section>\n");
}

static void header(html_page *p)
{
    const report_trace *t = p->t;
    fprintf(p->out, "<header><h1>shim-report: ");
    html_text(p->out, t->command && *t->command ? t->command : t->name);
    fprintf(p->out, "</h1>\n<p class=\"meta\">trace <code>");
    html_text(p->out, t->name);
    fprintf(p->out, "</code> &middot; format %u.%u &middot; pid %d &middot; rank %d &middot; ",
            t->major, t->minor, t->pid, t->rank);
    fprintf(p->out, "%zu records &middot; ", t->n);
    html_duration_us(p->out, (double)(p->s->last_ns - p->s->first_ns) / 1e3);
    fprintf(p->out, " recorded</p>\n");
    html_trace_warnings(p);
    fprintf(p->out, "</header>\n");
}

/* Contract in report_html.h. */
void html_trace_warnings(html_page *p)
{
    const report_trace *t = p->t;
    if (t->truncated) {
        fprintf(p->out, "<p class=\"warn\" id=\"%struncated\">Truncated trace: ", p->pfx);
        html_text(p->out, t->note);
        fprintf(p->out, ". Everything below is of its whole chunks.</p>\n");
    }
    if (t->dropped)
        fprintf(p->out,
                "<p class=\"warn\">%llu records were dropped by the writer: counts may be "
                "low.</p>\n",
                U(t->dropped));
}

static void section(html_page *p, const char *id, const char *title, const char *blurb)
{
    fprintf(p->out, "<section id=\"%s%s\"><h2>%s</h2>\n", p->pfx, id, title);
    if (blurb)
        fprintf(p->out, "<p class=\"note\">%s</p>\n", blurb);
}

static void end_section(html_page *p)
{
    fprintf(p->out, "</section>\n");
}

static void config(html_page *p)
{
    section(p, "config", "Effective configuration",
            "As libshim recorded it at start (<code>shim-report config</code> format: each "
            "option, its value and where the value came from).");
    if (p->t->config && *p->t->config) {
        fprintf(p->out, "<pre id=\"%sconfig-text\">", p->pfx);
        html_text(p->out, p->t->config);
        fprintf(p->out, "</pre>\n");
    } else {
        fprintf(p->out, "<p id=\"%sconfig-text\" class=\"empty\">Not recorded in this trace.</p>\n",
                p->pfx);
    }
    if (p->t->writer) {
        fprintf(p->out, "<p class=\"note\">Written by ");
        html_text(p->out, p->t->writer);
        fprintf(p->out, ".</p>\n");
    }
    end_section(p);
}

/* Contract in report_html.h. */
void html_sections(html_page *p)
{
    figures(p);
    section(p, "memory", "Device memory over time",
            "The program's device allocations, stacked by where their data was: on the device, "
            "moving (an eviction or restore in flight) or on the host, one chart per device. The "
            "line is the residency budget (libshim keeps what is on the device under it); the dot "
            "marks the peak of the allocations. Hover for the values.");
    html_chart_memory(p);
    html_table_devices(p);
    end_section(p);
    section(p, "moves", "Residency moves",
            "Every eviction (to host) and restore (to device) from its start to its end, on the "
            "memory chart's time axis, one lane per reason (per device and reason when several "
            "devices moved memory). Close moves are drawn as one bar (hover: how many).");
    html_chart_moves(p);
    html_table_moves(p);
    end_section(p);
    section(p, "steps", "Steps: compute against stall",
            "Each step's wall time (its window in the trace, the host's clock), split into the "
            "time the program's threads stalled on residency moves and the rest.");
    html_chart_steps(p);
    html_table_steps(p);
    end_section(p);
    section(p, "plan", "In-process plan: predicted against achieved",
            "The planner's prediction for one step (in its model's time) beside what each step "
            "under the plan did (its wall time, the host's clock: on the simulated device the "
            "two are not comparable).");
    html_chart_plan(p);
    html_table_plans(p);
    html_table_plan_steps(p);
    end_section(p);
    section(p, "allocations", "Top allocations", "By bytes, as in shim-report summary.");
    html_table_allocs(p);
    end_section(p);
    section(p, "kernels", "Top kernels", "By measured time, as in shim-report summary.");
    html_table_kernels(p);
    end_section(p);
    config(p);
}

/* Contract in report_html.h. */
int html_page_open(html_page *p, FILE *out, const report_trace *t, const report_stats *s, long top,
                   const char *pfx)
{
    report_moves *m = malloc(sizeof *m);
    *p = (html_page){.out = out, .t = t, .s = s, .m = m, .top = top, .pfx = pfx};
    if (m == NULL)
        return -1;
    if (report_moves_compute(m, t, s) != 0) {
        free(m);
        p->m = NULL;
        return -1;
    }
    p->mem = calloc(REPORT_MAX_DEVICES, sizeof *p->mem);
    if (p->mem == NULL) {
        html_page_close(p);
        return -1;
    }
    uint32_t primary = report_device_slot(s->primary_device);
    for (uint32_t k = 0; k < REPORT_MAX_DEVICES; k++) {
        uint32_t d = k == 0 ? primary : k <= primary ? k - 1 : k; /* the primary first */
        if (!report_device_shown(s, d))
            continue;
        if (html_series_compute(&p->mem[p->nmem], t, s, HTML_PLOT_W, d) != 0) {
            html_page_close(p);
            return -1;
        }
        p->nmem++;
    }
    return 0;
}

/* Contract in report_html.h. */
void html_page_close(html_page *p)
{
    for (size_t k = 0; p->mem != NULL && k < p->nmem; k++)
        html_series_free(&p->mem[k]);
    free(p->mem);
    p->mem = NULL;
    p->nmem = 0;
    if (p->m != NULL) {
        report_moves_free((report_moves *)p->m);
        free((report_moves *)p->m);
    }
    p->m = NULL;
}

/* Contract in report_html.h. */
void html_begin(FILE *out, const char *title)
{
    fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                 "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                 "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
                 "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                 "<title>shim-report: ");
    html_text(out, title);
    /* First of all, before anything else can fail: uncaught errors and console.error calls
       are counted on <html data-errors> and listed in #shim-errors (see report_html.js). */
    fprintf(out, "</title>\n<script>window.shimErrors=[];(function(){function note(m){"
                 "window.shimErrors.push(String(m));document.documentElement.setAttribute("
                 "\"data-errors\",String(window.shimErrors.length));}window.addEventListener("
                 "\"error\",function(e){note(e.message||\"error\");});window.addEventListener("
                 "\"unhandledrejection\",function(e){note(e.reason);});var ce=console.error;"
                 "console.error=function(){note(Array.prototype.join.call(arguments,\" \"));"
                 "return ce.apply(console,arguments);};})();</script>\n<style>\n");
    fputs(report_html_css, out);
    fprintf(out, "</style>\n</head>\n<body>\n<div id=\"shim-errors\" hidden></div>\n");
}

/* Contract in report_html.h. */
void html_end(FILE *out, const char *json, size_t len, long top)
{
    fprintf(out,
            "<footer>Made by <code>shim-report html</code> from the trace alone. "
            "Charts show at most a few samples per pixel column; tables and figures are "
            "exact (the numbers of <code>shim-report summary --json --top %ld</code>, also "
            "in this page's <code>#shim-data</code> block).</footer>\n",
            top);
    fprintf(out, "<script type=\"application/json\" id=\"shim-data\">");
    script_json(out, json, len);
    fprintf(out, "</script>\n<script>\n");
    fputs(report_html_js, out);
    fprintf(out, "</script>\n</body></html>\n");
}

/* Contract in report.h. */
int report_html_print(FILE *out, const report_trace *t, const report_stats *s, long top)
{
    html_page p;
    if (html_page_open(&p, out, t, s, top, "") != 0)
        return -1;
    html_begin(out, t->name);
    html_verdict(&p); /* the answer first, before the title */
    header(&p);
    fprintf(out, "<main>\n");
    html_sections(&p);
    fprintf(out, "</main>\n");
    char *json;
    size_t len;
    int rc = data_json(&p, &json, &len);
    html_end(out, rc == 0 ? json : "{}", rc == 0 ? len : 2, top);
    free(json);
    html_page_close(&p);
    return rc;
}

/* `html [--top N] [-o FILE] TRACE...`: the page on stdout or in FILE; several traces: the page
   of the ranks (report_html_ranks.c). Exit status as in report.h; a trace that cannot be read
   among several: 1, and the page of the others. */
int report_html_main(int argc, char **argv, char **envp)
{
    (void)envp;
    report_opts o;
    int rc = report_opts_parse_many(&o, argc, argv, USAGE, 1, 1); /* 1: --top (and --json) */
    if (rc != 0)
        return rc == 1 ? 1 : 2;
    if (o.json) {
        fprintf(stderr, "usage: shim-report %s\n", USAGE);
        report_opts_free(&o);
        return 2;
    }
    report_trace *t;
    report_stats *s;
    size_t n;
    rc = report_open_many(&o, &t, &s, &n);
    char why[128] = "";
    FILE *out = n == 0 ? NULL : o.output ? util_file_open(o.output, "w", why, sizeof why) : stdout;
    if (n > 0 && out == NULL) {
        fprintf(stderr, "shim-report: cannot write %s: %s\n", o.output, why);
        rc = 1;
    } else if (n > 0 && (o.ntraces == 1 ? report_html_print(out, &t[0], &s[0], o.top)
                                        : report_html_print_ranks(out, t, s, n, o.top)) != 0) {
        fprintf(stderr, "shim-report: out of memory\n");
        rc = 1;
    }
    if (out != NULL && out != stdout && fclose(out) != 0) {
        fprintf(stderr, "shim-report: cannot write %s: %s\n", o.output, strerror(errno));
        rc = 1;
    }
    report_close_all(t, s, n);
    report_opts_free(&o);
    return rc;
}
