/* test_sim_time.c — deterministic virtual time: kernel costs, copy bandwidths, engines, host clock.
 */
#include "simgpu_test.h"

#include <stdbool.h>
#include <string.h>
#include <time.h>

static void k_nop(void **p)
{
    (void)p;
}

static CUfunction nop_with_cost(const char *name, simgpu_body body, double us)
{
    CUfunction f = simgpu_register(name, body, 0, NULL);
    simgpu_set_cost(f, us);
    return f;
}

/* SIMGPU_LINK_SHARED=1: the two copy directions share one queue. */
static bool shared_link;

SIM_TEST(test_kernel_costs_add_on_one_stream)
{
    (void)state;
    CUfunction f = nop_with_cost("nop10", k_nop, 10.0);
    CUevent a = sim_test_event(), b = sim_test_event();
    CK(cuEventRecord(a, NULL));
    for (int i = 0; i < 3; i++)
        CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CK(cuEventRecord(b, NULL));
    assert_us(sim_test_elapsed_us(a, b), 30.0);
    simgpu_set_cost(f, 2.5);
    CK(cuEventRecord(a, NULL));
    CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CK(cuEventRecord(b, NULL));
    assert_us(sim_test_elapsed_us(a, b), 2.5);
}

/* Holds the stream's worker until the test opens it, so that later launches stay queued. */
static _Atomic int gate_open;
static void k_gate(void **p)
{
    (void)p;
    while (!gate_open)
        nanosleep(&(struct timespec){0, 100000}, NULL);
}

/* The cost of a launch is the one set when it was submitted, not when it runs. */
SIM_TEST(test_kernel_cost_is_taken_at_submission)
{
    (void)state;
    CUfunction gate = nop_with_cost("gate", k_gate, 0.0);
    CUfunction f = nop_with_cost("nop_submitted", k_nop, 10.0);
    CUevent a = sim_test_event(), b = sim_test_event();
    gate_open = 0;
    CK(cuEventRecord(a, NULL));
    CK(cuLaunchKernel(gate, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    simgpu_set_cost(f, 1000.0); /* the first launch of f is queued behind the gate */
    CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CK(cuEventRecord(b, NULL));
    gate_open = 1;
    assert_us(sim_test_elapsed_us(a, b), 1010.0);
}

SIM_TEST(test_kernels_on_two_streams_share_the_compute_engine)
{
    (void)state;
    CUfunction f = nop_with_cost("nop10", k_nop, 10.0);
    CUstream s1 = sim_test_stream(), s2 = sim_test_stream();
    CUevent a = sim_test_event(), b = sim_test_event();
    CK(cuCtxSynchronize());
    CK(cuEventRecord(a, s1));
    CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s1, NULL, NULL));
    CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s2, NULL, NULL));
    CK(cuStreamWaitEvent(s1, a, 0)); /* harmless */
    CUevent c = sim_test_event();
    CK(cuEventRecord(c, s2));
    CK(cuStreamWaitEvent(s1, c, 0));
    CK(cuEventRecord(b, s1));
    assert_us(sim_test_elapsed_us(a, b), 20.0);
    CK(cuStreamDestroy(s1));
    CK(cuStreamDestroy(s2));
}

