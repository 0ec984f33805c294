/* import_json.c — streaming JSON reader of the importers: gzip or plain input through
 * zlib, one top-level value at a time through json-c's incremental tokener, with line:column
 * locations for every value handed out and every error. */
#include "import.h"
#include "util_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* Where the reader is in the document's outer structure; values themselves are json-c's. */
typedef enum jstate {
    J_START,      /* before the top-level '{' or '[' */
    J_KEY_FIRST,  /* after '{': a key or '}' */
    J_KEY,        /* after ',' in the object: a key */
    J_COLON,      /* after a key */
    J_VALUE,      /* after ':' */
    J_AFTER_MEM,  /* after a member: ',' or '}' */
    J_ELEM_FIRST, /* after '[': an element or ']' */
    J_ELEM,       /* after ',' in an array: an element */
    J_AFTER_ELEM, /* after an element: ',' or ']' */
    J_TOKEN,      /* json-c is reading a key, value or element */
    J_END,        /* after the document: only white space */
} jstate;

/* What the token being read is. */
typedef enum jtoken { T_KEY, T_VALUE, T_ELEM } jtoken;

typedef struct jreader {
    const char *path;
    import_json_cb cb;
    void *ctx;
    json_tokener *tok;
    jstate st;
    jtoken what;
    int top_array; /* the document is an array of values (key "") */
    int in_array;  /* the current member's value is an array */
    char key[256];
    size_t index;
    uint64_t line, col; /* of the next byte */
    import_loc start;   /* of the token being read */
    char *msg;
    size_t cap;
} jreader;

static void advance(jreader *r, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n')
            r->line++, r->col = 1;
        else
            r->col++;
    }
}

static int fail_here(jreader *r, const char *text)
{
    snprintf(r->msg, r->cap, "%s:%llu:%llu: error: %s", r->path, (unsigned long long)r->line,
             (unsigned long long)r->col, text);
    return -1;
}

static int is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void begin_token(jreader *r, jtoken what)
{
    json_tokener_reset(r->tok);
    r->what = what;
    r->st = J_TOKEN;
    r->start = (import_loc){r->path, r->line, r->col};
}

/* A token json-c has completed: a key to remember, or a value for the callback. */
static int finish_token(jreader *r, json_object *obj)
{
    int rc = 0;
    if (r->what == T_KEY) {
        if (!json_object_is_type(obj, json_type_string)) {
            json_object_put(obj);
            snprintf(r->msg, r->cap, "%s:%llu:%llu: error: expected a member name (a string)",
                     r->path, (unsigned long long)r->start.line, (unsigned long long)r->start.col);
            return -1;
        }
        snprintf(r->key, sizeof r->key, "%s", json_object_get_string(obj));
        r->st = J_COLON;
    } else if (r->what == T_VALUE) {
        rc = r->cb(r->ctx, r->key, SIZE_MAX, obj, &r->start, r->msg, r->cap);
        r->st = J_AFTER_MEM;
    } else {
        rc = r->cb(r->ctx, r->key, r->index++, obj, &r->start, r->msg, r->cap);
        r->st = J_AFTER_ELEM;
    }
    json_object_put(obj);
    return rc ? -1 : 0;
}

/* Feeds json-c from p; returns the bytes it took, or -1 on an error. */
static long feed_token(jreader *r, const char *p, size_t n)
{
    json_object *obj = json_tokener_parse_ex(r->tok, p, (int)n);
    enum json_tokener_error e = json_tokener_get_error(r->tok);
    size_t used = json_tokener_get_parse_end(r->tok);
    if (e == json_tokener_continue)
        return (long)n;
    advance(r, p, used);
    if (!obj && e != json_tokener_success) {
        char text[160];
        snprintf(text, sizeof text, "malformed JSON: %s", json_tokener_error_desc(e));
        return fail_here(r, text);
    }
    /* A bare null is a value too: json-c returns NULL with success for it. */
    return finish_token(r, obj) ? -1 : (long)used;
}

