/* tests/planner/test_plan_build.c — the step model builder (planner/plan_build.h): births,
 * deaths and cyclic allocations, touches of launches and copies, the bytes rule of each memory
 * kind, kernel times filled in, the step chosen and where it ends, the link, and the errors. */
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

#define MIB ((uint64_t)1 << 20)

/* The touches of allocation a, as a string "t0 t1 ...", for one comparison that prints both. */
static const char *touches(const plan_model *m, size_t a)
{
    static char buf[256];
    size_t n = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < m->allocs[a].ntouch; i++)
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%d", i ? " " : "",
                              m->touches[m->allocs[a].touch_first + i]);
    return buf;
}

static void expect_alloc(const plan_model *m, size_t a, uint64_t bytes, int32_t birth,
                         int32_t death, const char *touch)
{
    assert_true(a < m->nallocs);
    assert_int_equal(m->allocs[a].bytes, bytes);
    assert_int_equal(m->allocs[a].birth, birth);
    assert_int_equal(m->allocs[a].death, death);
    assert_string_equal(touches(m, a), touch);
}

/* Launch seq of func on stream 7 touching the given ids, timed usec (no time when < 0). */
static void launch(plan_builder *b, uint64_t seq, uint64_t func, double usec, size_t n,
                   const uint64_t *ids)
{
    assert_int_equal(plan_build_launch(b, seq, func, 7, ids, n), PLAN_OK);
    if (usec >= 0)
        assert_int_equal(plan_build_kernel_time(b, seq, usec), PLAN_OK);
}

/* A new builder (the test fails if it cannot be made). */
static plan_builder *new_builder(void)
{
    plan_builder *b = plan_build_new();
    assert_non_null(b);
    return b;
}

/* Builds step `step` of b into the fresh model *m (info may be NULL); the test fails unless
   that succeeds. */
static void build(plan_builder *b, int64_t step, plan_model *m, plan_build_info *info)
{
    char msg[256];
    plan_model_init(m);
    assert_int_equal(plan_build_model(b, step, m, info, msg, sizeof msg), PLAN_OK);
}

/* A training-like program of three steps of four launches (seq 2..13 after two warm-up
 * launches), step k starting at s = 2 + 4k:
 *   id 1     weight, 4 MiB, made before any launch, touched by launches 0 and 3 of every step
 *            and by a copy before launch 2;
 *   id 10+k  activation, 1 MiB, made before launch 0 of step k, freed after launch 2;
 *   id 20+k  gradient, 3 MiB (4 MiB on the device), made before launch 1, touched by launches 1
 *            and 3, and by launch 1 of the next step, which frees it (it lives across the step
 *            boundary);
 *   id 30+k  temporary, made and freed between launches 1 and 2 (live during no launch). */
static plan_builder *program(void)
{
    plan_builder *b = new_builder();
    assert_int_equal(plan_build_alloc(b, 1, 4 * MIB, PLAN_MEM_PLAIN, 0x1000000, 0, 0), PLAN_OK);
    launch(b, 0, 99, -1, 0, NULL);
    launch(b, 1, 99, -1, 0, NULL);
    for (uint64_t k = 0; k < 3; k++) {
        uint64_t s = 2 + 4 * k, act = 10 + k, grad = 20 + k;
        assert_int_equal(plan_build_alloc(b, act, MIB, PLAN_MEM_PLAIN, 0, 0, s), PLAN_OK);
        launch(b, s, 100, 10, 2, (uint64_t[]){1, act});
        assert_int_equal(plan_build_alloc(b, grad, 3 * MIB, PLAN_MEM_PLAIN, 0, 0, s + 1), PLAN_OK);
        launch(b, s + 1, 101, 20, k ? 3 : 2, (uint64_t[]){act, grad, grad - 1});
        if (k > 0)
            assert_int_equal(plan_build_free_alloc(b, grad - 1, 0, s + 2), PLAN_OK);
        assert_int_equal(plan_build_alloc(b, 30 + k, 100, PLAN_MEM_PLAIN, 0, 0, s + 2), PLAN_OK);
        assert_int_equal(plan_build_free_alloc(b, 30 + k, 0, s + 2), PLAN_OK);
        assert_int_equal(plan_build_copy(b, s + 2, 1, 0), PLAN_OK);
        launch(b, s + 2, 102, 30, 1, (uint64_t[]){act});
        assert_int_equal(plan_build_free_alloc(b, act, 0, s + 3), PLAN_OK);
        launch(b, s + 3, 103, 40, 2, (uint64_t[]){1, grad});
        if (k == 1) { /* the detector marks the first two steps at once, after the second */
            assert_int_equal(plan_build_step(b, 0, 2), PLAN_OK);
            assert_int_equal(plan_build_step(b, 1, 6), PLAN_OK);
        }
        if (k == 2)
            assert_int_equal(plan_build_step(b, 2, 10), PLAN_OK);
    }
    return b;
}

