/* shim_resid_chunks.c — physical chunk pools: chunks created, pooled by size, taken, given back,
 * set aside, and released to the driver; the mapping of a range onto chunks.
 *
 * Creating physical memory per move is far too slow, so chunks are pooled:
 * every chunk the shim creates stays mapped at its own "arena" address (for
 * the copies) and goes back to its pool when the range it backed no longer
 * needs it. Device chunks count against the budget from creation to release;
 * host chunks against the host budget.
 *
 * A chunk is one physical handle, as large as the unit it was made for: on a
 * real driver a remap's host time grows with the handles it maps, not the
 * bytes (PyTorch's expandable segments note ten 2 MiB handles cost about ten
 * times one 20 MiB handle; tests/bench/RESULTS-gpu.md), so a unit of 32
 * granules moved as one handle costs one unmap, one map and one set-access
 * where it cost 32 handles' worth. The pools are kept by size (steps repeat
 * their sizes); a size the pool lacks is created, after releasing idle chunks
 * of other sizes when the budget needs their room, and pieces of other sizes
 * are used only when neither can be had. Making room when the budget is spent
 * is the budget room's (budget/shim_resid_search.c). */
#include "shim_resid_pools.h"

#include <stdlib.h>

#define ARENA_SLOTS 512 /* chunks per arena reservation */

static int more_slots(struct resid_ctx *r)
{
    CUdeviceptr base = 0;
    uint64_t size = ARENA_SLOTS * r->gran;
    if (base_array_grow((void **)&r->slots, &r->slot_cap, r->nslots + ARENA_SLOTS,
                        sizeof *r->slots))
        return -1;
    CUresult rc = r->drv->reserve(&base, size, r->gran);
    if (rc != CUDA_SUCCESS) {
        resid_driver_failed(r, rc);
        r->oom.driver_failed = true;
        return -1;
    }
    for (size_t i = ARENA_SLOTS; i-- > 0;)
        r->slots[r->nslots++] = base + i * r->gran;
    return 0;
}

int resid_map_calls(const struct resid_driver *drv, uint64_t gran, CUdevice dev, CUdeviceptr va,
                    struct resid_chunk *const *c, uint32_t n, CUresult *rc)
{
    uint64_t off = 0;
    *rc = CUDA_SUCCESS;
    for (uint32_t i = 0; i < n && c[i]; i++) {
        uint64_t len = (uint64_t)c[i]->grans * gran;
        if ((*rc = drv->map(va + off, len, c[i]->handle)) != CUDA_SUCCESS)
            break;
        off += len;
    }
    if (*rc == CUDA_SUCCESS && off && (*rc = drv->set_access(va, off, dev)) == CUDA_SUCCESS)
        return 0;
    if (*rc == CUDA_SUCCESS)
        *rc = CUDA_ERROR_INVALID_VALUE; /* nothing to map */
    if (off > 0 && drv->unmap(va, off) != CUDA_SUCCESS)
        shim_log(SHIM_LOG_ERROR, "could not undo a partial mapping at 0x%llx",
                 (unsigned long long)va);
    return -1;
}

int resid_map(struct resid_ctx *r, CUdeviceptr va, struct resid_chunk **c, uint32_t n)
{
    CUresult rc;
    if (resid_map_calls(r->drv, r->gran, r->device, va, c, n, &rc) == 0)
        return 0;
    resid_driver_failed(r, rc);
    r->oom.driver_failed = true;
    return -1;
}

/* A new chunk of grans granules (lock held); NULL on failure, nothing changed. One granule
   takes an arena slot; a larger chunk reserves a range of its own (a cheap call, made only when
   a chunk is created, as its mapping there is). */
