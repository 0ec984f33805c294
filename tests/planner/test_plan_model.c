/* tests/planner/test_plan_model.c — the iteration model: text reader (values, errors with
 * FILE:LINE), writer round trip, sizes, plan checks, gaps and floor, the generators, and
 * libshim's rules applied to a model (plan_model_hold, plan_model_set_moved). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_build.h"
#include "plan_internal.h"
#include "size_cases.h"

static plan_err parse(const char *text, plan_model *m, char *msg, size_t cap)
{
    plan_model_init(m);
    return plan_model_parse(text, strlen(text), "m.txt", m, msg, cap);
}

static void test_parse_values(void **state)
{
    (void)state;
    const char *text = "# a model\r\n"
                       "hw 12.5 25 0 7.5   # trailing comment\r\n"
                       "alloc 2KiB 0 2 2 0 2\n"
                       "op 10\n"
                       "op 0.5 3\n"
                       "\n"
                       "op 1e2\n"
                       "alloc 100 -1 -1 1\n";
    plan_model m;
    char msg[256];
    assert_int_equal(parse(text, &m, msg, sizeof(msg)), PLAN_OK);
    assert_true(m.hw.h2d_gbps == 12.5 && m.hw.d2h_gbps == 25 && m.hw.duplex == 0);
    assert_true(m.hw.remap_us == 7.5);
    assert_int_equal(m.nops, 3);
    assert_true(m.ops[0].dur_us == 10 && m.ops[1].dur_us == 0.5 && m.ops[2].dur_us == 100);
    assert_int_equal(m.ops[1].stream, 3);
    assert_int_equal(m.nallocs, 2);
    assert_int_equal(m.allocs[0].bytes, 2048);
    assert_int_equal(m.allocs[0].ntouch, 2); /* 2 0 2: sorted, duplicates merged */
    assert_int_equal(m.touches[m.allocs[0].touch_first], 0);
    assert_int_equal(m.touches[m.allocs[0].touch_first + 1], 2);
    assert_int_equal(m.allocs[1].birth, -1);
    assert_int_equal(m.allocs[1].death, -1);
    for (size_t q = 0; q < m.nops; q++)
        assert_true(m.ops[q].idle_us == 0); /* no idle line: the device sets the pace */
    plan_model_free(&m);
}

/* idle OP US: before or after its operation's line, each operation at most once; set with
   plan_model_set_idle in the library, which checks its range. */
static void test_parse_idle(void **state)
{
    (void)state;
    const char *text = "hw 1 1 1 0\nidle 2 40.5\nop 10\nop 5\nop 1\nidle 0 0\nidle 1 1e3\n";
    plan_model m;
    char msg[256];
    assert_int_equal(parse(text, &m, msg, sizeof(msg)), PLAN_OK);
    assert_true(m.ops[0].idle_us == 0 && m.ops[1].idle_us == 1000 && m.ops[2].idle_us == 40.5);
    assert_int_equal(plan_model_set_idle(&m, 3, 1), PLAN_ERR_INVALID);
    assert_int_equal(plan_model_set_idle(&m, 0, -1), PLAN_ERR_INVALID);
    assert_int_equal(plan_model_set_idle(&m, 0, NAN), PLAN_ERR_INVALID);
    assert_int_equal(plan_model_set_idle(&m, 0, 2 * PLAN_MAX_DURATION), PLAN_ERR_INVALID);
    assert_true(m.ops[0].idle_us == 0);
    assert_int_equal(plan_model_set_idle(&m, 0, 7.25), PLAN_OK);
    assert_true(m.ops[0].idle_us == 7.25);
    m.ops[1].idle_us = INFINITY; /* set by hand past the setter: the check finds it */
    assert_int_equal(plan_model_check(&m, NULL, msg, sizeof(msg)), PLAN_ERR_INVALID);
    assert_string_equal(msg, "operation 1: idle time must be in [0, 1e+12] us");
    plan_model_free(&m);
}

