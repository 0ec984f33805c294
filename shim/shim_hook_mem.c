/* shim_hook_mem.c — allocation hooks: plain, stream-ordered, VMM mappings and pinned host memory.
 *
 * Each hook calls the real function and records only what succeeded. A free is
 * unregistered before the real call (another thread may get the same address
 * as soon as the driver releases it) and registered again if the call fails. */
#include "shim_internal.h"

uint64_t shim_record_alloc(uint64_t addr, uint64_t bytes, enum shim_alloc_kind kind,
                           uint64_t stream)
{
    uint64_t id = shim_registry_add(addr, bytes, kind);
    if (id && (shim.record & CONF_RECORD_ALLOCS))
        shim_trace_alloc(id, addr, bytes, kind, stream);
    return id;
}

/* Unregisters the allocation at addr before it is freed; *a keeps it for undo. */
static bool unregister(uint64_t addr, struct shim_alloc *a)
{
    return shim_active() && shim_registry_remove(addr, a);
}

static void freed(bool had, const struct shim_alloc *a, CUresult rc, uint64_t stream)
{
    if (!had)
        return;
    if (rc != CUDA_SUCCESS) { /* still allocated: track it again (under a new id) */
        shim_record_alloc(a->addr, a->size, (enum shim_alloc_kind)a->kind, stream);
        return;
    }
    if (shim.record & CONF_RECORD_ALLOCS)
        shim_trace_free(a->id, stream);
}

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    SHIM_NEED_REAL(cuMemAlloc_v2);
    CUresult rc = shim.real.cuMemAlloc_v2(dptr, bytesize);
    if (rc == CUDA_SUCCESS && shim_active())
        shim_record_alloc(*dptr, bytesize, SHIM_ALLOC_PLAIN, 0);
    return rc;
}

CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
    SHIM_NEED_REAL(cuMemFree_v2);
    struct shim_alloc a;
    bool had = dptr && unregister(dptr, &a);
    CUresult rc = shim.real.cuMemFree_v2(dptr);
    freed(had, &a, rc, 0);
    return rc;
}

static CUresult alloc_async(shim_fn_cuMemAllocAsync real, CUdeviceptr *dptr, size_t bytes,
                            CUstream s, bool per_thread)
{
    CUresult rc = real(dptr, bytes, s);
    if (rc == CUDA_SUCCESS && shim_active())
        shim_record_alloc(*dptr, bytes, SHIM_ALLOC_ASYNC, shim_stream_id(s, per_thread));
    return rc;
}

CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    SHIM_NEED_REAL(cuMemAllocAsync);
    return alloc_async(shim.real.cuMemAllocAsync, dptr, bytesize, hStream, false);
}

CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    SHIM_NEED_REAL(cuMemAllocAsync_ptsz);
    return alloc_async(shim.real.cuMemAllocAsync_ptsz, dptr, bytesize, hStream, true);
}

static CUresult alloc_pool(shim_fn_cuMemAllocFromPoolAsync real, CUdeviceptr *dptr, size_t bytes,
                           CUmemoryPool pool, CUstream s, bool per_thread)
{
    CUresult rc = real(dptr, bytes, pool, s);
    if (rc == CUDA_SUCCESS && shim_active())
        shim_record_alloc(*dptr, bytes, SHIM_ALLOC_ASYNC, shim_stream_id(s, per_thread));
    return rc;
}

CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                         CUstream hStream)
{
    SHIM_NEED_REAL(cuMemAllocFromPoolAsync);
    return alloc_pool(shim.real.cuMemAllocFromPoolAsync, dptr, bytesize, pool, hStream, false);
}

CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                              CUstream hStream)
{
    SHIM_NEED_REAL(cuMemAllocFromPoolAsync_ptsz);
    return alloc_pool(shim.real.cuMemAllocFromPoolAsync_ptsz, dptr, bytesize, pool, hStream, true);
}

static CUresult free_async(shim_fn_cuMemFreeAsync real, CUdeviceptr dptr, CUstream s,
                           bool per_thread)
{
    struct shim_alloc a;
    bool had = dptr && unregister(dptr, &a);
    CUresult rc = real(dptr, s);
    freed(had, &a, rc, shim_stream_id(s, per_thread));
    return rc;
}

CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
    SHIM_NEED_REAL(cuMemFreeAsync);
    return free_async(shim.real.cuMemFreeAsync, dptr, hStream, false);
}

CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
    SHIM_NEED_REAL(cuMemFreeAsync_ptsz);
    return free_async(shim.real.cuMemFreeAsync_ptsz, dptr, hStream, true);
}

CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                          CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    SHIM_NEED_REAL(cuMemMap);
    CUresult rc = shim.real.cuMemMap(ptr, size, offset, handle, flags);
    if (rc == CUDA_SUCCESS && shim_active())
        shim_record_alloc(ptr, size, SHIM_ALLOC_VMM_MAP, 0);
    return rc;
}

static void unmapped(const struct shim_alloc *a)
{
    if (shim.record & CONF_RECORD_ALLOCS)
        shim_trace_free(a->id, 0);
}

CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    SHIM_NEED_REAL(cuMemUnmap);
    CUresult rc = shim.real.cuMemUnmap(ptr, size);
    if (rc == CUDA_SUCCESS && shim_active())
        shim_registry_remove_range(ptr, size, SHIM_ALLOC_VMM_MAP, unmapped);
    return rc;
}

CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags)
{
    SHIM_NEED_REAL(cuMemHostAlloc);
    CUresult rc = shim.real.cuMemHostAlloc(pp, bytesize, flags);
    if (rc == CUDA_SUCCESS && shim_active())
        shim_record_alloc((uint64_t)(uintptr_t)*pp, bytesize, SHIM_ALLOC_HOST, 0);
    return rc;
}

CUresult CUDAAPI cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    SHIM_NEED_REAL(cuMemAllocHost_v2);
    CUresult rc = shim.real.cuMemAllocHost_v2(pp, bytesize);
    if (rc == CUDA_SUCCESS && shim_active())
        shim_record_alloc((uint64_t)(uintptr_t)*pp, bytesize, SHIM_ALLOC_HOST, 0);
    return rc;
}

CUresult CUDAAPI cuMemFreeHost(void *p)
{
    SHIM_NEED_REAL(cuMemFreeHost);
    struct shim_alloc a;
    bool had = p && unregister((uint64_t)(uintptr_t)p, &a);
    CUresult rc = shim.real.cuMemFreeHost(p);
    freed(had, &a, rc, 0);
    return rc;
}
