/* report_trace_internal.h — what the trace reader's parsers share (tools/trace/ only): the one
 * way a parse error is worded and the one little-endian field reader. Not part of the seam
 * (report_trace.h): nothing outside tools/trace/ includes it. */
#ifndef REPORT_TRACE_INTERNAL_H
#define REPORT_TRACE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* Writes "byte AT: " and the message fmt formats into err (errlen bytes, truncated to fit) and
   returns -1, the parsers' failure. */
int report_bad(char *err, size_t errlen, uint64_t at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The n-byte (1 to 8) little-endian unsigned integer at p. */
uint64_t report_get_le(const uint8_t *p, int n);

#endif
