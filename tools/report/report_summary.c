/* report_summary.c — `shim-report summary`: the verdict first (report_verdict.c), then steps,
 * counts, peak device bytes, the residency
 * budget, moves and stalls, in-process plans (report_summary_plan.c), top allocations and
 * kernels of a trace, as text (one fact per line, then tables) or as one JSON object. */
#include "report.h"

#include "base_order.h"

#include "shim_trace_format.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define USAGE "summary [--json] [--top N] TRACE..."

static double ms_since(const report_trace *t, uint64_t ns)
{
    return ns >= t->start_ns ? (double)(ns - t->start_ns) / 1e6 : -(double)(t->start_ns - ns) / 1e6;
}

static int by_bytes(const void *pa, const void *pb)
{
    const report_alloc *a = *(report_alloc *const *)pa, *b = *(report_alloc *const *)pb;
    return BASE_CMP_THEN(b->bytes, a->bytes, BASE_CMP(a->t_alloc, b->t_alloc));
}

/* Contract in report.h. */
const report_alloc **report_top_allocs(const report_stats *s, size_t *n, long top)
{
    const report_alloc **v = malloc((s->nallocs + 1) * sizeof *v);
    if (v == NULL) {
        *n = 0;
        return NULL;
    }
    for (size_t i = 0; i < s->nallocs; i++)
        v[i] = &s->allocs[i];
    qsort(v, s->nallocs, sizeof *v, by_bytes);
    *n = s->nallocs < (size_t)top ? s->nallocs : (size_t)top;
    return v;
}

#define U(x) ((unsigned long long)(x))

/* The last detailed step of a bounded trace: the END chunk's, else the step before the first
   summarised one. Returns 0 when there is none to name. */
static int last_detail_step(const report_trace *t, const report_stats *s, uint64_t *step)
{
    if (t->have_detail_end && t->detail_steps > 0) {
        *step = t->last_detail_step;
        return 1;
    }
    if (s->summarised_steps > 0 && s->first_summarised_step > 0) {
        *step = s->first_summarised_step - 1;
        return 1;
    }
    return 0;
}

/* What a bounded trace (format 1.4) left out, one "note:" line each: records lost after a
   write error, the steps summarised past the size limit, records lost at the limit. Nothing
   for a trace that lost nothing and has no summaries. */
static void text_limits(FILE *out, const report_trace *t, const report_stats *s)
{
    if (t->write_error[0] != '\0') {
        fprintf(out, "note: trace: %llu records lost (write error: ", U(t->lost_error));
        report_text_string(out, t->write_error);
        fprintf(out, ")\n");
    }
    if (s->summaries > 0) {
        uint64_t step;
        fprintf(out, "note: trace truncated at limit");
        if (t->max_bytes)
            fprintf(out, " (%llu bytes)", U(t->max_bytes));
        if (last_detail_step(t, s, &step))
            fprintf(out, " after step %llu", U(step));
        fprintf(out,
                ": later steps summarised (%llu steps in %llu summary records, %llu records "
                "folded)\n",
                U(s->summarised_steps), U(s->summaries), U(s->summarised_records));
    }
    if (t->lost_limit > 0) {
        fprintf(out, "note: trace: %llu records lost at the size limit", U(t->lost_limit));
        if (t->lost_steps > 0)
            fprintf(out, " (the summaries of %llu steps, not counted above)", U(t->lost_steps));
        fputc('\n', out);
    }
}

/* With allocations on more than one device (format 1.6 records the device): each device's
   allocations and peak, and its manager's budget and moves (format 1.7); the device figures
   above are the primary device's, the residency figures every device's together. */
static void text_devices(FILE *out, const report_stats *s)
{
    uint32_t seen = 0;
    for (uint32_t d = 0; d < s->ndevices; d++)
        seen += s->device_allocs[d] > 0;
    if (seen < 2)
        return;
    fprintf(out, "devices: %u (the device figures above are device %u's)\n", seen,
            s->primary_device);
    fprintf(out, "    %6s %12s %18s %18s %10s %9s\n", "device", "allocations", "peak_bytes",
            "budget_bytes", "evictions", "restores");
    for (uint32_t d = 0; d < s->ndevices; d++)
        if (s->device_allocs[d])
            fprintf(out, "    %6u %12llu %18llu %18llu %10llu %9llu\n", d, U(s->device_allocs[d]),
                    U(s->device_peak[d]), U(s->device_budget[d]),
                    U(s->device_residency[d].moves.evictions),
                    U(s->device_residency[d].moves.restores));
}

