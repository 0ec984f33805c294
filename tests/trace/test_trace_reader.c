/* test_trace_reader.c — the trace reader against damaged and foreign input: cut at every offset,
 * every byte flipped, bad preambles, chunk order, a newer writer's schema, malformed schemas and
 * records; each error names the file and the byte offset. */
#include "report_trace.h"
#include "shim_trace.h"
#include "shim_trace_format.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- building traces byte by byte ---- */

typedef struct buf {
    uint8_t *p;
    size_t len;
} buf;

static void put(buf *b, const void *data, size_t n)
{
    b->p = realloc(b->p, b->len + n + 1);
    assert_non_null(b->p);
    if (n > 0)
        memcpy(b->p + b->len, data, n);
    b->len += n;
}

static void put16(buf *b, uint16_t v)
{
    put(b, &v, 2);
}

static void put32(buf *b, uint32_t v)
{
    put(b, &v, 4);
}

static void put64(buf *b, uint64_t v)
{
    put(b, &v, 8);
}

static void put_name(buf *b, const char *s)
{
    uint8_t n = (uint8_t)strlen(s);
    put(b, &n, 1);
    put(b, s, n);
}

static uint32_t crc_of(const void *a, size_t alen, const void *b, size_t blen)
{
    uint32_t table[256];
    shim_trace_crc32_init(table);
    return shim_trace_crc32(table, shim_trace_crc32(table, 0, a, alen), b, blen);
}

static void chunk(buf *b, uint32_t type, const buf *payload)
{
    uint8_t hdr[16];
    uint32_t len = (uint32_t)payload->len;
    memcpy(hdr, SHIM_TRACE_CHUNK_MAGIC, 4);
    memcpy(hdr + 4, &type, 4);
    memcpy(hdr + 8, &len, 4);
    uint32_t crc = crc_of(hdr, 12, payload->p, payload->len);
    memcpy(hdr + 12, &crc, 4);
    put(b, hdr, 16);
    put(b, payload->p, payload->len);
}

static void preamble(buf *b, uint16_t major, uint16_t minor, uint32_t size)
{
    put(b, SHIM_TRACE_MAGIC, 8);
    put16(b, major);
    put16(b, minor);
    put32(b, size);
    for (uint32_t i = 16; i < size; i++)
        put(b, "", 1);
}

static void info_chunk(buf *b)
{
    buf p = {0};
    put32(&p, 1);
    put16(&p, 3);
    put(&p, "pid", 3);
    put32(&p, 2);
    put(&p, "77", 2);
    chunk(b, SHIM_TRACE_CHUNK_INFO, &p);
    free(p.p);
}

static void end_chunk(buf *b)
{
    buf p = {0};
    put32(&p, 0);
    chunk(b, SHIM_TRACE_CHUNK_END, &p);
    free(p.p);
}

/* A record header for kind with body bytes to follow. */
static void rec(buf *b, uint16_t kind, uint16_t body, uint64_t t)
{
    put16(b, kind);
    put16(b, (uint16_t)(16 + body));
    put32(b, 42);
    put64(b, t);
}

static void rec_free(buf *b, uint64_t id)
{
    rec(b, SHIM_TRACE_FREE, 16, 1000 + id);
    put64(b, id);
    put64(b, 0);
}

