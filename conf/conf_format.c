/* conf_format.c — small text helpers shared by conf/: bounded appendf, TOML quoting, ASCII case. */
#include "conf_internal.h"

#include <stdio.h>

/* Contract in conf_internal.h: *used counts the full length even when buf is too small. */
void conf_appendf(char *buf, size_t n, size_t *used, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(*used < n ? buf + *used : NULL, *used < n ? n - *used : 0, fmt, ap);
    va_end(ap);
    if (k > 0)
        *used += (size_t)k;
}

/* Contract in conf_internal.h: control characters become \uXXXX (or their short escape). */
void conf_append_quoted(char *buf, size_t n, size_t *used, const char *s, size_t len)
{
    conf_appendf(buf, n, used, "\"");
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            conf_appendf(buf, n, used, "\\%c", c);
        else if (c == '\n')
            conf_appendf(buf, n, used, "\\n");
        else if (c == '\t')
            conf_appendf(buf, n, used, "\\t");
        else if (c < 0x20 || c == 0x7F)
            conf_appendf(buf, n, used, "\\u%04X", c);
        else
            conf_appendf(buf, n, used, "%c", c);
    }
    conf_appendf(buf, n, used, "\"");
}

/* Contract in conf_internal.h: ASCII only, whatever the process locale says. */
bool conf_ascii_ieq(const char *a, const char *b, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char x = a[i] >= 'A' && a[i] <= 'Z' ? (char)(a[i] - 'A' + 'a') : a[i];
        char y = b[i] >= 'A' && b[i] <= 'Z' ? (char)(b[i] - 'A' + 'a') : b[i];
        if (x != y)
            return false;
    }
    return true;
}

/* Contract in conf_internal.h: never fails; size must be at least 1. */
void conf_excerpt(const char *text, size_t len, char *out, size_t size)
{
    size_t n = len < size - 1 ? len : size - 1;
    for (size_t i = 0; i < n; i++)
        out[i] = text[i] >= 0x20 && text[i] < 0x7F ? text[i] : '?';
    out[n] = '\0';
}