SIM_TEST(test_copies_take_bytes_over_bandwidth_and_overlap_by_direction)
{
    (void)state;
    size_t n = 10 * MIB;
    CUdeviceptr d1, d2;
    CK(cuMemAlloc(&d1, n));
    CK(cuMemAlloc(&d2, n));
    void *h1, *h2;
    CK(cuMemHostAlloc(&h1, n, 0));
    CK(cuMemHostAlloc(&h2, n, 0));
    CUstream up = sim_test_stream(), down = sim_test_stream();
    CUevent a = sim_test_event(), b = sim_test_event();
    double h2d_us = (double)n / 20e3, d2h_us = (double)n / 10e3; /* SIMGPU_*_GBPS below */
    CK(cuCtxSynchronize());
    CK(cuEventRecord(a, up));
    CK(cuMemcpyHtoDAsync(d1, h1, n, up));
    CK(cuEventRecord(b, up));
    assert_us(sim_test_elapsed_us(a, b), h2d_us);
    /* both directions at once: they overlap (two copy engines), or with a shared link
       (SIMGPU_LINK_SHARED=1, tests/simgpu/test_link_shared.sh) run one after the other */
    a = sim_test_fork(up, down);
    CK(cuMemcpyHtoDAsync(d1, h1, n, up));
    CK(cuMemcpyDtoHAsync(h2, d2, n, down));
    assert_us(sim_test_join_us(a, up, down), shared_link ? h2d_us + d2h_us : d2h_us);
    /* the same direction twice on two streams: serialised on one engine */
    a = sim_test_fork(up, down);
    CK(cuMemcpyHtoDAsync(d1, h1, n, up));
    CK(cuMemcpyHtoDAsync(d2, h2, n, down));
    assert_us(sim_test_join_us(a, up, down), 2 * h2d_us);
    struct simgpu_stats s = sim_test_stats();
    assert_int_equal(s.bytes_h2d, 4 * n);
    assert_int_equal(s.bytes_d2h, n);
    CK(cuStreamDestroy(up));
    CK(cuStreamDestroy(down));
    CK(cuMemFreeHost(h1));
    CK(cuMemFreeHost(h2));
    CK(cuMemFree(d1));
    CK(cuMemFree(d2));
}

SIM_TEST(test_copy_overlaps_compute_and_host_clock_advances_at_sync)
{
    (void)state;
    CUfunction f = nop_with_cost("nop100", k_nop, 100.0);
    size_t n = 2 * MIB;
    CUdeviceptr d;
    CK(cuMemAlloc(&d, n));
    void *h;
    CK(cuMemHostAlloc(&h, n, 0));
    CUstream copy = sim_test_stream();
    CUevent a = sim_test_event(), b = sim_test_event(), c = sim_test_event();
    CK(cuCtxSynchronize());
    CK(cuEventRecord(a, NULL));
    CK(cuStreamWaitEvent(copy, a, 0));
    CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CK(cuMemcpyHtoDAsync(d, h, n, copy)); /* 2 MiB / 20 GB/s = 104.9 us, beside the kernel */
    CK(cuEventRecord(c, copy));
    CK(cuStreamWaitEvent(NULL, c, 0));
    CK(cuEventRecord(b, NULL));
    assert_us(sim_test_elapsed_us(a, b), (double)n / 20e3);
    /* after the host waited, new work cannot start before the host's clock */
    double t0 = sim_test_stats().device_time_us;
    CK(cuEventRecord(a, NULL));
    CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CK(cuEventRecord(b, NULL));
    CK(cuEventSynchronize(b));
    assert_us(sim_test_stats().device_time_us, t0 + 100.0);
    CK(cuStreamDestroy(copy));
    CK(cuMemFreeHost(h));
    CK(cuMemFree(d));
}

SIM_TEST(test_elapsed_time_errors)
{
    (void)state;
    CUevent a = sim_test_event(), b = sim_test_event(), nt;
    float ms;
    assert_int_equal(cuEventElapsedTime(&ms, a, b), CUDA_ERROR_NOT_READY);
    CK(cuEventCreate(&nt, CU_EVENT_DISABLE_TIMING));
    CK(cuEventRecord(a, NULL));
    CK(cuEventRecord(nt, NULL));
    CK(cuEventSynchronize(nt));
    assert_int_equal(cuEventElapsedTime(&ms, a, nt), CUDA_ERROR_INVALID_HANDLE);
    CK(cuEventQuery(nt));
    CK(cuEventDestroy(nt));
}

/* A query answers at the host's virtual time: work the stream worker already ran (in real time)
   but that ends after the host's clock is not ready; work that ended before the clock is, with no
   wait for it. So what a program does after a poll never depends on thread timing. */