/* Each bad model and the exact message it must give. */
static const struct {
    const char *text, *msg;
} bad[] = {
    {"op 1\n", "m.txt:1: error: missing 'hw' line"},
    {"hw 1 1 1 0\n", "m.txt:1: error: model has no operations"},
    {"hw 1 1 1 0\nhw 1 1 1 0\nop 1\n", "m.txt:2: error: second 'hw' line (first at line 1)"},
    {"hw 1 1 2 0\nop 1\n", "m.txt:1: error: DUPLEX must be an integer in [0, 1], got '2'"},
    {"hw 0 1 1 0\nop 1\n", "m.txt:1: error: H2D_GBPS must be a number in [1e-06, 1e+06], got '0'"},
    {"hw 1 1 1\nop 1\n",
     "m.txt:1: error: 'hw' takes 4 values: H2D_GBPS D2H_GBPS DUPLEX(0|1) REMAP_US"},
    {"hw 1 1 1 0\nop -1\n", "m.txt:2: error: DURATION_US must be a number in [0, 1e+12], got '-1'"},
    {"hw 1 1 1 0\nop nan\n",
     "m.txt:2: error: DURATION_US must be a number in [0, 1e+12], got 'nan'"},
    {"hw 1 1 1 0\nop 0x10\n",
     "m.txt:2: error: DURATION_US must be a number in [0, 1e+12], got '0x10'"},
    {"hw 1 1 1 0\nop 1 2 3\n", "m.txt:2: error: 'op' takes DURATION_US [STREAM]"},
    {"hw 1 1 1 0\nop 1\nkernel 3\n",
     "m.txt:3: error: unknown keyword 'kernel' (expected hw, link_both, op, idle, alloc or copy)"},
    {"hw 1 1 1 0\nlink_both 2 1\nop 1\n",
     "m.txt:2: error: link_both rates must be in (0, full rate]: H2D_GBPS in (0, 1], D2H_GBPS in "
     "(0, 1]"},
    {"hw 4 2 1 0\nop 1\nlink_both 1 3\n",
     "m.txt:3: error: link_both rates must be in (0, full rate]: H2D_GBPS in (0, 4], D2H_GBPS in "
     "(0, 2]"},
    {"hw 1 1 0 0\nop 1\nlink_both 0.5 0.5\n",
     "m.txt:3: error: link_both needs DUPLEX 1 (a shared link copies one way at a time)"},
    {"hw 1 1 1 0\nlink_both 0.5\nop 1\n",
     "m.txt:2: error: 'link_both' takes 2 values: H2D_GBPS D2H_GBPS"},
    {"hw 1 1 1 0\nlink_both 0 1\nop 1\n",
     "m.txt:2: error: H2D_GBPS must be a number in [1e-06, 1e+06], got '0'"},
    {"link_both 1 1\nhw 1 1 1 0\nlink_both 1 1\nop 1\n",
     "m.txt:3: error: second 'link_both' line (first at line 1)"},
    {"hw 1 1 1 0\nop 1\nalloc 0 0 0 0\n",
     "m.txt:3: error: BYTES must be a size in [1, 2^60], got '0'"},
    {"hw 1 1 1 0\nop 1\nalloc 1Q 0 0 0\n",
     "m.txt:3: error: BYTES must be a size in [1, 2^60], got '1Q'"},
    {"hw 1 1 1 0\nop 1\nop 1\nalloc 8 1 0 1\n", "m.txt:4: error: BIRTH 1 is after DEATH 0"},
    {"hw 1 1 1 0\nop 1\nop 1\nalloc 8 0 0 1\n",
     "m.txt:4: error: TOUCH must be an integer in [0, 0], got '1'"},
    {"hw 1 1 1 0\nop 1\nalloc 8 -2 0 0\n",
     "m.txt:3: error: BIRTH must be an integer in [-1, 16777215], got '-2'"},
    {"hw 1 1 1 0\nalloc 8 -1 -1 0 5\nop 1\n",
     "m.txt:2: error: allocation 0: touch 5 outside its life [0, 0]"},
    {"hw 1 1 1 0\nop 1\nalloc 8 0\n", "m.txt:3: error: 'alloc' takes BYTES BIRTH DEATH TOUCH..."},
    {"hw 1 1 1 0\nop 1\x01\n", "m.txt:2: error: control character 0x01"},
    {"hw 1 1 1 0\nop 1\ncopy 0 h2d\n", "m.txt:3: error: 'copy' takes AFTER DIR(h2d|d2h) BYTES"},
    {"hw 1 1 1 0\nop 1\ncopy 0 up 8\n", "m.txt:3: error: DIR must be h2d or d2h, got 'up'"},
    {"hw 1 1 1 0\nop 1\ncopy 0 d2h 0\n",
     "m.txt:3: error: BYTES must be a size in [1, 2^60], got '0'"},
    {"hw 1 1 1 0\nop 1\ncopy -1 d2h 4\n",
     "m.txt:3: error: AFTER must be an integer in [0, 16777215], got '-1'"},
    {"hw 1 1 1 0\ncopy 1 d2h 4\nop 1\n",
     "m.txt:2: error: AFTER 1 is beyond the last operation (0)"},
    {"hw 1 1 1 0\nop 1\nidle 0\n", "m.txt:3: error: 'idle' takes OP US"},
    {"hw 1 1 1 0\nop 1\nidle 0 -1\n", "m.txt:3: error: US must be a number in [0, 1e+12], got '-1'"},
    {"hw 1 1 1 0\nop 1\nidle -1 5\n",
     "m.txt:3: error: OP must be an integer in [0, 16777215], got '-1'"},
    {"hw 1 1 1 0\nidle 1 5\nop 1\n", "m.txt:2: error: OP 1 is beyond the last operation (0)"},
    {"hw 1 1 1 0\nop 1\nidle 0 5\nop 2\nidle 0 6\n",
     "m.txt:5: error: operation 0 has an idle line already"},
};

