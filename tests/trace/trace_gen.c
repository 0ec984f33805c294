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
 *   trace_gen moves PATH       residency transitions (format 1.2): eight moves of two
 *                              allocations and a slab with every outcome, completions recorded
 *                              by a second thread as the mover does, transitions that end no
 *                              move, and slab members that come and go (see test_report.sh)
 *   trace_gen hostmade PATH    an allocation made on the host (1.10), restored on demand, freed
 *   trace_gen plan PATH        the in-process plan (format 1.3): 4 steps of 2 launches, each
 *                              at least 2 ms long; a plan installed at the boundary that
 *                              closes step 1 and a plan_step record at the boundaries that
 *                              close steps 2 and 3, in the shim's order (see test_report.sh)
 *   trace_gen memviz PATH      allocations for `shim-report memviz`: plain, pinned host, async,
 *                              a VMM mapping whose id is allocated again, a zero-byte one, an
 *                              unmatched free, and two slabs at one address: the first freed
 *                              while a member lives, the second live at the end with gaps
 *                              between its members (see test_report_memviz.sh)
 *   trace_gen threads PATH     4 threads, a few records of every kind each
 *   trace_gen devices PATH     allocations on three devices (format 1.6): managed ones on
 *                              device 1 (the primary: peak 10 MiB), plain ones on device 0
 *                              (peak 7 MiB) and 2 (6 MiB, and a 64 KiB managed one in a slab
 *                              of device 2, live at the end), a launch on each (streams 0x5000,
 *                              0x6000 and 0x7000); managers on
 *                              devices 1 (budget 12 MiB: 2 evictions, 1 restore, a stall) and
 *                              0 (budget 5 MiB: 1 eviction), started in that order (1.7),
 *                              with the moves' transitions on their devices (1.8)
 *   trace_gen lanes PATH       what Perfetto's lanes and rounding must bear: 20 evictions that
 *                              all overlap (each 100 ms long, one every 1 ms), and 8 kernels
 *                              launched at once on one stream, each timed at 1000.0006 us (so
 *                              their starts and ends fall between two nanoseconds); the
 *                              command line is longer than a process name may be
 *   trace_gen empty PATH       no records at all
 *   trace_gen steps PATH [N [MAX_BYTES]]
 *                              a long job (format 1.4's size limit): a 4 MiB weight, then N
 *                              steps (default 2000) as the detector marks them, each with a
 *                              2 MiB activation, 3 launches, a copy and the closing sync;
 *                              every 4th step (i % 4 == 1) an 8 MiB temporary as well (peak
 *                              14 MiB, else 6 MiB); every 2nd (even i) a budget eviction and a
 *                              prefetch of the activation, 1 MiB each; every 3rd (i % 3 == 0) a
 *                              1 us stall; every 32 steps it waits for the writer to catch
 *                              up (nothing is dropped); the trace limited to MAX_BYTES
 *                              (default 0: none).
 *                              What the writer says (its log callback) goes to stderr as
 *                              "trace_gen: log LEVEL: MESSAGE".
 * TRACE_GEN_RANK=R gives the trace rank R; TRACE_GEN_RESIDENT_PEAK=BYTES writes BYTES as the
 * resident peak in the END chunk (format 1.9), as libshim does at exit.
 *
 * The header's pid is 4242 and its rank 3, or TRACE_GEN_RANK when set (the ranks of one job).
 */
#include "shim_trace.h"
#include "shim_trace_internal.h" /* the thread's ring: steps waits for the writer */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KIB (1024ull)
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
    shim_trace_move(dir, id, bytes, t, t + usec * 1000, why, 0);
    wait_until(t + usec * 1000);
}

