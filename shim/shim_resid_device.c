/* shim_resid_device.c — allocations on devices the residency manager does not serve.
 *
 * The residency manager serves one device: the one current when it starts, which is at the
 * program's first allocation (or memory query), after the program chose its device with
 * cudaSetDevice, so a torchrun worker's manager serves its LOCAL_RANK device. Allocations made
 * while another device is current go to the driver untouched: never managed, never counted in
 * the budget (which is the served device's), counted here and logged once. Their addresses are
 * kept so that their frees are not taken out of the budget either. */
#include "shim_resid.h"

#include <stdlib.h>

bool shim_resid_foreign(int *dev)
{
    uint32_t d = shim_current_device();
    if (d < RESID_MAX_DEVICES || !resid_use_primary()) /* a device with a manager slot */
        return false;
    *dev = (int)d;
    return true;
}

uint32_t shim_current_device(void)
{
    CUdevice d = 0;
    if (!shim.real.cuCtxGetDevice || shim.real.cuCtxGetDevice(&d) != CUDA_SUCCESS || d < 0)
        return 0;
    return (uint32_t)d;
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