/* BYTES/MOVED: held and copied bytes apart (libshim's units hold whole granules and copy their
   own size); the writer writes /MOVED only where they differ. */
static void test_parse_moved(void **state)
{
    (void)state;
    plan_model m;
    char msg[256], *text;
    size_t len;
    assert_int_equal(parse("hw 1 1 1 0\nop 1\nalloc 4MiB/3000000 -1 -1 0\nalloc 2MiB -1 -1 0\n", &m,
                           msg, sizeof(msg)),
                     PLAN_OK);
    assert_int_equal(m.allocs[0].bytes, 4194304);
    assert_int_equal(m.allocs[0].moved, 3000000);
    assert_int_equal(m.allocs[1].moved, 2097152);
    assert_int_equal(plan_model_write(&m, &text, &len), PLAN_OK);
    assert_non_null(strstr(text, "\nalloc 4194304/3000000 -1 -1 0\n"));
    assert_non_null(strstr(text, "\nalloc 2097152 -1 -1 0\n"));
    free(text);
    plan_model_free(&m);
    static const struct {
        const char *text, *msg;
    } bad_moved[] = {
        {"hw 1 1 1 0\nop 1\nalloc 4MiB/0 -1 -1 0\n",
         "m.txt:3: error: BYTES/MOVED: MOVED must be a size in [1, 4194304] (BYTES), got '4MiB/0'"},
        {"hw 1 1 1 0\nop 1\nalloc 4MiB/5MiB -1 -1 0\n",
         "m.txt:3: error: BYTES/MOVED: MOVED must be a size in [1, 4194304] (BYTES), got "
         "'4MiB/5MiB'"},
        {"hw 1 1 1 0\nop 1\nalloc 4MiB/ -1 -1 0\n",
         "m.txt:3: error: BYTES/MOVED: MOVED must be a size in [1, 4194304] (BYTES), got '4MiB/'"},
        {"hw 1 1 1 0\nop 1\nalloc /5 -1 -1 0\n",
         "m.txt:3: error: BYTES must be a size in [1, 2^60], got ''"},
    };
    for (size_t i = 0; i < sizeof(bad_moved) / sizeof(bad_moved[0]); i++) {
        assert_int_equal(parse(bad_moved[i].text, &m, msg, sizeof(msg)), PLAN_ERR_PARSE);
        if (strcmp(msg, bad_moved[i].msg) != 0)
            fail_msg("case %zu: got \"%s\", want \"%s\"", i, msg, bad_moved[i].msg);
    }
}

static void test_parse_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        plan_model m;
        char msg[256];
        assert_int_equal(parse(bad[i].text, &m, msg, sizeof(msg)), PLAN_ERR_PARSE);
        if (strcmp(msg, bad[i].msg) != 0)
            fail_msg("case %zu: got \"%s\", want \"%s\"", i, msg, bad[i].msg);
        assert_int_equal(m.nops, 0); /* freed on error */
    }
}

static void test_parse_embedded_nul(void **state)
{
    (void)state;
    const char text[] = "hw 1 1 1 0\nop 1\0\n";
    plan_model m;
    char msg[128];
    plan_model_init(&m);
    assert_int_equal(plan_model_parse(text, sizeof(text) - 1, "n", &m, msg, sizeof(msg)),
                     PLAN_ERR_PARSE);
    assert_string_equal(msg, "n:2: error: control character 0x00");
}

/* plan_parse_size is the one size grammar (conf/conf_bytes.h): the cases every parser of sizes
   is tested with (tests/conf/size_cases.h), out of range included. */
