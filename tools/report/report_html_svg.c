/* report_html_svg.c — the page's charts, as inline SVG written here (no script needed to see
 * them; report_html.js only adds the memory chart's hover readout). Each chart is a <figure>
 * whose data-* attributes hold the figures it draws, as summary --json writes them.
 *
 * Long traces stay light: the memory chart draws html_series (a few samples per pixel column),
 * the moves timeline merges the moves of a lane that touch within a pixel into one bar (with
 * their count), and the bar charts show at most HTML_MAX_BARS bars (means of consecutive steps
 * beyond that). Tables keep every row (report_html_tables.c). */
#include "report_html.h"

#include "shim_trace.h"
#include "shim_trace_format.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define U(x) ((unsigned long long)(x))

/* The time axis shared by the memory chart and the moves timeline. */
typedef struct taxis {
    uint64_t lo, hi; /* ns */
    double lo_ms, hi_ms;
} taxis;

static taxis time_axis(const html_page *p)
{
    const html_series *h = &p->mem[0]; /* every series has the trace's time axis */
    taxis x = {h->t_lo, h->t_hi, html_ms(p->t, h->t_lo), html_ms(p->t, h->t_hi)};
    return x;
}

static double x_of(const taxis *x, uint64_t ns)
{
    double f = ns <= x->lo ? 0 : ns >= x->hi ? 1 : (double)(ns - x->lo) / (double)(x->hi - x->lo);
    return HTML_LEFT + f * HTML_PLOT_W;
}

/* Vertical grid lines at round times, labelled below y_bottom. */
static void x_grid(FILE *out, const taxis *x, double y_top, double y_bottom)
{
    double span = x->hi_ms - x->lo_ms, unit = span >= 5000 ? 1000 : 1;
    const char *uname = unit == 1000 ? "s" : "ms";
    double step = html_nice_step(span / unit * 5 / 8) * unit; /* about 8 ticks */
    fprintf(out, "<g class=\"grid x\">");
    for (double v = ceil(x->lo_ms / step) * step; v <= x->hi_ms + 1e-9; v += step) {
        double px = HTML_LEFT + (v - x->lo_ms) / (span > 0 ? span : 1) * HTML_PLOT_W;
        fprintf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", px, px, y_top,
                y_bottom);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g %s</text>", px,
                y_bottom + 16, v / unit, uname);
    }
    fprintf(out, "</g>\n");
}

/* Thin lines where steps start, labelled when there is room. */
static void step_marks(FILE *out, const html_page *p, const taxis *x, double y_top, double y_bot)
{
    const report_stats *s = p->s;
    if (s->nsteps == 0 || s->nsteps > HTML_PLOT_W / 3)
        return;
    fprintf(out, "<g class=\"step-marks\">");
    double last_label = -1e9;
    for (size_t i = 0; i < s->nsteps; i++) {
        double px = x_of(x, s->steps[i].t_start);
        fprintf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", px, px, y_top,
                y_bot);
        if (px - last_label >= 34) {
            fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">%llu</text>", px + 2, y_top - 3,
                    U(s->steps[i].step));
            last_label = px;
        }
    }
    fprintf(out, "</g>\n");
}

/* ---- device memory over time ---- */

#define MEM_H      300
#define MEM_TOP    16
#define MEM_BOTTOM (MEM_H - 30)

static double layer(const html_point *pt, int k)
{
    uint64_t v = 0;
    if (k >= 1)
        v += pt->device;
    if (k >= 2)
        v += pt->moving;
    if (k >= 3)
        v += pt->host;
    return (double)v;
}

/* The band between cumulative layers k-1 and k as a step function (each sample holds until the
   next; the last until the axis ends). */
