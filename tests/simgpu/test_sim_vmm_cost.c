/* test_sim_vmm_cost.c — what VMM calls cost the host (SIMGPU_VMM_HOST_COST=1, simgpu_vmm_cost.c)
 * and whose clock pays it: run as is (SIMGPU_VMM_SERIAL=1, the default: a VMM call on any thread
 * delays the program) and by test_vmm_parallel.sh with SIMGPU_VMM_SERIAL=0 (it delays only the
 * calling thread, and work touching what it mapped). */
#include "simgpu_test.h"

#include <stdbool.h>

/* The model's figures (simgpu_vmm_cost.c), at SIMGPU_VMM_HOST_COST=1. */
#define RESERVE_US        22.0
#define ADDR_FREE_US      11.0
#define CREATE_2MIB_US    (409.0 / 32)
#define RELEASE_2MIB_US   (597.0 / 32)
#define MAP_US            (59.0 / 32)
#define SET_ACCESS_ONE_US 36.0   /* one handle: kvcached's worst */
#define SET_ACCESS_32_US  1002.0 /* 32 handles: the H100's */
#define UNMAP_ONE_US      26.0
#define UNMAP_32_US       533.0
#define SET_ACCESS_HANDLE ((SET_ACCESS_32_US - SET_ACCESS_ONE_US) / 31)

static const size_t chunk = 2 * MIB;
static bool serial; /* SIMGPU_VMM_SERIAL is not 0 */

static const CUmemAllocationProp on_device = {
    .type = CU_MEM_ALLOCATION_TYPE_PINNED,
    .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
static const CUmemAccessDesc read_write = {
    .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0},
    .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};

/* Host time charged for VMM calls so far, and handles covered. */
static double vmm_us(void)
{
    return sim_test_stats().vmm_host_us;
}
static uint64_t vmm_handles(void)
{
    return sim_test_stats().vmm_handles;
}

/* A reserved range of n handles of `each` bytes, mapped one after another (not yet accessible);
   h[] gets the handles. */
static CUdeviceptr map_handles(size_t n, size_t each, CUmemGenericAllocationHandle *h)
{
    CUdeviceptr va;
    CK(cuMemAddressReserve(&va, n * each, 0, 0, 0));
    for (size_t i = 0; i < n; i++) {
        CK(cuMemCreate(&h[i], each, &on_device, 0));
        CK(cuMemMap(va + i * each, each, 0, h[i], 0));
    }
    return va;
}

static void unmap_handles(CUdeviceptr va, size_t n, size_t each, CUmemGenericAllocationHandle *h)
{
    CK(cuMemUnmap(va, n * each));
    for (size_t i = 0; i < n; i++)
        CK(cuMemRelease(h[i]));
    CK(cuMemAddressFree(va, n * each));
}

/* Setting access to and unmapping 64 MiB costs per handle, not per byte: one handle of 64 MiB
   costs per_call + per_handle, 32 of 2 MiB per_call + 32 * per_handle (the per-granule model
   charged both the same). */
SIM_TEST(test_range_calls_cost_per_handle)
{
    (void)state;
    CUmemGenericAllocationHandle h[32];
    CUdeviceptr va = map_handles(1, 32 * chunk, h);
    double us = vmm_us();
    uint64_t handles = vmm_handles();
    CK(cuMemSetAccess(va, 32 * chunk, &read_write, 1));
    assert_us(vmm_us() - us, SET_ACCESS_ONE_US);
    assert_int_equal(vmm_handles() - handles, 1);
    us = vmm_us();
    CK(cuMemUnmap(va, 32 * chunk));
    assert_us(vmm_us() - us, UNMAP_ONE_US);
    CK(cuMemRelease(h[0]));
    CK(cuMemAddressFree(va, 32 * chunk));

    va = map_handles(32, chunk, h);
    us = vmm_us();
    handles = vmm_handles();
    CK(cuMemSetAccess(va, 32 * chunk, &read_write, 1));
    assert_us(vmm_us() - us, SET_ACCESS_32_US);
    assert_int_equal(vmm_handles() - handles, 32);
    us = vmm_us();
    CK(cuMemSetAccess(va + 8 * chunk, 16 * chunk, &read_write, 1)); /* part of the range */
    assert_us(vmm_us() - us, SET_ACCESS_ONE_US + 15 * SET_ACCESS_HANDLE);
    us = vmm_us();
    CK(cuMemUnmap(va, 32 * chunk));
    assert_us(vmm_us() - us, UNMAP_32_US);
    for (size_t i = 0; i < 32; i++)
        CK(cuMemRelease(h[i]));
    CK(cuMemAddressFree(va, 32 * chunk));
}