static void test_sizes(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(size_cases) / sizeof(size_cases[0]); i++) {
        const struct size_case *c = &size_cases[i];
        uint64_t v = 12345;
        plan_err e = plan_parse_size(c->text, &v);
        if ((e == PLAN_OK) != (c->rc == CONF_BYTES_OK) || (e == PLAN_OK && v != c->bytes))
            fail_msg("plan_parse_size(\"%s\"): %d, %llu; want %s %llu", c->text, (int)e,
                     (unsigned long long)v, c->rc == CONF_BYTES_OK ? "bytes" : "an error",
                     (unsigned long long)c->bytes);
    }
    uint64_t v;
    assert_int_equal(plan_parse_size(NULL, &v), PLAN_ERR_PARSE);
}

/* parse(write(m)) == m, field by field. */
static void assert_same_model(const plan_model *a, const plan_model *b)
{
    assert_memory_equal(&a->hw, &b->hw, sizeof(a->hw));
    assert_int_equal(a->nops, b->nops);
    assert_int_equal(a->nallocs, b->nallocs);
    assert_int_equal(a->ntouches, b->ntouches);
    for (size_t i = 0; i < a->nops; i++) {
        assert_true(a->ops[i].dur_us == b->ops[i].dur_us);
        assert_int_equal(a->ops[i].stream, b->ops[i].stream);
        assert_true(a->ops[i].idle_us == b->ops[i].idle_us);
    }
    assert_memory_equal(a->allocs, b->allocs, a->nallocs * sizeof(*a->allocs));
    assert_memory_equal(a->touches, b->touches, a->ntouches * sizeof(*a->touches));
    assert_int_equal(a->ncopies, b->ncopies);
    for (size_t i = 0; i < a->ncopies; i++) {
        assert_int_equal(a->copies[i].after, b->copies[i].after);
        assert_int_equal(a->copies[i].to_device, b->copies[i].to_device);
        assert_int_equal(a->copies[i].bytes, b->copies[i].bytes);
    }
}

static void test_write_round_trip(void **state)
{
    (void)state;
    static const char *const specs[] = {"transformer:layers=3", "unet:levels=3,seed=5",
                                        "optim:params=12,layers=3",
                                        "random:ops=30,allocs=20,seed=9"};
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        plan_model m, back;
        char msg[256], *text;
        size_t len;
        plan_model_init(&m);
        assert_int_equal(plan_generate(&m, specs[i], msg, sizeof(msg)), PLAN_OK);
        m.ops[0].stream = 7;
        m.ops[1].dur_us = 0.1; /* not exact in binary: needs 17 digits */
        assert_int_equal(plan_model_set_idle(&m, 1, 40.287), PLAN_OK); /* an idle line each */
        assert_int_equal(plan_model_set_idle(&m, m.nops - 1, 0.3), PLAN_OK);
        assert_int_equal(plan_model_add_copy(&m, 1, 0, 4), PLAN_OK); /* kept in their order */
        assert_int_equal(plan_model_add_copy(&m, 0, 1, 28672), PLAN_OK);
        /* a move that copies less than the allocation holds (BYTES/MOVED) is kept */
        assert_int_equal(plan_model_set_moved(&m, 0, m.allocs[0].bytes / 2 + 1), PLAN_OK);
        if (i % 2) { /* link_both is written and read back; absent stays absent */
            m.hw.both_h2d_gbps = m.hw.h2d_gbps * 0.44;
            m.hw.both_d2h_gbps = m.hw.d2h_gbps;
        }
        assert_int_equal(plan_model_write(&m, &text, &len), PLAN_OK);
        assert_int_equal(strlen(text), len);
        plan_model_init(&back);
        if (plan_model_parse(text, len, specs[i], &back, msg, sizeof(msg)))
            fail_msg("%s", msg);
        assert_same_model(&m, &back);
        free(text);
        plan_model_free(&m);
        plan_model_free(&back);
    }
}

