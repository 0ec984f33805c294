/* trace_gen.c — writes traces with known contents through the real writer, for the report
 * tests and the fuzz seeds.
 *
 *   trace_gen synthetic PATH   one thread: 3 warm-up launches and a sync, 4 steps of 5 timed
 *                              launches each closed by a sync and its step mark (as the shim's
 *                              detector writes them), then an untimed launch outside any step;
 *                              allocations with a known peak, copies, a graph launch and a note;
 *                              a residency budget, moves and stalls: one eviction in warm-up,
 *                              the others in steps 1 and 2 (see test_report.sh for the expected
 *                              figures)
 *   trace_gen threads PATH     4 threads, a few records of every kind each
 *   trace_gen empty PATH       no records at all
 */
#include "shim_trace.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define MIB (1024ull * 1024)

enum { GEMM = 1, RELU = 2, SOFTMAX = 3, LOSS = 4 };

static uint64_t seq;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Returns once CLOCK_MONOTONIC has passed t, so that what follows is later than a move. */
static void wait_until(uint64_t t)
{
    struct timespec pause = {0, 20000};
    while (now_ns() <= t)
        nanosleep(&pause, NULL);
}

/* A move that starts now, lasts usec and is over when this returns. */
static void move(enum shim_move_dir dir, uint64_t id, uint64_t bytes, uint64_t usec,
                 enum shim_move_reason why)
{
    uint64_t t = now_ns();
    shim_trace_move(dir, id, bytes, t, t + usec * 1000, why);
    wait_until(t + usec * 1000);
}

static void stall(uint64_t usec, enum shim_move_reason why)
{
    uint64_t t = now_ns();
    shim_trace_stall(t, t + usec * 1000, why);
    wait_until(t + usec * 1000);
}

/* Step 1: the weights (4 MiB) evicted, restored on demand, a 250 us stall. Step 2: its
   activation (2 MiB) evicted (150 us) with an eviction of the weights in flight beside it
   (100 us, from 50 us on) that a launch cancelled, then prefetched back (150 us), and a
   1000 us stall for room. */
static void residency(uint64_t i, uint64_t act)
{
    if (i == 1) {
        move(SHIM_MOVE_TO_HOST, 1, 4 * MIB, 300, SHIM_REASON_BUDGET);
        move(SHIM_MOVE_TO_DEVICE, 1, 4 * MIB, 300, SHIM_REASON_DEMAND);
        stall(250, SHIM_REASON_DEMAND);
    } else if (i == 2) {
        uint64_t t = now_ns();
        shim_trace_move(SHIM_MOVE_TO_HOST, act, 2 * MIB, t, t + 150000, SHIM_REASON_BUDGET);
        shim_trace_move(SHIM_MOVE_TO_HOST, 1, 4 * MIB, t + 50000, t + 150000,
                        SHIM_REASON_CANCELLED);
        wait_until(t + 150000);
        move(SHIM_MOVE_TO_DEVICE, act, 2 * MIB, 150, SHIM_REASON_PREFETCH);
        stall(1000, SHIM_REASON_BUDGET);
    }
}

static void launch(uint64_t func, uint64_t stream, const uint64_t *ids, uint32_t n, double usec)
{
    shim_trace_launch(seq, func, stream, ids, n);
    if (usec > 0)
        shim_trace_kernel_time(seq, usec);
    seq++;
}

/* One step: an activation (2 MiB) born and freed, five launches, then the synchronisation
   that closes the step and its mark; step 2 also holds 8 MiB. */
static void step(uint64_t i, uint64_t stream)
{
    uint64_t act = 10 + i, weights = 1, first = seq;
    uint64_t both[2] = {weights, act};
    shim_trace_alloc(act, 0x7f0000000000ull + i * 4 * MIB, 2 * MIB, SHIM_ALLOC_ASYNC, stream);
    launch(GEMM, stream, both, 2, 100.0);
    launch(RELU, stream, &act, 1, 10.0);
    residency(i, act);
    if (i == 2) {
        shim_trace_alloc(99, 0x7e0000000000ull, 8 * MIB, SHIM_ALLOC_PLAIN, 0);
        shim_trace_free(99, 0);
    }
    launch(GEMM, stream, both, 2, 100.0);
    launch(SOFTMAX, stream, &act, 1, 50.0);
    launch(RELU, stream, &act, 1, 10.0);
    shim_trace_free(act, stream);
    shim_trace_sync(SHIM_SYNC_STREAM, stream);
    shim_trace_step(i, first);
}

