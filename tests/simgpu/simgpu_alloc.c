/* simgpu_alloc.c — cuMemAlloc / cuMemFree, stream-ordered allocation, memory info, pinned host
 * memory.
 *
 * A cuMemAlloc allocation is a reservation mapped to its own device-located
 * physical region: sizes of 2 MiB and more are rounded up to 2 MiB pages and
 * aligned to 2 MiB, smaller ones to 4 KiB. cuMemFree synchronises the device
 * first, as the real driver does. cuMemAllocAsync behaves like the default
 * memory pool: memory freed with cuMemFreeAsync is handed again to later
 * allocations on the same stream at once (stream order makes that safe), and
 * goes back to the device only when the free itself runs. */
#include "simgpu_internal.h"

#include <stdlib.h>
#include <sys/mman.h>

static uint64_t round_up(uint64_t v, uint64_t to)
{
    return (v + to - 1) / to * to;
}

static uint64_t rounded(size_t bytes)
{
    return round_up(bytes, bytes >= SIM_GRANULE ? SIM_GRANULE : SIM_PAGE);
}

/* Reserves, backs (on device dev) and maps a new device range; lock held. */
static CUresult alloc_range(int dev, size_t bytes, int kind, uint64_t *out)
{
    if (bytes == 0 || bytes > SIM_VA_SIZE / 2)
        return bytes ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
    uint64_t align = bytes >= SIM_GRANULE ? SIM_GRANULE : SIM_PAGE;
    uint64_t size = rounded(bytes);
    CUresult rc;
    struct sim_phys *p = sim_phys_create(dev, size, false, &rc);
    if (!p && rc == CUDA_ERROR_OUT_OF_MEMORY) {
        sim_pool_trim(); /* before failing, the pool gives back frees the host saw complete */
        p = sim_phys_create(dev, size, false, &rc);
    }
    if (!p)
        return rc;
    uint64_t va = 0;
    rc = sim_resv_add(size, align, 0, kind, &va);
    if (rc == CUDA_SUCCESS) {
        rc = sim_map_add(va, size, p, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
        if (rc != CUDA_SUCCESS)
            sim_resv_remove(sim_resv_find(va));
    }
    p->handle_refs = 0; /* the mapping owns the physical memory now */
    if (rc != CUDA_SUCCESS) {
        sim_phys_put(p);
        return rc;
    }
    *out = va;
    return CUDA_SUCCESS;
}

void sim_release_range(uint64_t va)
{
    struct sim_resv *r = sim_resv_find(va);
    if (!r || r->kind == RESV_VMM)
        return;
    uint64_t end = r->va + r->size;
    size_t i = sim_map_lower(va);
    while (i < sim.nmaps && sim.maps[i].va < end)
        sim_map_remove_at(i);
    sim_resv_remove(sim_resv_find(va));
}

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *out, size_t bytes)
{
    SIM_ENTER(cuMemAlloc_v2);
    SIM_NEED_ARGS(sim_need_ctx, !out);
    pthread_mutex_lock(&sim.lock);
    uint64_t va = 0;
    rc = sim_sticky();
    if (rc == CUDA_SUCCESS)
        rc = alloc_range(sim_current_device(), bytes, RESV_ALLOC, &va);
    pthread_mutex_unlock(&sim.lock);
    if (rc == CUDA_SUCCESS)
        *out = va;
    return rc;
}

