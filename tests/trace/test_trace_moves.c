/* test_trace_moves.c — residency transitions and slabs (format 1.2): written by the real writer
 * and read back field by field (values at their limits, the record's zero bytes), then paired
 * into moves by report_moves_compute on records with exact times (every outcome, interleaved
 * units, a superseded move, transitions that end no move, saturated totals), slab members at
 * the edges of their range and life, and the text and JSON of `shim-report moves`. */
#include "report.h"
#include "shim_trace.h"
#include "shim_trace_format.h"
#include "trace_bytes.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* The records of kind in the file at path: their sizes and bodies, in file order. */
typedef struct raw {
    uint16_t size[8];
    uint8_t body[8][64];
    int n;
} raw;

static void raw_records(const char *path, uint16_t kind, raw *out)
{
    static uint8_t file[1 << 16];
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t len = fread(file, 1, sizeof file, f);
    fclose(f);
    memset(out, 0, sizeof *out);
    for (size_t at = SHIM_TRACE_PREAMBLE_SIZE; at + SHIM_TRACE_CHUNK_HEADER <= len;) {
        uint32_t type = (uint32_t)le(file + at + 4, 4), plen = (uint32_t)le(file + at + 8, 4);
        const uint8_t *p = file + at + SHIM_TRACE_CHUNK_HEADER;
        for (size_t r = 0; type == SHIM_TRACE_CHUNK_RECORDS && r < plen;) {
            uint16_t size = (uint16_t)le(p + r + 2, 2);
            assert_true(size >= SHIM_TRACE_RECORD_HEADER && r + size <= plen);
            if (le(p + r, 2) == kind && out->n < 8 && size - SHIM_TRACE_RECORD_HEADER <= 64) {
                out->size[out->n] = size;
                memcpy(out->body[out->n++], p + r + SHIM_TRACE_RECORD_HEADER,
                       size - SHIM_TRACE_RECORD_HEADER);
            }
            r += size;
        }
        at += SHIM_TRACE_CHUNK_HEADER + plen;
    }
}

/* ---- the writer ---- */

/* Fields at their limits, values outside the enums, a caller's struct whose padding is
   garbage, a NULL transition (nothing recorded), slabs. */
