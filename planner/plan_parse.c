/* planner/plan_parse.c — locale-independent numbers and sizes, and the text model reader.
 * The reader takes untrusted bytes (it is fuzzed): every token is bounded, every count is
 * checked against the model limits, and every error names FILE:LINE. */
#include "plan_internal.h"

#include "base_array.h"
#include "conf_bytes.h"

#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest number token accepted; longer ones are errors, not truncations. */
#define NUM_MAX 64

/* Length of the syntactically valid decimal number at the start of s[0..len): sign, digits with
 * an optional fraction, optional exponent. 0 when there is none. */
static size_t scan_decimal(const char *s, size_t len)
{
    size_t i = 0, digits = 0;
    if (i < len && (s[i] == '+' || s[i] == '-'))
        i++;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
        digits++;
    if (i < len && s[i] == '.')
        for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++)
            digits++;
    if (digits == 0)
        return 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1, ed = 0;
        if (j < len && (s[j] == '+' || s[j] == '-'))
            j++;
        for (; j < len && s[j] >= '0' && s[j] <= '9'; j++)
            ed++;
        if (ed)
            i = j;
    }
    return i;
}

/* strtod in the "C" locale on a validated token of at most NUM_MAX bytes. */
static bool convert_c(const char *s, size_t len, double *out)
{
    char buf[NUM_MAX + 1];
    if (len > NUM_MAX)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (!c)
        return false;
    char *end;
    double v = strtod_l(buf, &end, c);
    freelocale(c);
    if (end != buf + len || !isfinite(v))
        return false;
    *out = v;
    return true;
}

bool plan_parse_double(const char *s, size_t len, double *out)
{
    if (len == 0 || scan_decimal(s, len) != len)
        return false;
    return convert_c(s, len, out);
}

