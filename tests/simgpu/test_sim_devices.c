/* test_sim_devices.c — several simulated devices (SIMGPU_DEVICES=3): per-device memory and peaks,
 * primary and created contexts, peer copies, and a kernel touching another device's memory.
 * The cross-device illegal access poisons the process (sticky), so it runs last. */
#include "simgpu_test.h"

#include <stdio.h>

static CUcontext primary(int dev)
{
    CUcontext c;
    CK(cuDevicePrimaryCtxRetain(&c, dev));
    return c;
}

static struct simgpu_device_stats dev_stats(int dev)
{
    struct simgpu_device_stats s;
    assert_int_equal(simgpu_get_device_stats(dev, &s), 0);
    return s;
}

SIM_TEST(test_table)
{
    (void)state;
    CK(cuInit(0));
    int n = 0;
    CK(cuDeviceGetCount(&n));
    assert_int_equal(n, 3);
    assert_int_equal(simgpu_device_count(), 3);
    CUdevice d;
    CK(cuDeviceGet(&d, 2));
    assert_int_equal(d, 2);
    assert_int_equal(cuDeviceGet(&d, 3), CUDA_ERROR_INVALID_DEVICE);
    assert_int_equal(cuDeviceGet(&d, -1), CUDA_ERROR_INVALID_DEVICE);
    /* SIMGPU_MEMORY=64MiB,32MiB: device 2 takes the list's last entry */
    size_t total[3];
    for (int i = 0; i < 3; i++)
        CK(cuDeviceTotalMem(&total[i], i));
    assert_int_equal(total[0], 64 * MIB);
    assert_int_equal(total[1], 32 * MIB);
    assert_int_equal(total[2], 32 * MIB);
    assert_int_equal(cuDeviceTotalMem(&total[0], 3), CUDA_ERROR_INVALID_DEVICE);
    int bus0, bus1;
    CK(cuDeviceGetAttribute(&bus0, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 0));
    CK(cuDeviceGetAttribute(&bus1, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 1));
    assert_int_not_equal(bus0, bus1);
    assert_int_equal(sim_test_stats().capacity_bytes, 128 * MIB);
    int can = -1;
    CK(cuDeviceCanAccessPeer(&can, 0, 1));
    assert_int_equal(can, 1);
    CK(cuDeviceCanAccessPeer(&can, 1, 1));
    assert_int_equal(can, 0);
    assert_int_equal(cuDeviceCanAccessPeer(&can, 0, 5), CUDA_ERROR_INVALID_DEVICE);
}

SIM_TEST(test_contexts)
{
    (void)state;
    CUcontext p0 = primary(0), p1 = primary(1), cur;
    assert_ptr_not_equal(p0, p1);
    unsigned flags;
    int active;
    CK(cuDevicePrimaryCtxGetState(2, &flags, &active));
    assert_int_equal(active, 0);
    CK(cuDevicePrimaryCtxGetState(1, &flags, &active));
    assert_int_equal(active, 1);
    CK(cuCtxSetCurrent(p1));
    CUdevice d = -1;
    CK(cuCtxGetDevice(&d));
    assert_int_equal(d, 1);
    /* a created context on device 2 is pushed over p1, and popping it restores p1 */
    CUcontext c2;
    CK(cuCtxCreate(&c2, NULL, 0, 2));
    CK(cuCtxGetDevice(&d));
    assert_int_equal(d, 2);
    CUdeviceptr p;
    CK(cuMemAlloc(&p, MIB));
    int ord = -1;
    CK(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p));
    assert_int_equal(ord, 2);
    CK(cuPointerGetAttribute(&cur, CU_POINTER_ATTRIBUTE_CONTEXT, p));
    assert_ptr_equal(cur, c2);
    CK(cuMemFree(p));
    CK(cuCtxDestroy(c2));
    CK(cuCtxGetCurrent(&cur));
    assert_ptr_equal(cur, p1);
    assert_int_equal(cuCtxDestroy(c2), CUDA_ERROR_INVALID_CONTEXT);
    CK(cuCtxPushCurrent(p0));
    CK(cuCtxGetDevice(&d));
    assert_int_equal(d, 0);
    CK(cuCtxPopCurrent(&cur));
    assert_ptr_equal(cur, p0);
    CK(cuCtxGetCurrent(&cur));
    assert_ptr_equal(cur, p1);
}

