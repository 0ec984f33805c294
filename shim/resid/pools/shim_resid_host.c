/* shim_resid_host.c — where evicted memory lives: host-located VMM (HOST or HOST_NUMA), found
 * from the device attributes or, on a driver that lacks them, by a probe allocation as NCCL does;
 * otherwise pinned buffers, if unmapped eviction is accepted. */
#include "shim_resid_pools.h"

/* Attribute a of the device, or rc's error. */
static CUresult attribute(struct resid_ctx *r, CUdevice_attribute a, int *v)
{
    *v = 0;
    return r->drv->attribute(v, a, r->device);
}

/* The host NUMA node closest to the device (attribute 134); 0 when the driver does not say, or
   says -1 ("the system does not support NUMA", cuda.h): ncclCuMemHostAlloc, in NCCL's
   src/include/alloc.h, makes the same choice, and cuMemCreate wants node 0 without NUMA. */
static int host_numa_node(struct resid_ctx *r)
{
    int node = 0;
    return attribute(r, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, &node) == CUDA_SUCCESS && node > 0 ? node
                                                                                             : 0;
}

/* Whether one chunk can be created at loc: created and released at once. A failed release is
   reported and the probe still counts: the driver made the allocation, so it can. */
static CUresult probe(struct resid_ctx *r, CUmemLocation loc)
{
    CUmemGenericAllocationHandle h = 0;
    CUresult rc = r->drv->create(&h, r->gran, r->device, true, loc);
    if (rc != CUDA_SUCCESS)
        return rc;
    CUresult rel = r->drv->release(h);
    if (rel != CUDA_SUCCESS) {
        resid_driver_failed(r, rel);
        shim_log(SHIM_LOG_WARN, "host VMM probe: releasing the probe allocation failed (%d)",
                 (int)rel);
    }
    return CUDA_SUCCESS;
}

static const char *location_name(CUmemLocationType t)
{
    return t == CU_MEM_LOCATION_TYPE_HOST ? "HOST" : "HOST_NUMA";
}

/* From the attributes when the driver knows them (141 for HOST_NUMA, 145 for HOST; a driver
   older than these answers CUDA_ERROR_INVALID_VALUE). Returns whether they answered; *found
   and *loc say what they allow. */
static bool from_attributes(struct resid_ctx *r, bool *found, CUmemLocation *loc)
{
    int host = 0, numa = 0;
    if (attribute(r, CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, &host) !=
            CUDA_SUCCESS ||
        attribute(r, CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, &numa) !=
            CUDA_SUCCESS)
        return false;
    *found = host || numa;
    *loc = host ? (CUmemLocation){CU_MEM_LOCATION_TYPE_HOST, 0}
                : (CUmemLocation){CU_MEM_LOCATION_TYPE_HOST_NUMA, host_numa_node(r)};
    return true;
}

/* Without the attributes, as NCCL's ncclCuMemHostEnable (src/misc/cudawrap.cc) does: a real
   one-granule cuMemCreate at HOST_NUMA on the device's node (what NCCL allocates), then at
   HOST. Returns whether one worked; *last is the latest failure's error. */
static bool from_probe(struct resid_ctx *r, CUmemLocation *loc, CUresult *last)
{
    const CUmemLocation tries[] = {{CU_MEM_LOCATION_TYPE_HOST_NUMA, host_numa_node(r)},
                                   {CU_MEM_LOCATION_TYPE_HOST, 0}};
    for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
        if ((*last = probe(r, tries[i])) == CUDA_SUCCESS) {
            *loc = tries[i];
            return true;
        }
    }
    return false;
}

/* The warning of a device without host VMM: which path said so, and what libshim does. */
static void no_host_vmm(bool by_attributes, CUresult last)
{
    const char *what = shim.unmapped_eviction
                           ? "evicted allocations stay unmapped, and an access libshim does not "
                             "foresee will fault (unmapped_eviction = true)"
                           : "libshim will not evict, so the budget is only a limit (set "
                             "unmapped_eviction = true to evict to unmapped pinned memory)";
    if (by_attributes)
        shim_log(SHIM_LOG_WARN,
                 "the device cannot map host memory (no host VMM: device attributes 141 and "
                 "145 say so): %s",
                 what);
    else
        shim_log(SHIM_LOG_WARN,
                 "the device cannot map host memory (no host VMM: the driver has no host VMM "
                 "attributes, and a probe with cuMemCreate failed with %d): %s",
                 (int)last, what);
}

void resid_host_detect(struct resid_ctx *r)
{
    bool found = false;
    CUmemLocation loc = {CU_MEM_LOCATION_TYPE_HOST_NUMA, 0};
    CUresult last = CUDA_SUCCESS;
    bool by_attributes = from_attributes(r, &found, &loc);
    if (!by_attributes)
        found = from_probe(r, &loc, &last);
    r->host_location = loc;
    r->unmapped = !found;
    r->can_evict = found || shim.unmapped_eviction;
    if (found) {
        shim_log(SHIM_LOG_INFO, "host VMM: evicted memory goes to %s node %d (%s)",
                 location_name(loc.type), loc.id,
                 by_attributes ? "device attributes"
                               : "probed with cuMemCreate: the driver has no host VMM attributes");
        return;
    }
    no_host_vmm(by_attributes, last);
}
