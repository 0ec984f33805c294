/* test_base_map.c — the base room's map (planner/base/base_map.h): keys that share a home slot,
 * runs that wrap round the end of the table, erases inside an iteration, a table that cannot grow
 * (calloc fails: --wrap=calloc), key 0, many keys, and maps on two threads at once. */
#include "base_map.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* calloc fails while fail_calloc is set (only the map's tables come from calloc here). */
static int fail_calloc;
void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size)
{
    return fail_calloc ? NULL : __real_calloc(n, size);
}

/* A key's home slot in a table of 16 (the first table a map takes). */
static size_t home16(uint64_t key)
{
    return (size_t)(base_map_hash(key) >> 60);
}

/* The first n keys from 1 up whose home slot in a table of 16 is slot. */
static void keys_at(size_t slot, uint64_t *out, size_t n)
{
    for (uint64_t k = 1; n > 0; k++)
        if (home16(k) == slot)
            *out++ = k, n--;
}

/* Six keys in runs that wrap round the end of a table of 16: homes 15, 0, 0, 2, 14, 14, which
   put in that order stand in slots 15, 0, 1, 2, 14, 3 (some at home, some pushed on). */
enum { WRAP_KEYS = 6 };
static void wrapping_keys(uint64_t k[WRAP_KEYS])
{
    keys_at(15, k, 1);
    keys_at(0, k + 1, 2);
    keys_at(2, k + 3, 1);
    keys_at(14, k + 4, 2);
}

static uint64_t value_of(const base_map *m, uint64_t key)
{
    uint64_t v = 0;
    assert_true(base_map_find(m, key, &v));
    return v;
}

/* Insert, find, replace and erase; an absent key is not found and its erase changes nothing. */
static void test_put_find_erase(void **state)
{
    (void)state;
    base_map m = BASE_MAP_INIT;
    assert_false(base_map_find(&m, 7, NULL));
    assert_false(base_map_erase(&m, 7, NULL));
    assert_int_equal(base_map_put(&m, 7, 70), 0);
    assert_int_equal(base_map_put(&m, 8, 80), 0);
    assert_int_equal(base_map_count(&m), 2);
    assert_int_equal(value_of(&m, 7), 70);
    assert_int_equal(base_map_put(&m, 7, 71), 0); /* replaced, not added */
    assert_int_equal(base_map_count(&m), 2);
    assert_int_equal(value_of(&m, 7), 71);
    uint64_t old = 0;
    assert_true(base_map_erase(&m, 7, &old));
    assert_int_equal(old, 71);
    assert_false(base_map_find(&m, 7, NULL));
    assert_false(base_map_erase(&m, 7, &old));
    assert_int_equal(value_of(&m, 8), 80);
    assert_int_equal(base_map_count(&m), 1);
    int x;
    assert_int_equal(base_map_put_ptr(&m, 9, &x), 0);
    assert_ptr_equal(base_map_find_ptr(&m, 9), &x);
    assert_null(base_map_find_ptr(&m, 10));
    base_map_free(&m);
    assert_int_equal(base_map_count(&m), 0);
    assert_false(base_map_find(&m, 8, NULL));
}

/* Key 0 is a key like any other: held beside the table, counted, found, visited, erased. */
static int count_visit(uint64_t key, uint64_t val, void *arg)
{
    (void)key;
    (void)val;
    ++*(int *)arg;
    return 0;
}

static void test_key_zero(void **state)
{
    (void)state;
    base_map m = BASE_MAP_INIT;
    assert_false(base_map_find(&m, 0, NULL));
    assert_int_equal(base_map_put(&m, 0, 5), 0);
    assert_int_equal(base_map_count(&m), 1);
    assert_int_equal(value_of(&m, 0), 5);
    assert_int_equal(base_map_put(&m, 3, 0), 0); /* a value of 0 is a value */
    assert_int_equal(value_of(&m, 3), 0);
    int visits = 0;
    assert_int_equal(base_map_each(&m, count_visit, &visits), 0);
    assert_int_equal(visits, 2);
    uint64_t old = 1;
    assert_true(base_map_erase(&m, 0, &old));
    assert_int_equal(old, 5);
    assert_false(base_map_find(&m, 0, NULL));
    assert_int_equal(base_map_count(&m), 1);
    base_map_free(&m);
}

