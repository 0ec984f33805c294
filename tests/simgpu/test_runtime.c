/* test_runtime.c — the simulated CUDA runtime (libcudart.so.13) through the simulated driver:
 * every call family, last-error semantics, capture and graphs, per-thread variants. */
#include "simgpu.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#define KERNEL_COST_US 250.0

/* ---- kernels ---------------------------------------------------------------------------- */

/* add(int *a, int n, int v): a[i] += v for i < n. */
static void k_add(void **p)
{
    int *a = *(int **)p[0];
    int n = *(int *)p[1], v = *(int *)p[2];

    for (int i = 0; i < n; i++)
        a[i] += v;
}

/* gate(atomic_int *flag): spins until the host sets *flag (a kernel the test
   holds running, to observe not-ready states deterministically). */
static void k_gate(void **p)
{
    atomic_int *flag = *(atomic_int **)p[0];

    while (!atomic_load(flag))
        sched_yield();
}

/* Not registered: launching it must fail with cudaErrorInvalidDeviceFunction. */
static void k_unregistered(void **p)
{
    (void)p;
}

static CUfunction f_add, f_gate;

/* The flag of gated kernels; the teardown of every test opens it, so that a
   failed test cannot leave the compute engine blocked for the next ones. */
static atomic_int gate;

static void register_kernels(void)
{
    static const size_t add_sizes[] = {8, 4, 4};
    static const size_t gate_sizes[] = {8};

    f_add = simgpu_register("add", k_add, 3, add_sizes);
    f_gate = simgpu_register("gate", k_gate, 1, gate_sizes);
    simgpu_set_cost(f_add, KERNEL_COST_US);
    simgpu_set_cost(f_gate, 1.0);
}

static cudaError_t launch_add(int *dev, int n, int v, cudaStream_t s)
{
    void *args[] = {&dev, &n, &v};

    return cudaLaunchKernel((const void *)k_add, (dim3){1, 1, 1}, (dim3){32, 1, 1}, args, 0, s);
}

static cudaError_t launch_gate(atomic_int *flag, cudaStream_t s)
{
    void *args[] = {&flag};

    return cudaLaunchKernel((const void *)k_gate, (dim3){1, 1, 1}, (dim3){1, 1, 1}, args, 0, s);
}

/* ---- helpers ---------------------------------------------------------------------------- */

static uint64_t stat_of(size_t offset)
{
    struct simgpu_stats st;

    assert_int_equal(simgpu_get_stats(&st), 0);
    return *(const uint64_t *)((const char *)&st + offset);
}
#define STAT(field) stat_of(offsetof(struct simgpu_stats, field))

static void fill(int *a, int n, int base)
{
    for (int i = 0; i < n; i++)
        a[i] = base + i;
}

static void expect_seq(const int *a, int n, int base)
{
    for (int i = 0; i < n; i++)
        assert_int_equal(a[i], base + i);
}