static struct resid_chunk *chunk_create(struct resid_ctx *r, bool host, uint32_t grans)
{
    struct resid_chunk *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->host = host;
    c->grans = grans;
    uint64_t bytes = resid_chunk_bytes(r, c);
    CUresult rc;
    if (host && r->unmapped) {
        void *p = NULL;
        if ((rc = r->drv->host_alloc(&p, bytes)) != CUDA_SUCCESS) {
            resid_driver_failed(r, rc);
            r->oom.driver_failed = true;
            free(c);
            return NULL;
        }
        c->addr = (CUdeviceptr)(uintptr_t)p;
        return c;
    }
    if (grans == 1 && r->nslots == 0 && more_slots(r) != 0) {
        free(c);
        return NULL;
    }
    if (grans > 1) {
        if ((rc = r->drv->reserve(&c->addr, bytes, r->gran)) != CUDA_SUCCESS) {
            resid_driver_failed(r, rc);
            r->oom.driver_failed = true;
            free(c);
            return NULL;
        }
        c->own_range = true;
    }
    rc = r->drv->create(&c->handle, bytes, r->device, host, r->host_location);
    if (rc != CUDA_SUCCESS) {
        resid_driver_failed(r, rc);
        r->oom.driver_failed = true;
        if (c->own_range)
            r->drv->address_free(c->addr, bytes);
        free(c);
        return NULL;
    }
    if (!c->own_range)
        c->addr = r->slots[--r->nslots];
    if (resid_map(r, c->addr, &c, 1) != 0) {
        if (c->own_range)
            r->drv->address_free(c->addr, bytes);
        else
            r->slots[r->nslots++] = c->addr;
        r->drv->release(c->handle);
        free(c);
        return NULL;
    }
    r->handles_created++;
    return c;
}

/* Gives a chunk back to the driver (lock held). */
static void chunk_destroy(struct resid_ctx *r, struct resid_chunk *c)
{
    uint64_t bytes = resid_chunk_bytes(r, c);
    resid_fence_drop(r, c->fence);
    if (!c->handle) {
        r->drv->host_free((void *)(uintptr_t)c->addr);
    } else {
        if (r->drv->unmap(c->addr, bytes) == CUDA_SUCCESS) {
            if (c->own_range)
                r->drv->address_free(c->addr, bytes);
            else
                r->slots[r->nslots++] = c->addr; /* the array has room: slots only come back */
        }
        r->drv->release(c->handle);
        r->handles_released++;
    }
    if (c->host)
        r->host_bytes -= bytes;
    else
        r->dev_bytes -= bytes;
    free(c);
}

void resid_give_back(struct resid_ctx *r, struct resid_chunk **c, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (!c[i])
            continue;
        struct resid_chunk **pool = c[i]->host ? &r->free_host : &r->free_dev;
        c[i]->next = *pool;
        *pool = c[i];
        *(c[i]->host ? &r->nfree_host : &r->nfree_dev) += c[i]->grans;
        c[i] = NULL;
    }
}

void resid_set_aside(struct resid_ctx *r, struct resid_chunk **c, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (!c[i])
            continue;
        r->aside_bytes += resid_chunk_bytes(r, c[i]); /* still counted in dev_bytes or host_bytes */
        c[i]->next = r->aside;
        r->aside = c[i];
        c[i] = NULL;
    }
    SHIM_LOG_ONCE(SHIM_LOG_WARN, "residency: a copy's end could not be known: its destination "
                                 "chunks are set aside, never reused");
}

struct resid_chunk *resid_pool_pop(struct resid_ctx *r, bool host, uint32_t grans, bool smaller)
{
    struct resid_chunk **best = NULL;
    for (struct resid_chunk **l = host ? &r->free_host : &r->free_dev; *l; l = &(*l)->next) {
        uint32_t g = (*l)->grans;
        if (g == grans) {
            best = l;
            break;
        }
        if (smaller && g < grans && (!best || g > (*best)->grans))
            best = l;
    }
    if (!best)
        return NULL;
    struct resid_chunk *c = *best;
    *best = c->next;
    *(host ? &r->nfree_host : &r->nfree_dev) -= c->grans;
    return c;
}

/* Releases free chunks of the pool whose size is not `keep` granules (and that no copy may
   still read) until `grans` granules went back to the driver; how many did (lock held). The
   pools keep the sizes the step uses: a chunk of another size is worth less than the room. */
static uint64_t release_other_sizes(struct resid_ctx *r, bool host, uint32_t keep, uint64_t grans)
{
    uint64_t done = 0;
    for (struct resid_chunk **l = host ? &r->free_host : &r->free_dev; *l && done < grans;) {
        struct resid_chunk *c = *l;
        if (c->grans == keep || (c->fence && r->drv->query(c->fence->event) != CUDA_SUCCESS)) {
            l = &c->next;
            continue;
        }
        *l = c->next;
        *(host ? &r->nfree_host : &r->nfree_dev) -= c->grans;
        done += c->grans;
        chunk_destroy(r, c);
    }
    return done;
}

