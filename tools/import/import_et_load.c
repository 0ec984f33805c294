/* import_et_load.c — reads a PyTorch execution trace (ExecutionTraceObserver's JSON): its
 * nodes, and of their inputs and outputs the GPU tensors, each given as [tensor_id, storage_id,
 * offset, numel, itemsize, device] (possibly inside lists). Missing or mistyped fields are
 * errors at the node's line and column.
 *
 * Two layouts are in the wild, and the schema string does not say which fields a file has, so
 * each field is looked for where either puts it: the older one (schema 1.0.1) keeps a node's
 * fields at its top level, with `parent`, and its operands as lists (`inputs`, `outputs`); the
 * Chakra one (1.0.3-chakra.*, 1.1.x-chakra.*) keeps `rf_id`, `tid`, `seq_id`, `fw_parent` and
 * the like in an `attrs` list of {name, type, value}, the parent as `ctrl_deps`, and operands as
 * {values, shapes, types[, strides]}. */
#include "import_et.h"

#include "base_array.h"

#include <stdlib.h>
#include <string.h>

typedef struct nv {
    ie_trace *e;
    json_object *o;
    const import_loc *loc;
    size_t index;
    char *msg;
    size_t cap;
} nv;

/* The value of the attribute named name in the node's `attrs` list (Chakra layout), or NULL. */
static json_object *attr(json_object *o, const char *name)
{
    json_object *a = NULL;
    if (!json_object_object_get_ex(o, "attrs", &a) || !json_object_is_type(a, json_type_array))
        return NULL;
    for (size_t i = 0; i < json_object_array_length(a); i++) {
        json_object *e = json_object_array_get_idx(a, i), *val = NULL;
        const char *n = NULL;
        if (import_get_str(e, "name", &n) == 1 && !strcmp(n, name) &&
            json_object_object_get_ex(e, "value", &val))
            return val;
    }
    return NULL;
}

/* Field of the node as an integer, at its top level or else among its attrs: 1 found, 0 absent,
 * -1 mistyped (import_get_int's returns). */
static int get_int(json_object *o, const char *field, int64_t *out)
{
    int got = import_get_int(o, field, out);
    return got ? got : import_int_value(attr(o, field), out);
}

json_object *ie_field(json_object *o, const char *name)
{
    json_object *v = NULL;
    if (json_object_object_get_ex(o, name, &v) && v)
        return v;
    return attr(o, name);
}

static int need_int(const nv *v, const char *field, int64_t *out, int opt)
{
    int got = get_int(v->o, field, out);
    if (got == 1 || (got == 0 && opt))
        return 0;
    return import_fail(v->msg, v->cap, v->loc, "nodes", v->index,
                       got ? "'%s' must be an integer" : "node has no '%s'", field);
}

/* A tensor operand is an array of five integers and a device string; anything else in the
 * operand lists (scalars, lists of ints) is not memory. Lists are searched 4 deep. */
static int is_tensor(json_object *a)
{
    if (!json_object_is_type(a, json_type_array) || json_object_array_length(a) != 6)
        return 0;
    for (size_t i = 0; i < 5; i++)
        if (!json_object_is_type(json_object_array_get_idx(a, i), json_type_int))
            return 0;
    return json_object_is_type(json_object_array_get_idx(a, 5), json_type_string);
}

