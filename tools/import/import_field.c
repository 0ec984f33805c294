/* import_field.c — typed member access and located error messages for the importers, and
 * their one growable array. */
#include "import.h"
#include "plan_build.h"

#include "base_array.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int import_fail(char *msg, size_t cap, const import_loc *loc, const char *key, size_t index,
                const char *fmt, ...)
{
    int n = snprintf(msg, cap, "%s:%llu:%llu: error: ", loc->file, (unsigned long long)loc->line,
                     (unsigned long long)loc->col);
    if (n >= 0 && (size_t)n < cap && key && *key)
        n += index == SIZE_MAX ? snprintf(msg + n, cap - (size_t)n, "%s: ", key)
                               : snprintf(msg + n, cap - (size_t)n, "%s[%zu]: ", key, index);
    if (n >= 0 && (size_t)n < cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg + n, cap - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

void import_note(const import_opts *o, const char *path, const char *fmt, ...)
{
    if (!o->notes)
        return;
    fprintf(o->notes, "shim-plan: %s: ", path);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(o->notes, fmt, ap);
    fputc('\n', o->notes);
    va_end(ap);
}

static json_object *member(json_object *o, const char *name)
{
    json_object *v = NULL;
    if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, name, &v))
        return NULL;
    return v;
}

int import_get_num(json_object *o, const char *name, double *out)
{
    json_object *v = member(o, name);
    if (!v)
        return 0;
    if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
        return -1;
    *out = json_object_get_double(v);
    return isfinite(*out) ? 1 : -1;
}

int import_get_int(json_object *o, const char *name, int64_t *out)
{
    return import_int_value(member(o, name), out);
}

int import_int_value(json_object *v, int64_t *out)
{
    if (!v)
        return 0;
    if (json_object_is_type(v, json_type_int)) {
        *out = json_object_get_int64(v);
        return 1;
    }
    if (json_object_is_type(v, json_type_double)) {
        double d = json_object_get_double(v);
        /* Only whole numbers the int64 range holds exactly. */
        if (!(d == floor(d) && fabs(d) < 9.0e15))
            return -1;
        *out = (int64_t)d;
        return 1;
    }
    return -1;
}

int import_get_str(json_object *o, const char *name, const char **out)
{
    json_object *v = member(o, name);
    if (!v)
        return 0;
    if (!json_object_is_type(v, json_type_string))
        return -1;
    *out = json_object_get_string(v);
    return 1;
}

int import_check(const char *path, const plan_model *m, char *msg, size_t cap)
{
    char why[1024];
    if (!plan_model_check(m, NULL, why, sizeof why))
        return 0;
    snprintf(msg, cap, "%s: error: the trace gives no valid model: %s", path, why);
    return -1;
}

void import_default_hw(plan_model *m)
{
    /* A trace has no link figures: the step model builder's defaults (PCIe 4.0 x16, both
     * directions at once, its remap cost) stand in, as for a libshim trace without moves. */
    m->hw = (plan_hw){.h2d_gbps = PLAN_BUILD_GBPS,
                      .d2h_gbps = PLAN_BUILD_GBPS,
                      .duplex = 1,
                      .remap_us = PLAN_BUILD_REMAP_US};
}

int import_key_cmp(const void *a, const void *b)
{
    const import_key *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

int import_ivec_push(import_ivec *iv, int32_t x)
{
    if (base_array_grow((void **)&iv->v, &iv->cap, iv->n + 1, sizeof *iv->v))
        return -1;
    iv->v[iv->n++] = x;
    return 0;
}
