/* threads_sim.c — many threads, each on its own non-blocking stream, each owning one buffer that
 * it clears with a memset, updates with a run of kernels, copies back and checks word by word
 * against the same arithmetic done on the host. Under libshim with a small budget every buffer
 * is evicted and restored behind the threads' backs, so a move that is not fenced against a
 * memset, a copy or a launch on any stream shows up as a wrong word (or an unmap hazard in the
 * simulator's statistics).
 *
 *   threads_sim [--threads N] [--launches K] [--rounds R] [--small BYTES] [--large BYTES]
 *               [--large-every M] [--seed S]
 *
 * Thread t's buffer is --large bytes when t % M == M-1 (M = --large-every, 0: never), --small
 * otherwise. Each round: cuMemAlloc, cuMemsetD32Async(seed), K launches of `bump` (each
 * rewrites one word per 4 KiB page and the last word), an async device-to-device copy of the
 * first half onto a scratch allocation and back (a copy in each direction through the device),
 * cuStreamSynchronize, cuMemcpyDtoH, compare, cuMemFree. Prints one line per thread with a
 * wrong word, then "threads_sim: W wrong of T" and exits 0 only when every word matched and
 * every call succeeded (1 for a CUDA error, printed with the call that failed). */
#include "simgpu.h"

#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_WORDS 1024u /* 4 KiB */

struct options {
    int threads, launches, rounds, large_every;
    size_t small, large;
    uint32_t seed;
};

struct worker {
    pthread_t tid;
    int index;
    const struct options *o;
    CUcontext ctx;
    int cuda_error; /* 1: a call failed */
    int wrong;      /* 1: a word differed */
};

static CUfunction bump_fn;

/* The kernel: w[i] = w[i] * 33 + k + i for one word per page and the last word. */
static void bump_update(uint32_t *w, uint64_t nwords, uint32_t k)
{
    for (uint64_t i = k % PAGE_WORDS; i < nwords; i += PAGE_WORDS)
        w[i] = w[i] * 33u + k + (uint32_t)i;
    w[nwords - 1] = w[nwords - 1] * 33u + k;
}

static void bump(void **p)
{
    bump_update(*(uint32_t **)p[0], *(uint64_t *)p[1], *(uint32_t *)p[2]);
}

