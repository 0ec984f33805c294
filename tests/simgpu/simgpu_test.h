/* simgpu_test.h — helpers shared by the simulator's own tests (cmocka). */
#ifndef SIMGPU_TEST_H
#define SIMGPU_TEST_H

#include "simgpu.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MIB      ((size_t)1 << 20)
#define CK(call) assert_int_equal((call), CUDA_SUCCESS)

/* Fails the test unless got is want virtual microseconds, to 0.01 us; got is evaluated once (it
   is often a call with effects). */
#define assert_us(got, want) sim_test_check_us((got), (want), __FILE__, __LINE__)
static inline void sim_test_check_us(double got, double want, const char *file, int line)
{
    if (got > want - 0.01 && got < want + 0.01)
        return;
    print_error("virtual time %.4f us, want %.4f us\n", got, want);
    _fail(file, line);
}

/* Tests add themselves to their program's one group, which runs them in the order they are
   defined: SIM_TEST(name) { body } defines static void name(void **state), and main ends with
   return sim_test_run(NULL). A new test is one function, with no list to keep. */
#define SIM_TEST_MAX 64
static struct {
    struct CMUnitTest v[SIM_TEST_MAX];
    int line[SIM_TEST_MAX]; /* where each is defined: the run order */
    size_t n;
} sim_test_group;

/* Adds test fn, defined at line, to the group, in line order (constructors run in no stated
   order). Aborts beyond SIM_TEST_MAX tests. */
static inline void sim_test_add(const char *name, CMUnitTestFunction fn, int line)
{
    if (sim_test_group.n == SIM_TEST_MAX)
        abort();
    size_t i = sim_test_group.n++;
    for (; i > 0 && sim_test_group.line[i - 1] > line; i--) {
        sim_test_group.v[i] = sim_test_group.v[i - 1];
        sim_test_group.line[i] = sim_test_group.line[i - 1];
    }
    sim_test_group.v[i] = (struct CMUnitTest){name, fn, NULL, NULL, NULL};
    sim_test_group.line[i] = line;
}

#define SIM_TEST(name)                                                                             \
    static void name(void **state);                                                                \
    __attribute__((constructor)) static void name##_add(void)                                      \
    {                                                                                              \
        sim_test_add(#name, name, __LINE__);                                                       \
    }                                                                                              \
    static void name(void **state)

/* Runs the group after group_setup (NULL: none); cmocka's report names it "tests", as
   cmocka_run_group_tests(tests, ...) did. */
static inline int sim_test_run(CMFixtureFunction group_setup)
{
    return _cmocka_run_group_tests("tests", sim_test_group.v, sim_test_group.n, group_setup, NULL);
}

/* Initialises the driver and makes the primary context current. */
static inline void sim_test_ctx(void)
{
    CUcontext ctx;
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CK(cuCtxSetCurrent(ctx));
}

/* A thread of the test's besides its main one (libshim's mover, say): job(arg), run with ctx
   current. */
struct sim_test_thread {
    pthread_t t;
    CUcontext ctx;
    void (*job)(void *);
    void *arg;
};

static inline void *sim_test_thread_main(void *p)
{
    struct sim_test_thread *th = p;
    CK(cuCtxSetCurrent(th->ctx));
    th->job(th->arg);
    return NULL;
}

/* Starts job(arg) on a new thread with ctx current; sim_test_join waits for it to end. */
static inline void sim_test_start(struct sim_test_thread *th, CUcontext ctx, void (*job)(void *),
                                  void *arg)
{
    *th = (struct sim_test_thread){.ctx = ctx, .job = job, .arg = arg};
    assert_int_equal(pthread_create(&th->t, NULL, sim_test_thread_main, th), 0);
}

static inline void sim_test_join(struct sim_test_thread *th)
{
    assert_int_equal(pthread_join(th->t, NULL), 0);
}

/* Runs job(arg) on a new thread with ctx current, and waits for it to end. */
static inline void sim_test_on_thread(CUcontext ctx, void (*job)(void *), void *arg)
{
    struct sim_test_thread th;
    sim_test_start(&th, ctx, job, arg);
    sim_test_join(&th);
}

/* A new non-blocking stream. */
static inline CUstream sim_test_stream(void)
{
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    return s;
}

/* A new event with default flags. */
static inline CUevent sim_test_event(void)
{
    CUevent e;
    CK(cuEventCreate(&e, 0));
    return e;
}

/* Virtual microseconds from a to b, once b has completed. */
static inline double sim_test_elapsed_us(CUevent a, CUevent b)
{
    float ms;
    CK(cuEventSynchronize(b));
    CK(cuEventElapsedTime(&ms, a, b));
    return ms * 1000.0;
}

/* Records on one a start (returned) that two waits for too: what is queued on both next starts
   together. */
static inline CUevent sim_test_fork(CUstream one, CUstream two)
{
    CUevent start = sim_test_event();
    CK(cuEventRecord(start, one));
    CK(cuStreamWaitEvent(two, start, 0));
    return start;
}

/* Virtual microseconds from start until what is queued on one and on two is done: one's end
   joins two, whose end is timed. */
static inline double sim_test_join_us(CUevent start, CUstream one, CUstream two)
{
    CUevent mid = sim_test_event(), end = sim_test_event();
    CK(cuEventRecord(mid, one));
    CK(cuStreamWaitEvent(two, mid, 0));
    CK(cuEventRecord(end, two));
    return sim_test_elapsed_us(start, end);
}

/* Number of the n words at va that are not seed + i (read with a synchronous copy). */
static inline size_t sim_test_wrong_words(CUdeviceptr va, size_t n, uint32_t seed)
{
    uint32_t *w = malloc(n * 4);
    assert_non_null(w);
    CK(cuMemcpyDtoH(w, va, n * 4));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += w[i] != seed + (uint32_t)i;
    free(w);
    return bad;
}

static inline struct simgpu_stats sim_test_stats(void)
{
    struct simgpu_stats s;
    assert_int_equal(simgpu_get_stats(&s), 0);
    return s;
}

/* Kernel: dst[i] = seed + i for i < n (uint32 words). Params: ptr, n, seed. */
static inline void sim_test_fill(void **p)
{
    uint32_t *dst = *(uint32_t **)p[0];
    size_t n = *(size_t *)p[1];
    uint32_t seed = *(uint32_t *)p[2];
    for (size_t i = 0; i < n; i++)
        dst[i] = seed + (uint32_t)i;
}

static inline CUfunction sim_test_fill_fn(void)
{
    static const size_t sizes[] = {8, 8, 4};
    return simgpu_register("fill", sim_test_fill, 3, sizes);
}

static inline void sim_test_launch_fill(CUstream s, CUdeviceptr dst, size_t n, uint32_t seed)
{
    void *args[] = {&dst, &n, &seed};
    CK(cuLaunchKernel(sim_test_fill_fn(), 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
}

/* Reserves size bytes and maps one fresh handle of the given location there,
   read-write for the device. */
static inline CUdeviceptr sim_test_vmm(size_t size, CUmemLocationType where,
                                       CUmemGenericAllocationHandle *handle)
{
    CUmemAllocationProp prop = {0};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = where;
    CUdeviceptr va;
    CK(cuMemAddressReserve(&va, size, 0, 0, 0));
    CK(cuMemCreate(handle, size, &prop, 0));
    CK(cuMemMap(va, size, 0, *handle, 0));
    CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CK(cuMemSetAccess(va, size, &acc, 1));
    return va;
}

#endif
