/* test_sim_locate.c — copy engines by physical location: device addresses backed by
 * host-located memory are the host end of a copy (engine, time, byte statistics, data). */
#include "simgpu_test.h"

#include <stdbool.h>

#define H2D_GBPS 20.0 /* distinct from D2H so that times name the engine */
#define D2H_GBPS 25.0
#define DEV_GBPS 2000.0
#define BIG      (64 * MIB)

struct buf {
    CUdeviceptr va;
    CUmemGenericAllocationHandle h;
    size_t size;
};

static struct buf vmm(size_t size, CUmemLocationType where)
{
    struct buf b = {0, 0, size};
    b.va = sim_test_vmm(size, where, &b.h);
    return b;
}

static void vmm_free(struct buf b)
{
    CK(cuMemUnmap(b.va, b.size));
    CK(cuMemRelease(b.h));
    CK(cuMemAddressFree(b.va, b.size));
}

/* Writes seed + i to the n words at va, through a synchronous copy. */
static void put_words(CUdeviceptr va, size_t n, uint32_t seed)
{
    uint32_t *w = malloc(n * 4);
    assert_non_null(w);
    for (size_t i = 0; i < n; i++)
        w[i] = seed + (uint32_t)i;
    CK(cuMemcpyHtoD(va, w, n * 4));
    free(w);
}

/* Virtual time of one copy issued alone on a fresh non-blocking stream. */
static double timed_copy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    CUstream s = sim_test_stream();
    CUevent a = sim_test_event(), b = sim_test_event();
    CK(cuCtxSynchronize());
    CK(cuEventRecord(a, s));
    CK(cuMemcpyDtoDAsync(dst, src, n, s));
    CK(cuEventRecord(b, s));
    double us = sim_test_elapsed_us(a, b);
    CK(cuStreamDestroy(s));
    CK(cuEventDestroy(a));
    CK(cuEventDestroy(b));
    return us;
}

/* The bytes each copy direction carried between two statistics snapshots. */
static void expect_bytes(const struct simgpu_stats *s0, const struct simgpu_stats *s1, uint64_t h2d,
                         uint64_t d2h, uint64_t d2d)
{
    assert_int_equal(s1->bytes_h2d - s0->bytes_h2d, h2d);
    assert_int_equal(s1->bytes_d2h - s0->bytes_d2h, d2h);
    assert_int_equal(s1->bytes_d2d - s0->bytes_d2d, d2d);
}

/* Writes words seed + i over src's first n bytes, then copies them to dst (timed_copy) and checks
   the copy: its virtual time is want_us, it counts as one copy and the words arrived. Returns the
   statistics after it; *s0 gets those from before. */
static struct simgpu_stats checked_copy(struct buf dst, struct buf src, size_t n, uint32_t seed,
                                        double want_us, struct simgpu_stats *s0)
{
    put_words(src.va, n / 4, seed);
    *s0 = sim_test_stats();
    assert_us(timed_copy(dst.va, src.va, n), want_us);
    struct simgpu_stats s1 = sim_test_stats();
    assert_int_equal(s1.copies - s0->copies, 1);
    assert_int_equal(sim_test_wrong_words(dst.va, n / 4, seed), 0);
    return s1;
}

/* A checked copy of BIG bytes between a device-located buffer (*dev) and a host-located one
   (*host), to the host or from it: it runs at that direction's rate, and only that direction's
   bytes count. Returns the statistics after it. */
static struct simgpu_stats across(bool to_host, uint32_t seed, struct buf *dev, struct buf *host)
{
    *dev = vmm(BIG, CU_MEM_LOCATION_TYPE_DEVICE);
    *host = vmm(BIG, CU_MEM_LOCATION_TYPE_HOST);
    struct buf dst = to_host ? *host : *dev, src = to_host ? *dev : *host;
    double gbps = to_host ? D2H_GBPS : H2D_GBPS; /* 2684.35 us, 3355.44 us */
    struct simgpu_stats s0, s1 = checked_copy(dst, src, BIG, seed, BIG / (gbps * 1e3), &s0);
    expect_bytes(&s0, &s1, to_host ? 0 : BIG, to_host ? BIG : 0, 0);
    return s1;
}

