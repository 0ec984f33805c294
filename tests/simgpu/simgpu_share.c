/* simgpu_share.c — legacy IPC handles, shareable handles, and pointer attributes.
 *
 * Facts (cuda.h, CUDA 13.0) and the worse cases modelled where cuda.h is silent:
 *  - cuIpcGetMemHandle takes "a pointer to the base of an existing device memory allocation
 *    created with ::cuMemAlloc"; VMM memory must be shared with cuMemExportToShareableHandle
 *    (ROCm's twin, hipIpcGetMemHandle, was made to reject VMM allocations for that reason:
 *    ROCm/rocm-systems#4263). Anything else is refused with CUDA_ERROR_INVALID_VALUE, one of
 *    the errors cuda.h lists; memory of a pool (cuMemAllocAsync) too, which a pool export
 *    shares instead.
 *  - cuMemExportToShareableHandle: flags "Reserved, must be zero"; HOST allocations "are not IPC
 *    capable and requestedHandleTypes must be 0" (cuMemCreate), so a handle type the allocation
 *    was not created with is refused (INVALID_VALUE). Only CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
 *    is simulated: its handle is an int, a new descriptor of the simulator's physical file.
 *  - Pointer attributes: MEMORY_TYPE is "the physical memory type of the memory that ptr
 *    addresses": a VMM range mapped onto host-located memory answers CU_MEMORYTYPE_HOST (cuda.h
 *    says no more; this is the answer that would expose a preload library passing it on), and
 *    its DEVICE_ORDINAL -1 (host memory belongs to no device: the worse case, unknown).
 *    RANGE_START_ADDR / RANGE_SIZE are "the mappable address range ptr references (e.g. from
 *    ::cuMemAddressReserve)"; MAPPING_BASE_ADDR / MAPPING_SIZE the mapping itself;
 *    BUFFER_ID is unique per allocation, MEMORY_BLOCK_ID per physical allocation.
 *    cuPointerGetAttributes "will not return an error when the ptr encountered is not a valid
 *    CUDA pointer. Instead, the attributes are assigned default NULL values". Booleans are
 *    written as unsigned int (cuda.h does not name their type; CUDA's samples read ints). */
#include "simgpu_internal.h"

#include <string.h>
#include <unistd.h>

#define IPC_MAGIC 0x3143504955474953ull /* "SIGUIPC1" */

