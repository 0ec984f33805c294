/* shim_hook_mem.c — allocation hooks: plain, stream-ordered, VMM mappings and pinned host memory.
 *
 * Allocations of at least min_managed_bytes become managed allocations (shim_resid_alloc.c);
 * the others go to the driver within the budget, and any of them to the driver outside the
 * budget when residency's own machinery cannot serve it (it steps aside, shim_resid.h). Each
 * hook records only what succeeded. A free is unregistered before the real call (another thread
 * may get the same address as soon as the driver releases it) and registered again if the call
 * fails. */
#include "shim_hooks.h"

/* Registers and records an allocation the driver made; its id (0: untracked). */
static uint64_t record_alloc(uint64_t addr, uint64_t bytes, plan_mem_kind kind, uint64_t stream)
{
    return shim_ledger_alloc(addr, bytes, kind, stream,
                             kind != PLAN_MEM_HOST && shim_resid_plan_on());
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
        record_alloc(a->addr, a->size, (plan_mem_kind)a->kind, stream);
        return;
    }
    if (shim.record & CONF_RECORD_ALLOCS)
        shim_trace_free(a->id, stream);
    if (shim_step_studying())
        shim_plan_study_free(a->id, stream);
}

/* An allocation request, whichever entry point made it. */
struct alloc_call {
    enum { CALL_PLAIN, CALL_ASYNC, CALL_POOL } which;
    CUdeviceptr *dptr;
    size_t bytes;
    CUstream stream;
    CUmemoryPool pool;
    bool per_thread;
};

static CUresult call_real(const struct alloc_call *c)
{
    switch (c->which) {
    case CALL_PLAIN:
        return shim.real.cuMemAlloc_v2(c->dptr, c->bytes);
    case CALL_ASYNC:
        return c->per_thread ? shim.real.cuMemAllocAsync_ptsz(c->dptr, c->bytes, c->stream)
                             : shim.real.cuMemAllocAsync(c->dptr, c->bytes, c->stream);
    default:
        return c->per_thread
                   ? shim.real.cuMemAllocFromPoolAsync_ptsz(c->dptr, c->bytes, c->pool, c->stream)
                   : shim.real.cuMemAllocFromPoolAsync(c->dptr, c->bytes, c->pool, c->stream);
    }
}

/* The driver's allocation outside every budget (residency stepped aside): as without libshim,
   recorded, its address remembered so that its free leaves the budget alone. */
static CUresult alloc_outside(const struct alloc_call *c)
{
    CUresult rc = call_real(c);
    if (rc != CUDA_SUCCESS || !c->dptr)
        return rc;
    shim_resid_outside_add(*c->dptr, c->bytes);
    record_alloc(*c->dptr, c->bytes, c->which == CALL_PLAIN ? PLAN_MEM_PLAIN : PLAN_MEM_ASYNC,
                 c->which == CALL_PLAIN ? 0 : shim_stream_id(c->stream, c->per_thread));
    return CUDA_SUCCESS;
}

/* Managed when it should be (not from an explicit pool, whose statistics the program reads);
   otherwise the driver's allocation, counted in the budget, after room was made for it. */
static CUresult alloc_any(const struct alloc_call *c)
{
    if (!shim_active())
        return call_real(c);
    shim_free_later_flush(false);
    CUresult rc;
    int dev;
    if (c->dptr && shim_resid_foreign(&dev)) {
        /* Another device's memory: not this budget's, never managed, still recorded. */
        rc = call_real(c);
        if (rc != CUDA_SUCCESS)
            return rc;
        shim_resid_foreign_add(*c->dptr, c->bytes, dev);
        record_alloc(*c->dptr, c->bytes, c->which == CALL_PLAIN ? PLAN_MEM_PLAIN : PLAN_MEM_ASYNC,
                     c->which == CALL_PLAIN ? 0 : shim_stream_id(c->stream, c->per_thread));
        return CUDA_SUCCESS;
    }
    enum shim_resid_verdict v = SHIM_RESID_DRIVER;
    if (c->dptr && c->which != CALL_POOL)
        v = shim_resid_alloc(c->dptr, c->bytes, c->stream, c->per_thread, c->which != CALL_PLAIN,
                             &rc);
    if (v == SHIM_RESID_DONE)
        return rc;
    bool counted = !shim_capture_active(c->stream, c->per_thread);
    if (counted && v == SHIM_RESID_DRIVER)
        v = shim_resid_unmanaged_room(c->bytes, &rc);
    if (v == SHIM_RESID_DONE)
        return rc;
    if (v == SHIM_RESID_ASIDE) /* residency stepped aside: as without libshim, outside the budget */
        return alloc_outside(c);
    rc = call_real(c);
    for (int i = 0;
         rc == CUDA_ERROR_OUT_OF_MEMORY && counted && i < 8 && shim_resid_unmanaged_retry(c->bytes);
         i++)
        rc = call_real(c);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (counted)
        shim_resid_unmanaged_add(c->bytes, true);
    record_alloc(*c->dptr, c->bytes, c->which == CALL_PLAIN ? PLAN_MEM_PLAIN : PLAN_MEM_ASYNC,
                 c->which == CALL_PLAIN ? 0 : shim_stream_id(c->stream, c->per_thread));
    return CUDA_SUCCESS;
}

static CUresult real_free(CUdeviceptr p, CUstream s, bool per_thread);

