/* conf_string.c — basic, literal and multi-line strings, escapes, and simple keys. */
#include "conf_internal.h"

#include <string.h>

static int hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* At "\u" or "\U": decodes n hex digits into UTF-8. */
static int unicode_escape(conf_parser *p, int n)
{
    int line = p->line, col = p->col;
    uint32_t cp = 0;
    for (int i = 0; i < n; i++) {
        int h = hex_value(conf_peek(p, 2 + (size_t)i));
        if (h < 0)
            return conf_fail(p, line, col, "\\%c needs exactly %d hexadecimal digits",
                             n == 4 ? 'u' : 'U', n);
        cp = cp * 16 + (uint32_t)h;
    }
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        return conf_fail(p, line, col, "\\%c%0*X is not a Unicode scalar value", n == 4 ? 'u' : 'U',
                         n, cp);
    char utf8[4];
    conf_advance(p, 2 + (size_t)n);
    return conf_scratch_put(p, utf8, conf_utf8_encode(cp, utf8));
}

/* At a backslash: decodes one escape sequence. */
static int escape(conf_parser *p)
{
    static const char from[] = "btnfr\"\\", to[] = "\b\t\n\f\r\"\\";
    int c = conf_peek(p, 1);
    if (c == 'u' || c == 'U')
        return unicode_escape(p, c == 'u' ? 4 : 8);
    const char *hit = c > 0 ? strchr(from, c) : NULL;
    if (hit == NULL) {
        if (c > 0x20 && c < 0x7F)
            return conf_fail(p, p->line, p->col, "invalid escape sequence '\\%c'", c);
        return conf_fail(p, p->line, p->col, "invalid escape sequence");
    }
    conf_advance(p, 2);
    return conf_scratch_put(p, &to[hit - from], 1);
}

/* In a multi-line basic string at a backslash: true when it ends the line ("line ending
   backslash"), which trims it and all whitespace and newlines after it. */
static bool line_ending_backslash(conf_parser *p)
{
    size_t k = 1;
    for (int c = conf_peek(p, k); c == ' ' || c == '\t'; c = conf_peek(p, k))
        k++;
    int c = conf_peek(p, k);
    if (c != '\n' && !(c == '\r' && conf_peek(p, k + 1) == '\n'))
        return false;
    conf_advance(p, k);
    for (c = conf_peek(p, 0); c == ' ' || c == '\t' || conf_newline_len(p) > 0; c = conf_peek(p, 0))
        conf_advance(p, 1);
    return true;
}

/* One raw character of string content, after the checks every string kind shares. */
static int content_byte(conf_parser *p, int c)
{
    if (conf_is_control(c))
        return conf_fail(p, p->line, p->col, "control character U+%04X must be escaped", c);
    char b = (char)c;
    conf_advance(p, 1);
    return conf_scratch_put(p, &b, 1);
}

/* Single-line basic (quote '"') or literal (quote '\'') string, cursor after the quote. */
static int single_line(conf_parser *p, char quote, int line, int col)
{
    for (;;) {
        int c = conf_peek(p, 0);
        if (c < 0 || c == '\n' || (c == '\r' && conf_peek(p, 1) == '\n'))
            return conf_fail(p, line, col, "unterminated string");
        if (c == quote) {
            conf_advance(p, 1);
            return 0;
        }
        int rc = c == '\\' && quote == '"' ? escape(p) : content_byte(p, c);
        if (rc < 0)
            return -1;
    }
}

/* At a run of quote characters in a multi-line string: 1 when it closes the string (up to
   two quotes before the closing three belong to the content), 0 when it does not. */
static int closing_run(conf_parser *p, char quote)
{
    size_t run = 0;
    while (conf_peek(p, run) == quote)
        run++;
    if (run < 3)
        return 0;
    if (run > 5)
        return conf_fail(p, p->line, p->col, "too many quotes at the end of a multi-line string");
    if (conf_scratch_put(p, p->src + p->pos, run - 3) < 0)
        return -1;
    conf_advance(p, run);
    return 1;
}

/* Multi-line string, cursor after the opening three quotes. Newlines are stored as LF. */
static int multi_line(conf_parser *p, char quote, int line, int col)
{
    int nl = conf_newline_len(p);
    conf_advance(p, (size_t)nl); /* a newline right after the delimiter is trimmed */
    for (;;) {
        int c = conf_peek(p, 0), rc;
        if (c < 0)
            return conf_fail(p, line, col, "unterminated multi-line string");
        if (c == quote && (rc = closing_run(p, quote)) != 0)
            return rc > 0 ? 0 : -1;
        if ((nl = conf_newline_len(p)) > 0) {
            conf_advance(p, (size_t)nl);
            rc = conf_scratch_put(p, "\n", 1);
        } else if (c == '\\' && quote == '"')
            rc = line_ending_backslash(p) ? 0 : escape(p);
        else
            rc = content_byte(p, c);
        if (rc < 0)
            return -1;
    }
}

/* Contract in conf_internal.h: 0, or -1 after recording the parse error. */
int conf_parse_string(conf_parser *p, bool allow_multiline, char **out, size_t *len)
{
    int line = p->line, col = p->col;
    char quote = (char)conf_peek(p, 0);
    bool multi = conf_peek(p, 1) == quote && conf_peek(p, 2) == quote;
    if (multi && !allow_multiline)
        return conf_fail(p, line, col, "a key cannot be a multi-line string");
    p->scratch_len = 0;
    conf_advance(p, multi ? 3 : 1);
    int rc = multi ? multi_line(p, quote, line, col) : single_line(p, quote, line, col);
    if (rc < 0 || conf_scratch_put(p, "", 1) < 0)
        return -1;
    *len = p->scratch_len - 1;
    *out = conf_arena_alloc(&p->doc->arena, p->scratch_len);
    if (*out == NULL)
        return conf_fail_oom(p);
    memcpy(*out, p->scratch, p->scratch_len);
    return 0;
}

static bool is_bare(int c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

/* Contract in conf_internal.h: 0, or -1 after recording the parse error. */
int conf_parse_simple_key(conf_parser *p, conf_key *key)
{
    key->line = p->line;
    key->col = p->col;
    int c = conf_peek(p, 0);
    if (c == '"' || c == '\'') {
        char *name;
        int rc = conf_parse_string(p, false, &name, &key->len);
        key->name = name;
        return rc;
    }
    size_t n = 0;
    while (is_bare(conf_peek(p, n)))
        n++;
    if (n == 0)
        return conf_fail(p, p->line, p->col, "expected a key");
    char *name = conf_arena_alloc(&p->doc->arena, n + 1);
    if (name == NULL)
        return conf_fail_oom(p);
    memcpy(name, p->src + p->pos, n);
    name[n] = '\0';
    key->name = name;
    key->len = n;
    conf_advance(p, n);
    return 0;
}
