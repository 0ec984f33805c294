/* test_trace_plan.c — the plan and plan_step records (format 1.3): written by the real writer and
 * read back exactly, at their limits; skipped by a reader that does not know them (an older
 * one); read by name from a newer writer's layout; rejected when malformed; and the summary's
 * plan section, text and JSON, on a trace whose every time is chosen. */
#include "report.h"
#include "shim_trace.h"
#include "shim_trace_format.h"
#include "trace_bytes.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the schema entries of the two kinds, from the format's own field list ---- */

static const struct field {
    uint16_t kind;
    const char *name;
    uint8_t type;
    uint16_t off;
} fields[] = {
#define FIELD(kind, name, type, off) {kind, name, type, off},
    SHIM_TRACE_FIELD_LIST(FIELD)
#undef FIELD
};
#define NFIELDS (sizeof fields / sizeof fields[0])

/* Appends the schema entry of kind (plan or plan_step) named name, as this version writes it
   but: every field `shift` bytes further, a u32 `device` field first when shift >= 4 (a newer
   writer's), the fields listed last first, `skip` left out, `retype` given type `type`. */
static uint16_t plan_entry(buf *k, uint16_t id, const char *name, uint16_t fixed, uint16_t shift,
                           const char *skip, const char *retype, uint8_t type)
{
    buf f = {0};
    uint8_t n = 0;
    for (size_t i = NFIELDS; i-- > 0;) {
        if (fields[i].kind != id || (skip && strcmp(fields[i].name, skip) == 0))
            continue;
        uint8_t t = retype && strcmp(fields[i].name, retype) == 0 ? type : fields[i].type;
        put16(&f, (uint16_t)(fields[i].off + shift));
        put(&f, &t, 1);
        put_name(&f, fields[i].name);
        n++;
    }
    if (shift >= 4) {
        uint8_t t = SHIM_TRACE_U32;
        put16(&f, 0);
        put(&f, &t, 1);
        put_name(&f, "device");
        n++;
    }
    put16(k, id);
    put16(k, (uint16_t)(fixed + shift));
    put(k, &n, 1);
    put_name(k, name);
    put(k, f.p, f.len);
    free(f.p);
    return (uint16_t)(fixed + shift);
}

/* ---- records by hand ---- */

static void put_f64(buf *b, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, 8);
    put64(b, bits);
}

/* A plan body as this version lays it out (144 bytes). */
static void plan_body(buf *p, const struct shim_trace_plan *v)
{
    uint64_t head[] = {v->first_seq,         v->model_step,   v->model_first_seq,
                       v->step_len,          v->budget_bytes, v->predicted_peak_bytes,
                       v->native_peak_bytes, v->floor_bytes};
    for (size_t i = 0; i < 8; i++)
        put64(p, head[i]);
    put_f64(p, v->native_us);
    put_f64(p, v->predicted_us);
    put_f64(p, v->stall_us);
    put_f64(p, v->bound_us);
    put64(p, v->bytes_to_host);
    put64(p, v->bytes_to_device);
    put32(p, v->evictions);
    put32(p, v->prefetches);
    put64(p, v->feasible); /* and 7 zero bytes */
    put64(p, v->slab_max_bytes);
    put_f64(p, v->remap_us);
}

static void rec_plan(buf *p, const struct shim_trace_plan *v, uint64_t t)
{
    rec(p, SHIM_TRACE_PLAN, 144, t);
    plan_body(p, v);
}

/* A plan_step body (80 bytes): the struct's ten u64 are in the record's order. */
static void plan_step_body(buf *p, const struct shim_trace_plan_step *v)
{
    uint64_t u[10];
    _Static_assert(sizeof u == sizeof *v, "ten u64");
    memcpy(u, v, sizeof u);
    for (size_t i = 0; i < 10; i++)
        put64(p, u[i]);
}

static void rec_plan_step(buf *p, const struct shim_trace_plan_step *v, uint64_t t)
{
    rec(p, SHIM_TRACE_PLAN_STEP, 80, t);
    plan_step_body(p, v);
}

