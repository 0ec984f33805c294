/* conf_units.c — sizes ("40GiB", "60%", "auto", bytes) and durations ("50ms"): parse, format. */
#include "conf_bytes.h"
#include "conf_internal.h"

#include <stdio.h>
#include <string.h>

typedef struct unit {
    const char *name;
    uint64_t scale;
} unit;

/* The units a size is written with (conf_size_format); what it is read with is conf_bytes.c's. */
static const unit size_units[] = {
    {"B", 1},
    {"KiB", (uint64_t)CONF_KIB},
    {"MiB", (uint64_t)CONF_MIB},
    {"GiB", (uint64_t)CONF_GIB},
    {"TiB", (uint64_t)CONF_TIB},
    {"PiB", (uint64_t)CONF_PIB},
};

static const unit time_units[] = {
    {"ns", 1},
    {"us", (uint64_t)CONF_US},
    {"ms", (uint64_t)CONF_MS},
    {"s", (uint64_t)CONF_SEC},
    {"min", 60 * (uint64_t)CONF_SEC},
    {"h", 3600 * (uint64_t)CONF_SEC},
};

/* Writes msg with an excerpt of the offending text. */
static int fail(char *err, size_t errlen, const char *msg, const char *text, size_t len)
{
    char shown[65];
    conf_excerpt(text, len, shown, sizeof shown);
    snprintf(err, errlen, msg, (int)strlen(shown), shown);
    return -1;
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

/* Contract in conf.h: 0, or -1 with the reason in err. Bytes are conf_bytes_parse's. */
int conf_size_parse(const char *text, size_t len, conf_size *out, char *err, size_t errlen)
{
    const char *bad = "invalid size \"%.*s\": expected a number of bytes, alone or with a unit "
                      "(" CONF_BYTES_UNITS "), a percentage, or auto";
    if (len == 4 && conf_ascii_ieq(text, "auto", 4)) {
        *out = (conf_size){.kind = CONF_SIZE_AUTO};
        return 0;
    }
    size_t i = 0;
    conf_decimal n;
    uint64_t v;
    if (conf_decimal_read(text, len, &i, &n) == 0) {
        size_t u = skip_spaces(text, len, i);
        if (u + 1 == len && text[u] == '%') {
            if (n.frac_div > 10000)
                return fail(err, errlen,
                            "invalid size \"%.*s\": at most 4 decimals in a percentage", text, len);
            if (conf_decimal_scale(&n, 10000, UINT32_MAX, &v) < 0)
                return fail(err, errlen, "invalid size \"%.*s\": percentage too large", text, len);
            *out = (conf_size){.kind = CONF_SIZE_PERCENT, .ppm = (uint32_t)v};
            return 0;
        }
    }
    int rc = conf_bytes_parse(text, len, &v, err, errlen);
    if (rc == CONF_BYTES_SYNTAX)
        return fail(err, errlen, bad, text, len);
    if (rc != CONF_BYTES_OK)
        return -1;
    *out = (conf_size){.kind = CONF_SIZE_BYTES, .bytes = v};
    return 0;
}

/* Contract in conf.h. */
int conf_budget_parse(const char *text, conf_size *out, char *err, size_t errlen)
{
    size_t len = strlen(text);
    if (conf_size_parse(text, len, out, err, errlen) != 0)
        return -1;
    if (out->kind == CONF_SIZE_AUTO ||
        (out->kind == CONF_SIZE_PERCENT && (out->ppm == 0 || out->ppm > 1000000)))
        return fail(err, errlen,
                    "invalid budget \"%.*s\": a size, or a share of the native peak in (0%%, "
                    "100%%]",
                    text, len);
    return 0;
}

/* Contract in conf.h: never fails. */
size_t conf_size_unit_hint(const char *text, size_t len, bool percent, char *buf, size_t n)
{
    if (n > 0)
        buf[0] = '\0';
    if (len == 0 || len > 5) /* 100000 bytes and more: meant as bytes, so no question */
        return 0;
    for (size_t i = 0; i < len; i++)
        if (text[i] < '0' || text[i] > '9')
            return 0;
    int w = (int)len;
    bool share = percent && (len < 3 || (len == 3 && memcmp(text, "100", 3) <= 0));
    int out = share ? snprintf(buf, n,
                               "a number without a unit is bytes: did you mean %.*s%% or "
                               "%.*sGiB?",
                               w, text, w, text)
                    : snprintf(buf, n,
                               "a number without a unit is bytes: did you mean %.*sMiB or "
                               "%.*sGiB?",
                               w, text, w, text);
    return out < 0 ? 0 : (size_t)out;
}

/* Contract in conf.h: 0, or -1 with the reason in err. */
int conf_duration_parse(const char *text, size_t len, int64_t *ns, char *err, size_t errlen)
{
    const char *bad = "invalid duration \"%.*s\": expected a number with a unit (ns, us, ms, "
                      "s, min, h)";
    size_t i = 0;
    conf_decimal n;
    if (conf_decimal_read(text, len, &i, &n) < 0)
        return fail(err, errlen, bad, text, len);
    size_t u = skip_spaces(text, len, i);
    const unit *un =
        find_unit(time_units, sizeof time_units / sizeof time_units[0], text + u, len - u);
    uint64_t v;
    if (un == NULL)
        return fail(err, errlen, bad, text, len);
    if (conf_decimal_scale(&n, un->scale, INT64_MAX, &v) < 0)
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
