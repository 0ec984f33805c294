/* report_trace_records.c — the SCHEMA chunk resolved against the kinds this reader knows, and
 * the records of RECORDS chunks decoded through it. */
#include "report_trace.h"
#include "report_trace_internal.h"

#include "base_array.h"
#include "shim_trace_format.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

/* Where a field goes in report_rec; from S_WIDE on: into the record's entry of a table of
   report_trace (plans, plan_steps), for kinds with more fields than report_rec holds, at byte
   8 * (slot - S_WIDE) of the entry (every member there is 8 bytes: a u64, or a double for an
   f64 field). */
enum slot {
    S_A,
    S_B,
    S_C,
    S_D,
    S_E,
    S_F,
    S_SUB,
    S_SUB2,
    S_SUB3,
    S_SUB4,
    S_DEVICE, /* report_rec.device: transition's and slab's device (1.8) */
    S_USEC,
    S_TEXT,
    S_IDS,
    S_REASONS, /* step_summary's moves_by_reason tail */
    S_WIDE
};

/* A field of a plan or plan_step record, into the report_plan / report_plan_step member of the
   same name. */
#define PLAN(name, type)                                                                           \
    {                                                                                              \
        SHIM_TRACE_PLAN, #name, SHIM_TRACE_##type, S_WIDE + offsetof(report_plan, name) / 8        \
    }
#define PLAN_STEP(name)                                                                            \
    {                                                                                              \
        SHIM_TRACE_PLAN_STEP, #name, SHIM_TRACE_U64, S_WIDE + offsetof(report_plan_step, name) / 8 \
    }
_Static_assert(sizeof(report_plan) % 8 == 0 && sizeof(report_plan) / 8 + S_WIDE < 256,
               "plan members are 8 bytes, and a slot holds their index");
_Static_assert(sizeof(report_plan_step) % 8 == 0, "plan_step members are 8 bytes");
/* A field of a step_summary record (the format's list: u64 fields at 8 times their position,
   then the moves_by_reason tail), into the report_summary member of the same name: the
   members follow t_ns in the body's order. */
#define SUMMARY(kid, name, type, off)                                                              \
    {kid, name, type, (type) == SHIM_TRACE_U64_LIST ? S_REASONS : S_WIDE + 1 + (off) / 8},
_Static_assert(sizeof(report_summary) % 8 == 0 && sizeof(report_summary) / 8 + S_WIDE < 256,
               "summary members are 8 bytes, and a slot holds their index");
_Static_assert(offsetof(report_summary, step) == 8 && offsetof(report_summary, stall_ns) == 192 &&
                   offsetof(report_summary, moves_by_reason) == 200,
               "report_summary follows the step_summary body");