/* Gaps, live bytes and floor of a hand-made model. */
static void test_gaps_and_floor(void **state)
{
    (void)state;
    const char *text = "hw 1 1 1 0\nop 1\nop 1\nop 1\nop 1\nop 1\n"
                       "alloc 100 -1 -1 1 3\n"  /* cyclic: interior 1-3, wrap 3-6 */
                       "alloc 10 0 4 0\n"       /* born 0, dies 4 on host: tail 0-4 */
                       "alloc 1 -1 2 1\n"       /* exists before: 0 stays; tail 1-2 */
                       "alloc 1000 2 -1 2 3\n"; /* outlives: 4 is not evictable */
    plan_model m;
    char msg[256];
    assert_int_equal(parse(text, &m, msg, sizeof(msg)), PLAN_OK);
    plan_ctx c;
    assert_int_equal(plan_ctx_init(&c, &m, msg, sizeof(msg)), PLAN_OK);
    assert_int_equal(c.ngaps, 4);
    assert_int_equal(c.gaps[0].a, 1);
    assert_int_equal(c.gaps[0].b, 3);
    assert_int_equal(c.gaps[0].kind, PLAN_GAP_INTERIOR);
    assert_int_equal(c.gaps[1].a, 3);
    assert_int_equal(c.gaps[1].b, 6);
    assert_int_equal(c.gaps[1].kind, PLAN_GAP_WRAP);
    assert_int_equal(c.gaps[2].a, 0);
    assert_int_equal(c.gaps[2].last, 4);
    assert_int_equal(c.gaps[2].kind, PLAN_GAP_TAIL);
    assert_int_equal(c.gaps[3].alloc, 2);
    assert_int_equal(c.gaps[3].a, 1);
    assert_int_equal(c.gaps[3].last, 2);
    static const uint64_t live[] = {111, 111, 1111, 1110, 1110};
    static const uint64_t floor_[] = {11, 101, 1000, 1100, 1000};
    for (int q = 0; q < 5; q++) {
        assert_int_equal(c.live[q], live[q]);
        assert_int_equal(c.floor[q], floor_[q]);
    }
    assert_int_equal(c.native_peak, 1111);
    assert_int_equal(c.floor_peak, 1100);
    uint64_t nat, fl;
    assert_int_equal(plan_peaks(&m, &nat, &fl), PLAN_OK);
    assert_int_equal(nat, 1111);
    assert_int_equal(fl, 1100);
    plan_ctx_free(&c);
    plan_model_free(&m);
}

static void test_plan_check(void **state)
{
    (void)state;
    const char *text = "hw 1 1 1 0\nop 1\nop 1\nop 1\nop 1\nalloc 100 -1 -1 0 2\nalloc 5 0 3 0\n";
    plan_model m;
    char msg[256];
    assert_int_equal(parse(text, &m, msg, sizeof(msg)), PLAN_OK);
    static const struct {
        plan_entry e;
        const char *msg;
    } cases[] = {
        {{0, 0, 2, -1, 2}, NULL},
        {{0, 2, 4, 3, 4}, NULL},
        {{0, 3, 4, 4, 4}, NULL}, /* evicted in the wrapping gap, next step's op 0 */
        {{1, 0, -1, 3, -1}, NULL},
        {{0, 1, 2, -1, 2}, NULL},
        {{2, 0, 1, -1, 1}, "entry 0: evict_after 0 is not in an idle gap of allocation 2"},
        {{0, 0, 0, -1, 2}, "entry 0: prefetch_at 0 outside (0, 2]"},
        {{0, 0, 2, -1, 3}, "entry 0: need 3 is not the next touch 2 of allocation 0"},
        {{0, 0, 2, 3, 2}, "entry 0: wait_at 3 outside (0, 2]"},
        {{1, 0, 2, -1, 2}, "entry 0: allocation 1 dies at 3 on host: no prefetch or need"},
        {{1, 3, -1, -1, -1}, "entry 0: evict_after 3 is not in an idle gap of allocation 1"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        plan p;
        plan_init(&p);
        assert_int_equal(plan_push(&p, cases[i].e), PLAN_OK);
        msg[0] = '\0';
        plan_err e = plan_check(&m, &p, msg, sizeof(msg));
        if (!cases[i].msg && e != PLAN_OK)
            fail_msg("case %zu rejected: %s", i, msg);
        if (cases[i].msg && (e != PLAN_ERR_INVALID || strcmp(msg, cases[i].msg) != 0))
            fail_msg("case %zu: got \"%s\", want \"%s\"", i, msg, cases[i].msg);
        plan_stats st;
        assert_int_equal(plan_simulate(&m, &p, 1000, &st),
                         cases[i].msg ? PLAN_ERR_INVALID : PLAN_OK);
        plan_free(&p);
    }
    plan p;
    plan_init(&p);
    plan_push(&p, (plan_entry){0, 0, 2, -1, 2});
    plan_push(&p, (plan_entry){0, 1, 2, -1, 2});
    assert_int_equal(plan_check(&m, &p, msg, sizeof(msg)), PLAN_ERR_INVALID);
    assert_string_equal(msg, "entry 1: second entry for the gap of allocation 0 after 0");
    plan_free(&p);
    plan_model_free(&m);
}

static void test_generators(void **state)
{
    (void)state;
    plan_model a, b;
    char msg[256];
    plan_model_init(&a);
    plan_model_init(&b);
    assert_int_equal(plan_generate(&a, "transformer:layers=5,fwd=3,acts=2,optim=2", msg, 256), 0);
    assert_int_equal(a.nops, 5 * (2 * 3 + 1) + 1);
    assert_int_equal(a.nallocs, 5 * (2 + 2 + 2));
    assert_int_equal(plan_model_check(&a, NULL, msg, sizeof(msg)), PLAN_OK);
    assert_int_equal(plan_generate(&b, "transformer:layers=5,fwd=3,acts=2,optim=2", msg, 256), 0);
    assert_same_model(&a, &b); /* deterministic */
    plan_model_free(&b);
    plan_model_init(&b);
    assert_int_equal(
        plan_generate(&b, "transformer:layers=5,fwd=3,acts=2,optim=2,seed=2", msg, 256), 0);
    assert_true(memcmp(a.ops, b.ops, a.nops * sizeof(*a.ops)) != 0); /* the seed matters */
    plan_model_free(&a);
    plan_model_free(&b);
    static const char *const specs[] = {"unet", "optim", "random:ops=100,allocs=60,cyclic=50",
                                        "transformer:layers=1,fwd=1,acts=0,optim=0"};
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        plan_model_init(&a);
        if (plan_generate(&a, specs[i], msg, sizeof(msg)))
            fail_msg("%s: %s", specs[i], msg);
        assert_int_equal(plan_model_check(&a, NULL, msg, sizeof(msg)), PLAN_OK);
        assert_true(a.nops > 0 && a.nallocs > 0);
        plan_model_free(&a);
    }
    static const struct {
        const char *spec, *msg;
    } badspec[] = {{"lstm", "unknown model kind 'lstm' (transformer, unet, optim, random)"},
                   {"transformer:layers=0", "layers must be in [1, 2e+06]"},
                   {"transformer:depth=3", "unknown or malformed parameter 'depth=3'"},
                   {"transformer:layers", "unknown or malformed parameter 'layers'"},
                   {"unet:act=big", "act must be in [1, 1e+15]"}};
    for (size_t i = 0; i < sizeof(badspec) / sizeof(badspec[0]); i++) {
        plan_model_init(&a);
        assert_int_equal(plan_generate(&a, badspec[i].spec, msg, sizeof(msg)), PLAN_ERR_PARSE);
        assert_string_equal(msg, badspec[i].msg);
        assert_int_equal(a.nops, 0);
    }
}