static void written_and_read_back(void **state)
{
    (void)state;
    char path[] = "/tmp/test_trace_moves.XXXXXX";
    struct shim_trace_info info = {1, 0, "test_trace_moves", NULL, 0, 0, NULL};
    writer_start(path, &info);
    uint64_t before = now_ns();
    struct shim_trace_transition a;
    memset(&a, 0xff, sizeof a); /* any padding stays 0xff */
    a.unit_id = 7;
    a.bytes = UINT64_MAX;
    a.stream = 0x5000;
    a.seq = 0;
    a.score = UINT64_MAX - 1;
    a.next_use = UINT64_MAX;
    a.from = SHIM_RS_DEVICE;
    a.to = SHIM_RS_EVICTING;
    a.event = SHIM_EV_EVICT;
    a.reason = SHIM_REASON_PLANNED_EVICT;
    a.device = 3;
    shim_trace_transition(&a);
    shim_trace_transition(NULL);
    struct shim_trace_transition b = {UINT64_MAX, 0,   2,   UINT64_MAX, 1,         0,
                                      255,        254, 253, 252,        UINT32_MAX};
    shim_trace_transition(&b);
    shim_trace_slab(9, 0x7f1000000000ull, 2u << 20, 2);
    shim_trace_slab(UINT64_MAX, UINT64_MAX, 0, UINT32_MAX);
    uint64_t after = now_ns();
    shim_trace_stop();

    report_trace t;
    load_or_fail(&t, path);
    assert_int_equal(t.minor, SHIM_TRACE_MINOR);
    assert_int_equal(t.n, 4);
    assert_int_equal(t.skipped_records, 0);
    const report_rec *r = t.recs;
    assert_int_equal(r[0].kind, SHIM_TRACE_TRANSITION);
    assert_int_equal(r[0].a, 7);
    assert_int_equal(r[0].b, UINT64_MAX);
    assert_int_equal(r[0].d, 0x5000);
    assert_int_equal(r[0].c, 0);
    assert_int_equal(r[0].e, UINT64_MAX - 1);
    assert_int_equal(r[0].f, UINT64_MAX);
    assert_int_equal(r[0].sub3, SHIM_RS_DEVICE);
    assert_int_equal(r[0].sub4, SHIM_RS_EVICTING);
    assert_int_equal(r[0].sub, SHIM_EV_EVICT);
    assert_int_equal(r[0].sub2, SHIM_REASON_PLANNED_EVICT);
    assert_int_equal(r[0].device, 3);
    assert_true(r[0].t_ns >= before && r[0].t_ns <= after);
    assert_int_equal(r[0].tid, (uint32_t)getpid()); /* the main thread's id is the pid */
    assert_int_equal(r[1].kind, SHIM_TRACE_TRANSITION);
    assert_int_equal(r[1].a, UINT64_MAX);
    assert_int_equal(r[1].b, 0);
    assert_int_equal(r[1].d, 2);
    assert_int_equal(r[1].c, UINT64_MAX);
    assert_int_equal(r[1].e, 1);
    assert_int_equal(r[1].f, 0);
    assert_int_equal(r[1].sub3, 255); /* values the enums lack travel as they are */
    assert_int_equal(r[1].sub4, 254);
    assert_int_equal(r[1].sub, 253);
    assert_int_equal(r[1].sub2, 252);
    assert_int_equal(r[1].device, UINT32_MAX);
    assert_int_equal(r[2].kind, SHIM_TRACE_SLAB);
    assert_int_equal(r[2].a, 9);
    assert_int_equal(r[2].b, 0x7f1000000000ull);
    assert_int_equal(r[2].c, 2u << 20);
    assert_int_equal(r[2].device, 2);
    assert_int_equal(r[3].a, UINT64_MAX);
    assert_int_equal(r[3].b, UINT64_MAX);
    assert_int_equal(r[3].c, 0);
    assert_int_equal(r[3].device, UINT32_MAX);
    assert_int_equal(report_record_device(&t, &r[0], 1), 3);
    assert_int_equal(report_record_device(&t, &r[2], 1), 2);
    assert_int_equal(report_record_device(&t, &r[1], 1), REPORT_MAX_DEVICES - 1);
    t.minor = 7; /* an older trace: its transitions and slabs are the primary device's */
    assert_int_equal(report_record_device(&t, &r[0], 1), 1);
    assert_int_equal(report_record_device(&t, &r[2], 5), 5);
    report_trace_free(&t);

    raw x;
    raw_records(path, SHIM_TRACE_TRANSITION, &x);
    assert_int_equal(x.n, 2);
    for (int i = 0; i < 2; i++)
        assert_int_equal(x.size[i], SHIM_TRACE_RECORD_HEADER + 56);
    assert_int_equal(le(x.body[0] + 52, 4), 3); /* the device, not the caller's padding */
    assert_int_equal(le(x.body[1] + 52, 4), UINT32_MAX);
    assert_int_equal(x.body[0][48], SHIM_RS_DEVICE);
    assert_int_equal(x.body[0][51], SHIM_REASON_PLANNED_EVICT);
    raw_records(path, SHIM_TRACE_SLAB, &x);
    assert_int_equal(x.n, 2);
    assert_int_equal(x.size[0], SHIM_TRACE_RECORD_HEADER + 32);
    assert_int_equal(le(x.body[0] + 8, 8), 0x7f1000000000ull);
    assert_int_equal(le(x.body[0] + 24, 4), 2);
    for (int k = 28; k < 32; k++) /* the padding: zero */
        assert_int_equal(x.body[0][k], 0);
    unlink(path);
}

/* ---- pairing, on records built in memory ---- */

#define MAXRECS 32

typedef struct mem {
    report_rec recs[MAXRECS];
    report_trace t;
    report_stats s;
    report_moves m;
} mem;