/* ---- the writer's records, read back ---- */

static const struct shim_trace_plan big = {
    .first_seq = UINT64_MAX,
    .model_step = UINT64_MAX - 1,
    .model_first_seq = 1ull << 63,
    .step_len = 3,
    .budget_bytes = UINT64_MAX - 2,
    .predicted_peak_bytes = 5,
    .native_peak_bytes = 6,
    .floor_bytes = 7,
    .native_us = 0.125,
    .predicted_us = 1e300,
    .stall_us = -0.0,
    .bound_us = INFINITY,
    .bytes_to_host = UINT64_MAX - 3,
    .bytes_to_device = 9,
    .evictions = UINT32_MAX,
    .prefetches = UINT32_MAX - 1,
    .feasible = true,
    .slab_max_bytes = UINT64_MAX - 4,
    .remap_us = 1536.25,
};
static const struct shim_trace_plan_step big_step = {
    UINT64_MAX, UINT64_MAX - 1, 3, 4, 5, 6, 7, UINT64_MAX - 2, 9, UINT64_MAX - 3};

static void check_plan(const report_plan *r, const struct shim_trace_plan *w)
{
    assert_int_equal(r->first_seq, w->first_seq);
    assert_int_equal(r->model_step, w->model_step);
    assert_int_equal(r->model_first_seq, w->model_first_seq);
    assert_int_equal(r->step_len, w->step_len);
    assert_int_equal(r->budget_bytes, w->budget_bytes);
    assert_int_equal(r->predicted_peak_bytes, w->predicted_peak_bytes);
    assert_int_equal(r->native_peak_bytes, w->native_peak_bytes);
    assert_int_equal(r->floor_bytes, w->floor_bytes);
    assert_memory_equal(&r->native_us, &w->native_us, 8); /* bit for bit: -0.0, infinity */
    assert_memory_equal(&r->predicted_us, &w->predicted_us, 8);
    assert_memory_equal(&r->stall_us, &w->stall_us, 8);
    assert_memory_equal(&r->bound_us, &w->bound_us, 8);
    assert_int_equal(r->bytes_to_host, w->bytes_to_host);
    assert_int_equal(r->bytes_to_device, w->bytes_to_device);
    assert_int_equal(r->evictions, w->evictions);
    assert_int_equal(r->prefetches, w->prefetches);
    assert_int_equal(r->feasible, w->feasible);
    assert_int_equal(r->slab_max_bytes, w->slab_max_bytes);
    assert_memory_equal(&r->remap_us, &w->remap_us, 8);
}

static void check_plan_step(const report_plan_step *r, const struct shim_trace_plan_step *w)
{
    assert_int_equal(r->step, w->step);
    assert_int_equal(r->first_seq, w->first_seq);
    assert_int_equal(r->evictions, w->evictions);
    assert_int_equal(r->prefetches, w->prefetches);
    assert_int_equal(r->missing, w->missing);
    assert_int_equal(r->departures, w->departures);
    assert_int_equal(r->reactive_evictions, w->reactive_evictions);
    assert_int_equal(r->bytes_to_host, w->bytes_to_host);
    assert_int_equal(r->bytes_to_device, w->bytes_to_device);
    assert_int_equal(r->stall_ns, w->stall_ns);
}

/* Writes an alloc, the two plans, the two plan steps and a note through the real writer; the
   file's bytes. */
static buf written(void)
{
    char path[] = "/tmp/test_trace_plan.XXXXXX";
    struct shim_trace_info info = {7, 0, "test_trace_plan", NULL, 0, 0, NULL};
    writer_start(path, &info);
    struct shim_trace_plan zero = {0};
    struct shim_trace_plan_step small = {1, 2, 0, 0, 0, 0, 0, 0, 0, 0};
    shim_trace_alloc(11, 0x1000, 4096, PLAN_MEM_MANAGED, 0);
    shim_trace_plan(&big);
    shim_trace_plan(NULL);
    shim_trace_plan_step(&big_step);
    shim_trace_plan_step(NULL);
    shim_trace_plan(&zero);
    shim_trace_plan_step(&small);
    shim_trace_note("after");
    shim_trace_stop();
    return file_bytes(path, 1 << 20);
}