static void synthetic(void)
{
    const uint64_t stream = 0x5000;
    shim_trace_func_name(GEMM, "gemm");
    shim_trace_func_name(RELU, "relu");
    shim_trace_func_name(SOFTMAX, "softmax_kernel<float>");
    shim_trace_func_name(LOSS, "loss \"readback\"");
    shim_trace_budget(12 * MIB, 64 * MIB, 80 * 1024 * MIB);
    shim_trace_alloc(1, 0x7f1000000000ull, 4 * MIB, SHIM_ALLOC_PLAIN, 0);
    shim_trace_alloc(2, 0x10000, 1 * MIB, SHIM_ALLOC_HOST, 0);
    shim_trace_copy(SHIM_COPY_H2D, 1, 2, 1 * MIB, stream);
    uint64_t w = 1;
    for (int i = 0; i < 3; i++)
        launch(GEMM, 0, &w, 1, 0);
    move(SHIM_MOVE_TO_HOST, 1, 4 * MIB, 300, SHIM_REASON_BUDGET); /* warm-up: in no step */
    shim_trace_sync(SHIM_SYNC_CTX, 0);
    for (uint64_t i = 0; i < 4; i++)
        step(i, stream);
    launch(LOSS, stream, NULL, 0, 0);
    shim_trace_copy(SHIM_COPY_MEMSET, 1, 0, 4096, stream);
    shim_trace_sync(SHIM_SYNC_STREAM, stream);
    shim_trace_graph_launch(77, stream);
    shim_trace_note("synthetic trace: done");
}

static void *thread_body(void *arg)
{
    uint64_t base = (uint64_t)(uintptr_t)arg * 1000;
    char name[32];
    for (uint64_t i = 0; i < 5; i++) {
        uint64_t id = base + i + 1;
        snprintf(name, sizeof name, "kernel_%llu", (unsigned long long)id);
        shim_trace_func_name(id, name);
        shim_trace_alloc(id, id << 20, 4096 * (i + 1), SHIM_ALLOC_ASYNC, base);
        shim_trace_launch(base + i, id, base, &id, 1);
        shim_trace_kernel_time(base + i, 1.5 * (double)(i + 1));
        shim_trace_copy(SHIM_COPY_D2H, 0, id, 4096, base);
        shim_trace_sync(SHIM_SYNC_EVENT, base);
        shim_trace_free(id, base);
    }
    shim_trace_step(base, base);
    shim_trace_graph_launch(base, base);
    shim_trace_budget(base + 1, base + 2, base + 3);
    move(SHIM_MOVE_TO_HOST, base + 1, 4096, 20, SHIM_REASON_BUDGET);
    stall(10, SHIM_REASON_DEMAND);
    shim_trace_note(name);
    return NULL;
}

static void threads(void)
{
    pthread_t th[4];
    for (uintptr_t i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, thread_body, (void *)i);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: trace_gen synthetic|threads|empty PATH\n");
        return 2;
    }
    struct shim_trace_info info = {4242, 3, "trace_gen --synthetic", "budget = \"1GiB\"\n", 0};
    char err[256];
    if (shim_trace_start(argv[2], &info, err, sizeof err) != 0) {
        fprintf(stderr, "trace_gen: %s\n", err);
        return 1;
    }
    if (strcmp(argv[1], "synthetic") == 0)
        synthetic();
    else if (strcmp(argv[1], "threads") == 0)
        threads();
    else if (strcmp(argv[1], "empty") != 0) {
        fprintf(stderr, "trace_gen: unknown scenario '%s'\n", argv[1]);
        shim_trace_stop();
        return 2;
    }
    shim_trace_stop();
    return 0;
}
