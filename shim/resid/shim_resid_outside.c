/* shim_resid_outside.c — allocations outside every budget: on devices no residency manager
 * serves, and those residency stepped aside from (shim_resid_verdict.c).
 *
 * Every device below RESID_MAX_DEVICES gets a manager of its own (shim_resid_ctx.c). An
 * allocation made while a device beyond that is current goes to the driver untouched: never
 * managed, never counted in a budget, counted here (in the first manager's state) and logged
 * once. Their addresses, and those of allocations stepped aside, are kept so that their frees
 * are not taken out of a budget either. */
#include "shim_resid_front.h"

#include <stdlib.h>

bool shim_resid_foreign(int *dev)
{
    uint32_t d = resid_current_device(resid_driver_real());
    if (d < RESID_MAX_DEVICES || !resid_primary()) /* a device with a manager slot */
        return false;
    *dev = (int)d;
    return true;
}

/* Adds addr to r's list (lock held). */
static void remember(struct resid_ctx *r, uint64_t addr)
{
    /* Without room the address is not kept: its free then leaves the budget's unmanaged
       count alone anyway (shim_resid_unmanaged_add never goes below zero). */
    if (base_array_grow((void **)&r->foreign, &r->foreign_cap, r->nforeign + 1,
                        sizeof *r->foreign) == 0)
        r->foreign[r->nforeign++] = addr;
}

void resid_outside_remember(uint64_t addr)
{
    struct resid_ctx *r = resid_primary();
    if (!r)
        return;
    pthread_mutex_lock(&r->lock);
    remember(r, addr);
    pthread_mutex_unlock(&r->lock);
}

void shim_resid_foreign_add(uint64_t addr, uint64_t bytes, int dev)
{
    struct resid_ctx *r = resid_primary();
    if (!r)
        return;
    pthread_mutex_lock(&r->lock);
    remember(r, addr);
    r->foreign_allocs++;
    r->foreign_bytes += bytes;
    pthread_mutex_unlock(&r->lock);
    SHIM_LOG_ONCE(SHIM_LOG_WARN,
                  "allocation on device %d, which residency cannot serve (devices 0 to %d have "
                  "managers): left to the driver, outside the budget",
                  dev, RESID_MAX_DEVICES - 1);
}

/* Whether addr is remembered as foreign (or outside the budget); with forget, it is no longer. */
static bool foreign(uint64_t addr, bool forget)
{
    struct resid_ctx *r = resid_primary();
    if (!r || !atomic_load_explicit(&r->on, memory_order_acquire))
        return false;
    bool found = false;
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < r->nforeign && !found; i++) {
        found = r->foreign[i] == addr;
        if (found && forget)
            r->foreign[i] = r->foreign[--r->nforeign];
    }
    pthread_mutex_unlock(&r->lock);
    return found;
}

bool shim_resid_foreign_has(uint64_t addr)
{
    return foreign(addr, false);
}

bool shim_resid_foreign_remove(uint64_t addr)
{
    return foreign(addr, true);
}