SIM_TEST(test_device_to_host_backed_runs_d2h)
{
    (void)state;
    struct buf dev, host;
    struct simgpu_stats s1 = across(true, 11, &dev, &host);
    /* cuMemcpyAsync (unified addressing) classifies the same way */
    CUstream st = sim_test_stream();
    CK(cuMemcpyAsync(host.va, dev.va, 2 * MIB, st));
    CK(cuStreamSynchronize(st));
    CK(cuStreamDestroy(st));
    assert_int_equal(sim_test_stats().bytes_d2h - s1.bytes_d2h, 2 * MIB);
    vmm_free(dev);
    vmm_free(host);
}

SIM_TEST(test_host_backed_to_device_runs_h2d)
{
    (void)state;
    struct buf dev, host;
    across(false, 22, &dev, &host);
    vmm_free(dev);
    vmm_free(host);
}

SIM_TEST(test_host_backed_to_host_backed_uses_no_engine)
{
    (void)state;
    struct buf a = vmm(4 * MIB, CU_MEM_LOCATION_TYPE_HOST);
    struct buf b = vmm(4 * MIB, CU_MEM_LOCATION_TYPE_HOST_NUMA);
    struct simgpu_stats s0, s1 = checked_copy(b, a, 4 * MIB, 33, 0.0, &s0);
    expect_bytes(&s0, &s1, 0, 0, 0);
    /* pinned host memory into a host-backed address: host to host as well */
    void *pinned;
    CK(cuMemHostAlloc(&pinned, 2 * MIB, 0));
    memset(pinned, 0x5a, 2 * MIB);
    CUstream s = sim_test_stream();
    CUevent e0 = sim_test_event(), e1 = sim_test_event();
    CK(cuCtxSynchronize());
    CK(cuEventRecord(e0, s));
    CK(cuMemcpyHtoDAsync(a.va, pinned, 2 * MIB, s));
    CK(cuEventRecord(e1, s));
    assert_us(sim_test_elapsed_us(e0, e1), 0.0);
    assert_int_equal(sim_test_stats().bytes_h2d, s1.bytes_h2d);
    unsigned char probe[2];
    CK(cuMemcpyDtoH(probe, a.va + 2 * MIB - 1, 2)); /* last copied byte, first untouched */
    assert_int_equal(probe[0], 0x5a);
    assert_int_not_equal(probe[1], 0x5a);
    CK(cuStreamDestroy(s));
    CK(cuMemFreeHost(pinned));
    vmm_free(a);
    vmm_free(b);
}

SIM_TEST(test_device_to_device_stays_on_compute)
{
    (void)state;
    struct buf a = vmm(BIG, CU_MEM_LOCATION_TYPE_DEVICE), b = vmm(BIG, CU_MEM_LOCATION_TYPE_DEVICE);
    struct simgpu_stats s0, s1 = checked_copy(b, a, BIG, 44, 2.0 * BIG / (DEV_GBPS * 1e3), &s0);
    expect_bytes(&s0, &s1, 0, 0, BIG);
    vmm_free(a);
    vmm_free(b);
}

/* Issues the two copies on two streams starting together; returns the time
   until both are done. */
static double two_streams(CUdeviceptr d1, CUdeviceptr s1, CUdeviceptr d2, CUdeviceptr s2, size_t n)
{
    CUstream one = sim_test_stream(), two = sim_test_stream();
    CK(cuCtxSynchronize());
    CUevent a = sim_test_fork(one, two);
    CK(cuMemcpyDtoDAsync(d1, s1, n, one));
    CK(cuMemcpyAsync(d2, s2, n, two));
    double us = sim_test_join_us(a, one, two);
    CK(cuStreamDestroy(one));
    CK(cuStreamDestroy(two));
    return us;
}

