/* report_html_tables.c — the page's tables, every row exact (tables are never downsampled).
 * Each column is a key of summary --json's list it shows (th data-key; data-type "num" or
 * "text"), or of moves --json's totals; a number cell carries the value as summary --json
 * writes it in data-value (a JSON literal: 12, 3.250, true, null) and a readable form as text.
 * Columns the JSON lacks (born_ms, mean_us, ...) have data-extra. Clicking a header sorts (the
 * page's script, report_html.js). Each table's columns are one list of html_col, from which
 * report_html_cells.c writes both its header row and every row's cells. */
#include "report_html_cells.h"

#include "base_order.h"

#include "shim_trace.h"

#include <stdlib.h>

#define U(x) ((unsigned long long)(x))

static void empty(FILE *out, const char *pfx, const char *id, const char *what)
{
    fprintf(out, "<p class=\"empty\" id=\"%s%s\">%s</p>\n", pfx, id, what);
}

/* A step's wall time (report_step_wall_us), null when it has none. */
static html_cell step_wall(html_row *r, const void *part)
{
    (void)r;
    double w = report_step_wall_us(part);
    return (html_cell){.d = w, .null = !(w >= 0)};
}

/* Contract in report_html.h. */
void html_table_steps(html_page *p)
{
    static const html_col cols[] = {
        {"step", "step", NULL, 0, HTML_C_COUNT(report_step, step)},
        {"first_seq", "first launch", NULL, 0, HTML_C_COUNT(report_step, first_seq)},
        {"launches", "launches", NULL, 0, HTML_C_COUNT(report_step, launches)},
        {"allocations", "allocs", NULL, 0, HTML_C_COUNT(report_step, allocations)},
        {"frees", "frees", NULL, 0, HTML_C_COUNT(report_step, frees)},
        {"peak_device_bytes", "peak device", NULL, 0, HTML_C_BYTES(report_step, peak_device_bytes)},
        {"wall_us", "wall", "the step's window in the trace", 0, HTML_C_GET(HTML_US, step_wall)},
        {"stall_us", "stall", "time the program stalled on residency", 0,
         HTML_C_NS(report_step, residency.stall_ns)},
        {"evictions", "evictions", NULL, 0, HTML_C_COUNT(report_step, residency.moves.evictions)},
        {"cancelled_evictions", "cancelled", NULL, 0,
         HTML_C_COUNT(report_step, residency.moves.cancelled_evictions)},
        {"restores", "restores", NULL, 0, HTML_C_COUNT(report_step, residency.moves.restores)},
        {"bytes_to_host", "to host", NULL, 0,
         HTML_C_BYTES(report_step, residency.moves.bytes_to_host)},
        {"bytes_to_device", "to device", NULL, 0,
         HTML_C_BYTES(report_step, residency.moves.bytes_to_device)},
    };
    FILE *out = p->out;
    const report_stats *s = p->s;
    if (s->nsteps == 0) {
        empty(out, p->pfx, "steps-table", "No training step was detected in this trace.");
        return;
    }
    fprintf(out, "<details open><summary>%zu steps</summary>\n", s->nsteps);
    html_cols_open(out, p->pfx, "steps-table", s->nsteps, cols, HTML_NCOLS(cols));
    for (size_t i = 0; i < s->nsteps; i++) {
        html_row r = {.part = {&s->steps[i]}, .i = i, .p = p};
        fprintf(out, "<tr>");
        html_cols_row(out, cols, HTML_NCOLS(cols), &r);
        fprintf(out, "</tr>\n");
    }
    html_cols_close(out);
    fprintf(out, "</details>\n");
}

