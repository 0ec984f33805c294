/* report_pickle.c — the pickle writer of report_pickle.h (protocol 2, no memo). */
#include "report_pickle.h"

#include "report.h"

#include <string.h>

enum {
    OP_MARK = '(',
    OP_STOP = '.',
    OP_BININT = 'J',
    OP_NONE = 'N',
    OP_BINUNICODE = 'X',
    OP_BINFLOAT = 'G',
    OP_EMPTY_LIST = ']',
    OP_APPENDS = 'e',
    OP_EMPTY_DICT = '}',
    OP_SETITEMS = 'u',
    OP_PROTO = 0x80,
    OP_TUPLE2 = 0x86,
    OP_NEWTRUE = 0x88,
    OP_NEWFALSE = 0x89,
    OP_LONG1 = 0x8a,
};

static const unsigned char REPLACEMENT[3] = {0xef, 0xbf, 0xbd}; /* U+FFFD */

static void put(pk *p, int byte)
{
    fputc(byte, p->out);
}

static void put_le(pk *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        put(p, (int)(v >> (8 * i) & 0xff));
}

/* Contract in report_pickle.h. */
void pk_start(pk *p, FILE *out)
{
    *p = (pk){.out = out};
    put(p, OP_PROTO);
    put(p, 2);
}

/* Contract in report_pickle.h. */
int pk_finish(pk *p)
{
    put(p, OP_STOP);
    return p->error || p->depth != 0 ? -1 : 0;
}

/* Contract in report_pickle.h. */
void pk_int(pk *p, int64_t v)
{
    if (v >= INT32_MIN && v <= INT32_MAX) {
        put(p, OP_BININT);
        put_le(p, (uint64_t)v, 4);
        return;
    }
    /* the shortest two's complement whose top bit is the sign: 5..8 bytes here */
    int n = 8;
    while (n > 1) {
        int64_t lo = -((int64_t)1 << (8 * (n - 1) - 1)), hi = ((int64_t)1 << (8 * (n - 1) - 1)) - 1;
        if (v < lo || v > hi)
            break;
        n--;
    }
    put(p, OP_LONG1);
    put(p, n);
    put_le(p, (uint64_t)v, n);
}

/* Contract in report_pickle.h. */
void pk_uint(pk *p, uint64_t v)
{
    if (v <= INT64_MAX) {
        pk_int(p, (int64_t)v);
        return;
    }
    put(p, OP_LONG1); /* 2^63 and above: eight bytes and a zero sign byte */
    put(p, 9);
    put_le(p, v, 8);
    put(p, 0);
}

/* Contract in report_pickle.h. */
void pk_float(pk *p, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    put(p, OP_BINFLOAT);
    for (int i = 7; i >= 0; i--) /* big-endian */
        put(p, (int)(bits >> (8 * i) & 0xff));
}

/* Contract in report_pickle.h. */
void pk_bool(pk *p, int v)
{
    put(p, v ? OP_NEWTRUE : OP_NEWFALSE);
}

/* Contract in report_pickle.h. */
void pk_none(pk *p)
{
    put(p, OP_NONE);
}

/* The length of s as written: valid sequences as they are, U+FFFD for each byte that starts no
   valid sequence; written too when write is nonzero. */
static size_t utf8_pieces(pk *p, const char *s, int write)
{
    size_t len = 0;
    for (const unsigned char *c = (const unsigned char *)s; *c;) {
        int n = *c < 0x80 ? 1 : report_utf8_len(c);
        const unsigned char *piece = n ? c : REPLACEMENT;
        size_t plen = n ? (size_t)n : sizeof REPLACEMENT;
        if (write)
            fwrite(piece, 1, plen, p->out);
        len += plen;
        c += n ? n : 1;
    }
    return len;
}

/* Contract in report_pickle.h. */
void pk_str(pk *p, const char *s)
{
    size_t len = utf8_pieces(p, s, 0);
    if (len > UINT32_MAX) { /* not in a trace: texts are cut at 8192 bytes */
        p->error = 1;
        s = "";
        len = 0;
    }
    put(p, OP_BINUNICODE);
    put_le(p, len, 4);
    utf8_pieces(p, s, 1);
}

/* Contract in report_pickle.h. */
void pk_tuple2(pk *p)
{
    put(p, OP_TUPLE2);
}

static void open_container(pk *p, int is_dict)
{
    put(p, is_dict ? OP_EMPTY_DICT : OP_EMPTY_LIST);
    if (p->depth == PK_MAX_DEPTH) {
        p->error = 1;
        return;
    }
    p->is_dict[p->depth] = is_dict;
    p->batch[p->depth] = 0;
    p->depth++;
}

/* Contract in report_pickle.h. */
void pk_list(pk *p)
{
    open_container(p, 0);
}

/* Contract in report_pickle.h. */
void pk_dict(pk *p)
{
    open_container(p, 1);
}

/* Closes the open batch of the innermost container, if any. */
static void flush(pk *p)
{
    size_t *b = &p->batch[p->depth - 1];
    if (*b > 0)
        put(p, p->is_dict[p->depth - 1] ? OP_SETITEMS : OP_APPENDS);
    *b = 0;
}

/* The start of an element of the innermost container: a MARK opens each batch. */
static void element(pk *p, int is_dict)
{
    if (p->depth == 0 || p->is_dict[p->depth - 1] != is_dict) {
        p->error = 1;
        return;
    }
    if (p->batch[p->depth - 1] == PK_BATCH)
        flush(p);
    if (p->batch[p->depth - 1]++ == 0)
        put(p, OP_MARK);
}

/* Contract in report_pickle.h. */
void pk_item(pk *p)
{
    element(p, 0);
}

/* Contract in report_pickle.h. */
void pk_item_dict(pk *p)
{
    pk_item(p);
    pk_dict(p);
}

/* Contract in report_pickle.h. */
void pk_key(pk *p, const char *key)
{
    element(p, 1);
    pk_str(p, key);
}

/* Contract in report_pickle.h. */
void pk_end(pk *p)
{
    if (p->depth == 0) {
        p->error = 1;
        return;
    }
    flush(p);
    p->depth--;
}

/* Contract in report_pickle.h. */
void pk_key_int(pk *p, const char *key, int64_t v)
{
    pk_key(p, key);
    pk_int(p, v);
}

/* Contract in report_pickle.h. */
void pk_key_uint(pk *p, const char *key, uint64_t v)
{
    pk_key(p, key);
    pk_uint(p, v);
}

/* Contract in report_pickle.h. */
void pk_key_str(pk *p, const char *key, const char *s)
{
    pk_key(p, key);
    pk_str(p, s);
}

/* Contract in report_pickle.h. */
void pk_key_bool(pk *p, const char *key, int v)
{
    pk_key(p, key);
    pk_bool(p, v);
}
