/* test_sim_unmap.c — the unmap detector: unmapping a range that unfinished work touches is
 * reported. */
#include "simgpu_test.h"

static void k_slow(void **p)
{
    (void)p;
}

static CUfunction slow_fn(void)
{
    static const size_t sizes[] = {8};
    CUfunction f = simgpu_register("slow_reader", k_slow, 1, sizes);
    simgpu_set_cost(f, 1000.0);
    return f;
}

static uint64_t hazards(void)
{
    return sim_test_stats().unmap_hazards;
}

static void launch_on(CUstream s, CUdeviceptr p)
{
    void *args[] = {&p};
    CK(cuLaunchKernel(slow_fn(), 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
}

static void unmap_free(CUdeviceptr va, CUmemGenericAllocationHandle h)
{
    CK(cuMemUnmap(va, 2 * MIB));
    CK(cuMemRelease(h));
    CK(cuMemAddressFree(va, 2 * MIB));
}

SIM_TEST(test_unmap_without_fence_is_reported)
{
    (void)state;
    CUmemGenericAllocationHandle h;
    CUdeviceptr va = sim_test_vmm(2 * MIB, CU_MEM_LOCATION_TYPE_DEVICE, &h);
    uint64_t before = hazards();
    launch_on(NULL, va + 4096); /* a pointer into the range */
    CK(cuCtxSynchronize());     /* ...but the host waited: no hazard */
    unmap_free(va, h);
    assert_int_equal(hazards(), before);

    va = sim_test_vmm(2 * MIB, CU_MEM_LOCATION_TYPE_DEVICE, &h);
    launch_on(NULL, va + 4096);
    unmap_free(va, h); /* no wait at all: reported, whatever the timing */
    assert_int_equal(hazards(), before + 1);
    CK(cuCtxSynchronize());
}

SIM_TEST(test_fence_through_another_stream_counts)
{
    (void)state;
    CUstream compute, copy;
    CK(cuStreamCreate(&compute, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&copy, CU_STREAM_NON_BLOCKING));
    CUmemGenericAllocationHandle h;
    CUdeviceptr va = sim_test_vmm(2 * MIB, CU_MEM_LOCATION_TYPE_DEVICE, &h);
    uint64_t before = hazards();
    CUevent last_use, copied;
    CK(cuEventCreate(&last_use, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate(&copied, CU_EVENT_DISABLE_TIMING));
    launch_on(compute, va);
    CK(cuEventRecord(last_use, compute));
    CK(cuStreamWaitEvent(copy, last_use, 0));
    void *host;
    CK(cuMemHostAlloc(&host, 2 * MIB, 0));
    CK(cuMemcpyDtoHAsync(host, va, 2 * MIB, copy));
    CK(cuEventRecord(copied, copy));
    CK(cuEventSynchronize(copied)); /* covers the copy and, through the wait, the kernel */
    unmap_free(va, h);
    assert_int_equal(hazards(), before);

    /* waiting only for the copy stream, without the cross-stream wait, is not enough */
    va = sim_test_vmm(2 * MIB, CU_MEM_LOCATION_TYPE_DEVICE, &h);
    launch_on(compute, va);
    CK(cuMemcpyDtoHAsync(host, va, 2 * MIB, copy));
    CK(cuEventRecord(copied, copy));
    CK(cuEventSynchronize(copied));
    unmap_free(va, h);
    assert_int_equal(hazards(), before + 1);
    CK(cuCtxSynchronize());
    CK(cuMemFreeHost(host));
    CK(cuStreamDestroy(compute));
    CK(cuStreamDestroy(copy));
}

SIM_TEST(test_unrelated_range_is_not_reported)
{
    (void)state;
    CUmemGenericAllocationHandle h1, h2;
    CUdeviceptr a = sim_test_vmm(2 * MIB, CU_MEM_LOCATION_TYPE_DEVICE, &h1);
    CUdeviceptr b = sim_test_vmm(2 * MIB, CU_MEM_LOCATION_TYPE_DEVICE, &h2);
    uint64_t before = hazards();
    launch_on(NULL, a);
    unmap_free(b, h2);
    assert_int_equal(hazards(), before);
    CK(cuStreamSynchronize(NULL));
    unmap_free(a, h1);
    assert_int_equal(hazards(), before);
}

int main(void)
{
    setenv("SIMGPU_QUIET", "1", 1);
    sim_test_ctx();
    return sim_test_run(NULL);
}
