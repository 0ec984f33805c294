/* conf_scan.c — the parser's cursor: bytes, positions, whitespace, comments, line ends, errors. */
#include "conf_internal.h"

#include <stdlib.h>
#include <string.h>

/* Contract in conf_internal.h: never fails; -1 past the end. */
int conf_peek(const conf_parser *p, size_t k)
{
    return k < p->len - p->pos ? (unsigned char)p->src[p->pos + k] : -1;
}

/* Contract in conf_internal.h: columns count code points, not bytes. */
void conf_advance(conf_parser *p, size_t n)
{
    for (size_t i = 0; i < n && p->pos < p->len; i++) {
        unsigned char b = (unsigned char)p->src[p->pos++];
        if (b == '\n') {
            p->line++;
            p->col = 1;
        } else if ((b & 0xC0) != 0x80) {
            p->col++;
        }
    }
}

/* Contract in conf_internal.h: never fails. */
bool conf_is_control(int c)
{
    return (c >= 0 && c < 0x20 && c != '\t') || c == 0x7F;
}

/* Contract in conf_internal.h: never fails. */
int conf_newline_len(const conf_parser *p)
{
    int c = conf_peek(p, 0);
    if (c == '\n')
        return 1;
    return c == '\r' && conf_peek(p, 1) == '\n' ? 2 : 0;
}

/* Contract in conf_internal.h: never fails. */
void conf_skip_ws(conf_parser *p)
{
    for (int c = conf_peek(p, 0); c == ' ' || c == '\t'; c = conf_peek(p, 0))
        conf_advance(p, 1);
}

/* At '#': skips to the end of the line, rejecting control characters. */
static int skip_comment(conf_parser *p)
{
    conf_advance(p, 1);
    for (int c = conf_peek(p, 0); c >= 0 && conf_newline_len(p) == 0; c = conf_peek(p, 0)) {
        if (conf_is_control(c))
            return conf_fail(p, p->line, p->col, "control character U+%04X in a comment", c);
        conf_advance(p, 1);
    }
    return 0;
}

/* Contract in conf_internal.h: 0, or -1 after recording a bad comment. */
int conf_skip_blank(conf_parser *p)
{
    for (;;) {
        conf_skip_ws(p);
        int nl = conf_newline_len(p);
        if (nl > 0)
            conf_advance(p, (size_t)nl);
        else if (conf_peek(p, 0) == '#') {
            if (skip_comment(p) < 0)
                return -1;
        } else
            return 0;
    }
}

/* Contract in conf_internal.h: 0, or -1 after recording the parse error. */
int conf_end_of_line(conf_parser *p, const char *what)
{
    conf_skip_ws(p);
    if (conf_peek(p, 0) == '#' && skip_comment(p) < 0)
        return -1;
    int c = conf_peek(p, 0);
    if (c < 0)
        return 0;
    int nl = conf_newline_len(p);
    if (nl > 0) {
        conf_advance(p, (size_t)nl);
        return 0;
    }
    if (c == '\r')
        return conf_fail(p, p->line, p->col, "carriage return without a line feed");
    return conf_fail(p, p->line, p->col, "expected the end of the line after %s", what);
}

/* Contract in conf_internal.h: only the first error of a parse is recorded. */
int conf_fail(conf_parser *p, int line, int col, const char *fmt, ...)
{
    if (p->failed)
        return -1;
    p->failed = true;
    va_list ap;
    va_start(ap, fmt);
    conf_diag_vadd(p->diags, CONF_ERROR, p->name, line, col, fmt, ap);
    va_end(ap);
    return -1;
}

/* Contract in conf_internal.h: always -1, after recording the error. */
int conf_fail_oom(conf_parser *p)
{
    return conf_fail(p, p->line, p->col, "out of memory (the document may use at most %zu bytes)",
                     p->doc->arena.limit);
}

/* Contract in conf_internal.h: the buffer never grows beyond the input's size plus slack. */
int conf_scratch_put(conf_parser *p, const char *s, size_t n)
{
    if (p->scratch_cap - p->scratch_len < n + 1) {
        size_t cap = p->scratch_cap ? p->scratch_cap : 64;
        while (cap - p->scratch_len < n + 1)
            cap *= 2;
        char *buf = realloc(p->scratch, cap);
        if (buf == NULL)
            return conf_fail_oom(p);
        p->scratch = buf;
        p->scratch_cap = cap;
    }
    memcpy(p->scratch + p->scratch_len, s, n);
    p->scratch_len += n;
    return 0;
}