/* The counts of a trace, in the order both forms list them: summary's text ("key: N" lines) and
   its JSON ("key": N members) both come from this table. mib: the text adds the value in MiB. */
typedef struct count_field {
    const char *key;
    size_t off; /* of a uint64_t member of report_stats */
    int mib;
} count_field;

/* The entry of a report_stats member; a member that is not a uint64_t does not compile. */
#define COUNT(key, member, mib)                                                                    \
    {                                                                                              \
        key, _Generic(((report_stats *)0)->member, uint64_t : offsetof(report_stats, member)), mib \
    }

static const count_field counts[] = {
    COUNT("iterations", iterations, 0),
    COUNT("warmup_launches", warmup_launches, 0),
    COUNT("launches", launches, 0),
    COUNT("launches_per_iteration", launches_per_iteration, 0),
    COUNT("allocations", allocations, 0),
    COUNT("allocations_per_iteration", allocations_per_iteration, 0),
    COUNT("frees", frees, 0),
    COUNT("copies", copies, 0),
    COUNT("syncs", syncs, 0),
    COUNT("graph_launches", graph_launches, 0),
    COUNT("kernel_times", kernel_times, 0),
    COUNT("peak_device_bytes", peak_device_bytes, 1),
    COUNT("peak_host_pinned_bytes", peak_host_bytes, 0),
    COUNT("device_bytes_at_end", end_device_bytes, 0),
    COUNT("unmatched_frees", unmatched_frees, 0),
};

#define NCOUNTS (sizeof counts / sizeof counts[0])

static uint64_t count_of(const report_stats *s, const count_field *c)
{
    return *(const uint64_t *)((const char *)s + c->off);
}

static void text_counts(FILE *out, const report_trace *t, const report_stats *s)
{
    fprintf(out, "trace: ");
    report_text_string(out, t->name);
    fprintf(out, "\nformat: %u.%u\npid: %d\nrank: %d\n", t->major, t->minor, t->pid, t->rank);
    if (t->command) {
        fprintf(out, "command: ");
        report_text_string(out, t->command);
        fputc('\n', out);
    }
    fprintf(out, "status: %s\n", t->truncated ? t->note : "complete");
    text_limits(out, t, s);
    fprintf(out, "records: %zu\ndropped_records: %llu\nduration_ms: %.3f\n", t->n, U(t->dropped),
            (double)(s->last_ns - s->first_ns) / 1e6);
    for (size_t i = 0; i < NCOUNTS; i++) {
        uint64_t v = count_of(s, &counts[i]);
        fprintf(out, "%s: %llu", counts[i].key, U(v));
        if (counts[i].mib)
            fprintf(out, " (%.1f MiB)", (double)v / 1048576.0);
        fputc('\n', out);
    }
    fprintf(out, "notes: %llu\n", U(s->notes));
    for (size_t i = 0; i < t->n; i++) /* each note's text, in time order */
        if (t->recs[i].kind == SHIM_TRACE_NOTE) {
            fprintf(out, "note: ");
            report_text_string(out, t->text + t->recs[i].text);
            fputc('\n', out);
        }
    text_devices(out, s);
}

static double mib(uint64_t bytes)
{
    return (double)bytes / 1048576.0;
}

/* The budget in force at the end, and the moves and stalls: zeros without such records. */
static void text_residency(FILE *out, const report_stats *s)
{
    const report_residency *x = &s->residency;
    if (s->budgets)
        fprintf(out, "budget_bytes: %llu (%.1f MiB)\nhost_budget_bytes: %llu (%.1f MiB)\n",
                U(s->budget_bytes), mib(s->budget_bytes), U(s->host_budget_bytes),
                mib(s->host_budget_bytes));
    else
        fprintf(out, "budget_bytes: 0 (none recorded)\nhost_budget_bytes: 0\n");
    fprintf(out, "device_total_bytes: %llu\n", U(s->device_total));
    fprintf(out, "evictions: %llu\ncancelled_evictions: %llu (%llu bytes)\nrestores: %llu\n",
            U(x->moves.evictions), U(x->moves.cancelled_evictions), U(x->moves.cancelled_bytes),
            U(x->moves.restores));
    fprintf(out, "bytes_to_host: %llu (%.1f MiB)\nbytes_to_device: %llu (%.1f MiB)\n",
            U(x->moves.bytes_to_host), mib(x->moves.bytes_to_host), U(x->moves.bytes_to_device),
            mib(x->moves.bytes_to_device));
    fprintf(out, "stalls: %llu\nstall_us: %.3f\n", U(x->stalls), (double)x->stall_ns / 1e3);
}

