/* tests/planner/test_plan_reads.c — bytes read per touch (issue 24): the OP@SIZE token, its
 * errors with FILE:LINE, the writer's round trip, the add function's merge of duplicate touches,
 * and which allocations count as read sparsely. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

static plan_err parse(const char *text, plan_model *m, char *msg, size_t cap)
{
    plan_model_init(m);
    return plan_model_parse(text, strlen(text), "m.txt", m, msg, cap);
}

/* Read bytes of allocation i's k-th touch as stored (0: the whole). */
static uint64_t stored_read(const plan_model *m, size_t i, uint32_t k)
{
    return m->touch_reads ? m->touch_reads[m->allocs[i].touch_first + k] : 0;
}

static void test_parse_reads(void **state)
{
    (void)state;
    const char *text = "hw 1 1 1 0\nop 1\nop 1\nop 1\n"
                       "alloc 1MiB -1 -1 2@4KiB 0 1@300000\n"
                       "alloc 64 0 2 1 2\n";
    plan_model m;
    char msg[256];
    assert_int_equal(parse(text, &m, msg, sizeof(msg)), PLAN_OK);
    assert_non_null(m.touch_reads);
    assert_int_equal(m.allocs[0].ntouch, 3);
    assert_int_equal(m.touches[0], 0); /* sorted with their bytes */
    assert_int_equal(stored_read(&m, 0, 0), 0);
    assert_int_equal(stored_read(&m, 0, 1), 300000);
    assert_int_equal(stored_read(&m, 0, 2), 4096);
    assert_int_equal(stored_read(&m, 1, 0), 0);
    assert_int_equal(plan_touch_read(&m, &m.allocs[0], 0), 1u << 20); /* whole: moved */
    assert_int_equal(plan_touch_read(&m, &m.allocs[0], 2), 4096);
    assert_true(plan_alloc_sparse(&m, 0));
    assert_false(plan_alloc_sparse(&m, 1));
    plan_model_free(&m);
    /* a model without @ keeps no array: every existing model reads as before */
    assert_int_equal(parse("hw 1 1 1 0\nop 1\nalloc 8 0 0 0\n", &m, msg, sizeof(msg)), PLAN_OK);
    assert_null(m.touch_reads);
    assert_false(plan_alloc_sparse(&m, 0));
    plan_model_free(&m);
}

/* Duplicates merge into one touch reading the sum, or the whole when one reads the whole or the
   sum reaches the allocation's bytes. */
static void test_merge(void **state)
{
    (void)state;
    const char *text = "hw 1 1 1 0\nop 1\nop 1\nop 1\n"
                       "alloc 1000 -1 -1 0@100 0@250 1@600 1@400 2@10 2\n";
    plan_model m;
    char msg[256];
    assert_int_equal(parse(text, &m, msg, sizeof(msg)), PLAN_OK);
    assert_int_equal(m.allocs[0].ntouch, 3);
    assert_int_equal(stored_read(&m, 0, 0), 350);
    assert_int_equal(stored_read(&m, 0, 1), 0); /* 600 + 400 reaches 1000 */
    assert_int_equal(stored_read(&m, 0, 2), 0); /* one of them reads the whole */
    plan_model_free(&m);
    /* the add function without reads, and with reads on a second allocation */
    plan_model_init(&m);
    m.hw = (plan_hw){.h2d_gbps = 1, .d2h_gbps = 1, .duplex = 1};
    int32_t t[] = {2, 0, 2};
    uint64_t r[] = {5, 7, 6};
    assert_int_equal(plan_model_add_op(&m, 1, 0), PLAN_OK);
    assert_int_equal(plan_model_add_op(&m, 1, 0), PLAN_OK);
    assert_int_equal(plan_model_add_op(&m, 1, 0), PLAN_OK);
    assert_int_equal(plan_model_add_alloc(&m, 100, -1, -1, t, 3), PLAN_OK);
    assert_null(m.touch_reads);
    assert_int_equal(plan_model_add_alloc_reads(&m, 100, -1, -1, t, r, 3), PLAN_OK);
    assert_non_null(m.touch_reads);
    assert_int_equal(stored_read(&m, 0, 0), 0); /* created zeroed for the earlier touches */
    assert_int_equal(stored_read(&m, 0, 1), 0);
    assert_int_equal(stored_read(&m, 1, 0), 7);
    assert_int_equal(stored_read(&m, 1, 1), 11);
    assert_int_equal(plan_model_check(&m, NULL, msg, sizeof(msg)), PLAN_OK);
    m.touch_reads[m.allocs[1].touch_first] = 101; /* above its bytes */
    assert_int_equal(plan_model_check(&m, NULL, msg, sizeof(msg)), PLAN_ERR_INVALID);
    assert_string_equal(msg, "allocation 1: touch 0 reads 101 bytes, more than its 100");
    plan_model_free(&m);
}