/* Pieces of one mapping that cuMemSetAccess split apart are still one handle. */
SIM_TEST(test_a_split_mapping_is_one_handle)
{
    (void)state;
    CUmemGenericAllocationHandle h;
    CUdeviceptr va = map_handles(1, 8 * chunk, &h);
    CK(cuMemSetAccess(va + 2 * chunk, 2 * chunk, &read_write, 1)); /* three pieces now */
    double us = vmm_us();
    CK(cuMemSetAccess(va, 8 * chunk, &read_write, 1));
    assert_us(vmm_us() - us, SET_ACCESS_ONE_US);
    us = vmm_us();
    CK(cuMemUnmap(va, 8 * chunk));
    assert_us(vmm_us() - us, UNMAP_ONE_US);
    CK(cuMemRelease(h));
    CK(cuMemAddressFree(va, 8 * chunk));
}

/* Create and release cost in proportion to the handle's bytes (only 2 MiB was measured: the
   worse case); a map costs per call whatever the handle's size; reserve and free per call. */
SIM_TEST(test_create_release_map_reserve_costs)
{
    (void)state;
    double us = vmm_us();
    CUdeviceptr va;
    CK(cuMemAddressReserve(&va, 32 * chunk, 0, 0, 0));
    assert_us(vmm_us() - us, RESERVE_US);
    CUmemGenericAllocationHandle big, small;
    us = vmm_us();
    CK(cuMemCreate(&big, 16 * chunk, &on_device, 0));
    assert_us(vmm_us() - us, 16 * CREATE_2MIB_US);
    us = vmm_us();
    CK(cuMemCreate(&small, chunk, &on_device, 0));
    assert_us(vmm_us() - us, CREATE_2MIB_US);
    us = vmm_us();
    CK(cuMemMap(va, 16 * chunk, 0, big, 0));
    assert_us(vmm_us() - us, MAP_US);
    us = vmm_us();
    CK(cuMemMap(va + 16 * chunk, chunk, 0, small, 0));
    assert_us(vmm_us() - us, MAP_US);
    CK(cuMemUnmap(va, 17 * chunk));
    us = vmm_us();
    CK(cuMemRelease(big));
    assert_us(vmm_us() - us, 16 * RELEASE_2MIB_US);
    us = vmm_us();
    CK(cuMemRelease(small));
    assert_us(vmm_us() - us, RELEASE_2MIB_US);
    us = vmm_us();
    CK(cuMemAddressFree(va, 32 * chunk));
    assert_us(vmm_us() - us, ADDR_FREE_US);
}

/* ---- whose clock pays ---- */

static CUcontext main_ctx;

/* What a helper thread's job (run by sim_test_on_thread, the context current) works on. */
struct helper {
    CUdeviceptr va;
    CUmemGenericAllocationHandle h[32];
    CUevent event;
    CUresult query; /* cuEventQuery(event) after the job's VMM calls */
};

/* 32 handles of 2 MiB, mapped and made accessible: RESERVE + 32 creates and maps + one set
   access over the 32. */
#define BACK_32_US (RESERVE_US + 32 * (CREATE_2MIB_US + MAP_US) + SET_ACCESS_32_US)
static void back_32(void *arg)
{
    struct helper *w = arg;
    w->va = map_handles(32, chunk, w->h);
    CK(cuMemSetAccess(w->va, 32 * chunk, &read_write, 1));
}

/* Another thread's VMM calls delay the program's next submission under SIMGPU_VMM_SERIAL=1 (a
   driver-wide lock), not at all with 0; the program thread's own VMM calls delay it either way. */
