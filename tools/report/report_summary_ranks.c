/* report_summary_ranks.c — `shim-report summary` of several traces, the ranks of one job, side by
 * side: each rank's verdict first, then one column per trace, ordered by the rank its header
 * records, in the totals and in the per-step tables (wall time, peak device bytes, bytes moved,
 * stalls) keyed by step number. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#define U(x)       ((unsigned long long)(x))
#define MIN_WIDTH  14 /* of a column */
#define NAME_WIDTH 24

/* The totals rows, in the order of column.totals. */
static const char *const total_names[] = {
    "duration_ms",
    "iterations",
    "median_step_ms",
    "launches_per_iteration",
    "launches",
    "allocations",
    "frees",
    "copies",
    "syncs",
    "kernel_times",
    "peak_device_bytes",
    "resident_peak_bytes",
    "peak_host_pinned_bytes",
    "budget_bytes",
    "evictions",
    "restores",
    "bytes_to_host",
    "bytes_to_device",
    "stalls",
    "stall_us",
    "dropped_records",
};
#define TOTALS (sizeof total_names / sizeof total_names[0])

/* A table cell: a count, a figure with decimals, or nothing ("-"). */
typedef struct cell {
    enum { CELL_NONE, CELL_COUNT, CELL_FIGURE } kind;
    uint64_t count;
    double figure;
} cell;

/* One trace (report_ranks.c orders and labels them) and its totals. */
typedef struct column {
    const report_rank *r;
    const report_trace *t;
    const report_stats *s;
    cell totals[TOTALS];
} column;

static cell count_cell(uint64_t v)
{
    return (cell){CELL_COUNT, v, 0.0};
}

static cell figure_cell(double v)
{
    return (cell){CELL_FIGURE, 0, v};
}

static void print_cell(FILE *out, cell c, int width)
{
    if (c.kind == CELL_COUNT)
        fprintf(out, " %*llu", width, U(c.count));
    else if (c.kind == CELL_FIGURE)
        fprintf(out, " %*.3f", width, c.figure);
    else
        fprintf(out, " %*s", width, "-");
}

/* The columns' width: at least MIN_WIDTH, and one more than the widest label. */
static int column_width(const column *c, size_t n)
{
    int width = MIN_WIDTH;
    for (size_t i = 0; i < n; i++) {
        int len = (int)strlen(c[i].r->label);
        if (len + 1 > width)
            width = len + 1; /* two spaces between labels */
    }
    return width;
}

/* The step's wall time (its window) in ms, or nothing without a window. */
static cell step_ms(const report_step *st)
{
    double ms = report_ranks_step_ms(st);
    return ms < 0 ? (cell){CELL_NONE, 0, 0.0} : figure_cell(ms);
}

/* Fills c->totals. */
static void totals_of(column *c)
{
    const report_stats *s = c->s;
    const report_residency *x = &s->residency;
    cell median =
        c->r->median_step_ms < 0 ? (cell){CELL_NONE, 0, 0.0} : figure_cell(c->r->median_step_ms);
    cell all[] = {figure_cell((double)(s->last_ns - s->first_ns) / 1e6),
                  count_cell(s->nsteps),
                  median,
                  count_cell(s->launches_per_iteration),
                  count_cell(s->launches),
                  count_cell(s->allocations),
                  count_cell(s->frees),
                  count_cell(s->copies),
                  count_cell(s->syncs),
                  count_cell(s->kernel_times),
                  count_cell(s->peak_device_bytes),
                  c->t->have_resident_peak ? count_cell(c->t->resident_peak_bytes)
                                           : (cell){CELL_NONE, 0, 0.0},
                  count_cell(s->peak_host_bytes),
                  count_cell(s->budget_bytes),
                  count_cell(x->moves.evictions),
                  count_cell(x->moves.restores),
                  count_cell(x->moves.bytes_to_host),
                  count_cell(x->moves.bytes_to_device),
                  count_cell(x->stalls),
                  figure_cell((double)x->stall_ns / 1e3),
                  count_cell(c->t->dropped)};
    _Static_assert(sizeof all / sizeof all[0] == TOTALS, "a cell for every totals row");
    memcpy(c->totals, all, sizeof all);
}

static void text_traces(FILE *out, const column *c, size_t n)
{
    fprintf(out, "traces: %zu, side by side by rank\n", n);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "  %s: ", c[i].r->label);
        report_text_string(out, c[i].t->name);
        fprintf(out, " (pid %d, format %u.%u, ", c[i].t->pid, c[i].t->major, c[i].t->minor);
        report_text_string(out, c[i].t->truncated ? c[i].t->note : "complete");
        fprintf(out, ")\n");
    }
}