static int add_ref(const nv *v, json_object *a, int out, int32_t arg)
{
    const char *dev = json_object_get_string(json_object_array_get_idx(a, 5));
    int64_t f[5];
    for (size_t i = 0; i < 5; i++)
        f[i] = json_object_get_int64(json_object_array_get_idx(a, i));
    if (strncmp(dev, "cuda", 4))
        return 0; /* host memory */
    /* offset is the storage offset in elements (aten's storage_offset), as numel is. */
    if (f[2] < 0 || f[3] < 0 || f[4] <= 0 || f[2] > (INT64_C(1) << 50) ||
        f[3] > (INT64_C(1) << 50) || f[4] > 64)
        return import_fail(v->msg, v->cap, v->loc, "nodes", v->index,
                           "tensor [%lld, %lld, %lld, %lld, %lld, \"%s\"]: offset, numel or "
                           "itemsize out of range",
                           (long long)f[0], (long long)f[1], (long long)f[2], (long long)f[3],
                           (long long)f[4], dev);
    ie_trace *e = v->e;
    if (base_array_grow((void **)&e->ref, &e->cap_ref, e->nref + 1, sizeof(ie_ref)))
        return import_fail(v->msg, v->cap, v->loc, "", 0, "out of memory");
    e->ref[e->nref++] = (ie_ref){.storage = f[1],
                                 .bytes = (uint64_t)(f[2] + f[3]) * (uint64_t)f[4],
                                 .moved = (uint64_t)f[3] * (uint64_t)f[4],
                                 .arg = out ? -1 : arg,
                                 .itemsize = (int32_t)f[4],
                                 .out = out};
    return 0;
}

/* arg: the operand's position in the node's list (depth 1), -1 above it. */
static int scan(const nv *v, json_object *a, int out, int depth, int32_t arg)
{
    if (is_tensor(a))
        return add_ref(v, a, out, arg);
    if (!json_object_is_type(a, json_type_array) || depth >= 4)
        return 0;
    for (size_t i = 0; i < json_object_array_length(a); i++)
        if (scan(v, json_object_array_get_idx(a, i), out, depth + 1, depth ? arg : (int32_t)i))
            return -1;
    return 0;
}

static int operands(const nv *v, const char *field, int out)
{
    json_object *a = NULL;
    if (!json_object_object_get_ex(v->o, field, &a) || !a)
        return 0;
    json_object *values = NULL; /* Chakra layout: {values, shapes, types} */
    if (json_object_is_type(a, json_type_object) &&
        (!json_object_object_get_ex(a, "values", &values) || !values))
        return 0;
    if (values)
        a = values;
    if (!json_object_is_type(a, json_type_array))
        return import_fail(v->msg, v->cap, v->loc, "nodes", v->index,
                           "'%s' must be an array (or an object with a 'values' array)", field);
    return scan(v, a, out, 0, -1);
}

static int node(nv *v)
{
    ie_node n = {.rf = -1, .seq = -1, .kineto = -1, .parent_ix = -1};
    const char *name = NULL;
    if (!json_object_is_type(v->o, json_type_object))
        return import_fail(v->msg, v->cap, v->loc, "nodes", v->index, "a node must be an object");
    if (import_get_str(v->o, "name", &name) != 1)
        return import_fail(v->msg, v->cap, v->loc, "nodes", v->index, "node needs a string 'name'");
    if (need_int(v, "id", &n.id, 0) || need_int(v, "rf_id", &n.rf, 1) ||
        need_int(v, "parent", &n.parent, 1) || need_int(v, "tid", &n.tid, 0) ||
        (n.parent == 0 && need_int(v, "ctrl_deps", &n.parent, 1)) ||
        need_int(v, "seq_id", &n.seq, 1) || need_int(v, "fw_parent", &n.fw_parent, 1))
        return -1;
    ie_trace *e = v->e;
    n.ref_first = e->nref;
    if (operands(v, "inputs", 0) || operands(v, "outputs", 1))
        return -1;
    n.nref = e->nref - n.ref_first;
    n.lookup = ie_lookup(v->o, name, e->ref + n.ref_first, n.nref);
    if (base_array_grow((void **)&e->node, &e->cap_node, e->nnode + 1, sizeof(ie_node)) ||
        !(n.name = strdup(name)))
        return import_fail(v->msg, v->cap, v->loc, "", 0, "out of memory");
    e->node[e->nnode++] = n;
    return 0;
}

