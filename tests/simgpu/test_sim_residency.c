/* test_sim_residency.c — what a residency manager relies on: free memory, granularity, access
 * over several mappings, aliasing, unmapping one chunk, cross-stream ordering, zero-copy data. */
#include "simgpu_test.h"

#define CAPACITY (256 * MIB)

static CUmemGenericAllocationHandle create(size_t size, CUmemLocationType where)
{
    CUmemAllocationProp prop = {0};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = where;
    CUmemGenericAllocationHandle h;
    CK(cuMemCreate(&h, size, &prop, 0));
    return h;
}

static void set_access(CUdeviceptr va, size_t size, CUmemAccess_flags flags)
{
    CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, flags};
    CK(cuMemSetAccess(va, size, &acc, 1));
}

static unsigned long long access_of(CUdeviceptr va)
{
    CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    unsigned long long flags = 99;
    CK(cuMemGetAccess(&flags, &loc, va));
    return flags;
}

static size_t free_bytes(void)
{
    size_t f, total;
    CK(cuMemGetInfo(&f, &total)); /* cuMemGetInfo_v2 */
    assert_int_equal(total, CAPACITY);
    return f;
}

SIM_TEST(test_mem_get_info_counts_device_located_memory)
{
    (void)state;
    size_t f0 = free_bytes();
    assert_int_equal(f0, CAPACITY - sim_test_stats().device_bytes);
    CUmemGenericAllocationHandle d = create(6 * MIB, CU_MEM_LOCATION_TYPE_DEVICE);
    assert_int_equal(f0 - free_bytes(), 6 * MIB);
    /* host-located memory, created and mapped, leaves device memory free */
    CUmemGenericAllocationHandle h = create(8 * MIB, CU_MEM_LOCATION_TYPE_HOST);
    CUdeviceptr va;
    CK(cuMemAddressReserve(&va, 8 * MIB, 0, 0, 0));
    CK(cuMemMap(va, 8 * MIB, 0, h, 0));
    assert_int_equal(f0 - free_bytes(), 6 * MIB);
    assert_int_equal(sim_test_stats().host_mapped_bytes, 8 * MIB);
    CK(cuMemRelease(d));
    assert_int_equal(free_bytes(), f0);
    CK(cuMemUnmap(va, 8 * MIB));
    CK(cuMemRelease(h));
    CK(cuMemAddressFree(va, 8 * MIB));
    assert_int_equal(sim_test_stats().host_mapped_bytes, 0);
}

