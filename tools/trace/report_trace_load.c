/* report_trace_load.c — reads a trace: preamble, chunk framing and checksums, truncation. */
#include "report_trace.h"

#include "base_order.h"
#include "util_file.h"

#include "shim_trace_format.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Where the bytes come from: a file read front to back, or memory. */
typedef struct source {
    FILE *f;
    const uint8_t *mem;
    size_t mem_len;
    uint64_t pos; /* bytes consumed */
} source;

/* Reads up to n bytes; returns how many there were. */
static size_t src_read(source *s, void *buf, size_t n)
{
    size_t got;
    if (s->f != NULL)
        got = fread(buf, 1, n, s->f);
    else {
        size_t left = s->mem_len - (size_t)s->pos;
        got = n < left ? n : left;
        if (got > 0)
            memcpy(buf, s->mem + s->pos, got);
    }
    s->pos += got;
    return got;
}

/* The state of one load. */
typedef struct loader {
    report_trace *t;
    source src;
    report_schema *schema;
    uint32_t crc_table[256];
    uint8_t *payload;
    size_t payload_cap;
    int have_info;
    char *err;
    size_t errlen;
} loader;

static int failf(loader *l, uint64_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int failf(loader *l, uint64_t at, const char *fmt, ...)
{
    int n = snprintf(l->err, l->errlen, "%s: byte %llu: ", l->t->name, (unsigned long long)at);
    if (n >= 0 && (size_t)n < l->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(l->err + n, l->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Prefixes a message of a payload parser ("byte N: ...") with the file name. */
static int fail_inner(loader *l, const char *inner)
{
    snprintf(l->err, l->errlen, "%s: %s", l->t->name, inner);
    return -1;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static void truncate_at(loader *l, uint64_t at, const char *why)
{
    report_trace *t = l->t;
    t->truncated = 1;
    t->truncated_at = at;
    snprintf(t->note, sizeof t->note,
             "truncated at byte %llu (%s); read the %zu whole chunks "
             "before it",
             (unsigned long long)at, why, t->chunks);
}

static int read_preamble(loader *l)
{
    uint8_t pre[SHIM_TRACE_PREAMBLE_SIZE];
    size_t got = src_read(&l->src, pre, sizeof pre);
    if (got >= 8 && memcmp(pre, SHIM_TRACE_MAGIC, 8) != 0)
        return failf(l, 0, "not a libshim trace (the file does not start with \"%s\")",
                     SHIM_TRACE_MAGIC);
    if (got < sizeof pre)
        return failf(l, got, "truncated inside the %d-byte preamble: no records",
                     SHIM_TRACE_PREAMBLE_SIZE);
    l->t->major = le16(pre + 8);
    l->t->minor = le16(pre + 10);
    if (l->t->major != SHIM_TRACE_MAJOR)
        return failf(l, 8, "format version %u.%u; this reader reads %d.x", l->t->major, l->t->minor,
                     SHIM_TRACE_MAJOR);
    uint32_t size = le32(pre + 12);
    if (size < SHIM_TRACE_PREAMBLE_SIZE || size > 4096)
        return failf(l, 12, "preamble size %u is not between %d and 4096", size,
                     SHIM_TRACE_PREAMBLE_SIZE);
    for (uint32_t i = SHIM_TRACE_PREAMBLE_SIZE; i < size; i++) /* a newer minor's extra bytes */
        if (src_read(&l->src, pre, 1) != 1)
            return failf(l, i, "truncated inside the %u-byte preamble: no records", size);
    return 0;
}

static void on_info(void *ctx, const char *key, const char *value)
{
    report_trace *t = ctx;
    char **slot = strcmp(key, "command") == 0  ? &t->command
                  : strcmp(key, "config") == 0 ? &t->config
                  : strcmp(key, "writer") == 0 ? &t->writer
                                               : NULL;
    if (slot != NULL && *slot == NULL)
        *slot = strdup(value);
    if (strcmp(key, "pid") == 0)
        t->pid = atoi(value);
    else if (strcmp(key, "rank") == 0)
        t->rank = atoi(value);
    else if (strcmp(key, "start_ns") == 0)
        t->start_ns = strtoull(value, NULL, 10);
    else if (strcmp(key, "start_realtime_ns") == 0)
        t->start_realtime_ns = strtoull(value, NULL, 10);
}

static void on_end(void *ctx, const char *key, const char *value)
{
    report_trace *t = ctx;
    if (strcmp(key, "records") == 0)
        t->end_records = strtoull(value, NULL, 10);
    else if (strcmp(key, "dropped") == 0)
        t->end_dropped = strtoull(value, NULL, 10);
    else if (strcmp(key, "max_bytes") == 0)
        t->max_bytes = strtoull(value, NULL, 10);
    else if (strcmp(key, "lost_limit") == 0)
        t->lost_limit = strtoull(value, NULL, 10);
    else if (strcmp(key, "lost_steps") == 0)
        t->lost_steps = strtoull(value, NULL, 10);
    else if (strcmp(key, "lost_error") == 0)
        t->lost_error = strtoull(value, NULL, 10);
    else if (strcmp(key, "detail_steps") == 0) {
        t->detail_steps = strtoull(value, NULL, 10);
        t->have_detail_end = 1;
    } else if (strcmp(key, "last_detail_step") == 0)
        t->last_detail_step = strtoull(value, NULL, 10);
    else if (strcmp(key, "write_error") == 0)
        snprintf(t->write_error, sizeof t->write_error, "%s", value);
    else if (strcmp(key, "resident_peak_bytes") == 0) {
        t->resident_peak_bytes = strtoull(value, NULL, 10);
        t->have_resident_peak = 1;
    } else if (strcmp(key, "device_name") == 0) {
        snprintf(t->device_name, sizeof t->device_name, "%s", value);
    }
}

/* Interprets one whole, checksummed chunk. */
static int take_chunk(loader *l, uint64_t at, uint32_t type, const uint8_t *p, uint32_t len)
{
    report_trace *t = l->t;
    uint64_t base = at + SHIM_TRACE_CHUNK_HEADER;
    char inner[240];
    int rc = 0;
    if (type == SHIM_TRACE_CHUNK_INFO) {
        if (l->have_info || l->schema != NULL)
            return failf(l, at, "a second info chunk");
        l->have_info = 1;
        rc = report_kv_parse(p, len, base, on_info, t, inner, sizeof inner);
    } else if (type == SHIM_TRACE_CHUNK_SCHEMA) {
        if (!l->have_info || l->schema != NULL)
            return failf(l, at, "the schema chunk must follow the info chunk, once");
        rc = report_schema_parse(&l->schema, p, len, base, inner, sizeof inner);
    } else if (type == SHIM_TRACE_CHUNK_RECORDS || type == SHIM_TRACE_CHUNK_END) {
        if (l->schema == NULL)
            return failf(l, at, "a %s chunk before the schema",
                         type == SHIM_TRACE_CHUNK_END ? "end" : "records");
        if (type == SHIM_TRACE_CHUNK_END) {
            t->complete = 1;
            rc = report_kv_parse(p, len, base, on_end, t, inner, sizeof inner);
        } else
            rc = report_records_parse(t, l->schema, p, len, base, inner, sizeof inner);
    } else if (!l->have_info)
        return failf(l, at, "the first chunk is not the info chunk");
    else
        t->skipped_chunks++;
    return rc == 0 ? 0 : fail_inner(l, inner);
}

/* Reads the payload of a chunk at `at` into l->payload. 1 read, 0 the file ended first. */
static int read_payload(loader *l, uint32_t len, uint64_t at)
{
    if (len > l->payload_cap) {
        uint8_t *p = realloc(l->payload, len);
        if (p == NULL)
            return failf(l, at, "out of memory for a %u-byte chunk", len);
        l->payload = p;
        l->payload_cap = len;
    }
    return src_read(&l->src, l->payload, len) == len;
}

/* One chunk. Returns 1 to go on, 0 at the end of the data, -1 on an error. */
static int next_chunk(loader *l)
{
    uint64_t at = l->src.pos;
    uint8_t hdr[SHIM_TRACE_CHUNK_HEADER];
    size_t got = src_read(&l->src, hdr, sizeof hdr);
    if (got == 0) {
        if (!l->t->complete)
            truncate_at(l, at, "no end chunk: the writer did not finish");
        return 0;
    }
    if (l->t->complete)
        return failf(l, at, "data after the end chunk");
    if (got < sizeof hdr) {
        truncate_at(l, at, "a chunk header is cut short");
        return 0;
    }
    if (memcmp(hdr, SHIM_TRACE_CHUNK_MAGIC, 4) != 0)
        return failf(l, at, "bad chunk magic (not \"%s\")", SHIM_TRACE_CHUNK_MAGIC);
    uint32_t type = le32(hdr + 4), len = le32(hdr + 8), stored = le32(hdr + 12);
    if (len > SHIM_TRACE_CHUNK_MAX)
        return failf(l, at, "chunk length %u is over the %u-byte limit", len, SHIM_TRACE_CHUNK_MAX);
    int whole = read_payload(l, len, at);
    if (whole < 0)
        return -1;
    if (!whole) {
        truncate_at(l, at, "the last chunk is cut short");
        return 0;
    }
    uint32_t crc = shim_trace_crc32(l->crc_table, 0, hdr, 12);
    crc = shim_trace_crc32(l->crc_table, crc, l->payload, len);
    if (crc != stored)
        return failf(l, at,
                     "chunk checksum mismatch (stored 0x%08x, computed 0x%08x): the "
                     "trace is corrupt",
                     stored, crc);
    if (take_chunk(l, at, type, l->payload, len) != 0)
        return -1;
    l->t->chunks++;
    return 1;
}

static int by_time(const void *pa, const void *pb)
{
    const report_rec *a = pa, *b = pb;
    return BASE_CMP_THEN(a->t_ns, b->t_ns, BASE_CMP(a->order, b->order));
}

static int load(report_trace *t, source src, const char *name, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    t->name = name;
    loader l = {.t = t, .src = src, .err = err, .errlen = errlen};
    shim_trace_crc32_init(l.crc_table);
    int rc = read_preamble(&l);
    while (rc == 0 && (rc = next_chunk(&l)) == 1)
        rc = 0;
    if (rc == 0 && l.schema == NULL)
        rc = failf(&l, t->truncated_at, "truncated before the schema chunk: no records");
    report_schema_free(l.schema);
    free(l.payload);
    if (rc != 0) {
        report_trace_free(t);
        t->name = name;
        return -1;
    }
    if (t->n > 1) /* qsort wants a valid pointer even for no elements */
        qsort(t->recs, t->n, sizeof *t->recs, by_time);
    if (t->start_ns == 0 && t->n > 0)
        t->start_ns = t->recs[0].t_ns;
    return 0;
}

/* Contract in report_trace.h. */
int report_trace_load(report_trace *t, const char *path, char *err, size_t errlen)
{
    char why[128];
    FILE *f = util_file_open(path, "rb", why, sizeof why);
    if (f == NULL) {
        memset(t, 0, sizeof *t);
        t->name = path;
        snprintf(err, errlen, "%s: cannot open: %s", path, why);
        return -1;
    }
    int rc = load(t, (source){.f = f}, path, err, errlen);
    if (rc == 0 && ferror(f)) {
        snprintf(err, errlen, "%s: read error", path);
        report_trace_free(t);
        rc = -1;
    }
    fclose(f);
    return rc;
}

/* Contract in report_trace.h. */
int report_trace_load_mem(report_trace *t, const uint8_t *data, size_t len, const char *name,
                          char *err, size_t errlen)
{
    return load(t, (source){.mem = data, .mem_len = len}, name, err, errlen);
}

/* Contract in report_trace.h. */
void report_trace_free(report_trace *t)
{
    free(t->recs);
    free(t->text);
    free(t->ids);
    free(t->plans);
    free(t->plan_steps);
    free(t->summaries);
    free(t->command);
    free(t->config);
    free(t->writer);
    memset(t, 0, sizeof *t);
}