SIM_TEST(test_eviction_and_restore_overlap_on_two_streams)
{
    (void)state;
    struct buf dev1 = vmm(BIG, CU_MEM_LOCATION_TYPE_DEVICE),
               dev2 = vmm(BIG, CU_MEM_LOCATION_TYPE_DEVICE);
    struct buf host1 = vmm(BIG, CU_MEM_LOCATION_TYPE_HOST),
               host2 = vmm(BIG, CU_MEM_LOCATION_TYPE_HOST);
    put_words(dev1.va, BIG / 4, 55);
    put_words(host2.va, BIG / 4, 66);
    struct simgpu_stats s0 = sim_test_stats();
    /* evict dev1 -> host1 (D2H) while restoring host2 -> dev2 (H2D): two engines */
    double us = two_streams(host1.va, dev1.va, dev2.va, host2.va, BIG);
    assert_us(us, BIG / (H2D_GBPS * 1e3)); /* the longer one, not the sum */
    struct simgpu_stats s1 = sim_test_stats();
    assert_int_equal(s1.bytes_d2h - s0.bytes_d2h, BIG);
    assert_int_equal(s1.bytes_h2d - s0.bytes_h2d, BIG);
    assert_int_equal(sim_test_wrong_words(host1.va, BIG / 4, 55), 0);
    assert_int_equal(sim_test_wrong_words(dev2.va, BIG / 4, 66), 0);
    /* two evictions at once share the one D2H engine: serialised */
    us = two_streams(host1.va, dev1.va, host2.va, dev2.va, BIG);
    assert_us(us, 2 * BIG / (D2H_GBPS * 1e3));
    vmm_free(dev1);
    vmm_free(dev2);
    vmm_free(host1);
    vmm_free(host2);
}

SIM_TEST(test_eviction_shares_d2h_engine_with_dtoh)
{
    (void)state;
    struct buf dev = vmm(8 * MIB, CU_MEM_LOCATION_TYPE_DEVICE),
               host = vmm(8 * MIB, CU_MEM_LOCATION_TYPE_HOST);
    void *pinned;
    CK(cuMemHostAlloc(&pinned, 8 * MIB, 0));
    CUstream one = sim_test_stream(), two = sim_test_stream();
    CK(cuCtxSynchronize());
    CUevent a = sim_test_fork(one, two);
    CK(cuMemcpyDtoDAsync(host.va, dev.va, 8 * MIB, one));
    CK(cuMemcpyDtoHAsync(pinned, dev.va, 8 * MIB, two));
    assert_us(sim_test_join_us(a, one, two), 2 * 8 * MIB / (D2H_GBPS * 1e3));
    CK(cuStreamDestroy(one));
    CK(cuStreamDestroy(two));
    CK(cuMemFreeHost(pinned));
    vmm_free(dev);
    vmm_free(host);
}

/* A 4 MiB reservation at va: device-located first half (handle hd), host-located second half
   (hh). */
struct mixed {
    CUdeviceptr va;
    CUmemGenericAllocationHandle hd, hh;
};

