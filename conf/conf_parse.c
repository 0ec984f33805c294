/* conf_parse.c — TOML document structure: key/values, [tables], [[arrays of tables]], values. */
#include "conf_internal.h"

#include <stdlib.h>
#include <string.h>

static int parse_keyval(conf_parser *p, conf_value *table);

/* An error about key k; fmt has "%.*s" for the key then "%s%s" for "a "/"an " and the type
   of e. */
static void key_error(conf_parser *p, const conf_key *k, const char *fmt, const conf_value *e)
{
    const char *type = conf_type_name(e->type);
    const char *article = strchr("aeiou", type[0]) != NULL ? "an " : "a ";
    conf_fail(p, k->line, k->col, fmt, (int)k->len, k->name, article, type);
}

static int too_deep(conf_parser *p, int line, int col)
{
    return conf_fail(p, line, col, "nesting deeper than %d levels", CONF_MAX_DEPTH);
}

/* A new value stored in t under key k (or appended when t is an array); NULL after an error. */
static conf_value *new_child(conf_parser *p, conf_value *t, const conf_key *k, conf_type type,
                             unsigned flags)
{
    if (t->depth + 1 > CONF_MAX_DEPTH) {
        too_deep(p, k->line, k->col);
        return NULL;
    }
    conf_value *n = conf_value_new(p->doc, type, t->depth + 1, k->line, k->col);
    int rc = n == NULL               ? -1
             : t->type == CONF_ARRAY ? conf_array_push(p->doc, t, n)
                                     : conf_table_put(p->doc, t, k, n);
    if (rc < 0) {
        conf_fail_oom(p);
        return NULL;
    }
    n->flags = flags;
    return n;
}

/* Key k, not the last of a dotted key in a key/value: the table it names, created if needed.
   Only tables made by dotted keys (or implied by a header) may be extended this way. */
static conf_value *dotted_table(conf_parser *p, conf_value *t, const conf_key *k)
{
    conf_value *e = conf_table_find(t, k->name, k->len);
    if (e == NULL)
        return new_child(p, t, k, CONF_TABLE, CONF_T_DOTTED);
    if (e->type == CONF_TABLE && (e->flags & CONF_T_INLINE))
        conf_fail(p, k->line, k->col, "cannot add keys to the inline table '%.*s'", (int)k->len,
                  k->name);
    else if (e->type == CONF_TABLE && (e->flags & CONF_T_DEFINED))
        conf_fail(p, k->line, k->col,
                  "cannot add to table '%.*s' with a dotted key: it has a [header]", (int)k->len,
                  k->name);
    else if (e->type != CONF_TABLE)
        key_error(p, k, "'%.*s' is already defined as %s%s, not a table", e);
    else {
        e->flags |= CONF_T_DOTTED;
        return e;
    }
    return NULL;
}

/* Key k, not the last of a [header]: the table it names (the last one of an array of tables). */
static conf_value *header_table(conf_parser *p, conf_value *t, const conf_key *k)
{
    conf_value *e = conf_table_find(t, k->name, k->len);
    if (e == NULL)
        return new_child(p, t, k, CONF_TABLE, CONF_T_IMPLICIT);
    if (e->type == CONF_ARRAY && (e->flags & CONF_A_TABLES))
        return e->u.arr.items[e->u.arr.count - 1];
    if (e->type == CONF_TABLE && !(e->flags & CONF_T_INLINE))
        return e;
    if (e->type == CONF_TABLE)
        conf_fail(p, k->line, k->col, "cannot extend the inline table '%.*s'", (int)k->len,
                  k->name);
    else
        key_error(p, k, "'%.*s' is already defined as %s%s, not a table", e);
    return NULL;
}

/* The last key of [header]: defines a table once (one implied by an earlier header may be). */
static conf_value *define_table(conf_parser *p, conf_value *t, const conf_key *k)
{
    conf_value *e = conf_table_find(t, k->name, k->len);
    if (e == NULL)
        return new_child(p, t, k, CONF_TABLE, CONF_T_DEFINED);
    if (e->type == CONF_TABLE && e->flags == CONF_T_IMPLICIT) {
        e->flags = CONF_T_DEFINED;
        return e;
    }
    bool dotted =
        e->type == CONF_TABLE && (e->flags & CONF_T_DOTTED) && !(e->flags & CONF_T_DEFINED);
    key_error(p, k,
              dotted ? "'%.*s' is already defined as %s%s by dotted keys"
                     : "'%.*s' is already defined as %s%s",
              e);
    return NULL;
}

