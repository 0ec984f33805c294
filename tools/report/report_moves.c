/* report_moves.c — `shim-report moves`: every residency move of a trace (format 1.2 transitions)
 * with its cause and outcome, one row each and a totals line, or as JSON with the transitions
 * that are not moves (cancellations, errors, frees). */
#include "report.h"
#include "shim_trace_format.h"

#include "shim_trace.h"

#define USAGE "moves [--json] TRACE"
#define U(x)  ((unsigned long long)(x))

/* Microseconds from the trace's start (negative before it). */
static double us(const report_trace *t, uint64_t ns)
{
    return ns >= t->start_ns ? (double)(ns - t->start_ns) / 1e3 : -(double)(t->start_ns - ns) / 1e3;
}

/* "12" for an allocation, "slab 3 (2 allocations)" for a slab. */
static void unit_name(char *out, size_t len, uint64_t unit, int slab, uint64_t members)
{
    if (slab)
        snprintf(out, len, "slab %llu (%llu allocation%s)", U(unit), U(members),
                 members == 1 ? "" : "s");
    else
        snprintf(out, len, "%llu", U(unit));
}

/* Whether the move's score and predicted next use mean something: a budget eviction. */
static int chosen_by_budget(const report_move *mv)
{
    return mv->event == SHIM_EV_EVICT && mv->reason == SHIM_REASON_BUDGET;
}

static const char *direction(uint32_t event)
{
    return report_move_dir_name(event == SHIM_EV_EVICT ? SHIM_MOVE_TO_HOST : SHIM_MOVE_TO_DEVICE);
}

/* The name of the move's allocation (report_alloc_name), "" for a slab or an unknown one. */
static const char *move_name(const report_moves *m, const report_move *mv, char *buf, size_t n)
{
    buf[0] = '\0';
    return mv->alloc && m->stats ? report_alloc_name(mv->alloc, m->stats, buf, n) : buf;
}

static void text_row(FILE *out, const report_trace *t, const report_moves *m, const report_move *mv)
{
    char name[REPORT_ALLOC_NAME_MAX];
    char unit[64], stream[24], end[32] = "-", dur[32] = "-", score[24] = "-", next[24] = "-";
    unit_name(unit, sizeof unit, mv->unit, mv->slab, mv->members);
    snprintf(stream, sizeof stream, "0x%llx", U(mv->stream));
    if (mv->end_rec != SIZE_MAX) {
        snprintf(end, sizeof end, "%.3f", us(t, mv->t_end));
        snprintf(dur, sizeof dur, "%.3f", (double)(mv->t_end - mv->t_start) / 1e3);
    }
    if (chosen_by_budget(mv)) {
        snprintf(score, sizeof score, "%llu", U(mv->score));
        if (mv->next_use == UINT64_MAX)
            snprintf(next, sizeof next, "unknown");
        else
            snprintf(next, sizeof next, "%llu", U(mv->next_use));
    }
    fprintf(out, "%-28s %6u %-9s %14llu %-9s %-10s %14s %10llu %14.3f %14s %12s %12s %10s", unit,
            mv->device, direction(mv->event), U(mv->bytes), report_move_reason_name(mv->reason),
            report_outcome_name(mv->outcome), stream, U(mv->seq), us(t, mv->t_start), end, dur,
            score, next);
    if (*move_name(m, mv, name, sizeof name)) { /* a slab has no one name */
        fputs("  ", out);
        report_text_string(out, name);
    }
    fputc('\n', out);
}

/* The reason names for the totals: reasons the format does not define are "other". */
static const char *reason_or_other(uint32_t reason)
{
    return reason == 0 ? "other" : report_move_reason_name(reason);
}

/* The entry point that pinned an allocation (enum shim_pin_reason). */
static const char *pin_reason_name(uint32_t reason)
{
    static const char *names[] = {"?", "ipc", "export", "retain", "address_range"};
    return reason < sizeof names / sizeof names[0] ? names[reason] : "?";
}

