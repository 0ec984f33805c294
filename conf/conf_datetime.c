/* conf_datetime.c — the four TOML date-time kinds (RFC 3339 subset) and their canonical text. */
#include "conf_internal.h"

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}

/* Value of n digits at offset off, or -1 when one is missing. */
static int number_at(const conf_parser *p, size_t off, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        int c = conf_peek(p, off + (size_t)i);
        if (!is_digit(c))
            return -1;
        v = v * 10 + (c - '0');
    }
    return v;
}

/* Contract in conf_internal.h: never fails; only looks ahead. */
bool conf_at_datetime(const conf_parser *p)
{
    if (number_at(p, 0, 4) >= 0 && conf_peek(p, 4) == '-')
        return true;
    return number_at(p, 0, 2) >= 0 && conf_peek(p, 2) == ':';
}

static int days_in_month(int year, int month)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : days[month - 1];
}

/* YYYY-MM-DD at offset 0. Returns the bytes used or -1. */
static int date(conf_parser *p, conf_datetime *dt)
{
    dt->year = number_at(p, 0, 4);
    dt->month = conf_peek(p, 4) == '-' ? number_at(p, 5, 2) : -1;
    dt->day = conf_peek(p, 7) == '-' ? number_at(p, 8, 2) : -1;
    if (dt->month < 0 || dt->day < 0 || is_digit(conf_peek(p, 10)))
        return conf_fail(p, p->line, p->col, "invalid date: expected YYYY-MM-DD");
    if (dt->month < 1 || dt->month > 12)
        return conf_fail(p, p->line, p->col + 5, "month %02d is out of range", dt->month);
    if (dt->day < 1 || dt->day > days_in_month(dt->year, dt->month))
        return conf_fail(p, p->line, p->col + 8, "day %02d is out of range for %04d-%02d", dt->day,
                         dt->year, dt->month);
    return 10;
}

/* Fraction of a second at offset off ('.' then digits). Returns the bytes used or -1. */
static int fraction(conf_parser *p, size_t off, conf_datetime *dt)
{
    size_t n = 0;
    while (is_digit(conf_peek(p, off + 1 + n))) {
        if (n < 9) {
            dt->nanosecond = dt->nanosecond * 10 + (conf_peek(p, off + 1 + n) - '0');
            dt->frac_digits++;
        }
        n++;
    }
    if (n == 0)
        return conf_fail(p, p->line, p->col + (int)off, "expected digits after '.' in a time");
    for (int i = dt->frac_digits; i < 9; i++)
        dt->nanosecond *= 10; /* digits beyond nanoseconds are truncated */
    return (int)(n + 1);
}

/* HH:MM:SS[.frac] at offset off. Returns the bytes used or -1. */
static int time_of_day(conf_parser *p, size_t off, conf_datetime *dt)
{
    dt->hour = number_at(p, off, 2);
    dt->minute = conf_peek(p, off + 2) == ':' ? number_at(p, off + 3, 2) : -1;
    dt->second = conf_peek(p, off + 5) == ':' ? number_at(p, off + 6, 2) : -1;
    int col = p->col + (int)off;
    if (dt->hour < 0 || dt->minute < 0 || dt->second < 0 || is_digit(conf_peek(p, off + 8)))
        return conf_fail(p, p->line, col, "invalid time: expected HH:MM:SS");
    if (dt->hour > 23 || dt->minute > 59 || dt->second > 60)
        return conf_fail(p, p->line, col, "time %02d:%02d:%02d is out of range", dt->hour,
                         dt->minute, dt->second);
    if (conf_peek(p, off + 8) != '.')
        return 8;
    int n = fraction(p, off + 8, dt);
    return n < 0 ? -1 : 8 + n;
}

