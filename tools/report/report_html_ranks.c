/* report_html_ranks.c — `shim-report html TRACE...`: the page of several traces, the ranks of one
 * job (report_ranks.c orders and labels them as summary TRACE... does). At the top, the ranks
 * side by side: summary TRACE...'s totals per rank (a table) and, per step number, each rank's
 * step time, peak device bytes, bytes moved and stall as grouped bars. Below, each rank's part
 * as the page of one trace has it (report_html.c's sections, element ids prefixed "rK-" for the
 * K-th rank in rank order); the page's script shows one rank at a time (a selector), and without
 * it every part is there, one after the other. The data block holds summary --json TRACE...'s
 * object as it is, and per rank its moves totals and memory series. */
#include "report_html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define U(x)      ((unsigned long long)(x))
#define RK_COLORS 8 /* rank colours in the style sheet (.rk0 to .rk7), then again */

/* What a grouped chart shows of a step. */
typedef struct per_step {
    const char *key;   /* the key of summary --json's steps list */
    const char *id;    /* the chart's id */
    const char *title; /* under the chart */
    int bytes;         /* a bytes axis, else microseconds */
} per_step;

static const per_step charts[] = {
    {"wall_us", "ranks-wall-chart", "step time (wall) per rank", 0},
    {"peak_device_bytes", "ranks-peak-chart", "peak device bytes per step, per rank", 1},
    {"bytes_moved", "ranks-moved-chart", "bytes moved per step (to host + to device), per rank", 1},
    {"stall_us", "ranks-stall-chart", "stall per step, per rank", 0},
};

/* The value of chart c for step st (not NULL); negative: none (a step without a window). */
static double step_value(const per_step *c, const report_step *st)
{
    const report_residency *x = &st->residency;
    if (strcmp(c->key, "wall_us") == 0)
        return report_step_wall_us(st);
    if (strcmp(c->key, "peak_device_bytes") == 0)
        return (double)st->peak_device_bytes;
    if (strcmp(c->key, "bytes_moved") == 0)
        return (double)x->moves.bytes_to_host + (double)x->moves.bytes_to_device;
    return (double)x->stall_ns / 1e3;
}

/* The mean of chart c over rank r's steps numbered rk->steps[from..to), into *v; 0: r has none
   of them. */
static int group_value(const per_step *c, const report_rank *r, const report_ranks *rk, size_t from,
                       size_t to, double *v)
{
    double sum = 0;
    size_t k = 0;
    for (size_t i = from; i < to; i++) {
        const report_step *st = report_ranks_step(r, rk->steps[i]);
        double x = st ? step_value(c, st) : -1;
        if (x >= 0)
            sum += x, k++;
    }
    *v = k ? sum / (double)k : 0;
    return k > 0;
}

static void value_text(FILE *out, const per_step *c, double v)
{
    if (c->bytes)
        html_bytes(out, (uint64_t)v);
    else
        html_duration_us(out, v);
}

/* One bar of rank k in a group. */
static void group_bar(FILE *out, const per_step *c, const report_ranks *rk, size_t k,
                      const html_axis *a, double x0, double bw, double v, uint64_t first, int mean)
{
    double y = html_y_of(a, v, HTML_BAR_BOTTOM, HTML_BAR_BOTTOM - HTML_BAR_TOP);
    fprintf(out, "<rect class=\"rk rk%zu\" data-rank=\"%d\" data-rank-index=\"%zu\" data-value=\"",
            k % RK_COLORS, rk->r[k].t->rank, k);
    if (c->bytes && !mean)
        html_u(out, (uint64_t)v);
    else
        html_double(out, v);
    fprintf(out,
            "\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\"><title>%s, step%s %llu%s: ",
            x0, y, bw, HTML_BAR_BOTTOM - y, rk->r[k].label, mean ? "s from" : "", U(first),
            mean ? " (mean)" : "");
    value_text(out, c, v);
    fprintf(out, "</title></rect>");
}

