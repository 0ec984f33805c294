/* simgpu_pool.c — the device's default memory pool behind cuMemAllocAsync / cuMemFreeAsync: which
 * freed block an allocation may take, when the pool gives memory back, and its attributes.
 *
 * The CUDA runtime's cudaMemPoolAttr documentation (driver_types.h) is the contract:
 * - cudaMemPoolReuseFollowEventDependencies (default enabled): an allocation may use memory
 *   "asynchronously freed in another stream as long as a stream ordering dependency of the
 *   allocating stream on the free action exists". Modelled for a direct dependency: the
 *   allocating stream waited (cuStreamWaitEvent) on a record of the freeing stream made at or
 *   after the free. Chains through a third stream are not followed (the pool then allocates
 *   afresh: more memory, never a hazard).
 * - cudaMemPoolReuseAllowOpportunistic (default enabled): "reuse of already completed frees when
 *   there is no dependency between the free and allocation". Completed means what the host sees
 *   at its virtual time (sim_host_sees_done), never the worker thread's real-time progress.
 * - cudaMemPoolReuseAllowInternalDependencies: stored, not modelled (the simulator never inserts
 *   a dependency to reuse memory: the pool allocates afresh instead).
 * - cudaMemPoolAttrReleaseThreshold (default 0): above it "the allocator will try to release
 *   memory back to the OS on the next call to stream, event or context synchronize". With 0, a
 *   block whose free has run is given back at the next such synchronisation that lets the host
 *   see the free complete. A larger threshold is stored and reported, not modelled.
 * The same stream may always take its own freed block at once: stream order makes it safe. */
#include "simgpu_internal.h"

/* The one pool's handle: its address. */
static struct {
    uint64_t magic;
} default_pool = {0x53494d504f4f4c30ull};

/* Whether s is ordered after r's free by an event wait (lock held). */
static bool follows_free(struct sim_stream *s, const struct sim_resv *r)
{
    for (size_t i = 0; i < s->nwaits; i++)
        if (s->waits[i].other == r->freed_on && s->waits[i].target >= r->free_seq)
            return true;
    return false;
}

/* Whether an allocation on s may take freed block r now (lock held). */
static bool may_take(struct sim_stream *s, struct sim_resv *r)
{
    if (r->freed_on == s)
        return true;
    if (sim.pool.follow_events && follows_free(s, r))
        return true;
    return sim.pool.opportunistic && r->kind == RESV_POOLED &&
           sim_host_sees_done(r->free_cmd, false);
}

struct sim_resv *sim_pool_reusable(struct sim_stream *s, uint64_t size)
{
    struct sim_resv *best = NULL;
    for (size_t i = 0; i < sim.nresv; i++) {
        struct sim_resv *r = &sim.resv[i];
        if ((r->kind == RESV_FREEING || r->kind == RESV_POOLED) && r->size >= size &&
            r->size <= 2 * size && (!best || r->size < best->size) && may_take(s, r))
            best = r;
    }
    return best;
}

void sim_pool_forget_free(struct sim_resv *r)
{
    if (r->free_cmd)
        sim_cmd_unref(r->free_cmd);
    r->free_cmd = NULL;
}

void sim_pool_trim(void)
{
    size_t i = 0;
    while (i < sim.nresv) {
        struct sim_resv *r = &sim.resv[i];
        if (r->kind == RESV_POOLED && r->free_cmd->done && r->free_cmd->vend <= sim_clock_known()) {
            sim_pool_forget_free(r);
            sim_release_range(r->va); /* removes r: the next entry moves to i */
            continue;
        }
        i++;
    }
}

static bool valid_pool(CUmemoryPool p)
{
    return p == (CUmemoryPool)(void *)&default_pool;
}

CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool *out, CUdevice dev)
{
    SIM_ENTER(cuDeviceGetDefaultMemPool);
    SIM_NEED_ARGS(sim_need_init, !out);
    if (dev != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *out = (CUmemoryPool)(void *)&default_pool;
    return CUDA_SUCCESS;
}

/* The int attribute a of the pool, or NULL for another attribute (lock held). */
static int *int_attribute(CUmemPool_attribute a)
{
    switch (a) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
        return &sim.pool.follow_events;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
        return &sim.pool.opportunistic;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        return &sim.pool.internal_deps;
    default:
        return NULL;
    }
}

/* Sets (set) or reads pool attribute a through value; the release threshold is the one
   attribute that is not an int flag. */
static CUresult pool_attribute(CUmemoryPool pool, CUmemPool_attribute a, void *value, bool set)
{
    if (!valid_pool(pool) || !value)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim.lock);
    int *flag = int_attribute(a);
    CUresult rc = CUDA_SUCCESS;
    if (flag && set)
        *flag = *(int *)value != 0;
    else if (flag)
        *(int *)value = *flag;
    else if (a == CU_MEMPOOL_ATTR_RELEASE_THRESHOLD && set)
        sim.pool.release_threshold = *(cuuint64_t *)value;
    else if (a == CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
        *(cuuint64_t *)value = sim.pool.release_threshold;
    else
        rc = CUDA_ERROR_INVALID_VALUE; /* read-only or not simulated */
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute a, void *value)
{
    SIM_ENTER(cuMemPoolSetAttribute);
    return pool_attribute(pool, a, value, true);
}

CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute a, void *value)
{
    SIM_ENTER(cuMemPoolGetAttribute);
    return pool_attribute(pool, a, value, false);
}
