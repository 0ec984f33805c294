/* import_kineto_load.c — reads a Kineto chrome trace (torch.profiler's
 * export_chrome_trace) and keeps the events the importers use: kernels, launch calls, CPU
 * operators, step and optimizer annotations and [memory] events. Every kept event's fields are
 * checked, and a missing or mistyped one is an error at the event's line and column. The first
 * Kineto traces (PyTorch 1.8 and 1.9) name the categories Kernel, Runtime and Operator and the
 * CPU side's id "external id"; later ones kernel, cuda_runtime (and cuda_driver), cpu_op and
 * "External id": both are read. */
#include "import_kineto.h"

#include "base_array.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One event being read: where it is, for messages. */
typedef struct ev {
    json_object *o, *args;
    const import_loc *loc;
    size_t index;
    const char *what; /* "kernel event", ... */
    char *msg;
    size_t cap;
} ev;

static int bad(const ev *e, const char *field, int got, const char *type)
{
    return import_fail(e->msg, e->cap, e->loc, "traceEvents", e->index,
                       got == 0 ? "%s has no '%s'" : "%s: '%s' must be %s", e->what, field, type);
}

/* A number field of the event (in_args: of its args); required unless opt. */
static int num(const ev *e, int in_args, const char *field, double *out, int opt)
{
    int got = import_get_num(in_args ? e->args : e->o, field, out);
    return got == 1 || (got == 0 && opt) ? 0 : bad(e, field, got, "a number");
}

static int integer(const ev *e, int in_args, const char *field, int64_t *out, int opt)
{
    int got = import_get_int(in_args ? e->args : e->o, field, out);
    return got == 1 || (got == 0 && opt) ? 0 : bad(e, field, got, "an integer");
}

/* Thread ids are integers in Kineto's traces; a string one (some exporters write names) is
 * hashed (FNV-1a) so that equal names stay one thread. */
/* FNV-1a of a string: names that differ get different values, as far as a step's kernels go. */
static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int thread(const ev *e, int64_t *tid)
{
    const char *s;
    int got = import_get_int(e->o, "tid", tid);
    if (got == 1)
        return 0;
    if (import_get_str(e->o, "tid", &s) != 1)
        return bad(e, "tid", got, "an integer or a string");
    *tid = (int64_t)(fnv(s) >> 1);
    return 0;
}

/* The event's CPU-side id ("External id", or "external id" in the first Kineto traces). */
static int external_id(const ev *e, int64_t *out)
{
    int got = import_get_int(e->args, "External id", out);
    if (got == 0)
        got = import_get_int(e->args, "external id", out);
    return got >= 0 ? 0 : bad(e, "External id", got, "an integer");
}

static int kernel(ik_trace *t, const ev *e)
{
    ik_kernel k = {.corr = -1, .ext = -1};
    if (num(e, 0, "ts", &k.ts, 0) || num(e, 0, "dur", &k.dur, 0) ||
        integer(e, 1, "stream", &k.stream, 0) || integer(e, 1, "device", &k.device, 1) ||
        integer(e, 1, "correlation", &k.corr, 1) || external_id(e, &k.ext))
        return -1;
    if (k.dur < 0 || k.stream < 0 || k.stream > UINT32_MAX)
        return import_fail(e->msg, e->cap, e->loc, "traceEvents", e->index,
                           "kernel event: 'dur' must be >= 0 and 'stream' in [0, 2^32)");
    const char *name = "";
    import_get_str(e->o, "name", &name); /* checked a string (or absent) by the caller */
    k.name = fnv(name);
    if (base_array_grow((void **)&t->kern, &t->cap_kern, t->nkern + 1, sizeof *t->kern))
        return import_fail(e->msg, e->cap, e->loc, "", 0, "out of memory");
    t->kern[t->nkern++] = k;
    return 0;
}

static int call(ik_trace *t, const ev *e)
{
    ik_call c = {.ext = -1};
    if (num(e, 0, "ts", &c.ts, 0) || thread(e, &c.tid) ||
        integer(e, 1, "correlation", &c.corr, 0) || external_id(e, &c.ext))
        return -1;
    if (base_array_grow((void **)&t->call, &t->cap_call, t->ncall + 1, sizeof *t->call))
        return import_fail(e->msg, e->cap, e->loc, "", 0, "out of memory");
    t->call[t->ncall++] = c;
    return 0;
}

/* A span into one of the span lists. */
static int span(const ev *e, const char *name, ik_span **arr, size_t *n, size_t *cap, int64_t num_)
{
    ik_span s = {.ext = -1, .rf = -1, .num = num_};
    double dur;
    if (num(e, 0, "ts", &s.ts, 0) || num(e, 0, "dur", &dur, 0) || thread(e, &s.tid) ||
        external_id(e, &s.ext) || integer(e, 1, "Record function id", &s.rf, 1))
        return -1;
    s.end = s.ts + dur;
    if (base_array_grow((void **)arr, cap, *n + 1, sizeof(**arr)) || !(s.name = strdup(name)))
        return import_fail(e->msg, e->cap, e->loc, "", 0, "out of memory");
    (*arr)[(*n)++] = s;
    return 0;
}

