/* shim_registry.c — live allocations: by start address (alloc/free), and by any address inside
 * (launch scans).
 *
 * Lookups by address run on the launch path without locks: a two-level table of
 * 64 KiB granules over the 48-bit address space, each granule holding at most
 * two ranges inline (an allocation of 64 KiB or more can only meet a granule at
 * one of its ends, or cover it), read under a per-granule sequence lock.
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

/* A granule holds up to two ranges inline, under a sequence lock: readers
   retry while a writer (under `lock`) changes it, and never follow a pointer,
   so nothing has to wait for readers before memory is reused. */
struct slot {
    _Atomic uint64_t addr, end, id;
};
struct granule {
    _Atomic uint32_t version; /* odd while being written */
    struct slot s[2];
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

static inline struct granule *granule_of(uint64_t a, bool create)
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

/* Writes slot k of e (lock held): the sequence lock makes the three words one.
   Fence-free form: the data stores are releases, so a reader that sees any new
   word also sees the odd version before it; the even version is released last. */
static void write_slot(struct granule *e, int k, uint64_t addr, uint64_t end, uint64_t id)
{
    uint32_t v = atomic_load_explicit(&e->version, memory_order_relaxed);
    atomic_store_explicit(&e->version, v + 1, memory_order_relaxed);
    atomic_store_explicit(&e->s[k].addr, addr, memory_order_release);
    atomic_store_explicit(&e->s[k].end, end, memory_order_release);
    atomic_store_explicit(&e->s[k].id, id, memory_order_release);
    atomic_store_explicit(&e->version, v + 2, memory_order_release);
}

/* Sets r in (add) or clears r from every granule of its range (lock held). */
static bool place(const struct shim_alloc *r, bool add)
{
    uint64_t end = r->addr + r->size;
    for (uint64_t g = r->addr >> GRANULE_SHIFT; g <= (end - 1) >> GRANULE_SHIFT; g++) {
        struct granule *e = granule_of(g << GRANULE_SHIFT, add);
        if (!e)
            return false;
        for (int k = 0; k < 2; k++) {
            uint64_t id = atomic_load_explicit(&e->s[k].id, memory_order_relaxed);
            if (add ? id == 0 : id == r->id) {
                write_slot(e, k, add ? r->addr : 0, add ? end : 0, add ? r->id : 0);
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
    if (size >= MIN_TRACKED && addr && !place(r, true))
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
        place(r, false);
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
    free(r); /* readers never see records: the address table holds copies */
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
            free(gone[i]);
        }
    } while (n == 64);
}

/* Id in slot k if it holds addr (0 otherwise). Acquire loads keep the closing
   version read after them (no fence needed; plain loads on x86). */
static inline uint64_t slot_match(const struct slot *sl, uint64_t addr)
{
    uint64_t a = atomic_load_explicit(&sl->addr, memory_order_acquire);
    uint64_t end = atomic_load_explicit(&sl->end, memory_order_acquire);
    return addr >= a && addr < end ? atomic_load_explicit(&sl->id, memory_order_acquire) : 0;
}

uint64_t shim_registry_find(uint64_t addr)
{
    struct granule *e = granule_of(addr, false);
    if (!e)
        return 0;
    for (;;) {
        uint32_t v = atomic_load_explicit(&e->version, memory_order_acquire);
        uint64_t found = slot_match(&e->s[0], addr);
        if (!found)
            found = slot_match(&e->s[1], addr);
        if (!(v & 1) && atomic_load_explicit(&e->version, memory_order_relaxed) == v)
            return found;
    }
}