SIM_TEST(test_another_threads_vmm_time)
{
    (void)state;
    CUevent a = sim_test_event(), b = sim_test_event();
    CK(cuCtxSynchronize());
    double serial_us = sim_test_stats().vmm_serial_us;
    CK(cuEventRecord(a, NULL));
    struct helper w = {0};
    sim_test_on_thread(main_ctx, back_32, &w);
    CK(cuEventRecord(b, NULL));
    assert_us(sim_test_elapsed_us(a, b), serial ? BACK_32_US : 0.0);
    assert_us(sim_test_stats().vmm_serial_us - serial_us, serial ? BACK_32_US : 0.0);

    CK(cuEventRecord(a, NULL));
    CK(cuMemUnmap(w.va, 32 * chunk)); /* on this thread: it pays, whatever the switch */
    CK(cuEventRecord(b, NULL));
    assert_us(sim_test_elapsed_us(a, b), UNMAP_32_US);
    for (size_t i = 0; i < 32; i++)
        CK(cuMemRelease(w.h[i]));
    CK(cuMemAddressFree(w.va, 32 * chunk));
}

/* A kernel touching a range another thread made accessible starts no earlier than that thread's
   clock at the end of its cuMemSetAccess, whatever the switch; one touching other memory is not
   held back with SIMGPU_VMM_SERIAL=0. */
SIM_TEST(test_work_waits_for_a_mapping_made_ready_later)
{
    (void)state;
    CUdeviceptr other;
    CK(cuMemAlloc(&other, chunk));
    CUfunction fill = sim_test_fill_fn();
    simgpu_set_cost(fill, 5.0);
    CUevent a = sim_test_event(), m = sim_test_event(), b = sim_test_event();
    CK(cuCtxSynchronize());
    double wait_us = sim_test_stats().vmm_wait_us;
    CK(cuEventRecord(a, NULL));
    struct helper w = {0};
    sim_test_on_thread(main_ctx, back_32, &w);
    sim_test_launch_fill(NULL, other, 16, 1);
    CK(cuEventRecord(m, NULL));
    sim_test_launch_fill(NULL, w.va + chunk, 16, 2); /* inside the range */
    CK(cuEventRecord(b, NULL));
    assert_us(sim_test_elapsed_us(a, m), serial ? BACK_32_US + 5.0 : 5.0);
    /* serial: both kernels after the shared clock moved; else the second one waited */
    assert_us(sim_test_elapsed_us(a, b), serial ? BACK_32_US + 10.0 : BACK_32_US + 5.0);
    assert_us(sim_test_stats().vmm_wait_us - wait_us, serial ? 0.0 : BACK_32_US);
    assert_int_equal(sim_test_wrong_words(w.va + chunk, 16, 2), 0);
    unmap_handles(w.va, 32, chunk, w.h);
    CK(cuMemFree(other));
}

/* 16 handles of 2 MiB created, then the event queried: 16 * 12.8 = 204 us of the thread's time. */
static void create_then_query(void *arg)
{
    struct helper *w = arg;
    for (size_t i = 0; i < 16; i++)
        CK(cuMemCreate(&w->h[i], chunk, &on_device, 0));
    w->query = cuEventQuery(w->event);
    for (size_t i = 0; i < 16; i++)
        CK(cuMemRelease(w->h[i]));
}

static void k_nop(void **p)
{
    (void)p;
}

/* A thread's event query answers at its own time: after 204 us of VMM calls it sees a 100 us
   kernel done; the program thread sees it done only if those calls moved its clock too. */
SIM_TEST(test_a_query_answers_at_the_threads_time)
{
    (void)state;
    CUfunction k = simgpu_register("k100", k_nop, 0, NULL);
    simgpu_set_cost(k, 100.0);
    CUevent e = sim_test_event();
    CK(cuCtxSynchronize());
    CK(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CK(cuEventRecord(e, NULL));
    struct helper w = {.event = e};
    sim_test_on_thread(main_ctx, create_then_query, &w);
    assert_int_equal(w.query, CUDA_SUCCESS);
    assert_int_equal(cuEventQuery(e), serial ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY);
    CK(cuEventSynchronize(e));
}

int main(void)
{
    setenv("SIMGPU_VMM_HOST_COST", "1", 1);
    const char *s = getenv("SIMGPU_VMM_SERIAL");
    serial = !(s && strcmp(s, "0") == 0); /* any other value: the default kept */
    sim_test_ctx();
    CK(cuCtxGetCurrent(&main_ctx));
    return sim_test_run(NULL);
}
