/* test_base_time.c — base_time.h's one deadline: normalised (nanoseconds below a second) for
 * every count of nanoseconds, never before the clock read before it and never after the clock
 * read after it, each offset by the time asked for; and a clock that cannot be read gives a
 * deadline in the past, so a wait on it cannot hang. */
#include "base_time.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static int64_t ns_of(struct timespec t)
{
    return (int64_t)t.tv_sec * BASE_NS_PER_SEC + t.tv_nsec;
}

/* For counts around every carry (none, one just below a second, one second, several), the
   deadline lies between the clock before plus ns and the clock after plus ns. */
static void test_deadline_is_now_plus_ns_normalised(void **state)
{
    (void)state;
    const uint64_t counts[] = {0,           1,         999999999u, 1000000000u, 1000000001u,
                               2500000000u, 10000000u, 20000u,     3999999999u, 86400000000000u};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        struct timespec before, after;
        clock_gettime(CLOCK_MONOTONIC, &before);
        struct timespec d = base_deadline_after(CLOCK_MONOTONIC, counts[i]);
        clock_gettime(CLOCK_MONOTONIC, &after);
        assert_in_range(d.tv_nsec, 0, BASE_NS_PER_SEC - 1);
        assert_true(ns_of(d) >= ns_of(before) + (int64_t)counts[i]);
        assert_true(ns_of(d) <= ns_of(after) + (int64_t)counts[i]);
    }
}

/* A clock that cannot be read: ns after the clock's zero, long past. */
static void test_unreadable_clock_gives_a_past_deadline(void **state)
{
    (void)state;
    struct timespec d = base_deadline_after((clockid_t)-1000, 1500000000u);
    assert_int_equal(d.tv_sec, 1);
    assert_int_equal(d.tv_nsec, 500000000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deadline_is_now_plus_ns_normalised),
        cmocka_unit_test(test_unreadable_clock_gives_a_past_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
