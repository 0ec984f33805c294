/* shim_resid_chunks.c — physical chunk pools, the budget, and making room.
 *
 * Creating physical memory per move is far too slow, so chunks are pooled:
 * every chunk the shim creates stays mapped at its own arena address (for the
 * copies) and goes back to its pool when the range it backed no longer needs
 * it. Device chunks count against the budget from creation to release; host
 * chunks against the host budget. Making room tries, in order: free pool
 * chunks, chunks freed in stream order on the same stream, creating within the
 * budget, stream-ordered frees that have completed, evictions in flight, and
 * new evictions (least recently used first). */
#include "shim_resid.h"

#include <stdlib.h>

#define ARENA_SLOTS 512 /* chunks per arena reservation */

static int more_slots(void)
{
    CUdeviceptr base = 0;
    uint64_t size = ARENA_SLOTS * resid.gran;
    if (resid.nslots + ARENA_SLOTS > resid.slot_cap) {
        size_t cap = resid.slot_cap + 4 * ARENA_SLOTS;
        CUdeviceptr *v = realloc(resid.slots, cap * sizeof *v);
        if (!v)
            return -1;
        resid.slots = v;
        resid.slot_cap = cap;
    }
    if (shim.real.cuMemAddressReserve(&base, size, resid.gran, 0, 0) != CUDA_SUCCESS)
        return -1;
    for (size_t i = ARENA_SLOTS; i-- > 0;)
        resid.slots[resid.nslots++] = base + i * resid.gran;
    return 0;
}

static CUmemAccessDesc access_desc(void)
{
    return (CUmemAccessDesc){{CU_MEM_LOCATION_TYPE_DEVICE, resid.device},
                             CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
}

int resid_map(CUdeviceptr va, struct resid_chunk **c, uint32_t n)
{
    uint32_t i = 0;
    for (; i < n; i++)
        if (shim.real.cuMemMap(va + i * resid.gran, resid.gran, 0, c[i]->handle, 0) != CUDA_SUCCESS)
            break;
    CUmemAccessDesc d = access_desc();
    if (i == n && shim.real.cuMemSetAccess(va, n * resid.gran, &d, 1) == CUDA_SUCCESS)
        return 0;
    if (i > 0 && shim.real.cuMemUnmap(va, i * resid.gran) != CUDA_SUCCESS)
        shim_log(SHIM_LOG_ERROR, "could not undo a partial mapping at 0x%llx",
                 (unsigned long long)va);
    return -1;
}

/* A new chunk (lock held); NULL on failure, nothing changed. */
static struct resid_chunk *chunk_create(bool host)
{
    struct resid_chunk *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->host = host;
    if (host && resid.unmapped) {
        void *p = NULL;
        if (shim.real.cuMemHostAlloc(&p, resid.gran, 0) != CUDA_SUCCESS) {
            free(c);
            return NULL;
        }
        c->addr = (CUdeviceptr)(uintptr_t)p;
        return c;
    }
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                .location = {CU_MEM_LOCATION_TYPE_DEVICE, resid.device}};
    if (host)
        prop.location = (CUmemLocation){resid.host_location, 0};
    if ((resid.nslots == 0 && more_slots() != 0) ||
        shim.real.cuMemCreate(&c->handle, resid.gran, &prop, 0) != CUDA_SUCCESS) {
        free(c);
        return NULL;
    }
    c->addr = resid.slots[--resid.nslots];
    if (resid_map(c->addr, &c, 1) != 0) {
        resid.slots[resid.nslots++] = c->addr;
        shim.real.cuMemRelease(c->handle);
        free(c);
        return NULL;
    }
    return c;
}

/* Gives a chunk back to the driver (lock held). */
static void chunk_destroy(struct resid_chunk *c)
{
    resid_fence_drop(c->fence);
    if (!c->handle) {
        shim.real.cuMemFreeHost((void *)(uintptr_t)c->addr);
    } else {
        if (shim.real.cuMemUnmap(c->addr, resid.gran) == CUDA_SUCCESS)
            resid.slots[resid.nslots++] = c->addr; /* the array has room: slots only come back */
        shim.real.cuMemRelease(c->handle);
    }
    if (c->host)
        resid.host_bytes -= resid.gran;
    else
        resid.dev_bytes -= resid.gran;
    free(c);
}

void resid_give_back(struct resid_chunk **c, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (!c[i])
            continue;
        struct resid_chunk **pool = c[i]->host ? &resid.free_host : &resid.free_dev;
        c[i]->next = *pool;
        *pool = c[i];
        (*(c[i]->host ? &resid.nfree_host : &resid.nfree_dev))++;
        c[i] = NULL;
    }
    pthread_cond_broadcast(&resid.changed);
}

static struct resid_chunk *pop(bool host)
{
    struct resid_chunk **pool = host ? &resid.free_host : &resid.free_dev;
    struct resid_chunk *c = *pool;
    if (c) {
        *pool = c->next;
        (*(host ? &resid.nfree_host : &resid.nfree_dev))--;
    }
    return c;
}

