/* test_join.c — the ET-to-Kineto join (tools/import/import_et_join.c) on hand-made traces:
 * each ET thread goes to the Kineto thread whose operator names line up best, and the names
 * line up in order, skipping what only one side recorded (either side), operators outside the
 * step window left out. */
#include "import_et.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MAXN 16

struct fixture {
    ie_node node[MAXN];
    ik_span op[MAXN];
    ie_trace e;
    ik_trace t;
};

/* ET nodes of thread tid, named by names (NULL-terminated), in rf order after those given. */
static void et_thread(struct fixture *f, int64_t tid, const char *const *names)
{
    for (; *names; names++) {
        ie_node *n = &f->node[f->e.nnode];
        *n = (ie_node){.id = (int64_t)f->e.nnode + 1,
                       .rf = (int64_t)f->e.nnode + 1,
                       .tid = tid,
                       .name = (char *)*names,
                       .kineto = -1,
                       .parent_ix = -1};
        f->e.nnode++;
    }
}

/* Kineto CPU operators of thread tid, one a microsecond from t0. */
static void kineto_thread(struct fixture *f, int64_t tid, double t0, const char *const *names)
{
    for (; *names; names++, t0++) {
        f->op[f->t.nop++] = (ik_span){.ts = t0,
                                      .end = t0 + 0.5,
                                      .tid = tid,
                                      .ext = -1,
                                      .rf = -1,
                                      .num = -1,
                                      .name = (char *)*names};
    }
}

static void fixture_init(struct fixture *f)
{
    memset(f, 0, sizeof *f);
    f->e.node = f->node;
    f->t.op = f->op;
}

/* Joins f's traces within [start, end); returns the count joined. */
static long join(struct fixture *f, double start, double end)
{
    ik_step st = {.start = start, .end = end, .device = 0};
    size_t *order = ie_op_order(&f->t);
    assert_non_null(order);
    long n = ie_join(&f->e, &f->t, &st, order);
    free(order);
    return n;
}

/* The Kineto operator node i joined, by name and thread, or NULL. */
static const ik_span *joined(const struct fixture *f, size_t i)
{
    return f->node[i].kineto < 0 ? NULL : &f->op[f->node[i].kineto];
}

static void test_threads_pair_by_names(void **state)
{
    (void)state;
    static struct fixture f;
    fixture_init(&f);
    et_thread(&f, 1, (const char *const[]){"linear", "relu", "mm", NULL});
    et_thread(&f, 2, (const char *const[]){"add", "mul", NULL});
    kineto_thread(&f, 10, 0, (const char *const[]){"add", "mul", NULL});
    kineto_thread(&f, 20, 0, (const char *const[]){"linear", "relu", "mm", NULL});
    assert_int_equal(join(&f, -INFINITY, INFINITY), 5);
    for (size_t i = 0; i < 5; i++) {
        assert_non_null(joined(&f, i));
        assert_string_equal(joined(&f, i)->name, f.node[i].name);
        assert_int_equal(joined(&f, i)->tid, i < 3 ? 20 : 10);
    }
}

/* An operator only Kineto recorded (x) and one only the ET recorded (y) are skipped over; the
   rest join in order. */
static void test_names_line_up_past_extras(void **state)
{
    (void)state;
    static struct fixture f;
    fixture_init(&f);
    et_thread(&f, 1, (const char *const[]){"a", "b", "c", "y", "d", "e", NULL});
    kineto_thread(&f, 7, 0, (const char *const[]){"a", "x", "b", "c", "d", "e", NULL});
    assert_int_equal(join(&f, -INFINITY, INFINITY), 5);
    const char *want[] = {"a", "b", "c", NULL, "d", "e"};
    const long at[] = {0, 2, 3, -1, 4, 5};
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(f.node[i].kineto, at[i]);
        if (want[i])
            assert_string_equal(joined(&f, i)->name, want[i]);
    }
}

/* Kineto operators outside the step window are not joined: the ET's nodes go to the window's. */
static void test_only_the_window_joins(void **state)
{
    (void)state;
    static struct fixture f;
    fixture_init(&f);
    et_thread(&f, 1, (const char *const[]){"fwd", "bwd", NULL});
    kineto_thread(&f, 3, 0, (const char *const[]){"fwd", "bwd", "fwd", "bwd", NULL});
    assert_int_equal(join(&f, 2, 4), 2);
    assert_int_equal(f.node[0].kineto, 2); /* the second step's, at t = 2 and 3 */
    assert_int_equal(f.node[1].kineto, 3);
}

/* Names that never match join nothing. */
static void test_no_common_name_joins_nothing(void **state)
{
    (void)state;
    static struct fixture f;
    fixture_init(&f);
    et_thread(&f, 1, (const char *const[]){"p", "q", NULL});
    kineto_thread(&f, 3, 0, (const char *const[]){"r", "s", NULL});
    assert_int_equal(join(&f, -INFINITY, INFINITY), 0);
    assert_int_equal(f.node[0].kineto, -1);
    assert_int_equal(f.node[1].kineto, -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_pair_by_names),
        cmocka_unit_test(test_names_line_up_past_extras),
        cmocka_unit_test(test_only_the_window_joins),
        cmocka_unit_test(test_no_common_name_joins_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