SIM_TEST(test_memory_per_device)
{
    (void)state;
    CK(cuCtxSetCurrent(primary(1)));
    simgpu_reset_peak();
    CUdeviceptr a, b;
    CK(cuMemAlloc(&a, 16 * MIB));
    assert_int_equal(dev_stats(1).device_bytes, 16 * MIB);
    assert_int_equal(dev_stats(0).device_bytes, 0);
    /* 40 MiB exceeds device 1's 32 MiB, not device 0's 64 MiB */
    assert_int_equal(cuMemAlloc(&b, 40 * MIB), CUDA_ERROR_OUT_OF_MEMORY);
    size_t free_b, total;
    CK(cuMemGetInfo(&free_b, &total));
    assert_int_equal(total, 32 * MIB);
    assert_int_equal(free_b, 16 * MIB);
    CK(cuCtxSetCurrent(primary(0)));
    CK(cuMemAlloc(&b, 40 * MIB));
    assert_int_equal(dev_stats(0).device_bytes, 40 * MIB);
    /* VMM memory goes where its location says, whichever device is current */
    CUmemAllocationProp prop = {0};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 2;
    CUmemGenericAllocationHandle h;
    CK(cuMemCreate(&h, 4 * MIB, &prop, 0));
    assert_int_equal(dev_stats(2).device_bytes, 4 * MIB);
    prop.location.id = 3;
    assert_int_equal(cuMemCreate(&h, 4 * MIB, &prop, 0), CUDA_ERROR_INVALID_DEVICE);
    CK(cuMemFree(a));
    CK(cuMemFree(b));
    CK(cuMemRelease(h));
    for (int d = 0; d < 3; d++)
        assert_int_equal(dev_stats(d).device_bytes, 0);
    assert_int_equal(dev_stats(0).window_peak_bytes, 40 * MIB);
    assert_int_equal(dev_stats(1).window_peak_bytes, 16 * MIB);
    assert_int_equal(dev_stats(2).window_peak_bytes, 4 * MIB);
    assert_int_equal(sim_test_stats().window_peak_bytes, 16 * MIB + 40 * MIB + 4 * MIB);
}

/* Fills n words on the current device with seed + i. */
static CUdeviceptr filled(size_t n, uint32_t seed)
{
    CUdeviceptr p;
    CK(cuMemAlloc(&p, n * 4));
    sim_test_launch_fill(NULL, p, n, seed);
    return p;
}

SIM_TEST(test_peer_copies)
{
    (void)state;
    const size_t n = 300000;
    CUcontext p0 = primary(0), p1 = primary(1);
    CK(cuCtxSetCurrent(p0));
    uint64_t k0 = dev_stats(0).kernels, k1 = dev_stats(1).kernels;
    CUdeviceptr src = filled(n, 7);
    CK(cuCtxSetCurrent(p1));
    CUdeviceptr dst1, dst2;
    CK(cuMemAlloc(&dst1, n * 4));
    CK(cuMemAlloc(&dst2, n * 4));
    struct simgpu_stats before = sim_test_stats();
    CK(cuMemcpyPeer(dst1, p1, src, p0, n * 4));
    assert_int_equal(sim_test_wrong_words(dst1, n, 7), 0);
    /* unified addressing: a plain cuMemcpy between devices is a peer copy too */
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    CK(cuMemcpyAsync(dst2, src, n * 4, s));
    CK(cuStreamSynchronize(s));
    assert_int_equal(sim_test_wrong_words(dst2, n, 7), 0);
    struct simgpu_stats after = sim_test_stats();
    assert_int_equal(after.bytes_peer - before.bytes_peer, 2 * n * 4);
    assert_int_equal(after.bytes_d2d, before.bytes_d2d);
    /* a context that does not own the address is refused */
    assert_int_equal(cuMemcpyPeer(dst1, p0, src, p0, 4), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(dev_stats(0).kernels, k0 + 1);
    assert_int_equal(dev_stats(1).kernels, k1);
    CK(cuStreamDestroy(s));
    CK(cuMemFree(dst1));
    CK(cuMemFree(dst2));
    CK(cuCtxSetCurrent(p0));
    CK(cuMemFree(src));
}

/* A kernel of device 0 may write device 1's memory once peer access is enabled. */
SIM_TEST(test_peer_kernel)
{
    (void)state;
    CUcontext p0 = primary(0), p1 = primary(1);
    CK(cuCtxSetCurrent(p1));
    CUdeviceptr on1;
    CK(cuMemAlloc(&on1, 4096));
    CK(cuCtxSetCurrent(p0));
    assert_int_equal(cuCtxEnablePeerAccess(p0, 0), CUDA_ERROR_INVALID_CONTEXT);
    CK(cuCtxEnablePeerAccess(p1, 0));
    assert_int_equal(cuCtxEnablePeerAccess(p1, 0), CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
    sim_test_launch_fill(NULL, on1, 16, 100);
    CK(cuCtxSynchronize());
    assert_int_equal(sim_test_wrong_words(on1, 16, 100), 0);
    CK(cuCtxDisablePeerAccess(p1));
    assert_int_equal(cuCtxDisablePeerAccess(p1), CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
    CK(cuCtxSetCurrent(p1));
    /* after device 0's kernels, device 1's own kernels still reach its memory */
    sim_test_launch_fill(NULL, on1, 16, 300);
    CK(cuCtxSynchronize());
    assert_int_equal(sim_test_wrong_words(on1, 16, 300), 0);
    CK(cuMemFree(on1));
}

/* Without peer access the same write is an illegal address, reported like any other. */
SIM_TEST(test_cross_device_illegal)
{
    (void)state;
    CUcontext p0 = primary(0), p1 = primary(1);
    CK(cuCtxSetCurrent(p1));
    CUdeviceptr on1 = filled(16, 5);
    CK(cuCtxSynchronize());
    CK(cuCtxSetCurrent(p0));
    uint64_t illegal = sim_test_stats().illegal_accesses;
    sim_test_launch_fill(NULL, on1, 16, 100);
    assert_int_equal(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    assert_int_equal(sim_test_stats().illegal_accesses, illegal + 1);
}

int main(void)
{
    setenv("SIMGPU_DEVICES", "3", 1);
    setenv("SIMGPU_MEMORY", "64MiB,32MiB", 1);
    return sim_test_run(NULL);
}