/* The fields this reader needs, found by name in the file's schema. */
static const struct want {
    uint16_t kind;
    const char *field;
    uint8_t type, slot;
} wants[] = {{SHIM_TRACE_ALLOC, "alloc_id", SHIM_TRACE_U64, S_A},
             {SHIM_TRACE_ALLOC, "addr", SHIM_TRACE_U64, S_B},
             {SHIM_TRACE_ALLOC, "bytes", SHIM_TRACE_U64, S_C},
             {SHIM_TRACE_ALLOC, "stream", SHIM_TRACE_U64, S_D},
             {SHIM_TRACE_ALLOC, "alloc_kind", SHIM_TRACE_U32, S_SUB},
             {SHIM_TRACE_ALLOC, "device", SHIM_TRACE_U32, S_SUB2}, /* 1.6: added_later */
             {SHIM_TRACE_FREE, "alloc_id", SHIM_TRACE_U64, S_A},
             {SHIM_TRACE_FREE, "stream", SHIM_TRACE_U64, S_D},
             {SHIM_TRACE_FUNC_NAME, "func_id", SHIM_TRACE_U64, S_A},
             {SHIM_TRACE_FUNC_NAME, "name", SHIM_TRACE_TEXT, S_TEXT},
             {SHIM_TRACE_LAUNCH, "seq", SHIM_TRACE_U64, S_A},
             {SHIM_TRACE_LAUNCH, "func_id", SHIM_TRACE_U64, S_B},
             {SHIM_TRACE_LAUNCH, "n_allocs", SHIM_TRACE_U32, S_C},
             {SHIM_TRACE_LAUNCH, "stream", SHIM_TRACE_U64, S_D},
             {SHIM_TRACE_LAUNCH, "alloc_ids", SHIM_TRACE_U64_LIST, S_IDS},
             {SHIM_TRACE_KERNEL_TIME, "seq", SHIM_TRACE_U64, S_A},
             {SHIM_TRACE_KERNEL_TIME, "usec", SHIM_TRACE_F64, S_USEC},
             {SHIM_TRACE_COPY, "dst_id", SHIM_TRACE_U64, S_A},
             {SHIM_TRACE_COPY, "src_id", SHIM_TRACE_U64, S_B},
             {SHIM_TRACE_COPY, "bytes", SHIM_TRACE_U64, S_C},
             {SHIM_TRACE_COPY, "stream", SHIM_TRACE_U64, S_D},
             {SHIM_TRACE_COPY, "dir", SHIM_TRACE_U32, S_SUB},
             {SHIM_TRACE_SYNC, "stream", SHIM_TRACE_U64, S_D},
             {SHIM_TRACE_SYNC, "sync_kind", SHIM_TRACE_U32, S_SUB},
             {SHIM_TRACE_STEP, "step", SHIM_TRACE_U64, S_A},
             {SHIM_TRACE_STEP, "first_seq", SHIM_TRACE_U64, S_B},
             {SHIM_TRACE_GRAPH_LAUNCH, "graph_id", SHIM_TRACE_U64, S_A},
             {SHIM_TRACE_GRAPH_LAUNCH, "stream", SHIM_TRACE_U64, S_D},
             {SHIM_TRACE_NOTE, "text", SHIM_TRACE_TEXT, S_TEXT},
             {SHIM_TRACE_DROPPED, "records", SHIM_TRACE_U64, S_A},
             {SHIM_TRACE_DROPPED, "total", SHIM_TRACE_U64, S_B},
             {SHIM_TRACE_BUDGET, "budget_bytes", SHIM_TRACE_U64, S_A},
             {SHIM_TRACE_BUDGET, "host_budget_bytes", SHIM_TRACE_U64, S_B},
             {SHIM_TRACE_BUDGET, "device_total", SHIM_TRACE_U64, S_C},
             {SHIM_TRACE_BUDGET, "device", SHIM_TRACE_U32, S_D}, /* 1.7: added_later */
             {SHIM_TRACE_MOVE, "alloc_id", SHIM_TRACE_U64, S_A},
             {SHIM_TRACE_MOVE, "bytes", SHIM_TRACE_U64, S_B},
             {SHIM_TRACE_MOVE, "start_ns", SHIM_TRACE_U64, S_C},
             {SHIM_TRACE_MOVE, "end_ns", SHIM_TRACE_U64, S_D},
             {SHIM_TRACE_MOVE, "dir", SHIM_TRACE_U32, S_SUB},
             {SHIM_TRACE_MOVE, "reason", SHIM_TRACE_U32, S_SUB2},
             {SHIM_TRACE_MOVE, "device", SHIM_TRACE_U32, S_E}, /* 1.7: added_later */
             {SHIM_TRACE_STALL, "start_ns", SHIM_TRACE_U64, S_C},
             {SHIM_TRACE_STALL, "end_ns", SHIM_TRACE_U64, S_D},
             {SHIM_TRACE_STALL, "reason", SHIM_TRACE_U32, S_SUB2},
             {SHIM_TRACE_STALL, "device", SHIM_TRACE_U32, S_E}, /* 1.7: added_later */
             {SHIM_TRACE_TRANSITION, "unit_id", SHIM_TRACE_U64, S_A},
             {SHIM_TRACE_TRANSITION, "bytes", SHIM_TRACE_U64, S_B},
             {SHIM_TRACE_TRANSITION, "seq", SHIM_TRACE_U64, S_C},
             {SHIM_TRACE_TRANSITION, "stream", SHIM_TRACE_U64, S_D},
             {SHIM_TRACE_TRANSITION, "score", SHIM_TRACE_U64, S_E},
             {SHIM_TRACE_TRANSITION, "next_use", SHIM_TRACE_U64, S_F},
             {SHIM_TRACE_TRANSITION, "event", SHIM_TRACE_U8, S_SUB},
             {SHIM_TRACE_TRANSITION, "reason", SHIM_TRACE_U8, S_SUB2},
             {SHIM_TRACE_TRANSITION, "from", SHIM_TRACE_U8, S_SUB3},
             {SHIM_TRACE_TRANSITION, "to", SHIM_TRACE_U8, S_SUB4},
             {SHIM_TRACE_TRANSITION, "device", SHIM_TRACE_U32, S_DEVICE}, /* 1.8: added_later */
             {SHIM_TRACE_SLAB, "slab_id", SHIM_TRACE_U64, S_A},
             {SHIM_TRACE_SLAB, "addr", SHIM_TRACE_U64, S_B},
             {SHIM_TRACE_SLAB, "bytes", SHIM_TRACE_U64, S_C},
             {SHIM_TRACE_SLAB, "device", SHIM_TRACE_U32, S_DEVICE}, /* 1.8: added_later */
             {SHIM_TRACE_PIN, "alloc_id", SHIM_TRACE_U64, S_A},
             {SHIM_TRACE_PIN, "unit_id", SHIM_TRACE_U64, S_B},
             {SHIM_TRACE_PIN, "addr", SHIM_TRACE_U64, S_C},
             {SHIM_TRACE_PIN, "bytes", SHIM_TRACE_U64, S_D},
             {SHIM_TRACE_PIN, "reason", SHIM_TRACE_U32, S_SUB},
             {SHIM_TRACE_PIN, "from", SHIM_TRACE_U32, S_SUB2},
             {SHIM_TRACE_LINK_TIME, "bytes", SHIM_TRACE_U64, S_B},
             {SHIM_TRACE_LINK_TIME, "usec", SHIM_TRACE_F64, S_USEC},
             {SHIM_TRACE_LINK_TIME, "dir", SHIM_TRACE_U32, S_SUB},
             {SHIM_TRACE_KERNEL_IDLE, "seq", SHIM_TRACE_U64, S_A},
             {SHIM_TRACE_KERNEL_IDLE, "usec", SHIM_TRACE_F64, S_USEC},
             {SHIM_TRACE_KERNEL_IDLE, "record_us", SHIM_TRACE_F64, S_B}, /* its bits */
             PLAN(first_seq, U64),
             PLAN(model_step, U64),
             PLAN(model_first_seq, U64),
             PLAN(step_len, U64),
             PLAN(budget_bytes, U64),
             PLAN(predicted_peak_bytes, U64),
             PLAN(native_peak_bytes, U64),
             PLAN(floor_bytes, U64),
             PLAN(native_us, F64),
             PLAN(predicted_us, F64),
             PLAN(stall_us, F64),
             PLAN(bound_us, F64),
             PLAN(bytes_to_host, U64),
             PLAN(bytes_to_device, U64),
             PLAN(evictions, U32),
             PLAN(prefetches, U32),
             PLAN(feasible, U8),
             PLAN(slab_max_bytes, U64), /* 1.9: added_later */
             PLAN(remap_us, F64),       /* 1.12: added_later */
             PLAN_STEP(step),
             PLAN_STEP(first_seq),
             PLAN_STEP(evictions),
             PLAN_STEP(prefetches),
             PLAN_STEP(missing),
             PLAN_STEP(departures),
             PLAN_STEP(reactive_evictions),
             PLAN_STEP(bytes_to_host),
             PLAN_STEP(bytes_to_device),
             PLAN_STEP(stall_ns),
             SHIM_TRACE_SUMMARY_FIELDS(SUMMARY)};

