/* test_sim_fail.c — fault injection (SIMGPU_FAIL and simgpu_fail) and call counting. */
#include "simgpu_test.h"

SIM_TEST(test_env_rule_fails_the_nth_call_only)
{
    (void)state;
    /* SIMGPU_FAIL=cuMemAlloc_v2:2 was set before the first driver call */
    CUdeviceptr a, b, c;
    CK(cuMemAlloc(&a, 4096));
    assert_int_equal(cuMemAlloc(&b, 4096), CUDA_ERROR_OUT_OF_MEMORY);
    CK(cuMemAlloc(&c, 4096));
    assert_int_equal(simgpu_calls("cuMemAlloc_v2"), 3);
    assert_int_equal(sim_test_stats().injected_failures, 1);
    CK(cuMemFree(a));
    CK(cuMemFree(c));
}

SIM_TEST(test_sticky_rule_fails_from_nth_on)
{
    (void)state;
    /* SIMGPU_FAIL also held cuEventCreate:2:sticky */
    CUevent e, f = NULL;
    CK(cuEventCreate(&e, 0));
    for (int i = 0; i < 3; i++)
        assert_int_equal(cuEventCreate(&f, 0), CUDA_ERROR_UNKNOWN);
    assert_null(f); /* a failed call writes nothing */
    CK(cuEventDestroy(e));
    assert_int_equal(cuEventDestroy(e), CUDA_ERROR_INVALID_HANDLE);
}

SIM_TEST(test_api_rule_counts_from_next_call)
{
    (void)state;
    CUmemAllocationProp prop = {0};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CUmemGenericAllocationHandle h;
    assert_int_equal(simgpu_fail("cuMemCreate", 3, 0), 0);
    CK(cuMemCreate(&h, 2 * MIB, &prop, 0));
    CK(cuMemRelease(h));
    CK(cuMemCreate(&h, 2 * MIB, &prop, 0));
    CK(cuMemRelease(h));
    size_t before = sim_test_stats().device_bytes;
    assert_int_equal(cuMemCreate(&h, 2 * MIB, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
    assert_int_equal(sim_test_stats().device_bytes, before); /* a failed call has no effect */
    CK(cuMemCreate(&h, 2 * MIB, &prop, 0));
    CK(cuMemRelease(h));
    /* a failing map leaves the range unmapped and usable */
    CUdeviceptr va;
    CK(cuMemAddressReserve(&va, 2 * MIB, 0, 0, 0));
    CK(cuMemCreate(&h, 2 * MIB, &prop, 0));
    assert_int_equal(simgpu_fail("cuMemMap", 1, 0), 0);
    assert_int_equal(cuMemMap(va, 2 * MIB, 0, h, 0), CUDA_ERROR_UNKNOWN);
    CK(cuMemMap(va, 2 * MIB, 0, h, 0));
    CK(cuMemUnmap(va, 2 * MIB));
    CK(cuMemRelease(h));
    CK(cuMemAddressFree(va, 2 * MIB));
    assert_int_equal(simgpu_fail("cuNoSuchCall", 1, 0), -1);
    assert_int_equal(simgpu_calls("cuNoSuchCall"), 0);
}

int main(void)
{
    setenv("SIMGPU_FAIL", "cuMemAlloc_v2:2,cuEventCreate:2:sticky", 1);
    sim_test_ctx();
    return sim_test_run(NULL);
}