/* Allocation a of h is a slab's chunk: a granule from op birth to op death, touched at each. */
static void expect_slab(const plan_model *h, size_t a, int32_t birth, int32_t death)
{
    assert_true(a < h->nallocs);
    assert_int_equal(h->allocs[a].bytes, PLAN_RULES_GRANULE);
    assert_int_equal(h->allocs[a].birth, birth);
    assert_int_equal(h->allocs[a].death, death);
    int32_t lo = birth == PLAN_NO_OP ? 0 : birth;
    int32_t hi = death == PLAN_NO_OP ? (int32_t)h->nops - 1 : death;
    assert_int_equal(h->allocs[a].ntouch, (uint32_t)(hi - lo + 1));
}

/* libshim's rules applied to a model (plan_model_hold): below min_managed pinned and rounded to
 * pages, at most slab_max pinned in a slab (the member 1 byte, its slab's chunk a granule after
 * the model's allocations), larger ones whole granules that a move copies only the allocation's
 * own bytes of. */
static void test_hold(void **state)
{
    (void)state;
    const char *text = "hw 1 1 1 0\nop 10\nop 10\nop 10\n"
                       "alloc 1000 -1 -1 0\n"    /* unmanaged: 4096, pinned */
                       "alloc 300000 -1 -1 0\n"  /* slab member: 300032, pinned */
                       "alloc 3000000 -1 -1 0\n" /* unit: 4 MiB, copies 3,000,000 */
                       "alloc 4MiB 1 1 1\n";     /* unit, used where it lives */
    plan_model m, h;
    char msg[256];
    assert_int_equal(parse(text, &m, msg, sizeof(msg)), PLAN_OK);
    plan_hold_rules r = {.granule = PLAN_RULES_GRANULE,
                         .page = PLAN_RULES_PAGE,
                         .min_managed = 65536,
                         .slab_max = PLAN_RULES_SLAB_MAX};
    plan_hold_info info;
    plan_model_init(&h);
    assert_int_equal(plan_model_hold(&m, &r, &h, &info), PLAN_OK);
    assert_int_equal(h.nallocs, 5);
    assert_int_equal(h.allocs[0].bytes, 4096);
    assert_int_equal(h.allocs[1].bytes, 1);
    assert_int_equal(h.allocs[2].bytes, 4u << 20);
    assert_int_equal(h.allocs[2].moved, 3000000);
    expect_slab(&h, 4, PLAN_NO_OP, PLAN_NO_OP); /* the member's slab, cyclic */
    assert_int_equal(h.allocs[0].ntouch, 3);    /* pinned: touched at every operation */
    assert_int_equal(h.allocs[1].ntouch, 3);
    assert_int_equal(h.allocs[2].ntouch, 1);
    assert_true(info.unmanaged == 1 && info.members == 1 && info.units == 2);
    assert_int_equal(info.unit_bytes, 8u << 20);
    assert_int_equal(info.member_bytes, 300032);
    assert_true(info.slab_chunks == 1 && info.slab_lives == 1);
    /* the first unit leaves the device for the second: the plan copies its own bytes each way */
    plan p;
    plan_stats st;
    plan_init(&p);
    assert_int_equal(plan_make(&h, PLAN_KIND_SCHEDULED, 4096 + 1 + (6u << 20), &p, &st), PLAN_OK);
    assert_true(st.feasible);
    assert_int_equal(st.bytes_to_host, 3000000);
    assert_int_equal(st.bytes_to_device, 3000000);
    plan_free(&p);
    /* moved: at least 1, at most what the allocation holds */
    assert_int_equal(plan_model_set_moved(&h, 2, (4u << 20) + 1), PLAN_ERR_INVALID);
    assert_int_equal(plan_model_set_moved(&h, 2, 0), PLAN_ERR_INVALID);
    assert_int_equal(plan_model_set_moved(&h, 5, 1), PLAN_ERR_INVALID);
    assert_int_equal(plan_model_set_moved(&h, 2, 1), PLAN_OK);
    assert_int_equal(h.allocs[2].moved, 1);
    r.page = 3000; /* not a power of two */
    plan_model_free(&h);
    assert_int_equal(plan_model_hold(&m, &r, &h, NULL), PLAN_ERR_INVALID);
    plan_model_free(&h);
    plan_model_free(&m);
}

