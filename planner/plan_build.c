/* planner/plan_build.c — the step model builder's events: each call appends what it was told;
 * plan_build_model.c turns them into a model. */
#include "plan_internal.h"

#include "base_array.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PUSH(b, arr, n, cap)                                                                       \
    base_array_grow((void **)&(b)->arr, &(b)->cap, (b)->n + 1, sizeof(*(b)->arr))

plan_builder *plan_build_new(void)
{
    plan_builder *b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    b->granule = PLAN_RULES_GRANULE;
    b->page = PLAN_RULES_PAGE;
    b->link = (plan_hw){.h2d_gbps = PLAN_BUILD_GBPS,
                        .d2h_gbps = PLAN_BUILD_GBPS,
                        .duplex = PLAN_BUILD_DUPLEX,
                        .remap_us = PLAN_BUILD_REMAP_US};
    return b;
}

void plan_build_free(plan_builder *b)
{
    if (!b)
        return;
    free(b->mems);
    free(b->frees);
    free(b->launches);
    free(b->ids);
    free(b->copies);
    free(b->xfers);
    free(b->times);
    free(b->idles);
    free(b->steps);
    free(b);
}

static bool power_of_two(uint64_t v)
{
    return v && !(v & (v - 1));
}

plan_err plan_build_rounding(plan_builder *b, uint64_t granule, uint64_t page)
{
    if (!power_of_two(granule) || !power_of_two(page) || page > granule)
        return PLAN_ERR_INVALID;
    b->granule = granule;
    b->page = page;
    return PLAN_OK;
}

plan_err plan_build_alloc(plan_builder *b, uint64_t id, uint64_t bytes, plan_mem_kind kind,
                          uint64_t addr, uint64_t stream, uint64_t seq)
{
    if (PUSH(b, mems, nmems, cap_mems))
        return PLAN_ERR_NOMEM;
    b->mems[b->nmems++] = (plan_bmem){.id = id,
                                      .bytes = bytes,
                                      .addr = addr,
                                      .stream = stream,
                                      .seq = seq,
                                      .order = b->order++,
                                      .kind = (uint32_t)kind};
    return PLAN_OK;
}

void plan_build_on_host(plan_builder *b, uint64_t id)
{
    for (size_t i = b->nmems; i-- > 0;)
        if (b->mems[i].id == id) {
            b->mems[i].kind = (uint32_t)PLAN_MEM_HOST;
            b->mems[i].placed = true;
            return;
        }
}

plan_err plan_build_free_alloc(plan_builder *b, uint64_t id, uint64_t stream, uint64_t seq)
{
    if (PUSH(b, frees, nfrees, cap_frees))
        return PLAN_ERR_NOMEM;
    b->frees[b->nfrees++] =
        (plan_bfree){.id = id, .stream = stream, .seq = seq, .order = b->order++};
    return PLAN_OK;
}

plan_err plan_build_launch(plan_builder *b, uint64_t seq, uint64_t func, uint64_t stream,
                           const uint64_t *ids, size_t n)
{
    if (n > SIZE_MAX / 2 - b->nids || PUSH(b, launches, nlaunches, cap_launches) ||
        base_array_grow((void **)&b->ids, &b->cap_ids, b->nids + n, sizeof(*b->ids)))
        return PLAN_ERR_NOMEM;
    if (n)
        memcpy(b->ids + b->nids, ids, n * sizeof(*ids));
    b->launches[b->nlaunches++] =
        (plan_blaunch){.seq = seq, .func = func, .stream = stream, .id_first = b->nids, .nids = n};
    b->nids += n;
    if (seq >= b->next_seq && seq < UINT64_MAX)
        b->next_seq = seq + 1;
    return PLAN_OK;
}

static plan_err copy_touch(plan_builder *b, uint64_t seq, uint64_t id)
{
    if (!id)
        return PLAN_OK;
    if (PUSH(b, copies, ncopies, cap_copies))
        return PLAN_ERR_NOMEM;
    b->copies[b->ncopies++] = (plan_bpair){.seq = seq, .id = id};
    return PLAN_OK;
}

plan_err plan_build_copy(plan_builder *b, uint64_t seq, uint64_t dst_id, uint64_t src_id)
{
    plan_err e = copy_touch(b, seq, dst_id);
    return e ? e : copy_touch(b, seq, src_id == dst_id ? 0 : src_id);
}