static report_rec *add(mem *x, uint16_t kind, uint64_t t_ns)
{
    assert_true(x->t.n < MAXRECS);
    if (x->t.n > 0)
        assert_true(x->recs[x->t.n - 1].t_ns <= t_ns); /* the loader's order */
    report_rec *r = &x->recs[x->t.n];
    *r = (report_rec){.kind = kind, .t_ns = t_ns, .order = x->t.n};
    x->t.n++;
    return r;
}

/* A transition: unit, event, reason, bytes; stream 0x10, seq t/100, score 9, next use 20. */
static report_rec *tr(mem *x, uint64_t t, uint64_t unit, uint32_t event, uint32_t reason,
                      uint64_t bytes)
{
    report_rec *r = add(x, SHIM_TRACE_TRANSITION, t);
    r->a = unit;
    r->b = bytes;
    r->c = t / 100;
    r->d = 0x10;
    r->e = 9;
    r->f = 20;
    r->sub = event;
    r->sub2 = reason;
    r->sub3 = SHIM_RS_DEVICE;
    r->sub4 = SHIM_RS_EVICTING;
    return r;
}

static void alloc_rec(mem *x, uint64_t t, uint64_t id, uint64_t addr, uint32_t kind)
{
    report_rec *r = add(x, SHIM_TRACE_ALLOC, t);
    r->a = id;
    r->b = addr;
    r->c = 16;
    r->sub = kind;
}

static void free_rec(mem *x, uint64_t t, uint64_t id)
{
    add(x, SHIM_TRACE_FREE, t)->a = id;
}

static void slab_rec(mem *x, uint64_t t, uint64_t id, uint64_t addr, uint64_t bytes)
{
    report_rec *r = add(x, SHIM_TRACE_SLAB, t);
    r->a = id;
    r->b = addr;
    r->c = bytes;
}

static void compute(mem *x)
{
    x->t.name = "mem";
    x->t.recs = x->recs;
    assert_int_equal(report_stats_compute(&x->s, &x->t), 0);
    assert_int_equal(report_moves_compute(&x->m, &x->t, &x->s), 0);
}

static void release(mem *x)
{
    report_moves_free(&x->m);
    report_stats_free(&x->s);
}

/* Checks a move: unit, event, start and end times (end 0: no end), outcome. */
static void expect_move(const report_move *mv, uint64_t unit, uint32_t event, uint64_t start,
                        uint64_t end, uint32_t outcome)
{
    assert_int_equal(mv->unit, unit);
    assert_int_equal(mv->event, event);
    assert_int_equal(mv->t_start, start);
    assert_int_equal(mv->outcome, outcome);
    if (end == 0) {
        assert_int_equal(mv->end_rec, SIZE_MAX);
        assert_int_equal(mv->end_event, 0);
    } else {
        assert_int_not_equal(mv->end_rec, SIZE_MAX);
        assert_int_equal(mv->t_end, end);
    }
}

/* Two units in flight at once, a move superseded by the next of its unit, a lone COPY_DONE,
   an event the format lacks, a reason it lacks, a free ending a move, an error ending none,
   a restore the trace stops before (device 2's manager's; the rest are device 0's). */