/* The slab lives of a model whose members' births and deaths are known: libshim's packing
 * (newest slab with a run of free blocks, else a new one; emptied slabs kept for new members),
 * the step run twice and the second recorded; a span per stretch a slab holds members. */
static void test_hold_slabs(void **state)
{
    (void)state;
    /* 768 KiB members (1536 blocks of a slab's 4096): two fit in one slab, not three. The first
       step: 0 in slab A, 1 beside it, 2 opens B, B emptied after op 2 is kept, 3 goes to B (the
       newest with room). The second step, recorded: 1 and 2 both go to B, which holds members at
       ops 0-2 and again at 3-4. */
    const char *text = "hw 1 1 1 0\nop 10\nop 10\nop 10\nop 10\nop 10\n"
                       "alloc 768KiB -1 -1 0\n" /* 0: cyclic */
                       "alloc 768KiB 0 1 0 1\n"
                       "alloc 768KiB 1 2 1 2\n"
                       "alloc 768KiB 3 4 3 4\n"
                       "alloc 100 0 4 0\n"; /* 4: unmanaged (a 4 KiB page), in no slab */
    plan_model m, h;
    char msg[256];
    assert_int_equal(parse(text, &m, msg, sizeof(msg)), PLAN_OK);
    plan_hold_rules r = {.granule = PLAN_RULES_GRANULE,
                         .page = PLAN_RULES_PAGE,
                         .min_managed = 65536,
                         .slab_max = PLAN_RULES_SLAB_MAX};
    plan_hold_info info;
    plan_model_init(&h);
    assert_int_equal(plan_model_hold(&m, &r, &h, &info), PLAN_OK);
    assert_int_equal(info.members, 4);
    assert_int_equal(info.slab_chunks, 2); /* A and B */
    assert_int_equal(info.slab_lives, 3);  /* A throughout; B at ops 0-2 and at 3-4 */
    assert_int_equal(h.nallocs, 5 + 3);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(h.allocs[i].bytes, 1);
    assert_int_equal(h.allocs[4].bytes, 4096);
    int want[3][2] = {{PLAN_NO_OP, PLAN_NO_OP}, {0, 2}, {3, 4}};
    bool seen[3] = {false, false, false};
    for (size_t i = 5; i < h.nallocs; i++)
        for (int k = 0; k < 3; k++)
            if (h.allocs[i].birth == want[k][0] && h.allocs[i].death == want[k][1]) {
                expect_slab(&h, i, want[k][0], want[k][1]);
                seen[k] = true;
            }
    assert_true(seen[0] && seen[1] && seen[2]);
    /* what the device holds at its most: A and B, the unmanaged page, three members' bytes */
    plan p;
    plan_stats st;
    plan_init(&p);
    assert_int_equal(plan_make(&h, PLAN_KIND_SCHEDULED, (4u << 20) + 4096 + 3, &p, &st), PLAN_OK);
    assert_true(st.feasible);
    plan_free(&p);
    plan_init(&p);
    assert_int_equal(plan_make(&h, PLAN_KIND_SCHEDULED, (4u << 20) + 4095, &p, &st), PLAN_OK);
    assert_false(st.feasible);
    plan_free(&p);
    plan_model_free(&h);
    plan_model_free(&m);
}

