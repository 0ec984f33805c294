/* report_summary_ranks.c — `shim-report summary` of several traces, the ranks of one job, side by
 * side: one column per trace, ordered by the rank its header records, in the totals and in the
 * per-step tables (wall time, peak device bytes, bytes moved, stalls) keyed by step number. */
#include "report_trace.h"

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

/* One trace: its place on the command line, its column's label, its steps by number and its
   totals. */
typedef struct column {
    const report_trace *t;
    const report_stats *s;
    size_t given;
    char label[64];
    const report_step **by_step; /* s->steps sorted by step number */
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

static int by_rank(const void *pa, const void *pb)
{
    const column *a = pa, *b = pb;
    if (a->t->rank != b->t->rank)
        return a->t->rank < b->t->rank ? -1 : 1;
    if (a->t->pid != b->t->pid)
        return a->t->pid < b->t->pid ? -1 : 1;
    return a->given < b->given ? -1 : a->given > b->given;
}

static int by_number(const void *pa, const void *pb)
{
    const report_step *a = *(const report_step *const *)pa, *b = *(const report_step *const *)pb;
    return a->step < b->step ? -1 : a->step > b->step;
}

static int by_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

/* Labels "rank R", or "rank R pid P" for every column when two traces share a rank (a job
   whose processes did not set RANK). Returns the columns' width: at least MIN_WIDTH, and one
   more than the widest label. */
static int label_columns(column *c, size_t n)
{
    int shared = 0, width = MIN_WIDTH;
    for (size_t i = 1; i < n; i++)
        shared |= c[i].t->rank == c[i - 1].t->rank;
    for (size_t i = 0; i < n; i++) {
        int len = shared ? snprintf(c[i].label, sizeof c[i].label, "rank %d pid %d", c[i].t->rank,
                                    c[i].t->pid)
                         : snprintf(c[i].label, sizeof c[i].label, "rank %d", c[i].t->rank);
        if (len + 1 > width)
            width = len + 1; /* two spaces between labels */
    }
    return width;
}

/* The step's wall time (its window) in ms, or nothing without a window. */
static cell step_ms(const report_step *st)
{
    if (st == NULL || st->t_end < st->t_start)
        return (cell){CELL_NONE, 0, 0.0};
    return figure_cell((double)(st->t_end - st->t_start) / 1e6);
}

static int by_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

/* The median of the steps' wall times (nothing without steps) in *out; -1 when memory ran out. */
static int median_step_ms(const report_stats *s, cell *out)
{
    double *v = malloc((s->nsteps + 1) * sizeof *v);
    if (v == NULL)
        return -1;
    size_t m = 0;
    for (size_t i = 0; i < s->nsteps; i++) {
        cell c = step_ms(&s->steps[i]);
        if (c.kind == CELL_FIGURE)
            v[m++] = c.figure;
    }
    qsort(v, m, sizeof *v, by_double);
    *out = (cell){CELL_NONE, 0, 0.0};
    if (m > 0)
        *out = figure_cell(m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2);
    free(v);
    return 0;
}

/* Fills c->totals; -1 when memory ran out. */
static int totals_of(column *c)
{
    const report_stats *s = c->s;
    const report_residency *x = &s->residency;
    cell median;
    if (median_step_ms(s, &median) != 0)
        return -1;
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
                  count_cell(s->peak_host_bytes),
                  count_cell(s->budget_bytes),
                  count_cell(x->evictions),
                  count_cell(x->restores),
                  count_cell(x->bytes_to_host),
                  count_cell(x->bytes_to_device),
                  count_cell(x->stalls),
                  figure_cell((double)x->stall_ns / 1e3),
                  count_cell(c->t->dropped)};
    _Static_assert(sizeof all / sizeof all[0] == TOTALS, "a cell for every totals row");
    memcpy(c->totals, all, sizeof all);
    return 0;
}

static void text_traces(FILE *out, const column *c, size_t n)
{
    fprintf(out, "traces: %zu, side by side by rank\n", n);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "  %s: ", c[i].label);
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
        fprintf(out, " %*s", width, c[i].label);
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

/* The step numbered `step` of a column, or NULL. */
static const report_step *find_step(const column *c, uint64_t step)
{
    report_step key = {.step = step};
    const report_step *k = &key;
    const report_step **hit = bsearch(&k, c->by_step, c->s->nsteps, sizeof *c->by_step, by_number);
    return hit ? *hit : NULL;
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
        return count_cell(x->bytes_to_host + x->bytes_to_device);
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
            print_cell(out, per_step(find_step(&c[i], steps[k]), what), width);
        fputc('\n', out);
    }
}

/* Whether any trace moved memory or stalled. */
static int any_residency(const column *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const report_residency *x = &c[i].s->residency;
        if (x->evictions + x->cancelled_evictions + x->restores + x->stalls > 0)
            return 1;
    }
    return 0;
}

static void text_print(FILE *out, column *c, size_t n, const uint64_t *steps, size_t nsteps)
{
    int width = label_columns(c, n);
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

/* The step numbers of every trace, sorted, each once, into *steps (free it); -1 when memory
   ran out. */
static int union_steps(const column *c, size_t n, uint64_t **steps, size_t *nsteps)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += c[i].s->nsteps;
    uint64_t *v = malloc((total + 1) * sizeof *v);
    if (v == NULL)
        return -1;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < c[i].s->nsteps; k++)
            v[m++] = c[i].s->steps[k].step;
    qsort(v, m, sizeof *v, by_u64);
    size_t u = 0;
    for (size_t k = 0; k < m; k++)
        if (u == 0 || v[u - 1] != v[k])
            v[u++] = v[k];
    *steps = v;
    *nsteps = u;
    return 0;
}

static void free_columns(column *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++)
        free(c[i].by_step);
    free(c);
}

/* The columns in rank order, each with its steps by number and its totals; NULL when memory
   ran out. */
static column *make_columns(const report_trace *t, const report_stats *s, size_t n)
{
    column *c = calloc(n, sizeof *c);
    if (c == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        c[i] = (column){.t = &t[i], .s = &s[i], .given = i};
        c[i].by_step = malloc((s[i].nsteps + 1) * sizeof *c[i].by_step);
        if (c[i].by_step == NULL || totals_of(&c[i]) != 0) {
            free_columns(c, n);
            return NULL;
        }
        for (size_t k = 0; k < s[i].nsteps; k++)
            c[i].by_step[k] = &s[i].steps[k];
        qsort(c[i].by_step, s[i].nsteps, sizeof *c[i].by_step, by_number);
    }
    qsort(c, n, sizeof *c, by_rank);
    return c;
}

/* Contract in report_trace.h. */
int report_summary_ranks_print(FILE *out, const report_trace *t, const report_stats *s, size_t n,
                               int json, long top)
{
    column *c = make_columns(t, s, n);
    uint64_t *steps = NULL;
    size_t nsteps = 0;
    if (c == NULL || union_steps(c, n, &steps, &nsteps) != 0) {
        free_columns(c, n);
        return -1;
    }
    if (json)
        json_print(out, c, n, top);
    else
        text_print(out, c, n, steps, nsteps);
    free_columns(c, n);
    free(steps);
    return 0;
}
