/* report_html.h — `shim-report html`: one self-contained HTML page of a trace. Shared by
 *   report_html.c         the page: skeleton, headline figures, configuration, the data block
 *   report_html_tables.c  the sortable tables (steps, plans, allocations, kernels, moves)
 *   report_html_svg.c     the charts, drawn here as inline SVG
 *   report_html_series.c  device memory over time by residency state, downsampled for the view
 * and the page's style sheet and script (tools/report_html.css, tools/report_html.js), which the
 * build turns into C strings (html_assets.c in the build folder; see tools/module.mk).
 *
 * Every figure the page shows comes from the computations the other subcommands use
 * (report_stats_compute, report_moves_compute, report_summary_print, report_top_allocs), and
 * is in the page twice: as text for a person and, machine-checkably, as data-* attributes (the
 * same decimal text summary --json writes) and in the JSON block <script id="shim-data">.
 */
#ifndef REPORT_HTML_H
#define REPORT_HTML_H

#include "report_trace.h"

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
    html_point *pts;
    size_t n;
    uint64_t changes; /* change points before downsampling */
    size_t buckets;
    uint64_t t_lo, t_hi; /* the time axis, ns: the earliest record (or start) to the last */
} html_series;

/* Computes the series of t (s: report_stats_compute of t) over `buckets` buckets of
   [t_lo, t_hi]. 0, or -1 when memory ran out (out is then empty). */
int html_series_compute(html_series *out, const report_trace *t, const report_stats *s,
                        size_t buckets);
void html_series_free(html_series *h);

/* What the page is made of. */
typedef struct html_page {
    FILE *out;
    const report_trace *t;
    const report_stats *s;
    const report_moves *m;
    html_series mem;
    long top;
} html_page;

/* Geometry shared by the time charts (SVG user units; the charts scale to the page's width),
   so that the memory chart and the moves timeline line up. */
#define HTML_W      1000
#define HTML_LEFT   78
#define HTML_RIGHT  16
#define HTML_PLOT_W (HTML_W - HTML_LEFT - HTML_RIGHT)

/* ---- report_html.c: escaping and formatting ---- */

/* Text from the trace for HTML text or a quoted attribute value: & < > " ' as character
   references, invalid UTF-8 and control bytes (but tab and newline) as U+FFFD. */
void html_text(FILE *out, const char *s);

/* A number the way summary --json writes it (for data-* attributes). */
void html_u(FILE *out, uint64_t v);
void html_double(FILE *out, double v); /* "%.3f", 0 when not finite */

/* Human-readable: "1.98 GiB", "512.0 MiB", "12.0 KiB", "100 B". */
void html_bytes(FILE *out, uint64_t bytes);
/* A duration given in microseconds: "1.234 s", "45.6 ms", "789.0 us". */
void html_duration_us(FILE *out, double us);

/* The time axis of the trace, in milliseconds since its start (INFO start_ns). */
double html_ms(const report_trace *t, uint64_t ns);

/* ---- report_html_svg.c: the charts, each a <figure> with data-* attributes ---- */

void html_chart_memory(html_page *p);
void html_chart_steps(html_page *p);
void html_chart_moves(html_page *p);
void html_chart_plan(html_page *p);

/* ---- report_html_tables.c: <table class="sortable"> with one column per summary --json key
   (th data-key, data-type "num" or "text"), numbers in td data-value ---- */

void html_table_steps(html_page *p);
void html_table_plans(html_page *p);
void html_table_plan_steps(html_page *p);
void html_table_allocs(html_page *p);
void html_table_kernels(html_page *p);
void html_table_moves(html_page *p);

/* ---- html_assets.c (generated from tools/report_html.css and tools/report_html.js) ---- */

extern const char report_html_css[];
extern const char report_html_js[];

#endif
