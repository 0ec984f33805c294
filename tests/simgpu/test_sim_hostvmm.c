/* test_sim_hostvmm.c — SIMGPU_HOST_VMM=0: the device reports no host-located VMM support and
 * refuses host locations, while device-located VMM keeps working. */
#include "simgpu_test.h"

SIM_TEST(test_attributes_report_no_host_vmm)
{
    (void)state;
    int v = -1;
    CK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                            0)); /* 141 */
    assert_int_equal(v, 0);
    v = -1;
    CK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                            0)); /* 145 */
    assert_int_equal(v, 0);
    CK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0));
    assert_int_equal(v, 1);
}

SIM_TEST(test_host_locations_are_refused)
{
    (void)state;
    const CUmemLocationType host[] = {CU_MEM_LOCATION_TYPE_HOST, CU_MEM_LOCATION_TYPE_HOST_NUMA};
    for (int i = 0; i < 2; i++) {
        CUmemAllocationProp prop = {0};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = host[i];
        CUmemGenericAllocationHandle h = 0;
        assert_int_equal(cuMemCreate(&h, 2 * MIB, &prop, 0), CUDA_ERROR_NOT_SUPPORTED);
        assert_int_equal(h, 0);
        size_t g = 0;
        assert_int_equal(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                         CUDA_ERROR_NOT_SUPPORTED);
    }
    assert_int_equal(sim_test_stats().host_mapped_bytes, 0);
    CUmemGenericAllocationHandle h;
    CUdeviceptr va = sim_test_vmm(2 * MIB, CU_MEM_LOCATION_TYPE_DEVICE, &h);
    sim_test_launch_fill(NULL, va, 16, 3);
    uint32_t w[16];
    CK(cuMemcpyDtoH(w, va, sizeof w));
    assert_int_equal(w[15], 18);
    CK(cuMemUnmap(va, 2 * MIB));
    CK(cuMemRelease(h));
    CK(cuMemAddressFree(va, 2 * MIB));
}

int main(void)
{
    setenv("SIMGPU_HOST_VMM", "0", 1);
    sim_test_ctx();
    return sim_test_run(NULL);
}
