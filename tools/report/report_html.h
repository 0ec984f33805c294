/* report_html.h — `shim-report html`: one self-contained HTML page of a trace. Shared by
 *   report_html.c         the page: skeleton, headline figures, configuration, the data block
 *   report_html_tables.c  the sortable tables (steps, plans, allocations, kernels, moves)
 *   report_html_cells.c   the tables' header rows and cells, from each table's one list of
 *                         columns (report_html_cells.h)
 *   report_html_svg.c     the charts, drawn here as inline SVG
 *   report_html_series.c  device memory over time by residency state, downsampled for the view
 *   report_html_axis.c    what the charts share: axes, grid, legends, bar counts
 *   report_html_ranks.c   the page of several traces (ranks): the ranks side by side, then each
 *   report_html_verdict.c the verdict at the top of the page
 * and the page's style sheet and script (tools/report/report_html.css,
 * tools/report/report_html.js), which the build turns into C strings (html_assets.c in the build
 * folder; see tools/module.mk).
 *
 * Every figure the page shows comes from the computations the other subcommands use
 * (report_stats_compute, report_moves_compute, report_summary_print, report_top_allocs), and
 * is in the page twice: as text for a person and, machine-checkably, as data-* attributes (the
 * same decimal text summary --json writes) and in the JSON block <script id="shim-data">.
 */
#ifndef REPORT_HTML_H
#define REPORT_HTML_H

#include "report.h"

#include <stdint.h>
#include <stdio.h>

/* One sample of the memory chart: the program's device bytes (the alloc/free walk that gives
   peak_device_bytes) and how much of it was, by the residency transitions (format 1.2 on),
   on the host or moving (evicting or restoring); device is the rest. */
typedef struct html_point {
    uint64_t t_ns;
    uint64_t total, device, host, moving;
} html_point;

/* The samples drawn: of every change point, per time bucket (a pixel column) at most the
   ones with the smallest and largest total, the largest device, and the bucket's last (the
   state carried on), in time order. The largest total of all is kept: peak_device_bytes. */
typedef struct html_series {
    uint32_t device; /* the device (a slot) */
    html_point *pts;
    size_t n;
    uint64_t changes; /* change points before downsampling */
    size_t buckets;
    uint64_t t_lo, t_hi; /* the time axis, ns: the earliest record (or start) to the last */
} html_series;

/* Computes the series of device `device` (a slot) of t (s: report_stats_compute of t) over
   `buckets` buckets of [t_lo, t_hi]. 0, or -1 when memory ran out (out is then empty). */
int html_series_compute(html_series *out, const report_trace *t, const report_stats *s,
                        size_t buckets, uint32_t device);
/* Frees what html_series_compute made; h is then empty. */
void html_series_free(html_series *h);

/* What the page (or, with several traces, one rank's part of it) is made of. */
typedef struct html_page {
    FILE *out;
    const report_trace *t;
    const report_stats *s;
    const report_moves *m;
    html_series *mem; /* mem[0]: the primary device's; then every other device the reports
                         show (report_device_shown), by ordinal */
    size_t nmem;
    long top;
    const char *pfx; /* before every element id: "" for one trace, "rK-" for the K-th rank */
} html_page;

/* Geometry shared by the time charts (SVG user units; the charts scale to the page's width),
   so that the memory chart and the moves timeline line up. */
#define HTML_W      1000
#define HTML_LEFT   78
#define HTML_RIGHT  16
#define HTML_PLOT_W (HTML_W - HTML_LEFT - HTML_RIGHT)

/* ---- report_html_verdict.c ---- */

/* The verdict section (id "verdict" after p's prefix): the answer as a sentence, then its
   figures, each with data-key and data-value as summary --json's "verdict" has them. */
void html_verdict(html_page *p);

/* ---- report_html.c: escaping and formatting ---- */

/* Text from the trace for HTML text or a quoted attribute value: & < > " ' as character
   references, invalid UTF-8 and control bytes (but tab and newline) as U+FFFD. */
void html_text(FILE *out, const char *s);

/* A number the way summary --json writes it (for data-* attributes). */
void html_u(FILE *out, uint64_t v);
/* A double the same way: "%.3f", 0 when it is not finite. */
void html_double(FILE *out, double v);

/* Human-readable: "1.98 GiB", "512.0 MiB", "12.0 KiB", "100 B". */
void html_bytes(FILE *out, uint64_t bytes);
/* A duration given in microseconds: "1.234 s", "45.6 ms", "789.0 us". */
void html_duration_us(FILE *out, double us);

/* The time axis of the trace, in milliseconds since its start (INFO start_ns). */
double html_ms(const report_trace *t, uint64_t ns);

/* ---- report_html.c: the page's parts, for report_html_ranks.c ---- */

/* Fills p for trace t (s: report_stats_compute of t): its moves and memory series. 0, or -1
   when memory ran out (p then owns nothing). */
int html_page_open(html_page *p, FILE *out, const report_trace *t, const report_stats *s, long top,
                   const char *pfx);
/* Frees what html_page_open made (the moves, the memory series); p then owns nothing. */
void html_page_close(html_page *p);