/* The newest slab full, an older one with room: a member goes to the older one. A holds two
 * 768 KiB cyclic members (1024 blocks free), B two of 1 MiB (full); a 256 KiB member made at
 * op 0 fits in A, so no third slab opens. */
static void test_hold_slabs_older(void **state)
{
    (void)state;
    const char *text = "hw 1 1 1 0\nop 10\nop 10\n"
                       "alloc 768KiB -1 -1 0\nalloc 768KiB -1 -1 0\n"
                       "alloc 1MiB -1 -1 0\nalloc 1MiB -1 -1 0\n"
                       "alloc 256KiB 0 1 0 1\n";
    plan_model m, h;
    char msg[256];
    assert_int_equal(parse(text, &m, msg, sizeof(msg)), PLAN_OK);
    plan_hold_rules r = {.granule = PLAN_RULES_GRANULE,
                         .page = PLAN_RULES_PAGE,
                         .min_managed = 65536,
                         .slab_max = PLAN_RULES_SLAB_MAX};
    plan_hold_info info;
    plan_model_init(&h);
    assert_int_equal(plan_model_hold(&m, &r, &h, &info), PLAN_OK);
    assert_true(info.slab_chunks == 2 && info.slab_lives == 2);
    assert_int_equal(h.nallocs, 7);
    expect_slab(&h, 5, PLAN_NO_OP, PLAN_NO_OP);
    expect_slab(&h, 6, PLAN_NO_OP, PLAN_NO_OP);
    plan_model_free(&h);
    plan_model_free(&m);
}

/* A model from a trace (members counted in blocks) planned as libshim holds it: the unmovable
 * pinned, the members 1 byte each, their slab after the model's allocations (all pinned). */
static void test_pin_slabs(void **state)
{
    (void)state;
    const char *text = "hw 1 1 1 0\nop 10\nop 10\nop 10\n"
                       "alloc 4MiB -1 -1 1\n"  /* a unit */
                       "alloc 4096 0 1 0\n"    /* unmanaged, pinned */
                       "alloc 300032 1 2 1\n"; /* a member's blocks */
    plan_model m, h;
    char msg[256];
    assert_int_equal(parse(text, &m, msg, sizeof(msg)), PLAN_OK);
    bool movable[3] = {true, false, false}, member[3] = {false, false, true};
    plan_hold_info info;
    plan_model_init(&h);
    assert_int_equal(plan_model_pin_slabs(&m, movable, member, PLAN_RULES_GRANULE, &h, &info),
                     PLAN_OK);
    assert_int_equal(h.nallocs, 4);
    assert_int_equal(h.allocs[0].bytes, 4u << 20);
    assert_int_equal(h.allocs[0].ntouch, 1); /* movable: its own touches */
    assert_int_equal(h.allocs[1].bytes, 4096);
    assert_int_equal(h.allocs[1].ntouch, 2); /* pinned over its life */
    assert_int_equal(h.allocs[2].bytes, 1);
    expect_slab(&h, 3, 1, 2);
    assert_true(info.members == 1 && info.member_bytes == 300032 && info.slab_chunks == 1);
    plan_model_free(&h);
    assert_int_equal(plan_model_pin_slabs(&m, movable, member, 3 << 20, &h, NULL),
                     PLAN_ERR_INVALID);
    plan_model_free(&h);
    plan_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_values),   cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_parse_moved),    cmocka_unit_test(test_parse_embedded_nul),
        cmocka_unit_test(test_sizes),          cmocka_unit_test(test_write_round_trip),
        cmocka_unit_test(test_gaps_and_floor), cmocka_unit_test(test_plan_check),
        cmocka_unit_test(test_generators),     cmocka_unit_test(test_hold),
        cmocka_unit_test(test_hold_slabs),     cmocka_unit_test(test_hold_slabs_older),
        cmocka_unit_test(test_pin_slabs),      cmocka_unit_test(test_parse_idle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