/* Contract in report_html.h. */
void html_table_plans(html_page *p)
{
    static const html_col cols[] = {
        {"index", "plan", "its index in summary --json's plans", 1,
         HTML_C_GET(HTML_COUNT, html_cell_index)},
        {"first_seq", "installed at launch", NULL, 0, HTML_C_COUNT(report_plan, first_seq)},
        {"model_step", "made from step", NULL, 0, HTML_C_COUNT(report_plan, model_step)},
        {"step_len", "launches per step", NULL, 0, HTML_C_COUNT(report_plan, step_len)},
        {"budget_bytes", "budget", NULL, 0, HTML_C_BYTES(report_plan, budget_bytes)},
        {"predicted_us", "predicted step", NULL, 0, HTML_C_FINITE(report_plan, predicted_us)},
        {"stall_us", "predicted stall", NULL, 0, HTML_C_FINITE(report_plan, stall_us)},
        {"bound_us", "lower bound", NULL, 0, HTML_C_FINITE(report_plan, bound_us)},
        {"native_us", "native step", NULL, 0, HTML_C_FINITE(report_plan, native_us)},
        {"predicted_peak_bytes", "predicted peak", NULL, 0,
         HTML_C_BYTES(report_plan, predicted_peak_bytes)},
        {"native_peak_bytes", "native peak", NULL, 0, HTML_C_BYTES(report_plan, native_peak_bytes)},
        {"floor_bytes", "floor", NULL, 0, HTML_C_BYTES(report_plan, floor_bytes)},
        {"bytes_to_host", "to host", NULL, 0, HTML_C_BYTES(report_plan, bytes_to_host)},
        {"bytes_to_device", "to device", NULL, 0, HTML_C_BYTES(report_plan, bytes_to_device)},
        {"evictions", "evictions", NULL, 0, HTML_C_COUNT(report_plan, evictions)},
        {"prefetches", "prefetches", NULL, 0, HTML_C_COUNT(report_plan, prefetches)},
        {"feasible", "feasible", NULL, 0, HTML_C_BOOL(report_plan, feasible)},
    };
    FILE *out = p->out;
    const report_trace *t = p->t;
    if (t->nplans == 0) {
        empty(out, p->pfx, "plans-table",
              "No in-process plan ran (a reactive run, a trace older than format 1.3, or a run "
              "too short for the step to be planned).");
        return;
    }
    fprintf(out, "<h3>Plans (the planner's prediction for one step)</h3>\n");
    html_cols_open(out, p->pfx, "plans-table", t->nplans, cols, HTML_NCOLS(cols));
    for (size_t i = 0; i < t->nplans; i++) {
        html_row r = {.part = {&t->plans[i]}, .i = i, .p = p};
        fprintf(out, "<tr>");
        html_cols_row(out, cols, HTML_NCOLS(cols), &r);
        fprintf(out, "</tr>\n");
    }
    html_cols_close(out);
}

/* The plan in force in a step under a plan (part: its report_plan_row), null when none. */
static html_cell row_plan(html_row *r, const void *part)
{
    (void)r;
    const report_plan_row *v = part;
    return (html_cell){.u = v->plan, .null = v->plan == SIZE_MAX};
}

/* A step under a plan's wall time (report_plan_row_wall_us), null when it has none. */
static html_cell row_wall(html_row *r, const void *part)
{
    (void)r;
    double w = report_plan_row_wall_us(part);
    return (html_cell){.d = w, .null = !(w >= 0)};
}

/* Contract in report_html.h. Each row's parts: the plan_step record, the plan in force (NULL:
   none, its cells null) and the row of report_plan_rows. */
void html_table_plan_steps(html_page *p)
{
    static const html_col cols[] = {
        {"step", "step", NULL, 0, HTML_C_COUNT(report_plan_step, step)},
        {"first_seq", "first launch", NULL, 0, HTML_C_COUNT(report_plan_step, first_seq)},
        {"plan", "plan", NULL, 0, HTML_C_GET(HTML_COUNT, row_plan), .part = 2},
        {"wall_us", "wall", "from the mark of the step before to its own (host clock)", 0,
         HTML_C_GET(HTML_US, row_wall), .part = 2},
        {"predicted_us", "predicted", "the plan's step time (model time)", 0,
         HTML_C_US(report_plan, predicted_us), .part = 1},
        {"stall_us", "stall", NULL, 0, HTML_C_NS(report_plan_step, stall_ns)},
        {"evictions", "planned evictions", NULL, 0, HTML_C_COUNT(report_plan_step, evictions)},
        {"prefetches", "prefetches", NULL, 0, HTML_C_COUNT(report_plan_step, prefetches)},
        {"missing", "missing", "planned moves whose allocation was absent or busy", 0,
         HTML_C_COUNT(report_plan_step, missing)},
        {"departures", "departures", "touches before the planned prefetch", 0,
         HTML_C_COUNT(report_plan_step, departures)},
        {"reactive_evictions", "reactive", "evictions for room under the plan", 0,
         HTML_C_COUNT(report_plan_step, reactive_evictions)},
        {"bytes_to_host", "to host", NULL, 0, HTML_C_BYTES(report_plan_step, bytes_to_host)},
        {"predicted_bytes_to_host", "predicted to host", NULL, 0,
         HTML_C_BYTES(report_plan, bytes_to_host), .part = 1},
        {"bytes_to_device", "to device", NULL, 0, HTML_C_BYTES(report_plan_step, bytes_to_device)},
        {"predicted_bytes_to_device", "predicted to device", NULL, 0,
         HTML_C_BYTES(report_plan, bytes_to_device), .part = 1},
    };
    FILE *out = p->out;
    const report_trace *t = p->t;
    report_plan_row *v = report_plan_rows(t, p->s); /* NULL: no step under a plan, or no memory */
    if (v == NULL)
        return;
    fprintf(out, "<h3>Steps under a plan</h3>\n");
    html_cols_open(out, p->pfx, "plan-steps-table", t->nplan_steps, cols, HTML_NCOLS(cols));
    for (size_t i = 0; i < t->nplan_steps; i++) {
        const report_plan *pl = v[i].plan == SIZE_MAX ? NULL : &t->plans[v[i].plan];
        html_row r = {.part = {v[i].ps, pl, &v[i]}, .i = i, .p = p};
        fprintf(out, "<tr>");
        html_cols_row(out, cols, HTML_NCOLS(cols), &r);
        fprintf(out, "</tr>\n");
    }
    html_cols_close(out);
    free(v);
}