static void build_pairing(mem *x)
{
    tr(x, 1000, 5, SHIM_EV_EVICT, SHIM_REASON_BUDGET, 100);
    tr(x, 1100, 10, SHIM_EV_EVICT, SHIM_REASON_BUDGET, 10);
    tr(x, 1200, 11, SHIM_EV_EVICT, SHIM_REASON_BUDGET, 20);
    tr(x, 1300, 11, SHIM_EV_COPY_DONE, SHIM_REASON_BUDGET, 0);
    tr(x, 1400, 10, SHIM_EV_COPY_DONE, SHIM_REASON_BUDGET, 0);
    tr(x, 1500, 5, SHIM_EV_COPY_DONE, SHIM_REASON_BUDGET, 0);
    tr(x, 2000, 6, SHIM_EV_EVICT, SHIM_REASON_PLANNED_EVICT, 200);
    tr(x, 2100, 6, SHIM_EV_RESTORE, SHIM_REASON_DEMAND, 300);
    tr(x, 2600, 6, SHIM_EV_COPY_DONE, SHIM_REASON_DEMAND, 0);
    tr(x, 3000, 7, SHIM_EV_COPY_DONE, SHIM_REASON_BUDGET, 0);
    tr(x, 3100, 5, 99, SHIM_REASON_BUDGET, 0); /* an event the format lacks */
    tr(x, 3200, 5, SHIM_EV_EVICT, 77, UINT64_MAX);
    tr(x, 3300, 5, SHIM_EV_FREE, SHIM_REASON_FREED, 0)->sub4 = SHIM_RS_NONE;
    tr(x, 3400, 8, SHIM_EV_ERROR, SHIM_REASON_ERROR, 0);
    tr(x, 3500, 9, SHIM_EV_RESTORE, SHIM_REASON_PREFETCH, 400)->device = 2; /* 1.8 */
    x->t.major = 1;
    x->t.minor = SHIM_TRACE_MINOR;
}

static void pairing(void **state)
{
    (void)state;
    static mem x;
    memset(&x, 0, sizeof x);
    build_pairing(&x);
    compute(&x);
    const report_moves *m = &x.m;
    assert_int_equal(m->transitions, 15);
    assert_int_equal(m->slabs, 0);
    assert_int_equal(m->nmoves, 7);
    expect_move(&m->moves[0], 5, SHIM_EV_EVICT, 1000, 1500, REPORT_DONE);
    expect_move(&m->moves[1], 10, SHIM_EV_EVICT, 1100, 1400, REPORT_DONE);
    expect_move(&m->moves[2], 11, SHIM_EV_EVICT, 1200, 1300, REPORT_DONE);
    expect_move(&m->moves[3], 6, SHIM_EV_EVICT, 2000, 0, REPORT_SUPERSEDED);
    expect_move(&m->moves[4], 6, SHIM_EV_RESTORE, 2100, 2600, REPORT_DONE);
    expect_move(&m->moves[5], 5, SHIM_EV_EVICT, 3200, 3300, REPORT_FREED);
    expect_move(&m->moves[6], 9, SHIM_EV_RESTORE, 3500, 0, REPORT_UNFINISHED);
    for (size_t i = 0; i < m->nmoves; i++) /* each move's device is its starting transition's */
        assert_int_equal(m->moves[i].device, i == 6 ? 2 : 0);
    assert_int_equal(m->by_device[0], 6);
    assert_int_equal(m->by_device[2], 1);
    const report_move *mv = &m->moves[0]; /* the starting transition's fields */
    assert_int_equal(mv->bytes, 100);
    assert_int_equal(mv->stream, 0x10);
    assert_int_equal(mv->seq, 10);
    assert_int_equal(mv->score, 9);
    assert_int_equal(mv->next_use, 20);
    assert_int_equal(mv->reason, SHIM_REASON_BUDGET);
    assert_int_equal(mv->end_event, SHIM_EV_COPY_DONE);
    assert_int_equal(mv->end_seq, 15);
    assert_int_equal(mv->start_rec, 0);
    assert_int_equal(mv->end_rec, 5);
    assert_int_equal(m->moves[4].reason, SHIM_REASON_DEMAND);
    assert_int_equal(m->moves[5].reason, 77);
    assert_int_equal(m->moves[5].end_event, SHIM_EV_FREE);
    assert_int_equal(m->moves[5].end_reason, SHIM_REASON_FREED);
    assert_int_equal(m->moves[5].end_seq, 33);
    assert_false(mv->slab);

    /* the lone COPY_DONE, the unknown event, the free that ended move 5, the error */
    assert_int_equal(m->nothers, 4);
    size_t recs[] = {9, 10, 12, 13}, moves[] = {SIZE_MAX, SIZE_MAX, 5, SIZE_MAX};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(m->others[i].rec, recs[i]);
        assert_int_equal(m->others[i].move, moves[i]);
    }

    assert_int_equal(m->by_reason[SHIM_REASON_BUDGET], 3);
    assert_int_equal(m->by_reason[SHIM_REASON_PLANNED_EVICT], 1);
    assert_int_equal(m->by_reason[SHIM_REASON_DEMAND], 1);
    assert_int_equal(m->by_reason[SHIM_REASON_PREFETCH], 1);
    assert_int_equal(m->by_reason[0], 1); /* reason 77 */
    assert_int_equal(m->by_reason[SHIM_REASON_CANCELLED], 0);
    assert_int_equal(m->by_outcome[REPORT_DONE], 4);
    assert_int_equal(m->by_outcome[REPORT_SUPERSEDED], 1);
    assert_int_equal(m->by_outcome[REPORT_FREED], 1);
    assert_int_equal(m->by_outcome[REPORT_UNFINISHED], 1);
    assert_int_equal(m->by_outcome[REPORT_CANCELLED] + m->by_outcome[REPORT_ERROR], 0);
    assert_int_equal(m->bytes_to_host, UINT64_MAX); /* saturated, not wrapped */
    assert_int_equal(m->bytes_to_device, 700);
    release(&x);
}

