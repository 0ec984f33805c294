/* shim_registry.c — live allocations: by start address (alloc/free), and by any address inside
 * (launch scans).
 *
 * Lookups by address run on the launch path without locks: a two-level table of
 * 64 KiB granules over the 48-bit address space, each granule holding at most
 * two ranges inline (an allocation of 64 KiB or more can only meet a granule at
 * one of its ends, or cover it), read under a per-granule sequence lock.
 * Allocations smaller than 64 KiB are registered for their alloc/free records
 * but not found by address: touches are tracked for allocations at least that
 * large. Small managed allocations live in slabs, whose whole range is placed
 * once with a map from 512-byte blocks to the member that owns them
 * (shim_registry_add_slab), so a touch of any member finds that member, at any
 * size. Updates take one mutex, which also keeps the bytes of live device allocations (every
 * kind but pinned host memory, as the program asked for them) and their peak, for the exit
 * line. */
#include "shim_core.h"

#include "base_map.h"

#include <stdlib.h>
#include <string.h>

struct shim_granule *_Atomic shim_registry_top[SHIM_REG_TOP_SIZE];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* By start address: start address -> struct shim_alloc * (malloc'd), protected by lock. */
static base_map by_addr = BASE_MAP_INIT;
static uint64_t device_bytes, device_peak; /* live device allocations' bytes, and their peak */

static inline struct shim_granule *granule_of(uint64_t a, bool create)
{
    if (a >> 48)
        return NULL;
    size_t t = (size_t)(a >> (SHIM_REG_GRANULE_SHIFT + SHIM_REG_LEAF_SHIFT));
    struct shim_granule *leaf = atomic_load_explicit(&shim_registry_top[t], memory_order_acquire);
    if (!leaf && create) {
        leaf = calloc(SHIM_REG_LEAF_SIZE, sizeof *leaf); /* leaves are never freed */
        if (leaf)
            atomic_store_explicit(&shim_registry_top[t], leaf, memory_order_release);
    }
    return leaf ? &leaf[(a >> SHIM_REG_GRANULE_SHIFT) & (SHIM_REG_LEAF_SIZE - 1)] : NULL;
}

/* Writes slot k of e (lock held): the sequence lock makes the three words one.
   Fence-free form: the data stores are releases, so a reader that sees any new
   word also sees the odd version before it; the even version is released last. */
static void write_slot(struct shim_granule *e, int k, uint64_t addr, uint64_t end, uint64_t id)
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
    for (uint64_t g = r->addr >> SHIM_REG_GRANULE_SHIFT; g <= (end - 1) >> SHIM_REG_GRANULE_SHIFT;
         g++) {
        struct shim_granule *e = granule_of(g << SHIM_REG_GRANULE_SHIFT, add);
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

static struct shim_alloc *take(struct shim_alloc *r);

static uint64_t add(uint64_t addr, uint64_t size, int kind, bool placed)
{
    struct shim_alloc *r = malloc(sizeof *r);
    if (!r || size == 0) {
        free(r);
        return 0;
    }
    uint64_t id = shim_new_id();
    if (kind == PLAN_MEM_MANAGED)
        id |= SHIM_MANAGED_ID_TAG;
    *r = (struct shim_alloc){id, addr, size, kind};
    pthread_mutex_lock(&lock);
    /* A live allocation starting here was freed behind libshim's back (its context destroyed,
       say): the driver never hands out one start address twice while it is live. */
    struct shim_alloc *stale = base_map_find_ptr(&by_addr, addr);
    if (base_map_put_ptr(&by_addr, addr, r) != 0) {
        pthread_mutex_unlock(&lock);
        free(r);
        return 0;
    }
    if (stale) {
        SHIM_LOG_ONCE(SHIM_LOG_DEBUG,
                      "registry: an allocation at %#llx replaces one libshim "
                      "never saw freed",
                      (unsigned long long)addr);
        free(take(stale));
    }
    if (kind != PLAN_MEM_HOST && (device_bytes += size) > device_peak)
        device_peak = device_bytes;
    if (placed && size >= SHIM_REG_MIN_TRACKED && addr && !place(r, true))
        SHIM_LOG_ONCE(SHIM_LOG_WARN, "out of memory for the address table: some launches will "
                                     "not show the allocations they touch");
    pthread_mutex_unlock(&lock);
    return r->id;
}

uint64_t shim_registry_add(uint64_t addr, uint64_t size, int kind)
{
    return add(addr, size, kind, true);
}

uint64_t shim_registry_add_unplaced(uint64_t addr, uint64_t size, int kind)
{
    return add(addr, size, kind, false);
}

static struct shim_slab_map *free_maps; /* protected by lock; maps are never freed */

struct shim_slab_map *shim_registry_add_slab(uint64_t addr, uint64_t size, uint64_t slab_id)
{
    size_t n = size >> SHIM_REG_SLAB_SHIFT;
    pthread_mutex_lock(&lock);
    struct shim_slab_map *m = free_maps;
    if (m && m->size == size) {
        free_maps = m->next_free;
    } else {
        m = calloc(1, sizeof *m);
        if (m && !(m->member = calloc(n, sizeof *m->member))) {
            free(m);
            m = NULL;
        }
    }
    if (m) {
        for (size_t i = 0; i < n; i++)
            atomic_store_explicit(&m->member[i], 0, memory_order_relaxed);
        m->base = addr;
        m->size = size;
        m->slab_id = slab_id;
        struct shim_alloc r = {(uint64_t)(uintptr_t)m | SHIM_REG_SLAB_TAG, addr, size,
                               PLAN_MEM_MANAGED};
        if (!place(&r, true)) {
            m->next_free = free_maps;
            free_maps = m;
            m = NULL;
        }
    }
    pthread_mutex_unlock(&lock);
    return m;
}

void shim_registry_slab_set(struct shim_slab_map *m, uint64_t addr, uint64_t size,
                            uint64_t member_id)
{
    uint64_t first = (addr - m->base) >> SHIM_REG_SLAB_SHIFT;
    uint64_t last = (addr + size - 1 - m->base) >> SHIM_REG_SLAB_SHIFT;
    for (uint64_t b = first; b <= last && b < (m->size >> SHIM_REG_SLAB_SHIFT); b++)
        atomic_store_explicit(&m->member[b], member_id, memory_order_release);
}

void shim_registry_remove_slab(struct shim_slab_map *m)
{
    struct shim_alloc r = {(uint64_t)(uintptr_t)m | SHIM_REG_SLAB_TAG, m->base, m->size,
                           PLAN_MEM_MANAGED};
    pthread_mutex_lock(&lock);
    place(&r, false);
    m->next_free = free_maps;
    free_maps = m;
    pthread_mutex_unlock(&lock);
}

/* Counts r out and takes its range out of the address table; r has left by_addr (lock held). */
static struct shim_alloc *take(struct shim_alloc *r)
{
    if (r->kind != PLAN_MEM_HOST)
        device_bytes -= r->size;
    if (r->size >= SHIM_REG_MIN_TRACKED && r->addr)
        place(r, false);
    return r;
}

bool shim_registry_remove(uint64_t addr, struct shim_alloc *out)
{
    uint64_t v = 0;
    pthread_mutex_lock(&lock);
    struct shim_alloc *r =
        base_map_erase(&by_addr, addr, &v) ? take((struct shim_alloc *)(uintptr_t)v) : NULL;
    pthread_mutex_unlock(&lock);
    if (!r)
        return false;
    *out = *r;
    free(r); /* readers never see records: the address table holds copies */
    return true;
}

uint64_t shim_registry_device_peak(void)
{
    pthread_mutex_lock(&lock);
    uint64_t peak = device_peak;
    pthread_mutex_unlock(&lock);
    return peak;
}

struct each_call {
    void (*fn)(const struct shim_alloc *, void *);
    void *ctx;
};

static int each_one(uint64_t addr, uint64_t v, void *arg)
{
    (void)addr;
    const struct each_call *c = arg;
    c->fn((const struct shim_alloc *)(uintptr_t)v, c->ctx);
    return 0;
}

void shim_registry_each(void (*fn)(const struct shim_alloc *, void *), void *ctx)
{
    struct each_call c = {fn, ctx};
    pthread_mutex_lock(&lock);
    base_map_each(&by_addr, each_one, &c);
    pthread_mutex_unlock(&lock);
}

/* The allocations of one kind inside a range, taken out 64 at a time. */
struct range_take {
    uint64_t addr, size;
    int kind;
    struct shim_alloc *gone[64];
    size_t n;
};

static int take_in_range(uint64_t addr, uint64_t v, void *arg)
{
    struct range_take *t = arg;
    struct shim_alloc *r = (struct shim_alloc *)(uintptr_t)v;
    if (r->kind != t->kind || addr < t->addr || addr >= t->addr + t->size)
        return 0;
    base_map_erase(&by_addr, addr, NULL); /* the entry being visited: the walk goes on */
    t->gone[t->n++] = take(r);
    return t->n == 64;
}

void shim_registry_remove_range(uint64_t addr, uint64_t size, int kind,
                                void (*fn)(const struct shim_alloc *))
{
    struct range_take t = {.addr = addr, .size = size, .kind = kind};
    do {
        t.n = 0;
        pthread_mutex_lock(&lock);
        base_map_each(&by_addr, take_in_range, &t);
        pthread_mutex_unlock(&lock);
        for (size_t i = 0; i < t.n; i++) {
            fn(t.gone[i]);
            free(t.gone[i]);
        }
    } while (t.n == 64);
}