/* Device r->i's allocations, peak and budget (the stats' per-device arrays). */
static html_cell device_allocs(html_row *r, const void *part)
{
    (void)part;
    return (html_cell){.u = r->p->s->device_allocs[r->i]};
}

static html_cell device_peak(html_row *r, const void *part)
{
    (void)part;
    return (html_cell){.u = r->p->s->device_peak[r->i]};
}

static html_cell device_budget(html_row *r, const void *part)
{
    (void)part;
    return (html_cell){.u = r->p->s->device_budget[r->i]};
}

/* Contract in report_html.h. A row's index is its device; its part, that device's residency. */
void html_table_devices(html_page *p)
{
    static const html_col cols[] = {
        {"device", "device", NULL, 0, HTML_C_GET(HTML_COUNT, html_cell_index)},
        {"allocations", "allocations", NULL, 0, HTML_C_GET(HTML_COUNT, device_allocs)},
        {"peak_bytes", "peak", "the most bytes its allocations held at once", 0,
         HTML_C_GET(HTML_BYTES, device_peak)},
        {"budget_bytes", "budget", "its residency manager's budget (0: none recorded)", 0,
         HTML_C_GET(HTML_BYTES, device_budget)},
        {"evictions", "evictions", NULL, 0, HTML_C_COUNT(report_residency, moves.evictions)},
        {"restores", "restores", NULL, 0, HTML_C_COUNT(report_residency, moves.restores)},
    };
    const report_stats *s = p->s;
    size_t n = 0;
    for (uint32_t d = 0; d < s->ndevices; d++)
        n += s->device_allocs[d] > 0;
    if (n < 2)
        return;
    fprintf(p->out,
            "<p class=\"note\" id=\"%sdevices-note\">Allocations on %zu devices: the headline "
            "figures and the steps are device %u's (the first libshim serves); each device has "
            "its memory chart above and its lanes in the moves timeline, and its budget and "
            "moves in this table.</p>\n",
            p->pfx, n, s->primary_device);
    html_cols_open(p->out, p->pfx, "devices-table", n, cols, HTML_NCOLS(cols));
    for (uint32_t d = 0; d < s->ndevices; d++) {
        if (!s->device_allocs[d])
            continue;
        html_row r = {.part = {&s->device_residency[d]}, .i = d, .p = p};
        fprintf(p->out, "<tr>");
        html_cols_row(p->out, cols, HTML_NCOLS(cols), &r);
        fprintf(p->out, "</tr>\n");
    }
    html_cols_close(p->out);
}

/* An allocation's kind, times (ms since the trace's start; freed: null unless it was), whether
   it was freed, and its name (report_alloc_name, in r->name); part: the report_alloc. */
static html_cell alloc_kind(html_row *r, const void *part)
{
    (void)r;
    return (html_cell){.s = report_alloc_kind_name(((const report_alloc *)part)->kind)};
}

static html_cell alloc_born(html_row *r, const void *part)
{
    return (html_cell){.d = html_ms(r->p->t, ((const report_alloc *)part)->t_alloc)};
}

static html_cell alloc_freed_ms(html_row *r, const void *part)
{
    const report_alloc *a = part;
    return (html_cell){.d = html_ms(r->p->t, a->t_free), .null = !a->freed};
}

