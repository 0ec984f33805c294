/* simgpu_vmm.c — the virtual memory management family: reserve, create, map, set access, unmap,
 * release; with SIMGPU_VMM_HOST_COST, the host time each call costs. */
#include "simgpu_internal.h"

/* What each VMM call cost the host on an H100 (driver 580.159.04, CUDA 13.0), measured by
   tests/gpu/vmm_facts.cu with nothing queued (tests/bench/RESULTS-gpu.md, "VMM calls: what they
   cost the host"): 64 MiB in 32 chunks of 2 MiB. cuMemCreate x32 0.409 ms, cuMemAddressReserve
   0.022 ms, cuMemMap x32 0.059 ms, cuMemSetAccess (64 MiB) 1.002 ms, cuMemUnmap (64 MiB) 0.533
   ms, cuMemAddressFree 0.011 ms, cuMemRelease x32 0.597 ms. Only that size was measured: the
   model is a fixed cost per call, or for calls over a range a cost per 2 MiB granule (the
   measured figure over 32), so a larger range costs proportionally more; how the real cost
   splits into a fixed and a per-byte part is unknown. */
#define COST_RESERVE_US    22.0
#define COST_ADDR_FREE_US  11.0
#define COST_CREATE_US     (409.0 / 32) /* per call (one chunk each) */
#define COST_RELEASE_US    (597.0 / 32) /* per call */
#define COST_MAP_US        (59.0 / 32)  /* per granule mapped */
#define COST_SET_ACCESS_US (1002.0 / 32)
#define COST_UNMAP_US      (533.0 / 32)

/* Charges the host clock a call's cost (lock held): SIMGPU_VMM_HOST_COST times the measured
   cost, per call plus per granule of `bytes`. The host has one virtual clock, so a call on any
   thread delays every later submission: the worse case, as if every thread waited for it. */
static void charge(double per_call_us, double per_granule_us, uint64_t bytes)
{
    if (sim.vmm_host_cost <= 0)
        return;
    double us = sim.vmm_host_cost * (per_call_us + per_granule_us * (double)(bytes / SIM_GRANULE));
    sim.host_vt += us;
    sim.stats.vmm_host_us += us;
}

static bool granular(uint64_t v)
{
    return v % SIM_GRANULE == 0;
}

CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *out, size_t size, size_t alignment,
                                     CUdeviceptr addr, unsigned long long flags)
{
    SIM_ENTER(cuMemAddressReserve);
    SIM_NEED(sim_need_init);
    if (!out || size == 0 || !granular(size) || flags || (alignment & (alignment - 1)))
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t align = alignment > SIM_GRANULE ? alignment : SIM_GRANULE;
    pthread_mutex_lock(&sim.lock);
    uint64_t va = 0;
    rc = sim_resv_add(size, align, addr, RESV_VMM, &va);
    charge(COST_RESERVE_US, 0, 0);
    pthread_mutex_unlock(&sim.lock);
    if (rc == CUDA_SUCCESS)
        *out = va;
    return rc;
}

CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    SIM_ENTER(cuMemAddressFree);
    pthread_mutex_lock(&sim.lock);
    struct sim_resv *r = sim_resv_find(ptr);
    CUresult rc = CUDA_SUCCESS;
    if (!r || r->kind != RESV_VMM || r->size != size)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (sim_map_lower(ptr) < sim.nmaps && sim.maps[sim_map_lower(ptr)].va < ptr + size)
        rc = CUDA_ERROR_INVALID_VALUE; /* still mapped */
    else
        sim_resv_remove(r);
    charge(COST_ADDR_FREE_US, 0, 0);
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

/* *dev: the device a device location names; the current one for host locations. */
static CUresult location_of(const CUmemAllocationProp *prop, bool *host, int *dev)
{
    *dev = sim_current_device();
    if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    switch (prop->location.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
        *host = false;
        *dev = prop->location.id;
        return prop->location.id >= 0 && prop->location.id < sim.ndevices
                   ? CUDA_SUCCESS
                   : CUDA_ERROR_INVALID_DEVICE;
    default:
        *host = true;
        return sim_driver_gen_host_location(&prop->location);
    }
}

CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *out, size_t size,
                             const CUmemAllocationProp *prop, unsigned long long flags)
{
    SIM_ENTER(cuMemCreate);
    SIM_NEED(sim_need_init);
    bool host = false;
    int dev;
    if (!out || size == 0 || !granular(size) || flags)
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = location_of(prop, &host, &dev)) != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&sim.lock);
    struct sim_phys *p = sim_phys_create(dev, size, host, &rc);
    if (!p && rc == CUDA_ERROR_OUT_OF_MEMORY && !host) {
        sim_pool_trim(); /* before failing, the pool gives back frees the host saw complete */
        p = sim_phys_create(dev, size, host, &rc);
    }
    if (p) /* what cuMemExportToShareableHandle may export later (simgpu_share.c) */
        p->handle_types = (int)prop->requestedHandleTypes;
    charge(COST_CREATE_US, 0, 0);
    pthread_mutex_unlock(&sim.lock);
    if (p)
        *out = (CUmemGenericAllocationHandle)(uintptr_t)p;
    return rc;
}

