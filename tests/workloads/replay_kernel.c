/* replay_kernel.c — replay's kernels: sampled-byte arithmetic run by the simulated device, one
 * launch per model operation at the operation's own virtual cost.
 *
 * The simulator takes a function's cost when a launch is submitted (simgpu.h,
 * simgpu_set_cost), so one registered function serves every operation: its cost is set to the
 * operation's DURATION_US just before each launch. The device pointers travel in the launch
 * parameters, as a real kernel's do, so that libshim sees every touch; a function is registered
 * per pointer capacity (4, 32, 512, and 63 blocks of 512) so that a launch copies a parameter
 * block not much larger than the pointers it carries. Which allocation each pointer is, and
 * whether this is its first touch of the step, the body reads from the schedule. */
#include "replay.h"
#include "workload.h"

#include "simgpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLE_BYTES 16
#define PAGE_BYTES   4096
#define BLOCK_PTRS   512 /* pointers per parameter: 4 KiB, the classic kernel parameter limit */
#define WIDE_BLOCKS  63  /* simgpu takes at most 64 parameters: the arguments and 63 blocks */
#define MAX_PTRS     (BLOCK_PTRS * WIDE_BLOCKS)

/* The arguments before the pointer blocks, by value. */
struct replay_args {
    uint32_t op, step, n, lose;
};

/* Set once by replay_kernel_setup before the first launch; read-only while kernels run. */
static const struct replay_sched *sched;
static uint64_t stride;
/* Per op, a fold of every value its kernels read and wrote, written only by that op's launches,
   which are ordered by the step's host synchronisation. */
static uint64_t *digests;

/* Samples of an allocation of n bytes: one per stride, plus the tail. */
static uint64_t sample_count(uint64_t n)
{
    return (n + stride - 1) / stride + 1;
}

/* First byte of sample k: a page-dependent offset inside the sampled page, clamped inside the
   allocation; the last sample is the tail. */
static uint64_t sample_base(uint64_t k, uint64_t n)
{
    uint64_t len = n < SAMPLE_BYTES ? n : SAMPLE_BYTES;
    uint64_t base = k * stride + workload_mix32((uint32_t)k) % (PAGE_BYTES - SAMPLE_BYTES);

    if (k + 1 == sample_count(n) || base + len > n)
        base = n - len;
    return base;
}

static void load(uint32_t w[4], const unsigned char *p, uint64_t len)
{
    memset(w, 0, SAMPLE_BYTES);
    memcpy(w, p, len);
}

/* acc folded with every sampled byte of the allocation of n bytes at p. */
static uint32_t fold(uint32_t acc, const unsigned char *p, uint64_t n)
{
    uint64_t count = sample_count(n), len = n < SAMPLE_BYTES ? n : SAMPLE_BYTES;
    uint32_t w[4];

    for (uint64_t k = 0; k < count; k++) {
        load(w, p + sample_base(k, n), len);
        for (int i = 0; i < 4; i++)
            acc = workload_mix32(acc ^ w[i]) + (uint32_t)k;
    }
    return acc;
}

/* Writes every sample of the allocation: f(acc, sample), plus its old value unless fresh. */
static void emit(unsigned char *p, uint64_t n, uint32_t acc, bool fresh)
{
    uint64_t count = sample_count(n), len = n < SAMPLE_BYTES ? n : SAMPLE_BYTES;
    uint32_t w[4];

    for (uint64_t k = 0; k < count; k++) {
        unsigned char *s = p + sample_base(k, n);
        load(w, s, len);
        for (int i = 0; i < 4; i++)
            w[i] = workload_mix32(acc + (uint32_t)(k * 4 + (uint64_t)i)) + (fresh ? 0 : w[i]);
        memcpy(s, w, len);
    }
}

/* ---- Partial touches: every page of a contiguous run ---------------------------------------- */

uint64_t replay_kernel_run_offset(uint32_t a, uint32_t step, uint64_t bytes, uint64_t n)
{
    uint64_t pages = (n - bytes) / PAGE_BYTES + 1; /* where a page-aligned run fits */
    return workload_mix64((uint64_t)step << 32 ^ workload_mix32(a) ^ bytes) % pages * PAGE_BYTES;
}

/* First byte of the sample in page k of the run [off, off + bytes): a page-dependent place in
   the page, clamped inside the run (the last sample may then straddle two of its pages). */
