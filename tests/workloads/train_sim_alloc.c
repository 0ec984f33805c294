/* train_sim_alloc.c — device memory for train_sim's tensors: exact (cudaMalloc per tensor),
 * async (cudaMallocAsync per tensor on the compute stream) or segments, a caching allocator
 * modelled on PyTorch's native one:
 *   - sizes round up to 512 bytes;
 *   - requests up to 1 MiB come from 2 MiB segments (small pool); requests up to
 *     10 MiB from 20 MiB segments; larger ones get their own segment rounded up
 *     to 2 MiB (large pool);
 *   - a request takes the best-fitting free block of its pool (smallest, then
 *     oldest segment, then lowest offset) and splits it when the remainder is at
 *     least 512 bytes (small pool) or more than 1 MiB (large pool);
 *   - freed blocks merge with free neighbours and stay cached; segments come from
 *     cudaMalloc and are returned only at the end of the run.
 * All work runs on one compute stream, so a freed block is reusable at once in
 * stream order, as PyTorch's per-stream pools allow. */
#include "train_sim.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define KIB           ((size_t)1024)
#define MIB           (KIB * KIB)
#define MIN_BLOCK     (512)
#define SMALL_SIZE    (1 * MIB)
#define SMALL_SEGMENT (2 * MIB)
#define MID_SIZE      (10 * MIB)
#define LARGE_SEGMENT (20 * MIB)
#define ROUND_LARGE   (2 * MIB)

struct block {
    uintptr_t addr;
    size_t size;
    bool free, small;
    unsigned segment;          /* creation order of its segment */
    struct block *prev, *next; /* neighbours in the segment */
    struct block *all;         /* every block, for lookups */
    bool segment_head;         /* addr is the cudaMalloc'd base */
};

struct train_sim_alloc {
    enum train_sim_mode mode;
    cudaStream_t stream;
    struct block *blocks; /* segments mode: every block of every segment */
    unsigned segments;    /* segments created */
};

static size_t round_up(size_t v, size_t to)
{
    return (v + to - 1) / to * to;
}

struct train_sim_alloc *train_sim_alloc_new(enum train_sim_mode mode, cudaStream_t compute)
{
    struct train_sim_alloc *a = calloc(1, sizeof *a);

    if (a) {
        a->mode = mode;
        a->stream = compute;
    }
    return a;
}

/* Best fit in the pool; NULL when no free block is large enough. */
static struct block *best_fit(struct train_sim_alloc *a, size_t size, bool small)
{
    struct block *best = NULL;

    for (struct block *b = a->blocks; b; b = b->all) {
        if (!b->free || b->small != small || b->size < size)
            continue;
        if (!best || b->size < best->size ||
            (b->size == best->size &&
             (b->segment < best->segment || (b->segment == best->segment && b->addr < best->addr))))
            best = b;
    }
    return best;
}

static struct block *block_new(struct train_sim_alloc *a, uintptr_t addr, size_t size, bool small,
                               unsigned segment)
{
    struct block *b = calloc(1, sizeof *b);

    if (!b) {
        fprintf(stderr, "train_sim: out of host memory for allocator blocks\n");
        return NULL;
    }
    *b = (struct block){.addr = addr,
                        .size = size,
                        .free = true,
                        .small = small,
                        .segment = segment,
                        .all = a->blocks};
    a->blocks = b;
    return b;
}

/* A new cached segment for a request of size bytes, as one free block. */
static struct block *segment_new(struct train_sim_alloc *a, size_t size, bool small)
{
    size_t seg = small              ? SMALL_SEGMENT
                 : size <= MID_SIZE ? LARGE_SEGMENT
                                    : round_up(size, ROUND_LARGE);
    char what[96];
    void *p = NULL;
    struct block *b;

    snprintf(what, sizeof what, "cudaMalloc(%zu bytes) for a %s-pool segment", seg,
             small ? "small" : "large");
    if (train_sim_check(cudaMalloc(&p, seg), what) != 0)
        return NULL;
    b = block_new(a, (uintptr_t)p, seg, small, a->segments++);
    if (!b)
        cudaFree(p);
    else
        b->segment_head = true;
    return b;
}

/* Splits b so that it is exactly size bytes, if the remainder is worth keeping. */
static int split(struct train_sim_alloc *a, struct block *b, size_t size)
{
    size_t rest = b->size - size;
    struct block *r;

    if (b->small ? rest < MIN_BLOCK : rest <= SMALL_SIZE)
        return 0;
    r = block_new(a, b->addr + size, rest, b->small, b->segment);
    if (!r)
        return -1;
    r->prev = b;
    r->next = b->next;
    if (b->next)
        b->next->prev = r;
    b->next = r;
    b->size = size;
    return 0;
}

static int segments_get(struct train_sim_alloc *a, size_t bytes, void **p)
{
    size_t size = round_up(bytes ? bytes : 1, MIN_BLOCK);
    bool small = size <= SMALL_SIZE;
    struct block *b = best_fit(a, size, small);

    if (!b)
        b = segment_new(a, size, small);
    if (!b || split(a, b, size) != 0)
        return -1;
    b->free = false;
    *p = (void *)b->addr;
    return 0;
}

static void unlink_block(struct train_sim_alloc *a, struct block *b)
{
    struct block **pp = &a->blocks;

    while (*pp != b)
        pp = &(*pp)->all;
    *pp = b->all;
    free(b);
}

/* Merges free neighbour n (b->next) into b. */
static void merge_next(struct train_sim_alloc *a, struct block *b)
{
    struct block *n = b->next;

    b->size += n->size;
    b->next = n->next;
    if (n->next)
        n->next->prev = b;
    unlink_block(a, n);
}

static int segments_put(struct train_sim_alloc *a, void *p)
{
    struct block *b = a->blocks;

    while (b && (b->addr != (uintptr_t)p || b->free))
        b = b->all;
    if (!b) {
        fprintf(stderr, "train_sim: free of %p, which the allocator did not give out\n", p);
        return -1;
    }
    b->free = true;
    if (b->next && b->next->free)
        merge_next(a, b);
    if (b->prev && b->prev->free)
        merge_next(a, b->prev);
    return 0;
}

int train_sim_alloc_get(struct train_sim_alloc *a, size_t bytes, void **p)
{
    char what[64];

    *p = NULL;
    if (a->mode == TRAIN_SIM_SEGMENTS)
        return segments_get(a, bytes, p);
    if (a->mode == TRAIN_SIM_ASYNC) {
        snprintf(what, sizeof what, "cudaMallocAsync(%zu bytes)", bytes);
        return train_sim_check(cudaMallocAsync(p, bytes, a->stream), what);
    }
    snprintf(what, sizeof what, "cudaMalloc(%zu bytes)", bytes);
    return train_sim_check(cudaMalloc(p, bytes), what);
}

int train_sim_alloc_put(struct train_sim_alloc *a, void *p)
{
    if (!p)
        return 0;
    if (a->mode == TRAIN_SIM_SEGMENTS)
        return segments_put(a, p);
    if (a->mode == TRAIN_SIM_ASYNC)
        return TRAIN_SIM_CHECK(cudaFreeAsync(p, a->stream));
    return TRAIN_SIM_CHECK(cudaFree(p));
}

int train_sim_alloc_free(struct train_sim_alloc *a)
{
    int rc = 0;

    if (!a)
        return 0;
    while (a->blocks) {
        struct block *b = a->blocks;
        a->blocks = b->all;
        if (b->segment_head && TRAIN_SIM_CHECK(cudaFree((void *)b->addr)) != 0)
            rc = -1;
        free(b);
    }
    free(a);
    return rc;
}
