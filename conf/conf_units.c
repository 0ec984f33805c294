/* conf_units.c — sizes ("40GiB", "60%", "auto", bytes) and durations ("50ms"): parse, format. */
#include "conf_internal.h"

#include <stdio.h>
#include <string.h>

typedef struct unit {
    const char *name;
    uint64_t scale;
} unit;

static const unit size_units[] = {
    {"B", 1},
    {"KiB", (uint64_t)CONF_KIB},
    {"MiB", (uint64_t)CONF_MIB},
    {"GiB", (uint64_t)CONF_GIB},
    {"TiB", (uint64_t)CONF_TIB},
    {"PiB", (uint64_t)CONF_PIB},
    {"KB", 1000},
    {"MB", 1000000},
    {"GB", 1000000000},
    {"TB", 1000000000000},
    {"PB", 1000000000000000},
};

static const unit time_units[] = {
    {"ns", 1},
    {"us", (uint64_t)CONF_US},
    {"ms", (uint64_t)CONF_MS},
    {"s", (uint64_t)CONF_SEC},
    {"min", 60 * (uint64_t)CONF_SEC},
    {"h", 3600 * (uint64_t)CONF_SEC},
};

/* A decimal number "123" or "1.25": whole part, fraction digits (at most 9) as an integer. */
typedef struct number {
    uint64_t whole;
    uint64_t frac;     /* the fraction digits as an integer: .25 -> 25 */
    uint64_t frac_div; /* 10^(fraction digits): .25 -> 100; 1 when there are none */
} number;

/* Writes msg with an excerpt of the offending text. */
static int fail(char *err, size_t errlen, const char *msg, const char *text, size_t len)
{
    char shown[65];
    conf_excerpt(text, len, shown, sizeof shown);
    snprintf(err, errlen, msg, (int)strlen(shown), shown);
    return -1;
}