CUresult CUDAAPI cuIpcGetMemHandle(CUipcMemHandle *out, CUdeviceptr dptr)
{
    SIM_ENTER(cuIpcGetMemHandle);
    SIM_NEED_ARGS(sim_need_ctx, !out);
    pthread_mutex_lock(&sim.lock);
    struct sim_resv *r = sim_resv_find(dptr); /* the base, as cuda.h asks */
    bool ok = r && r->kind == RESV_ALLOC;
    if (ok) {
        uint64_t words[4] = {IPC_MAGIC, (uint64_t)getpid(), r->va, r->gen};
        memset(out, 0, sizeof *out);
        memcpy(out->reserved, words, sizeof words);
    }
    pthread_mutex_unlock(&sim.lock);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemExportToShareableHandle(void *shareable, CUmemGenericAllocationHandle h,
                                              CUmemAllocationHandleType type,
                                              unsigned long long flags)
{
    SIM_ENTER(cuMemExportToShareableHandle);
    if (!shareable || flags)
        return CUDA_ERROR_INVALID_VALUE;
    if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_NOT_SUPPORTED;
    pthread_mutex_lock(&sim.lock);
    struct sim_phys *p = (struct sim_phys *)(uintptr_t)h;
    CUresult rc = CUDA_SUCCESS;
    if (!sim_phys_valid(p))
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (!(p->handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
        rc = CUDA_ERROR_INVALID_VALUE; /* not requested at cuMemCreate */
    int fd = rc == CUDA_SUCCESS ? dup(sim.phys_fd) : -1;
    pthread_mutex_unlock(&sim.lock);
    if (rc == CUDA_SUCCESS && fd < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (rc == CUDA_SUCCESS)
        memcpy(shareable, &fd, sizeof fd);
    return rc;
}

/* What a pointer query knows of an address (lock held). */
struct ptr_info {
    bool device, host;    /* a device range (mapped or not), pinned host memory */
    struct sim_resv *r;   /* device: its reservation */
    struct sim_map *m;    /* device: its mapping, or NULL (unmapped) */
    struct sim_pinned *p; /* host: the pinned range */
};

static struct ptr_info info_of(uint64_t ptr)
{
    struct ptr_info i = {0};
    i.r = sim_resv_containing(ptr);
    if (i.r && i.r->kind != RESV_FREEING) {
        i.device = true;
        i.m = sim_map_containing(ptr);
        return i;
    }
    i.p = sim_pinned_find((uintptr_t)ptr);
    i.host = i.p != NULL;
    return i;
}

static void put_uint(void *data, unsigned int v)
{
    memcpy(data, &v, sizeof v);
}

static void put_u64(void *data, uint64_t v)
{
    memcpy(data, &v, sizeof v);
}

/* Answers attribute a for ptr into data (lock held); CUDA_SUCCESS or the error. */
static CUresult attribute(void *data, CUpointer_attribute a, uint64_t ptr, const struct ptr_info *i)
{
    bool on_host = i->host || (i->m && i->m->phys->host);
    /* the device and context the memory was made on (simgpu_peer.c: several devices) */
    int dev = i->m ? i->m->phys->device : sim_current_device();
    CUcontext ctx = i->m && i->m->phys->ctx ? i->m->phys->ctx : sim_primary_ctx(dev);
    int ordinal = on_host && !i->host ? -1 : dev;
    switch (a) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        memcpy(data, &ctx, sizeof ctx);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        put_uint(data, on_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        put_u64(data, ptr);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (!on_host)
            return CUDA_ERROR_INVALID_VALUE;
        put_u64(data, ptr);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        put_uint(data, 0);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        memcpy(data, &ordinal, sizeof ordinal);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
        put_uint(data, i->device && i->r->kind == RESV_ALLOC);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPED:
        put_uint(data, i->host || i->m != NULL);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        put_u64(data, i->device ? i->r->va : i->p->lo);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        put_u64(data, i->device ? i->r->size : i->p->hi - i->p->lo);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
        if (i->device && !i->m)
            return CUDA_ERROR_INVALID_VALUE;
        if (a == CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR)
            put_u64(data, i->device ? i->m->va : i->p->lo);
        else
            put_u64(data, i->device ? i->m->size : i->p->hi - i->p->lo);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: /* a reservation's base and generation are unique */
        put_u64(data, i->device ? (i->r->va << 8 | (i->r->gen & 0xff)) : i->p->lo);
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
        if (i->device && !i->m)
            return CUDA_ERROR_INVALID_VALUE;
        put_u64(data, i->device ? i->m->phys->off / SIM_PAGE + 1 : i->p->lo);
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE; /* not simulated */
    }
}

CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute a, CUdeviceptr ptr)
{
    SIM_ENTER(cuPointerGetAttribute);
    SIM_NEED_ARGS(sim_need_ctx, !data);
    pthread_mutex_lock(&sim.lock);
    struct ptr_info i = info_of(ptr);
    rc = i.device || i.host ? attribute(data, a, ptr, &i) : CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

/* Bytes of attribute a's value, for the default NULL answer of cuPointerGetAttributes. */
static size_t width(CUpointer_attribute a)
{
    switch (a) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
        return 8;
    default:
        return sizeof(unsigned int);
    }
}

CUresult CUDAAPI cuPointerGetAttributes(unsigned int n, CUpointer_attribute *attrs, void **data,
                                        CUdeviceptr ptr)
{
    SIM_ENTER(cuPointerGetAttributes);
    SIM_NEED_ARGS(sim_need_ctx, !attrs || !data);
    pthread_mutex_lock(&sim.lock);
    struct ptr_info i = info_of(ptr);
    for (unsigned int k = 0; k < n; k++) {
        if (!data[k])
            continue;
        if (!(i.device || i.host) || attribute(data[k], attrs[k], ptr, &i) != CUDA_SUCCESS)
            memset(data[k], 0, width(attrs[k]));
    }
    pthread_mutex_unlock(&sim.lock);
    return CUDA_SUCCESS;
}