/* Keys that share a home slot, in runs that wrap from the end of the table to its start
   (wrapping_keys): erasing any one leaves every other found, so an entry moves back only into a
   slot it may stand in. */
static void test_collisions_and_wrap(void **state)
{
    (void)state;
    enum { N = WRAP_KEYS };
    uint64_t k[N];
    wrapping_keys(k);
    for (int gone = 0; gone < N; gone++) {
        base_map m = BASE_MAP_INIT;
        for (int i = 0; i < N; i++)
            assert_int_equal(base_map_put(&m, k[i], 100 + (uint64_t)i), 0);
        assert_int_equal(m.cap, 16);
        assert_true(base_map_erase(&m, k[gone], NULL));
        for (int i = 0; i < N; i++) {
            if (i == gone)
                assert_false(base_map_find(&m, k[i], NULL));
            else
                assert_int_equal(value_of(&m, k[i]), 100 + (uint64_t)i);
        }
        assert_int_equal(base_map_count(&m), N - 1);
        base_map_free(&m);
    }
}

/* Insertions and erases without end keep the table at the size its most keys at once needed,
   and a search for a key never held still ends (no slot is left marked as once used). */
static void test_no_tombstones(void **state)
{
    (void)state;
    base_map m = BASE_MAP_INIT;
    for (uint64_t k = 1; k <= 100000; k++) {
        assert_int_equal(base_map_put(&m, k, k), 0);
        if (k > 4)
            assert_true(base_map_erase(&m, k - 4, NULL));
    }
    assert_int_equal(m.cap, 16);
    assert_int_equal(base_map_count(&m), 4);
    for (uint64_t k = 99997; k <= 100000; k++)
        assert_int_equal(value_of(&m, k), k);
    assert_false(base_map_find(&m, 123456789, NULL));
    base_map_free(&m);
}

/* What an iteration saw: each key's visits (keys sorted, found by bsearch), and which keys it
   erases when it visits them. */
struct walk {
    base_map *m;
    const uint64_t *keys;
    size_t n;
    int *visits;
    const bool *erase; /* per key: erased when visited */
    size_t stop_after; /* 0: never stops */
    size_t seen;
};

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int visit(uint64_t key, uint64_t val, void *arg)
{
    struct walk *w = arg;
    const uint64_t *at = bsearch(&key, w->keys, w->n, sizeof *w->keys, cmp_u64);
    assert_non_null(at);
    assert_int_equal(val, key ^ 0x5555);
    w->visits[at - w->keys]++;
    if (w->erase && w->erase[at - w->keys])
        assert_true(base_map_erase(w->m, key, NULL));
    return w->stop_after && ++w->seen == w->stop_after ? 9 : 0;
}

/* Fills a map with keys[0..n) (sorted, distinct; value key ^ 0x5555) in the order given by
   order[0..n) (indices), walks it erasing the keys erase[] names, and checks that every key was
   visited once and that exactly the erased ones are gone. */
static void walk_and_check(const uint64_t *keys, const size_t *order, size_t n, const bool *erase)
{
    base_map m = BASE_MAP_INIT;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = keys[order ? order[i] : i];
        assert_int_equal(base_map_put(&m, k, k ^ 0x5555), 0);
    }
    int *visits = calloc(n, sizeof *visits);
    assert_non_null(visits);
    struct walk w = {&m, keys, n, visits, erase, 0, 0};
    assert_int_equal(base_map_each(&m, visit, &w), 0);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(visits[i], 1);
        assert_int_equal(base_map_find(&m, keys[i], NULL), !erase[i]);
        kept += !erase[i];
    }
    assert_int_equal(base_map_count(&m), kept);
    free(visits);
    base_map_free(&m);
}