/* One structural character c outside a token; returns 0, or -1 on an error. */
static int punct(jreader *r, char c)
{
    switch (r->st) {
    case J_START:
        if (c == '{')
            r->st = J_KEY_FIRST;
        else if (c == '[')
            r->top_array = r->in_array = 1, r->index = 0, r->key[0] = 0, r->st = J_ELEM_FIRST;
        else
            return fail_here(r, "expected '{' or '[' at the start of the document");
        return 0;
    case J_KEY_FIRST:
    case J_KEY:
        if (c == '}' && r->st == J_KEY_FIRST)
            r->st = J_END;
        else if (c == '"')
            return begin_token(r, T_KEY), 1;
        else
            return fail_here(r, "expected a member name");
        return 0;
    case J_COLON:
        if (c != ':')
            return fail_here(r, "expected ':' after a member name");
        r->st = J_VALUE;
        return 0;
    case J_VALUE:
        if (c == '[') {
            r->in_array = 1, r->index = 0, r->st = J_ELEM_FIRST;
            return 0;
        }
        return begin_token(r, T_VALUE), 1;
    case J_ELEM_FIRST:
    case J_ELEM:
        if (c == ']' && r->st == J_ELEM_FIRST)
            return r->in_array = 0, r->st = r->top_array ? J_END : J_AFTER_MEM, 0;
        return begin_token(r, T_ELEM), 1;
    case J_AFTER_ELEM:
        if (c == ',')
            r->st = J_ELEM;
        else if (c == ']')
            r->in_array = 0, r->st = r->top_array ? J_END : J_AFTER_MEM;
        else
            return fail_here(r, "expected ',' or ']' after an array element");
        return 0;
    case J_AFTER_MEM:
        if (c == ',')
            r->st = J_KEY;
        else if (c == '}')
            r->st = J_END;
        else
            return fail_here(r, "expected ',' or '}' after a member");
        return 0;
    case J_END:
        return fail_here(r, "unexpected text after the end of the document");
    case J_TOKEN:
        break;
    }
    return -1;
}

/* Consumes buf[0..n); returns 0, or -1 on an error. */
static int consume(jreader *r, const char *buf, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (r->st == J_TOKEN) {
            long used = feed_token(r, buf + i, n - i);
            if (used < 0)
                return -1;
            if (r->st == J_TOKEN) /* json-c wants more: it took the whole rest */
                advance(r, buf + i, n - i);
            i += (size_t)used;
            continue;
        }
        if (is_ws(buf[i])) {
            advance(r, buf + i, 1);
            i++;
            continue;
        }
        int rc = punct(r, buf[i]);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            advance(r, buf + i, 1);
            i++;
        }
    }
    return 0;
}

/* End of input: the document must be complete (a value inside it always ends before a
 * ',', ']' or '}', so a token still open here is cut off). */
static int finish(jreader *r)
{
    if (r->st == J_END)
        return 0;
    return fail_here(r, r->st == J_START ? "empty document (no JSON value)"
                                         : "truncated JSON: the file ends inside the document");
}

static int read_stream(jreader *r, gzFile gz)
{
    static const size_t chunk = 1 << 16;
    char *buf = malloc(chunk);
    if (!buf) {
        snprintf(r->msg, r->cap, "%s: error: out of memory", r->path);
        return -1;
    }
    int rc = 0;
    for (;;) {
        int got = gzread(gz, buf, (unsigned)chunk);
        if (got > 0 && (rc = consume(r, buf, (size_t)got)) != 0)
            break;
        int zerr;
        const char *text = gzerror(gz, &zerr);
        /* zlib reports a gzip stream cut short as Z_BUF_ERROR at the end of the input. */
        if (got < 0 || (got == 0 && (!gzeof(gz) || zerr != Z_OK))) {
            snprintf(r->msg, r->cap, "%s:%llu:%llu: error: %s gzip data (%s)", r->path,
                     (unsigned long long)r->line, (unsigned long long)r->col,
                     zerr == Z_BUF_ERROR ? "truncated" : "damaged", text ? text : "zlib error");
            rc = -1;
            break;
        }
        if (got == 0) {
            rc = finish(r);
            break;
        }
    }
    free(buf);
    return rc;
}

int import_json_read(const char *path, import_json_cb cb, void *ctx, char *msg, size_t cap)
{
    char why[128] = "out of memory";
    FILE *f = util_file_open(path, "rb", why, sizeof why);
    int fd = f ? dup(fileno(f)) : -1;
    gzFile gz = fd >= 0 ? gzdopen(fd, "rb") : NULL;
    if (f)
        fclose(f);
    if (!gz && fd >= 0)
        close(fd);
    if (!gz) {
        snprintf(msg, cap, "%s: error: cannot open: %s", path, why);
        return -1;
    }
    jreader r = {.path = path, .cb = cb, .ctx = ctx, .line = 1, .col = 1, .msg = msg, .cap = cap};
    r.tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
    int rc;
    if (!r.tok) {
        snprintf(msg, cap, "%s: error: out of memory", path);
        rc = -1;
    } else {
        /* Strict JSON, one value at a time: the text after it is the reader's. */
        json_tokener_set_flags(r.tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS);
        rc = read_stream(&r, gz);
        json_tokener_free(r.tok);
    }
    gzclose(gz);
    return rc;
}