/* A grouped bar chart: per step number (or run of them), one bar per rank. */
static void grouped_chart(FILE *out, const per_step *c, const report_ranks *rk)
{
    html_bars b = html_bars_make(rk->nsteps, HTML_MAX_BARS / (rk->n ? rk->n : 1));
    uint64_t *label = calloc(b.n + 1, sizeof *label);
    if (label == NULL)
        return;
    double top = 0, v;
    for (size_t g = 0; g < b.n; g++) {
        size_t from = g * b.per, to = from + b.per < rk->nsteps ? from + b.per : rk->nsteps;
        label[g] = rk->steps[from];
        for (size_t k = 0; k < rk->n; k++)
            if (group_value(c, &rk->r[k], rk, from, to, &v))
                top = fmax(top, v);
    }
    html_axis a = c->bytes ? html_axis_bytes(top * 1.05) : html_axis_us(top * 1.05);
    double w = (double)HTML_PLOT_W / (double)b.n, gap = w > 8 ? w * 0.18 : 0;
    double bw = (w - gap) / (double)rk->n;
    fprintf(out,
            "<figure class=\"chart\" id=\"%s\" data-key=\"%s\" data-groups=\"%zu\" "
            "data-per-group=\"%zu\" data-ranks=\"%zu\">\n",
            c->id, c->key, b.n, b.per, rk->n);
    fprintf(out, "<svg viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s\">\n", HTML_W, HTML_BAR_H,
            c->title);
    html_grid_y(out, &a, HTML_LEFT, HTML_LEFT + HTML_PLOT_W, HTML_BAR_BOTTOM,
                HTML_BAR_BOTTOM - HTML_BAR_TOP);
    for (size_t g = 0; g < b.n; g++) {
        size_t from = g * b.per, to = from + b.per < rk->nsteps ? from + b.per : rk->nsteps;
        if (b.per == 1)
            fprintf(out, "<g class=\"group\" data-step=\"%llu\">", U(label[g]));
        else
            fprintf(out, "<g class=\"group\" data-first-step=\"%llu\">", U(label[g]));
        for (size_t k = 0; k < rk->n; k++)
            if (group_value(c, &rk->r[k], rk, from, to, &v))
                group_bar(out, c, rk, k, &a, HTML_LEFT + g * w + gap / 2 + k * bw, bw, v, label[g],
                          b.per > 1);
        fprintf(out, "</g>\n");
    }
    html_bar_labels(out, b.n, HTML_LEFT, w, label);
    fprintf(out, "<text class=\"axis-title\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s%s</text>",
            HTML_LEFT + HTML_PLOT_W / 2, HTML_BAR_H - 2, c->title,
            b.per > 1 ? " (means of consecutive steps)" : "");
    fprintf(out, "</svg>\n</figure>\n");
    free(label);
}

/* The ranks' colours, once for the charts. */
static void rank_legend(FILE *out, const report_ranks *rk)
{
    fprintf(out, "<figcaption class=\"legend\" id=\"ranks-legend\">");
    for (size_t k = 0; k < rk->n; k++) {
        fprintf(out, "<span><i class=\"sw rk%zu\"></i>", k % RK_COLORS);
        html_text(out, rk->r[k].label);
        fprintf(out, "</span>");
    }
    fprintf(out, "</figcaption>\n");
}

/* Whether any rank moved memory or stalled (else the moves and stall charts are left out). */
static int any_residency(const report_ranks *rk)
{
    for (size_t k = 0; k < rk->n; k++) {
        const report_residency *x = &rk->r[k].s->residency;
        if (x->moves.evictions + x->moves.cancelled_evictions + x->moves.restores + x->stalls > 0)
            return 1;
    }
    return 0;
}

static void overview(FILE *out, const report_ranks *rk)
{
    fprintf(out, "<section id=\"ranks\"><h2>Ranks side by side</h2>\n<p class=\"note\">The "
                 "figures of <code>shim-report summary TRACE...</code>, one row per rank; below, "
                 "each step number with one bar per rank (a rank without that step has no "
                 "bar).</p>\n");
    html_table_ranks(out, rk);
    if (rk->nsteps == 0) {
        fprintf(out, "<p class=\"empty\" id=\"ranks-no-steps\">No rank has a detected "
                     "step.</p>\n</section>\n");
        return;
    }
    rank_legend(out, rk);
    int moved = any_residency(rk);
    for (size_t i = 0; i < sizeof charts / sizeof charts[0]; i++)
        if (moved || i < 2)
            grouped_chart(out, &charts[i], rk);
    fprintf(out, "</section>\n");
}

static void header(FILE *out, const report_ranks *rk)
{
    const report_trace *t0 = rk->r[0].t;
    fprintf(out, "<header><h1>shim-report: ");
    html_text(out, t0->command && *t0->command ? t0->command : t0->name);
    fprintf(out, " &middot; %zu ranks</h1>\n<ul class=\"meta traces\">\n", rk->n);
    for (size_t k = 0; k < rk->n; k++) {
        const report_trace *t = rk->r[k].t;
        fprintf(out, "<li>");
        html_text(out, rk->r[k].label);
        fprintf(out, ": <code>");
        html_text(out, t->name);
        fprintf(out, "</code> &middot; format %u.%u &middot; pid %d &middot; %zu records%s</li>\n",
                t->major, t->minor, t->pid, t->n, t->truncated ? " &middot; truncated" : "");
    }
    fprintf(out, "</ul>\n</header>\n");
}

