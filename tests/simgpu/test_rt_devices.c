/* test_rt_devices.c — the simulated runtime with two devices (SIMGPU_DEVICES=2): the current
 * device is per host thread and selects its primary context; per-device synchronisation;
 * peer access and peer copies. */
#include "simgpu.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#define N 4096

static int ordinal_of(const void *p)
{
    int ord = -1;
    assert_int_equal(
        cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)(uintptr_t)p),
        CUDA_SUCCESS);
    return ord;
}

static void test_count_and_bounds(void **state)
{
    (void)state;
    int n = 0, dev = -1;
    assert_int_equal(cudaGetDeviceCount(&n), cudaSuccess);
    assert_int_equal(n, 2);
    assert_int_equal(cudaSetDevice(2), cudaErrorInvalidDevice);
    assert_int_equal(cudaGetLastError(), cudaErrorInvalidDevice);
    assert_int_equal(cudaGetDevice(&dev), cudaSuccess);
    assert_int_equal(dev, 0);
}

struct thread_result {
    int device_seen;
    int ordinal;
    CUcontext ctx;
};

/* A thread that never calls cudaSetDevice uses device 0, whatever other threads chose. */
static void *default_thread(void *arg)
{
    struct thread_result *r = arg;
    void *p = NULL;
    cudaGetDevice(&r->device_seen);
    if (cudaMalloc(&p, N) == cudaSuccess) {
        r->ordinal = ordinal_of(p);
        cudaFree(p);
    }
    cuCtxGetCurrent(&r->ctx);
    return NULL;
}

static void test_set_device_per_thread(void **state)
{
    (void)state;
    void *p = NULL;
    CUcontext mine, primary1;
    assert_int_equal(cudaSetDevice(1), cudaSuccess);
    assert_int_equal(cudaMalloc(&p, N), cudaSuccess);
    assert_int_equal(ordinal_of(p), 1);
    /* cudaSetDevice binds the device's primary context to the thread */
    assert_int_equal(cuCtxGetCurrent(&mine), CUDA_SUCCESS);
    assert_int_equal(cuDevicePrimaryCtxRetain(&primary1, 1), CUDA_SUCCESS);
    assert_ptr_equal(mine, primary1);
    assert_int_equal(cuDevicePrimaryCtxRelease(1), CUDA_SUCCESS);
    struct thread_result r = {-1, -1, NULL};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, default_thread, &r), 0);
    pthread_join(t, NULL);
    assert_int_equal(r.device_seen, 0);
    assert_int_equal(r.ordinal, 0);
    assert_ptr_not_equal(r.ctx, mine);
    int dev = -1;
    assert_int_equal(cudaGetDevice(&dev), cudaSuccess);
    assert_int_equal(dev, 1);
    assert_int_equal(cudaFree(p), cudaSuccess);
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
}

static void test_peer(void **state)
{
    (void)state;
    int can = -1;
    assert_int_equal(cudaDeviceCanAccessPeer(&can, 0, 1), cudaSuccess);
    assert_int_equal(can, 1);
    assert_int_equal(cudaDeviceCanAccessPeer(&can, 1, 1), cudaSuccess);
    assert_int_equal(can, 0);
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    assert_int_equal(cudaDeviceEnablePeerAccess(0, 0), cudaErrorInvalidDevice);
    cudaGetLastError();
    assert_int_equal(cudaDeviceEnablePeerAccess(1, 0), cudaSuccess);
    assert_int_equal(cudaDeviceEnablePeerAccess(1, 0), cudaErrorPeerAccessAlreadyEnabled);
    cudaGetLastError();

    unsigned char host[N], back[N];
    for (int i = 0; i < N; i++)
        host[i] = (unsigned char)(i * 7 + 3);
    void *a = NULL, *b = NULL;
    assert_int_equal(cudaMalloc(&a, N), cudaSuccess);
    assert_int_equal(cudaMemcpy(a, host, N, cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(cudaSetDevice(1), cudaSuccess);
    assert_int_equal(cudaMalloc(&b, N), cudaSuccess);
    struct simgpu_stats s0, s1;
    simgpu_get_stats(&s0);
    assert_int_equal(cudaMemcpyPeer(b, 1, a, 0, N), cudaSuccess);
    assert_int_equal(cudaMemcpy(back, b, N, cudaMemcpyDeviceToHost), cudaSuccess);
    assert_memory_equal(back, host, N);
    /* the async form, back onto device 0 at an offset */
    assert_int_equal(cudaMemcpyPeerAsync(a, 0, (char *)b + N / 2, 1, N / 2, NULL), cudaSuccess);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(cudaMemcpy(back, a, N / 2, cudaMemcpyDeviceToHost), cudaSuccess);
    assert_memory_equal(back, host + N / 2, N / 2);
    simgpu_get_stats(&s1);
    assert_int_equal(s1.bytes_peer - s0.bytes_peer, N + N / 2);
    assert_int_equal(cudaMemcpyPeer(b, 1, a, 5, N), cudaErrorInvalidDevice);
    cudaGetLastError();
    assert_int_equal(cudaFree(b), cudaSuccess);
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    assert_int_equal(cudaFree(a), cudaSuccess);
}

int main(void)
{
    setenv("SIMGPU_DEVICES", "2", 1);
    setenv("SIMGPU_MEMORY", "64MiB", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_and_bounds),
        cmocka_unit_test(test_set_device_per_thread),
        cmocka_unit_test(test_peer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