SIM_TEST(test_granularity_is_2mib_for_every_location)
{
    (void)state;
    const CUmemLocationType where[] = {CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_LOCATION_TYPE_HOST,
                                       CU_MEM_LOCATION_TYPE_HOST_NUMA};
    const CUmemAllocationGranularity_flags opt[] = {CU_MEM_ALLOC_GRANULARITY_MINIMUM,
                                                    CU_MEM_ALLOC_GRANULARITY_RECOMMENDED};
    for (size_t i = 0; i < 3; i++) {
        for (size_t j = 0; j < 2; j++) {
            CUmemAllocationProp prop = {0};
            prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
            prop.location.type = where[i];
            size_t g = 0;
            CK(cuMemGetAllocationGranularity(&g, &prop, opt[j]));
            assert_int_equal(g, 2 * MIB);
        }
    }
    CUmemAllocationProp bad = {0};
    size_t g = 0;
    assert_int_equal(cuMemGetAllocationGranularity(&g, &bad, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                     CUDA_ERROR_INVALID_VALUE);
}

SIM_TEST(test_set_access_spans_several_mappings)
{
    (void)state;
    CUmemGenericAllocationHandle a = create(2 * MIB, CU_MEM_LOCATION_TYPE_DEVICE);
    CUmemGenericAllocationHandle b = create(4 * MIB, CU_MEM_LOCATION_TYPE_HOST);
    CUmemGenericAllocationHandle c = create(2 * MIB, CU_MEM_LOCATION_TYPE_DEVICE);
    CUdeviceptr va;
    CK(cuMemAddressReserve(&va, 8 * MIB, 0, 0, 0));
    CK(cuMemMap(va, 2 * MIB, 0, a, 0));
    CK(cuMemMap(va + 2 * MIB, 4 * MIB, 0, b, 0));
    CK(cuMemMap(va + 6 * MIB, 2 * MIB, 0, c, 0));
    set_access(va, 8 * MIB, CU_MEM_ACCESS_FLAGS_PROT_READWRITE); /* one call, three mappings */
    for (size_t off = 0; off < 8 * MIB; off += 2 * MIB)
        assert_int_equal(access_of(va + off), CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    /* a kernel writes across all three: the host-located middle is zero-copy */
    struct simgpu_stats s0 = sim_test_stats();
    sim_test_launch_fill(NULL, va, 2 * MIB, 5);
    CK(cuCtxSynchronize());
    struct simgpu_stats s1 = sim_test_stats();
    assert_int_equal(s1.illegal_accesses, s0.illegal_accesses);
    assert_int_equal(s1.zero_copy_kernels - s0.zero_copy_kernels, 1);
    assert_int_equal(s1.zero_copy_pages - s0.zero_copy_pages, 4 * MIB / 4096);
    assert_int_equal(sim_test_wrong_words(va, 2 * MIB, 5), 0);
    /* read-only over all of it: writes are refused, reads are not */
    set_access(va, 8 * MIB, CU_MEM_ACCESS_FLAGS_PROT_READ);
    assert_int_equal(access_of(va + 7 * MIB), CU_MEM_ACCESS_FLAGS_PROT_READ);
    uint32_t x = 0;
    assert_int_equal(cuMemcpyHtoD(va + 3 * MIB, &x, 4), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(sim_test_wrong_words(va, 2 * MIB, 5), 0);
    /* a part of the range, cutting through the middle mapping */
    set_access(va + MIB * 3, 2 * MIB, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    assert_int_equal(access_of(va + 2 * MIB), CU_MEM_ACCESS_FLAGS_PROT_READ);
    assert_int_equal(access_of(va + 4 * MIB), CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CK(cuMemUnmap(va, 8 * MIB)); /* the three mappings at once */
    CK(cuMemRelease(a));
    CK(cuMemRelease(b));
    CK(cuMemRelease(c));
    /* a range with a hole is refused */
    a = create(2 * MIB, CU_MEM_LOCATION_TYPE_DEVICE);
    CK(cuMemMap(va, 2 * MIB, 0, a, 0));
    CK(cuMemMap(va + 4 * MIB, 2 * MIB, 0, a, 0));
    CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    assert_int_equal(cuMemSetAccess(va, 6 * MIB, &acc, 1), CUDA_ERROR_INVALID_VALUE);
    CK(cuMemUnmap(va, 2 * MIB));
    CK(cuMemUnmap(va + 4 * MIB, 2 * MIB));
    CK(cuMemRelease(a));
    CK(cuMemAddressFree(va, 8 * MIB));
}

/* Maps h at two fresh addresses, read-write; both stay mapped. */
static void map_twice(CUmemGenericAllocationHandle h, size_t size, CUdeviceptr *x, CUdeviceptr *y)
{
    CK(cuMemAddressReserve(x, size, 0, 0, 0));
    CK(cuMemAddressReserve(y, size, 0, 0, 0));
    CK(cuMemMap(*x, size, 0, h, 0));
    CK(cuMemMap(*y, size, 0, h, 0));
    set_access(*x, size, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    set_access(*y, size, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
}

static void unmap_twice(CUmemGenericAllocationHandle h, size_t size, CUdeviceptr x, CUdeviceptr y)
{
    CK(cuMemUnmap(x, size));
    CK(cuMemUnmap(y, size));
    CK(cuMemRelease(h));
    CK(cuMemAddressFree(x, size));
    CK(cuMemAddressFree(y, size));
}

SIM_TEST(test_alias_both_views_at_once)
{
    (void)state;
    const CUmemLocationType where[] = {CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_LOCATION_TYPE_HOST};
    for (int i = 0; i < 2; i++) {
        CUmemGenericAllocationHandle h = create(4 * MIB, where[i]);
        CUdeviceptr x, y;
        map_twice(h, 4 * MIB, &x, &y);
        size_t before = sim_test_stats().device_bytes;
        sim_test_launch_fill(NULL, x, MIB, 1000 + (uint32_t)i); /* a kernel writes through x */
        assert_int_equal(sim_test_wrong_words(y, MIB, 1000 + (uint32_t)i), 0);
        uint32_t v = 0xfeedu;
        CK(cuMemcpyHtoD(y + 4 * MIB - 4, &v, 4)); /* a copy writes through y */
        uint32_t back = 0;
        CK(cuMemcpyDtoH(&back, x + 4 * MIB - 4, 4));
        assert_int_equal(back, 0xfeedu);
        assert_int_equal(sim_test_stats().device_bytes, before); /* one allocation, two views */
        unmap_twice(h, 4 * MIB, x, y);
    }
}

SIM_TEST(test_unmap_one_chunk_of_a_reservation)
{
    (void)state;
    CUdeviceptr va;
    CK(cuMemAddressReserve(&va, 8 * MIB, 0, 0, 0));
    CUmemGenericAllocationHandle h[4];
    for (int i = 0; i < 4; i++) {
        h[i] = create(2 * MIB, CU_MEM_LOCATION_TYPE_DEVICE);
        CK(cuMemMap(va + (size_t)i * 2 * MIB, 2 * MIB, 0, h[i], 0));
    }
    set_access(va, 8 * MIB, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    sim_test_launch_fill(NULL, va, 2 * MIB, 7);
    CK(cuCtxSynchronize()); /* the fence an eviction needs before unmapping */
    uint64_t hazards = sim_test_stats().unmap_hazards;
    size_t dev0 = sim_test_stats().device_bytes;
    /* evict chunk 2: unmap and release it alone */
    CK(cuMemUnmap(va + 4 * MIB, 2 * MIB));
    CK(cuMemRelease(h[2]));
    assert_int_equal(dev0 - sim_test_stats().device_bytes, 2 * MIB);
    assert_int_equal(sim_test_stats().unmap_hazards, hazards);
    uint32_t x;
    assert_int_equal(cuMemcpyDtoH(&x, va + 4 * MIB, 4), CUDA_ERROR_INVALID_VALUE);
    CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    unsigned long long flags;
    assert_int_equal(cuMemGetAccess(&flags, &loc, va + 4 * MIB), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(sim_test_wrong_words(va, MIB, 7), 0); /* chunks 0, 1 */
    assert_int_equal(sim_test_wrong_words(va + 6 * MIB, MIB / 2, 7 + 3 * MIB / 2), 0); /* chunk 3 */
    assert_int_equal(cuMemAddressFree(va, 8 * MIB), CUDA_ERROR_INVALID_VALUE); /* still mapped */
    /* the hole takes host-located memory, as after an eviction */
    h[2] = create(2 * MIB, CU_MEM_LOCATION_TYPE_HOST);
    CK(cuMemMap(va + 4 * MIB, 2 * MIB, 0, h[2], 0));
    set_access(va + 4 * MIB, 2 * MIB, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CK(cuMemcpyDtoH(&x, va + 4 * MIB, 4));
    assert_int_equal(x, 0); /* fresh memory */
    for (int i = 0; i < 4; i++) {
        CK(cuMemUnmap(va + (size_t)i * 2 * MIB, 2 * MIB));
        CK(cuMemRelease(h[i]));
    }
    CK(cuMemAddressFree(va, 8 * MIB));
}

SIM_TEST(test_unmap_refuses_part_of_one_mapping)
{
    (void)state;
    /* one cuMemMap of 4 MiB, split in two by access rights: still one mapping */
    CUmemGenericAllocationHandle h;
    CUdeviceptr va = sim_test_vmm(4 * MIB, CU_MEM_LOCATION_TYPE_DEVICE, &h);
    set_access(va + 2 * MIB, 2 * MIB, CU_MEM_ACCESS_FLAGS_PROT_READ);
    assert_int_equal(cuMemUnmap(va + 2 * MIB, 2 * MIB), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(cuMemUnmap(va, 2 * MIB), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(access_of(va), CU_MEM_ACCESS_FLAGS_PROT_READWRITE); /* nothing changed */
    CK(cuMemUnmap(va, 4 * MIB));
    CK(cuMemRelease(h));
    CK(cuMemAddressFree(va, 4 * MIB));
}

static void k_slow_fill(void **p)
{
    sim_test_fill(p);
}

SIM_TEST(test_wait_event_orders_non_blocking_streams)
{
    (void)state;
    static const size_t sizes[] = {8, 8, 4};
    CUfunction f = simgpu_register("slow_fill", k_slow_fill, 3, sizes);
    simgpu_set_cost(f, 500.0);
    CUmemGenericAllocationHandle hd, hh;
    CUdeviceptr dev = sim_test_vmm(2 * MIB, CU_MEM_LOCATION_TYPE_DEVICE, &hd);
    CUdeviceptr host = sim_test_vmm(2 * MIB, CU_MEM_LOCATION_TYPE_HOST, &hh);
    CUstream compute, copy;
    CK(cuStreamCreate(&compute, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&copy, CU_STREAM_NON_BLOCKING));
    CUevent start, written, done;
    CK(cuEventCreate(&start, 0));
    CK(cuEventCreate(&written, 0));
    CK(cuEventCreate(&done, 0));
    CK(cuCtxSynchronize());
    CK(cuEventRecord(start, compute));
    size_t n = MIB / 2;
    uint32_t seed = 31;
    void *args[] = {&dev, &n, &seed};
    CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, compute, args, NULL));
    CK(cuEventRecord(written, compute)); /* recorded on a non-blocking stream */
    CK(cuStreamWaitEvent(copy, written, 0));
    CK(cuMemcpyDtoDAsync(host, dev, 2 * MIB, copy)); /* eviction after the kernel */
    CK(cuEventRecord(done, copy));
    CK(cuStreamSynchronize(copy)); /* only the copy stream */
    assert_int_equal(cuEventQuery(written), CUDA_SUCCESS);
    float ms;
    CK(cuEventElapsedTime(&ms, start, done));
    double want = 500.0 + 2.0 * MIB / 25e3; /* the kernel, then 2 MiB over D2H */
    assert_true(ms * 1000.0 > want - 0.01 && ms * 1000.0 < want + 0.01);
    assert_int_equal(sim_test_wrong_words(host, n, 31), 0);
    CK(cuStreamDestroy(compute));
    CK(cuStreamDestroy(copy));
    CK(cuEventDestroy(start));
    CK(cuEventDestroy(written));
    CK(cuEventDestroy(done));
    CK(cuMemUnmap(dev, 2 * MIB));
    CK(cuMemUnmap(host, 2 * MIB));
    CK(cuMemRelease(hd));
    CK(cuMemRelease(hh));
    CK(cuMemAddressFree(dev, 2 * MIB));
    CK(cuMemAddressFree(host, 2 * MIB));
}

int main(void)
{
    setenv("SIMGPU_MEMORY", "256MiB", 1);
    sim_test_ctx();
    return sim_test_run(NULL);
}
