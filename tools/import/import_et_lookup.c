/* import_et_lookup.c — how many bytes an embedding lookup reads of its tables: the rows its
 * indices name, not the table. A recommendation model's tables are gigabytes read a few rows
 * per step; a touch of the whole table would make them unplaceable anywhere but on the device.
 *
 * Everything is read from the node's own fields: the operator schema (`op_schema`) names the
 * arguments, the inputs give the tensors (numel, itemsize) and scalars, the input shapes the
 * tables' row width. What the fields do not settle is an upper bound, and the caller says so. */
#include "import_et.h"

#include <string.h>

#define MAX_ARGS     64
#define NAME_MAX_LEN 48

/* The argument names of a schema "ns::op(Type a, Type? b=1, *, Type c) -> Ret": names[i] is the
 * i-th argument's (the ET lists inputs in that order; the keyword marker `*` is no argument).
 * Returns their count, or -1 when the schema does not parse. */
static int schema_args(const char *schema, char names[][NAME_MAX_LEN], int cap)
{
    const char *p = strchr(schema, '(');
    int n = 0, depth = 0;
    if (!p)
        return -1;
    for (const char *start = ++p;; p++) {
        if (!*p)
            return -1;
        if (*p == '(' || *p == '[')
            depth++;
        else if ((*p == ')' || *p == ']') && depth > 0)
            depth--;
        else if (depth == 0 && (*p == ',' || *p == ')')) {
            const char *end = start;
            while (end < p && *end != '=')
                end++;
            while (end > start && end[-1] == ' ')
                end--;
            const char *name = end;
            while (name > start && name[-1] != ' ')
                name--;
            size_t len = (size_t)(end - name);
            if (len && !(len == 1 && *name == '*')) {
                if (n == cap || len >= NAME_MAX_LEN)
                    return -1;
                memcpy(names[n], name, len);
                names[n++][len] = 0;
            }
            if (*p == ')')
                return n;
            start = p + 1;
        }
    }
}

typedef struct args {
    char names[MAX_ARGS][NAME_MAX_LEN];
    int n;
    json_object *values, *shapes; /* the inputs' values and shapes, in schema order */
} args;

static int arg_index(const args *a, const char *name)
{
    for (int i = 0; i < a->n; i++)
        if (!strcmp(a->names[i], name))
            return i;
    return -1;
}

/* Integer input name (a scalar argument), or -1. */
static int64_t arg_int(const args *a, const char *name)
{
    int i = arg_index(a, name);
    int64_t v = -1;
    if (i < 0 || import_int_value(json_object_array_get_idx(a->values, (size_t)i), &v) != 1)
        return -1;
    return v;
}

/* Dimension d of input name's shape, or -1. */
static int64_t arg_dim(const args *a, const char *name, size_t d)
{
    int i = arg_index(a, name);
    int64_t v = -1;
    json_object *s = i < 0 || !a->shapes ? NULL : json_object_array_get_idx(a->shapes, (size_t)i);
    if (!s || !json_object_is_type(s, json_type_array) || json_object_array_length(s) <= d ||
        import_int_value(json_object_array_get_idx(s, d), &v) != 1)
        return -1;
    return v;
}

/* The ref of input name (the tensor itself, not one inside a list), or NULL. */
static ie_ref *arg_ref(const args *a, ie_ref *ref, size_t n, const char *name)
{
    int i = arg_index(a, name);
    for (size_t r = 0; i >= 0 && r < n; r++)
        if (ref[r].arg == i && !ref[r].out)
            return &ref[r];
    return NULL;
}

static uint64_t numel(const ie_ref *r)
{
    return r->moved / (uint64_t)r->itemsize;
}

/* Reads the schema, values and shapes of node o; 0, or -1 when it has none to read. */
static int read_args(json_object *o, args *a)
{
    json_object *schema = ie_field(o, "op_schema"), *in = NULL;
    if (!schema || !json_object_is_type(schema, json_type_string) ||
        (a->n = schema_args(json_object_get_string(schema), a->names, MAX_ARGS)) < 0 ||
        !json_object_object_get_ex(o, "inputs", &in) || !in)
        return -1;
    if (json_object_is_type(in, json_type_object)) { /* Chakra layout: {values, shapes, types} */
        json_object_object_get_ex(in, "values", &a->values);
        json_object_object_get_ex(in, "shapes", &a->shapes);
    } else {
        a->values = in;
        json_object_object_get_ex(o, "input_shapes", &a->shapes);
    }
    return a->values && json_object_is_type(a->values, json_type_array) ? 0 : -1;
}

