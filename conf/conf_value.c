/* conf_value.c — the document tree: values, tables with a hash index, arrays, accessors. */
#include "conf_internal.h"

#include <stdlib.h>
#include <string.h>

#define INDEX_FROM 8 /* tables with fewer entries are searched linearly */

/* Contract in conf_internal.h: NULL when out of memory. */
conf_value *conf_value_new(conf_doc *doc, conf_type type, int depth, int line, int col)
{
    conf_value *v = conf_arena_alloc(&doc->arena, sizeof *v);
    if (v == NULL)
        return NULL;
    memset(v, 0, sizeof *v);
    v->type = type;
    v->depth = depth;
    v->line = line;
    v->col = col;
    return v;
}

static uint32_t hash(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static bool key_is(const conf_entry *e, const char *name, size_t len)
{
    return e->key.len == len && memcmp(e->key.name, name, len) == 0;
}

/* Contract in conf_internal.h: never fails; NULL when absent or t is not a table. */
conf_value *conf_table_find(const conf_value *t, const char *name, size_t len)
{
    if (t == NULL || t->type != CONF_TABLE)
        return NULL;
    if (t->u.tab.index == NULL) {
        for (size_t i = 0; i < t->u.tab.count; i++)
            if (key_is(&t->u.tab.items[i], name, len))
                return t->u.tab.items[i].value;
        return NULL;
    }
    size_t mask = t->u.tab.index_cap - 1;
    for (size_t s = hash(name, len) & mask;; s = (s + 1) & mask) {
        uint32_t slot = t->u.tab.index[s];
        if (slot == 0)
            return NULL;
        if (key_is(&t->u.tab.items[slot - 1], name, len))
            return t->u.tab.items[slot - 1].value;
    }
}

static void index_insert(conf_value *t, size_t entry)
{
    const conf_key *k = &t->u.tab.items[entry].key;
    size_t mask = t->u.tab.index_cap - 1;
    size_t s = hash(k->name, k->len) & mask;
    while (t->u.tab.index[s] != 0)
        s = (s + 1) & mask;
    t->u.tab.index[s] = (uint32_t)entry + 1;
}

/* Rebuilds the index so that it stays at most half full. */
static int index_rebuild(conf_doc *doc, conf_value *t, size_t count)
{
    size_t cap = 16;
    while (cap < count * 2)
        cap *= 2;
    uint32_t *index = conf_arena_alloc(&doc->arena, cap * sizeof *index);
    if (index == NULL || count > UINT32_MAX - 1)
        return -1;
    memset(index, 0, cap * sizeof *index);
    t->u.tab.index = index;
    t->u.tab.index_cap = cap;
    for (size_t i = 0; i < t->u.tab.count; i++)
        index_insert(t, i);
    return 0;
}

/* Contract in conf_internal.h: -1 when out of memory. */
int conf_table_put(conf_doc *doc, conf_value *t, const conf_key *key, conf_value *v)
{
    if (t->u.tab.count == t->u.tab.cap) {
        size_t cap = t->u.tab.cap ? t->u.tab.cap * 2 : 4;
        conf_entry *items = conf_arena_grow(&doc->arena, t->u.tab.items,
                                            t->u.tab.count * sizeof *items, cap * sizeof *items);
        if (items == NULL)
            return -1;
        t->u.tab.items = items;
        t->u.tab.cap = cap;
    }
    size_t n = t->u.tab.count++;
    t->u.tab.items[n] = (conf_entry){.key = *key, .value = v};
    if (t->u.tab.count < INDEX_FROM)
        return 0;
    if (t->u.tab.index == NULL || t->u.tab.count * 2 > t->u.tab.index_cap)
        return index_rebuild(doc, t, t->u.tab.count);
    index_insert(t, n);
    return 0;
}

/* Contract in conf_internal.h: -1 when out of memory. */
int conf_array_push(conf_doc *doc, conf_value *a, conf_value *v)
{
    if (a->u.arr.count == a->u.arr.cap) {
        size_t cap = a->u.arr.cap ? a->u.arr.cap * 2 : 4;
        conf_value **items = conf_arena_grow(&doc->arena, a->u.arr.items,
                                             a->u.arr.count * sizeof *items, cap * sizeof *items);
        if (items == NULL)
            return -1;
        a->u.arr.items = items;
        a->u.arr.cap = cap;
    }
    a->u.arr.items[a->u.arr.count++] = v;
    return 0;
}

/* Contract in conf.h: never fails. */
conf_type conf_value_type(const conf_value *v)
{
    return v->type;
}

/* Contract in conf.h: never fails; 1-based line of the value's first character. */
int conf_value_line(const conf_value *v)
{
    return v->line;
}

/* Contract in conf.h: never fails; 1-based column (code points) of the value's first character. */
int conf_value_col(const conf_value *v)
{
    return v->col;
}

/* Contract in conf.h: never fails; 0 for a value that is not a table. */
size_t conf_table_size(const conf_value *t)
{
    return t->type == CONF_TABLE ? t->u.tab.count : 0;
}

/* Contract in conf.h: never fails; NULL (key untouched) for a non-table or i out of range. */
const conf_value *conf_table_entry(const conf_value *t, size_t i, conf_key *key)
{
    if (t->type != CONF_TABLE || i >= t->u.tab.count)
        return NULL;
    if (key != NULL)
        *key = t->u.tab.items[i].key;
    return t->u.tab.items[i].value;
}

/* Contract in conf.h: never fails; NULL when t is not a table or has no such key. */
const conf_value *conf_table_get(const conf_value *t, const char *name, size_t len)
{
    return conf_table_find(t, name, len);
}

/* Contract in conf.h: never fails; 0 for a value that is not an array. */
size_t conf_array_size(const conf_value *a)
{
    return a->type == CONF_ARRAY ? a->u.arr.count : 0;
}

/* Contract in conf.h: never fails; NULL for a non-array or i out of range. */
const conf_value *conf_array_at(const conf_value *a, size_t i)
{
    return a->type == CONF_ARRAY && i < a->u.arr.count ? a->u.arr.items[i] : NULL;
}

/* Contract in conf.h: never fails; NULL (len untouched) for a value that is not a string. */
const char *conf_string(const conf_value *v, size_t *len)
{
    if (v->type != CONF_STRING)
        return NULL;
    if (len != NULL)
        *len = v->u.str.len;
    return v->u.str.ptr;
}

/* Contract in conf.h: never fails; 0 for a value that is not an integer. */
int64_t conf_integer(const conf_value *v)
{
    return v->type == CONF_INTEGER ? v->u.i : 0;
}

/* Contract in conf.h: never fails; 0.0 for a value that is not a float. */
double conf_float(const conf_value *v)
{
    return v->type == CONF_FLOAT ? v->u.f : 0.0;
}

/* Contract in conf.h: never fails; false for a value that is not a boolean. */
bool conf_bool(const conf_value *v)
{
    return v->type == CONF_BOOL && v->u.b;
}

/* Contract in conf.h: never fails; NULL for a value that is not a date-time kind. */
const conf_datetime *conf_datetime_of(const conf_value *v)
{
    return v->type >= CONF_DATETIME ? &v->u.dt : NULL;
}

/* Contract in conf.h: never fails. */
const char *conf_type_name(conf_type t)
{
    static const char *const names[] = {
        [CONF_TABLE] = "table",
        [CONF_ARRAY] = "array",
        [CONF_STRING] = "string",
        [CONF_INTEGER] = "integer",
        [CONF_FLOAT] = "float",
        [CONF_BOOL] = "boolean",
        [CONF_DATETIME] = "offset date-time",
        [CONF_DATETIME_LOCAL] = "local date-time",
        [CONF_DATE_LOCAL] = "local date",
        [CONF_TIME_LOCAL] = "local time",
    };
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "value";
}

/* Contract in conf.h: NULL is a no-op. */
void conf_doc_free(conf_doc *doc)
{
    if (doc == NULL)
        return;
    conf_arena_release(&doc->arena);
    free(doc);
}

/* Contract in conf.h: never fails; doc must come from conf_parse. */
const conf_value *conf_doc_root(const conf_doc *doc)
{
    return doc->root;
}
