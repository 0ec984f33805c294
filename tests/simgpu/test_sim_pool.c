/* test_sim_pool.c — the default memory pool: a block freed on one stream goes to an allocation on
 * another only once the host sees the free complete (opportunistic reuse) or the allocating
 * stream waited for it through an event (event dependencies), and never before; both can be
 * turned off with cuMemPoolSetAttribute; a synchronisation gives pooled memory back. */
#include "simgpu_test.h"

#include <stdbool.h>

static CUmemoryPool pool;
static CUstream a, b;

static int setup(void **state)
{
    (void)state;
    CK(cuDeviceGetDefaultMemPool(&pool, 0));
    CK(cuStreamCreate(&a, CU_STREAM_DEFAULT)); /* the legacy stream waits for it */
    CK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
    return 0;
}

static void set_reuse(int follow, int opportunistic)
{
    CK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, &follow));
    CK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &opportunistic));
}

/* A block of 4 MiB on a, filled by a kernel, freed on a; returns its address. */
static CUdeviceptr freed_on_a(void)
{
    CUdeviceptr p;
    CK(cuMemAllocAsync(&p, 4 * MIB, a));
    sim_test_launch_fill(a, p, 1024, 5);
    CK(cuMemFreeAsync(p, a));
    return p;
}

/* Whether a 4 MiB allocation on s now takes the block at p; it is freed on s again and the
   context synchronised. */
static bool takes(CUstream s, CUdeviceptr p)
{
    CUdeviceptr q;
    CK(cuMemAllocAsync(&q, 4 * MIB, s));
    CK(cuMemFreeAsync(q, s));
    CK(cuCtxSynchronize());
    return q == p;
}

SIM_TEST(test_attributes_default_on_and_settable)
{
    (void)state;
    int v = -1;
    CK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &v));
    assert_int_equal(v, 1);
    v = -1;
    CK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, &v));
    assert_int_equal(v, 1);
    set_reuse(0, 0);
    CK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &v));
    assert_int_equal(v, 0);
    set_reuse(1, 1);
    CUmemoryPool bogus = (CUmemoryPool)(void *)&v;
    assert_int_equal(cuMemPoolSetAttribute(bogus, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &v),
                     CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v),
                     CUDA_ERROR_INVALID_VALUE);
}

SIM_TEST(test_same_stream_reuses_at_once)
{
    (void)state;
    set_reuse(0, 0);
    CUdeviceptr p = freed_on_a();
    assert_true(takes(a, p));
    set_reuse(1, 1);
}

SIM_TEST(test_other_stream_waits_for_the_free)
{
    (void)state;
    CUdeviceptr p = freed_on_a(), fresh, q;
    /* The host has not seen the free complete: b gets fresh memory. */
    CK(cuMemAllocAsync(&fresh, 4 * MIB, b));
    assert_int_not_equal(fresh, p);
    /* A synchronous copy (legacy stream, which waits for blocking a) lets the host see the free
       complete without a synchronisation call, so the block is still in the pool: now b may
       take it. */
    uint32_t w;
    CK(cuMemcpyDtoH(&w, p, sizeof w));
    assert_int_equal(w, 5);
    CK(cuMemAllocAsync(&q, 4 * MIB, b));
    assert_int_equal(q, p);
    CK(cuMemFreeAsync(q, b));
    CK(cuMemFreeAsync(fresh, b));
    CK(cuCtxSynchronize());
}

SIM_TEST(test_opportunistic_off_keeps_it_from_other_streams)
{
    (void)state;
    set_reuse(0, 0);
    CUdeviceptr p = freed_on_a();
    uint32_t w;
    CK(cuMemcpyDtoH(&w, p, sizeof w)); /* the free is complete, and seen so */
    assert_false(takes(b, p));
    set_reuse(1, 1);
}

SIM_TEST(test_event_dependency_allows_reuse_before_completion)
{
    (void)state;
    set_reuse(1, 0);
    CUevent e;
    CK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    CUdeviceptr p = freed_on_a(), q;
    CK(cuEventRecord(e, a));
    CK(cuStreamWaitEvent(b, e, 0));
    CK(cuMemAllocAsync(&q, 4 * MIB, b));
    assert_int_equal(q, p);
    /* b runs after a's kernel: the data b reads there is what a wrote. */
    uint32_t w;
    CK(cuMemcpyDtoHAsync(&w, q, sizeof w, b));
    CK(cuStreamSynchronize(b));
    assert_int_equal(w, 5);
    CK(cuMemFreeAsync(q, b));
    /* Without the attribute, the same dependency does not allow it. */
    set_reuse(0, 0);
    p = freed_on_a();
    CK(cuEventRecord(e, a));
    CK(cuStreamWaitEvent(b, e, 0));
    assert_false(takes(b, p));
    CK(cuEventDestroy(e));
    set_reuse(1, 1);
}

SIM_TEST(test_synchronize_gives_memory_back)
{
    (void)state;
    CK(cuCtxSynchronize());
    uint64_t before = sim_test_stats().device_bytes;
    CUdeviceptr p = freed_on_a();
    (void)p;
    uint32_t w;
    CK(cuMemcpyDtoH(&w, p, sizeof w)); /* the free has run: the pool still holds the block */
    assert_int_equal(sim_test_stats().device_bytes, before + 4 * MIB);
    CK(cuStreamSynchronize(a)); /* release threshold 0: given back */
    assert_int_equal(sim_test_stats().device_bytes, before);
}

int main(void)
{
    sim_test_ctx();
    return sim_test_run(setup);
}
