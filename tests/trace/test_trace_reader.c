/* test_trace_reader.c — the trace reader against damaged and foreign input: cut at every offset,
 * every byte flipped, bad preambles, chunk order, a newer writer's schema, malformed schemas and
 * records (transition and slab ones too); each error names the file and the byte offset. Also
 * residency moves and stalls attributed to steps at the edges of their windows. */
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
#include <unistd.h>

/* Loads the trace of one chunk holding the records of p into *t and computes *s (the test fails
   if either fails); returns the chunk, which the caller frees. */
static buf load_stats(const buf *p, report_trace *t, report_stats *s)
{
    size_t payload;
    buf b = one_chunk(p, &payload);
    char err[512];
    if (load(t, &b, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(report_stats_compute(s, t), 0);
    return b;
}

static void rec_free(buf *b, uint64_t id)
{
    rec(b, SHIM_TRACE_FREE, 16, 1000 + id);
    put64(b, id);
    put64(b, 0);
}

/* A complete trace: the writer's head, three record chunks (3, 5, 7 frees), END. chunk_end[i]
   is where chunk i ends (0: schema, 1..3: records, 4: end). */
static buf three_chunks(size_t chunk_end[5], size_t per_chunk[3])
{
    buf b = writer_head();
    chunk_end[0] = b.len;
    uint64_t id = 1;
    for (int c = 0; c < 3; c++) {
        buf p = {0};
        per_chunk[c] = 3 + 2 * (size_t)c;
        for (size_t i = 0; i < per_chunk[c]; i++)
            rec_free(&p, id++);
        chunk(&b, SHIM_TRACE_CHUNK_RECORDS, &p);
        chunk_end[c + 1] = b.len;
        free(p.p);
    }
    end_chunk(&b);
    chunk_end[4] = b.len;
    return b;
}

/* ---- tests ---- */

static void crc_is_zlibs(void **state)
{
    (void)state;
    assert_int_equal(crc_of("1234", 4, "56789", 5), 0xCBF43926u);
    assert_int_equal(crc_of("", 0, "", 0), 0);
}

static void cut_at_every_offset(void **state)
{
    (void)state;
    size_t end[5], per[3];
    buf b = three_chunks(end, per);
    for (size_t cut = 0; cut <= b.len; cut++) {
        buf c = {b.p, cut};
        report_trace t;
        char err[512];
        int rc = load(&t, &c, err, sizeof err);
        if (cut < end[0]) {
            assert_int_equal(rc, -1);
            assert_non_null(strstr(err, "test.trace: byte "));
            assert_non_null(strstr(err, "no records"));
            continue;
        }
        if (rc != 0)
            fail_msg("cut at %zu: %s", cut, err);
        size_t whole = 0, records = 0;
        while (whole < 4 && end[whole + 1] <= cut)
            records += whole < 3 ? per[whole] : 0, whole++;
        assert_int_equal(t.n, records);
        assert_int_equal(t.truncated, cut != b.len);
        assert_int_equal(t.complete, cut == b.len);
        if (t.truncated) {
            char want[64];
            snprintf(want, sizeof want, "truncated at byte %zu ", end[whole]);
            assert_int_equal(t.truncated_at, end[whole]);
            if (strstr(t.note, want) == NULL)
                fail_msg("cut at %zu: note \"%s\" lacks \"%s\"", cut, t.note, want);
            assert_non_null(strstr(t.note, cut == end[whole] ? "no end chunk" : "cut short"));
        }
        for (size_t i = 0; i < t.n; i++)
            assert_int_equal(t.recs[i].a, i + 1);
        report_trace_free(&t);
    }
    free(b.p);
}

/* Every byte flipped in turn: an error naming the file and a byte (for a record chunk's
   payload, its chunk's checksum), or a cut-short trace when a length grew past the end, or
   (only for the minor version) a good trace. */
static void flip_every_byte(void **state)
{
    (void)state;
    size_t end[5], per[3];
    buf b = three_chunks(end, per);
    for (size_t at = 0; at < b.len; at++) {
        b.p[at] ^= 0xff;
        report_trace t;
        char err[512];
        int rc = load(&t, &b, err, sizeof err);
        b.p[at] ^= 0xff;
        int c = 0; /* the record chunk whose payload holds the byte, or 3 */
        while (c < 3 && !(at >= end[c] + 16 && at < end[c + 1]))
            c++;
        if (c < 3) {
            char want[96];
            snprintf(want, sizeof want, "test.trace: byte %zu: chunk checksum mismatch", end[c]);
            if (rc == 0 || strstr(err, want) == NULL)
                fail_msg("flip at %zu: \"%s\" lacks \"%s\"", at, rc ? err : "", want);
        } else if (rc == 0) { /* the minor version is free; a length may point past the end */
            if (!t.truncated && at != 10 && at != 11)
                fail_msg("flip at %zu: read as a whole trace", at);
            report_trace_free(&t);
        } else
            assert_non_null(strstr(err, "test.trace: byte "));
    }
    free(b.p);
}

static void preambles(void **state)
{
    (void)state;
    buf b = {0};
    expect_error(&b, "byte 0: truncated inside the 16-byte preamble");
    put(&b, "SHIMTRAX", 8);
    put(&b, "\1\0\0\0\20\0\0\0", 8);
    expect_error(&b, "byte 0: not a libshim trace");
    free(b.p);
    b = (buf){0};
    preamble(&b, 2, 0, 16);
    expect_error(&b, "byte 8: format version 2.0; this reader reads 1.x");
    free(b.p);
    b = (buf){0};
    preamble(&b, 1, 0, 8);
    expect_error(&b, "byte 12: preamble size 8");
    free(b.p);

    /* a newer minor with a longer preamble is read */
    size_t end[5], per[3];
    buf good = three_chunks(end, per);
    b = (buf){0};
    preamble(&b, 1, 7, 24);
    put(&b, good.p + 16, good.len - 16);
    report_trace t;
    char err[512];
    assert_int_equal(load(&t, &b, err, sizeof err), 0);
    assert_int_equal(t.minor, 7);
    assert_int_equal(t.n, 15);
    assert_int_equal(t.pid, 77);
    assert_string_equal(t.command, "cmd");
    report_trace_free(&t);
    free(b.p);
    free(good.p);
}

static void chunk_order(void **state)
{
    (void)state;
    buf records = {0};
    rec_free(&records, 1);
    buf b = {0};
    preamble(&b, 1, 0, 16);
    chunk(&b, SHIM_TRACE_CHUNK_RECORDS, &records);
    expect_error(&b, "byte 16: a records chunk before the schema");
    free(b.p);

    b = writer_head();
    size_t second = b.len;
    info_chunk(&b);
    char want[64];
    snprintf(want, sizeof want, "byte %zu: a second info chunk", second);
    expect_error(&b, want);
    free(b.p);

    b = writer_head();
    buf unknown = {0};
    put(&unknown, "future", 6);
    chunk(&b, 99, &unknown); /* a chunk type from a newer writer: skipped */
    chunk(&b, SHIM_TRACE_CHUNK_RECORDS, &records);
    end_chunk(&b);
    size_t after = b.len;
    report_trace t;
    char err[512];
    assert_int_equal(load(&t, &b, err, sizeof err), 0);
    assert_int_equal(t.skipped_chunks, 1);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.chunks, 5);
    report_trace_free(&t);
    chunk(&b, SHIM_TRACE_CHUNK_RECORDS, &records);
    snprintf(want, sizeof want, "byte %zu: data after the end chunk", after);
    expect_error(&b, want);
    free(b.p);

    b = writer_head();
    size_t big = b.len;
    put(&b, "CHNK\3\0\0\0\0\0\0\2\0\0\0\0", 16); /* 32 MiB payload */
    snprintf(want, sizeof want, "byte %zu: chunk length 33554432 is over", big);
    expect_error(&b, want);
    b.p[big] = 'X';
    snprintf(want, sizeof want, "byte %zu: bad chunk magic", big);
    expect_error(&b, want);
    free(b.p);
    free(unknown.p);
    free(records.p);
}

/* A second info chunk is an error before the schema too (not only after it), and so is a schema
   entry that names one field twice. */
static void info_and_fields_once(void **state)
{
    (void)state;
    buf b = {0};
    preamble(&b, 1, 0, 16);
    info_chunk(&b);
    size_t second = b.len;
    info_chunk(&b);
    char want[64];
    snprintf(want, sizeof want, "byte %zu: a second info chunk", second);
    expect_error(&b, want);
    free(b.p);

    buf k = {0};
    kind(&k, 2, 16, "free", 3, 0, SHIM_TRACE_U64, "alloc_id", 8, SHIM_TRACE_U64, "stream", 8,
         SHIM_TRACE_U64, "alloc_id");
    b = with_schema(&k, 1);
    expect_error(&b, "schema: kind 'free' has field 'alloc_id' twice");
    free(b.p);
    free(k.p);
}

/* A newer writer: alloc has its fields reordered plus one more, and a kind this reader lacks. */
static void newer_writer(void **state)
{
    (void)state;
    buf k = {0};
    kind(&k, SHIM_TRACE_ALLOC, 48, "alloc", 6, 0, SHIM_TRACE_U32, "device", 8, SHIM_TRACE_U64,
         "bytes", 16, SHIM_TRACE_U64, "alloc_id", 24, SHIM_TRACE_U64, "addr", 32, SHIM_TRACE_U64,
         "stream", 40, SHIM_TRACE_U32, "alloc_kind");
    kind(&k, 300, 8, "prefetch", 2, 0, SHIM_TRACE_U64, "alloc_id", 8, SHIM_TRACE_TEXT, "why");
    kind(&k, SHIM_TRACE_NOTE, 0, "note", 1, 0, SHIM_TRACE_TEXT, "text");
    buf b = with_schema(&k, 3), p = {0};
    rec(&p, SHIM_TRACE_ALLOC, 48, 5);
    put32(&p, 3);
    put32(&p, 0);
    put64(&p, 4096);
    put64(&p, 17);
    put64(&p, 0xabc000);
    put64(&p, 9);
    put32(&p, PLAN_MEM_MANAGED);
    put32(&p, 0);
    rec(&p, 300, 8 + 5, 6); /* an odd size: a reader must not assume padding */
    put64(&p, 17);
    put(&p, "later", 5);
    rec(&p, SHIM_TRACE_NOTE, 8, 7);
    put(&p, "hi\0\0\0\0\0\0", 8);
    chunk(&b, SHIM_TRACE_CHUNK_RECORDS, &p);
    end_chunk(&b);
    report_trace t;
    char err[512];
    if (load(&t, &b, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.skipped_records, 1);
    assert_int_equal(t.recs[0].a, 17);
    assert_int_equal(t.recs[0].b, 0xabc000);
    assert_int_equal(t.recs[0].c, 4096);
    assert_int_equal(t.recs[0].d, 9);
    assert_int_equal(t.recs[0].sub, PLAN_MEM_MANAGED);
    assert_int_equal(t.recs[0].tid, 42);
    assert_int_equal(t.recs[0].t_ns, 5);
    assert_string_equal(t.text + t.recs[1].text, "hi");
    report_trace_free(&t);
    free(b.p);
    free(p.p);
    free(k.p);
}

static void bad_schemas(void **state)
{
    (void)state;
    static const struct {
        const char *want;
        int which;
    } cases[] = {
        {"schema: kind 'alloc' lacks the field 'addr' (u64)", 0},
        {"schema: kind 'move' lacks the field 'reason' (u32)", 7},
        {"schema: field 'reason' of kind 'stall' is u64, this reader expects u32", 8},
        {"schema: kind 13 is 'moves', this reader knows it as 'move'", 9},
        {"schema: field 'seq' of kind 'kernel_time' is u32, this reader expects u64", 1},
        {"schema: kind 2 'free' is zero, repeated, or too large", 2},
        {"schema: field 'stream' of kind 'free' lies outside its record", 3},
        {"schema: kind 3 is 'names', this reader knows it as 'func_name'", 4},
        {"schema: bad kind name", 5},
        {"schema: kind entry cut short", 6},
        {"schema: kind 'transition' lacks the field 'next_use' (u64)", 10},
        {"schema: field 'event' of kind 'transition' is u32, this reader expects u8", 11},
        {"schema: kind 16 is 'slabs', this reader knows it as 'slab'", 12},
        {"schema: kind 'slab' lacks the field 'addr' (u64)", 13},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        buf k = {0};
        uint16_t count = 1;
        switch (cases[i].which) {
        case 0:
            kind(&k, 1, 40, "alloc", 1, 0, SHIM_TRACE_U64, "alloc_id");
            break;
        case 1:
            kind(&k, 5, 16, "kernel_time", 2, 0, SHIM_TRACE_U32, "seq", 8, SHIM_TRACE_F64, "usec");
            break;
        case 2:
            kind(&k, 2, 16, "free", 2, 0, SHIM_TRACE_U64, "alloc_id", 8, SHIM_TRACE_U64, "stream");
            kind(&k, 2, 16, "free", 2, 0, SHIM_TRACE_U64, "alloc_id", 8, SHIM_TRACE_U64, "stream");
            count = 2;
            break;
        case 3:
            kind(&k, 2, 12, "free", 2, 0, SHIM_TRACE_U64, "alloc_id", 8, SHIM_TRACE_U64, "stream");
            break;
        case 4:
            kind(&k, 3, 8, "names", 0);
            break;
        case 5:
            kind(&k, 400, 8, "Bad-Name", 0);
            break;
        case 6:
            put16(&k, 9);
            break;
        case 7:
            kind(&k, 13, 40, "move", 5, 0, SHIM_TRACE_U64, "alloc_id", 8, SHIM_TRACE_U64, "bytes",
                 16, SHIM_TRACE_U64, "start_ns", 24, SHIM_TRACE_U64, "end_ns", 32, SHIM_TRACE_U32,
                 "dir");
            break;
        case 8:
            kind(&k, 14, 24, "stall", 3, 0, SHIM_TRACE_U64, "start_ns", 8, SHIM_TRACE_U64, "end_ns",
                 16, SHIM_TRACE_U64, "reason");
            break;
        case 9:
            kind(&k, 13, 40, "moves", 0);
            break;
        case 10:
        case 11:
            kind(&k, SHIM_TRACE_TRANSITION, 56, "transition", cases[i].which == 10 ? 9 : 10, 0,
                 SHIM_TRACE_U64, "unit_id", 8, SHIM_TRACE_U64, "bytes", 16, SHIM_TRACE_U64,
                 "stream", 24, SHIM_TRACE_U64, "seq", 32, SHIM_TRACE_U64, "score", 48,
                 SHIM_TRACE_U8, "from", 49, SHIM_TRACE_U8, "to", 52,
                 cases[i].which == 10 ? SHIM_TRACE_U8 : SHIM_TRACE_U32, "event", 51, SHIM_TRACE_U8,
                 "reason", 40, SHIM_TRACE_U64, "next_use");
            break;
        case 12:
            kind(&k, SHIM_TRACE_SLAB, 24, "slabs", 0);
            break;
        case 13:
            kind(&k, SHIM_TRACE_SLAB, 24, "slab", 2, 0, SHIM_TRACE_U64, "slab_id", 16,
                 SHIM_TRACE_U64, "bytes");
            break;
        }
        buf b = with_schema(&k, count);
        expect_error(&b, cases[i].want);
        free(b.p);
        free(k.p);
    }
}

static void bad_records(void **state)
{
    (void)state;
    static const char *wants[] = {
        "record kind 77 is not in the schema",
        "record size 8 is below 16 or past the chunk",
        "record size 64 is below 16 or past the chunk",
        "record of kind 1 is 24 bytes, shorter than its fixed part",
        "launch lists 2 ids but n_allocs is 1",
        "record's u64 list is 12 bytes, not a multiple of 8",
        "record header cut by the chunk's end",
        "record of kind 15 is 64 bytes, shorter than its fixed part",
        "record of kind 16 is 32 bytes, shorter than its fixed part",
    };
    for (size_t i = 0; i < sizeof wants / sizeof wants[0]; i++) {
        buf p = {0};
        rec_free(&p, 1); /* a good record first: the error is at the second one */
        size_t second = p.len;
        switch (i) {
        case 0:
            rec(&p, 77, 0, 1);
            break;
        case 1:
            put16(&p, SHIM_TRACE_FREE);
            put16(&p, 8);
            put(&p, "\0\0\0\0\0\0\0\0\0\0\0\0", 12);
            break;
        case 2:
            rec(&p, SHIM_TRACE_FREE, 48, 1);
            put64(&p, 0);
            break;
        case 3:
            rec(&p, SHIM_TRACE_ALLOC, 8, 1);
            put64(&p, 0);
            break;
        case 4:
        case 5:
            rec(&p, SHIM_TRACE_LAUNCH, i == 4 ? 48 : 44, 1);
            put64(&p, 0);
            put64(&p, 0);
            put64(&p, 0);
            put64(&p, 1);
            put64(&p, 5);
            if (i == 4)
                put64(&p, 6);
            else
                put32(&p, 6);
            break;
        case 6:
            put(&p, "\2\0\40\0", 4);
            break;
        case 7: /* a transition without its from, to, event and reason */
            rec(&p, SHIM_TRACE_TRANSITION, 48, 1);
            for (int f = 0; f < 6; f++)
                put64(&p, 1);
            break;
        case 8:
            rec(&p, SHIM_TRACE_SLAB, 16, 1);
            put64(&p, 1);
            put64(&p, 2);
            break;
        }
        size_t payload;
        buf b = one_chunk(&p, &payload);
        char want[160];
        snprintf(want, sizeof want, "byte %zu: %s", payload + second, wants[i]);
        expect_error(&b, want);
        free(b.p);
        free(p.p);
    }
}

static void bad_key_values(void **state)
{
    (void)state;
    buf b = {0}, p = {0};
    preamble(&b, 1, 0, 16);
    put32(&p, 1);
    put16(&p, 3);
    put(&p, "PID", 3);
    put32(&p, 0);
    chunk(&b, SHIM_TRACE_CHUNK_INFO, &p);
    expect_error(&b, "byte 36: bad key");
    free(b.p);
    b = (buf){0};
    preamble(&b, 1, 0, 16);
    p.len = 0;
    put32(&p, 1);
    put16(&p, 3);
    put(&p, "pid", 3);
    put32(&p, 100);
    chunk(&b, SHIM_TRACE_CHUNK_INFO, &p);
    expect_error(&b, "byte 41: value runs past the chunk's end");
    free(b.p);
    free(p.p);
}

/* The statistics never trust the data: frees of unknown ids, repeated ids, times of unknown
   launches, steps out of order. */
static void stats_on_odd_data(void **state)
{
    (void)state;
    buf p = {0};
    rec(&p, SHIM_TRACE_STEP, 16, 10); /* step 1 first, then step 0 */
    put64(&p, 1);
    put64(&p, 5);
    rec(&p, SHIM_TRACE_STEP, 16, 11);
    put64(&p, 0);
    put64(&p, 2);
    rec(&p, SHIM_TRACE_ALLOC, 40, 12);
    put64(&p, 7);
    put64(&p, 0);
    put64(&p, UINT64_MAX);
    put64(&p, 0);
    put64(&p, PLAN_MEM_PLAIN);
    rec(&p, SHIM_TRACE_ALLOC, 40, 13); /* id 7 again */
    put64(&p, 7);
    put64(&p, 0);
    put64(&p, 100);
    put64(&p, 0);
    put64(&p, PLAN_MEM_PLAIN);
    rec_free(&p, 7);
    rec_free(&p, 7);
    rec(&p, SHIM_TRACE_KERNEL_TIME, 16, 14);
    put64(&p, 1234);
    put64(&p, 0x7ff8000000000000ull); /* NaN */
    report_trace t;
    report_stats s;
    buf b = load_stats(&p, &t, &s);
    assert_int_equal(s.nsteps, 2);
    assert_int_equal(s.steps[0].step, 0);
    assert_int_equal(s.steps[1].step, 1);
    assert_int_equal(s.duplicate_allocs, 1);
    assert_int_equal(s.unmatched_frees, 1); /* the second free of 7 */
    assert_int_equal(s.peak_device_bytes, UINT64_MAX);
    assert_int_equal(s.end_device_bytes, 0);
    assert_int_equal(s.unmatched_times, 1);
    FILE *null = fopen("/dev/null", "w");
    report_summary_print(null, &t, &s, 1, 10);
    assert_int_equal(report_perfetto_print(null, &t, &s), 0);
    fclose(null);
    report_stats_free(&s);
    report_trace_free(&t);
    free(b.p);
    free(p.p);
}

/* ---- residency ---- */

static void rec_move(buf *p, uint32_t dir, uint64_t bytes, uint64_t start, uint32_t why, uint64_t t)
{
    rec(p, SHIM_TRACE_MOVE, 48, t);
    put64(p, 3);
    put64(p, bytes);
    put64(p, start);
    put64(p, start + 10);
    put32(p, dir);
    put32(p, why);
    put64(p, 0); /* device 0 (1.7), padding */
}

static void rec_stall(buf *p, uint64_t start, uint64_t end, uint64_t t)
{
    rec(p, SHIM_TRACE_STALL, 24, t);
    put64(p, start);
    put64(p, end);
    put64(p, SHIM_REASON_DEMAND);
}

static void rec_budget(buf *p, uint64_t budget, uint64_t host, uint64_t t)
{
    rec(p, SHIM_TRACE_BUDGET, 32, t);
    put64(p, budget);
    put64(p, host);
    put64(p, 3000);
    put64(p, 0); /* device 0 (1.7), padding */
}

/* Step 0's window is [200, 400) (from the sync before its first launch to the sync before
   step 1's), step 1's [400, 620) (its mark closes it). A move or stall goes by its start_ns,
   not by when it was recorded; starts on a window's first instant belong to it, on its end
   to the next one (or to none). */
static void residency_by_step(void **state)
{
    (void)state;
    buf p = {0};
    rec_budget(&p, 1000, 2000, 50);
    rec_launch(&p, 0, 100);
    rec_move(&p, SHIM_MOVE_TO_HOST, 5, 150, SHIM_REASON_CANCELLED, 160); /* warm-up */
    rec_sync(&p, 200);
    rec_launch(&p, 1, 300);
    rec_move(&p, SHIM_MOVE_TO_HOST, 11, 200, SHIM_REASON_BUDGET, 350); /* step 0's start */
    rec_sync(&p, 400);
    rec_stall(&p, 399, 420, 450);  /* step 0's last instant */
    rec_stall(&p, 400, 1400, 460); /* step 1's start */
    rec_launch(&p, 2, 500);
    rec_move(&p, 3, 1000, 500, SHIM_REASON_BUDGET, 510); /* no such direction */
    rec_sync(&p, 600);
    rec_step(&p, 0, 1, 610);
    rec_step(&p, 1, 2, 620);
    rec_move(&p, SHIM_MOVE_TO_DEVICE, 13, 620, SHIM_REASON_DEMAND, 700); /* step 1's end */
    rec_move(&p, SHIM_MOVE_TO_DEVICE, 7, 619, SHIM_REASON_PREFETCH, 701);
    rec_budget(&p, 1100, 2100, 800); /* the last budget wins */
    report_trace t;
    report_stats s;
    buf b = load_stats(&p, &t, &s);
    assert_int_equal(s.nsteps, 2);
    assert_int_equal(s.steps[0].t_start, 200);
    assert_int_equal(s.steps[0].t_end, 400);
    assert_int_equal(s.steps[1].t_end, 620);
    assert_int_equal(s.budgets, 2);
    assert_int_equal(s.budget_bytes, 1100);
    assert_int_equal(s.host_budget_bytes, 2100);
    assert_int_equal(s.device_total, 3000);
    const report_residency *all = &s.residency, *s0 = &s.steps[0].residency,
                           *s1 = &s.steps[1].residency;
    assert_int_equal(all->moves.evictions, 1);
    assert_int_equal(all->moves.cancelled_evictions, 1);
    assert_int_equal(all->moves.cancelled_bytes, 5);
    assert_int_equal(all->moves.bytes_to_host, 16);
    assert_int_equal(all->moves.restores, 2);
    assert_int_equal(all->moves.bytes_to_device, 20);
    assert_int_equal(all->stalls, 2);
    assert_int_equal(all->stall_ns, 1021);
    assert_int_equal(s.odd_moves, 1);
    assert_int_equal(s0->moves.evictions, 1);
    assert_int_equal(s0->moves.cancelled_evictions, 0);
    assert_int_equal(s0->moves.bytes_to_host, 11);
    assert_int_equal(s0->moves.restores, 0);
    assert_int_equal(s0->stalls, 1);
    assert_int_equal(s0->stall_ns, 21);
    assert_int_equal(s1->moves.evictions, 0);
    assert_int_equal(s1->moves.restores, 1);
    assert_int_equal(s1->moves.bytes_to_device, 7);
    assert_int_equal(s1->stalls, 1);
    assert_int_equal(s1->stall_ns, 1000);

    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    report_summary_print(out, &t, &s, 0, 10);
    fclose(out);
    static const char *lines[] = {
        "\nbudget_bytes: 1100 (0.0 MiB)\nhost_budget_bytes: 2100 (0.0 MiB)\n",
        "\ndevice_total_bytes: 3000\nevictions: 1\ncancelled_evictions: 1 (5 bytes)\n"
        "restores: 2\nbytes_to_host: 16 (0.0 MiB)\nbytes_to_device: 20 (0.0 MiB)\n"
        "stalls: 2\nstall_us: 1.021\n",
        "\n       0         1         0        0             11               0        0.021\n"
        "       1         0         0        1              0               7        1.000\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        if (strstr(text, lines[i]) == NULL)
            fail_msg("summary lacks \"%s\":\n%s", lines[i], text);
    free(text);
    report_stats_free(&s);
    report_trace_free(&t);
    free(b.p);
    free(p.p);
}

/* A newer writer's move: fields in another order, one more, a longer fixed part. */
static void newer_move_layout(void **state)
{
    (void)state;
    buf k = {0};
    kind(&k, SHIM_TRACE_MOVE, 48, "move", 7, 0, SHIM_TRACE_U32, "reason", 4, SHIM_TRACE_U32, "dir",
         8, SHIM_TRACE_U64, "end_ns", 16, SHIM_TRACE_U64, "start_ns", 24, SHIM_TRACE_U64, "bytes",
         32, SHIM_TRACE_U64, "alloc_id", 40, SHIM_TRACE_U64, "stream");
    buf b = with_schema(&k, 1), p = {0};
    rec(&p, SHIM_TRACE_MOVE, 48, 9);
    put32(&p, SHIM_REASON_PREFETCH);
    put32(&p, SHIM_MOVE_TO_DEVICE);
    put64(&p, 900);
    put64(&p, 400);
    put64(&p, 1 << 20);
    put64(&p, 42);
    put64(&p, 0x5000);
    chunk(&b, SHIM_TRACE_CHUNK_RECORDS, &p);
    end_chunk(&b);
    report_trace t;
    char err[512];
    if (load(&t, &b, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.recs[0].a, 42);
    assert_int_equal(t.recs[0].b, 1 << 20);
    assert_int_equal(t.recs[0].c, 400);
    assert_int_equal(t.recs[0].d, 900);
    assert_int_equal(t.recs[0].sub, SHIM_MOVE_TO_DEVICE);
    assert_int_equal(t.recs[0].sub2, SHIM_REASON_PREFETCH);
    report_trace_free(&t);
    free(b.p);
    free(p.p);
    free(k.p);
}

/* A newer writer's transition and slab: fields in another order, one more each, longer fixed
   parts. */
static void newer_transition_layout(void **state)
{
    (void)state;
    buf k = {0};
    kind(&k, SHIM_TRACE_TRANSITION, 64, "transition", 11, 0, SHIM_TRACE_U8, "reason", 1,
         SHIM_TRACE_U8, "event", 2, SHIM_TRACE_U8, "to", 3, SHIM_TRACE_U8, "from", 4,
         SHIM_TRACE_U32, "device", 8, SHIM_TRACE_U64, "next_use", 16, SHIM_TRACE_U64, "score", 24,
         SHIM_TRACE_U64, "seq", 32, SHIM_TRACE_U64, "stream", 40, SHIM_TRACE_U64, "bytes", 48,
         SHIM_TRACE_U64, "unit_id");
    kind(&k, SHIM_TRACE_SLAB, 32, "slab", 4, 0, SHIM_TRACE_U64, "bytes", 8, SHIM_TRACE_U64, "addr",
         16, SHIM_TRACE_U64, "slab_id", 24, SHIM_TRACE_U32, "numa");
    buf b = with_schema(&k, 2), p = {0};
    rec(&p, SHIM_TRACE_TRANSITION, 64, 9);
    uint8_t small[4] = {SHIM_REASON_PREFETCH, SHIM_EV_RESTORE, SHIM_RS_RESTORING, SHIM_RS_HOST};
    put(&p, small, 4);
    put32(&p, 3);
    for (uint64_t v = 101; v <= 107; v++) /* next_use .. unit_id, then 8 bytes it does not know */
        put64(&p, v);
    rec(&p, SHIM_TRACE_SLAB, 32, 10);
    put64(&p, 2 << 20);
    put64(&p, 0x7f0000000000);
    put64(&p, 55);
    put64(&p, 1);
    chunk(&b, SHIM_TRACE_CHUNK_RECORDS, &p);
    end_chunk(&b);
    report_trace t;
    char err[512];
    if (load(&t, &b, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(t.n, 2);
    const report_rec *r = &t.recs[0];
    assert_int_equal(r->f, 101); /* next_use */
    assert_int_equal(r->e, 102); /* score */
    assert_int_equal(r->c, 103); /* seq */
    assert_int_equal(r->d, 104); /* stream */
    assert_int_equal(r->b, 105); /* bytes */
    assert_int_equal(r->a, 106); /* unit_id */
    assert_int_equal(r->sub2, SHIM_REASON_PREFETCH);
    assert_int_equal(r->sub, SHIM_EV_RESTORE);
    assert_int_equal(r->sub4, SHIM_RS_RESTORING);
    assert_int_equal(r->sub3, SHIM_RS_HOST);
    assert_int_equal(t.recs[1].a, 55);
    assert_int_equal(t.recs[1].b, 0x7f0000000000);
    assert_int_equal(t.recs[1].c, 2 << 20);
    report_trace_free(&t);
    free(b.p);
    free(p.p);
    free(k.p);
}

/* ---- step summaries (format 1.4) ---- */

/* A step_summary record at time end: steps from step, its window [start, end], launches, a
   peak, device bytes at its end, moves (an eviction and a restore of 64 bytes each, a
   cancelled eviction of 8) and a 2000 ns stall, and `reasons` elements of moves_by_reason
   (1 budget, 1 demand, 1 cancelled, and ones past the table). */
static void rec_summary(buf *p, uint64_t step, uint64_t steps, uint64_t first_seq, uint64_t start,
                        uint64_t end, uint64_t launches, uint64_t peak, uint64_t device,
                        unsigned reasons)
{
    rec(p, SHIM_TRACE_STEP_SUMMARY, (uint16_t)(192 + 8 * reasons), end);
    uint64_t v[24] = {step,      steps, first_seq, start, end, 100,  launches, 2 * steps,
                      2 * steps, steps, steps,     0,     0,   peak, device,   7,
                      1,         1,     1,         72,    64,  8,    1,        2000};
    for (int i = 0; i < 24; i++)
        put64(p, v[i]);
    for (unsigned i = 0; i < reasons; i++)
        put64(p, i == 1 || i == 2 || i == 4 || i >= 8 ? 1 : 0);
}

/* Summaries are read back field by field and counted in: a detailed step, a summary of one
   step, one of three, one of no step (teardown); iterations, totals, peaks and the rows of the
   steps table. A newer writer's longer moves_by_reason counts its extra reasons as other. */
static void summaries_counted_in(void **state)
{
    (void)state;
    buf p = {0};
    rec_launch(&p, 0, 100);
    rec_sync(&p, 150);
    rec_launch(&p, 1, 160);
    rec_sync(&p, 190);
    rec_step(&p, 0, 1, 200);
    rec_summary(&p, 1, 1, 2, 200, 1000, 4, 5000, 100, 8);
    rec_summary(&p, 2, 3, 6, 1000, 4000, 12, 6000, 200, 10);
    rec_summary(&p, 0, 0, 0, 4000, 4500, 1, 300, 0, 8);
    size_t payload;
    buf b = one_chunk(&p, &payload);
    report_trace t;
    report_stats s;
    char err[512];
    if (load(&t, &b, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(t.skipped_records, 0);
    assert_int_equal(t.nsummaries, 3);
    const report_summary *m = &t.summaries[1];
    assert_int_equal(m->t_ns, 4000);
    assert_int_equal(m->step, 2);
    assert_int_equal(m->steps, 3);
    assert_int_equal(m->first_seq, 6);
    assert_int_equal(m->start_ns, 1000);
    assert_int_equal(m->end_ns, 4000);
    assert_int_equal(m->records, 100);
    assert_int_equal(m->launches, 12);
    assert_int_equal(m->allocations, 6);
    assert_int_equal(m->frees, 6);
    assert_int_equal(m->copies, 3);
    assert_int_equal(m->syncs, 3);
    assert_int_equal(m->peak_device_bytes, 6000);
    assert_int_equal(m->device_bytes, 200);
    assert_int_equal(m->peak_host_bytes, 7);
    assert_int_equal(m->moves.evictions, 1);
    assert_int_equal(m->moves.cancelled_evictions, 1);
    assert_int_equal(m->moves.restores, 1);
    assert_int_equal(m->moves.bytes_to_host, 72);
    assert_int_equal(m->moves.bytes_to_device, 64);
    assert_int_equal(m->moves.cancelled_bytes, 8);
    assert_int_equal(m->stalls, 1);
    assert_int_equal(m->stall_ns, 2000);
    static const uint64_t reasons[8] = {2, 1, 1, 0, 1, 0, 0, 0}; /* 8 and 9 count as other */
    for (int i = 0; i < 8; i++)
        assert_int_equal(m->moves_by_reason[i], reasons[i]);

    assert_int_equal(report_stats_compute(&s, &t), 0);
    assert_int_equal(s.nsteps, 3);
    assert_int_equal(s.iterations, 5);
    assert_int_equal(s.summaries, 3);
    assert_int_equal(s.summarised_steps, 4);
    assert_int_equal(s.summarised_records, 300);
    assert_int_equal(s.first_summarised_step, 1);
    assert_int_equal(s.launches, 2 + 4 + 12 + 1);
    assert_int_equal(s.warmup_launches, 1);
    assert_int_equal(s.allocations, 2 + 6);
    assert_int_equal(s.syncs, 2 + 1 + 3);
    assert_int_equal(s.copies, 1 + 3);
    assert_int_equal(s.peak_device_bytes, 6000);
    assert_int_equal(s.peak_host_bytes, 7);
    assert_int_equal(s.end_device_bytes, 0);
    assert_int_equal(s.residency.moves.evictions, 3);
    assert_int_equal(s.residency.moves.cancelled_evictions, 3);
    assert_int_equal(s.residency.moves.restores, 3);
    assert_int_equal(s.residency.stall_ns, 6000);
    assert_int_equal(s.moves_by_reason[SHIM_REASON_BUDGET], 3);
    assert_int_equal(s.moves_by_reason[0], 2);
    assert_int_equal(s.launches_per_iteration, 1); /* the rows of one step: 1 and 4 */
    const report_step *r = s.steps;
    assert_int_equal(r[0].step, 0);
    assert_false(r[0].summary);
    assert_int_equal(r[0].covers, 1);
    assert_int_equal(r[0].launches, 1);
    assert_int_equal(r[0].t_start, 150);
    assert_int_equal(r[0].t_end, 200);
    assert_true(r[1].summary);
    assert_int_equal(r[1].covers, 1);
    assert_int_equal(r[1].first_seq, 2);
    assert_int_equal(r[1].launches, 4);
    assert_int_equal(r[1].allocations, 2);
    assert_int_equal(r[1].peak_device_bytes, 5000);
    assert_int_equal(r[1].t_start, 200);
    assert_int_equal(r[1].t_end, 1000);
    assert_int_equal(r[1].residency.stall_ns, 2000);
    assert_int_equal(r[2].covers, 3);
    assert_int_equal(r[2].launches, 12);
    assert_int_equal(r[2].t_end, 4000);
    report_stats_free(&s);
    report_trace_free(&t);
    free(b.p);

    /* moves_by_reason must be whole u64 values */
    free(p.p);
    p = (buf){0};
    rec(&p, SHIM_TRACE_STEP_SUMMARY, 192 + 12, 10);
    for (int i = 0; i < 24 + 1; i++)
        put64(&p, 1);
    put32(&p, 1);
    b = one_chunk(&p, &payload);
    char want[80];
    snprintf(want, sizeof want, "byte %zu: record's u64 list is 12 bytes", payload);
    expect_error(&b, want);
    free(b.p);
    free(p.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(crc_is_zlibs),
        cmocka_unit_test(cut_at_every_offset),
        cmocka_unit_test(flip_every_byte),
        cmocka_unit_test(preambles),
        cmocka_unit_test(chunk_order),
        cmocka_unit_test(newer_writer),
        cmocka_unit_test(bad_schemas),
        cmocka_unit_test(bad_records),
        cmocka_unit_test(bad_key_values),
        cmocka_unit_test(stats_on_odd_data),
        cmocka_unit_test(residency_by_step),
        cmocka_unit_test(newer_move_layout),
        cmocka_unit_test(newer_transition_layout),
        cmocka_unit_test(summaries_counted_in),
        cmocka_unit_test(info_and_fields_once), /* issue 27: checks no test reached */
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