static int on_value(void *ctx, const char *key, size_t index, json_object *val,
                    const import_loc *loc, char *msg, size_t cap)
{
    ie_trace *e = ctx;
    if (strcmp(key, "nodes"))
        return 0;
    if (index == SIZE_MAX)
        return import_fail(msg, cap, loc, key, index, "must be an array of nodes");
    e->seen_nodes = 1;
    nv v = {e, val, loc, index, msg, cap};
    return node(&v);
}

/* rf_id order is the order operators started in (record function ids count up); a trace
 * without them keeps its node ids' order. */
static int cmp_node(const void *a, const void *b)
{
    const ie_node *x = a, *y = b;
    int64_t kx = x->rf >= 0 ? x->rf : x->id, ky = y->rf >= 0 ? y->rf : y->id;
    return kx < ky ? -1 : kx > ky;
}

/* Parent indices and subtree ends (a child starts after its parent: a larger rf_id). */
static int link(ie_trace *e)
{
    import_key *ids = malloc(e->nnode * sizeof(*ids) + 1);
    if (!ids)
        return -1;
    for (size_t i = 0; i < e->nnode; i++) {
        ids[i] = (import_key){e->node[i].id, i};
        e->node[i].sub_end = e->node[i].rf >= 0 ? e->node[i].rf : e->node[i].id;
    }
    qsort(ids, e->nnode, sizeof(*ids), import_key_cmp);
    for (size_t i = 0; i < e->nnode; i++) {
        import_key q = {e->node[i].parent, 0};
        import_key *p = bsearch(&q, ids, e->nnode, sizeof(*ids), import_key_cmp);
        e->node[i].parent_ix = p && p->idx != i ? (long)p->idx : -1;
    }
    free(ids);
    /* Children come after parents in rf order, so one backward pass carries each subtree's end
     * up; the depth bound stops a parent cycle in a damaged trace. */
    for (size_t i = e->nnode; i-- > 0;) {
        long p = e->node[i].parent_ix;
        for (int d = 0; p >= 0 && d < 256; d++, p = e->node[p].parent_ix)
            if (e->node[p].sub_end < e->node[i].sub_end)
                e->node[p].sub_end = e->node[i].sub_end;
            else
                break;
    }
    return 0;
}

int ie_load(const char *path, ie_trace *e, char *msg, size_t cap)
{
    e->path = path;
    if (import_json_read(path, on_value, e, msg, cap))
        return -1;
    if (!e->seen_nodes) {
        snprintf(msg, cap, "%s:1:1: error: no nodes (not an execution trace?)", path);
        return -1;
    }
    qsort(e->node, e->nnode, sizeof(ie_node), cmp_node);
    if (link(e)) {
        snprintf(msg, cap, "%s: error: out of memory", path);
        return -1;
    }
    return 0;
}

int ie_keep(ie_trace *e, int64_t lo, int64_t hi)
{
    ie_node *node = malloc(e->nnode * sizeof(*node) + 1);
    ie_ref *ref = malloc(e->nref * sizeof(*ref) + 1);
    if (!node || !ref) {
        free(node);
        free(ref);
        return -1;
    }
    size_t nn = 0, nr = 0;
    for (size_t i = 0; i < e->nnode; i++) {
        ie_node n = e->node[i];
        int64_t k = n.rf >= 0 ? n.rf : n.id;
        if (k < lo || k > hi) {
            free(n.name);
            continue;
        }
        memcpy(ref + nr, e->ref + n.ref_first, n.nref * sizeof(*ref));
        n.ref_first = nr, nr += n.nref;
        node[nn++] = n;
    }
    free(e->node);
    free(e->ref);
    e->node = node, e->nnode = e->cap_node = nn;
    e->ref = ref, e->nref = e->cap_ref = nr;
    return link(e);
}

void ie_free(ie_trace *e)
{
    for (size_t i = 0; i < e->nnode; i++)
        free(e->node[i].name);
    free(e->node);
    free(e->ref);
    memset(e, 0, sizeof(*e));
}
