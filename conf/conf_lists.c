/* conf_lists.c — the two comma-separated types: size lists ("20GiB,,75%") and speed pairs
 * ("11,25" in GB/s): parse and format. Bounds are the option's, checked in conf_setting.c. */
#include "conf_bytes.h"
#include "conf_internal.h"

#include <stdio.h>
#include <string.h>

#define GB 1000000000u

static size_t skip_spaces(const char *t, size_t len, size_t i)
{
    while (i < len && t[i] == ' ')
        i++;
    return i;
}

/* Contract in conf_internal.h: 0, or -1 with the entry at fault and the reason in err. */
int conf_sizes_parse(const char *t, size_t len, conf_sizes *out, char *err, size_t errlen)
{
    *out = (conf_sizes){0};
    if (len == 0)
        return 0;
    for (size_t i = 0, end, k = 0;; i = end + 1, k++) {
        for (end = i; end < len && t[end] != ',';)
            end++;
        size_t a = skip_spaces(t, end, i), b = end;
        while (b > a && t[b - 1] == ' ')
            b--;
        char shown[41], why[CONF_ERR_LEN];
        conf_excerpt(t + a, b - a, shown, sizeof shown);
        if (k >= CONF_MAX_SIZES) {
            snprintf(err, errlen, "entry %zu (\"%s\"): more than %d entries", k + 1, shown,
                     CONF_MAX_SIZES);
            return -1;
        }
        if (a < b && conf_size_parse(t + a, b - a, &out->at[k], why, sizeof why) < 0) {
            snprintf(err, errlen, "entry %zu (\"%s\"): %s", k + 1, shown, why);
            return -1;
        }
        if (a < b)
            out->given |= 1u << k;
        if (end == len)
            return 0;
    }
}

/* Contract in conf_internal.h: 0, or -1 when text is not two speeds. */
int conf_speeds_parse(const char *t, size_t len, conf_speeds *out)
{
    *out = (conf_speeds){{0, 0}};
    if (len == 0)
        return 0;
    size_t i = 0;
    for (int k = 0; k < 2; k++) {
        conf_decimal n;
        i = skip_spaces(t, len, i);
        if (conf_decimal_read(t, len, &i, &n) < 0 ||
            conf_decimal_scale(&n, GB, UINT64_MAX, &out->bytes_per_s[k]) < 0)
            return -1;
        i = skip_spaces(t, len, i);
        if (k == 0 && (i == len || t[i++] != ','))
            return -1;
    }
    return i == len ? 0 : -1;
}

/* Contract in conf_internal.h: never fails; output truncated to n bytes, the full length
   returned. */
size_t conf_sizes_format(const conf_sizes *s, char *buf, size_t n)
{
    size_t used = 0;
    char one[48];
    if (n > 0)
        buf[0] = '\0';
    int last = s->given ? 31 - __builtin_clz(s->given) : -1;
    for (int k = 0; k <= last; k++) {
        one[0] = '\0';
        if (s->given & (1u << k))
            conf_size_format(&s->at[k], one, sizeof one);
        conf_appendf(buf, n, &used, "%s%s", k > 0 ? "," : "", one);
    }
    return used;
}

/* Contract in conf_internal.h: never fails; same return convention as conf_sizes_format. */
size_t conf_speed_format(uint64_t bytes_per_s, char *buf, size_t n)
{
    size_t used = 0;
    uint64_t frac = bytes_per_s % GB;
    int digits = 9;
    if (n > 0)
        buf[0] = '\0';
    for (; digits > 0 && frac % 10 == 0; digits--)
        frac /= 10;
    conf_appendf(buf, n, &used, "%llu", (unsigned long long)(bytes_per_s / GB));
    if (digits > 0)
        conf_appendf(buf, n, &used, ".%0*llu", digits, (unsigned long long)frac);
    return used;
}

/* Contract in conf_internal.h: never fails; same return convention as conf_sizes_format. */
size_t conf_speeds_format(const conf_speeds *s, char *buf, size_t n)
{
    char a[32], b[32];
    size_t used = 0;
    if (n > 0)
        buf[0] = '\0';
    if (s->bytes_per_s[0] == 0 && s->bytes_per_s[1] == 0)
        return 0;
    conf_speed_format(s->bytes_per_s[0], a, sizeof a);
    conf_speed_format(s->bytes_per_s[1], b, sizeof b);
    conf_appendf(buf, n, &used, "%s,%s", a, b);
    return used;
}