static const struct {
    const char *text, *msg;
} bad[] = {
    {"hw 1 1 1 0\nop 1\nalloc 8 0 0 0@\n",
     "m.txt:3: error: TOUCH@SIZE: SIZE must be a size in [1, 8] (the allocation's bytes), got "
     "'0@'"},
    {"hw 1 1 1 0\nop 1\nalloc 8 0 0 0@0\n",
     "m.txt:3: error: TOUCH@SIZE: SIZE must be a size in [1, 8] (the allocation's bytes), got "
     "'0@0'"},
    {"hw 1 1 1 0\nop 1\n\nalloc 8 -1 -1 0@x\n",
     "m.txt:4: error: TOUCH@SIZE: SIZE must be a size in [1, 8] (the allocation's bytes), got "
     "'0@x'"},
    {"hw 1 1 1 0\nop 1\nalloc 1KiB 0 0 0@1025\n",
     "m.txt:3: error: TOUCH@SIZE: SIZE must be a size in [1, 1024] (the allocation's bytes), got "
     "'0@1025'"},
    {"hw 1 1 1 0\nop 1\nalloc 8 0 0 @4\n",
     "m.txt:3: error: TOUCH must be an integer in [0, 0], got ''"},
    {"hw 1 1 1 0\nop 1\nop 1\nalloc 8 0 0 1@4\n",
     "m.txt:4: error: TOUCH must be an integer in [0, 0], got '1'"},
    {"hw 1 1 1 0\nop 1\nalloc 8 0 0 0@4@4\n",
     "m.txt:3: error: TOUCH@SIZE: SIZE must be a size in [1, 8] (the allocation's bytes), got "
     "'0@4@4'"},
    /* past the first 8 tokens of a line (read by the tail loop) */
    {"hw 1 1 1 0\nop 1\nalloc 8 -1 -1 0 0 0 0 0 0 0@9\n",
     "m.txt:3: error: TOUCH@SIZE: SIZE must be a size in [1, 8] (the allocation's bytes), got "
     "'0@9'"},
};

static void test_parse_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        plan_model m;
        char msg[256];
        assert_int_equal(parse(bad[i].text, &m, msg, sizeof(msg)), PLAN_ERR_PARSE);
        if (strcmp(msg, bad[i].msg) != 0)
            fail_msg("case %zu: got \"%s\", want \"%s\"", i, msg, bad[i].msg);
        assert_null(m.touch_reads); /* freed on error */
    }
}

/* parse(write(m)) == m with read bytes; @SIZE is written only where given, in plain bytes. */
static void test_round_trip(void **state)
{
    (void)state;
    const char *text = "hw 1 1 1 0\nop 1\nop 1\nop 1\n"
                       "alloc 2GiB -1 -1 2@300KiB 0 1@1.5MiB\n"
                       "alloc 64 0 2 1 2\n";
    plan_model m, back;
    char msg[256], *out;
    size_t len;
    assert_int_equal(parse(text, &m, msg, sizeof(msg)), PLAN_OK);
    assert_int_equal(plan_model_write(&m, &out, &len), PLAN_OK);
    assert_non_null(strstr(out, "alloc 2147483648 -1 -1 0 1@1572864 2@307200\n"));
    assert_non_null(strstr(out, "alloc 64 0 2 1 2\n"));
    assert_int_equal(parse(out, &back, msg, sizeof(msg)), PLAN_OK);
    assert_int_equal(back.ntouches, m.ntouches);
    assert_memory_equal(back.touches, m.touches, m.ntouches * sizeof(*m.touches));
    assert_memory_equal(back.touch_reads, m.touch_reads, m.ntouches * sizeof(*m.touch_reads));
    assert_memory_equal(back.allocs, m.allocs, m.nallocs * sizeof(*m.allocs));
    free(out);
    plan_model_free(&back);
    plan_model_free(&m);
}

/* Pinning keeps a movable allocation's read bytes and drops a pinned one's (it reads the whole at
   every operation of its life). */
static void test_pin_keeps_reads(void **state)
{
    (void)state;
    const char *text = "hw 1 1 1 0\nop 1\nop 1\n"
                       "alloc 1000 -1 -1 1@10\n"
                       "alloc 1000 -1 -1 1@10\n";
    plan_model m, p;
    char msg[256];
    assert_int_equal(parse(text, &m, msg, sizeof(msg)), PLAN_OK);
    bool movable[] = {true, false};
    plan_model_init(&p);
    assert_int_equal(plan_model_pin(&m, movable, &p), PLAN_OK);
    assert_true(plan_alloc_sparse(&p, 0));
    assert_false(plan_alloc_sparse(&p, 1));
    assert_int_equal(stored_read(&p, 0, 0), 10);
    plan_model_free(&p);
    plan_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_reads),     cmocka_unit_test(test_merge),
        cmocka_unit_test(test_parse_errors),    cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_pin_keeps_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