bool plan_parse_i64(const char *s, size_t len, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < len && (s[i] == '+' || s[i] == '-'))
        neg = s[i++] == '-';
    if (i == len)
        return false;
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (lim - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

/* Sizes are read by the one size grammar shared with conf/ (conf/conf_bytes.h). */
plan_err plan_parse_size_n(const char *s, size_t len, uint64_t *out)
{
    return conf_bytes_parse(s, len, out, NULL, 0) == CONF_BYTES_OK ? PLAN_OK : PLAN_ERR_PARSE;
}

plan_err plan_parse_size(const char *s, uint64_t *out)
{
    if (!s)
        return PLAN_ERR_PARSE;
    return plan_parse_size_n(s, strlen(s), out);
}

/* ---- the model reader --------------------------------------------------------------------- */

typedef struct tok {
    const char *s;
    size_t len;
} tok;

/* One idle line: operation, microseconds, line. */
struct idle_stmt {
    int64_t op;
    double us;
    size_t line;
};

typedef struct reader {
    const char *fname;
    char *msg;
    size_t cap;
    plan_model *m;
    size_t line;
    size_t hw_line;
    size_t both_line;   /* of the link_both line, 0 if none */
    size_t *alloc_line; /* line of each allocation, for errors found at the end */
    size_t nline, cline;
    size_t *copy_line; /* line of each copy */
    size_t ncopy_line, ccopy_line;
    struct idle_stmt *idles; /* the idle lines, applied once the operations are known */
    size_t nidles, cidles;
    int32_t *tbuf;  /* touches of the current line */
    uint64_t *rbuf; /* their read bytes (0: the whole allocation) */
    size_t tcap;
    bool any_read; /* a touch of the current line gives bytes */
} reader;

static plan_err rerr(reader *r, size_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static plan_err rerr(reader *r, size_t line, const char *fmt, ...)
{
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    plan_msg(r->msg, r->cap, "%s:%zu: error: %s", r->fname ? r->fname : "<model>", line, text);
    return PLAN_ERR_PARSE;
}

/* Printable, bounded copy of a token for messages. */
static const char *show(tok t, char buf[40])
{
    size_t n = t.len > 32 ? 32 : t.len, k = 0;
    for (size_t i = 0; i < n; i++)
        buf[k++] = (t.s[i] >= 0x20 && t.s[i] < 0x7f) ? t.s[i] : '?';
    if (t.len > n)
        buf[k++] = '.', buf[k++] = '.', buf[k++] = '.';
    buf[k] = '\0';
    return buf;
}

/* Next whitespace-separated token of [*p, end) before any comment; false at the end. */
static bool next_tok(const char **p, const char *end, tok *t)
{
    const char *s = *p;
    while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
        s++;
    if (s == end || *s == '#') {
        *p = end;
        return false;
    }
    const char *e = s;
    while (e < end && *e != ' ' && *e != '\t' && *e != '\r' && *e != '#')
        e++;
    *t = (tok){s, (size_t)(e - s)};
    *p = e;
    return true;
}

static bool tok_is(tok t, const char *word)
{
    return t.len == strlen(word) && memcmp(t.s, word, t.len) == 0;
}

/* An integer in [lo, hi] or an error naming what. */
static plan_err int_arg(reader *r, tok t, int64_t lo, int64_t hi, const char *what, int64_t *v)
{
    char b[40];
    if (!plan_parse_i64(t.s, t.len, v) || *v < lo || *v > hi)
        return rerr(r, r->line, "%s must be an integer in [%lld, %lld], got '%s'", what,
                    (long long)lo, (long long)hi, show(t, b));
    return PLAN_OK;
}

static plan_err dbl_arg(reader *r, tok t, double lo, double hi, const char *what, double *v)
{
    char b[40];
    if (!plan_parse_double(t.s, t.len, v) || !(*v >= lo && *v <= hi))
        return rerr(r, r->line, "%s must be a number in [%g, %g], got '%s'", what, lo, hi,
                    show(t, b));
    return PLAN_OK;
}

static plan_err read_hw(reader *r, const tok *a, size_t na)
{
    if (r->hw_line)
        return rerr(r, r->line, "second 'hw' line (first at line %zu)", r->hw_line);
    if (na != 4)
        return rerr(r, r->line, "'hw' takes 4 values: H2D_GBPS D2H_GBPS DUPLEX(0|1) REMAP_US");
    plan_hw *hw = &r->m->hw;
    int64_t duplex;
    plan_err e;
    if ((e = dbl_arg(r, a[0], 1e-6, 1e6, "H2D_GBPS", &hw->h2d_gbps)) ||
        (e = dbl_arg(r, a[1], 1e-6, 1e6, "D2H_GBPS", &hw->d2h_gbps)) ||
        (e = int_arg(r, a[2], 0, 1, "DUPLEX", &duplex)) ||
        (e = dbl_arg(r, a[3], 0, 1e9, "REMAP_US", &hw->remap_us)))
        return e;
    hw->duplex = (int)duplex;
    r->hw_line = r->line;
    return PLAN_OK;
}

/* link_both H2D_GBPS D2H_GBPS: checked against the hw line once the file is read. */
static plan_err read_link_both(reader *r, const tok *a, size_t na)
{
    if (r->both_line)
        return rerr(r, r->line, "second 'link_both' line (first at line %zu)", r->both_line);
    if (na != 2)
        return rerr(r, r->line, "'link_both' takes 2 values: H2D_GBPS D2H_GBPS");
    plan_hw *hw = &r->m->hw;
    plan_err e;
    if ((e = dbl_arg(r, a[0], 1e-6, 1e6, "H2D_GBPS", &hw->both_h2d_gbps)) ||
        (e = dbl_arg(r, a[1], 1e-6, 1e6, "D2H_GBPS", &hw->both_d2h_gbps)))
        return e;
    r->both_line = r->line;
    return PLAN_OK;
}

static plan_err read_op(reader *r, const tok *a, size_t na)
{
    if (na < 1 || na > 2)
        return rerr(r, r->line, "'op' takes DURATION_US [STREAM]");
    double dur;
    int64_t stream = 0;
    plan_err e;
    if ((e = dbl_arg(r, a[0], 0, PLAN_MAX_DURATION, "DURATION_US", &dur)))
        return e;
    if (na == 2 && (e = int_arg(r, a[1], 0, UINT32_MAX, "STREAM", &stream)))
        return e;
    e = plan_model_add_op(r->m, dur, (uint32_t)stream);
    if (e == PLAN_ERR_LIMIT)
        return rerr(r, r->line, "more than %d operations", PLAN_MAX_OPS);
    return e;
}

/* idle OP US: OP is checked against the operations at the end, where US is set. */
static plan_err read_idle(reader *r, const tok *a, size_t na)
{
    if (na != 2)
        return rerr(r, r->line, "'idle' takes OP US");
    struct idle_stmt st = {.line = r->line};
    plan_err e;
    if ((e = int_arg(r, a[0], 0, PLAN_MAX_OPS - 1, "OP", &st.op)) ||
        (e = dbl_arg(r, a[1], 0, PLAN_MAX_DURATION, "US", &st.us)))
        return e;
    if (base_array_grow((void **)&r->idles, &r->cidles, r->nidles + 1, sizeof(*r->idles)))
        return PLAN_ERR_NOMEM;
    r->idles[r->nidles++] = st;
    return PLAN_OK;
}

/* Sets the idle lines' times on their operations: an operation beyond the last or named twice
   is an error at its line. */
static plan_err apply_idles(reader *r)
{
    for (size_t i = 0; i < r->nidles; i++) {
        const struct idle_stmt *st = &r->idles[i];
        if ((size_t)st->op >= r->m->nops)
            return rerr(r, st->line, "OP %lld is beyond the last operation (%zu)",
                        (long long)st->op, r->m->nops - 1);
        if (r->m->ops[st->op].idle_us < 0)
            return rerr(r, st->line, "operation %lld has an idle line already", (long long)st->op);
        r->m->ops[st->op].idle_us = -1; /* marks it taken until the times are set */
    }
    for (size_t i = 0; i < r->nidles; i++)
        r->m->ops[r->idles[i].op].idle_us = r->idles[i].us;
    return PLAN_OK;
}

/* copy AFTER DIR BYTES: DIR is h2d or d2h; AFTER is checked against the operations at the end. */
static plan_err read_copy(reader *r, const tok *a, size_t na)
{
    char b[40];
    if (na != 3)
        return rerr(r, r->line, "'copy' takes AFTER DIR(h2d|d2h) BYTES");
    int64_t after;
    uint64_t bytes;
    plan_err e;
    if ((e = int_arg(r, a[0], 0, PLAN_MAX_OPS - 1, "AFTER", &after)))
        return e;
    if (!tok_is(a[1], "h2d") && !tok_is(a[1], "d2h"))
        return rerr(r, r->line, "DIR must be h2d or d2h, got '%s'", show(a[1], b));
    if (plan_parse_size_n(a[2].s, a[2].len, &bytes) || bytes < 1 || bytes > PLAN_MAX_BYTES)
        return rerr(r, r->line, "BYTES must be a size in [1, 2^60], got '%s'", show(a[2], b));
    if (base_array_grow((void **)&r->copy_line, &r->ccopy_line, r->ncopy_line + 1,
                        sizeof(*r->copy_line)))
        return PLAN_ERR_NOMEM;
    r->copy_line[r->ncopy_line++] = r->line;
    e = plan_model_add_copy(r->m, (int32_t)after, tok_is(a[1], "h2d"), bytes);
    if (e == PLAN_ERR_LIMIT)
        return rerr(r, r->line, "more than %d copies", PLAN_MAX_OPS);
    return e;
}

/* BYTES or BYTES/MOVED (what the device holds, and what a move copies when less). */
static plan_err alloc_head(reader *r, const tok *a, uint64_t *bytes, uint64_t *moved,
                           int64_t *birth, int64_t *death)
{
    char b[40];
    plan_err e;
    const char *slash = memchr(a[0].s, '/', a[0].len);
    tok held = {a[0].s, slash ? (size_t)(slash - a[0].s) : a[0].len};
    if (plan_parse_size_n(held.s, held.len, bytes) || *bytes < 1 || *bytes > PLAN_MAX_BYTES)
        return rerr(r, r->line, "BYTES must be a size in [1, 2^60], got '%s'", show(held, b));
    *moved = *bytes;
    if (slash) {
        tok mv = {slash + 1, a[0].len - held.len - 1};
        if (plan_parse_size_n(mv.s, mv.len, moved) || *moved < 1 || *moved > *bytes)
            return rerr(r, r->line,
                        "BYTES/MOVED: MOVED must be a size in [1, %llu] (BYTES), got '%s'",
                        (unsigned long long)*bytes, show(a[0], b));
    }
    if ((e = int_arg(r, a[1], -1, PLAN_MAX_OPS - 1, "BIRTH", birth)) ||
        (e = int_arg(r, a[2], -1, PLAN_MAX_OPS - 1, "DEATH", death)))
        return e;
    if (*birth >= 0 && *death >= 0 && *birth > *death)
        return rerr(r, r->line, "BIRTH %lld is after DEATH %lld", (long long)*birth,
                    (long long)*death);
    return PLAN_OK;
}

static plan_err remember_line(reader *r)
{
    if (base_array_grow((void **)&r->alloc_line, &r->cline, r->nline + 1, sizeof(*r->alloc_line)))
        return PLAN_ERR_NOMEM;
    r->alloc_line[r->nline++] = r->line;
    return PLAN_OK;
}

/* One TOUCH token, OP or OP@SIZE, of an allocation of bytes live in [birth, death], into
   r->tbuf[nt] and r->rbuf[nt] (0 when no SIZE is given). */
static plan_err touch_arg(reader *r, tok t, uint64_t bytes, int64_t birth, int64_t death, size_t nt)
{
    const char *at = memchr(t.s, '@', t.len);
    tok op = {t.s, at ? (size_t)(at - t.s) : t.len};
    int64_t v;
    plan_err e;
    if ((e = int_arg(r, op, birth < 0 ? 0 : birth, death < 0 ? PLAN_MAX_OPS - 1 : death, "TOUCH",
                     &v)))
        return e;
    uint64_t read = 0;
    if (at) {
        char b[40];
        tok sz = {at + 1, t.len - op.len - 1};
        if (plan_parse_size_n(sz.s, sz.len, &read) || read < 1 || read > bytes)
            return rerr(r, r->line,
                        "TOUCH@SIZE: SIZE must be a size in [1, %llu] (the allocation's bytes), "
                        "got '%s'",
                        (unsigned long long)bytes, show(t, b));
        r->any_read = true;
    }
    r->tbuf[nt] = (int32_t)v;
    r->rbuf[nt] = read;
    return PLAN_OK;
}

/* Room for one more touch in r->tbuf and r->rbuf, which hold nt. */
static plan_err touch_room(reader *r, size_t nt)
{
    size_t ct = r->tcap, cr = r->tcap; /* both grow alike; tcap holds what both hold */
    if (base_array_grow((void **)&r->tbuf, &ct, nt + 1, sizeof(*r->tbuf)) ||
        base_array_grow((void **)&r->rbuf, &cr, nt + 1, sizeof(*r->rbuf)))
        return PLAN_ERR_NOMEM;
    r->tcap = ct;
    return PLAN_OK;
}

/* alloc BYTES BIRTH DEATH TOUCH...: the touches follow the three first tokens on the line. */
static plan_err read_alloc(reader *r, const tok *a, size_t na, const char *rest, const char *end)
{
    if (na < 3)
        return rerr(r, r->line, "'alloc' takes BYTES BIRTH DEATH TOUCH...");
    uint64_t bytes, moved;
    int64_t birth, death;
    plan_err e;
    if ((e = alloc_head(r, a, &bytes, &moved, &birth, &death)))
        return e;
    size_t nt = 0;
    r->any_read = false;
    for (size_t i = 3; i < na; i++)
        if ((e = touch_arg(r, a[i], bytes, birth, death, nt++)))
            return e;
    tok x;
    while (next_tok(&rest, end, &x))
        if ((e = touch_room(r, nt)) || (e = touch_arg(r, x, bytes, birth, death, nt++)))
            return e;
    if ((e = remember_line(r)))
        return e;
    e = plan_model_add_alloc_reads(r->m, bytes, (int32_t)birth, (int32_t)death, r->tbuf,
                                   r->any_read ? r->rbuf : NULL, nt);
    if (e == PLAN_ERR_LIMIT)
        return rerr(r, r->line, "too many allocations or touches");
    if (!e && moved != bytes)
        e = plan_model_set_moved(r->m, r->m->nallocs - 1, moved);
    return e;
}

#define LINE_TOKS 8

/* One line [s, end): keyword and up to LINE_TOKS tokens; alloc reads its own tail. */
static plan_err read_line(reader *r, const char *s, const char *end)
{
    for (const char *c = s; c < end; c++)
        if ((unsigned char)*c < 0x20 && *c != '\t' && *c != '\r')
            return rerr(r, r->line, "control character 0x%02x", (unsigned)(unsigned char)*c);
    tok kw, a[LINE_TOKS];
    if (!next_tok(&s, end, &kw))
        return PLAN_OK;
    size_t na = 0;
    bool is_alloc = tok_is(kw, "alloc");
    while (na < LINE_TOKS && next_tok(&s, end, &a[na]))
        na++;
    if (is_alloc)
        return read_alloc(r, a, na, s, end);
    tok extra;
    if (na == LINE_TOKS && next_tok(&s, end, &extra))
        na++;
    if (tok_is(kw, "hw"))
        return read_hw(r, a, na);
    if (tok_is(kw, "op"))
        return read_op(r, a, na);
    if (tok_is(kw, "link_both"))
        return read_link_both(r, a, na);
    if (tok_is(kw, "copy"))
        return read_copy(r, a, na);
    if (tok_is(kw, "idle"))
        return read_idle(r, a, na);
    char b[40];
    return rerr(r, r->line,
                "unknown keyword '%s' (expected hw, link_both, op, idle, alloc or copy)",
                show(kw, b));
}

/* Checks that need the whole file: the hw line, operations, allocation ranges. */
static plan_err read_finish(reader *r)
{
    size_t last = r->line ? r->line : 1;
    if (!r->hw_line)
        return rerr(r, last, "missing 'hw' line");
    if (r->m->nops == 0)
        return rerr(r, last, "model has no operations");
    plan_err e = apply_idles(r);
    if (e)
        return e;
    for (size_t i = 0; i < r->m->ncopies; i++)
        if ((size_t)r->m->copies[i].after >= r->m->nops)
            return rerr(r, r->copy_line[i], "AFTER %d is beyond the last operation (%zu)",
                        r->m->copies[i].after, r->m->nops - 1);
    size_t bad;
    char text[200];
    if (r->both_line && !plan_link_check(&r->m->hw, text, sizeof(text)))
        return rerr(r, r->both_line, "%s", text);
    if (plan_model_check(r->m, &bad, text, sizeof(text)) == PLAN_OK)
        return PLAN_OK;
    size_t line = bad < r->nline ? r->alloc_line[bad] : last;
    return rerr(r, line, "%s", text);
}

plan_err plan_model_parse(const char *buf, size_t len, const char *fname, plan_model *m, char *msg,
                          size_t cap)
{
    reader r = {.fname = fname, .msg = msg, .cap = cap, .m = m, .tcap = LINE_TOKS};
    plan_msg(msg, cap, "%s", "");
    r.tbuf = malloc(r.tcap * sizeof(*r.tbuf));
    r.rbuf = malloc(r.tcap * sizeof(*r.rbuf));
    plan_err e = r.tbuf && r.rbuf ? PLAN_OK : PLAN_ERR_NOMEM;
    const char *p = buf, *end = buf + len;
    while (e == PLAN_OK && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        r.line++;
        e = read_line(&r, p, le);
        p = nl ? nl + 1 : end;
    }
    if (e == PLAN_OK)
        e = read_finish(&r);
    if (e == PLAN_ERR_NOMEM)
        plan_msg(msg, cap, "%s: error: out of memory", fname ? fname : "<model>");
    free(r.tbuf);
    free(r.rbuf);
    free(r.alloc_line);
    free(r.copy_line);
    free(r.idles);
    if (e != PLAN_OK) {
        plan_model_free(m);
        return e == PLAN_ERR_NOMEM ? e : PLAN_ERR_PARSE;
    }
    return PLAN_OK;
}