static html_cell alloc_freed(html_row *r, const void *part)
{
    (void)r;
    return (html_cell){.u = ((const report_alloc *)part)->freed != 0};
}

static html_cell alloc_name(html_row *r, const void *part)
{
    return (html_cell){.s = report_alloc_name(part, r->p->s, r->name, sizeof r->name)};
}

/* Contract in report_html.h. */
void html_table_allocs(html_page *p)
{
    static const html_col cols[] = {
        {"bytes", "bytes", NULL, 0, HTML_C_BYTES(report_alloc, bytes)},
        {"kind", "kind", NULL, 0, HTML_C_GET(HTML_TEXT, alloc_kind)},
        {"born_ms", "born (ms)", "ms since the trace's start", 1, HTML_C_GET(HTML_MS, alloc_born)},
        {"freed_ms", "freed (ms)", "ms since the trace's start", 1,
         HTML_C_GET(HTML_MS, alloc_freed_ms)},
        {"freed", "freed", NULL, 0, HTML_C_GET(HTML_BOOL, alloc_freed)},
        {"touches", "touches", "launches whose parameters pointed into it", 0,
         HTML_C_COUNT(report_alloc, touches)},
        {"name", "name", "what libshim sees of it: size, role in the step, first .. last kernel", 0,
         HTML_C_GET(HTML_TEXT, alloc_name)},
    };
    FILE *out = p->out;
    size_t n;
    const report_alloc **v = report_top_allocs(p->s, &n, p->top);
    if (n == 0) {
        empty(out, p->pfx, "allocations-table", "No allocation was recorded.");
        free(v);
        return;
    }
    html_cols_open(out, p->pfx, "allocations-table", n, cols, HTML_NCOLS(cols));
    for (size_t i = 0; i < n; i++) {
        html_row r = {.part = {v[i]}, .i = i, .p = p};
        fprintf(out, "<tr data-alloc-id=\"%llu\">", U(v[i]->id)); /* for programs, not shown */
        html_cols_row(out, cols, HTML_NCOLS(cols), &r);
        fprintf(out, "</tr>\n");
    }
    html_cols_close(out);
    free(v);
}

/* One allocation's moves, for the table of the most moved. */
typedef struct moved {
    const report_alloc *a;
    uint64_t moves, to_host, to_device;
} moved;

static int by_moved_bytes(const void *pa, const void *pb)
{
    const moved *a = pa, *b = pb;
    uint64_t x = a->to_host + a->to_device, y = b->to_host + b->to_device;
    return BASE_CMP_THEN(y, x, BASE_CMP(a->a->id, b->a->id));
}

/* The allocations (not slabs) that moved, by bytes moved, at most p->top: "moves-by-allocation"
   with each one's name. Each row's parts: its moved, and the allocation. */
static void table_moved_allocs(html_page *p)
{
    static const html_col cols[] = {
        {"moves", "moves", NULL, 0, HTML_C_COUNT(moved, moves)},
        {"bytes_to_host", "to host", NULL, 0, HTML_C_BYTES(moved, to_host)},
        {"bytes_to_device", "to device", NULL, 0, HTML_C_BYTES(moved, to_device)},
        {"name", "name", "what libshim sees of it: size, role in the step, first .. last kernel", 0,
         HTML_C_GET(HTML_TEXT, alloc_name), .part = 1},
    };
    const report_moves *m = p->m;
    moved *v = calloc(p->s->nallocs + 1, sizeof *v); /* by the allocation's index */
    size_t n = 0;
    for (size_t i = 0; v && i < m->nmoves; i++) {
        const report_move *mv = &m->moves[i];
        if (mv->alloc == NULL)
            continue;
        moved *x = &v[mv->alloc - p->s->allocs];
        x->a = mv->alloc;
        x->moves++;
        *(mv->event == SHIM_EV_EVICT ? &x->to_host : &x->to_device) += mv->bytes;
    }
    for (size_t i = 0; v && i < p->s->nallocs; i++) /* the ones that moved, to the front */
        if (v[i].a)
            v[n++] = v[i];
    if (n > 0) {
        qsort(v, n, sizeof *v, by_moved_bytes);
        n = n < (size_t)p->top ? n : (size_t)p->top;
        fprintf(p->out, "<h3>Most moved allocations</h3>\n");
        html_cols_open(p->out, p->pfx, "moves-by-allocation", n, cols, HTML_NCOLS(cols));
        for (size_t i = 0; i < n; i++) {
            html_row r = {.part = {&v[i], v[i].a}, .i = i, .p = p};
            fprintf(p->out, "<tr data-alloc-id=\"%llu\">", U(v[i].a->id));
            html_cols_row(p->out, cols, HTML_NCOLS(cols), &r);
            fprintf(p->out, "</tr>\n");
        }
        html_cols_close(p->out);
    }
    free(v);
}

