/* shim_registry.c — live allocations: by start address (alloc/free), and by any address inside
 * (launch scans).
 *
 * Lookups by address run on the launch path without locks: a two-level table of
 * 64 KiB granules over the 48-bit address space, each granule holding at most
 * two records (an allocation of 64 KiB or more can only meet a granule at one
 * of its ends, or cover it). Records are immutable and freed through epochs.
 * Allocations smaller than 64 KiB are registered for their alloc/free records
 * but not found by address: touches are tracked for allocations at least that
 * large (managed allocations are 2 MiB and up). Updates take one mutex. */
#include "shim_internal.h"

#include <stdlib.h>
#include <string.h>

#define GRANULE_SHIFT 16
#define LEAF_SHIFT    14 /* granules per leaf: 1 GiB of addresses */
#define TOP_SIZE      ((size_t)1 << (48 - GRANULE_SHIFT - LEAF_SHIFT))
#define LEAF_SIZE     ((size_t)1 << LEAF_SHIFT)
#define MIN_TRACKED   ((uint64_t)1 << GRANULE_SHIFT)

struct granule {
    struct shim_alloc *_Atomic a[2];
};

static struct granule *_Atomic top[TOP_SIZE];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* By start address: open addressing, protected by lock. */
static struct shim_alloc **by_addr;
static size_t cap, used, live;
#define TOMB ((struct shim_alloc *)1)

static size_t hash(uint64_t a, size_t n)
{
    return (size_t)((a >> 8) * 0x9E3779B97F4A7C15ull >> 20) & (n - 1);
}

static int grow(void)
{
    size_t ncap = cap ? 2 * cap : 1024;
    struct shim_alloc **v = calloc(ncap, sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < cap; i++) {
        struct shim_alloc *r = by_addr[i];
        if (r && r != TOMB) {
            size_t j = hash(r->addr, ncap);
            while (v[j])
                j = (j + 1) & (ncap - 1);
            v[j] = r;
        }
    }
    free(by_addr);
    by_addr = v;
    cap = ncap;
    used = live;
    return 0;
}

static struct granule *granule_of(uint64_t a, bool create)
{
    if (a >> 48)
        return NULL;
    size_t t = (size_t)(a >> (GRANULE_SHIFT + LEAF_SHIFT));
    struct granule *leaf = atomic_load_explicit(&top[t], memory_order_acquire);
    if (!leaf && create) {
        leaf = calloc(LEAF_SIZE, sizeof *leaf); /* leaves are never freed */
        if (leaf)
            atomic_store_explicit(&top[t], leaf, memory_order_release);
    }
    return leaf ? &leaf[(a >> GRANULE_SHIFT) & (LEAF_SIZE - 1)] : NULL;
}

/* Sets (r) or clears (r NULL, matching old) r in every granule of [addr, addr+size). */
static bool place(uint64_t addr, uint64_t size, struct shim_alloc *r, struct shim_alloc *old)
{
    for (uint64_t g = addr >> GRANULE_SHIFT; g <= (addr + size - 1) >> GRANULE_SHIFT; g++) {
        struct granule *e = granule_of(g << GRANULE_SHIFT, r != NULL);
        if (!e)
            return false;
        for (int k = 0; k < 2; k++) {
            struct shim_alloc *cur = atomic_load(&e->a[k]);
            if (r ? cur == NULL : cur == old) {
                atomic_store_explicit(&e->a[k], r, memory_order_release);
                break;
            }
        }
    }
    return true;
}

uint64_t shim_registry_add(uint64_t addr, uint64_t size, int kind)
{
    struct shim_alloc *r = malloc(sizeof *r);
    if (!r || size == 0) {
        free(r);
        return 0;
    }
    *r = (struct shim_alloc){shim_new_id(), addr, size, kind};
    pthread_mutex_lock(&lock);
    if ((used + 1) * 2 > cap && grow() != 0) {
        pthread_mutex_unlock(&lock);
        free(r);
        return 0;
    }
    size_t j = hash(addr, cap);
    while (by_addr[j] && by_addr[j] != TOMB)
        j = (j + 1) & (cap - 1);
    if (!by_addr[j])
        used++;
    by_addr[j] = r;
    live++;
    if (size >= MIN_TRACKED && addr && !place(addr, size, r, NULL))
        SHIM_LOG_ONCE(SHIM_LOG_WARN, "out of memory for the address table: some launches will "
                                     "not show the allocations they touch");
    pthread_mutex_unlock(&lock);
    return r->id;
}

static struct shim_alloc *take(size_t j)
{
    struct shim_alloc *r = by_addr[j];
    by_addr[j] = TOMB;
    live--;
    if (r->size >= MIN_TRACKED && r->addr)
        place(r->addr, r->size, NULL, r);
    return r;
}

bool shim_registry_remove(uint64_t addr, struct shim_alloc *out)
{
    struct shim_alloc *r = NULL;
    pthread_mutex_lock(&lock);
    for (size_t j = cap ? hash(addr, cap) : 0; cap && by_addr[j]; j = (j + 1) & (cap - 1)) {
        if (by_addr[j] != TOMB && by_addr[j]->addr == addr) {
            r = take(j);
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    if (!r)
        return false;
    *out = *r;
    shim_epoch_retire(r);
    return true;
}

void shim_registry_remove_range(uint64_t addr, uint64_t size, int kind,
                                void (*fn)(const struct shim_alloc *))
{
    struct shim_alloc *gone[64];
    size_t n;
    do {
        n = 0;
        pthread_mutex_lock(&lock);
        for (size_t j = 0; j < cap && n < 64; j++) {
            struct shim_alloc *r = by_addr[j];
            if (r && r != TOMB && r->kind == kind && r->addr >= addr && r->addr < addr + size)
                gone[n++] = take(j);
        }
        pthread_mutex_unlock(&lock);
        for (size_t i = 0; i < n; i++) {
            fn(gone[i]);
            shim_epoch_retire(gone[i]);
        }
    } while (n == 64);
}

uint64_t shim_registry_find(uint64_t addr)
{
    struct granule *e = granule_of(addr, false);
    if (!e)
        return 0;
    for (int k = 0; k < 2; k++) {
        struct shim_alloc *r = atomic_load_explicit(&e->a[k], memory_order_acquire);
        if (r && addr >= r->addr && addr - r->addr < r->size)
            return r->id;
    }
    return 0;
}