/* The last key of [[header]]: appends a new table to the array of tables. */
static conf_value *append_table(conf_parser *p, conf_value *t, const conf_key *k)
{
    conf_value *a = conf_table_find(t, k->name, k->len);
    if (a == NULL)
        a = new_child(p, t, k, CONF_ARRAY, CONF_A_TABLES);
    else if (!(a->type == CONF_ARRAY && (a->flags & CONF_A_TABLES))) {
        key_error(p, k, "'%.*s' is already defined as %s%s, not an array of tables", a);
        return NULL;
    }
    return a == NULL ? NULL : new_child(p, a, k, CONF_TABLE, CONF_T_DEFINED);
}

/* At '[': a [table] or [[array of tables]] header; returns the table it opens or NULL. */
static conf_value *parse_header(conf_parser *p, conf_value *root)
{
    bool array = conf_peek(p, 1) == '[';
    conf_advance(p, array ? 2 : 1);
    conf_value *t = root;
    for (;;) {
        conf_key k;
        conf_skip_ws(p);
        if (conf_parse_simple_key(p, &k) < 0)
            return NULL;
        conf_skip_ws(p);
        if (conf_peek(p, 0) == '.') {
            conf_advance(p, 1);
            if ((t = header_table(p, t, &k)) == NULL)
                return NULL;
            continue;
        }
        if (conf_peek(p, 0) != ']' || (array && conf_peek(p, 1) != ']')) {
            conf_fail(p, p->line, p->col, "expected '%s' to close the header", array ? "]]" : "]");
            return NULL;
        }
        conf_advance(p, array ? 2 : 1);
        return array ? append_table(p, t, &k) : define_table(p, t, &k);
    }
}

/* At '[' of an array value. */
static int parse_array(conf_parser *p, conf_value *a)
{
    conf_advance(p, 1);
    for (;;) {
        if (conf_skip_blank(p) < 0)
            return -1;
        if (conf_peek(p, 0) == ']')
            break;
        if (conf_peek(p, 0) < 0)
            return conf_fail(p, a->line, a->col, "unterminated array");
        conf_value *item;
        if (conf_parse_value(p, a->depth + 1, &item) < 0)
            return -1;
        if (conf_array_push(p->doc, a, item) < 0)
            return conf_fail_oom(p);
        if (conf_skip_blank(p) < 0)
            return -1;
        if (conf_peek(p, 0) == ',')
            conf_advance(p, 1);
        else if (conf_peek(p, 0) != ']')
            return conf_peek(p, 0) < 0 ? conf_fail(p, a->line, a->col, "unterminated array")
                                       : conf_fail(p, p->line, p->col, "expected ',' or ']'");
    }
    conf_advance(p, 1);
    return 0;
}

/* At '{' of an inline table: key/values on one line, separated by commas, no trailing comma. */
static int parse_inline_table(conf_parser *p, conf_value *t)
{
    conf_advance(p, 1);
    conf_skip_ws(p);
    if (conf_peek(p, 0) == '}') {
        conf_advance(p, 1);
        t->flags = CONF_T_INLINE;
        return 0;
    }
    for (;;) {
        conf_skip_ws(p);
        if (parse_keyval(p, t) < 0)
            return -1;
        conf_skip_ws(p);
        int c = conf_peek(p, 0);
        conf_advance(p, c == ',' || c == '}' ? 1 : 0);
        if (c == '}')
            break;
        if (c < 0)
            return conf_fail(p, t->line, t->col, "unterminated inline table");
        if (c == '\n' || c == '\r')
            return conf_fail(p, p->line, p->col, "an inline table must be on one line");
        if (c != ',')
            return conf_fail(p, p->line, p->col, "expected ',' or '}'");
    }
    t->flags = CONF_T_INLINE;
    return 0;
}

static int parse_word(conf_parser *p, conf_value *v, const char *word, bool b)
{
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->src + p->pos, word, n) != 0)
        return conf_fail(p, p->line, p->col, "expected a value");
    v->type = CONF_BOOL;
    v->u.b = b;
    conf_advance(p, n);
    return 0;
}

static int parse_scalar(conf_parser *p, conf_value *v, int c)
{
    if (c == '"' || c == '\'') {
        v->type = CONF_STRING;
        return conf_parse_string(p, true, &v->u.str.ptr, &v->u.str.len);
    }
    if (c == 't' || c == 'f')
        return parse_word(p, v, c == 't' ? "true" : "false", c == 't');
    if (c >= '0' && c <= '9' && conf_at_datetime(p))
        return conf_parse_datetime(p, v);
    if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == 'i' || c == 'n')
        return conf_parse_number(p, v);
    return conf_fail(p, p->line, p->col, "expected a value");
}