/* Moves and stalls of each step, when the trace has any. */
static void text_residency_steps(FILE *out, const report_stats *s)
{
    const report_residency *x = &s->residency;
    if (x->moves.evictions + x->moves.cancelled_evictions + x->moves.restores + x->stalls == 0)
        return;
    fprintf(out, "\nresidency by step:\n  %6s %9s %9s %8s %14s %15s %12s\n", "step", "evictions",
            "cancelled", "restores", "bytes_to_host", "bytes_to_device", "stall_us");
    for (size_t i = 0; i < s->nsteps; i++) {
        const report_residency *r = &s->steps[i].residency;
        fprintf(out, "  %6llu %9llu %9llu %8llu %14llu %15llu %12.3f\n", U(s->steps[i].step),
                U(r->moves.evictions), U(r->moves.cancelled_evictions), U(r->moves.restores),
                U(r->moves.bytes_to_host), U(r->moves.bytes_to_device), (double)r->stall_ns / 1e3);
    }
}

static void text_tables(FILE *out, const report_trace *t, const report_stats *s, long top)
{
    /* a bounded trace's table says which rows are summaries, and of how many steps */
    fprintf(out, "\nsteps:\n  %6s %10s %9s %11s %7s %18s %12s%s\n", "step", "first_seq", "launches",
            "allocations", "frees", "peak_device_bytes", "start_ms",
            s->summaries ? "  summary" : "");
    for (size_t i = 0; i < s->nsteps; i++) {
        const report_step *st = &s->steps[i];
        fprintf(out, "  %6llu %10llu %9llu %11llu %7llu %18llu %12.3f", U(st->step),
                U(st->first_seq), U(st->launches), U(st->allocations), U(st->frees),
                U(st->peak_device_bytes), ms_since(t, st->t_start));
        if (s->summaries && st->summary)
            fprintf(out, "  %llu step%s", U(st->covers), st->covers == 1 ? "" : "s");
        else if (s->summaries)
            fprintf(out, "  -");
        fputc('\n', out);
    }
    text_residency_steps(out, s);
    report_summary_plan_text(out, t, s);
    size_t n;
    const report_alloc **v = report_top_allocs(s, &n, top);
    /* by name, not id: the ids are in allocs and --json */
    fprintf(out, "\ntop allocations (by bytes):\n  %14s %8s %12s %12s %8s  %s\n", "bytes", "kind",
            "born_ms", "freed_ms", "touches", "name");
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "  %14llu %8s %12.3f ", U(v[i]->bytes), report_alloc_kind_name(v[i]->kind),
                ms_since(t, v[i]->t_alloc));
        if (v[i]->freed)
            fprintf(out, "%12.3f", ms_since(t, v[i]->t_free));
        else
            fprintf(out, "%12s", "-");
        char name[REPORT_ALLOC_NAME_MAX];
        fprintf(out, " %8llu  ", U(v[i]->touches));
        report_text_string(out, report_alloc_name(v[i], s, name, sizeof name));
        fputc('\n', out);
    }
    free(v);
    fprintf(out, "\ntop kernels (by measured time):\n  %14s %9s %9s %12s  %s\n", "total_us",
            "launches", "timed", "mean_us", "name");
    for (size_t i = 0; i < s->nkernels && i < (size_t)top; i++) {
        const report_kernel *k = &s->kernels[i];
        fprintf(out, "  %14.3f %9llu %9llu %12.3f  ", k->total_us, U(k->launches), U(k->timed),
                k->timed ? k->total_us / (double)k->timed : 0.0);
        report_text_string(out, k->name);
        fputc('\n', out);
    }
}

static void json_u(FILE *out, const char *key, uint64_t v)
{
    fprintf(out, "\"%s\": %llu, ", key, U(v));
}

/* Every device with an allocation: "devices": [{device, allocations, peak_bytes, budget_bytes,
   evictions, restores, bytes_to_host, bytes_to_device, stall_ms}, ...] (budget_bytes 0: no
   manager's budget recorded for it). */