static void band(FILE *out, const html_series *h, const taxis *x, const html_axis *a, int k,
                 const char *cls, const char *label)
{
    double hgt = MEM_BOTTOM - MEM_TOP;
    fprintf(out, "<path class=\"area %s\" data-layer=\"%s\" d=\"", cls, label);
    for (size_t i = 0; i < h->n; i++) {
        double px = x_of(x, h->pts[i].t_ns),
               py = html_y_of(a, layer(&h->pts[i], k), MEM_BOTTOM, hgt);
        if (i == 0)
            fprintf(out, "M%.1f %.1f", px, py);
        else
            fprintf(out, "H%.1fV%.1f", px, py);
    }
    fprintf(out, "H%.1f", (double)(HTML_LEFT + HTML_PLOT_W));
    for (size_t i = h->n; i-- > 0;) {
        double px = x_of(x, h->pts[i].t_ns);
        fprintf(out, "V%.1fH%.1f", html_y_of(a, layer(&h->pts[i], k - 1), MEM_BOTTOM, hgt), px);
    }
    fprintf(out, "Z\"><title>%s</title></path>\n", label);
}

/* The budget of h's device as a step line from its first record (nothing when the trace has
   none); budget: the one to label it with. */
static void budget_line(FILE *out, const html_page *p, const html_series *h, const taxis *x,
                        const html_axis *a, uint64_t budget)
{
    const report_trace *t = p->t;
    double hgt = MEM_BOTTOM - MEM_TOP, last_y = 0;
    int any = 0;
    for (size_t i = 0; i < t->n; i++) {
        const report_rec *r = &t->recs[i];
        if (r->kind != SHIM_TRACE_BUDGET ||
            report_record_device(t, r, p->s->primary_device) != h->device)
            continue;
        double px = x_of(x, r->t_ns), py = html_y_of(a, (double)r->a, MEM_BOTTOM, hgt);
        if (!any)
            fprintf(out, "<path class=\"budget\" d=\"M%.1f %.1f", px, py);
        else
            fprintf(out, "H%.1fV%.1f", px, py);
        any = 1;
        last_y = py;
    }
    if (!any)
        return;
    fprintf(out, "H%.1f\"><title>budget</title></path>\n", (double)(HTML_LEFT + HTML_PLOT_W));
    fprintf(out, "<text class=\"budget-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">budget ",
            (double)(HTML_LEFT + HTML_PLOT_W - 4), last_y - 5);
    html_bytes(out, budget);
    fprintf(out, "</text>\n");
}

static void peak_mark(FILE *out, const html_page *p, const taxis *x, const html_axis *a,
                      uint64_t peak, uint64_t peak_t_ns)
{
    if (peak == 0)
        return;
    double px = x_of(x, peak_t_ns);
    double py = html_y_of(a, (double)peak, MEM_BOTTOM, MEM_BOTTOM - MEM_TOP);
    int left = px > HTML_LEFT + HTML_PLOT_W * 0.7;
    fprintf(out, "<g class=\"peak\"><circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\"/>", px, py);
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">peak ", px + (left ? -8 : 8),
            py - 6 < MEM_TOP + 10 ? py + 16 : py - 6, left ? "end" : "start");
    html_bytes(out, peak);
    fprintf(out, " at %.3f s</text></g>\n", html_ms(p->t, peak_t_ns) / 1e3);
}