/* Contract in conf_internal.h: 0 with *out set, or -1 after recording the parse error. */
int conf_parse_value(conf_parser *p, int depth, conf_value **out)
{
    if (depth > CONF_MAX_DEPTH)
        return too_deep(p, p->line, p->col);
    int c = conf_peek(p, 0);
    conf_type type = c == '[' ? CONF_ARRAY : CONF_TABLE;
    conf_value *v = conf_value_new(p->doc, type, depth, p->line, p->col);
    if (v == NULL)
        return conf_fail_oom(p);
    *out = v;
    if (c == '[')
        return parse_array(p, v);
    if (c == '{')
        return parse_inline_table(p, v);
    return parse_scalar(p, v, c);
}

/* key = value, into table (the current table, or an inline table being parsed). */
static int parse_keyval(conf_parser *p, conf_value *table)
{
    conf_value *t = table;
    conf_key k;
    for (;;) {
        if (conf_parse_simple_key(p, &k) < 0)
            return -1;
        conf_skip_ws(p);
        if (conf_peek(p, 0) != '.')
            break;
        conf_advance(p, 1);
        conf_skip_ws(p);
        if ((t = dotted_table(p, t, &k)) == NULL)
            return -1;
    }
    if (conf_peek(p, 0) != '=')
        return conf_fail(p, p->line, p->col, "expected '=' after a key");
    conf_advance(p, 1);
    conf_skip_ws(p);
    conf_value *e = conf_table_find(t, k.name, k.len), *v;
    if (e != NULL) {
        key_error(p, &k, "'%.*s' is already defined as %s%s", e);
        return -1;
    }
    if (conf_parse_value(p, t->depth + 1, &v) < 0)
        return -1;
    return conf_table_put(p->doc, t, &k, v) < 0 ? conf_fail_oom(p) : 0;
}

/* One line of the document; *table is the table key/values go to. */
static int parse_line(conf_parser *p, conf_value **table)
{
    conf_skip_ws(p);
    int c = conf_peek(p, 0);
    if (c == '[') {
        *table = parse_header(p, p->doc->root);
        return *table == NULL ? -1 : conf_end_of_line(p, "a table header");
    }
    if (c < 0 || c == '#' || c == '\n' || c == '\r')
        return conf_end_of_line(p, "a blank line");
    if (parse_keyval(p, *table) < 0)
        return -1;
    return conf_end_of_line(p, "a value");
}

static int parse_document(conf_parser *p)
{
    size_t bad = conf_utf8_check(p->src, p->len);
    if (bad < p->len) {
        int line, col;
        conf_utf8_position(p->src, bad, &line, &col);
        return conf_fail(p, line, col, "invalid UTF-8 byte 0x%02X", (unsigned char)p->src[bad]);
    }
    if (p->len >= 3 && memcmp(p->src, "\xEF\xBB\xBF", 3) == 0) {
        p->pos = 3; /* a byte order mark is not a column */
    }
    conf_value *table = p->doc->root;
    while (p->pos < p->len)
        if (parse_line(p, &table) < 0)
            return -1;
    return 0;
}

static conf_doc *doc_new(size_t max_bytes)
{
    conf_doc *doc = calloc(1, sizeof *doc);
    if (doc == NULL)
        return NULL;
    doc->arena.limit = max_bytes;
    doc->root = conf_value_new(doc, CONF_TABLE, 0, 1, 1);
    if (doc->root == NULL) {
        conf_doc_free(doc);
        return NULL;
    }
    doc->root->flags = CONF_T_DEFINED;
    return doc;
}

/* Contract in conf.h: NULL after exactly one error. */
conf_doc *conf_parse_limited(const char *text, size_t len, const char *name, size_t max_bytes,
                             conf_diags *diags)
{
    conf_parser p = {.src = text, .len = len, .line = 1, .col = 1, .name = name, .diags = diags};
    if (len > max_bytes || len > INT32_MAX) {
        conf_diag_add(diags, CONF_ERROR, name, 0, 0, "document larger than %zu bytes",
                      max_bytes < INT32_MAX ? max_bytes : (size_t)INT32_MAX);
        return NULL;
    }
    p.doc = doc_new(max_bytes);
    if (p.doc == NULL) {
        conf_diag_add(diags, CONF_ERROR, name, 0, 0, "out of memory");
        return NULL;
    }
    int rc = parse_document(&p);
    free(p.scratch);
    if (p.c_locale != (locale_t)0)
        freelocale(p.c_locale);
    if (rc == 0)
        return p.doc;
    conf_doc_free(p.doc);
    return NULL;
}

/* Contract in conf.h: NULL after exactly one error. */
conf_doc *conf_parse(const char *text, size_t len, const char *name, conf_diags *diags)
{
    return conf_parse_limited(text, len, name, CONF_MAX_DOC_BYTES, diags);
}