SIM_TEST(test_queries_answer_at_the_host_clock)
{
    (void)state;
    CUfunction slow = nop_with_cost("nop1000", k_nop, 1000.0);
    CUfunction fast = nop_with_cost("nop100", k_nop, 100.0);
    CUstream s1 = sim_test_stream(), s2 = sim_test_stream();
    CK(cuCtxSynchronize());
    CUevent a = sim_test_event(), b = sim_test_event();
    CK(cuLaunchKernel(slow, 1, 1, 1, 1, 1, 1, 0, s1, NULL, NULL));
    CK(cuEventRecord(a, s1));
    struct timespec pause = {0, 20000000}; /* the worker has long run it, in real time */
    nanosleep(&pause, NULL);
    assert_int_equal(cuEventQuery(a), CUDA_ERROR_NOT_READY);
    assert_int_equal(cuStreamQuery(s1), CUDA_ERROR_NOT_READY);
    CK(cuEventSynchronize(a));
    CK(cuEventQuery(a));
    CK(cuStreamQuery(s1));
    /* s1's kernel ends 100 us in, s2's (after it on the compute engine) at 1100: waiting for s2
       puts the host past s1's end, which a query then sees without a wait of its own. */
    CK(cuLaunchKernel(fast, 1, 1, 1, 1, 1, 1, 0, s1, NULL, NULL));
    CK(cuEventRecord(a, s1));
    CK(cuLaunchKernel(slow, 1, 1, 1, 1, 1, 1, 0, s2, NULL, NULL));
    CK(cuEventRecord(b, s2));
    assert_int_equal(cuEventQuery(a), CUDA_ERROR_NOT_READY);
    CK(cuStreamSynchronize(s2));
    CK(cuEventQuery(a));
    CK(cuStreamQuery(s1));
    CK(cuEventQuery(b));
    CK(cuStreamDestroy(s1));
    CK(cuStreamDestroy(s2));
}

/* SIMGPU_VMM_HOST_COST=2 (main): every VMM call costs the host twice what the model says
   (simgpu_vmm_cost.c), charged to this thread's clock and, with SIMGPU_VMM_SERIAL at its default,
   to the shared one, so an event recorded after the calls on an idle stream is that much later.
   Backing, mapping, setting access to, unmapping and freeing 64 MiB as 32 handles of 2 MiB is the
   case the H100 measured, which the model keeps: reserve 22 + create 32 x 12.78 (409) + map
   32 x 1.84 (59) + set access 4.84 + 32 x 31.16 (1002) + unmap 9.65 + 32 x 16.35 (533) + address
   free 11 + release 32 x 18.66 (597) = 2633 us, times 2; the handles charged are 32 for each of
   create, map, set access, unmap and release. */
SIM_TEST(test_vmm_calls_cost_the_host)
{
    (void)state;
    const size_t chunk = 2u << 20, n = 32, size = n * chunk;
    CK(cuCtxSynchronize());
    double before = sim_test_stats().vmm_host_us;
    uint64_t handles = sim_test_stats().vmm_handles;
    CUevent a = sim_test_event(), b = sim_test_event();
    CK(cuEventRecord(a, NULL));
    CUdeviceptr va;
    CK(cuMemAddressReserve(&va, size, 0, 0, 0));
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    CUmemGenericAllocationHandle h[32];
    for (size_t i = 0; i < n; i++) {
        CK(cuMemCreate(&h[i], chunk, &prop, 0));
        CK(cuMemMap(va + i * chunk, chunk, 0, h[i], 0));
    }
    CUmemAccessDesc acc = {.location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0},
                           .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CK(cuMemSetAccess(va, size, &acc, 1));
    CK(cuMemUnmap(va, size));
    for (size_t i = 0; i < n; i++)
        CK(cuMemRelease(h[i]));
    CK(cuMemAddressFree(va, size));
    CK(cuEventRecord(b, NULL));
    assert_us(sim_test_elapsed_us(a, b), 2 * 2633.0);
    assert_us(sim_test_stats().vmm_host_us - before, 2 * 2633.0);
    assert_int_equal(sim_test_stats().vmm_handles - handles, 5 * 32);
}

int main(void)
{
    setenv("SIMGPU_VMM_HOST_COST", "2", 1);
    const char *shared = getenv("SIMGPU_LINK_SHARED");
    shared_link = shared && strcmp(shared, "1") == 0;
    setenv("SIMGPU_H2D_GBPS", "20", 1);
    setenv("SIMGPU_D2H_GBPS", "10", 1);
    sim_test_ctx();
    return sim_test_run(NULL);
}