struct resid_fence *resid_take_fences(struct resid_chunk **c, uint32_t n)
{
    struct resid_fence *latest = NULL;
    for (uint32_t i = 0; i < n; i++) {
        if (!c[i] || !c[i]->fence)
            continue;
        if (!latest || c[i]->fence->seq > latest->seq)
            latest = c[i]->fence;
    }
    resid_fence_ref(latest);
    for (uint32_t i = 0; i < n; i++) {
        if (c[i]) {
            resid_fence_drop(c[i]->fence);
            c[i]->fence = NULL;
        }
    }
    return latest;
}

uint64_t resid_trim_device(uint64_t bytes)
{
    uint64_t done = 0;
    struct resid_chunk *c;
    while (done < bytes && (c = pop(false)) != NULL) {
        chunk_destroy(c);
        done += resid.gran;
    }
    return done;
}

/* Device chunks of stream-ordered frees on `stream`, reusable at once in that stream's order. */
static uint32_t take_ordered(struct resid_chunk **out, uint32_t want, CUstream stream)
{
    uint32_t got = 0;
    for (struct resid_pending *p = resid.pending; p && got < want; p = p->next) {
        struct resid_alloc *a = p->alloc;
        if (p->stream != stream || a->state != RESID_DEVICE)
            continue;
        for (uint32_t i = 0; i < a->n && got < want; i++) {
            if (a->backing[i]) {
                out[got++] = a->backing[i];
                a->backing[i] = NULL; /* stays mapped at a->va until the free completes */
            }
        }
    }
    return got;
}

/* One step towards room: true if something changed (retry), false if nothing can move. */
static bool make_progress(void)
{
    if (resid_reap(false))
        return true;
    if (resid_wait_oldest())
        return true;
    if (resid.pending)
        return resid_reap(true);
    struct resid_alloc *v;
    while ((v = resid_victim()) != NULL) {
        if (resid_evict(v, SHIM_REASON_BUDGET) == 0)
            return true;
        v->skip_epoch = resid.epoch;
    }
    return false;
}

int resid_take_device(struct resid_chunk **out, uint32_t n, CUstream stream, bool ordered,
                      bool *reused)
{
    uint32_t got = 0;
    bool may_create = true;
    resid.epoch++;
    for (;;) {
        struct resid_chunk *c;
        while (got < n && (c = pop(false)) != NULL)
            out[got++] = c;
        if (got < n && ordered) {
            uint32_t k = take_ordered(out + got, n - got, stream);
            got += k;
            if (k && reused)
                *reused = true;
        }
        while (got < n && may_create &&
               (resid.over_budget || resid.dev_bytes + resid.gran + resid.slack <= resid.budget)) {
            if ((c = chunk_create(false)) == NULL) {
                may_create = false; /* the device is fuller than the budget says */
                break;
            }
            resid.dev_bytes += resid.gran;
            out[got++] = c;
        }
        if (got == n)
            return 0;
        if (!make_progress())
            break;
        may_create = true;
    }
    resid_give_back(out, got);
    return -1;
}

int resid_take_host(struct resid_chunk **out, uint32_t n)
{
    uint32_t got = 0;
    struct resid_chunk *c;
    while (got < n && (c = pop(true)) != NULL)
        out[got++] = c;
    while (got < n && resid.host_bytes + resid.gran <= resid.host_budget) {
        if ((c = chunk_create(true)) == NULL)
            break;
        resid.host_bytes += resid.gran;
        out[got++] = c;
    }
    if (got == n)
        return 0;
    resid_give_back(out, got);
    return -1;
}

int resid_room_for_unmanaged(uint64_t bytes)
{
    resid.epoch++;
    while (resid.dev_bytes + bytes > resid.budget) {
        if (resid_trim_device(resid.dev_bytes + bytes - resid.budget))
            continue;
        if (!make_progress())
            return -1;
    }
    return 0;
}

/* Completes pending free p (its event is done): the range goes, its chunks come back. */
static void finish_pending(struct resid_pending **link)
{
    struct resid_pending *p = *link;
    *link = p->next;
    resid_event_put(p->event);
    resid_release(p->alloc);
    free(p);
}

bool resid_reap(bool wait)
{
    bool any = false;
    for (struct resid_pending **l = &resid.pending; *l;) {
        if (shim.real.cuEventQuery((*l)->event) == CUDA_SUCCESS) {
            finish_pending(l);
            any = true;
        } else {
            l = &(*l)->next;
        }
    }
    if (any || !wait || !resid.pending)
        return any;
    CUevent e = resid.pending->event;
    uint64_t t0 = resid_now_ns();
    pthread_mutex_unlock(&resid.lock);
    CUresult rc = shim.real.cuEventSynchronize(e);
    pthread_mutex_lock(&resid.lock);
    resid_stalled(t0, SHIM_REASON_BUDGET);
    if (rc == CUDA_SUCCESS && resid.pending && resid.pending->event == e) {
        finish_pending(&resid.pending);
        return true;
    }
    return rc == CUDA_SUCCESS;
}
