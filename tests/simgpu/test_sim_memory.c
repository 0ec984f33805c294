/* test_sim_memory.c — simulated memory: aliasing handles, capacity, VMM rules, host-located memory.
 */
#include "simgpu_test.h"

#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>

#define CAPACITY (64 * MIB)

SIM_TEST(test_alias_same_bytes)
{
    (void)state;
    CUmemGenericAllocationHandle h;
    CUdeviceptr a = sim_test_vmm(2 * MIB, CU_MEM_LOCATION_TYPE_DEVICE, &h);
    CUdeviceptr b;
    CK(cuMemAddressReserve(&b, 2 * MIB, 0, 0, 0));
    CK(cuMemMap(b, 2 * MIB, 0, h, 0));
    CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CK(cuMemSetAccess(b, 2 * MIB, &acc, 1));
    assert_true(a != b);
    sim_test_launch_fill(NULL, a, 1024, 7); /* a kernel writes through a ... */
    uint32_t out[1024];
    CK(cuMemcpyDtoH(out, b, sizeof out)); /* ... a copy reads through b */
    for (uint32_t i = 0; i < 1024; i++)
        assert_int_equal(out[i], 7 + i);
    CK(cuMemUnmap(a, 2 * MIB));
    CK(cuMemUnmap(b, 2 * MIB));
    CK(cuMemRelease(h));
    CK(cuMemAddressFree(a, 2 * MIB));
    CK(cuMemAddressFree(b, 2 * MIB));
}

SIM_TEST(test_data_survives_remap_device_to_host_and_back)
{
    (void)state;
    CUmemGenericAllocationHandle dev, host, dev2;
    CUdeviceptr va = sim_test_vmm(2 * MIB, CU_MEM_LOCATION_TYPE_DEVICE, &dev);
    sim_test_launch_fill(NULL, va, 4096, 100);
    /* evict: copy to a host-located handle mapped elsewhere, remap va onto it */
    CUdeviceptr tmp = sim_test_vmm(2 * MIB, CU_MEM_LOCATION_TYPE_HOST, &host);
    CK(cuMemcpyDtoD(tmp, va, 2 * MIB));
    CK(cuMemUnmap(tmp, 2 * MIB));
    CK(cuMemAddressFree(tmp, 2 * MIB));
    CK(cuMemUnmap(va, 2 * MIB));
    CK(cuMemRelease(dev));
    CK(cuMemMap(va, 2 * MIB, 0, host, 0));
    CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CK(cuMemSetAccess(va, 2 * MIB, &acc, 1));
    uint32_t probe[4];
    CK(cuMemcpyDtoH(probe, va + 4 * 4000, sizeof probe));
    assert_int_equal(probe[0], 4100);
    /* restore: fresh device memory */
    CUmemAllocationProp prop = {0};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CK(cuMemCreate(&dev2, 2 * MIB, &prop, 0));
    CUdeviceptr t2;
    CK(cuMemAddressReserve(&t2, 2 * MIB, 0, 0, 0));
    CK(cuMemMap(t2, 2 * MIB, 0, dev2, 0));
    CK(cuMemSetAccess(t2, 2 * MIB, &acc, 1));
    CK(cuMemcpyDtoD(t2, va, 2 * MIB));
    CK(cuMemUnmap(t2, 2 * MIB));
    CK(cuMemUnmap(va, 2 * MIB));
    CK(cuMemRelease(host));
    CK(cuMemMap(va, 2 * MIB, 0, dev2, 0));
    CK(cuMemSetAccess(va, 2 * MIB, &acc, 1));
    CK(cuMemRelease(dev2));
    CK(cuMemcpyDtoH(probe, va + 4 * 4095, 4));
    assert_int_equal(probe[0], 4195);
    CK(cuMemUnmap(va, 2 * MIB));
    CK(cuMemAddressFree(va, 2 * MIB));
    CK(cuMemAddressFree(t2, 2 * MIB));
}