static uint64_t run_base(uint64_t k, uint64_t off, uint64_t bytes)
{
    uint64_t len = bytes < SAMPLE_BYTES ? bytes : SAMPLE_BYTES;
    uint64_t base = off + k * PAGE_BYTES +
                    workload_mix32((uint32_t)(off / PAGE_BYTES + k)) % (PAGE_BYTES - SAMPLE_BYTES);
    return base + len > off + bytes ? off + bytes - len : base;
}

/* fold over the run of `bytes` bytes at off: one sample in each of its pages. */
static uint32_t fold_run(uint32_t acc, const unsigned char *p, uint64_t off, uint64_t bytes)
{
    uint64_t pages = (bytes + PAGE_BYTES - 1) / PAGE_BYTES,
             len = bytes < SAMPLE_BYTES ? bytes : SAMPLE_BYTES;
    uint32_t w[4];

    for (uint64_t k = 0; k < pages; k++) {
        load(w, p + run_base(k, off, bytes), len);
        for (int i = 0; i < 4; i++)
            acc = workload_mix32(acc ^ w[i]) + (uint32_t)k;
    }
    return acc;
}

/* emit over the run: each sample becomes f(acc, sample) plus its old value (cyclic memory). */
static void emit_run(unsigned char *p, uint64_t off, uint64_t bytes, uint32_t acc)
{
    uint64_t pages = (bytes + PAGE_BYTES - 1) / PAGE_BYTES,
             len = bytes < SAMPLE_BYTES ? bytes : SAMPLE_BYTES;
    uint32_t w[4];

    for (uint64_t k = 0; k < pages; k++) {
        unsigned char *s = p + run_base(k, off, bytes);
        load(w, s, len);
        for (int i = 0; i < 4; i++)
            w[i] = workload_mix32(acc + (uint32_t)(k * 4 + (uint64_t)i)) + w[i];
        memcpy(s, w, len);
    }
}

static unsigned char *ptr_at(void **params, uint32_t block, uint32_t i)
{
    return ((unsigned char **)params[1 + i / block])[i % block];
}

/* Reads what touch item t (the i-th pointer of the launch) covers into acc. */
static uint32_t read_item(uint32_t acc, const struct replay_args *a, uint32_t t, unsigned char *p)
{
    uint32_t al = sched->touch.items[t];
    uint64_t n = sched->m->allocs[al].bytes, r = sched->read[t];

    if (r)
        return fold_run(acc, p, replay_kernel_run_offset(al, a->step, r, n), r);
    return sched->fresh[t] ? acc : fold(acc, p, n);
}

static void write_item(uint32_t acc, const struct replay_args *a, uint32_t t, unsigned char *p)
{
    uint32_t al = sched->touch.items[t];
    uint64_t n = sched->m->allocs[al].bytes, r = sched->read[t];

    if (r)
        emit_run(p, replay_kernel_run_offset(al, a->step, r, n), r, acc);
    else
        emit(p, n, acc, sched->fresh[t]);
}

static void run(void **params, uint32_t block)
{
    const struct replay_args *a = params[0];
    uint32_t first = sched->touch.first[a->op], acc = workload_mix32(a->op * 0x9e3779b9U ^ a->step);

    for (uint32_t i = 0; i < a->n; i++)
        acc = read_item(acc, a, first + i, ptr_at(params, block, i));
    digests[a->op] = workload_mix64(digests[a->op] ^ acc);
    for (uint32_t i = 0; i < a->n && !a->lose; i++)
        write_item(acc ^ workload_mix32(i + 1), a, first + i, ptr_at(params, block, i));
}

static void k_ptrs4(void **params)
{
    run(params, 4);
}

static void k_ptrs32(void **params)
{
    run(params, 32);
}

static void k_ptrs512(void **params)
{
    run(params, BLOCK_PTRS);
}

static void k_wide(void **params)
{
    run(params, BLOCK_PTRS);
}

/* The seeded initial contents of a cyclic allocation: params[0] its number, params[1] it. */
static void k_init(void **params)
{
    uint32_t a = *(uint32_t *)params[0];

    emit(*(unsigned char **)params[1], sched->m->allocs[a].bytes, workload_mix32(a ^ 0x5eed5eedU),
         true);
}

static const struct variant {
    const char *name;
    simgpu_body body;
    uint32_t block, blocks;
} variants[] = {
    {"replay_op_4", k_ptrs4, 4, 1},
    {"replay_op_32", k_ptrs32, 32, 1},
    {"replay_op_512", k_ptrs512, BLOCK_PTRS, 1},
    {"replay_op_wide", k_wide, BLOCK_PTRS, WIDE_BLOCKS},
};
#define NVARIANTS (sizeof variants / sizeof variants[0])