static void stall(uint64_t usec, enum shim_move_reason why)
{
    uint64_t t = now_ns();
    shim_trace_stall(t, t + usec * 1000, why, 0);
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
        shim_trace_move(SHIM_MOVE_TO_HOST, act, 2 * MIB, t, t + 150000, SHIM_REASON_BUDGET, 0);
        shim_trace_move(SHIM_MOVE_TO_HOST, 1, 4 * MIB, t + 50000, t + 150000, SHIM_REASON_CANCELLED,
                        0);
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
    shim_trace_alloc(act, 0x7f0000000000ull + i * 4 * MIB, 2 * MIB, PLAN_MEM_ASYNC, stream);
    launch(GEMM, stream, both, 2, 100.0);
    launch(RELU, stream, &act, 1, 10.0);
    residency(i, act);
    if (i == 2) {
        shim_trace_alloc(99, 0x7e0000000000ull, 8 * MIB, PLAN_MEM_PLAIN, 0);
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
    shim_trace_budget(12 * MIB, 64 * MIB, 80 * 1024 * MIB, 0);
    shim_trace_alloc(1, 0x7f1000000000ull, 4 * MIB, PLAN_MEM_PLAIN, 0);
    shim_trace_alloc(2, 0x10000, 1 * MIB, PLAN_MEM_HOST, 0);
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

/* ---- moves: residency transitions ---- */

typedef struct shim_trace_transition tr_t;

#define S_MAIN    0x5000ull
#define SLAB      100ull
#define SLAB_ADDR 0x7f1000000000ull
#define UNKNOWN   UINT64_MAX

/* Records t now, then returns once usec have passed: what follows is at least that later. */
static void tr(tr_t t, uint64_t usec)
{
    uint64_t start = now_ns();
    shim_trace_transition(&t);
    wait_until(start + usec * 1000);
}

static void *mover_body(void *arg)
{
    shim_trace_transition(arg);
    return NULL;
}

/* Records t from a thread of its own, as the residency manager's mover thread does. */
static void on_mover(tr_t t)
{
    pthread_t th;
    pthread_create(&th, NULL, mover_body, &t);
    pthread_join(th, NULL);
}

/* The allocations around the slab [SLAB_ADDR, +2 MiB): 11 at its first byte, 12 and 13
   inside, 14 inside but freed before the slab moves, 15 just past its end (never a member). */
static void slab_and_allocs(void)
{
    shim_trace_alloc(1, 0x7f0000000000ull, 4 * MIB, PLAN_MEM_MANAGED, S_MAIN);
    shim_trace_alloc(2, 0x7f0000400000ull, 2 * MIB, PLAN_MEM_MANAGED, S_MAIN);
    shim_trace_slab(SLAB, SLAB_ADDR, 2 * MIB, 0);
    shim_trace_alloc(11, SLAB_ADDR, 64 * KIB, PLAN_MEM_MANAGED, S_MAIN);
    shim_trace_alloc(12, SLAB_ADDR + 0x10000, 64 * KIB, PLAN_MEM_MANAGED, S_MAIN);
    shim_trace_alloc(13, SLAB_ADDR + 0x20000, 128 * KIB, PLAN_MEM_MANAGED, S_MAIN);
    shim_trace_alloc(14, SLAB_ADDR + 0x40000, 64 * KIB, PLAN_MEM_MANAGED, S_MAIN);
    shim_trace_free(14, S_MAIN);
    shim_trace_alloc(15, SLAB_ADDR + 2 * MIB, 64 * KIB, PLAN_MEM_MANAGED, S_MAIN);
}

/* Moves 0..7 in order, each over before the next starts (times in us are lower bounds):
   0 alloc 1 evicted for the budget (300, done on the mover), 1 the slab evicted by a plan
   (200, 3 allocations), 2 alloc 2 evicted for the budget (100) and cancelled by a launch on
   stream 0x6000, 3 alloc 1 restored on demand (400), 4 the slab prefetched (150, 4
   allocations: 12 freed, 17 and 18 made), 5 alloc 2 evicted (50) and undone after a driver
   error, 6 alloc 2 evicted (80) and freed by the program, 7 the slab evicted by a plan and
   never finished (3 allocations: 17 freed). Between them, an error and a free that end no
   move. */
static void moves(void)
{
    enum { DEV = SHIM_RS_DEVICE, EVG = SHIM_RS_EVICTING, HOST = SHIM_RS_HOST };
    enum { RES = SHIM_RS_RESTORING, GONE = SHIM_RS_NONE };
    slab_and_allocs();
    tr((tr_t){1, 4 * MIB, S_MAIN, 10, 900, 40, DEV, EVG, SHIM_EV_EVICT, SHIM_REASON_BUDGET, 0},
       300);
    on_mover((tr_t){1, 0, 0, 10, 0, UNKNOWN, EVG, HOST, SHIM_EV_COPY_DONE, SHIM_REASON_BUDGET, 0});
    tr((tr_t){SLAB, 2 * MIB, S_MAIN, 12, 0, 30, DEV, EVG, SHIM_EV_EVICT, SHIM_REASON_PLANNED_EVICT,
              0},
       200);
    on_mover(
        (tr_t){SLAB, 0, 0, 12, 0, 30, EVG, HOST, SHIM_EV_COPY_DONE, SHIM_REASON_PLANNED_EVICT, 0});
    tr((tr_t){2, 2 * MIB, S_MAIN, 13, 500, UNKNOWN, DEV, EVG, SHIM_EV_EVICT, SHIM_REASON_BUDGET, 0},
       100);
    tr((tr_t){2, 0, 0x6000, 14, 0, UNKNOWN, EVG, DEV, SHIM_EV_CANCEL, SHIM_REASON_DEMAND, 0}, 0);
    tr((tr_t){1, 4 * MIB, S_MAIN, 20, 0, 20, HOST, RES, SHIM_EV_RESTORE, SHIM_REASON_DEMAND, 0},
       400);
    on_mover((tr_t){1, 0, 0, 20, 0, 20, RES, DEV, SHIM_EV_COPY_DONE, SHIM_REASON_DEMAND, 0});
    shim_trace_free(12, S_MAIN);
    shim_trace_alloc(17, SLAB_ADDR + 0x60000, 64 * KIB, PLAN_MEM_MANAGED, S_MAIN);
    shim_trace_alloc(18, SLAB_ADDR + 2 * MIB - 64 * KIB, 64 * KIB, PLAN_MEM_MANAGED, S_MAIN);
    tr((tr_t){SLAB, 2 * MIB, S_MAIN, 25, 0, 26, HOST, RES, SHIM_EV_RESTORE, SHIM_REASON_PREFETCH,
              0},
       150);
    on_mover((tr_t){SLAB, 0, 0, 25, 0, 26, RES, DEV, SHIM_EV_COPY_DONE, SHIM_REASON_PREFETCH, 0});
    tr((tr_t){2, 2 * MIB, S_MAIN, 30, 7, 50, DEV, EVG, SHIM_EV_EVICT, SHIM_REASON_BUDGET, 0}, 50);
    on_mover((tr_t){2, 0, 0, 30, 0, UNKNOWN, EVG, DEV, SHIM_EV_ERROR, SHIM_REASON_ERROR, 0});
    tr((tr_t){1, 0, S_MAIN, 31, 0, UNKNOWN, DEV, DEV, SHIM_EV_ERROR, SHIM_REASON_ERROR, 0}, 0);
    tr((tr_t){2, 2 * MIB, S_MAIN, 32, 3, 33, DEV, EVG, SHIM_EV_EVICT, SHIM_REASON_BUDGET, 0}, 80);
    tr((tr_t){2, 0, S_MAIN, 33, 0, UNKNOWN, EVG, GONE, SHIM_EV_FREE, SHIM_REASON_FREED, 0}, 0);
    shim_trace_free(2, S_MAIN);
    tr((tr_t){1, 0, S_MAIN, 34, 0, UNKNOWN, DEV, GONE, SHIM_EV_FREE, SHIM_REASON_FREED, 0}, 0);
    shim_trace_free(1, S_MAIN);
    shim_trace_free(17, S_MAIN);
    tr((tr_t){SLAB, 2 * MIB, S_MAIN, 35, 0, UNKNOWN, DEV, EVG, SHIM_EV_EVICT,
              SHIM_REASON_PLANNED_EVICT, 0},
       0);
}

/* An allocation made on the host (format 1.10: the budget was held by work in progress), then
   restored on demand (100 us) and freed. */
static void host_made(void)
{
    enum { DEV = SHIM_RS_DEVICE, HOST = SHIM_RS_HOST, RES = SHIM_RS_RESTORING };
    shim_trace_alloc(3, 0x7f0000800000ull, 2 * MIB, PLAN_MEM_MANAGED, S_MAIN);
    tr((tr_t){3, 2 * MIB, 0, 5, 0, UNKNOWN, SHIM_RS_NONE, HOST, SHIM_EV_CREATE_HOST, 0, 0}, 0);
    tr((tr_t){3, 2 * MIB, S_MAIN, 6, 0, 6, HOST, RES, SHIM_EV_RESTORE, SHIM_REASON_DEMAND, 0}, 100);
    on_mover((tr_t){3, 0, 0, 6, 0, 6, RES, DEV, SHIM_EV_COPY_DONE, SHIM_REASON_DEMAND, 0});
    tr((tr_t){3, 0, S_MAIN, 7, 0, UNKNOWN, DEV, SHIM_RS_NONE, SHIM_EV_FREE, SHIM_REASON_FREED, 0},
       0);
    shim_trace_free(3, S_MAIN);
}

/* ---- lanes: overlapping moves and kernels back to back ---- */

static void lanes(void)
{
    const uint64_t stream = 0x5000;
    shim_trace_func_name(GEMM, "gemm");
    shim_trace_budget(12 * MIB, 64 * MIB, 80 * 1024 * MIB, 0);
    uint64_t t = now_ns();
    for (uint64_t i = 0; i < 20; i++) {
        shim_trace_alloc(100 + i, 0x7f0000000000ull + i * 2 * MIB, 2 * MIB, PLAN_MEM_MANAGED,
                         stream);
        shim_trace_move(SHIM_MOVE_TO_HOST, 100 + i, 2 * MIB, t + i * 1000000,
                        t + i * 1000000 + 100000000, SHIM_REASON_BUDGET, 0);
    }
    for (int i = 0; i < 8; i++)
        launch(GEMM, stream, NULL, 0, 1000.0006);
    shim_trace_sync(SHIM_SYNC_STREAM, stream);
}

/* ---- memviz: allocations as segments and blocks ---- */

/* The free transition of unit id (a slab's end, or an allocation's, which memviz ignores). */
static void unit_freed(uint64_t id)
{
    tr_t t = {.unit_id = id,
              .stream = S_MAIN,
              .next_use = UNKNOWN,
              .from = SHIM_RS_DEVICE,
              .to = SHIM_RS_NONE,
              .event = SHIM_EV_FREE,
              .reason = SHIM_REASON_FREED};
    shim_trace_transition(&t);
}

static void memviz(void)
{
    const uint64_t base = 0x7f0000000000ull;
    shim_trace_alloc(1, base, 4 * MIB, PLAN_MEM_PLAIN, 0); /* live at the end */
    shim_trace_alloc(2, 0x10000, 1 * MIB, PLAN_MEM_HOST, 0);
    shim_trace_alloc(3, base + 4 * MIB, 2 * MIB, PLAN_MEM_ASYNC, S_MAIN);
    shim_trace_free(3, S_MAIN);
    shim_trace_slab(100, SLAB_ADDR, 2 * MIB, 0);
    shim_trace_alloc(11, SLAB_ADDR, 64 * KIB, PLAN_MEM_MANAGED, S_MAIN);
    shim_trace_alloc(12, SLAB_ADDR + 64 * KIB, 128 * KIB, PLAN_MEM_MANAGED, S_MAIN);
    shim_trace_free(11, S_MAIN);
    unit_freed(SLAB); /* while 12 lives: the segment goes with it */
    shim_trace_free(12, S_MAIN);
    shim_trace_slab(101, SLAB_ADDR, 2 * MIB, 0); /* the same range again */
    shim_trace_alloc(13, SLAB_ADDR + 128 * KIB, 64 * KIB, PLAN_MEM_MANAGED, S_MAIN);
    shim_trace_alloc(14, SLAB_ADDR + 1 * MIB, 256 * KIB, PLAN_MEM_MANAGED, S_MAIN);
    shim_trace_alloc(20, base + 8 * MIB, 0, PLAN_MEM_PLAIN, 0);
    shim_trace_free(20, 0);
    shim_trace_free(999, 0);
    shim_trace_alloc(30, base + 0x3000000000ull, 2 * MIB, PLAN_MEM_MAPPED, 0);
    shim_trace_alloc(30, base + 0x3000200000ull, 2 * MIB, PLAN_MEM_MAPPED, 0);
    shim_trace_alloc(40, base + 0x2000000000ull, 6 * MIB, PLAN_MEM_MANAGED, S_MAIN);
    unit_freed(40);
    shim_trace_free(40, S_MAIN);
}

/* ---- plan: an in-process plan and what it did ---- */

/* As the shim's step detector does at the boundary that closes step i: the step record, then
   what the plan in force did in it, then a new plan, if one is ready. */
static void plan_boundary(uint64_t i, uint64_t first)
{
    shim_trace_step(i, first);
    if (i >= 2) {
        struct shim_trace_plan_step ps = {i, first, 3,       2 + i,   i - 2,
                                          1, 4,     i * MIB, 3 * MIB, 250000};
        shim_trace_plan_step(&ps);
    }
    if (i == 1) {
        struct shim_trace_plan p = {seq,     1,     3,      2,      12 * MIB, 11 * MIB, 16 * MIB,
                                    9 * MIB, 210.5, 380.25, 150.75, 300.0,    2 * MIB,  3 * MIB,
                                    3,       4,     true,   4096,   37.5};
        shim_trace_plan(&p);
    }
}

static void plan_scenario(void)
{
    shim_trace_func_name(GEMM, "gemm");
    shim_trace_budget(12 * MIB, 64 * MIB, 80 * 1024 * MIB, 0);
    launch(GEMM, 0, NULL, 0, 0);
    shim_trace_sync(SHIM_SYNC_CTX, 0);
    for (uint64_t i = 0; i < 4; i++) {
        uint64_t first = seq, t = now_ns();
        launch(GEMM, 0, NULL, 0, 100.0);
        launch(GEMM, 0, NULL, 0, 100.0);
        wait_until(t + 2000000);
        shim_trace_sync(SHIM_SYNC_CTX, 0);
        plan_boundary(i, first);
    }
    shim_trace_note("plan trace: done");
}

static void *thread_body(void *arg)
{
    uint64_t base = (uint64_t)(uintptr_t)arg * 1000;
    char name[32];
    for (uint64_t i = 0; i < 5; i++) {
        uint64_t id = base + i + 1;
        snprintf(name, sizeof name, "kernel_%llu", (unsigned long long)id);
        shim_trace_func_name(id, name);
        shim_trace_alloc(id, id << 20, 4096 * (i + 1), PLAN_MEM_ASYNC, base);
        shim_trace_launch(base + i, id, base, &id, 1);
        shim_trace_kernel_time(base + i, 1.5 * (double)(i + 1));
        shim_trace_copy(SHIM_COPY_D2H, 0, id, 4096, base);
        shim_trace_sync(SHIM_SYNC_EVENT, base);
        shim_trace_free(id, base);
    }
    shim_trace_step(base, base);
    shim_trace_graph_launch(base, base);
    shim_trace_budget(base + 1, base + 2, base + 3, 0);
    move(SHIM_MOVE_TO_HOST, base + 1, 4096, 20, SHIM_REASON_BUDGET);
    stall(10, SHIM_REASON_DEMAND);
    shim_trace_note(name);
    return NULL;
}

/* Returns once the writer has read everything this thread recorded. */
static void wait_drained(void)
{
    struct shim_trace_ring *r = shim_trace_tls_ring;
    struct timespec pause = {0, 200000};
    while (r != NULL && atomic_load(&r->tail) != atomic_load(&r->head))
        nanosleep(&pause, NULL);
}

/* The `steps` scenario: n steps of known contents (see the top of the file). */
static void steps(uint64_t n)
{
    const uint64_t stream = 0x5000;
    shim_trace_func_name(GEMM, "gemm");
    shim_trace_func_name(RELU, "relu");
    shim_trace_budget(64 * MIB, 64 * MIB, 80 * 1024 * MIB, 0);
    shim_trace_alloc(1, 0x7f1000000000ull, 4 * MIB, PLAN_MEM_PLAIN, 0);
    launch(GEMM, stream, NULL, 0, 0); /* warm-up */
    shim_trace_sync(SHIM_SYNC_CTX, 0);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t act = 1000 + i, first = seq, both[2] = {1, act}, t = now_ns();
        shim_trace_alloc(act, 0x7f0000000000ull + (i % 64) * 4 * MIB, 2 * MIB, PLAN_MEM_ASYNC,
                         stream);
        launch(GEMM, stream, both, 2, 0);
        if (i % 4 == 1) {
            shim_trace_alloc(1000000 + i, 0x7e0000000000ull, 8 * MIB, PLAN_MEM_PLAIN, 0);
            shim_trace_free(1000000 + i, 0);
        }
        launch(RELU, stream, &act, 1, 0);
        if (i % 2 == 0) { /* moves and stalls start in the step (at t), whatever they last */
            shim_trace_move(SHIM_MOVE_TO_HOST, act, 1 * MIB, t, t + 500, SHIM_REASON_BUDGET, 0);
            shim_trace_move(SHIM_MOVE_TO_DEVICE, act, 1 * MIB, t + 1, t + 900, SHIM_REASON_PREFETCH,
                            0);
        }
        if (i % 3 == 0)
            shim_trace_stall(t + 2, t + 1002, SHIM_REASON_DEMAND, 0);
        launch(GEMM, stream, both, 2, 0);
        shim_trace_copy(SHIM_COPY_D2H, 0, act, 4096, stream);
        shim_trace_free(act, stream);
        shim_trace_sync(SHIM_SYNC_STREAM, stream);
        shim_trace_step(i, first);
        if (i % 32 == 31) /* about 13 KiB of records: let the writer catch up (no drops) */
            wait_drained();
    }
    shim_trace_free(1, 0); /* teardown: after the last step */
}

static void devices(void)
{
    const uint64_t stream = 0x5000;
    shim_trace_func_name(GEMM, "gemm");
    shim_trace_alloc_on(1, 0x7f0000000000ull, 8 * MIB, PLAN_MEM_MANAGED, stream, 1);
    shim_trace_alloc_on(2, 0x7e0000000000ull, 4 * MIB, PLAN_MEM_PLAIN, 0, 0);
    shim_trace_alloc_on(3, 0x7d0000000000ull, 6 * MIB, PLAN_MEM_PLAIN, 0, 2);
    shim_trace_alloc_on(4, 0x7f0000800000ull, 2 * MIB, PLAN_MEM_MANAGED, stream, 1);
    shim_trace_slab(300, 0x7c0000000000ull, 2 * MIB, 2); /* device 2's (1.8), live to the end */
    shim_trace_alloc_on(6, 0x7c0000000000ull, 64 * KIB, PLAN_MEM_MANAGED, 0x7000, 2);
    shim_trace_budget(12 * MIB, 64 * MIB, 80 * 1024 * MIB, 1);
    shim_trace_budget(5 * MIB, 64 * MIB, 80 * 1024 * MIB, 0);
    uint64_t t = now_ns();
    enum { DEV = SHIM_RS_DEVICE, EVG = SHIM_RS_EVICTING, HOST = SHIM_RS_HOST };
    enum { RES = SHIM_RS_RESTORING, EV = SHIM_EV_EVICT, DONE = SHIM_EV_COPY_DONE };
    enum { BUDGET = SHIM_REASON_BUDGET, DEMAND = SHIM_REASON_DEMAND };
    /* the transitions of the moves below (1.8: each names its manager's device) */
    tr((tr_t){4, 2 * MIB, stream, 1, 9, UNKNOWN, DEV, EVG, EV, BUDGET, 1}, 0);
    tr((tr_t){1, 8 * MIB, stream, 1, 8, UNKNOWN, DEV, EVG, EV, BUDGET, 1}, 0);
    tr((tr_t){2, 4 * MIB, 0, 1, 7, UNKNOWN, DEV, EVG, EV, BUDGET, 0}, 0);
    tr((tr_t){4, 0, 0, 1, 0, UNKNOWN, EVG, HOST, DONE, BUDGET, 1}, 0);
    tr((tr_t){2, 0, 0, 1, 0, UNKNOWN, EVG, HOST, DONE, BUDGET, 0}, 0);
    tr((tr_t){1, 0, 0, 1, 0, UNKNOWN, EVG, HOST, DONE, BUDGET, 1}, 0);
    tr((tr_t){1, 8 * MIB, stream, 1, 0, UNKNOWN, HOST, RES, SHIM_EV_RESTORE, DEMAND, 1}, 0);
    tr((tr_t){1, 0, 0, 1, 0, UNKNOWN, RES, DEV, DONE, DEMAND, 1}, 0);
    shim_trace_move(SHIM_MOVE_TO_HOST, 4, 2 * MIB, t, t + 1000, SHIM_REASON_BUDGET, 1);
    shim_trace_move(SHIM_MOVE_TO_HOST, 1, 8 * MIB, t, t + 2000, SHIM_REASON_BUDGET, 1);
    shim_trace_move(SHIM_MOVE_TO_DEVICE, 1, 8 * MIB, t + 2000, t + 3000, SHIM_REASON_DEMAND, 1);
    shim_trace_stall(t + 2000, t + 3000, SHIM_REASON_DEMAND, 1);
    shim_trace_move(SHIM_MOVE_TO_HOST, 2, 4 * MIB, t, t + 1500, SHIM_REASON_BUDGET, 0);
    wait_until(t + 3000);
    for (uint64_t id = 1; id <= 3; id++) /* one stream per device: 0x5000 on 1, 0x6000 on 0 */
        launch(GEMM, id == 1 ? stream : 0x4000 + 0x1000 * id, &id, 1, 10);
    shim_trace_free(4, stream);
    shim_trace_alloc_on(5, 0x7e0000400000ull, 3 * MIB, PLAN_MEM_PLAIN, 0, 0);
    shim_trace_free(5, 0);
    shim_trace_free(2, 0);
    shim_trace_free(3, 0);
    shim_trace_free(1, stream);
}

static void say(int level, const char *msg)
{
    fprintf(stderr, "trace_gen: log %d: %s\n", level, msg);
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
    int is_steps = argc >= 3 && strcmp(argv[1], "steps") == 0;
    if (argc != 3 && !(is_steps && argc <= 5)) {
        fprintf(stderr,
                "usage: trace_gen synthetic|moves|hostmade|memviz|plan|threads|devices|lanes|\n"
                "                 empty PATH\n"
                "       trace_gen steps PATH [N [MAX_BYTES]]\n");
        return 2;
    }
    struct shim_trace_info info = {4242, 3,   "trace_gen --synthetic", "budget = \"1GiB\"\n", 0,
                                   0,    NULL};
    if (strcmp(argv[1], "lanes") == 0)
        info.command = "/usr/bin/python3 -m torch.distributed.run --nproc-per-node 8 "
                       "--rdzv-endpoint localhost:29500 train.py --config big.yaml";
    const char *rank = getenv("TRACE_GEN_RANK");
    if (rank)
        info.rank = atoi(rank);
    uint64_t n = 2000;
    if (is_steps) {
        n = argc >= 4 ? strtoull(argv[3], NULL, 10) : n;
        info.max_bytes = argc >= 5 ? strtoull(argv[4], NULL, 10) : 0;
        info.log = say;
        info.flush_ms = 10;
    }
    char err[256];
    if (shim_trace_start(argv[2], &info, err, sizeof err) != 0) {
        fprintf(stderr, "trace_gen: %s\n", err);
        return 1;
    }
    if (strcmp(argv[1], "synthetic") == 0)
        synthetic();
    else if (strcmp(argv[1], "moves") == 0)
        moves();
    else if (strcmp(argv[1], "hostmade") == 0)
        host_made();
    else if (strcmp(argv[1], "plan") == 0)
        plan_scenario();
    else if (strcmp(argv[1], "memviz") == 0)
        memviz();
    else if (strcmp(argv[1], "threads") == 0)
        threads();
    else if (strcmp(argv[1], "devices") == 0)
        devices();
    else if (strcmp(argv[1], "lanes") == 0)
        lanes();
    else if (is_steps)
        steps(n);
    else if (strcmp(argv[1], "empty") != 0) {
        fprintf(stderr, "trace_gen: unknown scenario '%s'\n", argv[1]);
        shim_trace_stop();
        return 2;
    }
    const char *peak = getenv("TRACE_GEN_RESIDENT_PEAK"); /* the END chunk's (format 1.9) */
    if (peak)
        shim_trace_set_resident_peak(strtoull(peak, NULL, 10));
    shim_trace_stop();
    return 0;
}