/* Z or +HH:MM / -HH:MM at offset off. Returns the bytes used, 0 when absent, or -1. */
static int utc_offset(conf_parser *p, size_t off, conf_datetime *dt)
{
    int c = conf_peek(p, off);
    if (c == 'Z' || c == 'z')
        return 1;
    if (c != '+' && c != '-')
        return 0;
    int h = number_at(p, off + 1, 2);
    int m = conf_peek(p, off + 3) == ':' ? number_at(p, off + 4, 2) : -1;
    int col = p->col + (int)off;
    if (h < 0 || m < 0)
        return conf_fail(p, p->line, col, "invalid offset: expected Z, +HH:MM or -HH:MM");
    if (h > 23 || m > 59)
        return conf_fail(p, p->line, col, "offset %c%02d:%02d is out of range", c, h, m);
    dt->offset_minutes = (c == '-' ? -1 : 1) * (h * 60 + m);
    return 6;
}

/* After a date: a time follows a 'T' or 't', or a space when digits and ':' come next. */
static bool time_follows(const conf_parser *p)
{
    int c = conf_peek(p, 10);
    if (c == 'T' || c == 't')
        return true;
    return c == ' ' && number_at(p, 11, 2) >= 0 && conf_peek(p, 13) == ':';
}

static int date_time(conf_parser *p, conf_value *v)
{
    int n = date(p, &v->u.dt);
    if (n < 0)
        return -1;
    if (!time_follows(p)) {
        v->type = CONF_DATE_LOCAL;
        conf_advance(p, (size_t)n);
        return 0;
    }
    int t = time_of_day(p, 11, &v->u.dt);
    if (t < 0)
        return -1;
    int o = utc_offset(p, 11 + (size_t)t, &v->u.dt);
    if (o < 0)
        return -1;
    v->type = o > 0 ? CONF_DATETIME : CONF_DATETIME_LOCAL;
    conf_advance(p, 11 + (size_t)t + (size_t)o);
    return 0;
}

/* Contract in conf_internal.h: 0, or -1 after recording the parse error. */
int conf_parse_datetime(conf_parser *p, conf_value *v)
{
    if (conf_peek(p, 2) != ':')
        return date_time(p, v);
    int t = time_of_day(p, 0, &v->u.dt);
    if (t < 0)
        return -1;
    int c = conf_peek(p, (size_t)t);
    if (c == 'Z' || c == 'z' || c == '+' || c == '-')
        return conf_fail(p, p->line, p->col + t, "a local time cannot have an offset");
    v->type = CONF_TIME_LOCAL;
    conf_advance(p, (size_t)t);
    return 0;
}

/* Contract in conf.h: never fails; 0 and an empty string for other types. */
size_t conf_datetime_format(const conf_value *v, char *buf, size_t n)
{
    if (n > 0)
        buf[0] = '\0';
    if (v->type < CONF_DATETIME)
        return 0;
    const conf_datetime *dt = &v->u.dt;
    size_t used = 0;
    if (v->type != CONF_TIME_LOCAL)
        conf_appendf(buf, n, &used, "%04d-%02d-%02d", dt->year, dt->month, dt->day);
    if (v->type == CONF_DATE_LOCAL)
        return used;
    conf_appendf(buf, n, &used, "%s%02d:%02d:%02d", v->type == CONF_TIME_LOCAL ? "" : "T", dt->hour,
                 dt->minute, dt->second);
    if (dt->frac_digits > 0) {
        int div = 1;
        for (int i = dt->frac_digits; i < 9; i++)
            div *= 10;
        conf_appendf(buf, n, &used, ".%0*d", dt->frac_digits, dt->nanosecond / div);
    }
    if (v->type == CONF_DATETIME) {
        int off = dt->offset_minutes, a = off < 0 ? -off : off;
        if (off == 0)
            conf_appendf(buf, n, &used, "Z");
        else
            conf_appendf(buf, n, &used, "%c%02d:%02d", off < 0 ? '-' : '+', a / 60, a % 60);
    }
    return used;
}
