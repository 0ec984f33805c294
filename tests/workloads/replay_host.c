/* replay_host.c — replay's --host instrument: one cyclic allocation made in host-located memory
 * mapped into the device's range (the driver's VMM with a HOST location), so that every page a
 * kernel touches of it is read through the link, as a table left on the host by a planner would
 * be. The simulated device counts those pages (zero_copy_pages) and charges their link time to
 * the kernel; tests compare them with what the model's touches read. */
#include "replay.h"

#include <cuda.h>
#include <stdio.h>

/* The one host-located allocation: made by replay_host_alloc, freed by replay_host_free, on the
   host thread that runs the steps. */
static struct {
    CUdeviceptr va;
    CUmemGenericAllocationHandle handle;
    size_t size;
} host;

static int drv(CUresult e, const char *what)
{
    const char *name = NULL;
    if (e == CUDA_SUCCESS)
        return 0;
    cuGetErrorName(e, &name);
    fprintf(stderr, "replay: %s failed: %s\n", what, name ? name : "unknown error");
    return -1;
}

int replay_host_alloc(uint64_t bytes, void **p)
{
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                .location = {CU_MEM_LOCATION_TYPE_HOST, 0}};
    CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    size_t g = 0;

    if (host.va) {
        fprintf(stderr, "replay: --host: one host-located allocation at a time\n");
        return -1;
    }
    if (drv(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
            "cuMemGetAllocationGranularity(HOST)"))
        return -1;
    host.size = (size_t)((bytes + g - 1) / g * g);
    if (drv(cuMemAddressReserve(&host.va, host.size, 0, 0, 0), "cuMemAddressReserve") ||
        drv(cuMemCreate(&host.handle, host.size, &prop, 0), "cuMemCreate(HOST)") ||
        drv(cuMemMap(host.va, host.size, 0, host.handle, 0), "cuMemMap") ||
        drv(cuMemSetAccess(host.va, host.size, &acc, 1), "cuMemSetAccess"))
        return -1;
    *p = (void *)(uintptr_t)host.va;
    return 0;
}

int replay_host_free(void *p)
{
    if (!host.va || (uintptr_t)p != host.va)
        return 0;
    int rc = drv(cuMemUnmap(host.va, host.size), "cuMemUnmap") ||
             drv(cuMemRelease(host.handle), "cuMemRelease") ||
             drv(cuMemAddressFree(host.va, host.size), "cuMemAddressFree");
    host.va = 0;
    return rc ? -1 : 0;
}