static void print_text(FILE *out, const report_trace *t, const report_moves *m)
{
    fprintf(out, "%-28s %6s %-9s %14s %-9s %-10s %14s %10s %14s %14s %12s %12s %10s  %s\n", "unit",
            "device", "direction", "bytes", "reason", "outcome", "stream", "seq", "start_us",
            "end_us", "dur_us", "score", "next_use", "name");
    for (size_t i = 0; i < m->nmoves; i++)
        text_row(out, t, m, &m->moves[i]);
    char w[512]; /* the taxonomy in the words every surface prints (shim_trace_figures.h) */
    fprintf(out, "total: %s; bytes to host: %llu; bytes to device: %llu; by device: ",
            shim_fig_moves_words(w, sizeof w, &m->taxonomy), U(m->bytes_to_host),
            U(m->bytes_to_device));
    int any = 0;
    for (uint32_t d = 0; d < REPORT_MAX_DEVICES; d++)
        if (m->by_device[d] > 0) {
            fprintf(out, "%s%u %llu", any ? ", " : "", d, U(m->by_device[d]));
            any = 1;
        }
    fprintf(out, "%s\n", any ? "" : "none");
    for (size_t i = 0; i < t->n; i++) { /* only traces of 1.5 on have pins */
        const report_rec *r = &t->recs[i];
        if (r->kind == SHIM_TRACE_PIN)
            fprintf(out,
                    "pinned: allocation %llu (%llu bytes at 0x%llx, unit %llu) by %s at %.3f us\n",
                    U(r->a), U(r->d), U(r->c), U(r->b), pin_reason_name(r->sub), us(t, r->t_ns));
    }
}

/* The keys a move and another transition share: unit_id, unit, slab, allocations. */
static void json_unit(FILE *out, uint64_t unit, int slab, uint64_t members)
{
    char name[64];
    unit_name(name, sizeof name, unit, slab, members);
    fprintf(out, "\"unit_id\": %llu, \"unit\": ", U(unit));
    report_json_string(out, name);
    fprintf(out, ", \"slab\": %s, \"allocations\": ", slab ? "true" : "false");
    if (slab)
        fprintf(out, "%llu", U(members));
    else
        fprintf(out, "null");
}

static void json_u_or_null(FILE *out, const char *key, int valid, uint64_t v)
{
    if (valid)
        fprintf(out, ", \"%s\": %llu", key, U(v));
    else
        fprintf(out, ", \"%s\": null", key);
}

static void json_move(FILE *out, const report_trace *t, const report_moves *m,
                      const report_move *mv)
{
    int ended = mv->end_rec != SIZE_MAX, budget = chosen_by_budget(mv);
    char name[REPORT_ALLOC_NAME_MAX];
    fprintf(out, "{");
    json_unit(out, mv->unit, mv->slab, mv->members);
    fprintf(out, ", \"name\": ");
    if (mv->alloc && m->stats)
        report_json_string(out, move_name(m, mv, name, sizeof name));
    else
        fprintf(out, "null");
    fprintf(out,
            ", \"device\": %u, \"direction\": \"%s\", \"event\": \"%s\", \"bytes\": %llu, "
            "\"reason\": \"%s\", "
            "\"outcome\": \"%s\", \"stream\": \"0x%llx\", \"seq\": %llu, \"start_us\": ",
            mv->device, direction(mv->event), report_resid_event_name(mv->event), U(mv->bytes),
            report_move_reason_name(mv->reason), report_outcome_name(mv->outcome), U(mv->stream),
            U(mv->seq));
    report_json_double(out, us(t, mv->t_start));
    fprintf(out, ", \"end_us\": ");
    if (ended)
        report_json_double(out, us(t, mv->t_end));
    else
        fprintf(out, "null");
    fprintf(out, ", \"duration_us\": ");
    if (ended)
        report_json_double(out, (double)(mv->t_end - mv->t_start) / 1e3);
    else
        fprintf(out, "null");
    if (ended)
        fprintf(out, ", \"end_event\": \"%s\", \"end_reason\": \"%s\"",
                report_resid_event_name(mv->end_event), report_move_reason_name(mv->end_reason));
    else
        fprintf(out, ", \"end_event\": null, \"end_reason\": null");
    json_u_or_null(out, "end_seq", ended, mv->end_seq);
    json_u_or_null(out, "score", budget, mv->score);
    json_u_or_null(out, "next_use", budget && mv->next_use != UINT64_MAX, mv->next_use);
    fprintf(out, "}");
}