static void text_header(FILE *out, const char *title, const char *first, int first_width,
                        const column *c, size_t n, int width)
{
    fprintf(out, "\n%s:\n  %-*s", title, first_width, first);
    for (size_t i = 0; i < n; i++)
        fprintf(out, " %*s", width, c[i].r->label);
    fputc('\n', out);
}

static void text_totals(FILE *out, const column *c, size_t n, int width)
{
    text_header(out, "totals", "", NAME_WIDTH, c, n, width);
    for (size_t r = 0; r < TOTALS; r++) {
        fprintf(out, "  %-*s", NAME_WIDTH, total_names[r]);
        for (size_t i = 0; i < n; i++)
            print_cell(out, c[i].totals[r], width);
        fputc('\n', out);
    }
}

/* What the per-step tables show of a step. */
enum { PER_STEP_MS, PER_STEP_PEAK, PER_STEP_MOVED, PER_STEP_STALL };

static cell per_step(const report_step *st, int what)
{
    if (st == NULL)
        return (cell){CELL_NONE, 0, 0.0};
    const report_residency *x = &st->residency;
    switch (what) {
    case PER_STEP_MS:
        return step_ms(st);
    case PER_STEP_PEAK:
        return count_cell(st->peak_device_bytes);
    case PER_STEP_MOVED:
        return count_cell(x->moves.bytes_to_host + x->moves.bytes_to_device);
    default:
        return figure_cell((double)x->stall_ns / 1e3);
    }
}

static void text_per_step(FILE *out, const char *title, int what, const column *c, size_t n,
                          int width, const uint64_t *steps, size_t nsteps)
{
    text_header(out, title, "step", 6, c, n, width);
    for (size_t k = 0; k < nsteps; k++) {
        fprintf(out, "  %6llu", U(steps[k]));
        for (size_t i = 0; i < n; i++)
            print_cell(out, per_step(report_ranks_step(c[i].r, steps[k]), what), width);
        fputc('\n', out);
    }
}

/* Whether any trace moved memory or stalled. */
static int any_residency(const column *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const report_residency *x = &c[i].s->residency;
        if (x->moves.evictions + x->moves.cancelled_evictions + x->moves.restores + x->stalls > 0)
            return 1;
    }
    return 0;
}

/* The answer first: each rank's verdict (report_verdict.c), one line each. */
static void text_verdicts(FILE *out, const column *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        report_verdict v;
        report_verdict_make(c[i].t, c[i].s, &v);
        fprintf(out, "verdict %s: ", c[i].r->label);
        report_verdict_sentence(out, &v);
        fputc('\n', out);
    }
}

static void text_print(FILE *out, const column *c, size_t n, const uint64_t *steps, size_t nsteps)
{
    int width = column_width(c, n);
    text_verdicts(out, c, n);
    text_traces(out, c, n);
    text_totals(out, c, n, width);
    text_per_step(out, "step_ms by step (wall time)", PER_STEP_MS, c, n, width, steps, nsteps);
    text_per_step(out, "peak_device_bytes by step", PER_STEP_PEAK, c, n, width, steps, nsteps);
    if (any_residency(c, n)) {
        text_per_step(out, "bytes_moved by step (to host and to device)", PER_STEP_MOVED, c, n,
                      width, steps, nsteps);
        text_per_step(out, "stall_us by step", PER_STEP_STALL, c, n, width, steps, nsteps);
    }
    fprintf(out, "\n(shim-report summary TRACE: one rank's allocations, kernels and plans)\n");
}

static void json_print(FILE *out, const column *c, size_t n, long top)
{
    fprintf(out, "{\"ranks\": [");
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%d", i ? ", " : "", c[i].t->rank);
    fprintf(out, "], \"traces\": [");
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "%s", i ? ", " : "");
        report_summary_json(out, c[i].t, c[i].s, top);
    }
    fprintf(out, "]}\n");
}

/* Contract in report.h. */
int report_summary_ranks_print(FILE *out, const report_trace *t, const report_stats *s, size_t n,
                               int json, long top)
{
    report_ranks rk;
    if (report_ranks_make(&rk, t, s, n) != 0)
        return -1;
    column *c = calloc(n + 1, sizeof *c);
    if (c == NULL) {
        report_ranks_free(&rk);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        c[i] = (column){.r = &rk.r[i], .t = rk.r[i].t, .s = rk.r[i].s};
        totals_of(&c[i]);
    }
    if (json)
        json_print(out, c, n, top);
    else
        text_print(out, c, n, rk.steps, rk.nsteps);
    free(c);
    report_ranks_free(&rk);
    return 0;
}
