/* shim_resid_place.c — the third placement: allocations kept in host memory for good.
 *
 * An allocation whose size is one of host_resident's (a table that kernels read a few rows of per
 * step: shim-plan finds them where a profile says how much each touch reads) is made on host
 * chunks mapped at its own address, as a unit whose state is host from its birth, and stays
 * there: a touch reads it through the link (shim_resid_touch.c) instead of restoring it, no plan
 * binds it, and it holds none of the device budget. Where host memory cannot be mapped for the
 * device (no host VMM, unmapped eviction), libshim has stepped aside, or the host budget has no
 * room, the allocation is made on the device as any other, and the log says so once.
 *
 * The ids of the units kept on the host are also in a small lock-free set
 * (state/shim_resid_ids.c), so that the plan room can leave them out of a step model without the
 * residency lock. */
#include "shim_resid_front.h"

bool shim_resid_kept_on_host(uint64_t id)
{
    return resid_placed_has(id);
}

int resid_placement_of(const struct resid_ctx *r, uint64_t bytes)
{
    (void)r;
    for (uint32_t k = 0; k < shim.nhost_resident; k++)
        if (shim.host_resident[k] == bytes)
            return (int)k;
    return -1;
}

int resid_place_on_host(struct resid_ctx *r, struct resid_unit *u, int entry)
{
    if (!r->can_evict || r->unmapped) {
        SHIM_LOG_ONCE(SHIM_LOG_WARN,
                      "host_resident: this device cannot map host memory for "
                      "kernels (no host VMM%s): allocations of the listed sizes "
                      "are made on the device",
                      r->unmapped ? ", unmapped eviction" : "");
        return 1;
    }
    if (r->sticky || r->stepped_aside)
        return 1; /* libshim's machinery is failing: the device path says so */
    if (resid_take_host(r, u->backing, u->n) != 0) {
        SHIM_LOG_ONCE(SHIM_LOG_WARN,
                      "host_resident: host_budget has no room for an allocation of %llu bytes "
                      "(%llu bytes of host memory in use): it is made on the device",
                      (unsigned long long)u->size, (unsigned long long)r->host_bytes);
        return 1;
    }
    if (resid_map(r, u->va, u->backing, u->n) != 0) {
        resid_give_back(r, u->backing, u->n);
        return -1;
    }
    u->stays_on_host = true;
    u->last_use = atomic_load_explicit(&shim.launch_seq, memory_order_relaxed);
    u->birth = u->last_use;
    u->ready = resid_take_fences(r, u->backing, u->n);
    r->placed++;
    r->placed_bytes += u->size;
    if (entry >= 0 && entry < 32)
        r->placed_sizes_seen |= 1u << entry;
    SHIM_LOG_ONCE(SHIM_LOG_INFO,
                  "host_resident: an allocation of %llu bytes is kept in host "
                  "memory; kernels read it through the link (counted at exit)",
                  (unsigned long long)u->size);
    return 0;
}

void resid_placed_born(struct resid_ctx *r, struct resid_unit *u)
{
    resid_placed_note(u->id);
    struct resid_cause why = {SHIM_REASON_PLACEMENT, NULL, 0, UINT64_MAX};
    resid_fsm(r, u, SHIM_EV_CREATE_HOST, &why);
}