/* Reads the number at text[*i]; -1 when there is none or it is too long. */
static int read_number(const char *text, size_t len, size_t *i, number *out)
{
    *out = (number){.frac_div = 1};
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

/* number * scale, rounded down; -1 on overflow of limit. */
static int scale_number(const number *n, uint64_t scale, uint64_t limit, uint64_t *out)
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

static const unit *find_unit(const unit *units, size_t count, const char *s, size_t len)
{
    for (size_t i = 0; i < count; i++)
        if (strlen(units[i].name) == len && conf_ascii_ieq(units[i].name, s, len))
            return &units[i];
    return NULL;
}

static size_t skip_spaces(const char *text, size_t len, size_t i)
{
    while (i < len && text[i] == ' ')
        i++;
    return i;
}

/* Contract in conf.h: 0, or -1 with the reason in err. */
int conf_size_parse(const char *text, size_t len, conf_size *out, char *err, size_t errlen)
{
    const char *bad = "invalid size \"%.*s\": expected a number of bytes with a unit (B, KiB, "
                      "MiB, GiB, TiB, PiB, KB, MB, GB, TB, PB), a percentage, or auto";
    if (len == 4 && conf_ascii_ieq(text, "auto", 4)) {
        *out = (conf_size){.kind = CONF_SIZE_AUTO};
        return 0;
    }
    size_t i = 0;
    number n;
    if (read_number(text, len, &i, &n) < 0)
        return fail(err, errlen, bad, text, len);
    size_t u = skip_spaces(text, len, i);
    uint64_t v;
    if (u == len && i == len && n.frac_div == 1) {
        *out = (conf_size){.kind = CONF_SIZE_BYTES, .bytes = n.whole};
        return 0;
    }
    if (u + 1 == len && text[u] == '%') {
        if (n.frac_div > 10000)
            return fail(err, errlen, "invalid size \"%.*s\": at most 4 decimals in a percentage",
                        text, len);
        if (scale_number(&n, 10000, UINT32_MAX, &v) < 0)
            return fail(err, errlen, "invalid size \"%.*s\": percentage too large", text, len);
        *out = (conf_size){.kind = CONF_SIZE_PERCENT, .ppm = (uint32_t)v};
        return 0;
    }
    const unit *un =
        find_unit(size_units, sizeof size_units / sizeof size_units[0], text + u, len - u);
    if (un == NULL)
        return fail(err, errlen, bad, text, len);
    if (scale_number(&n, un->scale, UINT64_MAX, &v) < 0)
        return fail(err, errlen, "invalid size \"%.*s\": more than 2^64 bytes", text, len);
    *out = (conf_size){.kind = CONF_SIZE_BYTES, .bytes = v};
    return 0;
}

/* Contract in conf.h: 0, or -1 with the reason in err. */
int conf_duration_parse(const char *text, size_t len, int64_t *ns, char *err, size_t errlen)
{
    const char *bad = "invalid duration \"%.*s\": expected a number with a unit (ns, us, ms, "
                      "s, min, h)";
    size_t i = 0;
    number n;
    if (read_number(text, len, &i, &n) < 0)
        return fail(err, errlen, bad, text, len);
    size_t u = skip_spaces(text, len, i);
    const unit *un =
        find_unit(time_units, sizeof time_units / sizeof time_units[0], text + u, len - u);
    uint64_t v;
    if (un == NULL)
        return fail(err, errlen, bad, text, len);
    if (scale_number(&n, un->scale, INT64_MAX, &v) < 0)
        return fail(err, errlen, "invalid duration \"%.*s\": too long", text, len);
    *ns = (int64_t)v;
    return 0;
}

/* Contract in conf.h: never fails; output truncated to n bytes, the full length returned. */
size_t conf_size_format(const conf_size *s, char *buf, size_t n)
{
    size_t used = 0;
    if (n > 0)
        buf[0] = '\0';
    if (s->kind == CONF_SIZE_AUTO) {
        conf_appendf(buf, n, &used, "auto");
    } else if (s->kind == CONF_SIZE_PERCENT) {
        uint32_t frac = s->ppm % 10000;
        int digits = 4;
        for (; digits > 0 && frac % 10 == 0; digits--)
            frac /= 10;
        conf_appendf(buf, n, &used, "%u", s->ppm / 10000);
        if (digits > 0)
            conf_appendf(buf, n, &used, ".%0*u", digits, frac);
        conf_appendf(buf, n, &used, "%%");
    } else {
        int k = 5; /* PiB down to KiB */
        while (k > 0 && (s->bytes == 0 || s->bytes % size_units[k].scale != 0))
            k--;
        if (k == 0)
            conf_appendf(buf, n, &used, "%llu", (unsigned long long)s->bytes);
        else
            conf_appendf(buf, n, &used, "%llu%s",
                         (unsigned long long)(s->bytes / size_units[k].scale), size_units[k].name);
    }
    return used;
}

/* Contract in conf.h: never fails; output truncated to n bytes, the full length returned. */
size_t conf_duration_format(int64_t ns, char *buf, size_t n)
{
    size_t used = 0, k = sizeof time_units / sizeof time_units[0] - 1;
    if (n > 0)
        buf[0] = '\0';
    while (k > 0 && (ns == 0 || (uint64_t)ns % time_units[k].scale != 0))
        k--;
    conf_appendf(buf, n, &used, "%lld%s", (long long)((uint64_t)ns / time_units[k].scale),
                 time_units[k].name);
    return used;
}

/* Contract in conf.h: saturates at UINT64_MAX. */
uint64_t conf_size_resolve(const conf_size *s, uint64_t device_bytes, uint64_t auto_bytes)
{
    if (s->kind == CONF_SIZE_AUTO)
        return auto_bytes;
    if (s->kind == CONF_SIZE_BYTES)
        return s->bytes;
    uint64_t q = device_bytes / 1000000, r = device_bytes % 1000000;
    if (q != 0 && s->ppm > UINT64_MAX / q)
        return UINT64_MAX;
    return q * s->ppm + r * s->ppm / 1000000;
}