struct resid_fence *resid_take_fences(struct resid_ctx *r, struct resid_chunk **c, uint32_t n)
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
            resid_fence_drop(r, c[i]->fence);
            c[i]->fence = NULL;
        }
    }
    return latest;
}

uint64_t resid_trim_device(struct resid_ctx *r, uint64_t bytes)
{
    uint64_t want = bytes / r->gran + (bytes % r->gran != 0);
    if (r->nfree_dev < want) /* spare ranges are pooled chunks too */
        resid_spare_drop(r, want - r->nfree_dev > UINT32_MAX ? UINT32_MAX
                                                             : (uint32_t)(want - r->nfree_dev));
    /* A chunk an eviction's copy may still read (a cancelled one, say) stays pooled. */
    return release_other_sizes(r, false, 0, want) * r->gran;
}

/* Whether grans more device granules fit in the budget now. */
static bool device_fits(const struct resid_ctx *r, uint32_t grans)
{
    return r->over_budget || r->dev_bytes + (uint64_t)grans * r->gran + r->slack <= r->budget;
}

bool resid_pool_create_device(struct resid_ctx *r, struct resid_gather *t)
{
    uint32_t need = t->n - t->g;
    if (!device_fits(r, need) && r->nfree_dev) {
        uint64_t over = r->dev_bytes + (uint64_t)need * r->gran + r->slack - r->budget;
        release_other_sizes(r, false, need, over / r->gran + (over % r->gran != 0));
    }
    struct resid_chunk *c;
    if (!device_fits(r, need))
        return false;
    if ((c = chunk_create(r, false, need)) != NULL) {
        resid_dev_grow(r, resid_chunk_bytes(r, c));
        resid_gather_add(t, c);
        return true;
    }
    bool any = false; /* the driver refused a large one: one granule at a time */
    while (need > 1 && t->g < t->n && device_fits(r, 1) && (c = chunk_create(r, false, 1))) {
        resid_dev_grow(r, r->gran);
        resid_gather_add(t, c);
        any = true;
    }
    return any;
}

/* Whether grans more host granules fit in the host budget now. */
static bool host_fits(const struct resid_ctx *r, uint32_t grans)
{
    return r->host_bytes + (uint64_t)grans * r->gran <= r->host_budget;
}

/* A new host chunk of grans granules within the host budget (releasing pooled host chunks of
   other sizes if the host budget needs their room), or NULL (lock held). */
static struct resid_chunk *create_host(struct resid_ctx *r, uint32_t grans)
{
    if (!host_fits(r, grans) && r->nfree_host) {
        uint64_t over = r->host_bytes + (uint64_t)grans * r->gran - r->host_budget;
        release_other_sizes(r, true, grans, over / r->gran + (over % r->gran != 0));
    }
    struct resid_chunk *c = host_fits(r, grans) ? chunk_create(r, true, grans) : NULL;
    if (c)
        r->host_bytes += resid_chunk_bytes(r, c);
    return c;
}

int resid_take_host(struct resid_ctx *r, struct resid_chunk **out, uint32_t n)
{
    struct resid_gather t = {out, n, 0, 0};
    struct resid_chunk *c;
    if ((c = resid_pool_pop(r, true, n, false)) != NULL || (c = create_host(r, n)) != NULL)
        resid_gather_add(&t, c);
    while (t.g < n && (c = resid_pool_pop(r, true, n - t.g, true)) != NULL)
        resid_gather_add(&t, c);
    while (t.g < n && (c = create_host(r, 1)) != NULL)
        resid_gather_add(&t, c);
    if (t.g == n)
        return 0;
    if (!host_fits(r, 1))
        r->oom.host_full = true;
    resid_give_back(r, out, t.k);
    return -1;
}

bool resid_unmap_range(struct resid_ctx *r, CUdeviceptr va, uint64_t mapped, struct resid_chunk **c,
                       uint32_t n)
{
    if (r->drv->unmap(va, mapped) != CUDA_SUCCESS && r->drv->unmap(va, mapped) != CUDA_SUCCESS) {
        SHIM_LOG_ONCE(SHIM_LOG_WARN, "a managed range could not be unmapped: its address range is "
                                     "left reserved and its chunks are not reused");
        resid_set_aside(r, c, n);
        return false;
    }
    r->drv->address_free(va, mapped);
    resid_give_back(r, c, n);
    return true;
}