static void json_devices(FILE *out, const report_stats *s)
{
    json_u(out, "primary_device", s->primary_device);
    fputs("\"devices\": [", out);
    for (uint32_t d = 0, n = 0; d < s->ndevices; d++) {
        if (!s->device_allocs[d])
            continue;
        const report_residency *r = &s->device_residency[d];
        fprintf(out,
                "%s{\"device\": %u, \"allocations\": %llu, \"peak_bytes\": %llu, "
                "\"budget_bytes\": %llu, \"evictions\": %llu, \"restores\": %llu, "
                "\"bytes_to_host\": %llu, \"bytes_to_device\": %llu, \"stall_ms\": ",
                n++ ? ", " : "", d, U(s->device_allocs[d]), U(s->device_peak[d]),
                U(s->device_budget[d]), U(r->moves.evictions), U(r->moves.restores),
                U(r->moves.bytes_to_host), U(r->moves.bytes_to_device));
        report_json_double(out, (double)r->stall_ns / 1e6);
        fputs("}", out);
    }
    fputs("], ", out);
}

/* The keys of a bounded trace (format 1.4); zeros, false and null for any other trace. */
static void json_limits(FILE *out, const report_trace *t, const report_stats *s)
{
    uint64_t step;
    json_u(out, "max_bytes", t->max_bytes);
    json_u(out, "summary_records", s->summaries);
    json_u(out, "summarised_steps", s->summarised_steps);
    json_u(out, "summarised_records", s->summarised_records);
    if (s->summaries > 0 && last_detail_step(t, s, &step))
        json_u(out, "last_detail_step", step);
    else
        fprintf(out, "\"last_detail_step\": null, ");
    json_u(out, "lost_at_limit", t->lost_limit);
    json_u(out, "steps_lost_at_limit", t->lost_steps);
    json_u(out, "lost_after_write_error", t->lost_error);
    fprintf(out, "\"write_error\": ");
    if (t->write_error[0] != '\0')
        report_json_string(out, t->write_error);
    else
        fprintf(out, "null");
    fprintf(out, ", ");
}

static void json_counts(FILE *out, const report_trace *t, const report_stats *s)
{
    report_verdict v;
    report_verdict_make(t, s, &v);
    fputc('{', out);
    report_verdict_json(out, &v);
    fprintf(out, "\"trace\": ");
    report_json_string(out, t->name);
    fprintf(out,
            ", \"format\": \"%u.%u\", \"pid\": %d, \"rank\": %d, \"complete\": %s, "
            "\"truncated\": %s, ",
            t->major, t->minor, t->pid, t->rank, t->complete ? "true" : "false",
            t->truncated ? "true" : "false");
    fprintf(out, "\"status\": ");
    report_json_string(out, t->truncated ? t->note : "complete");
    fprintf(out, ", ");
    json_u(out, "records", t->n);
    json_u(out, "dropped_records", t->dropped);
    for (size_t i = 0; i < NCOUNTS; i++)
        json_u(out, counts[i].key, count_of(s, &counts[i]));
    fprintf(out, "\"notes\": [");
    for (size_t i = 0, k = 0; i < t->n; i++)
        if (t->recs[i].kind == SHIM_TRACE_NOTE) {
            fprintf(out, "%s", k++ ? ", " : "");
            report_json_string(out, t->text + t->recs[i].text);
        }
    fprintf(out, "], ");
    json_devices(out, s);
    json_limits(out, t, s);
}

/* The residency keys: all 0 without budget, move or stall records. */
static void json_residency(FILE *out, const report_stats *s)
{
    const report_residency *x = &s->residency;
    json_u(out, "budget_bytes", s->budget_bytes);
    json_u(out, "host_budget_bytes", s->host_budget_bytes);
    json_u(out, "device_total_bytes", s->device_total);
    json_u(out, "evictions", x->moves.evictions);
    json_u(out, "cancelled_evictions", x->moves.cancelled_evictions);
    json_u(out, "restores", x->moves.restores);
    json_u(out, "bytes_to_host", x->moves.bytes_to_host);
    json_u(out, "bytes_to_device", x->moves.bytes_to_device);
    json_u(out, "stalls", x->stalls);
    fprintf(out, "\"stall_us\": ");
    report_json_double(out, (double)x->stall_ns / 1e3);
    fprintf(out, ", \"moves_by_reason\": {");
    for (uint32_t r = 1; r < 8; r++)
        fprintf(out, "\"%s\": %llu, ", report_move_reason_name(r), U(s->moves_by_reason[r]));
    fprintf(out, "\"other\": %llu}, ", U(s->moves_by_reason[0]));
}