/* A kernel's mean, least and most measured time; null when none of its launches was timed. */
static html_cell kernel_mean(html_row *r, const void *part)
{
    (void)r;
    const report_kernel *k = part;
    return (html_cell){.d = k->timed ? k->total_us / (double)k->timed : 0, .null = k->timed == 0};
}

static html_cell kernel_min(html_row *r, const void *part)
{
    (void)r;
    const report_kernel *k = part;
    return (html_cell){.d = k->min_us, .null = k->timed == 0};
}

static html_cell kernel_max(html_row *r, const void *part)
{
    (void)r;
    const report_kernel *k = part;
    return (html_cell){.d = k->max_us, .null = k->timed == 0};
}

/* Contract in report_html.h. */
void html_table_kernels(html_page *p)
{
    static const html_col cols[] = {
        {"name", "kernel", NULL, 0, HTML_C_TEXT(report_kernel, name)},
        {"launches", "launches", NULL, 0, HTML_C_COUNT(report_kernel, launches)},
        {"timed_launches", "timed", "launches with a measured time", 0,
         HTML_C_COUNT(report_kernel, timed)},
        {"total_us", "total", "measured time of the timed launches", 0,
         HTML_C_US(report_kernel, total_us)},
        {"mean_us", "mean", NULL, 1, HTML_C_GET(HTML_US, kernel_mean)},
        {"min_us", "min", NULL, 1, HTML_C_GET(HTML_US, kernel_min)},
        {"max_us", "max", NULL, 1, HTML_C_GET(HTML_US, kernel_max)},
    };
    FILE *out = p->out;
    const report_stats *s = p->s;
    size_t n = s->nkernels < (size_t)p->top ? s->nkernels : (size_t)p->top;
    if (n == 0) {
        empty(out, p->pfx, "kernels-table", "No kernel launch was recorded.");
        return;
    }
    html_cols_open(out, p->pfx, "kernels-table", n, cols, HTML_NCOLS(cols));
    for (size_t i = 0; i < n; i++) {
        html_row r = {.part = {&s->kernels[i]}, .i = i, .p = p};
        fprintf(out, "<tr>");
        html_cols_row(out, cols, HTML_NCOLS(cols), &r);
        fprintf(out, "</tr>\n");
    }
    html_cols_close(out);
    if (s->nkernels > n)
        fprintf(out,
                "<p class=\"note\">%zu more kernels: <code>shim-report kernels</code> lists "
                "them all.</p>\n",
                s->nkernels - n);
}

/* Reason r->i's and outcome r->i's names and moves (part: the report_moves). */
static html_cell reason_name(html_row *r, const void *part)
{
    (void)part;
    return (html_cell){.s = r->i == 0 ? "other" : report_move_reason_name((uint32_t)r->i)};
}

static html_cell reason_moves(html_row *r, const void *part)
{
    return (html_cell){.u = ((const report_moves *)part)->by_reason[r->i]};
}

static html_cell outcome_name(html_row *r, const void *part)
{
    (void)part;
    return (html_cell){.s = report_outcome_name((uint32_t)r->i)};
}

static html_cell outcome_moves(html_row *r, const void *part)
{
    return (html_cell){.u = ((const report_moves *)part)->by_outcome[r->i]};
}