/* A mixed reservation, access set by one cuMemSetAccess over both mappings. */
static struct mixed mixed(void)
{
    CUmemAllocationProp prop = {0};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    struct mixed m;
    CK(cuMemAddressReserve(&m.va, 4 * MIB, 0, 0, 0));
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CK(cuMemCreate(&m.hd, 2 * MIB, &prop, 0));
    prop.location.type = CU_MEM_LOCATION_TYPE_HOST;
    CK(cuMemCreate(&m.hh, 2 * MIB, &prop, 0));
    CK(cuMemMap(m.va, 2 * MIB, 0, m.hd, 0));
    CK(cuMemMap(m.va + 2 * MIB, 2 * MIB, 0, m.hh, 0));
    CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CK(cuMemSetAccess(m.va, 4 * MIB, &acc, 1));
    CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    unsigned long long flags = 0;
    CK(cuMemGetAccess(&flags, &loc, m.va + 2 * MIB + 4096));
    assert_int_equal(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    return m;
}

static void mixed_free(struct mixed m)
{
    CK(cuMemUnmap(m.va, 4 * MIB));
    CK(cuMemRelease(m.hd));
    CK(cuMemRelease(m.hh));
    CK(cuMemAddressFree(m.va, 4 * MIB));
}

SIM_TEST(test_copy_across_locations_splits_by_piece)
{
    (void)state;
    struct mixed m = mixed();
    struct buf dev = vmm(4 * MIB, CU_MEM_LOCATION_TYPE_DEVICE);
    put_words(dev.va, MIB, 77);
    struct simgpu_stats s0 = sim_test_stats();
    double want = 2.0 * 2 * MIB / (DEV_GBPS * 1e3) + 2 * MIB / (D2H_GBPS * 1e3);
    assert_us(timed_copy(m.va, dev.va, 4 * MIB), want);
    struct simgpu_stats s1 = sim_test_stats();
    assert_int_equal(s1.bytes_d2d - s0.bytes_d2d, 2 * MIB);
    assert_int_equal(s1.bytes_d2h - s0.bytes_d2h, 2 * MIB);
    assert_int_equal(s1.copies - s0.copies, 2);
    assert_int_equal(sim_test_wrong_words(m.va, MIB, 77), 0);
    /* back, at odd offsets: the host-located piece crosses the link host to device */
    put_words(m.va, MIB, 99);
    size_t n = 4 * MIB - 2, half = 2 * MIB - 1;
    want = 2.0 * half / (DEV_GBPS * 1e3) + half / (H2D_GBPS * 1e3);
    assert_us(timed_copy(dev.va + 1, m.va + 1, n), want);
    struct simgpu_stats s2 = sim_test_stats();
    assert_int_equal(s2.bytes_h2d - s1.bytes_h2d, half + 2 * MIB); /* + put_words' device half */
    assert_int_equal(s2.bytes_d2d - s1.bytes_d2d, half);
    unsigned char *got = malloc(4 * MIB), *want_b = malloc(4 * MIB);
    assert_non_null(got);
    assert_non_null(want_b);
    CK(cuMemcpyDtoH(got, dev.va, 4 * MIB));
    CK(cuMemcpyDtoH(want_b, m.va, 4 * MIB));
    assert_int_equal(memcmp(got + 1, want_b + 1, n), 0);
    assert_int_not_equal(memcmp(got, want_b, 4 * MIB), 0); /* the first byte was not copied */
    free(got);
    free(want_b);
    vmm_free(dev);
    mixed_free(m);
}

SIM_TEST(test_async_pageable_source_is_snapshot_per_piece)
{
    (void)state;
    struct mixed m = mixed();
    uint32_t *w = malloc(4 * MIB);
    assert_non_null(w);
    for (size_t i = 0; i < MIB; i++)
        w[i] = 88 + (uint32_t)i;
    CUstream s = sim_test_stream();
    struct simgpu_stats s0 = sim_test_stats();
    CK(cuMemcpyHtoDAsync(m.va, w, 4 * MIB, s));
    memset(w, 0xee, 4 * MIB); /* the copy took its snapshot before returning */
    CK(cuStreamSynchronize(s));
    assert_int_equal(sim_test_wrong_words(m.va, MIB, 88), 0);
    /* the device half came over H2D; the host half uses no engine */
    assert_int_equal(sim_test_stats().bytes_h2d - s0.bytes_h2d, 2 * MIB);
    CK(cuStreamDestroy(s));
    free(w);
    mixed_free(m);
}

SIM_TEST(test_memset_into_host_backed_costs_link_time)
{
    (void)state;
    struct mixed m = mixed();
    CUstream s = sim_test_stream();
    CUevent a = sim_test_event(), b = sim_test_event();
    struct simgpu_stats s0 = sim_test_stats();
    CK(cuCtxSynchronize());
    CK(cuEventRecord(a, s));
    CK(cuMemsetD32Async(m.va, 0xabcd1234u, MIB, s));
    CK(cuEventRecord(b, s));
    double want = 2 * MIB / (DEV_GBPS * 1e3) + 2 * MIB / (H2D_GBPS * 1e3);
    assert_us(sim_test_elapsed_us(a, b), want);
    struct simgpu_stats s1 = sim_test_stats();
    expect_bytes(&s0, &s1, 0, 0, 0);
    uint32_t probe[2];
    CK(cuMemcpyDtoH(probe, m.va + 2 * MIB - 4, 8)); /* either side of the boundary */
    assert_int_equal(probe[0], 0xabcd1234u);
    assert_int_equal(probe[1], 0xabcd1234u);
    CK(cuMemcpyDtoH(probe, m.va + 4 * MIB - 8, 8));
    assert_int_equal(probe[1], 0xabcd1234u);
    CK(cuStreamDestroy(s));
    mixed_free(m);
}

int main(void)
{
    setenv("SIMGPU_H2D_GBPS", "20", 1);
    setenv("SIMGPU_D2H_GBPS", "25", 1);
    setenv("SIMGPU_DEVICE_GBPS", "2000", 1);
    sim_test_ctx();
    return sim_test_run(NULL);
}
