/* simgpu_vmm_cost.c — what a VMM call costs the host (SIMGPU_VMM_HOST_COST): the model, its
 * constants with their sources, and the handles a call over a range covers.
 *
 * The model: cost = per_call + per_handle * (handles the call covers) + per_mib * MiB.
 *
 * Sources:
 * [H100] measured here on an H100 (driver 580.159.04, CUDA 13.0) by tests/gpu/vmm_facts.cu with
 *   nothing queued (tests/bench/RESULTS-gpu.md, "VMM calls: what they cost the host"), 64 MiB as
 *   32 handles of 2 MiB: cuMemCreate x32 409 us, cuMemAddressReserve 22 us, cuMemMap x32 59 us,
 *   cuMemSetAccess over the 64 MiB 1002 us, cuMemUnmap over the 64 MiB 533 us,
 *   cuMemAddressFree 11 us, cuMemRelease x32 597 us.
 * [kvcached] kvcached's A100 figures, one 2 MiB handle per call: map 1-1.5 us, set access
 *   21-36 us, unmap 11-26 us.
 * [PyTorch] the comment on expandable segments in c10/cuda/CUDACachingAllocator.cpp: the cost
 *   of mapping grows with the number of physical handles (ten 2 MiB handles cost about ten
 *   times one 20 MiB handle), so a call over a range costs per handle, not per byte.
 *
 * No fact shows a cost per byte for calls over a range, reserve or free: their per_mib is 0.
 * Create and release were measured with 2 MiB handles only, so how their cost scales with a
 * handle's size is unknown: they are modelled as proportional to the handle's bytes, the worse
 * case (a 20 MiB handle costs ten 2 MiB ones). */
#include "simgpu_internal.h"

/* One call's cost in microseconds: per call, per handle covered, per MiB. */
struct vmm_cost {
    double per_call, per_handle, per_mib;
};

/* Set access and unmap: a one-handle call costs kvcached's worst figure, 32 handles [H100]'s;
   the two facts fix per_call and per_handle (cost(1) = per_call + per_handle,
   cost(32) = per_call + 32 * per_handle). */
#define SET_ACCESS_ONE_US    36.0   /* [kvcached], worst of 21-36 */
#define SET_ACCESS_32_US     1002.0 /* [H100] */
#define UNMAP_ONE_US         26.0   /* [kvcached], worst of 11-26 */
#define UNMAP_32_US          533.0  /* [H100] */
#define PER_HANDLE(one, n32) (((n32) - (one)) / 31)

static const struct vmm_cost costs[VMM_OP_COUNT] = {
    [VMM_RESERVE] = {22.0, 0, 0},   /* [H100] */
    [VMM_ADDR_FREE] = {11.0, 0, 0}, /* [H100] */
    /* [H100] 409 us for 32 x 2 MiB: 12.8 us per 2 MiB, proportional to bytes (the worse case) */
    [VMM_CREATE] = {0, 0, 409.0 / 64},
    /* [H100] 597 us for 32 x 2 MiB: 18.7 us per 2 MiB, proportional to bytes (the worse case) */
    [VMM_RELEASE] = {0, 0, 597.0 / 64},
    /* [H100] 59 us for 32 calls of one handle each: 1.84 us per call ([kvcached]: 1-1.5). A map
       covers one handle, so how that splits between per_call and per_handle does not matter. */
    [VMM_MAP] = {0, 59.0 / 32, 0},
    /* per_handle 31.16 us, per_call 4.84 us */
    [VMM_SET_ACCESS] = {SET_ACCESS_ONE_US - PER_HANDLE(SET_ACCESS_ONE_US, SET_ACCESS_32_US),
                        PER_HANDLE(SET_ACCESS_ONE_US, SET_ACCESS_32_US), 0},
    /* per_handle 16.35 us, per_call 9.65 us */
    [VMM_UNMAP] = {UNMAP_ONE_US - PER_HANDLE(UNMAP_ONE_US, UNMAP_32_US),
                   PER_HANDLE(UNMAP_ONE_US, UNMAP_32_US), 0},
};

double sim_vmm_cost_us(enum sim_vmm_op op, uint64_t handles, uint64_t bytes)
{
    if (sim.vmm_host_cost <= 0)
        return 0;
    const struct vmm_cost *c = &costs[op];
    double mib = (double)bytes / (double)(1u << 20);
    return sim.vmm_host_cost * (c->per_call + c->per_handle * (double)handles + c->per_mib * mib);
}

uint64_t sim_vmm_cost_handles(uint64_t va, uint64_t size)
{
    /* The pieces cuMemSetAccess split off one mapping keep its id and lie next to each other. */
    uint64_t n = 0, last_id = 0;
    for (size_t i = sim_map_lower(va); i < sim.nmaps && sim.maps[i].va < va + size; i++) {
        if (sim.maps[i].id != last_id)
            n++;
        last_id = sim.maps[i].id;
    }
    return n;
}