/* A field a later minor version added to a kind: an older file's schema lacks it, and its
   records read it as 0 (alloc's device, 1.6: device 0; budget's, move's and stall's device,
   1.7, and transition's and slab's, 1.8: report_record_device then names the primary device;
   plan's slab_max_bytes, 1.9: unknown, and a reader's model then pins nothing; plan's remap_us,
   1.12: unknown, and a reader's model keeps the builder's remap cost). */
static bool added_later(const struct want *w)
{
    if (w->kind == SHIM_TRACE_PLAN &&
        (strcmp(w->field, "slab_max_bytes") == 0 || strcmp(w->field, "remap_us") == 0))
        return true;
    return strcmp(w->field, "device") == 0 &&
           (w->kind == SHIM_TRACE_ALLOC || w->kind == SHIM_TRACE_BUDGET ||
            w->kind == SHIM_TRACE_MOVE || w->kind == SHIM_TRACE_STALL ||
            w->kind == SHIM_TRACE_TRANSITION || w->kind == SHIM_TRACE_SLAB);
}
#define NWANTS     (sizeof wants / sizeof wants[0])
#define KIND_WANTS 25 /* the most wants of one kind (step_summary) */

static const struct {
    uint16_t id;
    const char *name;
} known[] = {
#define KNOWN(id, name, fixed) {id, name},
    SHIM_TRACE_KIND_LIST(KNOWN)
#undef KNOWN
};