/* Sets r's read to `elems` of its elements (0 stays: the whole operand). */
static void set_read(ie_ref *r, uint64_t elems)
{
    if (r && r->itemsize > 0 && elems < numel(r))
        r->read = elems * (uint64_t)r->itemsize;
}

/* Optimizer state held per weight element (momentum1_dev of the same numel as dev_weights) or
 * per row (row-wise Adagrad: one per row) is read in the same share as the weights. */
static void set_share(ie_ref *r, uint64_t elems, uint64_t of)
{
    if (r && of && numel(r) <= of)
        set_read(r, (uint64_t)(((unsigned __int128)elems * numel(r) + of - 1) / of));
}

/* FBGEMM's table-batched embedding (TBE) lookups, forward: dev_weights (or uvm_weights) hold T
 * tables one after the other (D_offsets: T + 1 entries; total_D the sum of the tables' widths,
 * max_D the widest); every index reads one row of its table. With total_D = T x max_D every
 * table is max_D wide; otherwise which index falls in which table is in the offsets' values,
 * which an ET does not record, so max_D is an upper bound. */
static ie_lookup_kind tbe(const args *a, ie_ref *ref, size_t n)
{
    ie_ref *idx = arg_ref(a, ref, n, "indices"), *d_off = arg_ref(a, ref, n, "D_offsets");
    int64_t total_d = arg_int(a, "total_D"), max_d = arg_int(a, "max_D");
    if (!idx || !d_off || numel(d_off) < 2 || total_d <= 0 || max_d <= 0)
        return IE_LOOKUP_NONE;
    uint64_t tables = numel(d_off) - 1, elems = numel(idx) * (uint64_t)max_d;
    static const char *const weights[] = {"dev_weights", "uvm_weights"};
    static const char *const states[] = {"momentum1_dev", "momentum1_uvm", "momentum2_dev",
                                         "momentum2_uvm"};
    int found = 0;
    for (size_t w = 0; w < 2; w++) {
        ie_ref *wr = arg_ref(a, ref, n, weights[w]);
        if (!wr || !numel(wr))
            continue;
        found = 1;
        set_read(wr, elems);
        for (size_t s = 0; s < sizeof states / sizeof *states; s++)
            if (!strncmp(states[s] + 10, weights[w], 3)) /* _dev with dev_, _uvm with uvm_ */
                set_share(arg_ref(a, ref, n, states[s]), elems, numel(wr));
    }
    if (!found)
        return IE_LOOKUP_NONE;
    return (uint64_t)total_d == tables * (uint64_t)max_d ? IE_LOOKUP_EXACT : IE_LOOKUP_GUESSED;
}

/* aten's lookups: `weight` [rows, D] read at numel(indices) rows (embedding_bag), or `self`
 * [rows, ...] read at numel(index) rows along dimension 0 (index_select, which aten::embedding
 * calls). */
static ie_lookup_kind aten(const args *a, ie_ref *ref, size_t n, const char *table,
                           const char *index)
{
    ie_ref *t = arg_ref(a, ref, n, table), *i = arg_ref(a, ref, n, index);
    int64_t rows = arg_dim(a, table, 0);
    if (!t || !i || rows <= 0 || numel(t) % (uint64_t)rows)
        return IE_LOOKUP_NONE;
    set_read(t, numel(i) * (numel(t) / (uint64_t)rows));
    return IE_LOOKUP_EXACT;
}

ie_lookup_kind ie_lookup(json_object *o, const char *name, ie_ref *ref, size_t n)
{
    args a = {.n = 0};
    if (!n || (strncmp(name, "fbgemm::", 8) && strncmp(name, "aten::", 6)))
        return IE_LOOKUP_NONE;
    if (read_args(o, &a))
        return IE_LOOKUP_NONE;
    if (!strncmp(name, "fbgemm::", 8))
        return tbe(&a, ref, n);
    if (!strcmp(name, "aten::embedding_bag") || !strcmp(name, "aten::_embedding_bag") ||
        !strcmp(name, "aten::_embedding_bag_forward_only"))
        return aten(&a, ref, n, "weight", "indices");
    if (!strcmp(name, "aten::index_select") && arg_int(&a, "dim") == 0)
        return aten(&a, ref, n, "self", "index");
    return IE_LOOKUP_NONE;
}
