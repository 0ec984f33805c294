/* report_html_tables.c — the page's tables, every row exact (tables are never downsampled).
 * Each column is a key of summary --json's list it shows (th data-key; data-type "num" or
 * "text"), or of moves --json's totals; a number cell carries the value as summary --json
 * writes it in data-value (a JSON literal: 12, 3.250, true, null) and a readable form as text.
 * Columns the JSON lacks (born_ms, mean_us, ...) have data-extra. Clicking a header sorts (the
 * page's script, report_html.js). */
#include "report_html.h"

#include "base_order.h"

#include "shim_trace.h"

#include <math.h>
#include <stdlib.h>

#define U(x) ((unsigned long long)(x))

typedef struct col {
    const char *key, *label, *title;
    int num, extra;
} col;

/* The table's id is pfx then id. */
static void open_table(FILE *out, const char *pfx, const char *id, size_t rows, const col *cols,
                       size_t ncols)
{
    fprintf(out,
            "<div class=\"table-wrap\"><table class=\"sortable\" id=\"%s%s\" data-rows=\"%zu\">"
            "<thead><tr>",
            pfx, id, rows);
    for (size_t i = 0; i < ncols; i++) {
        fprintf(out, "<th data-key=\"%s\" data-type=\"%s\"%s%s", cols[i].key,
                cols[i].num ? "num" : "text", cols[i].num ? "" : " class=\"text\"",
                cols[i].extra ? " data-extra=\"1\"" : "");
        if (cols[i].title)
            fprintf(out, " title=\"%s\"", cols[i].title);
        fprintf(out, ">%s</th>", cols[i].label);
    }
    fprintf(out, "</tr></thead>\n<tbody>\n");
}

static void close_table(FILE *out)
{
    fprintf(out, "</tbody></table></div>\n");
}

static void td_u(FILE *out, uint64_t v)
{
    fprintf(out, "<td data-value=\"%llu\">%llu</td>", U(v), U(v));
}

static void td_bytes(FILE *out, uint64_t v)
{
    fprintf(out, "<td data-value=\"%llu\" title=\"%llu bytes\">", U(v), U(v));
    html_bytes(out, v);
    fprintf(out, "</td>");
}

/* A cell with no value. */
static void td_null(FILE *out)
{
    fprintf(out, "<td data-value=\"null\">-</td>");
}

/* A time: in microseconds (us != 0), shown as a duration with the value in its title, or in
   milliseconds since the trace's start, shown as the text summary's columns show it; valid == 0:
   null (no value). */
static void td_time(FILE *out, double v, int valid, int us)
{
    if (!valid) {
        td_null(out);
        return;
    }
    fprintf(out, "<td data-value=\"");
    html_double(out, v);
    if (us) {
        fprintf(out, "\" title=\"");
        html_double(out, v);
        fprintf(out, " us\">");
        html_duration_us(out, v);
    } else {
        fprintf(out, "\">");
        html_double(out, v);
    }
    fprintf(out, "</td>");
}

static void td_us(FILE *out, double us, int valid)
{
    td_time(out, us, valid, 1);
}

static void td_ms(FILE *out, double ms, int valid)
{
    td_time(out, ms, valid, 0);
}

static void td_bool(FILE *out, int v)
{
    fprintf(out, "<td data-value=\"%s\">%s</td>", v ? "true" : "false", v ? "yes" : "no");
}

static void td_text(FILE *out, const char *s)
{
    fprintf(out, "<td class=\"text\">");
    html_text(out, s);
    fprintf(out, "</td>");
}

static void empty(FILE *out, const char *pfx, const char *id, const char *what)
{
    fprintf(out, "<p class=\"empty\" id=\"%s%s\">%s</p>\n", pfx, id, what);
}

#define NCOLS(a) (sizeof(a) / sizeof(a)[0])

