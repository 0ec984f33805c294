/* conf_number.c — integers (decimal, hex, octal, binary; int64 overflow) and floats. */
#include "conf_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A number token: the span checked by the grammar below. */
typedef struct token {
    const char *s;
    size_t n;
    int line, col;
} token;

static bool is_token_char(int c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           c == '.' || c == '+' || c == '-';
}

static int digit_value(int c, int base)
{
    int d = -1;
    if (c >= '0' && c <= '9')
        d = c - '0';
    else if (c >= 'a' && c <= 'f')
        d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
        d = c - 'A' + 10;
    return d < base ? d : -1;
}

static int fail_at(conf_parser *p, const token *t, size_t off, const char *msg)
{
    return conf_fail(p, t->line, t->col + (int)off, "%s", msg);
}

/* Checks digits of the base from t->s[*i], with each '_' between two digits. Returns the
   number of digits, or -1 after an error. */
static long digit_run(conf_parser *p, const token *t, size_t *i, int base)
{
    long digits = 0;
    for (; *i < t->n; (*i)++) {
        int c = (unsigned char)t->s[*i];
        if (c == '_') {
            if (digits == 0 || *i + 1 >= t->n || digit_value(t->s[*i + 1], base) < 0)
                return fail_at(p, t, *i, "'_' must be between two digits");
        } else if (digit_value(c, base) >= 0) {
            digits++;
        } else {
            break;
        }
    }
    if (digits == 0)
        return fail_at(p, t, *i, "expected a digit");
    return digits;
}

/* Value of the digits (underscores skipped) in t->s[from..to), at most limit. */
static int accumulate(conf_parser *p, const token *t, size_t from, size_t to, int base,
                      uint64_t limit, uint64_t *out)
{
    uint64_t v = 0;
    for (size_t i = from; i < to; i++) {
        if (t->s[i] == '_')
            continue;
        uint64_t d = (uint64_t)digit_value(t->s[i], base);
        if (v > (limit - d) / (uint64_t)base)
            return fail_at(p, t, 0, "integer does not fit in 64 bits");
        v = v * (uint64_t)base + d;
    }
    *out = v;
    return 0;
}

/* 0x, 0o, 0b integers: no sign, at most INT64_MAX. */
static int prefixed(conf_parser *p, const token *t, conf_value *v)
{
    int base = t->s[1] == 'x' ? 16 : t->s[1] == 'o' ? 8 : 2;
    size_t i = 2;
    uint64_t mag;
    if (digit_run(p, t, &i, base) < 0)
        return -1;
    if (i != t->n)
        return fail_at(p, t, i, "invalid digit in a number");
    if (accumulate(p, t, 2, t->n, base, INT64_MAX, &mag) < 0)
        return -1;
    v->type = CONF_INTEGER;
    v->u.i = (int64_t)mag;
    return 0;
}

/* Converts the float text (underscores removed) independently of the process locale. */
static int to_double(conf_parser *p, const token *t, conf_value *v)
{
    char *buf = malloc(t->n + 1);
    if (buf == NULL)
        return conf_fail_oom(p);
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->s[i] != '_')
            buf[k++] = t->s[i];
    buf[k] = '\0';
    if (p->c_locale == (locale_t)0)
        p->c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    errno = 0;
    double d = p->c_locale != (locale_t)0 ? strtod_l(buf, NULL, p->c_locale) : strtod(buf, NULL);
    free(buf);
    if (errno == ERANGE && isinf(d))
        return fail_at(p, t, 0, "float out of range");
    v->type = CONF_FLOAT;
    v->u.f = d;
    return 0;
}

static bool token_is(const token *t, size_t from, const char *word)
{
    return t->n - from == strlen(word) && memcmp(t->s + from, word, t->n - from) == 0;
}

/* [sign] int [. digits] [e [sign] digits], or [sign] inf / nan. */
static int decimal(conf_parser *p, const token *t, conf_value *v)
{
    size_t i = (t->s[0] == '+' || t->s[0] == '-') ? 1 : 0, int_start = i;
    if (token_is(t, i, "inf") || token_is(t, i, "nan")) {
        v->type = CONF_FLOAT;
        v->u.f = t->s[i] == 'i' ? INFINITY : NAN;
        v->u.f = t->s[0] == '-' ? -v->u.f : v->u.f;
        return 0;
    }
    long digits = digit_run(p, t, &i, 10);
    if (digits < 0)
        return -1;
    if (digits > 1 && t->s[int_start] == '0')
        return fail_at(p, t, int_start, "leading zeros are not allowed");
    size_t int_end = i;
    bool is_float = false;
    if (i < t->n && t->s[i] == '.') {
        i++;
        if (digit_run(p, t, &i, 10) < 0)
            return -1;
        is_float = true;
    }
    if (i < t->n && (t->s[i] == 'e' || t->s[i] == 'E')) {
        i++;
        if (i < t->n && (t->s[i] == '+' || t->s[i] == '-'))
            i++;
        if (digit_run(p, t, &i, 10) < 0)
            return -1;
        is_float = true;
    }
    if (i != t->n)
        return fail_at(p, t, i, "invalid character in a number");
    if (is_float)
        return to_double(p, t, v);
    uint64_t mag, limit = t->s[0] == '-' ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    if (accumulate(p, t, int_start, int_end, 10, limit, &mag) < 0)
        return -1;
    v->type = CONF_INTEGER;
    v->u.i = t->s[0] == '-' ? (int64_t)(0 - mag) : (int64_t)mag;
    return 0;
}

/* Contract in conf_internal.h: 0, or -1 after recording the parse error; the cursor moves only on
 * success. */
int conf_parse_number(conf_parser *p, conf_value *v)
{
    token t = {.s = p->src + p->pos, .line = p->line, .col = p->col};
    while (is_token_char(conf_peek(p, t.n)))
        t.n++;
    int rc;
    if (t.n > 2 && t.s[0] == '0' && (t.s[1] == 'x' || t.s[1] == 'o' || t.s[1] == 'b'))
        rc = prefixed(p, &t, v);
    else
        rc = decimal(p, &t, v);
    if (rc == 0)
        conf_advance(p, t.n);
    return rc;
}