CUresult CUDAAPI cuMemFree_v2(CUdeviceptr ptr)
{
    SIM_ENTER(cuMemFree_v2);
    CUresult rc = sim_need_ctx();
    if (rc != CUDA_SUCCESS || ptr == 0)
        return rc;
    pthread_mutex_lock(&sim.lock);
    sim_host_wait_all();
    struct sim_resv *r = sim_resv_find(ptr);
    if (!r || (r->kind != RESV_ALLOC && r->kind != RESV_ASYNC))
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        sim_release_range(ptr);
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

void sim_release_async(uint64_t va, uint64_t gen)
{
    struct sim_resv *r = sim_resv_find(va);
    if (r && r->kind == RESV_FREEING && r->gen == gen)
        r->kind = RESV_POOLED; /* the pool keeps it until a synchronisation (simgpu_pool.c) */
}

static CUresult alloc_async(CUdeviceptr *out, size_t bytes, struct sim_stream *s)
{
    struct sim_resv *r = bytes ? sim_pool_reusable(s, rounded(bytes)) : NULL;
    if (r) {
        sim_pool_forget_free(r);
        r->kind = RESV_ASYNC;
        r->gen++; /* the pending free no longer applies */
        *out = r->va;
        return CUDA_SUCCESS;
    }
    uint64_t va = 0;
    CUresult rc = alloc_range(s->device, bytes, RESV_ASYNC, &va);
    if (rc == CUDA_ERROR_OUT_OF_MEMORY) {
        /* Memory freed in stream order may be pending: let it drain, retry. */
        sim_host_wait_all();
        rc = alloc_range(s->device, bytes, RESV_ASYNC, &va);
    }
    if (rc == CUDA_SUCCESS)
        *out = va;
    return rc;
}

static CUresult free_async(CUdeviceptr ptr, struct sim_stream *s)
{
    struct sim_resv *r = sim_resv_find(ptr);
    if (!r || (r->kind != RESV_ALLOC && r->kind != RESV_ASYNC))
        return CUDA_ERROR_INVALID_VALUE;
    if (s->capture)
        return CUDA_SUCCESS; /* graph-owned memory stays allocated */
    struct sim_cmd *c = sim_cmd_new(CMD_FREE, ENG_NONE);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    r->kind = RESV_FREEING; /* a second free is rejected */
    r->freed_on = s;
    c->u.f.ptr = ptr;
    c->u.f.gen = ++r->gen;
    sim_cmd_ref(c);
    CUresult rc = sim_submit(s, c);
    if (rc != CUDA_SUCCESS) {
        sim_cmd_unref(c);
        return rc;
    }
    r->free_cmd = c;
    r->free_seq = c->seq;
    return CUDA_SUCCESS;
}

CUresult sim_api_alloc_async(CUdeviceptr *out, size_t bytes, CUstream h, bool per_thread)
{
    SIM_NEED_ARGS(sim_need_ctx, !out);
    pthread_mutex_lock(&sim.lock);
    struct sim_stream *s = sim_stream_for_work(h, per_thread, &rc);
    if (rc == CUDA_SUCCESS)
        rc = alloc_async(out, bytes, s);
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

CUresult sim_api_free_async(CUdeviceptr ptr, CUstream h, bool per_thread)
{
    SIM_NEED(sim_need_ctx);
    pthread_mutex_lock(&sim.lock);
    struct sim_stream *s = sim_stream_get(h, per_thread, &rc);
    if (rc == CUDA_SUCCESS)
        rc = free_async(ptr, s);
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

CUresult CUDAAPI cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
    SIM_ENTER(cuMemGetInfo_v2);
    SIM_NEED_ARGS(sim_need_ctx, !free_bytes || !total);
    pthread_mutex_lock(&sim.lock);
    /* The current context's device. */
    const struct sim_device *d = &sim.dev[sim_current_device()];
    *total = d->capacity;
    *free_bytes = d->capacity - d->bytes;
    pthread_mutex_unlock(&sim.lock);
    return CUDA_SUCCESS;
}

/* A cuMemAlloc range answers as a whole; inside a VMM reservation, the mapping that holds ptr
   (cuda.h, CU_POINTER_ATTRIBUTE_RANGE_SIZE: "To retrieve the size of the mapped region, see
   ::cuMemGetAddressRange"), so a range mapped piece by piece answers one piece. */
CUresult CUDAAPI cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr ptr)
{
    SIM_ENTER(cuMemGetAddressRange_v2);
    pthread_mutex_lock(&sim.lock);
    struct sim_resv *r = sim_resv_containing(ptr);
    struct sim_map *m = r && r->kind == RESV_VMM ? sim_map_containing(ptr) : NULL;
    uint64_t va = m ? m->va : r ? r->va : 0, n = m ? m->size : r ? r->size : 0;
    bool found = r && (r->kind != RESV_VMM || m);
    if (found && base)
        *base = va;
    if (found && size)
        *size = n;
    pthread_mutex_unlock(&sim.lock);
    return found ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

/* ---- pinned host memory ---- */

static CUresult host_alloc(void **out, size_t bytes)
{
    SIM_NEED_ARGS(sim_need_ctx, !out || bytes == 0);
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&sim.lock);
    int bad = sim_pinned_add((uintptr_t)p, (uintptr_t)p + bytes, false);
    pthread_mutex_unlock(&sim.lock);
    if (bad) {
        munmap(p, bytes);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *out = p;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAllocHost_v2(void **out, size_t bytes)
{
    SIM_ENTER(cuMemAllocHost_v2);
    return host_alloc(out, bytes);
}

CUresult CUDAAPI cuMemHostAlloc(void **out, size_t bytes, unsigned int flags)
{
    SIM_ENTER(cuMemHostAlloc);
    (void)flags;
    return host_alloc(out, bytes);
}

CUresult CUDAAPI cuMemFreeHost(void *p)
{
    SIM_ENTER(cuMemFreeHost);
    pthread_mutex_lock(&sim.lock);
    sim_host_wait_all(); /* like the real driver: queued copies may still use the buffer */
    struct sim_pinned *r = sim_pinned_find((uintptr_t)p);
    CUresult rc =
        r && r->lo == (uintptr_t)p && !r->registered ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) {
        munmap(p, r->hi - r->lo);
        sim_pinned_remove(r);
    }
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

CUresult CUDAAPI cuMemHostRegister_v2(void *p, size_t bytes, unsigned int flags)
{
    SIM_ENTER(cuMemHostRegister_v2);
    (void)flags;
    if (!p || bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim.lock);
    int bad = sim_pinned_add((uintptr_t)p, (uintptr_t)p + bytes, true);
    pthread_mutex_unlock(&sim.lock);
    return bad ? CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED : CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostUnregister(void *p)
{
    SIM_ENTER(cuMemHostUnregister);
    pthread_mutex_lock(&sim.lock);
    struct sim_pinned *r = sim_pinned_find((uintptr_t)p);
    CUresult rc = r && r->lo == (uintptr_t)p && r->registered
                      ? CUDA_SUCCESS
                      : CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    if (rc == CUDA_SUCCESS)
        sim_pinned_remove(r);
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

CUresult CUDAAPI cuMemHostGetDevicePointer_v2(CUdeviceptr *out, void *p, unsigned int flags)
{
    SIM_ENTER(cuMemHostGetDevicePointer_v2);
    if (!out || flags)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim.lock);
    bool pinned = sim_pinned_find((uintptr_t)p) != NULL;
    pthread_mutex_unlock(&sim.lock);
    if (!pinned)
        return CUDA_ERROR_INVALID_VALUE;
    *out = (CUdeviceptr)(uintptr_t)p; /* unified addressing */
    return CUDA_SUCCESS;
}