SIM_TEST(test_capacity_enforced_and_reported)
{
    (void)state;
    size_t free0, total;
    CK(cuMemGetInfo(&free0, &total));
    assert_int_equal(total, CAPACITY);
    size_t dev_total;
    CK(cuDeviceTotalMem(&dev_total, 0));
    assert_int_equal(dev_total, CAPACITY);
    CUdeviceptr a, b, c;
    CK(cuMemAlloc(&a, 40 * MIB));
    size_t free1;
    CK(cuMemGetInfo(&free1, &total));
    assert_int_equal(free0 - free1, 40 * MIB);
    assert_int_equal(cuMemAlloc(&b, 30 * MIB), CUDA_ERROR_OUT_OF_MEMORY);
    CUmemAllocationProp prop = {0};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CUmemGenericAllocationHandle h;
    assert_int_equal(cuMemCreate(&h, 30 * MIB, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
    /* host-located memory does not count against the device */
    prop.location.type = CU_MEM_LOCATION_TYPE_HOST;
    CK(cuMemCreate(&h, 30 * MIB, &prop, 0));
    CK(cuMemRelease(h));
    CK(cuMemAlloc(&c, 20 * MIB));
    assert_int_equal(sim_test_stats().device_bytes, 60 * MIB);
    CK(cuMemFree(a));
    simgpu_reset_peak(); /* a new window; the run's peak stays */
    assert_int_equal(sim_test_stats().window_peak_bytes, 20 * MIB);
    CK(cuMemAlloc(&b, 30 * MIB));
    assert_int_equal(sim_test_stats().window_peak_bytes, 50 * MIB);
    assert_true(sim_test_stats().peak_device_bytes >= 60 * MIB);
    CK(cuMemFree(b));
    CK(cuMemFree(c));
    CK(cuMemGetInfo(&free1, &total));
    assert_int_equal(free1, free0);
}

SIM_TEST(test_free_host_waits_for_queued_copies)
{
    (void)state;
    enum { COPIES = 64 };
    CUdeviceptr d;
    void *h;
    CUstream s;
    struct simgpu_stats before, after;
    CK(cuMemAlloc(&d, 4 * MIB));
    CK(cuMemAllocHost(&h, 4 * MIB));
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    assert_int_equal(simgpu_get_stats(&before), 0);
    for (int i = 0; i < COPIES; i++)
        CK(cuMemcpyDtoHAsync(h, d, 4 * MIB, s));
    CK(cuMemFreeHost(h)); /* must not free the buffer under the queued copies */
    assert_int_equal(simgpu_get_stats(&after), 0);
    assert_int_equal(after.copies - before.copies, COPIES);
    CK(cuStreamDestroy(s));
    CK(cuMemFree(d));
}

SIM_TEST(test_small_allocations_round_to_pages)
{
    (void)state;
    size_t before = sim_test_stats().device_bytes;
    CUdeviceptr a, b;
    CK(cuMemAlloc(&a, 100));
    CK(cuMemAlloc(&b, 3 * MIB));
    assert_int_equal(sim_test_stats().device_bytes - before, 4096 + 4 * MIB);
    assert_int_equal(b % (2 * MIB), 0);
    CUdeviceptr base;
    size_t size;
    CK(cuMemGetAddressRange(&base, &size, b + 12345));
    assert_int_equal(base, b);
    assert_int_equal(size, 4 * MIB);
    CK(cuMemFree(a));
    CK(cuMemFree(b));
    assert_int_equal(cuMemFree(b), CUDA_ERROR_INVALID_VALUE);
}

SIM_TEST(test_vmm_rules)
{
    (void)state;
    size_t g;
    CUmemAllocationProp prop = {0};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    assert_int_equal(g, 2 * MIB);
    CUmemGenericAllocationHandle h;
    assert_int_equal(cuMemCreate(&h, MIB, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    CUdeviceptr va;
    assert_int_equal(cuMemAddressReserve(&va, 3 * MIB, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
    CK(cuMemAddressReserve(&va, 8 * MIB, 0, 0, 0));
    CK(cuMemCreate(&h, 4 * MIB, &prop, 0));
    assert_int_equal(cuMemMap(va + 6 * MIB, 4 * MIB, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
    CK(cuMemMap(va, 4 * MIB, 0, h, 0));
    assert_int_equal(cuMemMap(va + 2 * MIB, 2 * MIB, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
    /* mapped but without access: a copy is rejected */
    uint32_t x = 1;
    assert_int_equal(cuMemcpyHtoD(va, &x, 4), CUDA_ERROR_INVALID_VALUE);
    /* cannot free a reservation that is still mapped; unmap must cover whole mappings */
    assert_int_equal(cuMemAddressFree(va, 8 * MIB), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(cuMemUnmap(va, 2 * MIB), CUDA_ERROR_INVALID_VALUE);
    CK(cuMemUnmap(va, 4 * MIB));
    CK(cuMemRelease(h));
    assert_int_equal(cuMemRelease(h), CUDA_ERROR_INVALID_VALUE);
    CK(cuMemAddressFree(va, 8 * MIB));
}

SIM_TEST(test_device_attributes)
{
    (void)state;
    int v;
    CK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0));
    assert_int_equal(v, 1);
    CK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0));
    assert_int_equal(v, 1);
    CK(cuDeviceGetAttribute(&v, (CUdevice_attribute)141, 0));
    assert_int_equal(v, 1);
    assert_int_equal(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX, 0),
                     CUDA_ERROR_INVALID_VALUE);
    char name[64];
    CK(cuDeviceGetName(name, sizeof name, 0));
    assert_non_null(strstr(name, "simgpu"));
    int count;
    CK(cuDeviceGetCount(&count));
    assert_int_equal(count, 1);
}

SIM_TEST(test_async_alloc_free_in_stream_order)
{
    (void)state;
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    size_t before = sim_test_stats().device_bytes;
    CUdeviceptr p;
    CK(cuMemAllocAsync(&p, 4 * MIB, s));
    sim_test_launch_fill(s, p, 16, 3);
    CK(cuMemFreeAsync(p, s));
    assert_int_equal(cuMemFreeAsync(p, s), CUDA_ERROR_INVALID_VALUE);
    CK(cuStreamSynchronize(s));
    assert_int_equal(sim_test_stats().device_bytes, before);
    /* capacity is reclaimed from pending frees: 3 x 40 MiB in a 64 MiB device */
    for (int i = 0; i < 3; i++) {
        CK(cuMemAllocAsync(&p, 40 * MIB, s));
        CK(cuMemFreeAsync(p, s));
    }
    CK(cuStreamSynchronize(s));
    CK(cuStreamDestroy(s));
}

/* Host function holding its stream until *gate is set. */
static void CUDA_CB wait_gate(void *gate)
{
    while (!atomic_load((atomic_int *)gate))
        sched_yield();
}

SIM_TEST(test_async_free_is_reused_in_stream_order)
{
    (void)state;
    CUstream s, other;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
    CUdeviceptr p, q, r;
    CK(cuMemAllocAsync(&p, 8 * MIB, s));
    sim_test_launch_fill(s, p, 16, 1);
    /* The frees below stay pending until the gate opens: what follows must not
       depend on how fast the stream's worker runs. */
    atomic_int gate = 0;
    CK(cuLaunchHostFunc(s, wait_gate, &gate));
    CK(cuMemFreeAsync(p, s));
    size_t after_free = sim_test_stats().device_bytes;
    CK(cuMemAllocAsync(&q, 8 * MIB, s)); /* same stream: the freed block comes back */
    size_t after_reuse = sim_test_stats().device_bytes;
    CK(cuMemFreeAsync(q, s));
    CK(cuMemAllocAsync(&r, 8 * MIB, other)); /* another stream may not take it */
    CK(cuMemFreeAsync(r, other));
    atomic_store(&gate, 1); /* before any assertion, which would leave the stream held */
    assert_int_equal(q, p);
    assert_int_equal(after_reuse, after_free);
    assert_true(r != p);
    CK(cuStreamSynchronize(s));
    CK(cuStreamSynchronize(other));
    /* the stale free of the first allocation did not release the reused one twice */
    CUdeviceptr base;
    assert_int_equal(cuMemGetAddressRange(&base, NULL, p), CUDA_ERROR_NOT_FOUND);
    CK(cuStreamDestroy(s));
    CK(cuStreamDestroy(other));
}

SIM_TEST(test_pinned_host_memory)
{
    (void)state;
    void *h;
    CK(cuMemHostAlloc(&h, 1 << 16, 0));
    CUdeviceptr d;
    CK(cuMemHostGetDevicePointer(&d, h, 0));
    assert_int_equal(d, (CUdeviceptr)(uintptr_t)h);
    CK(cuMemFreeHost(h));
    assert_int_equal(cuMemFreeHost(h), CUDA_ERROR_INVALID_VALUE);
    char buf[4096];
    CK(cuMemHostRegister(buf, sizeof buf, 0));
    assert_int_equal(cuMemHostRegister(buf, sizeof buf, 0),
                     CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    CK(cuMemHostUnregister(buf));
}

int main(void)
{
    setenv("SIMGPU_MEMORY", "64MiB", 1);
    sim_test_ctx();
    return sim_test_run(NULL);
}