/* Contract in report_html.h. The moves by reason and by outcome (moves --json's totals). */
void html_table_moves(html_page *p)
{
    static const html_col rcols[] = {
        {"reason", "reason", NULL, 0, HTML_C_GET(HTML_TEXT, reason_name)},
        {"moves", "moves", NULL, 0, HTML_C_GET(HTML_COUNT, reason_moves)}};
    static const html_col ocols[] = {
        {"outcome", "outcome", NULL, 0, HTML_C_GET(HTML_TEXT, outcome_name)},
        {"moves", "moves", NULL, 0, HTML_C_GET(HTML_COUNT, outcome_moves)}};
    FILE *out = p->out;
    const report_moves *m = p->m;
    if (m->nmoves == 0) {
        empty(out, p->pfx, "moves-empty",
              p->t->major == 1 && p->t->minor < 2
                  ? "This trace is older than format 1.2: it has no residency transitions."
                  : "No residency move was recorded.");
        return;
    }
    fprintf(out, "<div class=\"side\">\n");
    html_cols_open(out, p->pfx, "moves-by-reason", REPORT_REASONS, rcols, HTML_NCOLS(rcols));
    for (uint32_t i = 1; i <= REPORT_REASONS; i++) { /* "other" (0) last, as moves --json */
        html_row r = {.part = {m}, .i = i % REPORT_REASONS, .p = p};
        fprintf(out, "<tr>");
        html_cols_row(out, rcols, HTML_NCOLS(rcols), &r);
        fprintf(out, "</tr>\n");
    }
    html_cols_close(out);
    html_cols_open(out, p->pfx, "moves-by-outcome", REPORT_OUTCOMES, ocols, HTML_NCOLS(ocols));
    for (uint32_t i = 0; i < REPORT_OUTCOMES; i++) {
        html_row r = {.part = {m}, .i = i, .p = p};
        fprintf(out, "<tr>");
        html_cols_row(out, ocols, HTML_NCOLS(ocols), &r);
        fprintf(out, "</tr>\n");
    }
    html_cols_close(out);
    fprintf(out, "</div>\n<p class=\"note\">%zu moves; ", m->nmoves);
    html_bytes(out, m->bytes_to_host);
    fprintf(out, " to the host, ");
    html_bytes(out, m->bytes_to_device);
    fprintf(out, " to the device. <code>shim-report moves</code> lists each with its unit, "
                 "bytes, times and, for budget evictions, the victim's score.</p>\n");
    table_moved_allocs(p);
}

/* A rank's steps (its stats' nsteps) and median step time (null when it has no step). */
static html_cell rank_steps(html_row *r, const void *part)
{
    (void)r;
    return (html_cell){.u = ((const report_stats *)part)->nsteps};
}

static html_cell rank_median(html_row *r, const void *part)
{
    (void)r;
    double ms = ((const report_rank *)part)->median_step_ms;
    return (html_cell){.d = ms, .null = !(ms >= 0)};
}

/* Contract in report_html.h. Each row's parts: the report_rank, its stats and its trace. */
void html_table_ranks(FILE *out, const report_ranks *rk)
{
    static const html_col cols[] = {
        {"rank", "rank", NULL, 0, HTML_C_INT(report_trace, rank), .part = 2},
        {"pid", "pid", NULL, 0, HTML_C_INT(report_trace, pid), .part = 2},
        {"iterations", "steps", NULL, 0, HTML_C_GET(HTML_COUNT, rank_steps), .part = 1},
        {"median_step_ms", "median step", "the median of the steps' wall times, ms", 0,
         HTML_C_GET(HTML_MS, rank_median)},
        {"peak_device_bytes", "peak device", NULL, 0, HTML_C_BYTES(report_stats, peak_device_bytes),
         .part = 1},
        {"evictions", "evictions", NULL, 0, HTML_C_COUNT(report_stats, residency.moves.evictions),
         .part = 1},
        {"cancelled_evictions", "cancelled", NULL, 0,
         HTML_C_COUNT(report_stats, residency.moves.cancelled_evictions), .part = 1},
        {"restores", "restores", NULL, 0, HTML_C_COUNT(report_stats, residency.moves.restores),
         .part = 1},
        {"bytes_to_host", "to host", NULL, 0,
         HTML_C_BYTES(report_stats, residency.moves.bytes_to_host), .part = 1},
        {"bytes_to_device", "to device", NULL, 0,
         HTML_C_BYTES(report_stats, residency.moves.bytes_to_device), .part = 1},
        {"stalls", "stalls", NULL, 0, HTML_C_COUNT(report_stats, residency.stalls), .part = 1},
        {"stall_us", "stalled", "time the program stalled on residency", 0,
         HTML_C_NS(report_stats, residency.stall_ns), .part = 1},
        {"trace", "trace", NULL, 0, HTML_C_TEXT(report_trace, name), .part = 2},
    };
    html_cols_open(out, "", "ranks-table", rk->n, cols, HTML_NCOLS(cols));
    for (size_t i = 0; i < rk->n; i++) {
        const report_rank *k = &rk->r[i];
        html_row r = {.part = {k, k->s, k->t}, .i = i};
        fprintf(out, "<tr data-rank-index=\"%zu\">", i);
        html_cols_row(out, cols, HTML_NCOLS(cols), &r);
        fprintf(out, "</tr>\n");
    }
    html_cols_close(out);
}