static CUfunction functions[NVARIANTS];

int replay_kernel_setup(const struct replay_sched *s, uint64_t sample_stride)
{
    size_t sizes[1 + WIDE_BLOCKS] = {sizeof(struct replay_args)};
    size_t init_sizes[2] = {sizeof(uint32_t), sizeof(void *)};

    if (s->max_touch > MAX_PTRS) {
        fprintf(stderr,
                "replay: an op touches %zu allocations, more than the %d one launch takes\n",
                s->max_touch, MAX_PTRS);
        return -1;
    }
    sched = s;
    stride = sample_stride;
    digests = calloc(s->nops, sizeof *digests);
    if (!digests) {
        fprintf(stderr, "replay: out of memory for the digests\n");
        return -1;
    }
    for (size_t v = 0; v < NVARIANTS; v++) {
        for (uint32_t b = 0; b < variants[v].blocks; b++)
            sizes[1 + b] = variants[v].block * sizeof(void *);
        functions[v] =
            simgpu_register(variants[v].name, variants[v].body, 1 + (int)variants[v].blocks, sizes);
        if (!functions[v]) {
            fprintf(stderr, "replay: simgpu_register(%s) failed\n", variants[v].name);
            return -1;
        }
    }
    /* Before the first step, so no cost of the step's; zero: it stands for no model op. */
    simgpu_set_cost(simgpu_register("replay_init", k_init, 2, init_sizes), 0.0);
    return simgpu_function_of(k_init) ? 0 : -1;
}

int replay_kernel_launch(uint32_t q, uint32_t step, cudaStream_t st, void *const *ptr, bool lose)
{
    static void *block[MAX_PTRS];
    uint32_t n = sched->touch.first[q + 1] - sched->touch.first[q];
    struct replay_args a = {.op = q, .step = step, .n = n, .lose = lose};
    void *params[1 + WIDE_BLOCKS] = {&a};
    size_t v = 0;
    char what[64];

    while (n > variants[v].block * variants[v].blocks)
        v++;
    memcpy(block, ptr, n * sizeof *ptr);
    memset(block + n, 0, (variants[v].block * variants[v].blocks - n) * sizeof *block);
    for (uint32_t b = 0; b < variants[v].blocks; b++)
        params[1 + b] = &block[b * variants[v].block];
    /* The launch takes the cost now (simgpu.h); one host thread sets and launches. */
    simgpu_set_cost(functions[v], sched->m->ops[q].dur_us);
    snprintf(what, sizeof what, "cudaLaunchKernel(op %u)", q);
    return replay_check(cudaLaunchKernel((const void *)variants[v].body, (dim3){1, 1, 1},
                                         (dim3){1, 1, 1}, params, 0, st),
                        what);
}

int replay_kernel_init(uint32_t a, cudaStream_t st, void *p)
{
    void *params[2] = {&a, &p};

    return REPLAY_CHECK(
        cudaLaunchKernel((const void *)k_init, (dim3){1, 1, 1}, (dim3){1, 1, 1}, params, 0, st));
}

int replay_kernel_readback(uint32_t a, const void *p, uint64_t *sum)
{
    uint64_t n = sched->m->allocs[a].bytes, count = sample_count(n);
    uint64_t len = n < SAMPLE_BYTES ? n : SAMPLE_BYTES;
    unsigned char buf[SAMPLE_BYTES];
    uint32_t acc = workload_mix32(a);

    for (uint64_t k = 0; k < count; k++) {
        if (REPLAY_CHECK(cudaMemcpy(buf, (const unsigned char *)p + sample_base(k, n), len,
                                    cudaMemcpyDeviceToHost)) != 0)
            return -1;
        uint32_t w[4];
        load(w, buf, len);
        for (int i = 0; i < 4; i++)
            acc = workload_mix32(acc ^ w[i]) + (uint32_t)k;
    }
    *sum = workload_mix64(*sum ^ ((uint64_t)a << 32 | acc));
    return 0;
}

void replay_kernel_digest(uint64_t *sum)
{
    for (size_t q = 0; q < sched->nops; q++)
        *sum = workload_mix64(*sum ^ digests[q] ^ q);
}

void replay_kernel_free(void)
{
    free(digests);
    digests = NULL;
}