static void test_births_deaths_cyclic(void **state)
{
    (void)state;
    plan_builder *b = program();
    plan_model m;
    plan_build_info info;
    build(b, 1, &m, &info);
    assert_int_equal(info.step, 1);
    assert_int_equal(info.first_seq, 6);
    assert_int_equal(info.end_seq, 10);
    assert_int_equal(m.nops, 4);
    assert_true(m.ops[0].dur_us == 10 && m.ops[3].dur_us == 40);
    /* in the order they were made: the weight, the gradient of step 0, then step 1's */
    assert_int_equal(m.nallocs, 4);
    expect_alloc(&m, 0, 4 * MIB, PLAN_NO_OP, PLAN_NO_OP, "0 2 3"); /* the copy counts at 2 */
    expect_alloc(&m, 1, 4 * MIB, PLAN_NO_OP, 1, "1");              /* step 0's gradient */
    expect_alloc(&m, 2, MIB, 0, 2, "0 1 2");
    expect_alloc(&m, 3, 4 * MIB, 1, PLAN_NO_OP, "1 3");
    assert_int_equal(info.allocs, 4);
    assert_int_equal(info.cyclic, 1);
    assert_int_equal(info.skipped, 1); /* the temporary */
    assert_int_equal(info.timed, 4);
    assert_int_equal(info.filled, 0);
    assert_int_equal(info.steps, 3);
    assert_int_equal(info.first_step, 0);
    assert_int_equal(info.last_step, 2);
    uint64_t native, floor;
    assert_int_equal(plan_peaks(&m, &native, &floor), PLAN_OK);
    assert_int_equal(native, 13 * MIB); /* op 0: weight, old gradient, activation; op 1: new one */
    plan_model_free(&m);

    /* -1: the last step with times, step 2 */
    build(b, -1, &m, &info);
    assert_int_equal(info.step, 2);
    assert_int_equal(info.first_seq, 10);
    expect_alloc(&m, 1, 4 * MIB, PLAN_NO_OP, 1, "1");
    plan_model_free(&m);

    /* step 0: the weight made before the first launch exists before the step (warm-up) */
    build(b, 0, &m, &info);
    assert_int_equal(m.nallocs, 3);
    expect_alloc(&m, 0, 4 * MIB, PLAN_NO_OP, PLAN_NO_OP, "0 2 3");
    expect_alloc(&m, 2, 4 * MIB, 1, PLAN_NO_OP, "1 3");
    plan_model_free(&m);
    plan_build_free(b);
}