static struct sim_phys *phys_of(CUmemGenericAllocationHandle h)
{
    struct sim_phys *p = (struct sim_phys *)(uintptr_t)h;
    return sim_phys_valid(p) ? p : NULL;
}

CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle h)
{
    SIM_ENTER(cuMemRelease);
    pthread_mutex_lock(&sim.lock);
    struct sim_phys *p = phys_of(h);
    if (p) {
        if (--p->handle_refs == 0)
            p->released = true;
        sim_phys_put(p); /* frees only when no mapping remains */
    }
    charge(COST_RELEASE_US, 0, 0);
    pthread_mutex_unlock(&sim.lock);
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                          CUmemGenericAllocationHandle h, unsigned long long flags)
{
    SIM_ENTER(cuMemMap);
    if (size == 0 || !granular(ptr) || !granular(size) || !granular(offset) || flags)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim.lock);
    struct sim_phys *p = phys_of(h);
    struct sim_resv *r = sim_resv_containing(ptr);
    CUresult rc = CUDA_SUCCESS;
    if (!p || offset + size > p->size)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else if (!r || r->kind != RESV_VMM || ptr + size > r->va + r->size)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        rc = sim_map_add(ptr, size, p, offset, CU_MEM_ACCESS_FLAGS_PROT_NONE);
    charge(0, COST_MAP_US, size);
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    SIM_ENTER(cuMemUnmap);
    if (size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim.lock);
    /* The range must consist of whole mappings, as cuMemMap made them. */
    size_t i = sim_map_lower(ptr);
    CUresult rc = sim_map_whole(ptr, size) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) {
        /* The real driver does not wait for queued work here: neither do we,
           but we say so when submitted work may still touch the range. */
        sim_check_unmap_hazard(ptr, ptr + size, "cuMemUnmap");
        while (i < sim.nmaps && sim.maps[i].va < ptr + size)
            sim_map_remove_at(i);
    }
    charge(0, COST_UNMAP_US, size);
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                                size_t count)
{
    SIM_ENTER(cuMemSetAccess);
    if (!desc || count == 0 || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    int prot = -1;
    for (size_t i = 0; i < count; i++) {
        /* One protection per mapping, whichever device the descriptor names: the
           simulator does not keep per-device access of a VMM mapping. */
        if (desc[i].location.type == CU_MEM_LOCATION_TYPE_DEVICE && desc[i].location.id >= 0 &&
            desc[i].location.id < sim.ndevices)
            prot = (int)desc[i].flags;
        else if (desc[i].location.type != CU_MEM_LOCATION_TYPE_HOST &&
                 desc[i].location.type != CU_MEM_LOCATION_TYPE_HOST_NUMA)
            return CUDA_ERROR_INVALID_DEVICE;
    }
    if (prot < 0)
        return CUDA_SUCCESS; /* host access only: the device's view is unchanged */
    pthread_mutex_lock(&sim.lock);
    CUresult rc = sim_map_set_prot(ptr, size, prot);
    charge(0, COST_SET_ACCESS_US, size);
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

CUresult CUDAAPI cuMemGetAccess(unsigned long long *flags, const CUmemLocation *loc,
                                CUdeviceptr ptr)
{
    SIM_ENTER(cuMemGetAccess);
    if (!flags || !loc)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim.lock);
    struct sim_map *m = sim_map_containing(ptr);
    if (m)
        *flags = loc->type == CU_MEM_LOCATION_TYPE_DEVICE ? (unsigned long long)m->prot : 0;
    pthread_mutex_unlock(&sim.lock);
    return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                               CUmemAllocationGranularity_flags option)
{
    SIM_ENTER(cuMemGetAllocationGranularity);
    bool host;
    int dev;
    (void)option;
    if (!granularity)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = location_of(prop, &host, &dev);
    if (rc == CUDA_SUCCESS)
        *granularity = SIM_GRANULE;
    return rc;
}

CUresult CUDAAPI cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
                                                        CUmemGenericAllocationHandle h)
{
    SIM_ENTER(cuMemGetAllocationPropertiesFromHandle);
    if (!prop)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim.lock);
    struct sim_phys *p = phys_of(h);
    if (p) {
        *prop = (CUmemAllocationProp){0};
        prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop->location.type = p->host ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
        prop->location.id = p->host ? 0 : p->device;
    }
    pthread_mutex_unlock(&sim.lock);
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *out, void *addr)
{
    SIM_ENTER(cuMemRetainAllocationHandle);
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim.lock);
    struct sim_map *m = sim_map_containing((uint64_t)(uintptr_t)addr);
    struct sim_resv *r = m ? sim_resv_containing(m->va) : NULL;
    bool ok = m && r && r->kind == RESV_VMM && !m->phys->released;
    if (ok) {
        m->phys->handle_refs++;
        *out = (CUmemGenericAllocationHandle)(uintptr_t)m->phys;
    }
    pthread_mutex_unlock(&sim.lock);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