static int memory(ik_trace *t, const ev *e)
{
    ik_mem m = {.dev_type = -1, .dev = -1, .order = t->nmem};
    if (num(e, 0, "ts", &m.ts, 0) || thread(e, &m.tid) || integer(e, 1, "Addr", &m.addr, 0) ||
        integer(e, 1, "Bytes", &m.bytes, 0) || integer(e, 1, "Device Type", &m.dev_type, 1) ||
        integer(e, 1, "Device Id", &m.dev, 1))
        return -1;
    int got = import_get_int(e->args, "Total Allocated", &m.total);
    if (got < 0)
        return bad(e, "Total Allocated", got, "an integer");
    m.has_total = got == 1;
    if (base_array_grow((void **)&t->mem, &t->cap_mem, t->nmem + 1, sizeof *t->mem))
        return import_fail(e->msg, e->cap, e->loc, "", 0, "out of memory");
    t->mem[t->nmem++] = m;
    return 0;
}

/* One element of traceEvents: kept when it is of a kind the importers use. */
static int event(ik_trace *t, ev *e)
{
    const char *cat = "", *name = "";
    if (!json_object_is_type(e->o, json_type_object))
        return import_fail(e->msg, e->cap, e->loc, "traceEvents", e->index,
                           "an event must be an object");
    if (import_get_str(e->o, "cat", &cat) < 0 || import_get_str(e->o, "name", &name) < 0)
        return import_fail(e->msg, e->cap, e->loc, "traceEvents", e->index,
                           "'cat' and 'name' must be strings");
    /* Step and optimizer annotations on the CPU; their GPU copies (gpu_user_annotation) would
     * count a step twice. */
    int cpu = strncmp(cat, "gpu_", 4) != 0;
    int is_mem = !strcmp(name, "[memory]"), is_step = cpu && !strncmp(name, "ProfilerStep#", 13);
    int is_kern = !strcasecmp(cat, "kernel"), is_opt = cpu && !strncmp(name, "Optimizer.step", 14);
    int is_call = !strcasecmp(cat, "cuda_runtime") || !strcasecmp(cat, "cuda_driver") ||
                  !strcasecmp(cat, "runtime");
    int is_op = !strcasecmp(cat, "cpu_op") || !strcasecmp(cat, "operator");
    if (!(is_mem || is_step || is_kern || is_opt || is_call || is_op))
        return 0;
    e->what = is_mem    ? "[memory] event"
              : is_kern ? "kernel event"
              : is_call ? "runtime call"
                        : "CPU span";
    e->args = NULL;
    if (!json_object_object_get_ex(e->o, "args", &e->args) && (is_mem || is_kern || is_call))
        return bad(e, "args", 0, "");
    if (e->args && !json_object_is_type(e->args, json_type_object))
        return bad(e, "args", -1, "an object");
    if (is_mem)
        return memory(t, e);
    if (is_kern)
        return kernel(t, e);
    if (is_call)
        return call(t, e);
    if (is_step) {
        char *end;
        long long n = strtoll(name + 13, &end, 10);
        if (end == name + 13 || *end || n < 0)
            return import_fail(e->msg, e->cap, e->loc, "traceEvents", e->index,
                               "step annotation '%s' has no step number", name);
        return span(e, name, &t->step, &t->nstep, &t->cap_step, n);
    }
    if (is_opt && !is_op)
        return span(e, name, &t->opt, &t->nopt, &t->cap_opt, -1);
    return span(e, name, &t->op, &t->nop, &t->cap_op, -1);
}

static int on_value(void *ctx, const char *key, size_t index, json_object *val,
                    const import_loc *loc, char *msg, size_t cap)
{
    ik_trace *t = ctx;
    if (strcmp(key, "traceEvents") && *key)
        return 0;
    if (index == SIZE_MAX)
        return import_fail(msg, cap, loc, key, index, "must be an array of events");
    t->seen_events = 1;
    ev e = {.o = val, .loc = loc, .index = index, .msg = msg, .cap = cap};
    return event(t, &e);
}

int ik_load(const char *path, ik_trace *t, char *msg, size_t cap)
{
    t->path = path;
    if (import_json_read(path, on_value, t, msg, cap))
        return -1;
    if (!t->seen_events) {
        snprintf(msg, cap, "%s:1:1: error: no events (no traceEvents array, or an empty one)",
                 path);
        return -1;
    }
    return 0;
}

static void free_spans(ik_span *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(s[i].name);
    free(s);
}

void ik_free(ik_trace *t)
{
    free(t->kern);
    free(t->call);
    free_spans(t->op, t->nop);
    free_spans(t->step, t->nstep);
    free_spans(t->opt, t->nopt);
    free(t->mem);
    memset(t, 0, sizeof(*t));
}
