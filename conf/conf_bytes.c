/* conf_bytes.c — the one size grammar (contract and grammar in conf_bytes.h). libc only: it is
 * also a member of libplanner.a. */
#include "conf_bytes.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define KI ((uint64_t)1 << 10)

static const struct {
    const char *name; /* lower case; matched case-insensitively */
    uint64_t scale;
} units[] = {
    {"b", 1},
    {"k", KI},
    {"ki", KI},
    {"kib", KI},
    {"m", KI *KI},
    {"mi", KI *KI},
    {"mib", KI *KI},
    {"g", KI *KI *KI},
    {"gi", KI *KI *KI},
    {"gib", KI *KI *KI},
    {"t", KI *KI *KI *KI},
    {"ti", KI *KI *KI *KI},
    {"tib", KI *KI *KI *KI},
    {"p", KI *KI *KI *KI *KI},
    {"pi", KI *KI *KI *KI *KI},
    {"pib", KI *KI *KI *KI *KI},
    {"kb", 1000},
    {"mb", 1000000},
    {"gb", 1000000000},
    {"tb", 1000000000000},
    {"pb", 1000000000000000},
};

int conf_decimal_read(const char *text, size_t len, size_t *i, conf_decimal *out)
{
    *out = (conf_decimal){.frac_div = 1};
    size_t start = *i;
    for (; *i < len && text[*i] >= '0' && text[*i] <= '9'; (*i)++) {
        uint64_t d = (uint64_t)(text[*i] - '0');
        if (out->whole > (UINT64_MAX - d) / 10)
            return -1;
        out->whole = out->whole * 10 + d;
    }
    if (*i == start)
        return -1;
    if (*i < len && text[*i] == '.') {
        size_t f = ++(*i);
        for (; *i < len && text[*i] >= '0' && text[*i] <= '9'; (*i)++) {
            if (*i - f >= 9)
                return -1;
            out->frac = out->frac * 10 + (uint64_t)(text[*i] - '0');
            out->frac_div *= 10;
        }
        if (*i == f)
            return -1;
    }
    return 0;
}

int conf_decimal_scale(const conf_decimal *n, uint64_t scale, uint64_t limit, uint64_t *out)
{
    if (n->whole != 0 && scale > limit / n->whole)
        return -1;
    uint64_t v = n->whole * scale;
    uint64_t q = scale / n->frac_div, r = scale % n->frac_div;
    uint64_t f = q * n->frac + r * n->frac / n->frac_div;
    if (f > limit - v)
        return -1;
    *out = v + f;
    return 0;
}

/* The scale of unit u[0..len), 0 when it is none. */
static uint64_t unit_scale(const char *u, size_t len)
{
    for (size_t k = 0; k < sizeof units / sizeof units[0]; k++) {
        if (strlen(units[k].name) != len)
            continue;
        size_t i = 0;
        while (i < len && (u[i] | 0x20) == units[k].name[i])
            i++;
        if (i == len)
            return units[k].scale;
    }
    return 0;
}

/* Writes "invalid size \"TEXT\": WHY" into err; returns rc. */
static int fail(int rc, const char *text, size_t len, char *err, size_t errlen, const char *why)
{
    if (errlen == 0)
        return rc;
    char shown[65];
    size_t n = len < sizeof shown - 1 ? len : sizeof shown - 1;
    for (size_t i = 0; i < n; i++)
        shown[i] = text[i] >= 0x20 && text[i] < 0x7f ? text[i] : '?';
    shown[n] = '\0';
    snprintf(err, errlen, "invalid size \"%s%s\": %s", shown, len > n ? "..." : "", why);
    return rc;
}

int conf_bytes_parse(const char *text, size_t len, uint64_t *bytes, char *err, size_t errlen)
{
    static const char expected[] = "expected a number of bytes, alone or with a unit "
                                   "(" CONF_BYTES_UNITS ")";
    size_t i = 0;
    conf_decimal n;
    if (conf_decimal_read(text, len, &i, &n) != 0)
        return fail(CONF_BYTES_SYNTAX, text, len, err, errlen, expected);
    if (i == len) {
        if (n.frac_div != 1)
            return fail(CONF_BYTES_SYNTAX, text, len, err, errlen,
                        "a byte count is whole (a fraction needs a unit)");
        *bytes = n.whole;
        return CONF_BYTES_OK;
    }
    size_t u = i;
    while (u < len && text[u] == ' ')
        u++;
    uint64_t scale = unit_scale(text + u, len - u), v;
    if (scale == 0)
        return fail(CONF_BYTES_SYNTAX, text, len, err, errlen, expected);
    if (conf_decimal_scale(&n, scale, UINT64_MAX, &v) != 0)
        return fail(CONF_BYTES_RANGE, text, len, err, errlen, "more than 2^64 bytes");
    *bytes = v;
    return CONF_BYTES_OK;
}