static void written_and_read_exactly(void **state)
{
    (void)state;
    buf b = written();
    report_trace t;
    char err[512];
    if (load(&t, &b, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(t.minor, SHIM_TRACE_MINOR);
    assert_int_equal(t.skipped_records, 0);
    assert_int_equal(t.n, 6); /* NULL records nothing */
    static const uint16_t kinds[] = {SHIM_TRACE_ALLOC, SHIM_TRACE_PLAN,      SHIM_TRACE_PLAN_STEP,
                                     SHIM_TRACE_PLAN,  SHIM_TRACE_PLAN_STEP, SHIM_TRACE_NOTE};
    static const uint64_t index[] = {11, 0, 0, 1, 1};
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(t.recs[i].kind, kinds[i]);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(t.recs[i].a, index[i]);
    assert_int_equal(t.nplans, 2);
    assert_int_equal(t.nplan_steps, 2);
    check_plan(&t.plans[0], &big);
    check_plan(&t.plans[1], &(struct shim_trace_plan){0});
    check_plan_step(&t.plan_steps[0], &big_step);
    check_plan_step(&t.plan_steps[1], &(struct shim_trace_plan_step){1, 2, 0, 0, 0, 0, 0, 0, 0, 0});
    assert_int_equal(t.plans[0].t_ns, t.recs[1].t_ns);
    assert_int_equal(t.plan_steps[1].t_ns, t.recs[4].t_ns);
    assert_string_equal(t.text + t.recs[5].text, "after");
    report_trace_free(&t);
    free(b.p);
}

/* ---- an older reader ---- */

/* Rewrites kind ids 17 and 18 to 1017 and 1018 in the schema and the records of trace b, and
   puts every chunk's checksum right: to this reader they are then what 17 and 18 are to a
   reader of 1.2, kinds declared in the schema that it does not know. */
static void renumber(buf *b)
{
    size_t at = 16;
    while (at + 16 <= b->len) {
        uint32_t type, len;
        memcpy(&type, b->p + at + 4, 4);
        memcpy(&len, b->p + at + 8, 4);
        uint8_t *p = b->p + at + 16;
        if (type == SHIM_TRACE_CHUNK_SCHEMA) {
            uint16_t count;
            memcpy(&count, p, 2);
            for (size_t k = 0, q = 4; k < count; k++) {
                uint16_t id;
                memcpy(&id, p + q, 2);
                id = id == 17 || id == 18 ? (uint16_t)(id + 1000) : id;
                memcpy(p + q, &id, 2);
                uint8_t nf = p[q + 4];
                q += 6 + p[q + 5];
                for (uint8_t f = 0; f < nf; f++)
                    q += 4 + p[q + 3];
            }
        } else if (type == SHIM_TRACE_CHUNK_RECORDS) {
            for (size_t q = 0; q < len;) {
                uint16_t id, size;
                memcpy(&id, p + q, 2);
                memcpy(&size, p + q + 2, 2);
                id = id == 17 || id == 18 ? (uint16_t)(id + 1000) : id;
                memcpy(p + q, &id, 2);
                q += size;
            }
        }
        uint32_t crc = crc_of(b->p + at, 12, p, len);
        memcpy(b->p + at + 12, &crc, 4);
        at += 16 + len;
    }
}

static void an_older_reader_skips_them(void **state)
{
    (void)state;
    buf b = written();
    renumber(&b);
    report_trace t;
    char err[512];
    if (load(&t, &b, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_true(t.complete);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.skipped_records, 4);
    assert_int_equal(t.nplans, 0);
    assert_int_equal(t.nplan_steps, 0);
    assert_int_equal(t.recs[0].kind, SHIM_TRACE_ALLOC);
    assert_int_equal(t.recs[0].a, 11);
    assert_int_equal(t.recs[0].c, 4096);
    assert_string_equal(t.text + t.recs[1].text, "after");
    report_trace_free(&t);
    free(b.p);
}

/* ---- a newer writer's layout, and malformed schemas ---- */

/* Every field 8 bytes further, a field this reader does not know first, listed in reverse. */
static void newer_layout(void **state)
{
    (void)state;
    buf k = {0};
    uint16_t fixed = plan_entry(&k, SHIM_TRACE_PLAN, "plan", 144, 8, NULL, NULL, 0);
    uint16_t fixed_step = plan_entry(&k, SHIM_TRACE_PLAN_STEP, "plan_step", 80, 8, NULL, NULL, 0);
    buf b = with_schema(&k, 2), p = {0};
    rec(&p, SHIM_TRACE_PLAN, fixed, 5);
    put64(&p, 0xdddd);
    plan_body(&p, &big);
    rec(&p, SHIM_TRACE_PLAN_STEP, fixed_step, 6);
    put64(&p, 0xdddd);
    plan_step_body(&p, &big_step);
    chunk(&b, SHIM_TRACE_CHUNK_RECORDS, &p);
    end_chunk(&b);
    report_trace t;
    char err[512];
    if (load(&t, &b, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.nplans, 1);
    check_plan(&t.plans[0], &big);
    assert_int_equal(t.plans[0].t_ns, 5);
    check_plan_step(&t.plan_steps[0], &big_step);
    report_trace_free(&t);
    free(b.p);
    free(p.p);
    free(k.p);
}

static void bad_schemas(void **state)
{
    (void)state;
    static const struct {
        uint16_t id;
        const char *name, *skip, *retype;
        uint8_t type;
        const char *want;
    } cases[] = {
        {SHIM_TRACE_PLAN, "plan", "bound_us", NULL, 0,
         "schema: kind 'plan' lacks the field 'bound_us' (f64)"},
        {SHIM_TRACE_PLAN, "plan", "feasible", NULL, 0,
         "schema: kind 'plan' lacks the field 'feasible' (u8)"},
        {SHIM_TRACE_PLAN, "plan", NULL, "evictions", SHIM_TRACE_U64,
         "schema: field 'evictions' of kind 'plan' is u64, this reader expects u32"},
        {SHIM_TRACE_PLAN, "plan", NULL, "predicted_us", SHIM_TRACE_U64,
         "schema: field 'predicted_us' of kind 'plan' is u64, this reader expects f64"},
        {SHIM_TRACE_PLAN, "plans", NULL, NULL, 0,
         "schema: kind 17 is 'plans', this reader knows it as 'plan'"},
        {SHIM_TRACE_PLAN_STEP, "plan_step", "stall_ns", NULL, 0,
         "schema: kind 'plan_step' lacks the field 'stall_ns' (u64)"},
        {SHIM_TRACE_PLAN_STEP, "plan_step", NULL, "missing", SHIM_TRACE_U32,
         "schema: field 'missing' of kind 'plan_step' is u32, this reader expects u64"},
        {SHIM_TRACE_PLAN_STEP, "plan", NULL, NULL, 0,
         "schema: kind 18 is 'plan', this reader knows it as 'plan_step'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        buf k = {0};
        plan_entry(&k, cases[i].id, cases[i].name, cases[i].id == SHIM_TRACE_PLAN ? 144 : 80, 0,
                   cases[i].skip, cases[i].retype, cases[i].type);
        buf b = with_schema(&k, 1);
        expect_error(&b, cases[i].want);
        free(b.p);
        free(k.p);
    }
    /* a record shorter than the kind's fixed part */
    buf p = {0};
    rec(&p, SHIM_TRACE_PLAN_STEP, 72, 1);
    for (int i = 0; i < 9; i++)
        put64(&p, 1);
    size_t payload;
    buf b = one_chunk(&p, &payload);
    char want[96];
    snprintf(want, sizeof want, "byte %zu: record of kind 18 is 88 bytes, shorter than its fixed",
             payload);
    expect_error(&b, want);
    free(b.p);
    free(p.p);
}

/* ---- the summary's plan section ---- */

/* Steps 0, 1, 2 of two launches each; their windows [100, 1000), [1000, 3000), [3000, 6010)
   ns (from the sync before the first launch to the next step's; the last one's mark ends it),
   their marks at 1010, 3010 and 6010: a plan step's wall time is from the mark before it to its
   own (step 0 has none before it).
   Plan 0 is recorded at 1008, plan 1 at 6050. plan_step records: step 0 at 1005 (before any
   plan), step 2 at 6005 and step 1 at 3005 (in that file order), and step 7 (first_seq 99, no
   such step) at 6100, under plan 1. */
static buf plan_trace(void)
{
    struct shim_trace_plan p0 = {2,    0,    0,    2,    1000, 900, 1200, 800,  1.5, 2.25,
                                 0.75, 1.75, 4096, 8192, 3,    4,   true, 4096, 10};
    struct shim_trace_plan p1 = {6,   2,   4,     2,    2000,     2100,    1200,
                                 800, 1.5, 30.5,  29,   INFINITY, 1 << 20, 1 << 21,
                                 1,   2,   false, 4096, 123.5};
    buf p = {0};
    rec_sync(&p, 100);
    rec_launch(&p, 0, 200);
    rec_launch(&p, 1, 300);
    rec_sync(&p, 1000);
    rec_plan_step(&p, &(struct shim_trace_plan_step){0, 0, 1, 1, 0, 0, 9, 100, 200, 0}, 1005);
    rec_plan(&p, &p0, 1008);
    rec_step(&p, 0, 0, 1010);
    rec_launch(&p, 2, 1100);
    rec_launch(&p, 3, 1200);
    rec_sync(&p, 3000);
    rec_plan_step(&p, &(struct shim_trace_plan_step){2, 4, 3, 3, 0, 1, 0, 4096, 8192, 0}, 6005);
    rec_plan_step(&p, &(struct shim_trace_plan_step){1, 2, 3, 4, 1, 2, 5, 4096, 12288, 1500}, 3005);
    rec_step(&p, 1, 2, 3010);
    rec_launch(&p, 4, 3100);
    rec_launch(&p, 5, 3200);
    rec_sync(&p, 6000);
    rec_step(&p, 2, 4, 6010);
    rec_plan(&p, &p1, 6050);
    rec_plan_step(&p, &(struct shim_trace_plan_step){7, 99, 0, 0, 2, 0, 0, 0, 0, 2000000}, 6100);
    size_t payload;
    buf b = one_chunk(&p, &payload);
    end_chunk(&b);
    free(p.p);
    return b;
}

/* The summary of b, text or JSON (free it). */
static char *summary(const buf *b, int json)
{
    report_trace t;
    report_stats s;
    char err[512];
    if (load(&t, b, err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_int_equal(report_stats_compute(&s, &t), 0);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    report_summary_print(out, &t, &s, json, 10);
    fclose(out);
    report_stats_free(&s);
    report_trace_free(&t);
    return text;
}

static void has(const char *text, const char *want)
{
    if (strstr(text, want) == NULL)
        fail_msg("the summary lacks \"%s\":\n%s", want, text);
}

static void summary_text(void **state)
{
    (void)state;
    buf b = plan_trace();
    char *text = summary(&b, 0);
    has(text, "\nplans (the planner's prediction for one step, in its model's time):\n"
              "  plan  first_seq model_step step_len   budget_bytes predicted_us     stall_us"
              "     bound_us    native_us  bytes_to_host bytes_to_device evictions prefetches"
              " feasible\n"
              "     0          2          0        2           1000        2.250        0.750"
              "        1.750        1.500           4096            8192         3          4"
              "      yes\n"
              "     1          6          2        2           2000       30.500       29.000"
              "          inf        1.500        1048576         2097152         1          2"
              "       no\n");
    has(text, "\nplan by step (wall_us: from the mark of the step before to the step's, the "
              "host's time; predicted: the plan in force):\n"
              "    step plan      wall_us predicted_us evictions prefetches missing departures"
              " reactive  bytes_to_host bytes_to_device predicted_to_host predicted_to_device"
              "     stall_us\n"
              "       0    -            -            -         1          1       0          0"
              "        9            100             200                 -                   -"
              "        0.000\n"
              "       1    0        2.000        2.250         3          4       1          2"
              "        5           4096           12288              4096                8192"
              "        1.500\n"
              "       2    0        3.000        2.250         3          3       0          1"
              "        0           4096            8192              4096                8192"
              "        0.000\n"
              "       7    1            -       30.500         0          0       2          0"
              "        0              0               0           1048576             2097152"
              "     2000.000\n\ntop allocations");
    free(text);
    free(b.p);
}

static void summary_json(void **state)
{
    (void)state;
    buf b = plan_trace();
    char *text = summary(&b, 1);
    has(text, "\"plans\": [{\"first_seq\": 2, \"model_step\": 0, \"model_first_seq\": 0, "
              "\"step_len\": 2, \"budget_bytes\": 1000, \"predicted_peak_bytes\": 900, "
              "\"native_peak_bytes\": 1200, \"floor_bytes\": 800, \"native_us\": 1.500, "
              "\"predicted_us\": 2.250, \"stall_us\": 0.750, \"bound_us\": 1.750, "
              "\"bytes_to_host\": 4096, \"bytes_to_device\": 8192, \"evictions\": 3, "
              "\"prefetches\": 4, \"feasible\": true, \"remap_us\": 10.000}, {\"first_seq\": 6, ");
    has(text, "\"bound_us\": null, \"bytes_to_host\": 1048576, \"bytes_to_device\": 2097152, "
              "\"evictions\": 1, \"prefetches\": 2, \"feasible\": false, \"remap_us\": "
              "123.500}], ");
    has(text, "\"plan_steps\": [{\"step\": 0, \"first_seq\": 0, \"plan\": null, \"wall_us\": "
              "null, \"evictions\": 1, \"prefetches\": 1, \"missing\": 0, \"departures\": 0, "
              "\"reactive_evictions\": 9, \"bytes_to_host\": 100, \"bytes_to_device\": 200, "
              "\"stall_us\": 0.000, \"predicted_us\": null, \"predicted_bytes_to_host\": null, "
              "\"predicted_bytes_to_device\": null}, {\"step\": 1, \"first_seq\": 2, \"plan\": 0, "
              "\"wall_us\": 2.000, \"evictions\": 3, \"prefetches\": 4, \"missing\": 1, "
              "\"departures\": 2, \"reactive_evictions\": 5, \"bytes_to_host\": 4096, "
              "\"bytes_to_device\": 12288, \"stall_us\": 1.500, \"predicted_us\": 2.250, "
              "\"predicted_bytes_to_host\": 4096, \"predicted_bytes_to_device\": 8192}, ");
    has(text, "{\"step\": 7, \"first_seq\": 99, \"plan\": 1, \"wall_us\": null, ");
    has(text, "\"predicted_bytes_to_device\": 2097152}], \"steps\": [");
    free(text);
    free(b.p);
}

/* Without plan records: no plan section in the text, empty lists in JSON. */
static void summary_without_plans(void **state)
{
    (void)state;
    buf p = {0};
    rec_sync(&p, 100);
    rec_launch(&p, 0, 200);
    rec_sync(&p, 300);
    rec_step(&p, 0, 0, 310);
    size_t payload;
    buf b = one_chunk(&p, &payload);
    char *text = summary(&b, 0);
    assert_null(strstr(text, "plan"));
    free(text);
    text = summary(&b, 1);
    has(text, "\"plans\": [], \"plan_steps\": [], \"steps\": [");
    free(text);
    free(b.p);
    free(p.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(written_and_read_exactly),
        cmocka_unit_test(an_older_reader_skips_them),
        cmocka_unit_test(newer_layout),
        cmocka_unit_test(bad_schemas),
        cmocka_unit_test(summary_text),
        cmocka_unit_test(summary_json),
        cmocka_unit_test(summary_without_plans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
