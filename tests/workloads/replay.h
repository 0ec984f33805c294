/* replay.h — internal interfaces of replay, which runs an iteration model (planner/MODEL-FORMAT.md)
 * as a program on the simulated device, grouped by defining file.
 *
 * Each operation of the model is one kernel launch whose virtual cost is the operation's
 * DURATION_US and which reads and writes SAMPLED bytes of every allocation it touches: 16 bytes
 * in one 4 KiB page out of every `stride` bytes, plus the last 16 bytes (as train_sim samples, so
 * every 2 MiB chunk of every allocation is read and written while a large model stays cheap on
 * the CPU). What a kernel writes depends on the operation, the step and every sampled byte it
 * read, so a lost or stale byte changes the final checksum.
 *
 * A touch that reads fewer bytes than its allocation (OP@BYTES in the model: an embedding
 * lookup) of a cyclic allocation reads and writes 16 bytes in every 4 KiB page of one contiguous
 * run of BYTES bytes, not sampled by the stride, at a page-aligned offset chosen per step and
 * allocation (replay_kernel.c), so that a host-located table costs the link what the lookup
 * reads. Partial touches of allocations made in the step are replayed whole: bytes of theirs that
 * no touch of the step wrote would be whatever the allocator's memory held.
 *
 * Error contract: int functions return 0, or -1 after printing one line
 * "replay: <what> failed: <message>" on stderr. */
#ifndef REPLAY_H
#define REPLAY_H

#include "plan.h"

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REPLAY_MAX_STREAMS 256 /* distinct model stream ids */

struct replay_config {
    const char *model_path;
    int steps;
    bool async;   /* --malloc async: cudaMallocAsync / cudaFreeAsync; else cudaMalloc / cudaFree */
    bool streams; /* --streams: each op on its model stream; else all on the legacy stream */
    uint64_t stride;        /* sampling stride in bytes */
    int lose_step, lose_op; /* --lose STEP:OP: that launch reads but writes nothing (-1: none) */
    bool print_waits;       /* --waits: print the schedule's cross-stream waits first */
    int host_alloc; /* --host A: cyclic allocation A lives in host-located memory (-1: none) */
    bool carry;     /* --carry: an allocation outliving a step lives on as one existing before
                       the next (replay_sched.c) */
    double host_us; /* --host-us: the program's own host work before each op (-1: none) */
};

/* Compressed lists indexed by operation: items[first[q] .. first[q + 1]). */
struct replay_list {
    uint32_t *first; /* nops + 1 entries */
    uint32_t *items;
};

/* What the run does at each operation, derived once from the model (replay_sched.c); read-only
   while kernels run. Stream numbers are indices into the run's streams, 0 the legacy stream. */
struct replay_sched {
    const plan_model *m;
    size_t nops, nallocs, nstreams;
    uint32_t stream_ids[REPLAY_MAX_STREAMS]; /* model stream id of each index */
    uint32_t *op_stream;                     /* per op */
    struct replay_list touch;                /* allocations each op touches, by number */
    uint8_t *fresh; /* per touch item: the allocation's first touch of the step */
    uint64_t *read; /* per touch item: the bytes of its run (a partial touch), 0: the whole */
    struct replay_list births, deaths;    /* allocations made before / freed after each op */
    struct replay_list waits;             /* producer ops on other streams each op waits for */
    uint8_t *record_after;                /* per op: some later op on another stream waits for it */
    uint32_t *alloc_stream, *free_stream; /* per allocation: where its async alloc / free goes */
    size_t ncyclic;
    size_t max_touch;  /* most allocations one op touches */
    int32_t *carry_to; /* with carry: per allocation outliving the step, the allocation existing
                          before the next step that it lives on as; -1 otherwise */
};

/* replay_sched.c */
/* Builds s from m (which must outlive s). Without `streams`, every op is on the legacy stream;
   with `carry`, allocations are paired across the step boundary (carry_to). Returns 0, or -1
   (out of memory, or more than REPLAY_MAX_STREAMS stream ids). */
int replay_sched_build(struct replay_sched *s, const plan_model *m, bool streams, bool carry);
/* Frees what replay_sched_build made; accepts a zeroed or built s. */
void replay_sched_free(struct replay_sched *s);
/* Whether allocation a is cyclic (made before the first step, freed after the last). */
bool replay_sched_cyclic(const struct replay_sched *s, uint32_t a);

/* replay_kernel.c */
/* Registers the kernels for schedule s (ops touching up to s->max_touch allocations) and
   sampling stride. Returns 0, or -1 (an op touches more than the kernels take). */
/* Where the run of a partial touch of `bytes` bytes of allocation a (n bytes) starts in step
   `step`: a multiple of 4 KiB at most n - bytes, the same for every touch of that size of the
   allocation in the step (a lookup's backward updates the rows its forward read). */
uint64_t replay_kernel_run_offset(uint32_t a, uint32_t step, uint64_t bytes, uint64_t n);
int replay_kernel_setup(const struct replay_sched *s, uint64_t stride);
/* Launches op q of step `step` on stream st over the device pointers of its touched allocations
   (ptr[i] for s->touch item i of q), costing the op's duration; lose: write nothing. */
int replay_kernel_launch(uint32_t q, uint32_t step, cudaStream_t st, void *const *ptr, bool lose);
/* Fills the sampled bytes of allocation a (at p) with its seeded initial contents, on st. */
int replay_kernel_init(uint32_t a, cudaStream_t st, void *p);
/* Folds the sampled bytes of allocation a (at p, read back with cudaMemcpy) into *sum. */
int replay_kernel_readback(uint32_t a, const void *p, uint64_t *sum);
/* Folds every op's digest of the values its kernels read (kept on the host: a witness of each
   read, complete once the device is synchronised) into *sum. */
void replay_kernel_digest(uint64_t *sum);
/* Frees the digests (after the last readback). */
void replay_kernel_free(void);

/* replay_run.c */
/* Runs c->steps steps of s, printing one line per step ("step K device_us=T peak_bytes=P"), then
   reads back every live allocation whose contents the model defines and sets *checksum (the
   readbacks and the digests) and *mean_us (virtual time per step, step 0 left out when there
   are more). Returns 0, or -1 after a failed CUDA call. */
int replay_run(const struct replay_sched *s, const struct replay_config *c, uint64_t *checksum,
               double *mean_us);

/* replay_host.c */
/* Makes `bytes` of host-located memory mapped for the device (the cyclic allocation of --host)
   at *p. The context must exist (the run's streams are made first). Returns 0, or -1. */
int replay_host_alloc(uint64_t bytes, void **p);
/* Frees it if p is that allocation (returns 0 otherwise, doing nothing). Returns 0, or -1. */
int replay_host_free(void *p);

/* replay_main.c */
/* Prints "replay: <what> failed: <message> (<name>)" and returns -1 if e is an error, else 0. */
int replay_check(cudaError_t e, const char *what);
#define REPLAY_CHECK(call) replay_check((call), #call)

#endif