plan_err plan_build_transfer(plan_builder *b, uint64_t seq, int to_device, uint64_t bytes)
{
    if (!bytes)
        return PLAN_OK;
    if (PUSH(b, xfers, nxfers, cap_xfers))
        return PLAN_ERR_NOMEM;
    b->xfers[b->nxfers++] =
        (plan_bxfer){.seq = seq, .bytes = bytes, .to_device = to_device ? 1 : 0};
    return PLAN_OK;
}

plan_err plan_build_kernel_time(plan_builder *b, uint64_t seq, double usec)
{
    if (!isfinite(usec) || usec < 0)
        return PLAN_ERR_INVALID;
    if (PUSH(b, times, ntimes, cap_times))
        return PLAN_ERR_NOMEM;
    b->times[b->ntimes++] = (plan_bpair){.seq = seq, .usec = usec};
    return PLAN_OK;
}

plan_err plan_build_kernel_idle(plan_builder *b, uint64_t seq, double usec)
{
    if (!isfinite(usec) || usec < 0 || usec > PLAN_MAX_DURATION)
        return PLAN_ERR_INVALID;
    if (PUSH(b, idles, nidles, cap_idles))
        return PLAN_ERR_NOMEM;
    b->idles[b->nidles++] = (plan_bpair){.seq = seq, .usec = usec};
    return PLAN_OK;
}

plan_err plan_build_kernel_disturbed(plan_builder *b, uint64_t seq)
{
    if (PUSH(b, idles, nidles, cap_idles))
        return PLAN_ERR_NOMEM;
    b->idles[b->nidles++] = (plan_bpair){.seq = seq, .usec = -1};
    return PLAN_OK;
}

plan_err plan_build_timing_cost(plan_builder *b, double record_us)
{
    if (!isfinite(record_us) || record_us < 0 || record_us > PLAN_MAX_DURATION)
        return PLAN_ERR_INVALID;
    b->record_us = record_us;
    return PLAN_OK;
}

plan_err plan_build_step(plan_builder *b, uint64_t step, uint64_t first_seq)
{
    if (PUSH(b, steps, nsteps, cap_steps))
        return PLAN_ERR_NOMEM;
    b->steps[b->nsteps++] =
        (plan_bstep){.step = step, .first_seq = first_seq, .mark_end = b->next_seq};
    return PLAN_OK;
}

plan_err plan_build_link(plan_builder *b, double h2d_gbps, double d2h_gbps, int duplex,
                         double remap_us)
{
    if (!(h2d_gbps > 0 && h2d_gbps <= 1e6) || !(d2h_gbps > 0 && d2h_gbps <= 1e6) ||
        (duplex != 0 && duplex != 1) || !(remap_us >= 0 && remap_us <= 1e9))
        return PLAN_ERR_INVALID;
    b->link = (plan_hw){
        .h2d_gbps = h2d_gbps, .d2h_gbps = d2h_gbps, .duplex = duplex, .remap_us = remap_us};
    b->link_given = 1;
    return PLAN_OK;
}

plan_err plan_build_duplex(plan_builder *b, int duplex)
{
    if (duplex != 0 && duplex != 1)
        return PLAN_ERR_INVALID;
    b->link.duplex = duplex;
    return PLAN_OK;
}

plan_err plan_build_link_both(plan_builder *b, double h2d_gbps, double d2h_gbps)
{
    bool off = h2d_gbps == 0 && d2h_gbps == 0;
    if (!off && !(h2d_gbps > 0 && h2d_gbps <= 1e6 && d2h_gbps > 0 && d2h_gbps <= 1e6))
        return PLAN_ERR_INVALID;
    b->link_both[0] = h2d_gbps;
    b->link_both[1] = d2h_gbps;
    return PLAN_OK;
}

plan_err plan_build_move(plan_builder *b, int to_device, uint64_t bytes, double usec)
{
    if (!isfinite(usec))
        return PLAN_ERR_INVALID;
    if (bytes == 0 || usec <= 0)
        return PLAN_OK;
    b->moved_bytes[to_device != 0] += (double)bytes;
    b->moved_us[to_device != 0] += usec;
    return PLAN_OK;
}