/* The chart of series h (k: its index in p->mem; 0 the primary device's). */
static void chart_memory(html_page *p, size_t k)
{
    FILE *out = p->out;
    const report_stats *s = p->s;
    const html_series *h = &p->mem[k];
    taxis x = time_axis(p);
    /* the primary's peak and budget are summary's; another device's, its devices entry's (the
       peak's time: the series keeps the largest total of every bucket) */
    uint64_t peak = k == 0 ? s->peak_device_bytes : s->device_peak[h->device];
    uint64_t peak_t = s->peak_t_ns, budget = k == 0 ? s->budget_bytes : s->device_budget[h->device];
    for (size_t i = 0; k != 0 && i < h->n; i++)
        if (h->pts[i].total == peak) { /* the first sample at the peak */
            peak_t = h->pts[i].t_ns;
            break;
        }
    double top = (double)peak;
    for (size_t i = 0; i < h->n; i++)
        top = fmax(top, layer(&h->pts[i], 3));
    top = fmax(top, (double)budget);
    html_axis a = html_axis_bytes(top * 1.05);
    if (p->nmem > 1)
        fprintf(out, "<h3 class=\"chart-title\">GPU %u%s</h3>\n", h->device,
                k == 0 ? " (the primary device: the one libshim serves first)" : "");
    if (k == 0)
        fprintf(out, "<figure class=\"chart\" id=\"%smemory-chart\" ", p->pfx);
    else
        fprintf(out, "<figure class=\"chart\" id=\"%sgpu%u-memory-chart\" ", p->pfx, h->device);
    fprintf(out, "data-device=\"%u\" data-peak-bytes=\"%llu\" data-peak-ms=\"", h->device, U(peak));
    html_double(out, html_ms(p->t, peak_t));
    fprintf(out, "\" data-budget-bytes=\"%llu\" data-points=\"%zu\" data-changes=\"%llu\" ",
            U(budget), h->n, U(h->changes));
    fprintf(out, "data-buckets=\"%zu\">\n", h->buckets);
    fprintf(out,
            "<svg viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"device memory over time\" "
            "data-x0=\"%d\" data-x1=\"%d\" data-y0=\"%d\" data-y1=\"%d\" data-t0-ms=\"",
            HTML_W, MEM_H, HTML_LEFT, HTML_LEFT + HTML_PLOT_W, MEM_TOP, MEM_BOTTOM);
    html_double(out, x.lo_ms);
    fprintf(out, "\" data-t1-ms=\"");
    html_double(out, x.hi_ms);
    fprintf(out, "\" data-y-max-bytes=\"%.0f\">\n", a.max * a.unit);
    html_grid_y(out, &a, HTML_LEFT, HTML_LEFT + HTML_PLOT_W, MEM_BOTTOM, MEM_BOTTOM - MEM_TOP);
    x_grid(out, &x, MEM_TOP, MEM_BOTTOM);
    step_marks(out, p, &x, MEM_TOP, MEM_BOTTOM);
    if (h->n > 0) {
        band(out, h, &x, &a, 1, "device", "on device");
        band(out, h, &x, &a, 2, "moving", "moving");
        band(out, h, &x, &a, 3, "host", "on host");
    }
    budget_line(out, p, h, &x, &a, budget);
    peak_mark(out, p, &x, &a, peak, peak_t);
    fprintf(out,
            "<g class=\"hover\" visibility=\"hidden\"><line y1=\"%d\" y2=\"%d\"/>"
            "<text class=\"readout\" y=\"%d\"></text></g>\n",
            MEM_TOP, MEM_BOTTOM, MEM_TOP + 12);
    fprintf(out, "<rect class=\"hit\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n", HTML_LEFT,
            MEM_TOP, HTML_PLOT_W, MEM_BOTTOM - MEM_TOP);
    fprintf(out, "</svg>\n");
    static const char *const cls[] = {"device", "moving", "host", "budget", "peak"};
    static const char *const labels[] = {"on device", "moving (evicting, restoring)", "on host",
                                         "budget", "peak of the allocations"};
    html_legend(out, cls, labels, 5);
    fprintf(out, "</figure>\n");
}

/* Contract in report_html.h. */
void html_chart_memory(html_page *p)
{
    for (size_t k = 0; k < p->nmem; k++)
        chart_memory(p, k);
    if (p->t->major == 1 && p->t->minor < 2)
        fprintf(p->out, "<p class=\"note\">This trace is older than format 1.2 (no residency "
                        "transitions): all of it is drawn as on the device.</p>\n");
}

/* ---- bar charts (steps, plan) ---- */

/* Contract in report_html.h. Per step: the stall at the bottom, the rest of the wall time
   above it. */