/* Each way a move ends, once: COPY_DONE, CANCEL, ERROR, FREE. */
static void outcomes(void **state)
{
    (void)state;
    static mem x;
    memset(&x, 0, sizeof x);
    static const uint32_t ends[] = {SHIM_EV_COPY_DONE, SHIM_EV_CANCEL, SHIM_EV_ERROR, SHIM_EV_FREE};
    for (uint64_t i = 0; i < 4; i++) {
        tr(&x, 100 * i + 10, 1, SHIM_EV_EVICT, SHIM_REASON_BUDGET, 8);
        tr(&x, 100 * i + 50, 1, ends[i], SHIM_REASON_DEMAND, 0);
    }
    compute(&x);
    assert_int_equal(x.m.nmoves, 4);
    static const uint32_t want[] = {REPORT_DONE, REPORT_CANCELLED, REPORT_ERROR, REPORT_FREED};
    for (size_t i = 0; i < 4; i++) {
        expect_move(&x.m.moves[i], 1, SHIM_EV_EVICT, 100 * i + 10, 100 * i + 50, want[i]);
        assert_int_equal(x.m.moves[i].end_event, ends[i]);
        assert_int_equal(x.m.moves[i].end_reason, SHIM_REASON_DEMAND);
    }
    assert_int_equal(x.m.nothers, 3); /* the COPY_DONE is the move's end, nothing else */
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(x.m.others[i].move, i + 1);
    assert_int_equal(x.m.bytes_to_host, 32);
    release(&x);
}

/* Slab 50 is [0x1000, 0x2000). Members at 500: allocation 1 (its first byte), 2 (its last),
   6 (made at 500); not 3 (just past it), 4 (just before), 5 (freed at 500), 7 (pinned host),
   8 (made at 600). At 700: 1, 2, 6, 8. A second slab record of id 50 does not move it. */
