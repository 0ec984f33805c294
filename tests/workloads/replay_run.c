/* replay_run.c — runs the steps of a schedule (replay_sched.c) on the simulated device: makes and
 * frees allocations, launches one kernel per op on its stream with the cross-stream waits, times
 * each step with events and reads back what is live at the end. */
#include "replay.h"

#include "simgpu.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

struct run {
    const struct replay_sched *s;
    const struct replay_config *c;
    cudaStream_t streams[REPLAY_MAX_STREAMS]; /* [0]: the legacy stream */
    cudaEvent_t join[REPLAY_MAX_STREAMS];     /* end of the step on each side stream */
    cudaEvent_t *after;                       /* per op with record_after */
    cudaEvent_t start, end;
    void **ptr;  /* per allocation: its device pointer, NULL when not allocated */
    void **args; /* the pointers of one launch */
};

static int alloc(struct run *r, uint32_t a)
{
    uint64_t bytes = r->s->m->allocs[a].bytes;
    char what[96];

    if ((int)a == r->c->host_alloc)
        return replay_host_alloc(bytes, &r->ptr[a]);
    if (r->c->async) {
        snprintf(what, sizeof what, "cudaMallocAsync(allocation %u, %" PRIu64 " bytes)", a, bytes);
        return replay_check(cudaMallocAsync(&r->ptr[a], bytes, r->streams[r->s->alloc_stream[a]]),
                            what);
    }
    snprintf(what, sizeof what, "cudaMalloc(allocation %u, %" PRIu64 " bytes)", a, bytes);
    return replay_check(cudaMalloc(&r->ptr[a], bytes), what);
}

static int release(struct run *r, uint32_t a)
{
    void *p = r->ptr[a];

    r->ptr[a] = NULL;
    if (!p)
        return 0;
    if ((int)a == r->c->host_alloc)
        return REPLAY_CHECK(cudaDeviceSynchronize()) || replay_host_free(p) ? -1 : 0;
    if (r->c->async)
        return REPLAY_CHECK(cudaFreeAsync(p, r->streams[r->s->free_stream[a]]));
    return REPLAY_CHECK(cudaFree(p));
}

/* Whether allocation a is freed when it dies in this step: after the last step, those that
   outlive it are kept for the readback; before it, one that is carried (--carry) lives on as
   its partner in the next step. */
static bool freed_now(struct run *r, uint32_t a, int step)
{
    if (step + 1 >= r->c->steps)
        return r->s->m->allocs[a].death != PLAN_NO_OP;
    int32_t to = r->s->carry_to[a];
    if (to >= 0) {
        r->ptr[to] = r->ptr[a];
        r->ptr[a] = NULL;
        return false;
    }
    return true;
}

static int launch(struct run *r, uint32_t q, int step)
{
    const struct replay_sched *s = r->s;
    cudaStream_t st = r->streams[s->op_stream[q]];
    int rc = 0;

    /* The program's own work for the op comes first, before its allocations and its launch:
       an interposer sees them after it, as libshim sees a PyTorch op's after its Python. */
    if (r->c->host_us >= 0 && simgpu_host_work(r->c->host_us) != 0) {
        fprintf(stderr, "replay: --host-us needs the simulated device's per-thread host clocks "
                        "(set SIMGPU_HOST_US_PER_LAUNCH, 0 will do)\n");
        return -1;
    }

    for (uint32_t i = s->births.first[q]; rc == 0 && i < s->births.first[q + 1]; i++)
        if (!r->ptr[s->births.items[i]]) /* not carried from the previous step (--carry) */
            rc = alloc(r, s->births.items[i]);
    for (uint32_t i = s->waits.first[q]; rc == 0 && i < s->waits.first[q + 1]; i++)
        rc = REPLAY_CHECK(cudaStreamWaitEvent(st, r->after[s->waits.items[i]], 0));
    for (uint32_t i = s->touch.first[q]; i < s->touch.first[q + 1]; i++)
        r->args[i - s->touch.first[q]] = r->ptr[s->touch.items[i]];
    if (rc == 0)
        rc = replay_kernel_launch(q, (uint32_t)step, st, r->args,
                                  step == r->c->lose_step && (int)q == r->c->lose_op);
    if (rc == 0 && s->record_after[q])
        rc = REPLAY_CHECK(cudaEventRecord(r->after[q], st));
    for (uint32_t i = s->deaths.first[q]; rc == 0 && i < s->deaths.first[q + 1]; i++)
        if (freed_now(r, s->deaths.items[i], step))
            rc = release(r, s->deaths.items[i]);
    return rc;
}

/* One step between two host synchronisations, timed from an event on the legacy stream that
   every side stream waits for to one recorded there after it waited for all of them. */
