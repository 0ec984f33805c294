/* shim_hook_share.c — exports, shared handles and raw ranges pin a managed allocation; pointer
 * queries on a managed range answer as for the device memory the program allocated.
 *
 * Pinning: cuIpcGetMemHandle, cuMemExportToShareableHandle and cuMemGetAddressRange hand a
 * managed allocation's memory or range to a user libshim cannot follow, so the allocation is
 * brought to the device and never moves again (shim_resid_hold.c); then the real call runs and
 * the program gets its answer. cuMemRetainAllocationHandle of a managed allocation is refused,
 * as the driver refuses it for the program's own cuMemAlloc memory (below).
 *
 * Pointer queries: a managed range is a VMM reservation mapped chunk by chunk onto device or,
 * once evicted, host-located memory, so the driver's raw answers describe libshim's chunks: one
 * chunk's mapping as the range, and host memory while evicted (cuda.h,
 * CU_POINTER_ATTRIBUTE_MEMORY_TYPE: "the physical memory type of the memory that ptr
 * addresses"). The program allocated device memory: the attributes that describe the
 * allocation are answered from libshim's record of it; the others (flags, IPC capability,
 * allowed handle types) are the driver's, which tell the truth about what the range now is. */
#include "shim_hooks.h"

#include <string.h>

/* Runs a pinning call: hold, forward, settle the hold. */
#define PIN_THEN_FORWARD(hold_call, real_call)                                                     \
    do {                                                                                           \
        struct shim_hold h_;                                                                       \
        CUresult rc_ = CUDA_SUCCESS;                                                               \
        bool managed_ = shim_active() && (hold_call);                                              \
        if (managed_ && rc_ != CUDA_SUCCESS)                                                       \
            return rc_;                                                                            \
        rc_ = (real_call);                                                                         \
        if (managed_)                                                                              \
            shim_resid_hold_done(&h_, rc_ == CUDA_SUCCESS);                                        \
        return rc_;                                                                                \
    } while (0)

CUresult CUDAAPI cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
    SHIM_NEED_REAL(cuIpcGetMemHandle);
    /* The driver exports only cuMemAlloc memory (cuda.h: "created with ::cuMemAlloc"), and a
       managed allocation is VMM memory: it may refuse. Its answer is the truth; say why once. */
    struct shim_hold h;
    CUresult rc = CUDA_SUCCESS;
    bool managed = shim_active() && shim_resid_hold(dptr, SHIM_PIN_IPC, &h, &rc);
    if (managed && rc != CUDA_SUCCESS)
        return rc;
    rc = shim.real.cuIpcGetMemHandle(pHandle, dptr);
    if (!managed)
        return rc;
    shim_resid_hold_done(&h, rc == CUDA_SUCCESS);
    if (rc != CUDA_SUCCESS)
        SHIM_LOG_ONCE(SHIM_LOG_WARN,
                      "cuIpcGetMemHandle on a managed allocation failed (%d): the driver shares "
                      "only cuMemAlloc memory through legacy IPC, and libshim backs managed "
                      "allocations with VMM memory; raise min_managed_bytes above the size of "
                      "allocations this program shares",
                      (int)rc);
    return rc;
}

CUresult CUDAAPI cuMemExportToShareableHandle(void *shareableHandle,
                                              CUmemGenericAllocationHandle handle,
                                              CUmemAllocationHandleType handleType,
                                              unsigned long long flags)
{
    SHIM_NEED_REAL(cuMemExportToShareableHandle);
    PIN_THEN_FORWARD(
        shim_resid_hold_handle(handle, SHIM_PIN_EXPORT, &h_, &rc_),
        shim.real.cuMemExportToShareableHandle(shareableHandle, handle, handleType, flags));
}

/* A managed allocation is memory the program made with cuMemAlloc or cuMemAllocAsync, which
   the driver refuses to retain: cuda.h documents the address as one "in a range previously
   mapped by ::cuMemMap", and the simulated device answers CUDA_ERROR_INVALID_VALUE for the
   program's own cuMemAlloc memory. libshim answers the same, without asking the driver: its
   answer would be the handle of one of libshim's 2 MiB chunks, which a caller such as NCCL's
   buffer registration would take for the whole buffer and map or export (a partial mapping of
   the program's memory). Nothing is handed out, so nothing needs pinning. Other addresses go
   to the driver. */