/* A launch after the last step's mark is not part of it; a step ends where the next begins. */
static void test_step_end(void **state)
{
    (void)state;
    plan_builder *b = program();
    launch(b, 14, 104, 50, 0, NULL); /* teardown, after step 2's mark */
    plan_model m;
    plan_build_info info;
    build(b, 2, &m, &info);
    assert_int_equal(info.end_seq, 14);
    assert_int_equal(m.nops, 4);
    plan_model_free(&m);
    /* a step marked twice (as after a restart of detection) counts once */
    assert_int_equal(plan_build_step(b, 2, 10), PLAN_OK);
    build(b, 2, &m, &info);
    assert_int_equal(info.steps, 3);
    assert_int_equal(info.end_seq, 14);
    plan_model_free(&m);
    plan_build_free(b);
}

/* Launches without a time get their function's median over every step, else the median of all
 * times; launch indices with no launch event too. */
static void test_missing_times(void **state)
{
    (void)state;
    plan_builder *b = new_builder();
    launch(b, 0, 5, 10, 0, NULL);
    launch(b, 1, 5, 40, 0, NULL);
    launch(b, 2, 5, 20, 0, NULL);
    launch(b, 3, 6, 1, 0, NULL);
    launch(b, 4, 6, 2, 0, NULL);
    assert_int_equal(plan_build_step(b, 0, 0), PLAN_OK);
    launch(b, 5, 5, -1, 0, NULL); /* func 5: median of 10, 20, 40 */
    launch(b, 6, 6, -1, 0, NULL); /* func 6: mean of the middle two of 1, 2 */
    launch(b, 7, 8, -1, 0, NULL); /* never timed: median of all (1 2 10 20 40 7) */
    /* 8: no launch event (a dropped record): the median of all too */
    launch(b, 9, 6, 7, 0, NULL);
    assert_int_equal(plan_build_step(b, 1, 5), PLAN_OK);
    plan_model m;
    plan_build_info info;
    build(b, 1, &m, &info);
    assert_int_equal(m.nops, 5);
    assert_true(m.ops[0].dur_us == 20);
    assert_true(m.ops[1].dur_us == 2);   /* 1, 2, 7 for func 6 */
    assert_true(m.ops[2].dur_us == 8.5); /* 1 2 7 10 20 40: (7 + 10) / 2 */
    assert_true(m.ops[3].dur_us == 8.5);
    assert_true(m.ops[4].dur_us == 7);
    assert_int_equal(info.timed, 1);
    assert_int_equal(info.filled, 4);
    assert_int_equal(info.unrecorded, 1);
    plan_model_free(&m);
    plan_build_free(b);
}

/* The idle time measured before launches (plan_op.idle_us), as measured and without the
 * timing's own event records (plan_build_timing_cost: 5 us a record). Launches 4-7 of step 1,
 * times 15, 25, 12 and 8 us, idle before them 30, 0 (the stream was busy), 40 and none:
 *   op0 waited for the host: opened at 30, so started at 30 - 0 (no timed launch before it),
 *       its time less one record: 10, ends 40; measured, it ended at 45;
 *   op1 did not wait: starts at 40, 25 us, ends 65 (measured: 45-70);
 *   op2 opened at 70 + 40 = 110, less 2 records for each of the 2 timed launches before it: 90,
 *       idle 25 after op1's end at 65; 12 - 5 = 7 us;
 *   op3 has no idle time measured: it follows at once, its time as measured. */