static void slab_members(void **state)
{
    (void)state;
    static mem x;
    memset(&x, 0, sizeof x);
    slab_rec(&x, 10, 50, 0x1000, 0x1000);
    slab_rec(&x, 20, 50, 0x8000, 0x1000);
    alloc_rec(&x, 100, 1, 0x1000, PLAN_MEM_MANAGED);
    alloc_rec(&x, 100, 2, 0x1fff, PLAN_MEM_MANAGED);
    alloc_rec(&x, 100, 3, 0x2000, PLAN_MEM_MANAGED);
    alloc_rec(&x, 100, 4, 0x0fff, PLAN_MEM_MANAGED);
    alloc_rec(&x, 100, 5, 0x1800, PLAN_MEM_MANAGED);
    alloc_rec(&x, 100, 7, 0x1a00, PLAN_MEM_HOST);
    alloc_rec(&x, 100, 9, 0x8000, PLAN_MEM_MANAGED); /* in the second record's range */
    alloc_rec(&x, 500, 6, 0x1900, PLAN_MEM_MANAGED);
    free_rec(&x, 500, 5);
    tr(&x, 500, 50, SHIM_EV_EVICT, SHIM_REASON_PLANNED_EVICT, 0x1000);
    tr(&x, 550, 50, SHIM_EV_COPY_DONE, SHIM_REASON_PLANNED_EVICT, 0);
    alloc_rec(&x, 600, 8, 0x1b00, PLAN_MEM_MANAGED);
    tr(&x, 700, 50, SHIM_EV_RESTORE, SHIM_REASON_DEMAND, 0x1000);
    tr(&x, 800, 50, SHIM_EV_ERROR, SHIM_REASON_ERROR, 0);
    tr(&x, 900, 51, SHIM_EV_RESTORE, SHIM_REASON_DEMAND, 0x1000); /* no slab: an allocation */
    compute(&x);
    assert_int_equal(x.m.slabs, 2);
    assert_int_equal(x.m.nmoves, 3);
    assert_true(x.m.moves[0].slab);
    assert_int_equal(x.m.moves[0].members, 3);
    assert_true(x.m.moves[1].slab);
    assert_int_equal(x.m.moves[1].members, 4);
    assert_int_equal(x.m.moves[1].outcome, REPORT_ERROR);
    assert_false(x.m.moves[2].slab);
    assert_int_equal(x.m.moves[2].members, 0);
    assert_int_equal(x.m.nothers, 1);
    assert_true(x.m.others[0].slab);
    assert_int_equal(x.m.others[0].members, 4);
    assert_int_equal(x.m.others[0].move, 1);
    release(&x);
}

/* No transitions (any trace before 1.2): nothing, and totals of zero. */
static void no_transitions(void **state)
{
    (void)state;
    static mem x;
    memset(&x, 0, sizeof x);
    alloc_rec(&x, 1, 1, 0x1000, PLAN_MEM_PLAIN);
    compute(&x);
    assert_int_equal(x.m.nmoves + x.m.nothers + x.m.transitions, 0);
    assert_int_equal(x.m.bytes_to_host + x.m.bytes_to_device, 0);
    release(&x);
}

/* ---- the output of `shim-report moves` ---- */

static char *print(mem *x, int json)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    report_moves_print(out, &x->t, &x->m, json);
    fclose(out);
    return text;
}

static void expect_in(const char *text, const char *want)
{
    if (strstr(text, want) == NULL)
        fail_msg("output lacks \"%s\":\n%s", want, text);
}

/* The moves of build_pairing's trace (starting at 500 ns) as `shim-report moves` prints them
   (json: --json), computed into *x, which the caller releases. */
static char *paired_output(mem *x, int json)
{
    memset(x, 0, sizeof *x);
    build_pairing(x);
    x->t.start_ns = 500;
    compute(x);
    return print(x, json);
}

/* Times from the trace's start in us, the duration end - start, "-" where a move has no end,
   score and next use for budget evictions only, the totals with "other" reasons. */