void html_chart_steps(html_page *p)
{
    FILE *out = p->out;
    const report_stats *s = p->s;
    if (s->nsteps == 0)
        return;
    html_bars b = html_bars_make(s->nsteps, HTML_MAX_BARS);
    double *wall = calloc(b.n, sizeof *wall), *stall = calloc(b.n, sizeof *stall);
    uint64_t *label = calloc(b.n, sizeof *label);
    if (!wall || !stall || !label) {
        free(wall), free(stall), free(label);
        return;
    }
    double top = 0;
    for (size_t k = 0; k < b.n; k++) {
        size_t from = k * b.per, to = from + b.per < s->nsteps ? from + b.per : s->nsteps;
        for (size_t i = from; i < to; i++) {
            double w = report_step_wall_us(&s->steps[i]);
            wall[k] += w > 0 ? w : 0;
            stall[k] += (double)s->steps[i].residency.stall_ns / 1e3;
        }
        wall[k] /= (double)(to - from);
        stall[k] /= (double)(to - from);
        label[k] = s->steps[from].step;
        top = fmax(top, fmax(wall[k], stall[k]));
    }
    html_axis a = html_axis_us(top * 1.05);
    double w = (double)HTML_PLOT_W / (double)b.n, gap = w > 6 ? w * 0.18 : 0;
    fprintf(out,
            "<figure class=\"chart\" id=\"%ssteps-chart\" data-steps=\"%zu\" data-bars=\"%zu\" "
            "data-per-bar=\"%zu\">\n",
            p->pfx, s->nsteps, b.n, b.per);
    fprintf(out,
            "<svg viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"per step: stall and the "
            "rest of the wall time\">\n",
            HTML_W, HTML_BAR_H);
    html_grid_y(out, &a, HTML_LEFT, HTML_LEFT + HTML_PLOT_W, HTML_BAR_BOTTOM,
                HTML_BAR_BOTTOM - HTML_BAR_TOP);
    for (size_t k = 0; k < b.n; k++) {
        double x0 = HTML_LEFT + k * w + gap / 2, bw = w - gap;
        double st = fmin(stall[k], wall[k]); /* threads may stall at once: clipped to the wall */
        double y_stall = html_y_of(&a, st, HTML_BAR_BOTTOM, HTML_BAR_BOTTOM - HTML_BAR_TOP);
        double y_wall = html_y_of(&a, wall[k], HTML_BAR_BOTTOM, HTML_BAR_BOTTOM - HTML_BAR_TOP);
        if (b.per == 1) {
            const report_step *sp = &s->steps[k];
            fprintf(out, "<g class=\"bar\" data-step=\"%llu\" data-wall-us=\"", U(sp->step));
            double wu = report_step_wall_us(sp);
            if (wu >= 0)
                html_double(out, wu);
            else
                fputs("null", out);
            fprintf(out, "\" data-stall-us=\"");
            html_double(out, (double)sp->residency.stall_ns / 1e3);
            fprintf(out, "\">");
        } else {
            fprintf(out, "<g class=\"bar\" data-first-step=\"%llu\">", U(label[k]));
        }
        fprintf(out, "<title>step%s %llu%s: wall ", b.per > 1 ? "s from" : "", U(label[k]),
                b.per > 1 ? " (mean)" : "");
        html_duration_us(out, wall[k]);
        fprintf(out, ", stalled ");
        html_duration_us(out, stall[k]);
        fprintf(out, " (%.0f%%)</title>", wall[k] > 0 ? 100 * stall[k] / wall[k] : 0.0);
        fprintf(out, "<rect class=\"run\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\"/>",
                x0, y_wall, bw, y_stall - y_wall);
        fprintf(out, "<rect class=\"stall\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\"/>",
                x0, y_stall, bw, HTML_BAR_BOTTOM - y_stall);
        fprintf(out, "</g>\n");
    }
    html_bar_labels(out, b.n, HTML_LEFT, w, label);
    fprintf(out,
            "<text class=\"axis-title\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">step%s</text>",
            HTML_LEFT + HTML_PLOT_W / 2, HTML_BAR_H - 2,
            b.per > 1 ? " (bars: means of consecutive steps)" : "");
    fprintf(out, "</svg>\n");
    static const char *const cls[] = {"stall", "run"};
    static const char *const labels[] = {"stalled on residency",
                                         "the rest of the step (compute, launch, host work)"};
    html_legend(out, cls, labels, 2);
    fprintf(out, "</figure>\n");
    free(wall), free(stall), free(label);
}

