/* trace_bytes.h — traces built byte by byte for the reader's tests (test_trace_reader.c,
 * test_trace_plan.c): the framing, schema entries and records of the format written by hand,
 * so that a test chooses every byte and every record time. Allocation failures and a writer
 * that cannot start fail the calling cmocka test. */
#ifndef TRACE_BYTES_H
#define TRACE_BYTES_H

#include "report_trace.h"

#include <stddef.h>
#include <stdint.h>

/* A growing byte buffer; {0} is empty. The caller frees p. */
typedef struct buf {
    uint8_t *p;
    size_t len;
} buf;

/* Appends n bytes of data (the integers below little-endian, as the host is). */
void put(buf *b, const void *data, size_t n);
void put16(buf *b, uint16_t v);
void put32(buf *b, uint32_t v);
void put64(buf *b, uint64_t v);
/* Appends a schema name: its length in one byte, then its bytes. */
void put_name(buf *b, const char *s);

/* The CRC-32 of the bytes of a followed by those of b. */
uint32_t crc_of(const void *a, size_t alen, const void *b, size_t blen);

/* Appends a chunk of type holding payload, with its header and the right checksum. */
void chunk(buf *b, uint32_t type, const buf *payload);
/* Appends a preamble of the given version and size (zero bytes past the 16). */
void preamble(buf *b, uint16_t major, uint16_t minor, uint32_t size);
/* Appends an INFO chunk holding pid = 77. */
void info_chunk(buf *b);
/* Appends an empty END chunk. */
void end_chunk(buf *b);

/* Appends a record header for kind with body bytes to follow, thread id 42, time t. */
void rec(buf *b, uint16_t kind, uint16_t body, uint64_t t);
/* Appends a launch record: seq, function 1, stream 0, no allocations, at time t. */
void rec_launch(buf *p, uint64_t seq, uint64_t t);
/* Appends a context synchronisation record at time t. */
void rec_sync(buf *p, uint64_t t);
/* Appends a step record at time t. */
void rec_step(buf *p, uint64_t step, uint64_t first_seq, uint64_t t);

/* Appends a schema entry: kind id, fixed size, name, then n fields given as three arguments
   each (offset as int, type as int, name). */
void kind(buf *s, uint16_t id, uint16_t fixed, const char *name, int n, ...);
/* A preamble (1.0), an INFO chunk and a SCHEMA chunk of count entries made by kind(). */
buf with_schema(const buf *kinds, uint16_t count);

/* The head the real writer writes (preamble, INFO, SCHEMA), taken from a trace it made. */
buf writer_head(void);

struct shim_trace_info;
/* Starts the real writer (shim_trace_start) with info on a fresh file: path is a mkstemp
   template ("/tmp/NAME.XXXXXX"), replaced by the file's name. Fails the test if it cannot. */
void writer_start(char *path, const struct shim_trace_info *info);
/* The first max bytes of the file at path (the caller frees p), which is then removed. Fails the
   test if it cannot be opened. */
buf file_bytes(const char *path, size_t max);
/* Reads the trace at path into t (report_trace_load). Fails the test, naming path and the
   reader's reason, if it cannot. */
void load_or_fail(report_trace *t, const char *path);
/* A trace with the writer's head and one records chunk holding p (no END chunk); the chunk's
   payload starts at *payload. */
buf one_chunk(const buf *p, size_t *payload);

/* Loads b as "test.trace"; report_trace_load_mem's result, err cleared first. */
int load(report_trace *t, const buf *b, char *err, size_t errlen);
/* Loads b expecting failure with an error that names test.trace and contains want. */
void expect_error(const buf *b, const char *want);

#endif