/* The head the real writer writes (preamble, INFO, SCHEMA), taken from a trace it made. */
static buf writer_head(void)
{
    char path[] = "/tmp/test_trace_reader.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    char err[256];
    struct shim_trace_info info = {77, 0, "cmd", NULL, 0};
    if (shim_trace_start(path, &info, err, sizeof err) != 0)
        fail_msg("%s", err);
    shim_trace_stop();
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    buf b = {malloc(1 << 16), 0};
    b.len = fread(b.p, 1, 1 << 16, f);
    fclose(f);
    unlink(path);
    size_t at = 16; /* keep the chunks up to the schema */
    for (int i = 0; i < 2; i++) {
        uint32_t len;
        memcpy(&len, b.p + at + 8, 4);
        at += 16 + len;
    }
    b.len = at;
    return b;
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

static int load(report_trace *t, const buf *b, char *err, size_t errlen)
{
    err[0] = '\0';
    return report_trace_load_mem(t, b->p, b->len, "test.trace", err, errlen);
}

/* Loads b expecting failure with an error that contains want. */
static void expect_error(const buf *b, const char *want)
{
    report_trace t;
    char err[512];
    if (load(&t, b, err, sizeof err) == 0) {
        report_trace_free(&t);
        fail_msg("loaded, but expected the error \"%s\"", want);
    }
    if (strstr(err, want) == NULL || strncmp(err, "test.trace: ", 12) != 0)
        fail_msg("error \"%s\" lacks \"%s\"", err, want);
    assert_int_equal(t.n, 0);
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

/* A schema entry: kind id, fixed size, name, then n fields (offset, type, name). */
static void kind(buf *s, uint16_t id, uint16_t fixed, const char *name, int n, ...)
{
    va_list ap;
    va_start(ap, n);
    put16(s, id);
    put16(s, fixed);
    uint8_t nf = (uint8_t)n;
    put(s, &nf, 1);
    put_name(s, name);
    for (int i = 0; i < n; i++) {
        put16(s, (uint16_t)va_arg(ap, int));
        uint8_t type = (uint8_t)va_arg(ap, int);
        put(s, &type, 1);
        put_name(s, va_arg(ap, const char *));
    }
    va_end(ap);
}

static buf with_schema(const buf *kinds, uint16_t count)
{
    buf b = {0}, s = {0};
    preamble(&b, 1, 0, 16);
    info_chunk(&b);
    put16(&s, count);
    put16(&s, 0);
    put(&s, kinds->p, kinds->len);
    chunk(&b, SHIM_TRACE_CHUNK_SCHEMA, &s);
    free(s.p);
    return b;
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
    put32(&p, SHIM_ALLOC_MANAGED);
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
    assert_int_equal(t.recs[0].sub, SHIM_ALLOC_MANAGED);
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
        {"schema: field 'seq' of kind 'kernel_time' is u32, this reader expects u64", 1},
        {"schema: kind 2 'free' is zero, repeated, or too large", 2},
        {"schema: field 'stream' of kind 'free' lies outside its record", 3},
        {"schema: kind 3 is 'names', this reader knows it as 'func_name'", 4},
        {"schema: bad kind name", 5},
        {"schema: kind entry cut short", 6},
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
        }
        buf b = with_schema(&k, count);
        expect_error(&b, cases[i].want);
        free(b.p);
        free(k.p);
    }
}

/* A trace with the writer's schema and one records chunk holding p: the chunk's payload
   starts at *payload. */
static buf one_chunk(const buf *p, size_t *payload)
{
    buf b = writer_head();
    *payload = b.len + 16;
    chunk(&b, SHIM_TRACE_CHUNK_RECORDS, p);
    return b;
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
    put64(&p, SHIM_ALLOC_PLAIN);
    rec(&p, SHIM_TRACE_ALLOC, 40, 13); /* id 7 again */
    put64(&p, 7);
    put64(&p, 0);
    put64(&p, 100);
    put64(&p, 0);
    put64(&p, SHIM_ALLOC_PLAIN);
    rec_free(&p, 7);
    rec_free(&p, 7);
    rec(&p, SHIM_TRACE_KERNEL_TIME, 16, 14);
    put64(&p, 1234);
    put64(&p, 0x7ff8000000000000ull); /* NaN */
    size_t payload;
    buf b = one_chunk(&p, &payload);
    report_trace t;
    report_stats s;
    char err[512];
    if (load(&t, &b, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(report_stats_compute(&s, &t), 0);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(crc_is_zlibs),    cmocka_unit_test(cut_at_every_offset),
        cmocka_unit_test(flip_every_byte), cmocka_unit_test(preambles),
        cmocka_unit_test(chunk_order),     cmocka_unit_test(newer_writer),
        cmocka_unit_test(bad_schemas),     cmocka_unit_test(bad_records),
        cmocka_unit_test(bad_key_values),  cmocka_unit_test(stats_on_odd_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