static void text_output(void **state)
{
    (void)state;
    static mem x;
    char *text = paired_output(&x, 0);
    static const char *lines[] = {
        "unit                         device direction          bytes reason    outcome            "
        "stream        seq       start_us         end_us       dur_us        score   next_use  "
        "name\n", /* its moves have no name: the trace lacks their allocations */
        "\n5                                 0 to host              100 budget    done             "
        "    "
        "0x10         10          0.500          1.000        0.500            9         20\n",
        "\n10                                0 to host               10 budget    done             "
        "    "
        "0x10         11          0.600          0.900        0.300            9         20\n",
        "\n6                                 0 to host              200 planned   superseded       "
        "    "
        "0x10         20          1.500              -            -            -          -\n",
        "\n6                                 0 to device            300 demand    done             "
        "    "
        "0x10         21          1.600          2.100        0.500            -          -\n",
        "\n5                                 0 to host   18446744073709551615 ?         freed      "
        "   "
        "       0x10         32          2.700          2.800        0.100            -          "
        "-\n",
        "\n9                                 2 to device            400 prefetch  unfinished       "
        "    "
        "0x10         35          3.000              -            -            -          -\n",
        "\ntotal: 7 moves (5 to the host, 2 to the device): by reason budget 3, demand 1, "
        "prefetch 1, planned 1, other 1; by outcome done 4, freed 1, superseded 1, unfinished 1; "
        "bytes to host: "
        "18446744073709551615; bytes to device: 700; by device: 0 6, 2 1\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        expect_in(text, lines[i]);
    size_t n = 0;
    for (const char *p = text; *p; p++)
        n += *p == '\n';
    assert_int_equal(n, 9); /* header, 7 moves, totals */
    free(text);
    release(&x);
}

static void json_output(void **state)
{
    (void)state;
    static mem x;
    char *text = paired_output(&x, 1);
    static const char *parts[] = {
        "{\"moves\": [\n  {\"unit_id\": 5, \"unit\": \"5\", \"slab\": false, \"allocations\": "
        "null, \"name\": null, \"device\": 0, \"direction\": \"to host\", \"event\": \"evict\", "
        "\"bytes\": 100, "
        "\"reason\": "
        "\"budget\", \"outcome\": \"done\", \"stream\": \"0x10\", \"seq\": 10, \"start_us\": "
        "0.500, \"end_us\": 1.000, \"duration_us\": 0.500, \"end_event\": \"copy_done\", "
        "\"end_reason\": \"budget\", \"end_seq\": 15, \"score\": 9, \"next_use\": 20},\n",
        "{\"unit_id\": 6, \"unit\": \"6\", \"slab\": false, \"allocations\": null, "
        "\"name\": null, \"device\": 0, \"direction\": \"to host\", \"event\": \"evict\", "
        "\"bytes\": 200, "
        "\"reason\": "
        "\"planned\", \"outcome\": \"superseded\", \"stream\": \"0x10\", \"seq\": 20, "
        "\"start_us\": 1.500, \"end_us\": null, \"duration_us\": null, \"end_event\": null, "
        "\"end_reason\": null, \"end_seq\": null, \"score\": null, \"next_use\": null}",
        "], \"transitions\": [\n  {\"unit_id\": 7, \"unit\": \"7\", \"slab\": false, "
        "\"allocations\": null, \"device\": 0, \"event\": \"copy_done\", \"from\": \"device\", "
        "\"to\": "
        "\"evicting\", \"reason\": \"budget\", \"bytes\": 0, \"stream\": \"0x10\", \"seq\": 30, "
        "\"time_us\": 2.500, \"move\": null},\n  {\"unit_id\": 5, \"unit\": \"5\", ",
        "\"event\": \"?\", ",
        "\"event\": \"free\", \"from\": \"device\", \"to\": \"none\", \"reason\": \"freed\", "
        "\"bytes\": 0, \"stream\": \"0x10\", \"seq\": 33, \"time_us\": 2.800, \"move\": 5}",
        "\n], \"totals\": {\"moves\": 7, \"transitions\": 15, \"slabs\": 0, \"by_reason\": "
        "{\"budget\": 3, \"demand\": 1, \"prefetch\": 1, \"cancelled\": 0, \"planned\": 1, "
        "\"error\": 0, \"freed\": 0, \"other\": 1}, \"by_outcome\": {\"done\": 4, "
        "\"cancelled\": 0, \"error\": 0, \"freed\": 1, \"superseded\": 1, \"unfinished\": 1}, "
        "\"bytes_to_host\": 18446744073709551615, \"bytes_to_device\": 700, \"by_device\": "
        "{\"0\": 6, \"2\": 1}}}\n",
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        expect_in(text, parts[i]);
    free(text);
    release(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(written_and_read_back),
        cmocka_unit_test(pairing),
        cmocka_unit_test(outcomes),
        cmocka_unit_test(slab_members),
        cmocka_unit_test(no_transitions),
        cmocka_unit_test(text_output),
        cmocka_unit_test(json_output),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