/* The selector: one button per rank (the page's script shows that rank's part), and all. */
static void selector(FILE *out, const report_ranks *rk)
{
    fprintf(out, "<nav id=\"rank-select\" class=\"rank-select\" aria-label=\"rank\">"
                 "<span>Show:</span>");
    for (size_t k = 0; k < rk->n; k++) {
        fprintf(out, "<button type=\"button\" data-rank-index=\"%zu\">", k);
        html_text(out, rk->r[k].label);
        fprintf(out, "</button>");
    }
    fprintf(out, "<button type=\"button\" data-rank-index=\"all\">all ranks</button></nav>\n");
}

static void rank_part(html_page *p, const report_rank *r, size_t k)
{
    FILE *out = p->out;
    fprintf(out,
            "<section class=\"rank\" id=\"%ssection\" data-rank=\"%d\" data-rank-index=\"%zu\">",
            p->pfx, r->t->rank, k);
    fprintf(out, "<h2 class=\"rank-title\">");
    html_text(out, r->label);
    fprintf(out, ": <code>");
    html_text(out, r->t->name);
    fprintf(out, "</code></h2>\n");
    html_trace_warnings(p);
    html_sections(p);
    fprintf(out, "</section>\n");
}

/* The data block, in *json (free it). 0, or -1 when memory ran out. */
static int data_json(const report_ranks *rk, const report_trace *t, const report_stats *s,
                     const html_page *pg, long top, char **json, size_t *len)
{
    *json = NULL;
    FILE *mem = open_memstream(json, len);
    if (mem == NULL)
        return -1;
    fprintf(mem, "{\"generator\": \"shim-report html\", \"top\": %ld, \"summary\": ", top);
    int rc = report_summary_ranks_print(mem, t, s, rk->n, 1, top);
    fprintf(mem, ", \"ranks\": [");
    for (size_t k = 0; k < rk->n; k++) {
        const report_rank *r = &rk->r[k];
        fprintf(mem, "%s{\"rank\": %d, \"pid\": %d, \"label\": ", k ? ", " : "", r->t->rank,
                r->t->pid);
        report_json_string(mem, r->label);
        fprintf(mem, ", \"id_prefix\": ");
        report_json_string(mem, pg[k].pfx);
        fprintf(mem, ", \"median_step_ms\": ");
        if (r->median_step_ms >= 0)
            report_json_double(mem, r->median_step_ms);
        else
            fputs("null", mem);
        fprintf(mem, ", \"moves_totals\": ");
        report_moves_totals_json(mem, pg[k].m);
        fprintf(mem, ", \"memory\": ");
        html_json_memory(mem, &pg[k], &pg[k].mem[0]);
        fprintf(mem, ", \"device_memory\": ");
        html_json_device_memory(mem, &pg[k]);
        fprintf(mem, "}");
    }
    fprintf(mem, "]}");
    if (fclose(mem) != 0 || rc != 0) {
        free(*json);
        *json = NULL;
        return -1;
    }
    return 0;
}

/* Each rank's part of the page, set up (pg[k] for rk->r[k], prefix "rK-" in pfx[k]). 0, or -1
   when memory ran out (then nothing is left open). */
static int open_parts(html_page *pg, char (*pfx)[24], const report_ranks *rk, FILE *out, long top)
{
    for (size_t k = 0; k < rk->n; k++) {
        snprintf(pfx[k], sizeof pfx[k], "r%zu-", k);
        if (html_page_open(&pg[k], out, rk->r[k].t, rk->r[k].s, top, pfx[k]) != 0) {
            while (k-- > 0)
                html_page_close(&pg[k]);
            return -1;
        }
    }
    return 0;
}

/* Contract in report.h. */
int report_html_print_ranks(FILE *out, const report_trace *t, const report_stats *s, size_t n,
                            long top)
{
    report_ranks rk;
    if (n == 0 || report_ranks_make(&rk, t, s, n) != 0)
        return -1;
    html_page *pg = calloc(n, sizeof *pg);
    char(*pfx)[24] = calloc(n, sizeof *pfx);
    char *title = NULL, *json = NULL;
    size_t len = 0;
    int rc = -1;
    if (pg == NULL || pfx == NULL || open_parts(pg, pfx, &rk, out, top) != 0)
        goto done;
    if (asprintf(&title, "%zu ranks, %s", n, rk.r[0].t->name) < 0) {
        title = NULL;
        goto close;
    }
    html_begin(out, title);
    header(out, &rk);
    fprintf(out, "<main>\n");
    overview(out, &rk);
    selector(out, &rk);
    for (size_t k = 0; k < n; k++)
        rank_part(&pg[k], &rk.r[k], k);
    fprintf(out, "</main>\n");
    rc = data_json(&rk, t, s, pg, top, &json, &len);
    html_end(out, rc == 0 ? json : "{}", rc == 0 ? len : 2, top);
close:
    for (size_t k = 0; k < n; k++)
        html_page_close(&pg[k]);
done:
    free(json);
    free(title);
    free(pfx);
    free(pg);
    report_ranks_free(&rk);
    return rc;
}