static void test_idle_times(void **state)
{
    (void)state;
    static const double dur[] = {15, 25, 12, 8}, idle[] = {30, 0, 40, -1};
    for (int cost = 0; cost < 2; cost++) {
        plan_builder *b = new_builder();
        for (uint64_t s = 0; s < 8; s++) {
            launch(b, s, 5 + s % 4, s < 4 ? 1 : dur[s - 4], 0, NULL);
            if (s >= 4 && idle[s - 4] >= 0)
                assert_int_equal(plan_build_kernel_idle(b, s, idle[s - 4]), PLAN_OK);
            if (s == 3)
                assert_int_equal(plan_build_step(b, 0, 0), PLAN_OK);
        }
        assert_int_equal(plan_build_kernel_idle(b, 6, 99), PLAN_OK); /* the first figure counts */
        assert_int_equal(plan_build_step(b, 1, 4), PLAN_OK);
        if (cost)
            assert_int_equal(plan_build_timing_cost(b, 5), PLAN_OK);
        plan_model m;
        build(b, 1, &m, NULL);
        assert_int_equal(m.nops, 4);
        static const double want_idle[2][4] = {{30, 0, 40, 0}, {30, 0, 25, 0}};
        static const double want_dur[2][4] = {{15, 25, 12, 8}, {10, 25, 7, 8}};
        for (size_t q = 0; q < 4; q++) {
            if (m.ops[q].idle_us != want_idle[cost][q] || m.ops[q].dur_us != want_dur[cost][q])
                fail_msg("cost %d op %zu: idle %g dur %g, want %g %g", cost, q, m.ops[q].idle_us,
                         m.ops[q].dur_us, want_idle[cost][q], want_dur[cost][q]);
        }
        plan_model_free(&m);
        build(b, 0, &m, NULL); /* no idle time measured: none */
        for (size_t q = 0; q < 4; q++)
            assert_true(m.ops[q].idle_us == 0 && m.ops[q].dur_us == 1);
        plan_model_free(&m);
        assert_int_equal(plan_build_kernel_idle(b, 1, NAN), PLAN_ERR_INVALID);
        assert_int_equal(plan_build_kernel_idle(b, 1, -1), PLAN_ERR_INVALID);
        assert_int_equal(plan_build_kernel_idle(b, 1, 2e12), PLAN_ERR_INVALID);
        assert_int_equal(plan_build_timing_cost(b, -1), PLAN_ERR_INVALID);
        assert_int_equal(plan_build_timing_cost(b, INFINITY), PLAN_ERR_INVALID);
        plan_build_free(b);
    }
}

/* Each memory kind's device bytes. */
static void test_bytes(void **state)
{
    (void)state;
    plan_builder *b = new_builder();
    const struct {
        uint64_t bytes, addr;
        plan_mem_kind kind;
        uint64_t want;
    } a[] = {
        {1, 0x100, PLAN_MEM_PLAIN, 4096},
        {2 * MIB - 1, 0x200, PLAN_MEM_PLAIN, 2 * MIB},
        {2 * MIB + 1, 0x300, PLAN_MEM_PLAIN, 4 * MIB},
        {5000, 0x400, PLAN_MEM_ASYNC, 8192},
        {6 * MIB, 0x500, PLAN_MEM_MAPPED, 6 * MIB},
        {MIB, 0x600, PLAN_MEM_MANAGED, 1024 * 1024},
        {MIB + 1, 0x700, PLAN_MEM_MANAGED, 2 * MIB},
        {700, 0x800, PLAN_MEM_MANAGED, 1024},
        {3 * MIB, 0x900, PLAN_MEM_HOST, 0},
        {12345, 0xa00, (plan_mem_kind)42, 12345},
    };
    size_t n = sizeof a / sizeof a[0];
    uint64_t ids[16];
    for (size_t i = 0; i < n; i++) {
        ids[i] = i + 1;
        assert_int_equal(plan_build_alloc(b, i + 1, a[i].bytes, a[i].kind, a[i].addr, 0, 0),
                         PLAN_OK);
    }
    launch(b, 0, 1, 5, n, ids);
    assert_int_equal(plan_build_step(b, 0, 0), PLAN_OK);
    plan_model m;
    plan_build_info info;
    build(b, 0, &m, &info);
    assert_int_equal(m.nallocs, n - 1); /* pinned host memory is not in the model */
    for (size_t i = 0, k = 0; i < n; i++) {
        if (a[i].want == 0)
            continue;
        expect_alloc(&m, k++, a[i].want, 0, PLAN_NO_OP, "0");
    }
    assert_int_equal(info.stray_touches, 0); /* the host id is no device allocation: ignored */
    plan_model_free(&m);
    plan_build_free(b);

    /* another granularity: 64 KiB from 1 MiB on, 512-byte pages below */
    b = plan_build_new();
    assert_non_null(b);
    assert_int_equal(plan_build_rounding(b, 3, 1), PLAN_ERR_INVALID);
    assert_int_equal(plan_build_rounding(b, 4096, 8192), PLAN_ERR_INVALID);
    assert_int_equal(plan_build_rounding(b, MIB, 512), PLAN_OK);
    assert_int_equal(plan_build_alloc(b, 1, MIB + 1, PLAN_MEM_PLAIN, 0, 0, 0), PLAN_OK);
    assert_int_equal(plan_build_alloc(b, 2, 513, PLAN_MEM_PLAIN, 0, 0, 0), PLAN_OK);
    launch(b, 0, 1, 5, 2, (uint64_t[]){1, 2});
    assert_int_equal(plan_build_step(b, 0, 0), PLAN_OK);
    build(b, 0, &m, NULL);
    expect_alloc(&m, 0, 2 * MIB, 0, PLAN_NO_OP, "0");
    expect_alloc(&m, 1, 1024, 0, PLAN_NO_OP, "0");
    plan_model_free(&m);
    plan_build_free(b);
}

