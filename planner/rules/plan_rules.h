/* plan_rules.h — the rules room (planner/rules/): how libshim holds the device memory a program
 * asks for, the one description that the shim carries out (shim/resid/) and every model of
 * libshim's memory follows (the planner's step models, shim-plan, shim-report plan).
 *
 * It promises the kinds of memory a program holds (one enum, whose values are also the trace's
 * alloc_kind, tools/trace/TRACE-FORMAT.md, and the model format's, planner/MODEL-FORMAT.md),
 * which requests libshim manages, which of those share a slab and how a slab packs them, which
 * allocations can move on their own, and how many bytes the device holds for each. Header only,
 * libc only, no state: every room of shim/, planner/ and tools/ may include it, and it includes
 * nothing of ours. Nothing here can fail. */
#ifndef PLAN_RULES_H
#define PLAN_RULES_H

#include <stdint.h>

/* Kinds of memory a program holds. */
typedef enum plan_mem_kind {
    PLAN_MEM_PLAIN = 1,   /* cuMemAlloc */
    PLAN_MEM_ASYNC = 2,   /* cuMemAllocAsync, cuMemAllocFromPoolAsync */
    PLAN_MEM_MAPPED = 3,  /* a cuMemMap of a cuMemCreate handle: the mapped range */
    PLAN_MEM_HOST = 4,    /* pinned host memory (cuMemHostAlloc, cuMemAllocHost): not device
                             memory, left out of models */
    PLAN_MEM_MANAGED = 5, /* managed by the shim: a VMM unit of its own, or a slab member */
} plan_mem_kind;

/* The name of kind ("plain", "async", "vmm", "host", "managed"), "?" for a value that is none. */
static inline const char *plan_mem_kind_name(uint32_t kind)
{
    static const char *const names[] = {[PLAN_MEM_PLAIN] = "plain",
                                        [PLAN_MEM_ASYNC] = "async",
                                        [PLAN_MEM_MAPPED] = "vmm",
                                        [PLAN_MEM_HOST] = "host",
                                        [PLAN_MEM_MANAGED] = "managed"};
    return kind < sizeof names / sizeof names[0] && names[kind] ? names[kind] : "?";
}

/* Device granularity of physical memory (VMM granularity of current GPUs and of the simulated
   device), and the page that smaller plain allocations round to on the simulated device. */
#define PLAN_RULES_GRANULE ((uint64_t)2 << 20)
#define PLAN_RULES_PAGE    ((uint64_t)4096)
/* Block size of the shim's slabs (small managed allocations). */
#define PLAN_RULES_SLAB_BLOCK ((uint64_t)512)
/* The largest managed allocation that shares a slab: half the granule. */
#define PLAN_RULES_SLAB_MAX (PLAN_RULES_GRANULE / 2)
/* Empty slabs libshim keeps mapped for new members, at most: a search for room releases them
   first, without a copy, so a model does not count them. */
#define PLAN_RULES_SLAB_KEEP_EMPTY 8

/* How libshim packs a slab member: a member of want blocks takes the first run of want free
   blocks of the newest slab that has one, else a new slab. This is the search within one slab:
   the first block of the first run of want clear bits of used[0 .. nblocks) (a bit per 512-byte
   block, set when taken), or -1. */
static inline int64_t plan_rules_slab_find(const uint64_t *used, uint32_t nblocks, uint32_t want)
{
    uint32_t run = 0;
    for (uint32_t b = 0; b < nblocks; b++) {
        uint64_t word = used[b / 64];
        if (word == UINT64_MAX && b % 64 == 0) { /* a full word: skip it */
            run = 0;
            b += 63;
            continue;
        }
        run = (word >> (b % 64)) & 1 ? 0 : run + 1;
        if (run == want)
            return (int64_t)(b + 1 - want);
    }
    return -1;
}

/* libshim's rules for how it holds a device allocation the program asks for. A request smaller
   than min_managed goes to the driver (unmanaged: rounded as a plain allocation, never moved); a
   managed one of at most slab_max is a slab member (its 512-byte blocks; moved only with its
   slab); a larger one is a unit of its own, rounded up to the granule, the only kind a plan
   moves. */
typedef struct plan_hold_rules {
    uint64_t granule;     /* a power of two (PLAN_RULES_GRANULE) */
    uint64_t page;        /* smaller plain allocations round to it; a power of two <= granule */
    uint64_t min_managed; /* residency's min_managed_bytes (conf/conf.h; default 64KiB) */
    uint64_t slab_max;    /* residency's slab maximum (PLAN_RULES_SLAB_MAX) */
} plan_hold_rules;

/* The kind libshim gives a device allocation of bytes the program asks for with cuMemAlloc or
   cuMemAllocAsync: PLAN_MEM_MANAGED from min_managed bytes on, PLAN_MEM_PLAIN below. */
static inline plan_mem_kind plan_rules_kind(uint64_t bytes, uint64_t min_managed)
{
    return bytes >= min_managed ? PLAN_MEM_MANAGED : PLAN_MEM_PLAIN;
}

/* The one rule of which device allocations libshim's residency manager can move on their own:
   managed ones with a unit of their own, i.e. larger than the largest that shares a slab
   (slab_max). Everything else (unmanaged memory, slab members, which move only with their slab)
   stays where it is as far as a plan goes. */
static inline int plan_rules_movable(plan_mem_kind kind, uint64_t bytes, uint64_t slab_max)
{
    return kind == PLAN_MEM_MANAGED && bytes > slab_max;
}

/* v rounded up to a multiple of to (not 0); v itself where that would overflow. */
static inline uint64_t plan_rules_round(uint64_t v, uint64_t to)
{
    uint64_t r = v % to;
    return r == 0 || v > UINT64_MAX - (to - r) ? v : v + (to - r);
}

/* The bytes the device holds for an allocation of kind and bytes under rules r (the rule is
   planner/MODEL-FORMAT.md's "Bytes: what the device holds"): plain and stream-ordered round up to
   the granule from the granule on, to the page below; managed round up to the granule above
   r->slab_max, to 512-byte blocks at most it (the blocks a slab member takes in its slab; a model
   counts the member's slab instead); pinned host memory holds none; a VMM mapping or an unknown
   kind as given. r->min_managed is not read. */
static inline uint64_t plan_rules_held_bytes(plan_mem_kind kind, uint64_t bytes,
                                             const plan_hold_rules *r)
{
    switch (kind) {
    case PLAN_MEM_PLAIN:
    case PLAN_MEM_ASYNC:
        return plan_rules_round(bytes, bytes >= r->granule ? r->granule : r->page);
    case PLAN_MEM_MANAGED:
        return plan_rules_round(bytes, bytes > r->slab_max ? r->granule : PLAN_RULES_SLAB_BLOCK);
    case PLAN_MEM_HOST:
        return 0;
    default: /* a VMM mapping, or a kind the rules do not know: as recorded */
        return bytes;
    }
}

#endif
