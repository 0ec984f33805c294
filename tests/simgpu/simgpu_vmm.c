/* simgpu_vmm.c — the virtual memory management family: reserve, create, map, set access, unmap,
 * release; with SIMGPU_VMM_HOST_COST, the host time each call costs. */
#include "simgpu_internal.h"

/* Charges the calling thread what call op costs (simgpu_vmm_cost.c), covering handles
   physical handles of bytes bytes in all (lock held). Returns the time the call ends on the
   thread's clock (simgpu_clock.c). */
static double charge(enum sim_vmm_op op, uint64_t handles, uint64_t bytes)
{
    return sim_clock_vmm(sim_vmm_cost_us(op, handles, bytes), handles);
}

static bool granular(uint64_t v)
{
    return v % SIM_GRANULE == 0;
}

CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *out, size_t size, size_t alignment,
                                     CUdeviceptr addr, unsigned long long flags)
{
    SIM_ENTER(cuMemAddressReserve);
    SIM_NEED_ARGS(sim_need_init,
                  !out || size == 0 || !granular(size) || flags || (alignment & (alignment - 1)));
    uint64_t align = alignment > SIM_GRANULE ? alignment : SIM_GRANULE;
    pthread_mutex_lock(&sim.lock);
    uint64_t va = 0;
    rc = sim_resv_add(size, align, addr, RESV_VMM, &va);
    charge(VMM_RESERVE, 0, 0);
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
    charge(VMM_ADDR_FREE, 0, 0);
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
    charge(VMM_CREATE, 1, size);
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
    uint64_t bytes = p ? p->size : 0; /* p may be freed below */
    if (p) {
        if (--p->handle_refs == 0)
            p->released = true;
        sim_phys_put(p); /* frees only when no mapping remains */
    }
    charge(VMM_RELEASE, p ? 1 : 0, bytes);
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
    double end = charge(VMM_MAP, 1, size);
    if (rc == CUDA_SUCCESS)
        sim_clock_mark_ready(ptr, size, end);
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
    uint64_t handles = sim_vmm_cost_handles(ptr, size);
    CUresult rc = sim_map_whole(ptr, size) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) {
        /* The real driver does not wait for queued work here: neither do we,
           but we say so when submitted work may still touch the range. */
        sim_check_unmap_hazard(ptr, ptr + size, "cuMemUnmap");
        while (i < sim.nmaps && sim.maps[i].va < ptr + size)
            sim_map_remove_at(i);
    }
    charge(VMM_UNMAP, handles, size);
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
    double end = charge(VMM_SET_ACCESS, sim_vmm_cost_handles(ptr, size), size);
    if (rc == CUDA_SUCCESS)
        sim_clock_mark_ready(ptr, size, end);
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