CUresult CUDAAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
    SHIM_NEED_REAL(cuMemRetainAllocationHandle);
    struct shim_managed_range r;
    if (shim_active() && shim_resid_range((CUdeviceptr)(uintptr_t)addr, &r))
        return CUDA_ERROR_INVALID_VALUE;
    return shim.real.cuMemRetainAllocationHandle(handle, addr);
}

CUresult CUDAAPI cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    SHIM_NEED_REAL(cuMemGetAddressRange_v2);
    struct shim_hold h;
    CUresult rc = CUDA_SUCCESS;
    bool managed = shim_active() && shim_resid_hold(dptr, SHIM_PIN_RANGE, &h, &rc);
    if (managed && rc != CUDA_SUCCESS)
        return rc;
    rc = shim.real.cuMemGetAddressRange_v2(pbase, psize, dptr);
    if (!managed)
        return rc;
    shim_resid_hold_done(&h, rc == CUDA_SUCCESS);
    struct shim_managed_range r;
    if (rc == CUDA_SUCCESS && shim_resid_range(dptr, &r)) { /* the allocation, not one chunk */
        if (pbase)
            *pbase = r.base;
        if (psize)
            *psize = (size_t)r.size;
    }
    return rc;
}

/* Writes managed range r's answer to attribute a for pointer p into data; false for the
   attributes left to the driver. */
static bool answer(CUpointer_attribute a, void *data, CUdeviceptr p,
                   const struct shim_managed_range *r)
{
    switch (a) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: {
        /* libshim keeps no context per allocation: with one context per device (the primary
           one, as the runtime uses), the current context is the allocation's. */
        CUcontext c = NULL;
        if (!shim.real.cuCtxGetCurrent || shim.real.cuCtxGetCurrent(&c) != CUDA_SUCCESS || !c)
            return false;
        memcpy(data, &c, sizeof c);
        return true;
    }
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: {
        unsigned int t = CU_MEMORYTYPE_DEVICE;
        memcpy(data, &t, sizeof t);
        return true;
    }
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        memcpy(data, &p, sizeof p);
        return true;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: {
        int d = (int)r->device;
        memcpy(data, &d, sizeof d);
        return true;
    }
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
        memcpy(data, &r->base, sizeof r->base);
        return true;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE: {
        size_t n = (size_t)r->size;
        memcpy(data, &n, sizeof n);
        return true;
    }
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: {
        /* stable for the allocation's life, where the driver's would change at every move */
        unsigned long long id = (unsigned long long)r->id;
        memcpy(data, &id, sizeof id);
        return true;
    }
    default:
        return false;
    }
}

CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    SHIM_NEED_REAL(cuPointerGetAttribute);
    CUresult rc = shim.real.cuPointerGetAttribute(data, attribute, ptr);
    struct shim_managed_range r;
    if (!data || !shim_active() || !shim_resid_range(ptr, &r))
        return rc;
    if (attribute == CU_POINTER_ATTRIBUTE_HOST_POINTER)
        return CUDA_ERROR_INVALID_VALUE; /* device memory has no host pointer (cuda.h) */
    if (answer(attribute, data, ptr, &r))
        return CUDA_SUCCESS; /* even where an unmapped eviction made the driver refuse */
    return rc;
}

CUresult CUDAAPI cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes,
                                        void **data, CUdeviceptr ptr)
{
    SHIM_NEED_REAL(cuPointerGetAttributes);
    CUresult rc = shim.real.cuPointerGetAttributes(numAttributes, attributes, data, ptr);
    struct shim_managed_range r;
    if (rc != CUDA_SUCCESS || !attributes || !data || !shim_active() || !shim_resid_range(ptr, &r))
        return rc;
    for (unsigned int i = 0; i < numAttributes; i++) {
        if (!data[i])
            continue;
        if (attributes[i] == CU_POINTER_ATTRIBUTE_HOST_POINTER) /* the default NULL (cuda.h) */
            memset(data[i], 0, sizeof(void *));
        else
            answer(attributes[i], data[i], ptr, &r);
    }
    return rc;
}