/* A stream-ordered allocation that takes again, on the same stream, a range freed there holds
 * that range's bytes when the range is at most twice its own rounded size. */
static void test_async_reuse(void **state)
{
    (void)state;
    plan_builder *b = new_builder();
    const uint64_t s = 0x55; /* the stream */
    assert_int_equal(plan_build_alloc(b, 1, 16 * MIB, PLAN_MEM_ASYNC, 0xa00000, s, 0), PLAN_OK);
    assert_int_equal(plan_build_alloc(b, 2, 16 * MIB, PLAN_MEM_ASYNC, 0xb00000, s, 0), PLAN_OK);
    assert_int_equal(plan_build_alloc(b, 3, 16 * MIB, PLAN_MEM_ASYNC, 0xc00000, s, 0), PLAN_OK);
    launch(b, 0, 1, 5, 3, (uint64_t[]){1, 2, 3});
    assert_int_equal(plan_build_free_alloc(b, 1, s, 1), PLAN_OK);
    assert_int_equal(plan_build_free_alloc(b, 2, s, 1), PLAN_OK);
    assert_int_equal(plan_build_free_alloc(b, 3, s + 1, 1), PLAN_OK);
    /* 12 MiB in 1's range: holds 16; 4 MiB in 2's range: a quarter, a fresh range of 4; 12 MiB
       in 3's range, freed on another stream: fresh, 12 */
    assert_int_equal(plan_build_alloc(b, 4, 12 * MIB, PLAN_MEM_ASYNC, 0xa00000, s, 1), PLAN_OK);
    assert_int_equal(plan_build_alloc(b, 5, 4 * MIB, PLAN_MEM_ASYNC, 0xb00000, s, 1), PLAN_OK);
    assert_int_equal(plan_build_alloc(b, 6, 12 * MIB, PLAN_MEM_ASYNC, 0xc00000, s, 1), PLAN_OK);
    launch(b, 1, 1, 5, 3, (uint64_t[]){4, 5, 6});
    assert_int_equal(plan_build_free_alloc(b, 4, s, 2), PLAN_OK);
    /* and again, 10 MiB in the 16 MiB range 4 held (12 MiB if it had not taken it) */
    assert_int_equal(plan_build_alloc(b, 7, 10 * MIB, PLAN_MEM_ASYNC, 0xa00000, s, 2), PLAN_OK);
    launch(b, 2, 1, 5, 1, (uint64_t[]){7});
    assert_int_equal(plan_build_step(b, 0, 0), PLAN_OK);
    plan_model m;
    build(b, 0, &m, NULL);
    assert_int_equal(m.nallocs, 7);
    expect_alloc(&m, 3, 16 * MIB, 1, 1, "1");
    expect_alloc(&m, 4, 4 * MIB, 1, PLAN_NO_OP, "1");
    expect_alloc(&m, 5, 12 * MIB, 1, PLAN_NO_OP, "1");
    expect_alloc(&m, 6, 16 * MIB, 2, PLAN_NO_OP, "2");
    plan_model_free(&m);
    plan_build_free(b);
}

