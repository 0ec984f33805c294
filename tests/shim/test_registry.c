/* test_registry.c — the registry of live allocations (shim/core/shim_registry.c) by start
 * address: an allocation comes back once from its removal, with what it was registered with; one
 * registered at the start of a live one replaces it (the earlier one was freed unseen); every
 * live allocation is visited once; removing a range takes exactly the allocations of its kind
 * inside it, however many; the device bytes' peak leaves pinned host memory out. */
#include "shim_core.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MIB ((uint64_t)1 << 20)

/* What shim_registry.c needs from the rest of the shim. */
static uint64_t next_id;
uint64_t shim_new_id(void)
{
    return ++next_id;
}

/* Runs first: the peak is the process's. A host allocation is not device memory; an allocation
   at the start of a live one takes its place and its bytes. */
static void test_replace_and_peak(void **state)
{
    (void)state;
    uint64_t at = 0x200000000ull;
    assert_int_equal(shim_registry_device_peak(), 0);
    assert_int_not_equal(shim_registry_add(0x7f0000000000ull, 8 * MIB, PLAN_MEM_HOST), 0);
    assert_int_equal(shim_registry_device_peak(), 0);
    uint64_t first = shim_registry_add(at, 2 * MIB, PLAN_MEM_PLAIN);
    assert_int_not_equal(first, 0);
    assert_int_equal(shim_registry_find(at + 4096), first);
    uint64_t second = shim_registry_add(at, 3 * MIB, PLAN_MEM_ASYNC);
    assert_int_not_equal(second, first);
    assert_int_equal(shim_registry_find(at + 4096), second);
    assert_int_equal(shim_registry_find(at + 2 * MIB + 4096), second);
    assert_int_equal(shim_registry_device_peak(), 3 * MIB); /* not 5: the first is gone */
    struct shim_alloc a;
    assert_true(shim_registry_remove(at, &a));
    assert_int_equal(a.id, second);
    assert_int_equal(a.size, 3 * MIB);
    assert_int_equal(a.kind, PLAN_MEM_ASYNC);
    assert_false(shim_registry_remove(at, &a));
    assert_int_equal(shim_registry_find(at + 4096), 0);
    assert_true(shim_registry_remove(0x7f0000000000ull, &a));
    assert_int_equal(a.kind, PLAN_MEM_HOST);
}

struct tally {
    int n;
    uint64_t bytes;
};

static void count_one(const struct shim_alloc *a, void *ctx)
{
    struct tally *t = ctx;
    t->n++;
    t->bytes += a->size;
}

/* Thousands of allocations, half removed: each removal returns its own, every other one is
   visited once. Address 0 is an address like any other. */
static void test_many_and_each(void **state)
{
    (void)state;
    enum { N = 5000 };
    static uint64_t ids[N];
    uint64_t base = 0x300000000ull;
    for (uint64_t i = 0; i < N; i++)
        assert_int_not_equal(ids[i] = shim_registry_add(base + i * 4096, 100 + i, PLAN_MEM_PLAIN),
                             0);
    uint64_t zero = shim_registry_add(0, 77, PLAN_MEM_PLAIN);
    assert_int_not_equal(zero, 0);
    uint64_t kept = 77;
    for (uint64_t i = 0; i < N; i++) {
        if (i % 2) {
            struct shim_alloc a;
            assert_true(shim_registry_remove(base + i * 4096, &a));
            assert_int_equal(a.id, ids[i]);
            assert_int_equal(a.addr, base + i * 4096);
            assert_int_equal(a.size, 100 + i);
        } else {
            kept += 100 + i;
        }
    }
    struct tally t = {0, 0};
    shim_registry_each(count_one, &t);
    assert_int_equal(t.n, N / 2 + 1);
    assert_int_equal(t.bytes, kept);
    struct shim_alloc a;
    assert_true(shim_registry_remove(0, &a));
    assert_int_equal(a.id, zero);
    for (uint64_t i = 0; i < N; i += 2)
        assert_true(shim_registry_remove(base + i * 4096, &a));
    t = (struct tally){0, 0};
    shim_registry_each(count_one, &t);
    assert_int_equal(t.n, 0);
}

static int unmapped_n;
static uint64_t unmapped_bytes;

static void on_unmapped(const struct shim_alloc *a)
{
    assert_int_equal(a->kind, PLAN_MEM_MAPPED);
    unmapped_n++;
    unmapped_bytes += a->size;
}

/* A range holding 200 mappings (more than one pass of 64) and allocations of another kind, with
   mappings on both sides of it: exactly the 200 are taken, each once. */
static void test_remove_range(void **state)
{
    (void)state;
    uint64_t lo = 0x400000000ull, span = 256 * MIB;
    for (uint64_t i = 0; i < 200; i++)
        assert_int_not_equal(shim_registry_add(lo + i * MIB, MIB, PLAN_MEM_MAPPED), 0);
    for (uint64_t i = 0; i < 10; i++)
        assert_int_not_equal(shim_registry_add(lo + (200 + i) * MIB, MIB, PLAN_MEM_PLAIN), 0);
    assert_int_not_equal(shim_registry_add(lo - MIB, MIB, PLAN_MEM_MAPPED), 0);
    assert_int_not_equal(shim_registry_add(lo + span, MIB, PLAN_MEM_MAPPED), 0);
    shim_registry_remove_range(lo, span, PLAN_MEM_MAPPED, on_unmapped);
    assert_int_equal(unmapped_n, 200);
    assert_int_equal(unmapped_bytes, 200 * MIB);
    struct shim_alloc a;
    assert_false(shim_registry_remove(lo + 17 * MIB, &a));
    struct tally t = {0, 0};
    shim_registry_each(count_one, &t);
    assert_int_equal(t.n, 12);
    for (uint64_t i = 0; i < 10; i++)
        assert_true(shim_registry_remove(lo + (200 + i) * MIB, &a));
    assert_true(shim_registry_remove(lo - MIB, &a));
    assert_true(shim_registry_remove(lo + span, &a));
}

int main(void)
{
    shim_log_open(0, NULL, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replace_and_peak),
        cmocka_unit_test(test_many_and_each),
        cmocka_unit_test(test_remove_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
