/* trace_bytes.c — traces built byte by byte for the reader's tests (contracts in trace_bytes.h). */
#include "trace_bytes.h"

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
/* Contract in trace_bytes.h. */
void put(buf *b, const void *data, size_t n)
{
    b->p = realloc(b->p, b->len + n + 1);
    assert_non_null(b->p);
    if (n > 0)
        memcpy(b->p + b->len, data, n);
    b->len += n;
}

/* Contract in trace_bytes.h. */
void put16(buf *b, uint16_t v)
{
    put(b, &v, 2);
}

/* Contract in trace_bytes.h. */
void put32(buf *b, uint32_t v)
{
    put(b, &v, 4);
}

/* Contract in trace_bytes.h. */
void put64(buf *b, uint64_t v)
{
    put(b, &v, 8);
}

/* Contract in trace_bytes.h. */
void put_name(buf *b, const char *s)
{
    uint8_t n = (uint8_t)strlen(s);
    put(b, &n, 1);
    put(b, s, n);
}

/* Contract in trace_bytes.h. */
uint32_t crc_of(const void *a, size_t alen, const void *b, size_t blen)
{
    uint32_t table[256];
    shim_trace_crc32_init(table);
    return shim_trace_crc32(table, shim_trace_crc32(table, 0, a, alen), b, blen);
}

/* Contract in trace_bytes.h. */
void chunk(buf *b, uint32_t type, const buf *payload)
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

/* Contract in trace_bytes.h. */
void preamble(buf *b, uint16_t major, uint16_t minor, uint32_t size)
{
    put(b, SHIM_TRACE_MAGIC, 8);
    put16(b, major);
    put16(b, minor);
    put32(b, size);
    for (uint32_t i = 16; i < size; i++)
        put(b, "", 1);
}

/* Contract in trace_bytes.h. */
void info_chunk(buf *b)
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

/* Contract in trace_bytes.h. */
void end_chunk(buf *b)
{
    buf p = {0};
    put32(&p, 0);
    chunk(b, SHIM_TRACE_CHUNK_END, &p);
    free(p.p);
}

/* Contract in trace_bytes.h. */
void rec(buf *b, uint16_t kind, uint16_t body, uint64_t t)
{
    put16(b, kind);
    put16(b, (uint16_t)(16 + body));
    put32(b, 42);
    put64(b, t);
}

/* Contract in trace_bytes.h. */
void writer_start(char *path, const struct shim_trace_info *info)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    char err[256];
    if (shim_trace_start(path, info, err, sizeof err) != 0)
        fail_msg("%s", err);
}

/* Contract in trace_bytes.h. */
buf file_bytes(const char *path, size_t max)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    buf b = {malloc(max), 0};
    b.len = fread(b.p, 1, max, f);
    fclose(f);
    unlink(path);
    return b;
}

/* Contract in trace_bytes.h. */
void load_or_fail(report_trace *t, const char *path)
{
    char err[512] = "";
    if (report_trace_load(t, path, err, sizeof err) != 0)
        fail_msg("load %s: %s", path, err);
}

/* Contract in trace_bytes.h. */
buf writer_head(void)
{
    char path[] = "/tmp/test_trace_reader.XXXXXX";
    struct shim_trace_info info = {77, 0, "cmd", NULL, 0, 0, NULL};
    writer_start(path, &info);
    shim_trace_stop();
    buf b = file_bytes(path, 1 << 16);
    size_t at = 16; /* keep the chunks up to the schema */
    for (int i = 0; i < 2; i++) {
        uint32_t len;
        memcpy(&len, b.p + at + 8, 4);
        at += 16 + len;
    }
    b.len = at;
    return b;
}

/* Contract in trace_bytes.h. */
int load(report_trace *t, const buf *b, char *err, size_t errlen)
{
    err[0] = '\0';
    return report_trace_load_mem(t, b->p, b->len, "test.trace", err, errlen);
}

/* Contract in trace_bytes.h. */
void expect_error(const buf *b, const char *want)
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

/* Contract in trace_bytes.h. */
void kind(buf *s, uint16_t id, uint16_t fixed, const char *name, int n, ...)
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

/* Contract in trace_bytes.h. */
buf with_schema(const buf *kinds, uint16_t count)
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

/* Contract in trace_bytes.h. */
buf one_chunk(const buf *p, size_t *payload)
{
    buf b = writer_head();
    *payload = b.len + 16;
    chunk(&b, SHIM_TRACE_CHUNK_RECORDS, p);
    return b;
}

/* Contract in trace_bytes.h. */
void rec_launch(buf *p, uint64_t seq, uint64_t t)
{
    rec(p, SHIM_TRACE_LAUNCH, 32, t);
    put64(p, seq);
    put64(p, 1);
    put64(p, 0);
    put64(p, 0); /* n_allocs 0 and padding */
}

/* Contract in trace_bytes.h. */
void rec_sync(buf *p, uint64_t t)
{
    rec(p, SHIM_TRACE_SYNC, 16, t);
    put64(p, 0);
    put64(p, SHIM_SYNC_CTX);
}

/* Contract in trace_bytes.h. */
void rec_step(buf *p, uint64_t step, uint64_t first_seq, uint64_t t)
{
    rec(p, SHIM_TRACE_STEP, 16, t);
    put64(p, step);
    put64(p, first_seq);
}