/* Runs that wrap round the end of the table (wrapping_keys), filled in two orders, and every
   choice of keys to erase during the walk: an erase at the end of the table moves entries back
   across it, into slots a walk from slot 0 would have passed already. */
static void test_erase_during_iteration_wrapping(void **state)
{
    (void)state;
    enum { N = WRAP_KEYS };
    uint64_t k[N];
    wrapping_keys(k);
    qsort(k, N, sizeof *k, cmp_u64);
    const size_t forward[N] = {0, 1, 2, 3, 4, 5}, backward[N] = {5, 4, 3, 2, 1, 0};
    for (unsigned subset = 0; subset < 1u << N; subset++) {
        bool erase[N];
        for (int i = 0; i < N; i++)
            erase[i] = subset >> i & 1;
        walk_and_check(k, forward, N, erase);
        walk_and_check(k, backward, N, erase);
    }
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* Thousands of random keys (and 0), every key erased, or one in three, during the walk. */
static void test_erase_during_iteration_many(void **state)
{
    (void)state;
    enum { N = 5000 };
    uint64_t *keys = malloc(N * sizeof *keys), s = 88172645463325252ull;
    bool *erase = malloc(N * sizeof *erase);
    assert_non_null(keys);
    assert_non_null(erase);
    keys[0] = 0;
    for (size_t i = 1; i < N; i++)
        keys[i] = rnd(&s) >> (i % 40); /* small keys too: dense runs */
    qsort(keys, N, sizeof *keys, cmp_u64);
    size_t n = 1;
    for (size_t i = 1; i < N; i++)
        if (keys[i] != keys[n - 1])
            keys[n++] = keys[i];
    for (size_t i = 0; i < n; i++)
        erase[i] = true;
    walk_and_check(keys, NULL, n, erase);
    for (size_t i = 0; i < n; i++)
        erase[i] = base_map_hash(keys[i]) % 3 == 0;
    walk_and_check(keys, NULL, n, erase);
    free(erase);
    free(keys);
}

/* A walk stops at fn's first non-zero answer and returns it. */
static void test_each_stops(void **state)
{
    (void)state;
    base_map m = BASE_MAP_INIT;
    uint64_t keys[20];
    for (uint64_t k = 1; k <= 20; k++) {
        keys[k - 1] = k;
        assert_int_equal(base_map_put(&m, k, k ^ 0x5555), 0);
    }
    int visits[20] = {0};
    struct walk w = {&m, keys, 20, visits, NULL, 3, 0};
    assert_int_equal(base_map_each(&m, visit, &w), 9);
    int total = 0;
    for (int i = 0; i < 20; i++)
        total += visits[i];
    assert_int_equal(total, 3);
    base_map_free(&m);
}

/* A table that cannot grow: the insertion that needs it fails with the map as it was, and the
   operations that need no memory still work; the first table of an empty map the same. */
static void test_growth_failure(void **state)
{
    (void)state;
    base_map m = BASE_MAP_INIT;
    fail_calloc = 1;
    assert_int_equal(base_map_put(&m, 1, 1), -1);
    assert_int_equal(base_map_count(&m), 0);
    assert_int_equal(m.cap, 0);
    assert_int_equal(base_map_put(&m, 0, 1), 0); /* key 0 needs no table */
    assert_true(base_map_erase(&m, 0, NULL));
    fail_calloc = 0;
    for (uint64_t k = 1; k <= 8; k++) /* a table of 16 holds 8 */
        assert_int_equal(base_map_put(&m, k, k * 10), 0);
    assert_int_equal(m.cap, 16);
    fail_calloc = 1;
    assert_int_equal(base_map_put(&m, 9, 90), -1);
    assert_int_equal(base_map_reserve(&m, 100), -1);
    assert_int_equal(m.cap, 16);
    assert_int_equal(base_map_count(&m), 8);
    assert_false(base_map_find(&m, 9, NULL));
    for (uint64_t k = 1; k <= 8; k++)
        assert_int_equal(value_of(&m, k), k * 10);
    assert_int_equal(base_map_put(&m, 3, 33), 0); /* a key held: no growth */
    assert_int_equal(value_of(&m, 3), 33);
    assert_true(base_map_erase(&m, 4, NULL));
    assert_int_equal(base_map_put(&m, 9, 90), 0); /* room again */
    assert_int_equal(base_map_put(&m, 10, 100), -1);
    fail_calloc = 0;
    assert_int_equal(base_map_put(&m, 10, 100), 0);
    assert_int_equal(m.cap, 32);
    assert_int_equal(base_map_count(&m), 9);
    assert_int_equal(value_of(&m, 9), 90);
    assert_int_equal(value_of(&m, 3), 33);
    assert_false(base_map_find(&m, 4, NULL));
    assert_int_equal(base_map_reserve(&m, SIZE_MAX / 2), -1); /* beyond any table */
    assert_int_equal(m.cap, 32);
    base_map_free(&m);
}

/* Reserved room: the insertions up to it never allocate. */
static void test_reserve(void **state)
{
    (void)state;
    base_map m = BASE_MAP_INIT;
    assert_int_equal(base_map_reserve(&m, 1000), 0);
    size_t cap = m.cap;
    assert_true(cap >= 2000);
    fail_calloc = 1;
    for (uint64_t k = 1; k <= 1000; k++)
        assert_int_equal(base_map_put(&m, k, k), 0);
    fail_calloc = 0;
    assert_int_equal(m.cap, cap);
    assert_int_equal(base_map_count(&m), 1000);
    base_map_free(&m);
}

/* Many keys (addresses a MiB apart, as the registry holds, or random ones from seed): filled
   through the growths, all found, half erased, the rest still found. How many answers were
   wrong (cmocka's checks stay on the main thread). */
static size_t fill_errors(uint64_t seed)
{
    enum { N = 200000 };
    base_map m = BASE_MAP_INIT;
    size_t wrong = 0;
    uint64_t s = seed, v = 0;
    for (uint64_t i = 0; i < N; i++)
        wrong += base_map_put(&m, seed ? rnd(&s) : (i + 1) << 20, i) != 0;
    wrong += base_map_count(&m) != N || m.cap < 2 * N;
    s = seed;
    for (uint64_t i = 0; i < N; i++) {
        uint64_t k = seed ? rnd(&s) : (i + 1) << 20;
        wrong += !base_map_find(&m, k, &v) || v != i;
        if (i % 2)
            wrong += !base_map_erase(&m, k, NULL);
    }
    s = seed;
    for (uint64_t i = 0; i < N; i++)
        wrong += base_map_find(&m, seed ? rnd(&s) : (i + 1) << 20, NULL) != (i % 2 == 0);
    wrong += base_map_count(&m) != N / 2;
    base_map_free(&m);
    return wrong;
}

static void test_many_keys(void **state)
{
    (void)state;
    assert_int_equal(fill_errors(0), 0);
    assert_int_equal(fill_errors(2463534242ull), 0);
}

/* Maps on two threads at once share nothing (no state outside the map; TSan checks it). */
static void *fill_thread(void *arg)
{
    return (void *)(uintptr_t)fill_errors((uint64_t)(uintptr_t)arg);
}

static void test_two_threads(void **state)
{
    (void)state;
    pthread_t t;
    void *wrong = NULL;
    assert_int_equal(pthread_create(&t, NULL, fill_thread, (void *)(uintptr_t)12345), 0);
    assert_int_equal(fill_errors(67890), 0);
    assert_int_equal(pthread_join(t, &wrong), 0);
    assert_int_equal((uintptr_t)wrong, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_find_erase),
        cmocka_unit_test(test_key_zero),
        cmocka_unit_test(test_collisions_and_wrap),
        cmocka_unit_test(test_no_tombstones),
        cmocka_unit_test(test_erase_during_iteration_wrapping),
        cmocka_unit_test(test_erase_during_iteration_many),
        cmocka_unit_test(test_each_stops),
        cmocka_unit_test(test_growth_failure),
        cmocka_unit_test(test_reserve),
        cmocka_unit_test(test_many_keys),
        cmocka_unit_test(test_two_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
