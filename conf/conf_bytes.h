/* conf_bytes.h — THE grammar of a size in bytes, one function for every place that reads one:
 * conf/ (size options such as budget, SHIM_BUDGET), planner/ (model files, --generate specs)
 * and the tools (shim-plan --budget, shim-report plan --budget). libc only, so that the planner
 * links it without the rest of conf/ (planner/module.mk puts conf_bytes.o into libplanner.a).
 *
 * A size is a decimal number — digits, optionally a '.' and 1 to 9 more digits — then,
 * optionally after spaces, a unit (case-insensitive):
 *   B                                          1
 *   K, Ki, KiB  M, Mi, MiB  G, Gi, GiB  T, Ti, TiB  P, Pi, PiB   powers of 1024 (G = 2^30)
 *   KB, MB, GB, TB, PB                         powers of 1000 (GB = 10^9)
 * Without a unit the number is a byte count and must be whole. Fractions round down to a byte
 * (1.5KiB = 1536, 0.1KiB = 102). Nothing else: no sign, no exponent, no leading or trailing
 * space, at most 2^64 - 1 bytes. */
#ifndef CONF_BYTES_H
#define CONF_BYTES_H

#include <stddef.h>
#include <stdint.h>

/* The units, as error messages list them. */
#define CONF_BYTES_UNITS                                                                           \
    "B; K, Ki, KiB, M, Mi, MiB, G, Gi, GiB, T, Ti, TiB, P, Pi, PiB: powers of 1024; KB, MB, GB, "  \
    "TB, PB: powers of 1000"

/* conf_bytes_parse's results. */
enum { CONF_BYTES_OK = 0, CONF_BYTES_SYNTAX = -1, CONF_BYTES_RANGE = -2 };

/* Parses text[0..len) as a size (above) into *bytes. Returns CONF_BYTES_OK, or
   CONF_BYTES_SYNTAX (not a size) or CONF_BYTES_RANGE (2^64 bytes or more) with a reason in err
   when errlen > 0: "invalid size \"TEXT\": ..." (TEXT cut to 64 bytes, unprintable bytes shown
   as '?'). *bytes is written only on success. */
int conf_bytes_parse(const char *text, size_t len, uint64_t *bytes, char *err, size_t errlen);

/* The decimal number a size or a duration starts with. */
typedef struct conf_decimal {
    uint64_t whole;
    uint64_t frac;     /* the fraction digits as an integer: .25 -> 25 */
    uint64_t frac_div; /* 10^(fraction digits): .25 -> 100; 1 when there are none */
} conf_decimal;

/* Reads the number at text[*i], advancing *i past it: 0, or -1 when there is none, it has no
   digit after its '.', more than 9 fraction digits, or a whole part of 2^64 or more. */
int conf_decimal_read(const char *text, size_t len, size_t *i, conf_decimal *out);

/* n * scale, rounded down, into *out: 0, or -1 when it exceeds limit. */
int conf_decimal_scale(const conf_decimal *n, uint64_t scale, uint64_t limit, uint64_t *out);

#endif