/* Copies touch the launch they precede; ids that are not live then are left out and counted. */
static void test_copies_and_strays(void **state)
{
    (void)state;
    plan_builder *b = new_builder();
    assert_int_equal(plan_build_alloc(b, 1, 4096, PLAN_MEM_PLAIN, 0, 0, 0), PLAN_OK);
    assert_int_equal(plan_build_alloc(b, 2, 4096, PLAN_MEM_PLAIN, 0, 0, 0), PLAN_OK);
    assert_int_equal(plan_build_copy(b, 0, 1, 0), PLAN_OK); /* a memset of 1 */
    launch(b, 0, 1, 5, 0, NULL);
    assert_int_equal(plan_build_copy(b, 1, 2, 1), PLAN_OK); /* 1 to 2 */
    launch(b, 1, 1, 5, 0, NULL);
    assert_int_equal(plan_build_free_alloc(b, 2, 0, 2), PLAN_OK);
    launch(b, 2, 1, 5, 2, (uint64_t[]){2, 77});             /* 2 is freed; 77 was never allocated */
    assert_int_equal(plan_build_copy(b, 3, 1, 0), PLAN_OK); /* after the last launch */
    assert_int_equal(plan_build_step(b, 0, 0), PLAN_OK);
    plan_model m;
    plan_build_info info;
    build(b, 0, &m, &info);
    expect_alloc(&m, 0, 4096, 0, PLAN_NO_OP, "0 1");
    expect_alloc(&m, 1, 4096, 0, 1, "1");
    assert_int_equal(info.stray_touches, 1);
    plan_model_free(&m);
    plan_build_free(b);
}

/* The program's copies between host and device go into the model of their step after the
 * launch they follow, in their order; one before the step's first launch is the previous
 * step's, one after its last launch (before the next step's first) is its own. */
static void test_transfers(void **state)
{
    (void)state;
    plan_builder *b = new_builder();
    assert_int_equal(plan_build_transfer(b, 2, 1, 100), PLAN_OK); /* step 0's last */
    for (uint64_t s = 2; s < 5; s++)
        launch(b, s, 1, 5, 0, NULL);
    assert_int_equal(plan_build_transfer(b, 3, 0, 8), PLAN_OK);
    assert_int_equal(plan_build_transfer(b, 3, 1, 16), PLAN_OK);
    assert_int_equal(plan_build_transfer(b, 4, 1, 0), PLAN_OK); /* no bytes: nothing */
    assert_int_equal(plan_build_transfer(b, 5, 0, 4), PLAN_OK); /* the loss read */
    launch(b, 5, 1, 5, 0, NULL);
    assert_int_equal(plan_build_transfer(b, 6, 0, 32), PLAN_OK); /* step 2's */
    assert_int_equal(plan_build_step(b, 1, 2), PLAN_OK);
    assert_int_equal(plan_build_step(b, 2, 5), PLAN_OK);
    plan_model m;
    build(b, 1, &m, NULL);
    assert_int_equal(m.nops, 3);
    assert_int_equal(m.ncopies, 3);
    const plan_copy want[] = {{0, 0, 8}, {0, 1, 16}, {2, 0, 4}};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(m.copies[i].after, want[i].after);
        assert_int_equal(m.copies[i].to_device, want[i].to_device);
        assert_int_equal(m.copies[i].bytes, want[i].bytes);
    }
    plan_model_free(&m);
    plan_build_free(b);
}