static void json_other(FILE *out, const report_trace *t, const report_other *o)
{
    const report_rec *r = &t->recs[o->rec];
    fprintf(out, "{");
    json_unit(out, r->a, o->slab, o->members);
    fprintf(out,
            ", \"device\": %u, \"event\": \"%s\", \"from\": \"%s\", \"to\": \"%s\", \"reason\": "
            "\"%s\", "
            "\"bytes\": %llu, \"stream\": \"0x%llx\", \"seq\": %llu, \"time_us\": ",
            o->device, report_resid_event_name(r->sub), report_resid_state_name(r->sub3),
            report_resid_state_name(r->sub4), report_move_reason_name(r->sub2), U(r->b), U(r->d),
            U(r->c));
    report_json_double(out, us(t, r->t_ns));
    json_u_or_null(out, "move", o->move != SIZE_MAX, o->move);
    fprintf(out, "}");
}

/* Contract in report.h. */
void report_moves_totals_json(FILE *out, const report_moves *m)
{
    fprintf(out, "{\"moves\": %zu, \"transitions\": %llu, \"slabs\": %llu, ", m->nmoves,
            U(m->transitions), U(m->slabs));
    fprintf(out, "\"by_reason\": {");
    for (uint32_t i = 1; i <= REPORT_REASONS; i++) /* "other" (index 0) last */
        fprintf(out, "%s\"%s\": %llu", i > 1 ? ", " : "", reason_or_other(i % REPORT_REASONS),
                U(m->by_reason[i % REPORT_REASONS]));
    fprintf(out, "}, \"by_outcome\": {");
    for (uint32_t i = 0; i < REPORT_OUTCOMES; i++)
        fprintf(out, "%s\"%s\": %llu", i ? ", " : "", report_outcome_name(i), U(m->by_outcome[i]));
    fprintf(out, "}, \"bytes_to_host\": %llu, \"bytes_to_device\": %llu, \"by_device\": {",
            U(m->bytes_to_host), U(m->bytes_to_device));
    int any = 0;
    for (uint32_t d = 0; d < REPORT_MAX_DEVICES; d++)
        if (m->by_device[d] > 0) {
            fprintf(out, "%s\"%u\": %llu", any ? ", " : "", d, U(m->by_device[d]));
            any = 1;
        }
    fprintf(out, "}}");
}

static void print_json(FILE *out, const report_trace *t, const report_moves *m)
{
    fprintf(out, "{\"moves\": [");
    for (size_t i = 0; i < m->nmoves; i++) {
        fprintf(out, "%s\n  ", i ? "," : "");
        json_move(out, t, m, &m->moves[i]);
    }
    fprintf(out, "\n], \"transitions\": [");
    for (size_t i = 0; i < m->nothers; i++) {
        fprintf(out, "%s\n  ", i ? "," : "");
        json_other(out, t, &m->others[i]);
    }
    fprintf(out, "\n], \"pins\": [");
    for (size_t i = 0, k = 0; i < t->n; i++) {
        const report_rec *r = &t->recs[i];
        if (r->kind != SHIM_TRACE_PIN)
            continue;
        fprintf(out,
                "%s\n  {\"alloc_id\": %llu, \"unit_id\": %llu, \"addr\": \"0x%llx\", \"bytes\": "
                "%llu, \"reason\": \"%s\", \"from\": \"%s\", \"time_us\": ",
                k++ ? "," : "", U(r->a), U(r->b), U(r->c), U(r->d), pin_reason_name(r->sub),
                report_resid_state_name(r->sub2));
        report_json_double(out, us(t, r->t_ns));
        fprintf(out, "}");
    }
    fprintf(out, "\n], \"totals\": ");
    report_moves_totals_json(out, m);
    fprintf(out, "}\n");
}

/* Contract in report.h. */
void report_moves_print(FILE *out, const report_trace *t, const report_moves *m, int json)
{
    if (json)
        print_json(out, t, m);
    else
        print_text(out, t, m);
}

static int moves(const report_trace *t, const report_stats *s, const report_opts *o)
{
    report_moves m;
    int rc = report_moves_compute(&m, t, s);
    if (rc != 0)
        fprintf(stderr, "shim-report: %s: out of memory\n", o->trace);
    else
        report_moves_print(stdout, t, &m, o->json);
    report_moves_free(&m);
    return rc != 0;
}

/* `moves [--json] TRACE`. Exit status as in report.h. A trace older than format 1.2 has no
   transitions: the table is empty. */
int report_moves_main(int argc, char **argv, char **envp)
{
    (void)envp;
    return report_run_one(argc, argv, USAGE, 1, 0, moves);
}