/* From <!DOCTYPE html> to the <body>'s error box, the page titled `title`. */
void html_begin(FILE *out, const char *title);

/* The trace's warnings (truncated, dropped records), the headline figures and every section,
   element ids prefixed with p->pfx. */
void html_trace_warnings(html_page *p);
/* The headline figures and every section of one trace's page, in page order. */
void html_sections(html_page *p);

/* The footer, the data block holding len bytes of JSON at json (made safe for a <script>), the
   page's script, and the end of the page. */
void html_end(FILE *out, const char *json, size_t len, long top);

/* The memory series h of p as the data block's "memory" object (the budget records of its
   device). */
void html_json_memory(FILE *out, const html_page *p, const html_series *h);
/* The other devices' series of p (mem[1..]) as the data block's "device_memory" list:
   [{"device": D, "chart": "gpuD-memory-chart" (its id without p->pfx), "memory": {...}}]. */
void html_json_device_memory(FILE *out, const html_page *p);

/* ---- report_html_axis.c: what the charts share ---- */

#define HTML_MAX_BARS   240 /* bars in one chart at most */
#define HTML_BAR_H      240 /* a bar chart's height, and where its plot starts and ends */
#define HTML_BAR_TOP    14
#define HTML_BAR_BOTTOM (HTML_BAR_H - 34)

/* A value axis from 0 to max (in units of `unit`, named uname), ticks every step. */
typedef struct html_axis {
    double max, step, unit;
    const char *uname;
} html_axis;

/* 1, 2 or 5 times a power of ten, at least x / 5 (1 when x is not above 0). */
double html_nice_step(double x);

/* Axes whose top is at least max: in B, KiB, MiB or GiB; in us, ms or s. */
html_axis html_axis_bytes(double max);
/* The same for microseconds: us, ms or s. */
html_axis html_axis_us(double max);

/* The y of value v (in base units) on axis a, for a plot from y_bottom up h units (clipped to
   a little above the top). */
double html_y_of(const html_axis *a, double v, double y_bottom, double h);

/* Horizontal grid lines of a from x0 to x1, with their labels left of x0. */
void html_grid_y(FILE *out, const html_axis *a, double x0, double x1, double y_bottom, double h);

/* A <figcaption> of n swatches (CSS classes cls, "sw" added) and their labels. */
void html_legend(FILE *out, const char *const *cls, const char *const *labels, size_t n);

/* How `entries` bars fit in at most max_bars: per entries to a bar (the mean of consecutive
   ones, the last bar may have fewer), n bars. */
typedef struct html_bars {
    size_t n, per;
} html_bars;
/* The bars of `entries` entries drawn as at most max_bars bars. */
html_bars html_bars_make(size_t entries, size_t max_bars);

/* x labels under nbars bars w wide from x0: every k-th, about 20 of them. */
void html_bar_labels(FILE *out, size_t nbars, double x0, double w, const uint64_t *labels);

/* ---- report_html_svg.c: the charts, each a <figure> with data-* attributes ---- */

/* The primary device's memory chart (id memory-chart), then every other device's shown (id
   gpuD-memory-chart, data-device D). */
void html_chart_memory(html_page *p);
/* The steps chart (id steps-chart): per step its stall and the rest of its wall time; nothing
   without steps. */
void html_chart_steps(html_page *p);
/* The moves timeline (id moves-chart): a lane per device and reason; nothing without moves. */
void html_chart_moves(html_page *p);
/* The plan chart (id plan-chart): predicted against achieved per step under the plan; nothing
   without plan_step records. */
void html_chart_plan(html_page *p);

/* ---- report_html_tables.c: <table class="sortable"> with one column per summary --json key
   (th data-key, data-type "num" or "text"), numbers in td data-value ---- */

/* The steps table (id steps-table), summary --json's steps. */
void html_table_steps(html_page *p);
/* The plans table (id plans-table), summary --json's plans. */
void html_table_plans(html_page *p);
/* The plan steps table (id plan-steps-table); nothing without plan_step records. */
void html_table_plan_steps(html_page *p);
/* The top allocations table (id allocations-table), cut at p->top. */
void html_table_allocs(html_page *p);
/* With allocations on more than one device (trace format 1.6): a note that the headline
   figures are the primary device's and where each device's charts are, and each device's
   allocations, peak, budget and moves (id devices-table, summary --json's devices); nothing
   otherwise. */
void html_table_devices(html_page *p);
/* The kernels table (id kernels-table), cut at p->top. */
void html_table_kernels(html_page *p);
/* The moves by reason and by outcome (ids moves-by-reason, moves-by-outcome) and their bytes;
   a note instead when no move was recorded. */
void html_table_moves(html_page *p);
/* The ranks side by side (id ranks-table): per rank, summary TRACE...'s totals (steps, median
   step, peak, moves, bytes each way, stalls), one row per rank in rk's order. */
void html_table_ranks(FILE *out, const report_ranks *rk);

/* ---- html_assets.c (generated from tools/report/report_html.css and tools/report/report_html.js)
 * ---- */

extern const char report_html_css[];
extern const char report_html_js[];

#endif