/* Streams are numbered in order of first use in the step; an id allocated again while its
 * earlier allocation lives ends that one. */
static void test_streams_and_duplicates(void **state)
{
    (void)state;
    plan_builder *b = new_builder();
    assert_int_equal(plan_build_alloc(b, 1, 4096, PLAN_MEM_PLAIN, 0, 0, 0), PLAN_OK);
    assert_int_equal(plan_build_launch(b, 0, 1, 0xdead0000, (uint64_t[]){1}, 1), PLAN_OK);
    assert_int_equal(plan_build_alloc(b, 1, 8192, PLAN_MEM_PLAIN, 0, 0, 1), PLAN_OK);
    assert_int_equal(plan_build_launch(b, 1, 1, 0, (uint64_t[]){1}, 1), PLAN_OK);
    assert_int_equal(plan_build_launch(b, 2, 1, 0xdead0000, NULL, 0), PLAN_OK);
    for (uint64_t s = 0; s < 3; s++)
        assert_int_equal(plan_build_kernel_time(b, s, 1), PLAN_OK);
    assert_int_equal(plan_build_step(b, 0, 0), PLAN_OK);
    plan_model m;
    build(b, 0, &m, NULL);
    assert_int_equal(m.ops[0].stream, 0);
    assert_int_equal(m.ops[1].stream, 1);
    assert_int_equal(m.ops[2].stream, 0);
    expect_alloc(&m, 0, 4096, 0, 0, "0");
    expect_alloc(&m, 1, 8192, 1, PLAN_NO_OP, "1");
    plan_model_free(&m);
    plan_build_free(b);
}

/* The link: defaults, figures measured from the shim's moves, figures given. */
static void test_link(void **state)
{
    (void)state;
    plan_builder *b = program();
    plan_model m;
    plan_build_info info;
    build(b, 1, &m, &info);
    assert_true(m.hw.h2d_gbps == PLAN_BUILD_GBPS && m.hw.d2h_gbps == PLAN_BUILD_GBPS);
    assert_true(m.hw.duplex == PLAN_BUILD_DUPLEX && m.hw.remap_us == PLAN_BUILD_REMAP_US);
    assert_false(info.measured_h2d || info.measured_d2h);
    plan_model_free(&m);
    /* 3 MB in 100 + 200 us to host: 10 GB/s; ignored: nothing moved, no time */
    assert_int_equal(plan_build_move(b, 0, 1000000, 100), PLAN_OK);
    assert_int_equal(plan_build_move(b, 0, 2000000, 200), PLAN_OK);
    assert_int_equal(plan_build_move(b, 1, 0, 10), PLAN_OK);
    assert_int_equal(plan_build_move(b, 1, 5, 0), PLAN_OK);
    assert_int_equal(plan_build_move(b, 1, 5, NAN), PLAN_ERR_INVALID);
    build(b, 1, &m, &info);
    assert_true(fabs(m.hw.d2h_gbps - 10) < 1e-9);
    assert_true(m.hw.h2d_gbps == PLAN_BUILD_GBPS);
    assert_true(info.measured_d2h && !info.measured_h2d);
    plan_model_free(&m);
    assert_int_equal(plan_build_link(b, 0, 1, 1, 0), PLAN_ERR_INVALID);
    assert_int_equal(plan_build_link(b, 1, 1, 2, 0), PLAN_ERR_INVALID);
    assert_int_equal(plan_build_link(b, 1, 1, 0, -1), PLAN_ERR_INVALID);
    assert_int_equal(plan_build_link(b, 12, 16, 0, 3), PLAN_OK);
    build(b, 1, &m, &info);
    assert_true(m.hw.h2d_gbps == 12 && m.hw.d2h_gbps == 16 && m.hw.duplex == 0);
    assert_true(m.hw.remap_us == 3);
    assert_false(info.measured_d2h);
    plan_model_free(&m);
    plan_build_free(b);
}