static int step(struct run *r, int k, double *us)
{
    struct simgpu_stats st;
    float ms = 0;
    int rc;

    simgpu_reset_peak();
    rc = REPLAY_CHECK(cudaEventRecord(r->start, r->streams[0]));
    for (size_t i = 1; rc == 0 && i < r->s->nstreams; i++)
        rc = REPLAY_CHECK(cudaStreamWaitEvent(r->streams[i], r->start, 0));
    for (uint32_t q = 0; rc == 0 && q < r->s->nops; q++)
        rc = launch(r, q, k);
    for (size_t i = 1; rc == 0 && i < r->s->nstreams; i++)
        rc = REPLAY_CHECK(cudaEventRecord(r->join[i], r->streams[i])) ||
             REPLAY_CHECK(cudaStreamWaitEvent(r->streams[0], r->join[i], 0));
    if (rc == 0)
        rc = REPLAY_CHECK(cudaEventRecord(r->end, r->streams[0])) ||
             REPLAY_CHECK(cudaStreamSynchronize(r->streams[0])) ||
             REPLAY_CHECK(cudaEventElapsedTime(&ms, r->start, r->end));
    if (rc != 0 || simgpu_get_stats(&st) != 0)
        return -1;
    *us = (double)ms * 1000.0;
    printf("step %d device_us=%.3f peak_bytes=%" PRIu64 "\n", k, *us, st.window_peak_bytes);
    fflush(stdout);
    return 0;
}

/* Streams, events and the cyclic allocations with their seeded contents. */
static int setup(struct run *r)
{
    const struct replay_sched *s = r->s;
    int rc = REPLAY_CHECK(cudaEventCreate(&r->start)) || REPLAY_CHECK(cudaEventCreate(&r->end));

    for (size_t i = 1; rc == 0 && i < s->nstreams; i++)
        rc = REPLAY_CHECK(cudaStreamCreateWithFlags(&r->streams[i], cudaStreamNonBlocking)) ||
             REPLAY_CHECK(cudaEventCreateWithFlags(&r->join[i], cudaEventDisableTiming));
    for (uint32_t q = 0; rc == 0 && q < s->nops; q++)
        if (s->record_after[q])
            rc = REPLAY_CHECK(cudaEventCreateWithFlags(&r->after[q], cudaEventDisableTiming));
    for (uint32_t a = 0; rc == 0 && a < s->nallocs; a++)
        if (replay_sched_cyclic(s, a))
            rc = alloc(r, a) || replay_kernel_init(a, r->streams[0], r->ptr[a]);
    return rc ? -1 : REPLAY_CHECK(cudaStreamSynchronize(r->streams[0]));
}

/* Folds every live allocation whose contents the model defines (cyclic ones, and those the
   last step touched that outlive it), then the digests. */
static int readback(struct run *r, uint64_t *sum)
{
    const struct replay_sched *s = r->s;

    *sum = 0;
    for (uint32_t a = 0; a < s->nallocs; a++)
        if (r->ptr[a] && (replay_sched_cyclic(s, a) || s->m->allocs[a].ntouch) &&
            replay_kernel_readback(a, r->ptr[a], sum) != 0)
            return -1;
    replay_kernel_digest(sum);
    return 0;
}

static int teardown(struct run *r)
{
    int rc = 0;

    for (uint32_t a = 0; r->ptr && a < r->s->nallocs; a++)
        rc |= release(r, a);
    rc |= REPLAY_CHECK(cudaDeviceSynchronize());
    for (size_t i = 1; i < r->s->nstreams; i++) {
        if (r->streams[i])
            rc |= REPLAY_CHECK(cudaStreamDestroy(r->streams[i]));
        if (r->join[i])
            rc |= REPLAY_CHECK(cudaEventDestroy(r->join[i]));
    }
    for (uint32_t q = 0; r->after && q < r->s->nops; q++)
        if (r->after[q])
            rc |= REPLAY_CHECK(cudaEventDestroy(r->after[q]));
    if (r->start)
        rc |= REPLAY_CHECK(cudaEventDestroy(r->start));
    if (r->end)
        rc |= REPLAY_CHECK(cudaEventDestroy(r->end));
    free(r->ptr);
    free(r->after);
    free(r->args);
    return rc ? -1 : 0;
}

int replay_run(const struct replay_sched *s, const struct replay_config *c, uint64_t *checksum,
               double *mean_us)
{
    struct run r = {.s = s, .c = c};
    double us = 0, total = 0;
    int rc = -1, counted = 0;

    r.ptr = calloc(s->nallocs ? s->nallocs : 1, sizeof *r.ptr);
    r.after = calloc(s->nops, sizeof *r.after);
    r.args = calloc(s->max_touch ? s->max_touch : 1, sizeof *r.args);
    if (!r.ptr || !r.after || !r.args)
        fprintf(stderr, "replay: out of memory for the run's tables\n");
    else
        rc = setup(&r);
    for (int k = 0; rc == 0 && k < c->steps; k++) {
        rc = step(&r, k, &us);
        if (k > 0 || c->steps == 1) {
            total += us;
            counted++;
        }
    }
    if (rc == 0)
        rc = readback(&r, checksum);
    *mean_us = counted ? total / counted : 0;
    return teardown(&r) != 0 ? -1 : rc;
}
