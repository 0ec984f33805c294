/* shim_resid_alloc.c — managed allocations (made, freed now or in stream order), the budget's
 * share of unmanaged allocations, and the budget view of cuMemGetInfo.
 *
 * A managed allocation is what the program gets from cuMemAlloc /
 * cuMemAllocAsync for a request of at least min_managed_bytes: a reserved
 * range mapped onto pooled device chunks. Anything the shim cannot do is
 * handed back to the driver's own allocation, so the program sees an
 * allocation either way; out-of-memory comes only when nothing can move. */
#include "shim_resid.h"

#include <stdlib.h>

/* Whether stream is one the shim can order reuse on (not a per-thread default). */
static bool nameable(CUstream s, bool per_thread)
{
    return !(per_thread && !s) && s != CU_STREAM_PER_THREAD;
}

static struct resid_alloc *alloc_new(uint64_t bytes)
{
    struct resid_alloc *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->n = (uint32_t)((bytes + resid.gran - 1) / resid.gran);
    a->size = bytes;
    a->mapped = (uint64_t)a->n * resid.gran;
    if (!(a->backing = calloc(a->n, sizeof *a->backing))) {
        free(a);
        return NULL;
    }
    return a;
}

/* Backs a's range with device chunks (lock held); 0, 1 (out of memory), or -1 (pass to the
   driver). */
static int back(struct resid_alloc *a, CUstream stream, bool ordered)
{
    bool reused = false;
    if (resid_take_device(a->backing, a->n, stream, ordered, &reused) != 0)
        /* Within the budget, only a failed driver call explains it: try again. */
        return resid.dev_bytes + a->n * resid.gran + resid.slack <= resid.budget ? -1 : 1;
    if (resid_map(a->va, a->backing, a->n) != 0) {
        resid_give_back(a->backing, a->n);
        return -1;
    }
    if (reused) /* chunks still in use by that stream's earlier work: fence on it too */
        a->streams[a->nstreams++] = stream;
    a->state = RESID_DEVICE;
    a->last_use = atomic_load_explicit(&shim.launch_seq, memory_order_relaxed);
    a->birth = a->last_use;
    a->ready = resid_take_fences(a->backing, a->n);
    return 0;
}

/* One attempt at a managed allocation: true if handled, false if a driver call failed. */
static bool try_alloc(CUdeviceptr *dptr, size_t bytes, CUstream stream, bool per_thread, bool async,
                      CUresult *rc)
{
    struct resid_alloc *a = alloc_new(bytes);
    if (!a)
        return false;
    if (shim.real.cuMemAddressReserve(&a->va, a->mapped, resid.gran, 0, 0) != CUDA_SUCCESS) {
        resid_alloc_free(a);
        return false;
    }
    CUdeviceptr va = a->va;
    pthread_mutex_lock(&resid.lock);
    int r = back(a, stream, async && nameable(stream, per_thread));
    pthread_mutex_unlock(&resid.lock);
    uint64_t id = r == 0 ? shim_record_alloc(a->va, bytes, SHIM_ALLOC_MANAGED,
                                             shim_stream_id(stream, per_thread))
                         : 0;
    pthread_mutex_lock(&resid.lock);
    if (id && (a->id = id, resid_insert(a) == 0)) {
        pthread_mutex_unlock(&resid.lock);
        *dptr = a->va;
        *rc = CUDA_SUCCESS;
        return true;
    }
    if (r == 0) { /* not trackable: give it up, the driver allocates instead */
        a->state = RESID_DEVICE;
        resid_release(a);
    } else {
        shim.real.cuMemAddressFree(a->va, a->mapped);
        resid_alloc_free(a);
    }
    pthread_mutex_unlock(&resid.lock);
    if (id) {
        struct shim_alloc gone;
        shim_registry_remove(va, &gone);
    }
    if (r == 1) {
        SHIM_LOG_ONCE(SHIM_LOG_WARN, "out of memory: nothing more can move to the host within "
                                     "host_budget");
        *rc = CUDA_ERROR_OUT_OF_MEMORY;
        return true;
    }
    return false;
}

bool shim_resid_alloc(CUdeviceptr *dptr, size_t bytes, CUstream stream, bool per_thread, bool async,
                      CUresult *rc)
{
    if (bytes < shim.min_managed_bytes || !shim_resid_start() ||
        shim_capture_active(stream, per_thread))
        return false;
    /* A failed driver call may be transient: an unmanaged fallback could never move, and
       under a tight budget it would crowd out everything else. Try again first. */
    for (int attempt = 0; attempt < 3; attempt++)
        if (try_alloc(dptr, bytes, stream, per_thread, async, rc))
            return true;
    SHIM_LOG_ONCE(SHIM_LOG_WARN, "could not make a managed allocation: left to the driver");
    return false;
}