static void expect_error(const plan_builder *b, int64_t step, plan_err want, const char *msg_want)
{
    plan_model m;
    char msg[256];
    plan_model_init(&m);
    assert_int_equal(plan_build_model(b, step, &m, NULL, msg, sizeof msg), want);
    assert_string_equal(msg, msg_want);
    assert_int_equal(m.nops, 0); /* left empty */
    assert_int_equal(m.nallocs, 0);
}

static void test_errors(void **state)
{
    (void)state;
    plan_builder *b = new_builder();
    expect_error(b, -1, PLAN_ERR_INVALID, "no training step was detected (no step marks)");
    launch(b, 0, 1, -1, 0, NULL);
    launch(b, 1, 1, -1, 0, NULL);
    assert_int_equal(plan_build_step(b, 3, 0), PLAN_OK);
    expect_error(b, -1, PLAN_ERR_INVALID,
                 "step 3 (launches 0..1) has no kernel time: kernels are timed only in the "
                 "profiled steps that follow the step's detection");
    expect_error(b, 9, PLAN_ERR_INVALID, "no step 9: the steps recorded are 3..3");
    expect_error(b, -2, PLAN_ERR_INVALID, "bad step -2");
    assert_int_equal(plan_build_step(b, 4, 2), PLAN_OK); /* marked before any of its launches */
    expect_error(b, 4, PLAN_ERR_INVALID, "step 4 has no launches");
    /* step 5: launches 2, 3 and 9: 3 of 8 recorded */
    launch(b, 2, 1, 1, 0, NULL);
    launch(b, 3, 1, 1, 0, NULL);
    launch(b, 9, 1, 1, 0, NULL);
    assert_int_equal(plan_build_step(b, 5, 2), PLAN_OK);
    expect_error(b, 5, PLAN_ERR_INVALID, "step 5: only 3 of its 8 launches were recorded");
    launch(b, 4, 1, 1, 0, NULL); /* 4 of 8: half, enough */
    plan_model m;
    plan_build_info info;
    build(b, 5, &m, &info);
    assert_int_equal(info.unrecorded, 4);
    plan_model_free(&m);
    assert_int_equal(plan_build_kernel_time(b, 0, NAN), PLAN_ERR_INVALID);
    assert_int_equal(plan_build_kernel_time(b, 0, -1), PLAN_ERR_INVALID);
    assert_int_equal(plan_build_kernel_time(b, 0, INFINITY), PLAN_ERR_INVALID);
    plan_build_free(b);
    plan_build_free(NULL);
}

/* A model built from the events is a valid model: written and read back, it is the same. */
static void test_round_trip(void **state)
{
    (void)state;
    plan_builder *b = program();
    plan_model m, back;
    char msg[256], *text;
    size_t len;
    plan_model_init(&m);
    plan_model_init(&back);
    build(b, 1, &m, NULL);
    assert_int_equal(plan_model_write(&m, &text, &len), PLAN_OK);
    assert_int_equal(plan_model_parse(text, len, "built", &back, msg, sizeof msg), PLAN_OK);
    assert_int_equal(back.nops, m.nops);
    assert_int_equal(back.nallocs, m.nallocs);
    assert_int_equal(back.ntouches, m.ntouches);
    assert_memory_equal(back.allocs, m.allocs, m.nallocs * sizeof(*m.allocs));
    free(text);
    plan_model_free(&m);
    plan_model_free(&back);
    plan_build_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_births_deaths_cyclic),
        cmocka_unit_test(test_step_end),
        cmocka_unit_test(test_missing_times),
        cmocka_unit_test(test_idle_times),
        cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_async_reuse),
        cmocka_unit_test(test_copies_and_strays),
        cmocka_unit_test(test_transfers),
        cmocka_unit_test(test_streams_and_duplicates),
        cmocka_unit_test(test_link),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