/* Contract in report_html.h. */
void html_table_steps(html_page *p)
{
    static const col cols[] = {
        {"step", "step", NULL, 1, 0},
        {"first_seq", "first launch", NULL, 1, 0},
        {"launches", "launches", NULL, 1, 0},
        {"allocations", "allocs", NULL, 1, 0},
        {"frees", "frees", NULL, 1, 0},
        {"peak_device_bytes", "peak device", NULL, 1, 0},
        {"wall_us", "wall", "the step's window in the trace", 1, 0},
        {"stall_us", "stall", "time the program stalled on residency", 1, 0},
        {"evictions", "evictions", NULL, 1, 0},
        {"cancelled_evictions", "cancelled", NULL, 1, 0},
        {"restores", "restores", NULL, 1, 0},
        {"bytes_to_host", "to host", NULL, 1, 0},
        {"bytes_to_device", "to device", NULL, 1, 0},
    };
    FILE *out = p->out;
    const report_stats *s = p->s;
    if (s->nsteps == 0) {
        empty(out, p->pfx, "steps-table", "No training step was detected in this trace.");
        return;
    }
    fprintf(out, "<details open><summary>%zu steps</summary>\n", s->nsteps);
    open_table(out, p->pfx, "steps-table", s->nsteps, cols, NCOLS(cols));
    for (size_t i = 0; i < s->nsteps; i++) {
        const report_step *st = &s->steps[i];
        const report_residency *x = &st->residency;
        double wall = report_step_wall_us(st);
        fprintf(out, "<tr>");
        td_u(out, st->step);
        td_u(out, st->first_seq);
        td_u(out, st->launches);
        td_u(out, st->allocations);
        td_u(out, st->frees);
        td_bytes(out, st->peak_device_bytes);
        td_us(out, wall, wall >= 0);
        td_us(out, (double)x->stall_ns / 1e3, 1);
        td_u(out, x->moves.evictions);
        td_u(out, x->moves.cancelled_evictions);
        td_u(out, x->moves.restores);
        td_bytes(out, x->moves.bytes_to_host);
        td_bytes(out, x->moves.bytes_to_device);
        fprintf(out, "</tr>\n");
    }
    close_table(out);
    fprintf(out, "</details>\n");
}