/* ---- residency moves on a timeline ---- */

#define LANE_H 30

static const char *reason_label(uint32_t r)
{
    return r == 0 ? "other" : report_move_reason_name(r);
}

/* One bar of merged moves. */
typedef struct run {
    double x0, x1;
    uint64_t count, bytes, t0, t1;
    size_t first; /* the first move's index, for a single move's details */
} run;

static void emit_run(FILE *out, const html_page *p, const run *r, int to_host, uint32_t reason,
                     double y, size_t *rects)
{
    double w = r->x1 - r->x0 < 1 ? 1 : r->x1 - r->x0;
    fprintf(out,
            "<rect class=\"%s\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"11\" "
            "data-count=\"%llu\"><title>",
            to_host ? "to-host" : "to-device", r->x0, y, w, U(r->count));
    if (r->count == 1) {
        const report_move *mv = &p->m->moves[r->first];
        fprintf(out, "%s %llu%s: ", mv->slab ? "slab" : "allocation", U(mv->unit),
                to_host ? " to host" : " to device");
    } else {
        fprintf(out, "%llu moves%s: ", U(r->count), to_host ? " to host" : " to device");
    }
    html_bytes(out, r->bytes);
    fprintf(out, ", %s, %.3f to %.3f ms</title></rect>", reason_label(reason), html_ms(p->t, r->t0),
            html_ms(p->t, r->t1));
    (*rects)++;
}

/* A lane of the timeline: the moves of one reason on one device. */
typedef struct lane {
    uint32_t device, reason;
    uint64_t moves;
} lane;

/* The moves of one lane and direction, in start order, merged where they overlap or come
   within a pixel of each other. */
static void lane_row(FILE *out, const html_page *p, const taxis *x, const lane *ln, int to_host,
                     double y, size_t *rects)
{
    uint32_t reason = ln->reason;
    const report_moves *m = p->m;
    run cur = {0};
    int open = 0;
    for (size_t i = 0; i < m->nmoves; i++) {
        const report_move *mv = &m->moves[i];
        uint32_t r = mv->reason < REPORT_REASONS ? mv->reason : 0;
        if (r != reason || mv->device != ln->device || (mv->event == SHIM_EV_EVICT) != to_host)
            continue;
        uint64_t end = mv->end_rec != SIZE_MAX ? mv->t_end : x->hi; /* unfinished: to the end */
        double x0 = x_of(x, mv->t_start), x1 = x_of(x, end);
        if (open && x0 <= cur.x1 + 1) {
            cur.x1 = fmax(cur.x1, x1);
            cur.count++;
            cur.bytes += mv->bytes;
            cur.t1 = end > cur.t1 ? end : cur.t1;
            continue;
        }
        if (open)
            emit_run(out, p, &cur, to_host, reason, y, rects);
        cur = (run){x0, x1, 1, mv->bytes, mv->t_start, end, i};
        open = 1;
    }
    if (open)
        emit_run(out, p, &cur, to_host, reason, y, rects);
}

/* The lanes: by device (in order), then by reason (other last); n: how many. */
static lane *lanes_of(const report_moves *m, size_t *n)
{
    *n = 0;
    lane *l = calloc(REPORT_MAX_DEVICES * REPORT_REASONS, sizeof *l);
    if (l == NULL)
        return NULL;
    for (size_t i = 0; i < m->nmoves; i++) {
        const report_move *mv = &m->moves[i];
        uint32_t r = mv->reason < REPORT_REASONS ? mv->reason : 0;
        l[mv->device * REPORT_REASONS + (r + REPORT_REASONS - 1) % REPORT_REASONS].moves++;
    }
    for (size_t k = 0; k < REPORT_MAX_DEVICES * REPORT_REASONS; k++)
        if (l[k].moves > 0)
            l[(*n)++] = (lane){(uint32_t)(k / REPORT_REASONS),
                               (uint32_t)(k % REPORT_REASONS + 1) % REPORT_REASONS, l[k].moves};
    return l;
}