/* Waits until the device is idle (a failed call is tried again); false if it never was. */
static bool device_idle(void)
{
    for (int i = 0; i < 3; i++)
        if (shim.real.cuCtxSynchronize() == CUDA_SUCCESS)
            return true;
    return false;
}

/* a is freed but queued work may still use it: its range and chunks are set aside for good
   (never unmapped under running work, never reused). */
static void set_aside(struct resid_alloc *a)
{
    SHIM_LOG_ONCE(SHIM_LOG_WARN, "the device could not be synchronised before a free: the "
                                 "freed range is kept mapped and its memory is not reused");
    resid_alloc_free(a);
}

CUresult shim_resid_free(uint64_t id, CUstream stream, bool per_thread, bool async)
{
    /* As cuMemFree does: nothing queued may use it after. */
    bool idle = async || device_idle();
    pthread_mutex_lock(&resid.lock);
    struct resid_alloc *a = resid_find(id);
    if (!a) {
        pthread_mutex_unlock(&resid.lock);
        return CUDA_ERROR_INVALID_VALUE;
    }
    while (a->move)
        resid_wait_move(a, SHIM_REASON_BUDGET);
    resid_erase(a);
    struct resid_pending *p = async ? calloc(1, sizeof *p) : NULL;
    CUevent e = p ? resid_event_get() : NULL;
    if (e && shim.real.cuEventRecord(e, stream) == CUDA_SUCCESS) {
        *p = (struct resid_pending){a, e, nameable(stream, per_thread) ? stream : NULL, NULL};
        struct resid_pending **l = &resid.pending;
        while (*l)
            l = &(*l)->next;
        *l = p;
    } else {
        if (async)
            idle = shim.real.cuStreamSynchronize(stream) == CUDA_SUCCESS || device_idle();
        resid_event_put(e);
        free(p);
        if (idle)
            resid_release(a);
        else
            set_aside(a);
    }
    pthread_mutex_unlock(&resid.lock);
    return CUDA_SUCCESS;
}

/* What an unmanaged allocation of bytes holds on the device, as the driver rounds it. */
static uint64_t visible_bytes(uint64_t bytes)
{
    uint64_t unit = bytes >= resid.gran ? resid.gran : 4096;
    return (bytes + unit - 1) / unit * unit;
}

int shim_resid_unmanaged_room(uint64_t bytes)
{
    if (!shim_resid_start())
        return 0;
    pthread_mutex_lock(&resid.lock);
    int rc = resid_room_for_unmanaged(visible_bytes(bytes));
    pthread_mutex_unlock(&resid.lock);
    return rc;
}

bool shim_resid_unmanaged_retry(uint64_t bytes)
{
    if (!atomic_load_explicit(&resid.on, memory_order_acquire))
        return false;
    pthread_mutex_lock(&resid.lock);
    /* The device is fuller than the budget says: give back pooled chunks, or move one. */
    bool progress = resid_trim_device(visible_bytes(bytes)) > 0;
    struct resid_alloc *v = progress ? NULL : resid_victim();
    if (v && resid_evict(v, SHIM_REASON_BUDGET) == 0) {
        resid_wait_move(v, SHIM_REASON_BUDGET);
        progress = resid_trim_device(visible_bytes(bytes)) > 0;
    }
    pthread_mutex_unlock(&resid.lock);
    return progress;
}

void shim_resid_unmanaged_add(uint64_t bytes, bool add)
{
    if (!atomic_load_explicit(&resid.on, memory_order_acquire))
        return;
    uint64_t v = visible_bytes(bytes);
    pthread_mutex_lock(&resid.lock);
    if (add) {
        resid.dev_bytes += v;
        resid.unmanaged_bytes += v;
    } else if (resid.unmanaged_bytes >= v) {
        resid.dev_bytes -= v;
        resid.unmanaged_bytes -= v;
    }
    pthread_mutex_unlock(&resid.lock);
}

void shim_resid_mem_info(size_t *free_bytes, size_t *total)
{
    if (!free_bytes || !total || !shim_resid_start())
        return;
    pthread_mutex_lock(&resid.lock);
    uint64_t budget = resid.budget < *total ? resid.budget : *total;
    /* Held by the program: device chunks not sitting free in the pool, and unmanaged bytes. */
    uint64_t held = resid.dev_bytes - resid.nfree_dev * resid.gran;
    uint64_t left = held < budget ? budget - held : 0;
    uint64_t phys = *free_bytes + resid.nfree_dev * resid.gran;
    pthread_mutex_unlock(&resid.lock);
    *total = budget;
    *free_bytes = left < phys ? left : phys;
}