/* Contract in report_html.h. */
void html_table_plans(html_page *p)
{
    static const col cols[] = {
        {"index", "plan", "its index in summary --json's plans", 1, 1},
        {"first_seq", "installed at launch", NULL, 1, 0},
        {"model_step", "made from step", NULL, 1, 0},
        {"step_len", "launches per step", NULL, 1, 0},
        {"budget_bytes", "budget", NULL, 1, 0},
        {"predicted_us", "predicted step", NULL, 1, 0},
        {"stall_us", "predicted stall", NULL, 1, 0},
        {"bound_us", "lower bound", NULL, 1, 0},
        {"native_us", "native step", NULL, 1, 0},
        {"predicted_peak_bytes", "predicted peak", NULL, 1, 0},
        {"native_peak_bytes", "native peak", NULL, 1, 0},
        {"floor_bytes", "floor", NULL, 1, 0},
        {"bytes_to_host", "to host", NULL, 1, 0},
        {"bytes_to_device", "to device", NULL, 1, 0},
        {"evictions", "evictions", NULL, 1, 0},
        {"prefetches", "prefetches", NULL, 1, 0},
        {"feasible", "feasible", NULL, 1, 0},
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
    open_table(out, p->pfx, "plans-table", t->nplans, cols, NCOLS(cols));
    for (size_t i = 0; i < t->nplans; i++) {
        const report_plan *pl = &t->plans[i];
        fprintf(out, "<tr>");
        td_u(out, i);
        td_u(out, pl->first_seq);
        td_u(out, pl->model_step);
        td_u(out, pl->step_len);
        td_bytes(out, pl->budget_bytes);
        td_us(out, pl->predicted_us, isfinite(pl->predicted_us));
        td_us(out, pl->stall_us, isfinite(pl->stall_us));
        td_us(out, pl->bound_us, isfinite(pl->bound_us));
        td_us(out, pl->native_us, isfinite(pl->native_us));
        td_bytes(out, pl->predicted_peak_bytes);
        td_bytes(out, pl->native_peak_bytes);
        td_bytes(out, pl->floor_bytes);
        td_bytes(out, pl->bytes_to_host);
        td_bytes(out, pl->bytes_to_device);
        td_u(out, pl->evictions);
        td_u(out, pl->prefetches);
        td_bool(out, pl->feasible != 0);
        fprintf(out, "</tr>\n");
    }
    close_table(out);
}

/* Contract in report_html.h. */
void html_table_plan_steps(html_page *p)
{
    static const col cols[] = {
        {"step", "step", NULL, 1, 0},
        {"first_seq", "first launch", NULL, 1, 0},
        {"plan", "plan", NULL, 1, 0},
        {"wall_us", "wall", "from the mark of the step before to its own (host clock)", 1, 0},
        {"predicted_us", "predicted", "the plan's step time (model time)", 1, 0},
        {"stall_us", "stall", NULL, 1, 0},
        {"evictions", "planned evictions", NULL, 1, 0},
        {"prefetches", "prefetches", NULL, 1, 0},
        {"missing", "missing", "planned moves whose allocation was absent or busy", 1, 0},
        {"departures", "departures", "touches before the planned prefetch", 1, 0},
        {"reactive_evictions", "reactive", "evictions for room under the plan", 1, 0},
        {"bytes_to_host", "to host", NULL, 1, 0},
        {"predicted_bytes_to_host", "predicted to host", NULL, 1, 0},
        {"bytes_to_device", "to device", NULL, 1, 0},
        {"predicted_bytes_to_device", "predicted to device", NULL, 1, 0},
    };
    FILE *out = p->out;
    const report_trace *t = p->t;
    report_plan_row *v = report_plan_rows(t, p->s); /* NULL: no step under a plan, or no memory */
    if (v == NULL)
        return;
    fprintf(out, "<h3>Steps under a plan</h3>\n");
    open_table(out, p->pfx, "plan-steps-table", t->nplan_steps, cols, NCOLS(cols));
    for (size_t i = 0; i < t->nplan_steps; i++) {
        const report_plan_step *ps = v[i].ps;
        const report_plan *pl = v[i].plan == SIZE_MAX ? NULL : &t->plans[v[i].plan];
        double wall = report_plan_row_wall_us(&v[i]);
        fprintf(out, "<tr>");
        td_u(out, ps->step);
        td_u(out, ps->first_seq);
        if (pl)
            td_u(out, v[i].plan);
        else
            td_null(out);
        td_us(out, wall, wall >= 0);
        td_us(out, pl ? pl->predicted_us : 0, pl != NULL);
        td_us(out, (double)ps->stall_ns / 1e3, 1);
        td_u(out, ps->evictions);
        td_u(out, ps->prefetches);
        td_u(out, ps->missing);
        td_u(out, ps->departures);
        td_u(out, ps->reactive_evictions);
        td_bytes(out, ps->bytes_to_host);
        if (pl)
            td_bytes(out, pl->bytes_to_host);
        else
            td_null(out);
        td_bytes(out, ps->bytes_to_device);
        if (pl)
            td_bytes(out, pl->bytes_to_device);
        else
            td_null(out);
        fprintf(out, "</tr>\n");
    }
    close_table(out);
    free(v);
}

/* Contract in report_html.h. */
void html_table_devices(html_page *p)
{
    static const col cols[] = {
        {"device", "device", NULL, 1, 0},
        {"allocations", "allocations", NULL, 1, 0},
        {"peak_bytes", "peak", "the most bytes its allocations held at once", 1, 0},
        {"budget_bytes", "budget", "its residency manager's budget (0: none recorded)", 1, 0},
        {"evictions", "evictions", NULL, 1, 0},
        {"restores", "restores", NULL, 1, 0},
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
    open_table(p->out, p->pfx, "devices-table", n, cols, NCOLS(cols));
    for (uint32_t d = 0; d < s->ndevices; d++) {
        if (!s->device_allocs[d])
            continue;
        fprintf(p->out, "<tr>");
        td_u(p->out, d);
        td_u(p->out, s->device_allocs[d]);
        td_bytes(p->out, s->device_peak[d]);
        td_bytes(p->out, s->device_budget[d]);
        td_u(p->out, s->device_residency[d].moves.evictions);
        td_u(p->out, s->device_residency[d].moves.restores);
        fprintf(p->out, "</tr>\n");
    }
    close_table(p->out);
}

/* Contract in report_html.h. */
void html_table_allocs(html_page *p)
{
    static const col cols[] = {
        {"bytes", "bytes", NULL, 1, 0},
        {"kind", "kind", NULL, 0, 0},
        {"born_ms", "born (ms)", "ms since the trace's start", 1, 1},
        {"freed_ms", "freed (ms)", "ms since the trace's start", 1, 1},
        {"freed", "freed", NULL, 1, 0},
        {"touches", "touches", "launches whose parameters pointed into it", 1, 0},
        {"name", "name", "what libshim sees of it: size, role in the step, first .. last kernel", 0,
         0},
    };
    FILE *out = p->out;
    size_t n;
    const report_alloc **v = report_top_allocs(p->s, &n, p->top);
    if (n == 0) {
        empty(out, p->pfx, "allocations-table", "No allocation was recorded.");
        free(v);
        return;
    }
    open_table(out, p->pfx, "allocations-table", n, cols, NCOLS(cols));
    for (size_t i = 0; i < n; i++) {
        const report_alloc *a = v[i];
        fprintf(out, "<tr data-alloc-id=\"%llu\">", U(a->id)); /* for programs, not shown */
        td_bytes(out, a->bytes);
        td_text(out, report_alloc_kind_name(a->kind));
        td_ms(out, html_ms(p->t, a->t_alloc), 1);
        td_ms(out, html_ms(p->t, a->t_free), a->freed);
        td_bool(out, a->freed);
        td_u(out, a->touches);
        char name[REPORT_ALLOC_NAME_MAX];
        td_text(out, report_alloc_name(a, p->s, name, sizeof name));
        fprintf(out, "</tr>\n");
    }
    close_table(out);
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
   with each one's name. */
static void table_moved_allocs(html_page *p)
{
    static const col cols[] = {
        {"moves", "moves", NULL, 1, 0},
        {"bytes_to_host", "to host", NULL, 1, 0},
        {"bytes_to_device", "to device", NULL, 1, 0},
        {"name", "name", "what libshim sees of it: size, role in the step, first .. last kernel", 0,
         0},
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
        open_table(p->out, p->pfx, "moves-by-allocation", n, cols, NCOLS(cols));
        for (size_t i = 0; i < n; i++) {
            char name[REPORT_ALLOC_NAME_MAX];
            fprintf(p->out, "<tr data-alloc-id=\"%llu\">", U(v[i].a->id));
            td_u(p->out, v[i].moves);
            td_bytes(p->out, v[i].to_host);
            td_bytes(p->out, v[i].to_device);
            td_text(p->out, report_alloc_name(v[i].a, p->s, name, sizeof name));
            fprintf(p->out, "</tr>\n");
        }
        close_table(p->out);
    }
    free(v);
}

/* Contract in report_html.h. */
void html_table_kernels(html_page *p)
{
    static const col cols[] = {
        {"name", "kernel", NULL, 0, 0},
        {"launches", "launches", NULL, 1, 0},
        {"timed_launches", "timed", "launches with a measured time", 1, 0},
        {"total_us", "total", "measured time of the timed launches", 1, 0},
        {"mean_us", "mean", NULL, 1, 1},
        {"min_us", "min", NULL, 1, 1},
        {"max_us", "max", NULL, 1, 1},
    };
    FILE *out = p->out;
    const report_stats *s = p->s;
    size_t n = s->nkernels < (size_t)p->top ? s->nkernels : (size_t)p->top;
    if (n == 0) {
        empty(out, p->pfx, "kernels-table", "No kernel launch was recorded.");
        return;
    }
    open_table(out, p->pfx, "kernels-table", n, cols, NCOLS(cols));
    for (size_t i = 0; i < n; i++) {
        const report_kernel *k = &s->kernels[i];
        fprintf(out, "<tr>");
        td_text(out, k->name);
        td_u(out, k->launches);
        td_u(out, k->timed);
        td_us(out, k->total_us, 1);
        td_us(out, k->timed ? k->total_us / (double)k->timed : 0, k->timed > 0);
        td_us(out, k->min_us, k->timed > 0);
        td_us(out, k->max_us, k->timed > 0);
        fprintf(out, "</tr>\n");
    }
    close_table(out);
    if (s->nkernels > n)
        fprintf(out,
                "<p class=\"note\">%zu more kernels: <code>shim-report kernels</code> lists "
                "them all.</p>\n",
                s->nkernels - n);
}

/* Contract in report_html.h. The moves by reason and by outcome (moves --json's totals). */
void html_table_moves(html_page *p)
{
    static const col rcols[] = {{"reason", "reason", NULL, 0, 0}, {"moves", "moves", NULL, 1, 0}};
    static const col ocols[] = {{"outcome", "outcome", NULL, 0, 0}, {"moves", "moves", NULL, 1, 0}};
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
    open_table(out, p->pfx, "moves-by-reason", REPORT_REASONS, rcols, NCOLS(rcols));
    for (uint32_t i = 1; i <= REPORT_REASONS; i++) { /* "other" (0) last, as moves --json */
        uint32_t r = i % REPORT_REASONS;
        fprintf(out, "<tr>");
        td_text(out, r == 0 ? "other" : report_move_reason_name(r));
        td_u(out, m->by_reason[r]);
        fprintf(out, "</tr>\n");
    }
    close_table(out);
    open_table(out, p->pfx, "moves-by-outcome", REPORT_OUTCOMES, ocols, NCOLS(ocols));
    for (uint32_t i = 0; i < REPORT_OUTCOMES; i++) {
        fprintf(out, "<tr>");
        td_text(out, report_outcome_name(i));
        td_u(out, m->by_outcome[i]);
        fprintf(out, "</tr>\n");
    }
    close_table(out);
    fprintf(out, "</div>\n<p class=\"note\">%zu moves; ", m->nmoves);
    html_bytes(out, m->bytes_to_host);
    fprintf(out, " to the host, ");
    html_bytes(out, m->bytes_to_device);
    fprintf(out, " to the device. <code>shim-report moves</code> lists each with its unit, "
                 "bytes, times and, for budget evictions, the victim's score.</p>\n");
    table_moved_allocs(p);
}

/* Contract in report_html.h. */
void html_table_ranks(FILE *out, const report_ranks *rk)
{
    static const col cols[] = {
        {"rank", "rank", NULL, 1, 0},
        {"pid", "pid", NULL, 1, 0},
        {"iterations", "steps", NULL, 1, 0},
        {"median_step_ms", "median step", "the median of the steps' wall times, ms", 1, 0},
        {"peak_device_bytes", "peak device", NULL, 1, 0},
        {"evictions", "evictions", NULL, 1, 0},
        {"cancelled_evictions", "cancelled", NULL, 1, 0},
        {"restores", "restores", NULL, 1, 0},
        {"bytes_to_host", "to host", NULL, 1, 0},
        {"bytes_to_device", "to device", NULL, 1, 0},
        {"stalls", "stalls", NULL, 1, 0},
        {"stall_us", "stalled", "time the program stalled on residency", 1, 0},
        {"trace", "trace", NULL, 0, 0},
    };
    open_table(out, "", "ranks-table", rk->n, cols, NCOLS(cols));
    for (size_t i = 0; i < rk->n; i++) {
        const report_rank *r = &rk->r[i];
        const report_residency *x = &r->s->residency;
        fprintf(out, "<tr data-rank-index=\"%zu\"><td data-value=\"%d\">%d</td>", i, r->t->rank,
                r->t->rank);
        fprintf(out, "<td data-value=\"%d\">%d</td>", r->t->pid, r->t->pid);
        td_u(out, r->s->nsteps);
        td_ms(out, r->median_step_ms, r->median_step_ms >= 0);
        td_bytes(out, r->s->peak_device_bytes);
        td_u(out, x->moves.evictions);
        td_u(out, x->moves.cancelled_evictions);
        td_u(out, x->moves.restores);
        td_bytes(out, x->moves.bytes_to_host);
        td_bytes(out, x->moves.bytes_to_device);
        td_u(out, x->stalls);
        td_us(out, (double)x->stall_ns / 1e3, 1);
        td_text(out, r->t->name);
        fprintf(out, "</tr>\n");
    }
    close_table(out);
}
