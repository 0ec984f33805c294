/* test_scan.c — the launch scan (shim/core/shim_scan.c) against a naive oracle: every allocation
 * the words point into, each once, in first-seen order, for word counts on both sides of the linear
 * / stack / thread-buffer limits and past CUDA's parameter limit; and the same answer when the
 * thread's buffer cannot grow (malloc fails: linked with --wrap=malloc). */
#include "shim_core.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define NALLOC 300
#define BASE   0x100000000ull
#define SPAN   ((uint64_t)1 << 20)

/* What shim_registry.c needs from the rest of the shim. */
static uint64_t next_id;
uint64_t shim_new_id(void)
{
    return ++next_id;
}

void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n);
static bool malloc_fails;
void *__wrap_malloc(size_t n)
{
    return malloc_fails ? NULL : __real_malloc(n);
}

/* Allocation k covers [BASE + k * SPAN, + SPAN / 2): the other half is in none. */
static void register_allocations(void)
{
    static bool done;
    if (done)
        return;
    shim_log_open(0, NULL, 0);
    for (int k = 0; k < NALLOC; k++)
        assert_int_not_equal(shim_registry_add(BASE + k * SPAN, SPAN / 2, PLAN_MEM_PLAIN), 0);
    done = true;
}

/* n pseudo-random words: pointers into allocations (often the same ones), addresses in none,
   small integers. */
static void make_words(uint64_t *w, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t r = seed >> 33;
        switch (r % 4) {
        case 0:
            w[i] = r % 1000;
            break;
        case 1:
            w[i] = BASE + (r % NALLOC) * SPAN + SPAN / 2 + 64;
            break; /* in no allocation */
        default:
            w[i] = BASE + (r % (NALLOC / 2 + i % (NALLOC / 2))) * SPAN + (r % 4096) * 8;
        }
    }
}

/* The naive answer (quadratic) from the words a scan reads: at most SHIM_SCAN_MAX_WORDS. */
static size_t oracle(const uint64_t *w, size_t n, uint64_t *ids)
{
    size_t m = 0;
    for (size_t i = 0; i < n && i < SHIM_SCAN_MAX_WORDS; i++) {
        uint64_t id = w[i] >= 4096 ? shim_registry_find(w[i]) : 0;
        bool seen = false;
        for (size_t j = 0; j < m && !seen; j++)
            seen = ids[j] == id;
        if (id && !seen)
            ids[m++] = id;
    }
    return m;
}

/* Scans w through an extra buffer and through kernelParams (one 8-byte parameter per word) and
   checks both answers against the oracle; expect_shared: the thread's buffer cannot grow. */
static void check_scan(const uint64_t *w, size_t n, bool expect_shared)
{
    static uint64_t want[SHIM_SCAN_MAX_WORDS];
    size_t m = oracle(w, n, want);
    size_t size = n * 8;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, (void *)w, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    struct shim_func none = {.id = 1};
    struct shim_scan s;
    shim_scan_params(&none, NULL, extra, &s);
    assert_int_equal(s.n, m);
    assert_memory_equal(s.ids, want, m * sizeof *want);
    assert_int_equal(s.locked, expect_shared && n > SHIM_SCAN_LOCAL);
    shim_scan_release(&s);

    size_t np = n < SHIM_SCAN_MAX_WORDS ? n : SHIM_SCAN_MAX_WORDS;
    struct shim_word *words = calloc(np ? np : 1, sizeof *words);
    void **params = calloc(np ? np : 1, sizeof *params);
    assert_non_null(words);
    assert_non_null(params);
    for (size_t i = 0; i < np; i++) {
        words[i] = (struct shim_word){(uint16_t)i, 0};
        params[i] = (void *)&w[i];
    }
    struct shim_func fn = {.id = 2, .nparams = (int)np, .nwords = (uint32_t)np, .words = words};
    shim_scan_params(&fn, params, NULL, &s);
    assert_int_equal(s.n, m);
    assert_memory_equal(s.ids, want, m * sizeof *want);
    shim_scan_release(&s);
    free(params);
    free(words);
}

static const size_t counts[] = {0, 1, 2, 8, 9, 63, 64, 65, 100, 128, 129, 1000, 4095, 4096, 5000};

static void test_every_allocation_once(void **state)
{
    (void)state;
    register_allocations();
    static uint64_t w[5000];
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        make_words(w, counts[c], counts[c] + 1);
        check_scan(w, counts[c], false);
    }
}

static void test_same_answer_without_memory(void **state)
{
    (void)state;
    register_allocations();
    static uint64_t w[5000];
    malloc_fails = true; /* in a fresh thread (below): it has no buffer yet */
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        make_words(w, counts[c], 7 * counts[c] + 3);
        check_scan(w, counts[c], true);
    }
    malloc_fails = false;
}

static void *run_without_memory(void *arg)
{
    test_same_answer_without_memory(arg);
    return NULL;
}

static void test_thread_without_memory(void **state)
{
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, run_without_memory, state), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_allocation_once),
        cmocka_unit_test(test_thread_without_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