/* A kind of this file: where the wanted fields are. */
typedef struct layout {
    uint16_t fixed;
    uint8_t known, nf;
    struct {
        uint16_t off;
        uint8_t type;
        uint16_t want; /* index in wants */
    } f[KIND_WANTS];
} layout;

struct report_schema {
    uint16_t index[65536]; /* kind id -> position in kinds + 1; 0 when not declared */
    layout *kinds;
};

/* Contract in report_trace_internal.h. */
int report_bad(char *err, size_t errlen, uint64_t at, const char *fmt, ...)
{
    int n = snprintf(err, errlen, "byte %llu: ", (unsigned long long)at);
    if (n >= 0 && (size_t)n < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Contract in report_trace_internal.h. */
uint64_t report_get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static int type_size(uint8_t type)
{
    static const int sizes[] = {0, 1, 2, 4, 8, 8, 8};
    return type < sizeof sizes / sizeof sizes[0] ? sizes[type] : 0;
}

static int is_tail(uint8_t type)
{
    return type == SHIM_TRACE_TEXT || type == SHIM_TRACE_U64_LIST;
}

static const char *type_name(uint8_t type)
{
    static const char *names[] = {"?", "u8", "u16", "u32", "u64", "i64", "f64"};
    if (type == SHIM_TRACE_TEXT)
        return "text";
    if (type == SHIM_TRACE_U64_LIST)
        return "u64 list";
    return type < sizeof names / sizeof names[0] ? names[type] : "?";
}

/* A name of the schema: 1..SHIM_TRACE_NAME_MAX bytes of [a-z0-9_], copied to out. */
static int take_name(const uint8_t *p, size_t len, size_t *at, char out[SHIM_TRACE_NAME_MAX + 1])
{
    if (len - *at < 1)
        return -1;
    size_t n = p[*at];
    if (n == 0 || n > SHIM_TRACE_NAME_MAX || len - *at - 1 < n)
        return -1;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[*at + 1 + i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return -1;
        out[i] = (char)c;
    }
    out[n] = '\0';
    *at += 1 + n;
    return 0;
}

/* The parse of one SCHEMA payload. */
typedef struct sparse {
    const uint8_t *p;
    size_t len, at;
    uint64_t base;
    char *err;
    size_t errlen;
} sparse;

/* Matches a field of kind id against this reader's wants. */
static int want_field(sparse *sp, uint16_t id, layout *k, const char *name, uint16_t off,
                      uint8_t type, const char *kname)
{
    for (size_t w = 0; w < NWANTS; w++) {
        if (wants[w].kind != id || strcmp(wants[w].field, name) != 0)
            continue;
        if (wants[w].type != type)
            return report_bad(sp->err, sp->errlen, sp->base + sp->at,
                              "schema: field '%s' of kind '%s' is %s, this reader expects %s", name,
                              kname, type_name(type), type_name(wants[w].type));
        k->f[k->nf].off = off;
        k->f[k->nf].type = type;
        k->f[k->nf].want = (uint16_t)w;
        k->nf++;
    }
    return 0;
}

/* The fields of one kind; names seen are kept in seen to find duplicates. */
static int parse_fields(sparse *sp, uint16_t id, layout *k, unsigned nfields, const char *kname)
{
    char seen[SHIM_TRACE_FIELDS_MAX][SHIM_TRACE_NAME_MAX + 1];
    int tails = 0;
    for (unsigned i = 0; i < nfields; i++) {
        size_t start = sp->at;
        if (sp->len - sp->at < 3)
            return report_bad(sp->err, sp->errlen, sp->base + start, "schema: field cut short");
        uint16_t off = (uint16_t)report_get_le(sp->p + sp->at, 2);
        uint8_t type = sp->p[sp->at + 2];
        sp->at += 3;
        if (take_name(sp->p, sp->len, &sp->at, seen[i]) != 0)
            return report_bad(sp->err, sp->errlen, sp->base + start, "schema: bad field name");
        for (unsigned j = 0; j < i; j++)
            if (strcmp(seen[j], seen[i]) == 0)
                return report_bad(sp->err, sp->errlen, sp->base + start,
                                  "schema: kind '%s' has field '%s' twice", kname, seen[i]);
        if (is_tail(type) ? (off != k->fixed || tails++ > 0)
                          : (type_size(type) > 0 && (size_t)off + type_size(type) > k->fixed))
            return report_bad(sp->err, sp->errlen, sp->base + start,
                              "schema: field '%s' of kind '%s' lies outside its record", seen[i],
                              kname);
        if (k->known && want_field(sp, id, k, seen[i], off, type, kname) != 0)
            return -1;
    }
    return 0;
}

/* One kind's entry; every field this reader wants of a known kind must be there. */
static int parse_kind(sparse *sp, report_schema *s, uint16_t pos)
{
    size_t start = sp->at;
    if (sp->len - sp->at < 5)
        return report_bad(sp->err, sp->errlen, sp->base + start, "schema: kind entry cut short");
    uint16_t id = (uint16_t)report_get_le(sp->p + sp->at, 2);
    layout *k = &s->kinds[pos];
    k->fixed = (uint16_t)report_get_le(sp->p + sp->at + 2, 2);
    unsigned nfields = sp->p[sp->at + 4];
    sp->at += 5;
    char kname[SHIM_TRACE_NAME_MAX + 1];
    if (take_name(sp->p, sp->len, &sp->at, kname) != 0)
        return report_bad(sp->err, sp->errlen, sp->base + start, "schema: bad kind name");
    if (id == 0 || s->index[id] != 0 || nfields > SHIM_TRACE_FIELDS_MAX ||
        k->fixed > SHIM_TRACE_RECORD_MAX)
        return report_bad(sp->err, sp->errlen, sp->base + start,
                          "schema: kind %u '%s' is zero, repeated, or too large", id, kname);
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (known[i].id == id) {
            if (strcmp(known[i].name, kname) != 0)
                return report_bad(sp->err, sp->errlen, sp->base + start,
                                  "schema: kind %u is '%s', this reader knows it as '%s'", id,
                                  kname, known[i].name);
            k->known = 1;
        }
    s->index[id] = (uint16_t)(pos + 1);
    if (parse_fields(sp, id, k, nfields, kname) != 0)
        return -1;
    for (size_t w = 0; k->known && w < NWANTS; w++) {
        int found = 0;
        for (unsigned f = 0; f < k->nf; f++)
            found |= k->f[f].want == w;
        if (wants[w].kind == id && !found && !added_later(&wants[w]))
            return report_bad(sp->err, sp->errlen, sp->base + start,
                              "schema: kind '%s' lacks the field '%s' (%s)", kname, wants[w].field,
                              type_name(wants[w].type));
    }
    return 0;
}

/* Contract in report_trace.h. */
int report_schema_parse(report_schema **out, const uint8_t *p, size_t len, uint64_t base, char *err,
                        size_t errlen)
{
    *out = NULL;
    if (len < 4)
        return report_bad(err, errlen, base, "schema: shorter than its kind count");
    uint16_t count = (uint16_t)report_get_le(p, 2);
    report_schema *s = calloc(1, sizeof *s);
    if (s != NULL && (s->kinds = calloc(count + 1u, sizeof *s->kinds)) == NULL) {
        free(s);
        s = NULL;
    }
    if (s == NULL)
        return report_bad(err, errlen, base, "out of memory");
    sparse sp = {p, len, 4, base, err, errlen};
    for (uint16_t i = 0; i < count; i++)
        if (parse_kind(&sp, s, i) != 0) {
            report_schema_free(s);
            return -1;
        }
    if (sp.at != len) {
        report_schema_free(s);
        return report_bad(err, errlen, base + sp.at, "schema: bytes after the last kind");
    }
    *out = s;
    return 0;
}

/* Contract in report_trace.h. */
void report_schema_free(report_schema *s)
{
    if (s != NULL)
        free(s->kinds);
    free(s);
}

/* ---- records ---- */

/* The tail (bytes after the fixed part) into the text or id store. */
static int take_tail(report_trace *t, report_rec *r, uint8_t slot, const uint8_t *tail, size_t n,
                     uint64_t at, char *err, size_t errlen)
{
    if (slot == S_TEXT) {
        size_t len = strnlen((const char *)tail, n);
        if (base_array_grow((void **)&t->text, &t->text_cap, t->text_len + len + 1, 1) != 0)
            return report_bad(err, errlen, at, "out of memory");
        memcpy(t->text + t->text_len, tail, len);
        r->text = t->text_len;
        t->text[t->text_len + len] = '\0';
        t->text_len += len + 1;
        return 0;
    }
    if (n % 8 != 0)
        return report_bad(err, errlen, at, "record's u64 list is %zu bytes, not a multiple of 8",
                          n);
    if (r->kind == SHIM_TRACE_LAUNCH && n / 8 > r->c)
        return report_bad(err, errlen, at, "launch lists %zu ids but n_allocs is %llu", n / 8,
                          (unsigned long long)r->c);
    if (base_array_grow((void **)&t->ids, &t->ids_cap, t->ids_len + n / 8, 8) != 0)
        return report_bad(err, errlen, at, "out of memory");
    r->ids = t->ids_len;
    r->n_ids = (uint32_t)(n / 8);
    for (size_t i = 0; i < n / 8; i++)
        t->ids[t->ids_len++] = report_get_le(tail + 8 * i, 8);
    return 0;
}

/* A new zeroed entry of the table that r's kind decodes into (its index in r->a), or NULL
   when memory ran out; NULL with *none set for the kinds that have no table. */
static uint8_t *wide_entry(report_trace *t, report_rec *r, int *none)
{
    *none = 0;
    if (r->kind == SHIM_TRACE_PLAN) {
        if (base_array_grow((void **)&t->plans, &t->plans_cap, t->nplans + 1, sizeof *t->plans) !=
            0)
            return NULL;
        memset(&t->plans[t->nplans], 0, sizeof *t->plans);
        t->plans[t->nplans].t_ns = r->t_ns;
        r->a = t->nplans;
        return (uint8_t *)&t->plans[t->nplans++];
    }
    if (r->kind == SHIM_TRACE_PLAN_STEP) {
        if (base_array_grow((void **)&t->plan_steps, &t->plan_steps_cap, t->nplan_steps + 1,
                            sizeof *t->plan_steps) != 0)
            return NULL;
        memset(&t->plan_steps[t->nplan_steps], 0, sizeof *t->plan_steps);
        t->plan_steps[t->nplan_steps].t_ns = r->t_ns;
        r->a = t->nplan_steps;
        return (uint8_t *)&t->plan_steps[t->nplan_steps++];
    }
    if (r->kind == SHIM_TRACE_STEP_SUMMARY) {
        if (base_array_grow((void **)&t->summaries, &t->summaries_cap, t->nsummaries + 1,
                            sizeof *t->summaries) != 0)
            return NULL;
        memset(&t->summaries[t->nsummaries], 0, sizeof *t->summaries);
        t->summaries[t->nsummaries].t_ns = r->t_ns;
        r->a = t->nsummaries;
        return (uint8_t *)&t->summaries[t->nsummaries++];
    }
    *none = 1;
    return NULL;
}

/* A step_summary's moves_by_reason tail into its entry: reasons past the table count as
   index 0 (other). */
static int take_reasons(uint8_t *wide, const uint8_t *tail, size_t n, uint64_t at, char *err,
                        size_t errlen)
{
    if (n % 8 != 0)
        return report_bad(err, errlen, at, "record's u64 list is %zu bytes, not a multiple of 8",
                          n);
    report_summary *s = (report_summary *)(void *)wide;
    size_t table = sizeof s->moves_by_reason / sizeof s->moves_by_reason[0];
    for (size_t i = 0; i < n / 8; i++) {
        uint64_t v = report_get_le(tail + 8 * i, 8), *slot = &s->moves_by_reason[i < table ? i : 0];
        *slot = *slot + v < *slot ? UINT64_MAX : *slot + v;
    }
    return 0;
}

/* Fills r's slots from a body of len bytes (len >= the kind's fixed size). */
static int decode(report_trace *t, report_rec *r, const layout *k, const uint8_t *body, size_t len,
                  uint64_t at, char *err, size_t errlen)
{
    int none;
    uint8_t *wide = wide_entry(t, r, &none);
    if (wide == NULL && !none)
        return report_bad(err, errlen, at, "out of memory");
    for (unsigned i = 0; i < k->nf; i++) {
        const uint8_t *f = body + k->f[i].off;
        uint8_t slot = wants[k->f[i].want].slot;
        if (slot >= S_WIDE) {
            uint64_t v = report_get_le(f, type_size(k->f[i].type)); /* an f64's bits: 8 bytes */
            memcpy(wide + 8 * (slot - S_WIDE), &v, sizeof v);
        } else if (slot == S_REASONS) {
            if (take_reasons(wide, body + k->fixed, len - k->fixed, at, err, errlen) != 0)
                return -1;
        } else if (slot == S_TEXT || slot == S_IDS) {
            if (take_tail(t, r, slot, body + k->fixed, len - k->fixed, at, err, errlen) != 0)
                return -1;
        } else if (slot == S_USEC) {
            uint64_t bits = report_get_le(f, 8);
            memcpy(&r->usec, &bits, sizeof r->usec);
        } else {
            uint64_t v = report_get_le(f, type_size(k->f[i].type));
            uint64_t *dst[] = {&r->a, &r->b, &r->c, &r->d, &r->e, &r->f};
            if (slot == S_SUB)
                r->sub = (uint32_t)v;
            else if (slot == S_SUB2)
                r->sub2 = (uint32_t)v;
            else if (slot == S_SUB3)
                r->sub3 = (uint8_t)v;
            else if (slot == S_SUB4)
                r->sub4 = (uint8_t)v;
            else if (slot == S_DEVICE)
                r->device = (uint32_t)v;
            else
                *dst[slot] = v;
        }
    }
    return 0;
}

/* Contract in report_trace.h. */
int report_records_parse(report_trace *t, const report_schema *s, const uint8_t *p, size_t len,
                         uint64_t base, char *err, size_t errlen)
{
    size_t at = 0;
    while (at < len) {
        if (len - at < SHIM_TRACE_RECORD_HEADER)
            return report_bad(err, errlen, base + at, "record header cut by the chunk's end");
        uint16_t kind = (uint16_t)report_get_le(p + at, 2),
                 size = (uint16_t)report_get_le(p + at + 2, 2);
        if (size < SHIM_TRACE_RECORD_HEADER || size > len - at)
            return report_bad(err, errlen, base + at,
                              "record size %u is below 16 or past the chunk", size);
        if (s->index[kind] == 0)
            return report_bad(err, errlen, base + at, "record kind %u is not in the schema", kind);
        const layout *k = &s->kinds[s->index[kind] - 1];
        size_t body = size - SHIM_TRACE_RECORD_HEADER;
        if (body < k->fixed)
            return report_bad(err, errlen, base + at,
                              "record of kind %u is %u bytes, shorter than "
                              "its fixed part",
                              kind, size);
        if (!k->known) {
            t->skipped_records++;
            at += size;
            continue;
        }
        if (base_array_grow((void **)&t->recs, &t->cap, t->n + 1, sizeof *t->recs) != 0)
            return report_bad(err, errlen, base + at, "out of memory");
        report_rec *r = &t->recs[t->n];
        memset(r, 0, sizeof *r);
        r->kind = kind;
        r->tid = (uint32_t)report_get_le(p + at + 4, 4);
        r->t_ns = report_get_le(p + at + 8, 8);
        r->order = t->n;
        if (decode(t, r, k, p + at + SHIM_TRACE_RECORD_HEADER, body, base + at, err, errlen))
            return -1;
        if (kind == SHIM_TRACE_DROPPED)
            t->dropped = t->dropped + r->a < t->dropped ? UINT64_MAX : t->dropped + r->a;
        t->n++;
        at += size;
    }
    return 0;
}