/* A free of dptr, whichever entry point made it. */
static CUresult free_any(CUdeviceptr dptr, CUstream s, bool per_thread, bool async,
                         CUresult (*real)(CUdeviceptr, CUstream, bool))
{
    struct shim_alloc a;
    bool had = dptr && unregister(dptr, &a);
    if (had && a.kind == PLAN_MEM_MANAGED) {
        CUresult rc = shim_resid_free(a.id, s, per_thread, async);
        if (rc == CUDA_SUCCESS && (shim.record & CONF_RECORD_ALLOCS))
            shim_trace_free(a.id, async ? shim_stream_id(s, per_thread) : 0);
        if (rc == CUDA_SUCCESS && shim_step_studying())
            shim_plan_study_free(a.id, async ? shim_stream_id(s, per_thread) : 0);
        return rc;
    }
    shim_free_later_flush(false);
    /* A plain free would wait for libshim's moves in flight (cuMemFree synchronises): kept for
       later, the program's own work waited for. */
    if (had && a.kind == PLAN_MEM_PLAIN && real == real_free && !shim_capture_active(NULL, false) &&
        !shim_resid_foreign_has(dptr) && shim_free_later(dptr, a.size)) {
        freed(had, &a, CUDA_SUCCESS, 0);
        return CUDA_SUCCESS;
    }
    CUresult rc = real(dptr, s, per_thread);
    if (had && rc == CUDA_SUCCESS && (a.kind == PLAN_MEM_PLAIN || a.kind == PLAN_MEM_ASYNC) &&
        !shim_resid_foreign_remove(dptr))
        shim_resid_unmanaged_add(a.size, false);
    freed(had, &a, rc, async ? shim_stream_id(s, per_thread) : 0);
    return rc;
}

static CUresult real_free(CUdeviceptr p, CUstream s, bool per_thread)
{
    (void)s, (void)per_thread;
    return shim.real.cuMemFree_v2(p);
}

static CUresult real_free_async(CUdeviceptr p, CUstream s, bool per_thread)
{
    return per_thread ? shim.real.cuMemFreeAsync_ptsz(p, s) : shim.real.cuMemFreeAsync(p, s);
}

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    SHIM_NEED_REAL(cuMemAlloc_v2);
    struct alloc_call c = {CALL_PLAIN, dptr, bytesize, NULL, NULL, false};
    return alloc_any(&c);
}

CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
    SHIM_NEED_REAL(cuMemFree_v2);
    return free_any(dptr, NULL, false, false, real_free);
}

CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    SHIM_NEED_REAL(cuMemAllocAsync);
    struct alloc_call c = {CALL_ASYNC, dptr, bytesize, hStream, NULL, false};
    return alloc_any(&c);
}

CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    SHIM_NEED_REAL(cuMemAllocAsync_ptsz);
    struct alloc_call c = {CALL_ASYNC, dptr, bytesize, hStream, NULL, true};
    return alloc_any(&c);
}

CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                         CUstream hStream)
{
    SHIM_NEED_REAL(cuMemAllocFromPoolAsync);
    struct alloc_call c = {CALL_POOL, dptr, bytesize, hStream, pool, false};
    return alloc_any(&c);
}

CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                              CUstream hStream)
{
    SHIM_NEED_REAL(cuMemAllocFromPoolAsync_ptsz);
    struct alloc_call c = {CALL_POOL, dptr, bytesize, hStream, pool, true};
    return alloc_any(&c);
}

CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
    SHIM_NEED_REAL(cuMemFreeAsync);
    return free_any(dptr, hStream, false, true, real_free_async);
}

CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
    SHIM_NEED_REAL(cuMemFreeAsync_ptsz);
    return free_any(dptr, hStream, true, true, real_free_async);
}

CUresult CUDAAPI cuMemGetInfo_v2(size_t *free, size_t *total)
{
    SHIM_NEED_REAL(cuMemGetInfo_v2);
    CUresult rc = shim.real.cuMemGetInfo_v2(free, total);
    if (rc == CUDA_SUCCESS && shim_active())
        shim_resid_mem_info(free, total);
    return rc;
}

CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                          CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    SHIM_NEED_REAL(cuMemMap);
    CUresult rc = shim.real.cuMemMap(ptr, size, offset, handle, flags);
    if (rc == CUDA_SUCCESS && shim_active())
        record_alloc(ptr, size, PLAN_MEM_MAPPED, 0);
    return rc;
}

static void unmapped(const struct shim_alloc *a)
{
    if (shim.record & CONF_RECORD_ALLOCS)
        shim_trace_free(a->id, 0);
    if (shim_step_studying())
        shim_plan_study_free(a->id, 0);
}

CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    SHIM_NEED_REAL(cuMemUnmap);
    CUresult rc = shim.real.cuMemUnmap(ptr, size);
    if (rc == CUDA_SUCCESS && shim_active())
        shim_registry_remove_range(ptr, size, PLAN_MEM_MAPPED, unmapped);
    return rc;
}

CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags)
{
    SHIM_NEED_REAL(cuMemHostAlloc);
    CUresult rc = shim.real.cuMemHostAlloc(pp, bytesize, flags);
    if (rc == CUDA_SUCCESS && shim_active())
        record_alloc((uint64_t)(uintptr_t)*pp, bytesize, PLAN_MEM_HOST, 0);
    return rc;
}

CUresult CUDAAPI cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    SHIM_NEED_REAL(cuMemAllocHost_v2);
    CUresult rc = shim.real.cuMemAllocHost_v2(pp, bytesize);
    if (rc == CUDA_SUCCESS && shim_active())
        record_alloc((uint64_t)(uintptr_t)*pp, bytesize, PLAN_MEM_HOST, 0);
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
