/* planner/plan_build_mem.c — what the device holds for each allocation handed to the builder, and
 * from which launch to which: allocations paired with their frees in the order they came.
 *
 * The bytes rule follows what the memory costs on the device, not what the program asked for:
 *   plain and stream-ordered  rounded up to the granularity (2 MiB) from 2 MiB on, to the page
 *                             (4 KiB) below: the simulated device's cuMemAlloc
 *                             (tests/simgpu/simgpu_alloc.c, rounded()); a stream-ordered
 *                             allocation that takes again, on the same stream, the range of one
 *                             freed there (same address, the range at most twice its rounded
 *                             size) holds that range's bytes: the pool hands a range freed in
 *                             stream order to later allocations of that stream before the free
 *                             has run (alloc_async and reusable() there; CUDA's stream-ordered
 *                             allocator reuses memory freed on the same stream the same way);
 *   a VMM mapping             the mapped size, already a multiple of the granularity (cuMemMap
 *                             requires it: CUDA driver API, Virtual Memory Management);
 *   managed by the shim       a unit of its own rounded up to whole chunks of the granularity when
 *                             larger than half a chunk, else its 512-byte blocks in a slab
 *                             (shim/resid/shim_resid_alloc.c, shim_resid_slab.c); the rest of a
 * slab's chunk is not counted; pinned host memory        nothing: not device memory. */
#include "plan_internal.h"

#include "base_order.h"

#include <stdlib.h>

/* Contract in plan_internal.h. */
uint64_t plan_build_held(const plan_builder *b, uint32_t kind, uint64_t bytes)
{
    plan_hold_rules r = {.granule = b->granule, .page = b->page, .slab_max = b->granule / 2};
    return plan_rules_held_bytes((plan_mem_kind)kind, bytes, &r); /* a trace's alloc_kind */
}

/* An allocation's place when looking it up by id: ordered by id, then by the order it came. */
typedef struct key {
    uint64_t id, order;
    size_t at; /* index in the builder's allocations and in the lifetimes */
} key;

static int by_id(const void *pa, const void *pb)
{
    const key *a = pa, *b = pb;
    return BASE_CMP_THEN(a->id, b->id, BASE_CMP(a->order, b->order));
}

/* The first key of id at or after order: the keys of id made before it lie just below. */
static size_t lower(const key *k, size_t n, uint64_t id, uint64_t order)
{
    size_t lo = 0;
    BASE_BSEARCH(lo, n, mid, k[mid].id < id || (k[mid].id == id && k[mid].order < order));
    return lo;
}

/* What the frees did: per allocation, the order and stream of the free that ended it. */
typedef struct ending {
    uint64_t order; /* UINT64_MAX: none */
    uint64_t stream;
} ending;

/* Ends, with each free, the latest allocation of its id made before it and not yet ended. */
static void pair_frees(const plan_builder *b, const key *k, plan_blife *life, ending *end)
{
    for (size_t f = 0; f < b->nfrees; f++) {
        const plan_bfree *fr = &b->frees[f];
        for (size_t j = lower(k, b->nmems, fr->id, fr->order); j > 0 && k[j - 1].id == fr->id;
             j--) {
            size_t at = k[j - 1].at;
            if (end[at].order == UINT64_MAX) {
                life[at].free_seq = fr->seq;
                end[at] = (ending){.order = fr->order, .stream = fr->stream};
                break;
            }
        }
    }
}

/* An id allocated again while its earlier allocation lives (ids are never reused, so a free was
 * lost): the earlier one ends where the later one begins, as shim-report counts it. */
static void end_duplicates(const key *k, size_t n, plan_blife *life, const ending *end)
{
    for (size_t j = 1; j < n; j++) {
        if (k[j].id != k[j - 1].id)
            continue;
        size_t old = k[j - 1].at, now = k[j].at;
        if (end[old].order > k[j].order && life[old].free_seq > life[now].alloc_seq)
            life[old].free_seq = life[now].alloc_seq;
    }
}

/* Allocations and stream-ordered frees at one address, in the order they came: what a
 * stream-ordered allocation follows decides whether it took a freed range again. */
typedef struct at_addr {
    uint64_t addr, order;
    size_t at; /* the allocation made, or the one freed */
    int is_free;
} at_addr;

static int by_addr(const void *pa, const void *pb)
{
    const at_addr *a = pa, *b = pb;
    return BASE_CMP_THEN(a->addr, b->addr, BASE_CMP(a->order, b->order));
}

/* A stream-ordered allocation right after the stream-ordered free, on its stream, of the range
 * at its address, when that range is large enough and at most twice its rounded size, holds that
 * range's bytes (the pool's reuse; see the top of this file). */
static plan_err take_freed_ranges(const plan_builder *b, plan_blife *life, const ending *end)
{
    size_t n = 0;
    at_addr *ev = malloc((2 * b->nmems + 1) * sizeof(*ev));
    if (!ev)
        return PLAN_ERR_NOMEM;
    for (size_t i = 0; i < b->nmems; i++) {
        const plan_bmem *a = &b->mems[i];
        ev[n++] = (at_addr){.addr = a->addr, .order = a->order, .at = i};
        if (a->kind == PLAN_MEM_ASYNC && end[i].order != UINT64_MAX)
            ev[n++] = (at_addr){.addr = a->addr, .order = end[i].order, .at = i, .is_free = 1};
    }
    qsort(ev, n, sizeof(*ev), by_addr);
    for (size_t j = 1; j < n; j++) {
        const at_addr *prev = &ev[j - 1], *now = &ev[j];
        const plan_bmem *a = &b->mems[now->at];
        if (now->is_free || !prev->is_free || prev->addr != now->addr ||
            a->kind != PLAN_MEM_ASYNC || end[prev->at].stream != a->stream)
            continue;
        uint64_t range = life[prev->at].bytes, want = life[now->at].bytes;
        if (range >= want && range / 2 <= want)
            life[now->at].bytes = range;
    }
    free(ev);
    return PLAN_OK;
}

/* Contract in plan_internal.h. */
plan_err plan_build_lives(const plan_builder *b, plan_blife **out, size_t *n)
{
    size_t m = b->nmems;
    plan_blife *life = malloc((m ? m : 1) * sizeof(*life));
    key *k = malloc((m ? m : 1) * sizeof(*k));
    ending *end = malloc((m ? m : 1) * sizeof(*end));
    if (!life || !k || !end) {
        free(life), free(k), free(end);
        return PLAN_ERR_NOMEM;
    }
    for (size_t i = 0; i < m; i++) {
        const plan_bmem *a = &b->mems[i];
        life[i] = (plan_blife){.id = a->id,
                               .bytes = plan_build_held(b, a->kind, a->bytes),
                               .moved = a->kind == PLAN_MEM_MANAGED ? a->bytes : 0,
                               .alloc_seq = a->seq,
                               .free_seq = UINT64_MAX,
                               .order = a->order,
                               .placed = a->placed ? a->bytes : 0};
        k[i] = (key){.id = a->id, .order = a->order, .at = i};
        end[i] = (ending){.order = UINT64_MAX};
    }
    qsort(k, m, sizeof(*k), by_id);
    pair_frees(b, k, life, end);
    end_duplicates(k, m, life, end);
    plan_err e = take_freed_ranges(b, life, end);
    free(k);
    free(end);
    if (e) {
        free(life);
        return e;
    }
    size_t kept = 0;
    for (size_t i = 0; i < m; i++)
        if (life[i].bytes || life[i].placed)
            life[kept++] = life[i];
    *out = life;
    *n = kept;
    return PLAN_OK;
}
