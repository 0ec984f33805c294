/* fuzz_trace.c — libFuzzer target: the trace reader on arbitrary bytes, then every analysis and
 * output of shim-report's trace subcommands (moves, memviz, the step model and the HTML page
 * included) on whatever it accepted (the plan tables, step summaries, and the summary of several
 * traces: this one twice). Each input is read twice: as it is, and with every chunk's checksum
 * made right, so that mutations reach the payload parsers instead of stopping at the checksum. */
#include "report.h"
#include "report_model.h"
#include "shim_trace_format.h"

#include "plan_build.h"

#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

static FILE *sink;

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Rewrites the CRC of every whole chunk of p in place. */
static void fix_checksums(unsigned char *p, size_t size)
{
    static uint32_t table[256];
    if (table[1] == 0)
        shim_trace_crc32_init(table);
    size_t at = size >= 16 && le32(p + 12) >= 16 && le32(p + 12) <= 4096 ? le32(p + 12) : 16;
    while (at <= size && size - at >= SHIM_TRACE_CHUNK_HEADER) {
        uint32_t len = le32(p + at + 8);
        if (len > size - at - SHIM_TRACE_CHUNK_HEADER)
            break;
        uint32_t crc = shim_trace_crc32(table, 0, p + at, 12);
        crc = shim_trace_crc32(table, crc, p + at + SHIM_TRACE_CHUNK_HEADER, len);
        memcpy(p + at + 12, &crc, 4);
        at += SHIM_TRACE_CHUNK_HEADER + (size_t)len;
    }
}

/* Every move starts at a transition and ends at a later one of the same unit, or not at all,
   on the device its starting transition names; the other transitions point at moves that
   exist; the totals add up. */
static void check_moves(const report_trace *t, const report_moves *m, uint32_t primary)
{
    CHECK(m->nmoves + m->nothers <= m->transitions && m->transitions <= t->n);
    uint64_t outcomes = 0, reasons = 0;
    for (size_t i = 0; i < REPORT_OUTCOMES; i++)
        outcomes += m->by_outcome[i];
    for (size_t i = 0; i < REPORT_REASONS; i++)
        reasons += m->by_reason[i];
    uint64_t devices = 0;
    for (size_t i = 0; i < REPORT_MAX_DEVICES; i++)
        devices += m->by_device[i];
    CHECK(outcomes == m->nmoves && reasons == m->nmoves && devices == m->nmoves);
    for (size_t i = 0; i < m->nmoves; i++) {
        const report_move *mv = &m->moves[i];
        CHECK(mv->start_rec < t->n && t->recs[mv->start_rec].a == mv->unit);
        CHECK(mv->end_rec == SIZE_MAX ||
              (mv->end_rec > mv->start_rec && mv->end_rec < t->n &&
               t->recs[mv->end_rec].a == mv->unit && mv->t_end >= mv->t_start));
        CHECK((mv->end_rec == SIZE_MAX) ==
              (mv->outcome == REPORT_UNFINISHED || mv->outcome == REPORT_SUPERSEDED));
        CHECK(mv->slab || mv->members == 0);
        CHECK(mv->device < REPORT_MAX_DEVICES &&
              mv->device == report_record_device(t, &t->recs[mv->start_rec], primary));
    }
    for (size_t i = 0; i < m->nothers; i++)
        CHECK(m->others[i].rec < t->n &&
              (m->others[i].move == SIZE_MAX || m->others[i].move < m->nmoves));
}

/* Every plan and plan_step record has its own entry in its table, and the record points at it. */
static void check_plans(const report_trace *t)
{
    size_t plans = 0, steps = 0, summaries = 0;
    for (size_t i = 0; i < t->n; i++) {
        const report_rec *r = &t->recs[i];
        if (r->kind == SHIM_TRACE_PLAN) {
            CHECK(r->a < t->nplans && t->plans[r->a].t_ns == r->t_ns);
            plans++;
        } else if (r->kind == SHIM_TRACE_PLAN_STEP) {
            CHECK(r->a < t->nplan_steps && t->plan_steps[r->a].t_ns == r->t_ns);
            steps++;
        } else if (r->kind == SHIM_TRACE_STEP_SUMMARY) {
            CHECK(r->a < t->nsummaries && t->summaries[r->a].t_ns == r->t_ns);
            summaries++;
        }
    }
    CHECK(plans == t->nplans && steps == t->nplan_steps && summaries == t->nsummaries);
    CHECK(t->nplans + t->nplan_steps + t->nsummaries <= t->n);
}

/* The step model of whatever was read: valid when built, an error naming the trace otherwise;
   written to the model format and read back. */