#define CALL(w, what, expr)                                                                        \
    do {                                                                                           \
        CUresult rc_ = (expr);                                                                     \
        if (rc_ != CUDA_SUCCESS) {                                                                 \
            fprintf(stderr, "threads_sim: thread %d: %s failed (%d)\n", (w)->index, what,          \
                    (int)rc_);                                                                     \
            (w)->cuda_error = 1;                                                                   \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

/* One round of thread w on stream s; 0 when every word matched. */
static void round_of(struct worker *w, CUstream s, int round, uint32_t *host, uint32_t *expect)
{
    const struct options *o = w->o;
    size_t bytes =
        o->large_every && w->index % o->large_every == o->large_every - 1 ? o->large : o->small;
    uint64_t nwords = bytes / 4;
    uint32_t seed = o->seed ^ (uint32_t)(w->index * 7919 + round * 104729);
    CUdeviceptr d = 0, scratch = 0;
    CALL(w, "cuMemAlloc", cuMemAlloc(&d, bytes));
    CALL(w, "cuMemAlloc (scratch)", cuMemAlloc(&scratch, bytes / 2));
    CALL(w, "cuMemsetD32Async", cuMemsetD32Async(d, seed, nwords, s));
    for (uint64_t i = 0; i < nwords; i++)
        expect[i] = seed;
    for (int k = 0; k < o->launches; k++) {
        uint32_t kk = (uint32_t)(k + w->index);
        void *args[] = {&d, &nwords, &kk};
        CALL(w, "cuLaunchKernel", cuLaunchKernel(bump_fn, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
        bump_update(expect, nwords, kk);
        if (k == o->launches / 2) { /* through the scratch buffer and back */
            CALL(w, "cuMemcpyDtoDAsync", cuMemcpyDtoDAsync(scratch, d, bytes / 2, s));
            CALL(w, "cuMemsetD32Async (half)", cuMemsetD32Async(d, ~seed, nwords / 2, s));
            CALL(w, "cuMemcpyAsync", cuMemcpyAsync(d, scratch, bytes / 2, s));
        }
    }
    CALL(w, "cuStreamSynchronize", cuStreamSynchronize(s));
    CALL(w, "cuMemcpyDtoH", cuMemcpyDtoH(host, d, bytes));
    for (uint64_t i = 0; i < nwords; i++) {
        if (host[i] != expect[i]) {
            printf("thread %d round %d: word %llu of %llu is %08x, expected %08x\n", w->index,
                   round, (unsigned long long)i, (unsigned long long)nwords, host[i], expect[i]);
            w->wrong = 1;
            break;
        }
    }
out:
    if (d)
        cuMemFree(d);
    if (scratch)
        cuMemFree(scratch);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    const struct options *o = w->o;
    size_t most = o->large > o->small ? o->large : o->small;
    uint32_t *host = malloc(most), *expect = malloc(most);
    CUstream s = NULL;
    if (!host || !expect) {
        w->cuda_error = 1;
        goto out;
    }
    CALL(w, "cuCtxSetCurrent", cuCtxSetCurrent(w->ctx));
    CALL(w, "cuStreamCreate", cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int r = 0; r < o->rounds && !w->wrong && !w->cuda_error; r++)
        round_of(w, s, r, host, expect);
out:
    if (s)
        cuStreamDestroy(s);
    free(host);
    free(expect);
    return NULL;
}

static size_t size_arg(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    size_t unit = !strcmp(end, "KiB") ? 1024 : !strcmp(end, "MiB") ? 1024 * 1024 : 1;
    return (size_t)(v * (double)unit) / 4 * 4;
}

static int parse(int argc, char **argv, struct options *o)
{
    *o = (struct options){8, 200, 1, 4, 16 * 1024, 3 * 1024 * 1024, 1};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--threads"))
            o->threads = atoi(v);
        else if (!strcmp(k, "--launches"))
            o->launches = atoi(v);
        else if (!strcmp(k, "--rounds"))
            o->rounds = atoi(v);
        else if (!strcmp(k, "--small"))
            o->small = size_arg(v);
        else if (!strcmp(k, "--large"))
            o->large = size_arg(v);
        else if (!strcmp(k, "--large-every"))
            o->large_every = atoi(v);
        else if (!strcmp(k, "--seed"))
            o->seed = (uint32_t)strtoul(v, NULL, 0);
        else
            return -1;
    }
    if (argc % 2 == 0 || o->threads < 1 || o->threads > 1024 || o->launches < 1 || o->rounds < 1 ||
        o->small < 8 || o->large < 8 || o->large_every < 0)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    struct options o;
    if (parse(argc, argv, &o) != 0) {
        fprintf(stderr, "usage: threads_sim [--threads N] [--launches K] [--rounds R] "
                        "[--small BYTES] [--large BYTES] [--large-every M] [--seed S]\n");
        return 2;
    }
    static const size_t sizes[] = {8, 8, 4};
    CUcontext ctx;
    bump_fn = simgpu_register("bump", bump, 3, sizes);
    if (!bump_fn || cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx)) {
        fprintf(stderr, "threads_sim: could not set up the device\n");
        return 1;
    }
    simgpu_set_cost(bump_fn, 2.0);
    struct worker *w = calloc((size_t)o.threads, sizeof *w);
    if (!w)
        return 1;
    for (int t = 0; t < o.threads; t++) {
        w[t] = (struct worker){.index = t, .o = &o, .ctx = ctx};
        if (pthread_create(&w[t].tid, NULL, worker_main, &w[t]) != 0) {
            fprintf(stderr, "threads_sim: could not start thread %d\n", t);
            return 1;
        }
    }
    int wrong = 0, errors = 0;
    for (int t = 0; t < o.threads; t++) {
        pthread_join(w[t].tid, NULL);
        wrong += w[t].wrong;
        errors += w[t].cuda_error;
    }
    printf("threads_sim: %d wrong of %d, %d with a CUDA error\n", wrong, o.threads, errors);
    free(w);
    return errors ? 1 : wrong ? 3 : 0;
}