static void json_lists(FILE *out, const report_stats *s, long top)
{
    fprintf(out, "\"steps\": [");
    for (size_t i = 0; i < s->nsteps; i++) {
        const report_step *st = &s->steps[i];
        const report_residency *x = &st->residency;
        fprintf(out,
                "%s{\"step\": %llu, \"first_seq\": %llu, \"launches\": %llu, "
                "\"allocations\": %llu, \"frees\": %llu, \"peak_device_bytes\": %llu, "
                "\"summary\": %s, \"covers\": %llu, ",
                i ? ", " : "", U(st->step), U(st->first_seq), U(st->launches), U(st->allocations),
                U(st->frees), U(st->peak_device_bytes), st->summary ? "true" : "false",
                U(st->covers));
        fprintf(out,
                "\"evictions\": %llu, \"cancelled_evictions\": %llu, \"restores\": %llu, "
                "\"bytes_to_host\": %llu, \"bytes_to_device\": %llu, \"stall_us\": ",
                U(x->moves.evictions), U(x->moves.cancelled_evictions), U(x->moves.restores),
                U(x->moves.bytes_to_host), U(x->moves.bytes_to_device));
        report_json_double(out, (double)x->stall_ns / 1e3);
        fprintf(out, ", \"wall_us\": ");
        if (report_step_wall_us(st) >= 0)
            report_json_double(out, report_step_wall_us(st));
        else
            fprintf(out, "null");
        fputc('}', out);
    }
    size_t n;
    const report_alloc **v = report_top_allocs(s, &n, top);
    fprintf(out, "], \"top_allocations\": [");
    for (size_t i = 0; i < n; i++) {
        char name[REPORT_ALLOC_NAME_MAX];
        fprintf(out,
                "%s{\"alloc_id\": %llu, \"bytes\": %llu, \"kind\": \"%s\", \"freed\": %s, "
                "\"touches\": %llu, \"role\": \"%s\", \"name\": ",
                i ? ", " : "", U(v[i]->id), U(v[i]->bytes), report_alloc_kind_name(v[i]->kind),
                v[i]->freed ? "true" : "false", U(v[i]->touches),
                report_alloc_role_name(report_alloc_role_of(v[i], s)));
        report_json_string(out, report_alloc_name(v[i], s, name, sizeof name));
        fputc('}', out);
    }
    free(v);
    fprintf(out, "], \"kernels\": [");
    for (size_t i = 0; i < s->nkernels; i++) {
        const report_kernel *k = &s->kernels[i];
        fprintf(out, "%s{", i ? ", " : "");
        report_kernel_json_fields(out, k);
        fputc('}', out);
    }
    fprintf(out, "]}");
}

/* Contract in report.h. */
void report_summary_json(FILE *out, const report_trace *t, const report_stats *s, long top)
{
    json_counts(out, t, s);
    json_residency(out, s);
    report_summary_plan_json(out, t, s);
    json_lists(out, s, top);
}

/* Contract in report.h. */
void report_summary_print(FILE *out, const report_trace *t, const report_stats *s, int json,
                          long top)
{
    if (json) {
        report_summary_json(out, t, s, top);
        fputc('\n', out);
    } else {
        report_verdict v;
        report_verdict_make(t, s, &v);
        report_verdict_text(out, &v);
        text_counts(out, t, s);
        text_residency(out, s);
        text_tables(out, t, s, top);
    }
}

/* `summary [--json] [--top N] TRACE...`. Exit status: 0, 1 when a trace cannot be read (the
   others are summarised side by side all the same), 2 bad usage. A truncated trace is
   summarised up to its last whole chunk, with a note on stderr. One trace: its summary; several:
   report_summary_ranks_print. */
int report_summary_main(int argc, char **argv, char **envp)
{
    (void)envp;
    report_opts o;
    int rc = report_opts_parse_many(&o, argc, argv, USAGE, 1, 0);
    if (rc != 0)
        return rc == 1 ? 1 : 2;
    report_trace *t;
    report_stats *s;
    size_t n;
    rc = report_open_many(&o, &t, &s, &n);
    if (o.ntraces == 1 && n == 1)
        report_summary_print(stdout, &t[0], &s[0], o.json, o.top);
    else if (n > 0 && report_summary_ranks_print(stdout, t, s, n, o.json, o.top) != 0) {
        fprintf(stderr, "shim-report: out of memory\n");
        rc = 1;
    }
    report_close_all(t, s, n);
    report_opts_free(&o);
    return rc;
}
