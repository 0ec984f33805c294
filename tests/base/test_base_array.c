/* test_base_array.c — the base room's growable array (planner/base/base_array.h): the capacity
 * doubles from BASE_ARRAY_FIRST and keeps the elements; a size that would overflow, and memory
 * that runs out (realloc fails: --wrap=realloc,malloc), leave the array as it was. */
#include "base_array.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

/* realloc fails while fail_realloc is set, and counts its calls; malloc too, since the compiler
   may make a realloc of a pointer it knows is NULL a malloc. */
static int fail_realloc, reallocs;
void *__real_realloc(void *p, size_t size);
void *__wrap_realloc(void *p, size_t size);
void *__wrap_realloc(void *p, size_t size)
{
    reallocs++;
    return fail_realloc ? NULL : __real_realloc(p, size);
}
void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_malloc(size_t size)
{
    reallocs++;
    return fail_realloc ? NULL : __real_malloc(size);
}

/* Growth doubles from BASE_ARRAY_FIRST to the first capacity that holds what is needed, and the
   elements stored stay; room already there costs nothing. */
static void test_doubles_and_keeps(void **state)
{
    (void)state;
    uint32_t *a = NULL;
    size_t cap = 0, n = 0;
    assert_int_equal(base_array_grow((void **)&a, &cap, 1, sizeof *a), 0);
    assert_int_equal(cap, BASE_ARRAY_FIRST);
    for (; n < 1000; n++) {
        assert_int_equal(base_array_grow((void **)&a, &cap, n + 1, sizeof *a), 0);
        a[n] = (uint32_t)(n * 7);
    }
    assert_int_equal(cap, 1024); /* 64, 128, ..., 1024 */
    for (size_t i = 0; i < n; i++)
        assert_int_equal(a[i], i * 7);
    reallocs = 0;
    assert_int_equal(base_array_grow((void **)&a, &cap, 1024, sizeof *a), 0);
    assert_int_equal(reallocs, 0);
    assert_int_equal(base_array_grow((void **)&a, &cap, 5000, sizeof *a), 0); /* one step */
    assert_int_equal(cap, 8192);
    assert_int_equal(reallocs, 1);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(a[i], i * 7);
    free(a);
}

/* A capacity or a byte count past SIZE_MAX, or elements of no size, fail with the array as it
   was (and no allocation tried). */
static void test_overflow(void **state)
{
    (void)state;
    char *a = NULL;
    size_t cap = 0;
    assert_int_equal(base_array_grow((void **)&a, &cap, 10, 1), 0);
    a[0] = 'x';
    char *was = a;
    reallocs = 0;
    assert_int_equal(base_array_grow((void **)&a, &cap, SIZE_MAX, 1), -1);
    assert_int_equal(base_array_grow((void **)&a, &cap, 100, SIZE_MAX / 64), -1);
    assert_int_equal(base_array_grow((void **)&a, &cap, 100, 0), -1);
    assert_int_equal(reallocs, 0);
    assert_ptr_equal(a, was);
    assert_int_equal(cap, BASE_ARRAY_FIRST);
    assert_int_equal(a[0], 'x');
    free(a);
}

/* Memory that runs out: -1, the pointer and the capacity as they were, the elements intact;
   the next try, with memory, grows. The first growth of an empty array the same. */
static void test_out_of_memory(void **state)
{
    (void)state;
    uint64_t *a = NULL;
    size_t cap = 0;
    fail_realloc = 1;
    assert_int_equal(base_array_grow((void **)&a, &cap, 1, sizeof *a), -1);
    assert_null(a);
    assert_int_equal(cap, 0);
    fail_realloc = 0;
    assert_int_equal(base_array_grow((void **)&a, &cap, 64, sizeof *a), 0);
    for (size_t i = 0; i < 64; i++)
        a[i] = i + 1;
    uint64_t *was = a;
    fail_realloc = 1;
    assert_int_equal(base_array_grow((void **)&a, &cap, 65, sizeof *a), -1);
    fail_realloc = 0;
    assert_ptr_equal(a, was);
    assert_int_equal(cap, 64);
    for (size_t i = 0; i < 64; i++)
        assert_int_equal(a[i], i + 1);
    assert_int_equal(base_array_grow((void **)&a, &cap, 65, sizeof *a), 0);
    assert_int_equal(cap, 128);
    assert_int_equal(a[63], 64);
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_doubles_and_keeps),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