static void check_model(const report_trace *t)
{
    report_model_opts o;
    report_model_opts_init(&o);
    plan_model m, back;
    plan_build_info info;
    char err[600], msg[256], *text;
    size_t len;
    plan_model_init(&m);
    plan_model_init(&back);
    if (report_model_build(t, &o, &m, &info, NULL, err, sizeof err) != 0) {
        CHECK(strncmp(err, "fuzz.trace: ", 12) == 0 && m.nops == 0 && m.nallocs == 0);
        return;
    }
    CHECK(plan_model_check(&m, NULL, msg, sizeof msg) == PLAN_OK);
    CHECK(info.ops == m.nops && info.timed + info.filled == m.nops && info.timed > 0);
    CHECK(info.allocs == m.nallocs && info.cyclic <= m.nallocs);
    if (plan_model_write(&m, &text, &len) == PLAN_OK) {
        CHECK(plan_model_parse(text, len, "fuzz.model", &back, msg, sizeof msg) == PLAN_OK);
        CHECK(back.nops == m.nops && back.nallocs == m.nallocs && back.ntouches == m.ntouches);
        free(text);
    }
    plan_model_free(&back);
    plan_model_free(&m);
}

/* The memory_viz snapshot: a whole pickle (PROTO 2 ... STOP), every container closed. */
static void check_memviz(const report_trace *t, const report_stats *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL)
        return;
    int rc = report_memviz_print(f, t, s);
    CHECK(fclose(f) == 0);
    CHECK(rc == 0 && len >= 3 && (unsigned char)buf[0] == 0x80 && buf[1] == 2 &&
          buf[len - 1] == '.');
    free(buf);
}

static void one(const unsigned char *data, size_t size)
{
    report_trace t;
    char err[512];
    err[0] = '\0';
    if (report_trace_load_mem(&t, data, size, "fuzz.trace", err, sizeof err) != 0) {
        /* one line naming the file and, past the opening, a byte offset */
        CHECK(strncmp(err, "fuzz.trace: ", 12) == 0);
        CHECK(strchr(err, '\n') == NULL);
        CHECK(t.n == 0 && t.recs == NULL);
        return;
    }
    CHECK(t.n <= size / 16);
    CHECK(t.ids_len <= size / 8);
    CHECK(t.truncated || t.complete);
    CHECK(!t.truncated || t.truncated_at <= size);
    for (size_t i = 1; i < t.n; i++)
        CHECK(t.recs[i - 1].t_ns <= t.recs[i].t_ns);
    check_plans(&t);
    report_stats s;
    if (report_stats_compute(&s, &t) == 0) {
        CHECK(s.warmup_launches <= s.launches);
        CHECK(s.summaries == t.nsummaries && s.iterations >= s.nsteps);
        const report_residency *x = &s.residency;
        for (size_t i = 0; i < s.nsteps; i++) { /* saturating sums: no step above the total */
            const report_residency *y = &s.steps[i].residency;
            CHECK(y->bytes_to_host <= x->bytes_to_host && y->stall_ns <= x->stall_ns);
            CHECK(s.steps[i].covers >= 1 && (s.steps[i].covers == 1 || s.steps[i].summary));
        }
        if (t.nsummaries == 0) { /* every count is of records; step summaries (1.4) carry any */
            CHECK(s.launches <= t.n && s.allocations <= t.n && s.frees <= t.n);
            CHECK(x->evictions + x->cancelled_evictions + x->restores + s.odd_moves + x->stalls +
                      s.budgets <=
                  t.n);
            uint64_t moves = 0, stalls = 0; /* each move or stall is in one step at most */
            for (size_t i = 0; i < s.nsteps; i++) {
                const report_residency *y = &s.steps[i].residency;
                moves += y->evictions + y->cancelled_evictions + y->restores;
                stalls += y->stalls;
            }
            CHECK(moves <= x->evictions + x->cancelled_evictions + x->restores);
            CHECK(stalls <= x->stalls);
            CHECK(s.iterations == s.nsteps);
        }
        report_summary_print(sink, &t, &s, 0, 10);
        report_summary_print(sink, &t, &s, 1, 3);
        report_trace tt[2] = {t, t}; /* the same trace as two ranks, side by side */
        report_stats ss[2] = {s, s};
        CHECK(report_summary_ranks_print(sink, tt, ss, 2, 0, 10) == 0);
        CHECK(report_summary_ranks_print(sink, tt, ss, 2, 1, 3) == 0);
        report_kernels_print(sink, &s, 0);
        report_kernels_print(sink, &s, 1);
        report_allocs_print(sink, &t, &s, 0);
        report_allocs_print(sink, &t, &s, 1);
        report_perfetto_print(sink, &t, &s);
        const report_trace *two_t[2] = {&t, &t};
        const report_stats *two_s[2] = {&s, &s};
        report_perfetto_print_ranks(sink, two_t, two_s, 2);
        check_memviz(&t, &s);
        report_moves m;
        if (report_moves_compute(&m, &t, &s) == 0) {
            check_moves(&t, &m, s.primary_device);
            report_moves_print(sink, &t, &m, 0);
            report_moves_print(sink, &t, &m, 1);
            report_moves_free(&m);
        }
        report_html_print(sink, &t, &s, 3);
        report_stats_free(&s);
    }
    check_model(&t);
    report_trace_free(&t);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (sink == NULL && (sink = fopen("/dev/null", "w")) == NULL)
        return 0;
    one(data, size);
    unsigned char *copy = malloc(size + 1);
    CHECK(copy != NULL);
    memcpy(copy, data, size);
    fix_checksums(copy, size);
    one(copy, size);
    free(copy);
    return 0;
}