/* Contract in report_html.h. */
void html_chart_moves(html_page *p)
{
    FILE *out = p->out;
    const report_moves *m = p->m;
    if (m->nmoves == 0)
        return;
    size_t nl;
    lane *lanes = lanes_of(m, &nl);
    if (lanes == NULL)
        return;
    int several = lanes[0].device != lanes[nl - 1].device; /* moves on several devices */
    taxis x = time_axis(p);
    int top = 14, h = top + (int)nl * LANE_H + 30;
    fprintf(out,
            "<figure class=\"chart\" id=\"%smoves-chart\" data-moves=\"%zu\" data-lanes=\"%zu\">\n",
            p->pfx, m->nmoves, nl);
    fprintf(out,
            "<svg viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"residency moves on a "
            "timeline, by %sreason\">\n",
            HTML_W, h, several ? "device and " : "");
    x_grid(out, &x, top, top + nl * LANE_H);
    step_marks(out, p, &x, top, top + nl * LANE_H);
    size_t rects = 0;
    for (size_t l = 0; l < nl; l++) {
        double y = top + l * LANE_H;
        fprintf(out, "<g class=\"lane\" data-device=\"%u\" data-reason=\"%s\" data-moves=\"%llu\">",
                lanes[l].device, reason_label(lanes[l].reason), U(lanes[l].moves));
        fprintf(out, "<text class=\"lane-label\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s",
                HTML_LEFT - 6, y + LANE_H / 2 + (several ? -1 : 4), reason_label(lanes[l].reason));
        if (several) /* the device under the reason */
            fprintf(out, "<tspan class=\"lane-device\" x=\"%d\" dy=\"11\">GPU %u</tspan>",
                    HTML_LEFT - 6, lanes[l].device);
        fprintf(out, "</text>");
        fprintf(out, "<line class=\"lane-sep\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>",
                HTML_LEFT, HTML_LEFT + HTML_PLOT_W, y + LANE_H, y + LANE_H);
        lane_row(out, p, &x, &lanes[l], 1, y + 3, &rects);
        lane_row(out, p, &x, &lanes[l], 0, y + 16, &rects);
        fprintf(out, "</g>\n");
    }
    fprintf(out, "</svg>\n");
    static const char *const cls[] = {"to-host", "to-device"};
    static const char *const labels[] = {"eviction (to host), upper row",
                                         "restore (to device), lower row"};
    html_legend(out, cls, labels, 2);
    fprintf(out,
            "<p class=\"note\" id=\"%smoves-drawn\" data-rects=\"%zu\">%zu moves drawn as %zu "
            "bars.</p>\n",
            p->pfx, rects, m->nmoves, rects);
    fprintf(out, "</figure>\n");
    free(lanes);
}

/* ---- the plan: predicted against achieved ---- */

#define PANEL_GAP 90

