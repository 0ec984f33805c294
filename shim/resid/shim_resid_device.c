/* shim_resid_device.c — allocations on devices no residency manager serves, and the current
 * device.
 *
 * Every device below RESID_MAX_DEVICES gets a manager of its own (shim_resid_ctx.c). An
 * allocation made while a device beyond that is current goes to the driver untouched: never
 * managed, never counted in a budget, counted here (in the first manager's state) and logged
 * once. Their addresses are kept so that their frees are not taken out of a budget either. */
#include "shim_resid_internal.h"

#include <stdlib.h>

bool shim_resid_foreign(int *dev)
{
    uint32_t d = shim_current_device();
    if (d < RESID_MAX_DEVICES || !resid_use_primary()) /* a device with a manager slot */
        return false;
    *dev = (int)d;
    return true;
}

void shim_resid_foreign_add(uint64_t addr, uint64_t bytes, int dev)
{
    if (!resid_use_primary())
        return;
    pthread_mutex_lock(&resid.lock);
    if (resid.nforeign == resid.foreign_cap) {
        size_t cap = resid.foreign_cap ? 2 * resid.foreign_cap : 64;
        uint64_t *v = realloc(resid.foreign, cap * sizeof *v);
        if (v) {
            resid.foreign = v;
            resid.foreign_cap = cap;
        }
    }
    /* Without room the address is not kept: its free then leaves the budget's unmanaged
       count alone anyway (shim_resid_unmanaged_add never goes below zero). */
    if (resid.nforeign < resid.foreign_cap)
        resid.foreign[resid.nforeign++] = addr;
    resid.foreign_allocs++;
    resid.foreign_bytes += bytes;
    pthread_mutex_unlock(&resid.lock);
    SHIM_LOG_ONCE(SHIM_LOG_WARN,
                  "allocation on device %d, which residency cannot serve (devices 0 to %d have "
                  "managers): left to the driver, outside the budget",
                  dev, RESID_MAX_DEVICES - 1);
}

bool shim_resid_foreign_remove(uint64_t addr)
{
    if (!resid_use_primary() || !atomic_load_explicit(&resid.on, memory_order_acquire))
        return false;
    bool found = false;
    pthread_mutex_lock(&resid.lock);
    for (size_t i = 0; i < resid.nforeign && !found; i++) {
        if (resid.foreign[i] == addr) {
            resid.foreign[i] = resid.foreign[--resid.nforeign];
            found = true;
        }
    }
    pthread_mutex_unlock(&resid.lock);
    return found;
}