static int setup(void **state)
{
    (void)state;
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    atomic_store(&gate, 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    atomic_store(&gate, 1);
    cudaDeviceSynchronize();
    return 0;
}

/* ---- allocation ------------------------------------------------------------------------- */

static void test_malloc_free(void **state)
{
    size_t free0, total, free1, free2;
    unsigned long allocs = simgpu_calls("cuMemAlloc_v2");
    void *p = (void *)1;

    (void)state;
    assert_int_equal(cudaMemGetInfo(&free0, &total), cudaSuccess);
    assert_true(free0 <= total);
    assert_int_equal(cudaMalloc(&p, 3 << 20), cudaSuccess);
    assert_non_null(p);
    assert_int_equal(simgpu_calls("cuMemAlloc_v2"), allocs + 1);
    assert_int_equal(cudaMemGetInfo(&free1, &total), cudaSuccess);
    assert_true(free0 - free1 >= (3u << 20));
    assert_int_equal(cudaFree(p), cudaSuccess);
    assert_int_equal(cudaMemGetInfo(&free2, &total), cudaSuccess);
    assert_int_equal(free2, free0);

    assert_int_equal(cudaMalloc(&p, 0), cudaSuccess);
    assert_null(p);
    assert_int_equal(cudaFree(NULL), cudaSuccess);
    assert_int_equal(cudaMalloc(NULL, 16), cudaErrorInvalidValue);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
    assert_int_equal(simgpu_calls("cuMemAlloc_v2"), allocs + 1);
}

static void test_malloc_out_of_memory(void **state)
{
    size_t free0, total;
    void *p = (void *)1;

    (void)state;
    assert_int_equal(cudaMemGetInfo(&free0, &total), cudaSuccess);
    assert_int_equal(cudaMalloc(&p, total + ((size_t)1 << 30)), cudaErrorMemoryAllocation);
    assert_null(p);
    /* Non-sticky: peek keeps it, get returns it once, then success. */
    assert_int_equal(cudaPeekAtLastError(), cudaErrorMemoryAllocation);
    assert_int_equal(cudaPeekAtLastError(), cudaErrorMemoryAllocation);
    assert_int_equal(cudaGetLastError(), cudaErrorMemoryAllocation);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    assert_int_equal(cudaMalloc(&p, 4096), cudaSuccess);
    assert_int_equal(cudaFree(p), cudaSuccess);
}

static void test_malloc_async(void **state)
{
    cudaStream_t s;
    unsigned long allocs = simgpu_calls("cuMemAllocAsync");
    unsigned long frees = simgpu_calls("cuMemFreeAsync");
    int host[256];
    void *p = NULL;

    (void)state;
    assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    assert_int_equal(cudaMallocAsync(&p, sizeof host, s), cudaSuccess);
    assert_non_null(p);
    assert_int_equal(cudaMemsetAsync(p, 0, sizeof host, s), cudaSuccess);
    assert_int_equal(launch_add(p, 256, 7, s), cudaSuccess);
    assert_int_equal(cudaMemcpyAsync(host, p, sizeof host, cudaMemcpyDeviceToHost, s), cudaSuccess);
    assert_int_equal(cudaFreeAsync(p, s), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    for (int i = 0; i < 256; i++)
        assert_int_equal(host[i], 7);
    assert_int_equal(simgpu_calls("cuMemAllocAsync"), allocs + 1);
    assert_int_equal(simgpu_calls("cuMemFreeAsync"), frees + 1);
    assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

static void test_host_alloc(void **state)
{
    int *a = NULL, *b = NULL;

    (void)state;
    assert_int_equal(cudaMallocHost((void **)&a, 1 << 20), cudaSuccess);
    assert_int_equal(
        cudaHostAlloc((void **)&b, 1 << 20, cudaHostAllocPortable | cudaHostAllocMapped),
        cudaSuccess);
    assert_non_null(a);
    assert_non_null(b);
    fill(a, 1 << 18, 5);
    memcpy(b, a, 1 << 20);
    expect_seq(b, 1 << 18, 5);
    assert_int_equal(cudaFreeHost(a), cudaSuccess);
    assert_int_equal(cudaFreeHost(b), cudaSuccess);
    assert_int_equal(cudaFreeHost(NULL), cudaSuccess);
}

/* ---- copies and memset ------------------------------------------------------------------ */

enum { N = 4096 };

static void test_memcpy_directions(void **state)
{
    static int src[N], dst[N], h2h[N];
    int *d1, *d2;
    uint64_t h2d = STAT(bytes_h2d), d2h = STAT(bytes_d2h), d2d = STAT(bytes_d2d);
    unsigned long c_h2d = simgpu_calls("cuMemcpyHtoD_v2"), c_d2h = simgpu_calls("cuMemcpyDtoH_v2");
    unsigned long c_d2d = simgpu_calls("cuMemcpyDtoD_v2"), c_any = simgpu_calls("cuMemcpy");

    (void)state;
    fill(src, N, 100);
    assert_int_equal(cudaMalloc((void **)&d1, sizeof src), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&d2, sizeof src), cudaSuccess);
    assert_int_equal(cudaMemcpy(d1, src, sizeof src, cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(cudaMemcpy(d2, d1, sizeof src, cudaMemcpyDeviceToDevice), cudaSuccess);
    assert_int_equal(cudaMemcpy(dst, d2, sizeof src, cudaMemcpyDeviceToHost), cudaSuccess);
    expect_seq(dst, N, 100);
    assert_int_equal(STAT(bytes_h2d) - h2d, sizeof src);
    assert_int_equal(STAT(bytes_d2d) - d2d, sizeof src);
    assert_int_equal(STAT(bytes_d2h) - d2h, sizeof src);
    /* Each kind reaches the driver copy of its direction. */
    assert_int_equal(simgpu_calls("cuMemcpyHtoD_v2") - c_h2d, 1);
    assert_int_equal(simgpu_calls("cuMemcpyDtoD_v2") - c_d2d, 1);
    assert_int_equal(simgpu_calls("cuMemcpyDtoH_v2") - c_d2h, 1);
    assert_int_equal(simgpu_calls("cuMemcpy") - c_any, 0);

    assert_int_equal(cudaMemcpy(h2h, src, sizeof src, cudaMemcpyHostToHost), cudaSuccess);
    expect_seq(h2h, N, 100);

    /* cudaMemcpyDefault infers the direction from the pointers. */
    fill(src, N, 900);
    memset(dst, 0, sizeof dst);
    assert_int_equal(cudaMemcpy(d1, src, sizeof src, cudaMemcpyDefault), cudaSuccess);
    assert_int_equal(cudaMemcpy(d2, d1, sizeof src, cudaMemcpyDefault), cudaSuccess);
    assert_int_equal(cudaMemcpy(dst, d2, sizeof src, cudaMemcpyDefault), cudaSuccess);
    expect_seq(dst, N, 900);
    assert_int_equal(simgpu_calls("cuMemcpy") - c_any, 4); /* unified copies */
    assert_int_equal(simgpu_calls("cuMemcpyHtoD_v2") - c_h2d, 1);

    assert_int_equal(cudaMemcpy(dst, d2, sizeof src, (enum cudaMemcpyKind)7),
                     cudaErrorInvalidMemcpyDirection);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidMemcpyDirection);
    assert_int_equal(cudaFree(d1), cudaSuccess);
    assert_int_equal(cudaFree(d2), cudaSuccess);
}

static void test_memcpy_async_pinned(void **state)
{
    cudaStream_t s;
    int *pin, *d;
    const char *const entries[] = {"cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2",
                                   "cuMemcpyDtoDAsync_v2", "cuMemcpyAsync"};
    unsigned long before[4];

    (void)state;
    for (int i = 0; i < 4; i++)
        before[i] = simgpu_calls(entries[i]);
    assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
    assert_int_equal(cudaMallocHost((void **)&pin, N * sizeof(int)), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&d, N * sizeof(int)), cudaSuccess);
    fill(pin, N, 3);
    assert_int_equal(cudaMemcpyAsync(d, pin, N * sizeof(int), cudaMemcpyHostToDevice, s),
                     cudaSuccess);
    assert_int_equal(launch_add(d, N, 10, s), cudaSuccess);
    assert_int_equal(cudaMemcpyAsync(pin, d, N * sizeof(int), cudaMemcpyDeviceToHost, s),
                     cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    expect_seq(pin, N, 13);
    assert_int_equal(cudaMemcpyAsync(d, pin, N * sizeof(int), cudaMemcpyDefault, s), cudaSuccess);
    assert_int_equal(cudaMemcpyAsync(d + 16, d, 16 * sizeof(int), cudaMemcpyDeviceToDevice, s),
                     cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    for (int i = 0; i < 4; i++) /* one copy of each kind, each through its own driver call */
        assert_int_equal(simgpu_calls(entries[i]) - before[i], 1);
    memset(pin, 0, 32 * sizeof(int));
    assert_int_equal(cudaMemcpy(pin, d, 32 * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
    expect_seq(pin, 16, 13);
    expect_seq(pin + 16, 16, 13);
    assert_int_equal(cudaFree(d), cudaSuccess);
    assert_int_equal(cudaFreeHost(pin), cudaSuccess);
    assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

static void test_memset(void **state)
{
    unsigned char host[8192];
    unsigned char *d;
    cudaStream_t s;

    (void)state;
    assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&d, sizeof host), cudaSuccess);
    assert_int_equal(cudaMemset(d, 0x1AB, sizeof host), cudaSuccess); /* (unsigned char)value */
    assert_int_equal(cudaMemsetAsync(d + 100, 0x11, 50, s), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    assert_int_equal(cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost), cudaSuccess);
    for (size_t i = 0; i < sizeof host; i++)
        assert_int_equal(host[i], i >= 100 && i < 150 ? 0x11 : 0xAB);
    assert_int_equal(cudaFree(d), cudaSuccess);
    assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

/* ---- launch ----------------------------------------------------------------------------- */

static void test_launch_kernel(void **state)
{
    int host[64];
    int *d;
    unsigned long launches = simgpu_calls("cuLaunchKernel");

    (void)state;
    fill(host, 64, 0);
    assert_int_equal(cudaMalloc((void **)&d, sizeof host), cudaSuccess);
    assert_int_equal(cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(launch_add(d, 64, 1000, NULL), cudaSuccess);
    assert_int_equal(launch_add(d, 32, 1, NULL), cudaSuccess);
    assert_int_equal(cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < 64; i++)
        assert_int_equal(host[i], i + 1000 + (i < 32));
    assert_int_equal(simgpu_calls("cuLaunchKernel"), launches + 2);
    assert_int_equal(cudaFree(d), cudaSuccess);
}

static void test_launch_errors(void **state)
{
    void *args[1] = {NULL};

    (void)state;
    assert_int_equal(cudaLaunchKernel((const void *)k_unregistered, (dim3){1, 1, 1},
                                      (dim3){1, 1, 1}, args, 0, NULL),
                     cudaErrorInvalidDeviceFunction);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidDeviceFunction);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    assert_int_equal(
        cudaLaunchKernel((const void *)k_add, (dim3){0, 1, 1}, (dim3){1, 1, 1}, args, 0, NULL),
        cudaErrorInvalidConfiguration);
    assert_int_equal(
        cudaLaunchKernel((const void *)k_add, (dim3){1, 1, 1}, (dim3){1025, 1, 1}, args, 0, NULL),
        cudaErrorInvalidConfiguration);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidConfiguration);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
}

/* ---- streams and events ----------------------------------------------------------------- */

static void test_event_elapsed_time(void **state)
{
    cudaEvent_t a, b;
    cudaStream_t s;
    float ms = -1.0f;
    int *d;

    (void)state;
    assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&d, 64), cudaSuccess);
    assert_int_equal(cudaEventCreate(&a), cudaSuccess);
    assert_int_equal(cudaEventCreateWithFlags(&b, cudaEventBlockingSync), cudaSuccess);
    assert_int_equal(cudaEventRecord(a, s), cudaSuccess);
    for (int i = 0; i < 4; i++)
        assert_int_equal(launch_add(d, 16, 1, s), cudaSuccess);
    assert_int_equal(cudaEventRecord(b, s), cudaSuccess);
    assert_int_equal(cudaEventSynchronize(b), cudaSuccess);
    assert_int_equal(cudaEventQuery(a), cudaSuccess);
    assert_int_equal(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
    assert_float_equal(ms, 4 * KERNEL_COST_US / 1000.0, 1e-4);
    assert_int_equal(cudaEventDestroy(a), cudaSuccess);
    assert_int_equal(cudaEventDestroy(b), cudaSuccess);
    assert_int_equal(cudaFree(d), cudaSuccess);
    assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

static void test_event_disable_timing(void **state)
{
    cudaEvent_t a, b;
    float ms;

    (void)state;
    assert_int_equal(cudaEventCreateWithFlags(&a, cudaEventDisableTiming), cudaSuccess);
    assert_int_equal(cudaEventCreate(&b), cudaSuccess);
    assert_int_equal(cudaEventRecord(a, NULL), cudaSuccess);
    assert_int_equal(cudaEventRecord(b, NULL), cudaSuccess);
    assert_int_equal(cudaEventSynchronize(b), cudaSuccess);
    assert_int_equal(cudaEventElapsedTime(&ms, a, b), cudaErrorInvalidResourceHandle);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidResourceHandle);
    assert_int_equal(cudaEventDestroy(a), cudaSuccess);
    assert_int_equal(cudaEventDestroy(b), cudaSuccess);
}

/* A gated kernel on s1; s2 waits on an event recorded after it, so s2's add
   must see the gate's stream order; queries report not-ready without
   touching the last error. */
static void test_stream_wait_and_query(void **state)
{
    cudaStream_t s1, s2;
    cudaEvent_t ev;
    int host[8] = {0};
    int *d;

    (void)state;
    assert_int_equal(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess);
    assert_int_equal(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), cudaSuccess);
    assert_int_equal(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&d, sizeof host), cudaSuccess);
    assert_int_equal(cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(launch_gate(&gate, s1), cudaSuccess);
    assert_int_equal(launch_add(d, 8, 1, s1), cudaSuccess);
    assert_int_equal(cudaEventRecord(ev, s1), cudaSuccess);
    assert_int_equal(cudaStreamWaitEvent(s2, ev, 0), cudaSuccess);
    assert_int_equal(launch_add(d, 8, 1, s2), cudaSuccess);
    assert_int_equal(cudaStreamQuery(s1), cudaErrorNotReady);
    assert_int_equal(cudaStreamQuery(s2), cudaErrorNotReady);
    assert_int_equal(cudaEventQuery(ev), cudaErrorNotReady);
    assert_int_equal(cudaGetLastError(), cudaSuccess); /* not-ready is not an error */
    atomic_store(&gate, 1);
    assert_int_equal(cudaStreamSynchronize(s2), cudaSuccess);
    assert_int_equal(cudaStreamQuery(s1), cudaSuccess);
    assert_int_equal(cudaEventQuery(ev), cudaSuccess);
    assert_int_equal(cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < 8; i++)
        assert_int_equal(host[i], 2);
    assert_int_equal(cudaFree(d), cudaSuccess);
    assert_int_equal(cudaEventDestroy(ev), cudaSuccess);
    assert_int_equal(cudaStreamDestroy(s1), cudaSuccess);
    assert_int_equal(cudaStreamDestroy(s2), cudaSuccess);
}

static void test_stream_create_errors(void **state)
{
    cudaStream_t s;
    void *p;

    (void)state;
    assert_int_equal(cudaStreamCreateWithFlags(&s, 0x80), cudaErrorInvalidValue);
    assert_int_equal(cudaStreamCreate(NULL), cudaErrorInvalidValue);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
    /* An injected driver failure maps CUDA_ERROR_UNKNOWN to cudaErrorUnknown. */
    assert_int_equal(simgpu_fail("cuStreamCreate", 1, 0), 0);
    assert_int_equal(cudaStreamCreate(&s), cudaErrorUnknown);
    assert_int_equal(cudaGetLastError(), cudaErrorUnknown);
    assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
    assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
    assert_int_equal(simgpu_fail("cuMemAlloc_v2", 1, 0), 0);
    assert_int_equal(cudaMalloc(&p, 64), cudaErrorMemoryAllocation);
    assert_int_equal(cudaGetLastError(), cudaErrorMemoryAllocation);
}

/* ---- device ----------------------------------------------------------------------------- */

static void test_device_queries(void **state)
{
    int n = -1, dev = -1, v = -1, dv = -1, attr = -1, cuattr = -2;
    CUdevice cd;

    (void)state;
    assert_int_equal(cudaGetDeviceCount(&n), cudaSuccess);
    assert_int_equal(n, 1);
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    assert_int_equal(cudaSetDevice(1), cudaErrorInvalidDevice);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidDevice);
    assert_int_equal(cudaGetDevice(&dev), cudaSuccess);
    assert_int_equal(dev, 0);
    assert_int_equal(cudaRuntimeGetVersion(&v), cudaSuccess);
    assert_int_equal(v, CUDART_VERSION);
    assert_int_equal(cudaDriverGetVersion(&dv), cudaSuccess);
    assert_int_equal(cuDriverGetVersion(&v), CUDA_SUCCESS);
    assert_int_equal(dv, v);
    assert_int_equal(cudaDeviceGetAttribute(&attr, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
    assert_int_equal(cuDeviceGet(&cd, 0), CUDA_SUCCESS);
    assert_int_equal(cuDeviceGetAttribute(&cuattr, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cd),
                     CUDA_SUCCESS);
    assert_int_equal(attr, cuattr);
    assert_true(attr > 0);
    assert_int_equal(cudaDeviceGetAttribute(&attr, cudaDevAttrMultiProcessorCount, 3),
                     cudaErrorInvalidDevice);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidDevice);
}

static void test_error_strings(void **state)
{
    (void)state;
    assert_string_equal(cudaGetErrorName(cudaSuccess), "cudaSuccess");
    assert_string_equal(cudaGetErrorString(cudaSuccess), "no error");
    assert_string_equal(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation");
    assert_string_equal(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory");
    assert_string_equal(cudaGetErrorName(cudaErrorIllegalAddress), "cudaErrorIllegalAddress");
    assert_string_equal(cudaGetErrorString(cudaErrorIllegalAddress),
                        "an illegal memory access was encountered");
    assert_string_equal(cudaGetErrorName(cudaErrorStreamCaptureInvalidated),
                        "cudaErrorStreamCaptureInvalidated");
    assert_string_equal(cudaGetErrorName((cudaError_t)12345), "unrecognized error code");
    assert_string_equal(cudaGetErrorString((cudaError_t)12345), "unrecognized error code");
}

/* ---- threads ---------------------------------------------------------------------------- */

struct thread_result {
    cudaError_t peek, alloc, launch, sync;
    CUcontext ctx;
    int value;
};

/* A fresh thread: sees none of the main thread's errors, and its first
   runtime call makes the primary context current on it. */
static void *worker(void *arg)
{
    struct thread_result *r = arg;
    int *d = NULL;

    r->peek = cudaPeekAtLastError();
    r->alloc = cudaMalloc((void **)&d, sizeof(int));
    cuCtxGetCurrent(&r->ctx);
    cudaMemset(d, 0, sizeof(int));
    r->launch = launch_add(d, 1, 41, NULL);
    r->sync = cudaMemcpy(&r->value, d, sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(d);
    return NULL;
}

static void test_threads(void **state)
{
    struct thread_result r[4];
    pthread_t t[4];
    CUcontext primary;
    CUdevice dev;
    void *p;

    (void)state;
    assert_int_equal(cudaMalloc(&p, (size_t)1 << 50), cudaErrorMemoryAllocation);
    memset(r, 0, sizeof r);
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, worker, &r[i]), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(cuDeviceGet(&dev, 0), CUDA_SUCCESS);
    assert_int_equal(cuDevicePrimaryCtxRetain(&primary, dev), CUDA_SUCCESS);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(r[i].peek, cudaSuccess);
        assert_int_equal(r[i].alloc, cudaSuccess);
        assert_int_equal(r[i].launch, cudaSuccess);
        assert_int_equal(r[i].sync, cudaSuccess);
        assert_int_equal(r[i].value, 41);
        assert_ptr_equal(r[i].ctx, primary);
    }
    assert_int_equal(cuDevicePrimaryCtxRelease(dev), CUDA_SUCCESS);
    assert_int_equal(cudaGetLastError(), cudaErrorMemoryAllocation);
}

/* ---- capture and graphs ----------------------------------------------------------------- */

static void test_capture_and_graph(void **state)
{
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusInvalidated;
    cudaStream_t s;
    cudaGraph_t g = NULL;
    cudaGraphExec_t ge = NULL;
    cudaEvent_t a, b;
    int host[16] = {0};
    float ms = 0;
    int *d;
    uint64_t kernels;

    (void)state;
    assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&d, sizeof host), cudaSuccess);
    assert_int_equal(cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice), cudaSuccess);
    kernels = STAT(kernels);
    assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    assert_int_equal(cudaStreamIsCapturing(s, &st), cudaSuccess);
    assert_int_equal(st, cudaStreamCaptureStatusActive);
    assert_int_equal(launch_add(d, 16, 1, s), cudaSuccess);
    assert_int_equal(launch_add(d, 8, 10, s), cudaSuccess);
    assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
    assert_non_null(g);
    assert_int_equal(cudaStreamIsCapturing(s, &st), cudaSuccess);
    assert_int_equal(st, cudaStreamCaptureStatusNone);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    assert_int_equal(STAT(kernels), kernels); /* captured, not run */
    assert_int_equal(cudaGraphInstantiate(&ge, g, 0), cudaSuccess);
    assert_int_equal(cudaEventCreate(&a), cudaSuccess);
    assert_int_equal(cudaEventCreate(&b), cudaSuccess);
    assert_int_equal(cudaEventRecord(a, s), cudaSuccess);
    for (int i = 0; i < 3; i++)
        assert_int_equal(cudaGraphLaunch(ge, s), cudaSuccess);
    assert_int_equal(cudaEventRecord(b, s), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    assert_int_equal(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
    assert_float_equal(ms, 6 * KERNEL_COST_US / 1000.0, 1e-4);
    assert_int_equal(STAT(kernels), kernels + 6);
    assert_int_equal(cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < 16; i++)
        assert_int_equal(host[i], 3 + (i < 8 ? 30 : 0));
    assert_int_equal(cudaGraphExecDestroy(ge), cudaSuccess);
    assert_int_equal(cudaGraphDestroy(g), cudaSuccess);
    assert_int_equal(cudaEventDestroy(a), cudaSuccess);
    assert_int_equal(cudaEventDestroy(b), cudaSuccess);
    assert_int_equal(cudaFree(d), cudaSuccess);
    assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

/* ---- per-thread default stream variants -------------------------------------------------- */

/* The _ptsz/_ptds exports, looked up by name so that this file keeps the
   legacy prototypes; each has the prototype of its legacy twin. */
#define PTSZ(name) ((__typeof__(&name))must_sym(#name "_ptsz"))
#define PTDS(name) ((__typeof__(&name))must_sym(#name "_ptds"))

static void *must_sym(const char *name)
{
    void *p = dlsym(RTLD_DEFAULT, name);

    if (!p)
        fail_msg("libcudart.so.13 does not export %s", name);
    return p;
}

struct ptsz_probe {
    cudaError_t query;
};

static void *other_thread_query(void *arg)
{
    struct ptsz_probe *p = arg;

    p->query = PTSZ(cudaStreamQuery)(NULL);
    return NULL;
}

/* NULL is the per-thread stream in _ptsz calls: a gated kernel queued there
   keeps this thread's per-thread stream busy and no other thread's. */
static void test_per_thread_stream(void **state)
{
    struct ptsz_probe probe = {cudaErrorUnknown};
    unsigned long launches = simgpu_calls("cuLaunchKernel_ptsz");
    unsigned long queries = simgpu_calls("cuStreamQuery_ptsz");
    atomic_int *flag_ptr = &gate;
    void *args[] = {&flag_ptr};
    pthread_t t;

    (void)state;
    assert_int_equal(PTSZ(cudaLaunchKernel)((const void *)k_gate, (dim3){1, 1, 1}, (dim3){1, 1, 1},
                                            args, 0, NULL),
                     cudaSuccess);
    assert_int_equal(simgpu_calls("cuLaunchKernel_ptsz"), launches + 1);
    assert_int_equal(PTSZ(cudaStreamQuery)(NULL), cudaErrorNotReady);
    assert_int_equal(cudaStreamQuery(cudaStreamPerThread), cudaErrorNotReady);
    assert_int_equal(pthread_create(&t, NULL, other_thread_query, &probe), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(probe.query, cudaSuccess);
    assert_int_equal(simgpu_calls("cuStreamQuery_ptsz"), queries + 2);
    atomic_store(&gate, 1);
    assert_int_equal(PTSZ(cudaStreamSynchronize)(NULL), cudaSuccess);
    assert_int_equal(PTSZ(cudaStreamQuery)(NULL), cudaSuccess);
}

/* Every per-thread export reaches the per-thread variant of its driver call. */
static void test_per_thread_variants(void **state)
{
    int host[32], *d = NULL, *a = NULL;
    cudaEvent_t ev;
    cudaStream_t s = NULL;
    cudaGraph_t g;
    cudaGraphExec_t ge;
    enum cudaStreamCaptureStatus st;
    const struct {
        const char *entry;
        unsigned long before;
    } * c, checks[] = {
               {"cuMemcpyHtoD_v2_ptds", simgpu_calls("cuMemcpyHtoD_v2_ptds")},
               {"cuMemcpyDtoH_v2_ptds", simgpu_calls("cuMemcpyDtoH_v2_ptds")},
               {"cuMemsetD8_v2_ptds", simgpu_calls("cuMemsetD8_v2_ptds")},
               {"cuMemsetD8Async_ptsz", simgpu_calls("cuMemsetD8Async_ptsz")},
               {"cuMemcpyHtoDAsync_v2_ptsz", simgpu_calls("cuMemcpyHtoDAsync_v2_ptsz")},
               {"cuMemAllocAsync_ptsz", simgpu_calls("cuMemAllocAsync_ptsz")},
               {"cuMemFreeAsync_ptsz", simgpu_calls("cuMemFreeAsync_ptsz")},
               {"cuEventRecord_ptsz", simgpu_calls("cuEventRecord_ptsz")},
               {"cuStreamWaitEvent_ptsz", simgpu_calls("cuStreamWaitEvent_ptsz")},
               {"cuStreamBeginCapture_v2_ptsz", simgpu_calls("cuStreamBeginCapture_v2_ptsz")},
               {"cuStreamIsCapturing_ptsz", simgpu_calls("cuStreamIsCapturing_ptsz")},
               {"cuStreamEndCapture_ptsz", simgpu_calls("cuStreamEndCapture_ptsz")},
               {"cuGraphLaunch_ptsz", simgpu_calls("cuGraphLaunch_ptsz")},
               {"cuStreamSynchronize_ptsz", simgpu_calls("cuStreamSynchronize_ptsz")},
           };

    (void)state;
    fill(host, 32, 50);
    assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    assert_int_equal(cudaEventCreate(&ev), cudaSuccess);
    assert_int_equal(cudaMalloc((void **)&d, sizeof host), cudaSuccess);
    assert_int_equal(PTDS(cudaMemset)(d, 0, sizeof host), cudaSuccess);
    assert_int_equal(PTSZ(cudaMemsetAsync)(d, 0, sizeof host, NULL), cudaSuccess);
    assert_int_equal(PTDS(cudaMemcpy)(d, host, sizeof host, cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(PTSZ(cudaMallocAsync)((void **)&a, sizeof host, NULL), cudaSuccess);
    assert_int_equal(PTSZ(cudaMemcpyAsync)(a, host, sizeof host, cudaMemcpyHostToDevice, NULL),
                     cudaSuccess);
    assert_int_equal(PTSZ(cudaEventRecord)(ev, NULL), cudaSuccess);
    assert_int_equal(PTSZ(cudaStreamWaitEvent)(s, ev, 0), cudaSuccess);
    assert_int_equal(PTSZ(cudaFreeAsync)(a, NULL), cudaSuccess);
    assert_int_equal(PTSZ(cudaStreamBeginCapture)(s, cudaStreamCaptureModeThreadLocal),
                     cudaSuccess);
    assert_int_equal(PTSZ(cudaStreamIsCapturing)(s, &st), cudaSuccess);
    assert_int_equal(st, cudaStreamCaptureStatusActive);
    assert_int_equal(launch_add(d, 32, 2, s), cudaSuccess);
    assert_int_equal(PTSZ(cudaStreamEndCapture)(s, &g), cudaSuccess);
    assert_int_equal(cudaGraphInstantiate(&ge, g, 0), cudaSuccess);
    assert_int_equal(PTSZ(cudaGraphLaunch)(ge, NULL), cudaSuccess);
    assert_int_equal(PTSZ(cudaStreamSynchronize)(NULL), cudaSuccess);
    assert_int_equal(PTDS(cudaMemcpy)(host, d, sizeof host, cudaMemcpyDeviceToHost), cudaSuccess);
    expect_seq(host, 32, 52);
    for (c = checks; c < checks + sizeof checks / sizeof *checks; c++)
        if (simgpu_calls(c->entry) <= c->before)
            fail_msg("%s was not called through the per-thread table", c->entry);
    assert_int_equal(cudaGraphExecDestroy(ge), cudaSuccess);
    assert_int_equal(cudaGraphDestroy(g), cudaSuccess);
    assert_int_equal(cudaEventDestroy(ev), cudaSuccess);
    assert_int_equal(cudaFree(d), cudaSuccess);
    assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

/* ---- sticky errors (in a child process: they poison the context) ------------------------ */

static void *sticky_other_thread(void *arg)
{
    cudaError_t *out = arg;
    void *p = NULL;

    out[0] = cudaGetLastError();
    out[1] = cudaMalloc(&p, 64);
    return NULL;
}

#define CHILD_EXPECT(expr, want)                                                                   \
    do {                                                                                           \
        cudaError_t got_ = (expr);                                                                 \
        if (got_ != (want)) {                                                                      \
            fprintf(stderr, "%s:%d: %s = %s, expected %s\n", __FILE__, __LINE__, #expr,            \
                    cudaGetErrorName(got_), cudaGetErrorName(want));                               \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

/* A kernel touching freed memory fails with a sticky cudaErrorIllegalAddress:
   every later call, on every thread, returns it and cudaGetLastError never
   clears it. Returns the child's exit status. */
static int sticky_child(void)
{
    cudaError_t other[2];
    pthread_t t;
    int *d = NULL;

    register_kernels();
    CHILD_EXPECT(cudaMalloc((void **)&d, 4096), cudaSuccess);
    CHILD_EXPECT(cudaFree(d), cudaSuccess);
    CHILD_EXPECT(launch_add(d, 16, 1, NULL), cudaSuccess);
    CHILD_EXPECT(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
    CHILD_EXPECT(cudaPeekAtLastError(), cudaErrorIllegalAddress);
    CHILD_EXPECT(cudaGetLastError(), cudaErrorIllegalAddress);
    CHILD_EXPECT(cudaGetLastError(), cudaErrorIllegalAddress);
    CHILD_EXPECT(cudaMalloc((void **)&d, 64), cudaErrorIllegalAddress);
    CHILD_EXPECT(launch_add(d, 16, 1, NULL), cudaErrorIllegalAddress);
    if (pthread_create(&t, NULL, sticky_other_thread, other) != 0 || pthread_join(t, NULL) != 0)
        return 1;
    CHILD_EXPECT(other[0], cudaErrorIllegalAddress);
    CHILD_EXPECT(other[1], cudaErrorIllegalAddress);
    return 0;
}

static void test_sticky_error(void **state)
{
    char *argv[] = {"/proc/self/exe", "--sticky-child", NULL};
    pid_t pid;
    int status = -1;

    (void)state;
    assert_int_equal(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ), 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(cudaPeekAtLastError(), cudaSuccess); /* another process's sticky error */
}

/* ---- linkage ---------------------------------------------------------------------------- */

/* The runtime must reach the driver only through dlopen: no DT_NEEDED on libcuda. */
static void test_no_libcuda_dependency(void **state)
{
    const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
    char cmd[512], line[512];
    int soname = 0, needed = 0;
    FILE *f;

    (void)state;
    snprintf(cmd, sizeof cmd, "readelf -d %s/simgpu/libcudart.so.13", build);
    f = popen(cmd, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "(SONAME)") && strstr(line, "[libcudart.so.13]"))
            soname++;
        if (strstr(line, "(NEEDED)") && strstr(line, "libcuda."))
            needed++;
    }
    assert_int_equal(pclose(f), 0);
    assert_int_equal(soname, 1);
    assert_int_equal(needed, 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_malloc_free, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malloc_out_of_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malloc_async, setup, teardown),
        cmocka_unit_test_setup_teardown(test_host_alloc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memcpy_directions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memcpy_async_pinned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_launch_kernel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_launch_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_elapsed_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_disable_timing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_wait_and_query, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_create_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_device_queries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_strings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_capture_and_graph, setup, teardown),
        cmocka_unit_test_setup_teardown(test_per_thread_stream, setup, teardown),
        cmocka_unit_test_setup_teardown(test_per_thread_variants, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sticky_error, setup, teardown),
        cmocka_unit_test(test_no_libcuda_dependency),
    };

    if (argc > 1 && strcmp(argv[1], "--sticky-child") == 0) {
        setenv("SIMGPU_QUIET", "1", 1);
        return sticky_child();
    }
    register_kernels();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