/* One panel of paired bars (predicted, achieved) per step under the plan, from x0, w wide. */
static void pair_panel(FILE *out, const report_plan_row *v, size_t n, const report_trace *t,
                       double x0, double width, int bytes)
{
    html_bars b = html_bars_make(n, HTML_MAX_BARS);
    double *pred = calloc(b.n, sizeof *pred), *done = calloc(b.n, sizeof *done);
    uint64_t *label = calloc(b.n, sizeof *label);
    if (!pred || !done || !label) {
        free(pred), free(done), free(label);
        return;
    }
    double top = 0;
    for (size_t k = 0; k < b.n; k++) {
        size_t from = k * b.per, to = from + b.per < n ? from + b.per : n;
        for (size_t i = from; i < to; i++) {
            const report_plan *pl = v[i].plan == SIZE_MAX ? NULL : &t->plans[v[i].plan];
            double wall = report_plan_row_wall_us(&v[i]);
            if (bytes) {
                pred[k] += pl ? (double)pl->bytes_to_host + (double)pl->bytes_to_device : 0;
                done[k] += (double)v[i].ps->bytes_to_host + (double)v[i].ps->bytes_to_device;
            } else {
                pred[k] += pl && isfinite(pl->predicted_us) ? pl->predicted_us : 0;
                done[k] += wall > 0 ? wall : 0;
            }
        }
        pred[k] /= (double)(to - from);
        done[k] /= (double)(to - from);
        label[k] = v[from].ps->step;
        top = fmax(top, fmax(pred[k], done[k]));
    }
    html_axis a = bytes ? html_axis_bytes(top * 1.05) : html_axis_us(top * 1.05);
    html_grid_y(out, &a, x0, x0 + width, HTML_BAR_BOTTOM, HTML_BAR_BOTTOM - HTML_BAR_TOP);
    double w = width / (double)b.n, gap = w > 8 ? w * 0.2 : 0, bw = (w - gap) / 2;
    for (size_t k = 0; k < b.n; k++) {
        double bx = x0 + k * w + gap / 2;
        double yp = html_y_of(&a, pred[k], HTML_BAR_BOTTOM, HTML_BAR_BOTTOM - HTML_BAR_TOP);
        double yd = html_y_of(&a, done[k], HTML_BAR_BOTTOM, HTML_BAR_BOTTOM - HTML_BAR_TOP);
        fprintf(out, "<g class=\"pair\" data-step=\"%llu\"%s>", U(label[k]),
                b.per > 1 ? " data-mean=\"1\"" : "");
        fprintf(out,
                "<rect class=\"predicted\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
                "height=\"%.1f\"><title>step %llu: predicted ",
                bx, yp, bw, HTML_BAR_BOTTOM - yp, U(label[k]));
        if (bytes)
            html_bytes(out, (uint64_t)pred[k]);
        else
            html_duration_us(out, pred[k]);
        fprintf(out,
                "</title></rect><rect class=\"achieved\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
                "height=\"%.1f\"><title>step %llu: %s ",
                bx + bw, yd, bw, HTML_BAR_BOTTOM - yd, U(label[k]), bytes ? "moved" : "wall");
        if (bytes)
            html_bytes(out, (uint64_t)done[k]);
        else
            html_duration_us(out, done[k]);
        fprintf(out, "</title></rect></g>\n");
    }
    html_bar_labels(out, b.n, x0, w, label);
    fprintf(out,
            "<text class=\"axis-title\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
            x0 + width / 2, HTML_BAR_H - 2,
            bytes ? "bytes moved per step (to host + to device)" : "step time");
    free(pred), free(done), free(label);
}

/* Contract in report_html.h. */
void html_chart_plan(html_page *p)
{
    FILE *out = p->out;
    const report_trace *t = p->t;
    report_plan_row *v = report_plan_rows(t, p->s); /* NULL: no step under a plan, or no memory */
    if (v == NULL)
        return;
    size_t n = t->nplan_steps;
    fprintf(out,
            "<figure class=\"chart\" id=\"%splan-chart\" data-plan-steps=\"%zu\" "
            "data-plans=\"%zu\">\n",
            p->pfx, n, t->nplans);
    fprintf(out,
            "<svg viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"predicted against "
            "achieved per step under the plan\">\n",
            HTML_W, HTML_BAR_H);
    double width = (HTML_PLOT_W - PANEL_GAP) / 2.0;
    pair_panel(out, v, n, t, HTML_LEFT, width, 0);
    pair_panel(out, v, n, t, HTML_LEFT + width + PANEL_GAP, width, 1);
    fprintf(out, "</svg>\n");
    static const char *const cls[] = {"predicted", "achieved"};
    static const char *const labels[] = {"predicted by the plan (model time)",
                                         "achieved (wall time, host clock)"};
    html_legend(out, cls, labels, 2);
    fprintf(out, "</figure>\n");
    free(v);
}
