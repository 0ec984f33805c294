/* free_wait_prog.c — what a free of a managed allocation waits for (tests/shim/test_free_wait.sh).
 *
 * cuMemFree waits for the program's queued work; under libshim a managed range is freed by the
 * shim, which must wait for the same work, however the program queued it, and (where it can tell
 * the program's streams apart) without a context synchronisation, which would also wait for the
 * shim's own copies. Each case queues a slow kernel (10 ms of virtual time), frees a managed
 * buffer, and prints one line:
 *   CASE done=D ctx_syncs=N real_frees=F
 * D is 1 if the slow kernel was complete when cuMemFree returned, N the context
 * synchronisations and F the real cuMemFree calls during the free (the simulator counts them).
 *
 *   free_wait_prog created     kernel on a stream the program created
 *   free_wait_prog legacy      kernel on the legacy NULL stream
 *   free_wait_prog destroyed   kernel on a created stream, destroyed before the free
 *   free_wait_prog own-ptds    kernel on this thread's per-thread stream
 *   free_wait_prog other-ptds  kernel on another thread's per-thread stream
 *   free_wait_prog small-moving  kernel on a created stream, then the free of a small driver
 *                              allocation (below min_managed_bytes) while libshim evicts: the
 *                              free waits for the kernel, not for the eviction, and the real
 *                              cuMemFree comes later (printed after: later_frees=L, the real
 *                              frees made by the program's next allocation once the moves end)
 *   free_wait_prog small-idle  the same with nothing moving: freed at once */
#include "simgpu.h"

#include <cuda.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "prog.h"

#define BUF ((size_t)4 << 20)

/* Adds 1 to the first word of its buffer (slow: its virtual cost is set below). */
static void k_slow(void **params)
{
    uint32_t *p = *(uint32_t **)params[0];
    p[0] += 1;
}

static CUfunction slow_fn(void)
{
    static const size_t sizes[] = {8};
    CUfunction f = simgpu_register("slow", k_slow, 1, sizes);
    simgpu_set_cost(f, 10000);
    return f;
}

/* The per-thread stream is named by its handle, CU_STREAM_PER_THREAD. */
static CUresult launch_slow(CUstream s, CUdeviceptr p)
{
    void *args[] = {&p};
    return cuLaunchKernel(slow_fn(), 1, 1, 1, 1, 1, 1, 0, s, args, NULL);
}

struct other {
    CUcontext ctx;
    CUdeviceptr work;
    CUevent done;
};

/* Another thread: the slow kernel on its per-thread stream, then an event after it. */
static void *other_thread(void *arg)
{
    struct other *o = arg;
    CK(cuCtxSetCurrent(o->ctx));
    CK(launch_slow(CU_STREAM_PER_THREAD, o->work));
    CK(cuEventRecord(o->done, CU_STREAM_PER_THREAD));
    return NULL;
}

/* The small-* cases: with SHIM_BUDGET=64MiB and SHIM_MIN_MANAGED_BYTES=1MiB (the test's run), a
   managed 32 MiB buffer is filled, evicted to make room for a 28 MiB one (then freed), and
   restored by the slow kernel, which touches it: the restore's copy runs when the small buffer
   is freed ("moving"; "idle" has the slow kernel touch `work`, nothing moves). */
/* Frees p and prints "WHICH done=D ctx_syncs=N real_frees=N": whether the work before the event
 * done had completed when the free returned, and the context synchronizations and frees that
 * reached the driver during the free (the test's verdicts). */
static void free_counted(const char *which, CUdeviceptr p, CUevent done)
{
    unsigned long syncs = simgpu_calls("cuCtxSynchronize");
    unsigned long frees = simgpu_calls("cuMemFree_v2");
    CK(cuMemFree(p));
    int complete = cuEventQuery(done) == CUDA_SUCCESS;
    printf("%s done=%d ctx_syncs=%lu real_frees=%lu\n", which, complete,
           simgpu_calls("cuCtxSynchronize") - syncs, simgpu_calls("cuMemFree_v2") - frees);
}

static int small_free(const char *which, CUdeviceptr work, CUevent done)
{
    CUdeviceptr big = 0, more, small;
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    if (!strcmp(which, "small-moving")) {
        CK(cuMemAlloc(&big, (size_t)32 << 20));
        CK(cuMemsetD8(big, 3, (size_t)32 << 20));
        CK(cuMemAlloc(&more, (size_t)28 << 20)); /* over the budget: big is evicted */
        CK(cuMemFree(more));
    }
    CK(cuMemAlloc(&small, 4096));
    CK(launch_slow(s, big ? big : work));
    CK(cuEventRecord(done, s));
    free_counted(which, small, done);
    CK(cuCtxSynchronize()); /* the moves end */
    unsigned long frees = simgpu_calls("cuMemFree_v2");
    CK(cuMemAlloc(&small, 4096)); /* the next allocation makes the kept free */
    printf("%s later_frees=%lu\n", which, simgpu_calls("cuMemFree_v2") - frees);
    CK(cuMemFree(small));
    CK(cuStreamDestroy(s));
    if (big)
        CK(cuMemFree(big));
    return 0;
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "";
    CUcontext ctx = prog_primary_ctx();
    CUdeviceptr managed, work;
    CK(cuMemAlloc(&managed, BUF));
    CK(cuMemAlloc(&work, BUF));
    CK(cuMemsetD8(managed, 1, BUF));
    CK(cuMemsetD8(work, 0, BUF));
    CUevent done;
    CK(cuEventCreate(&done, CU_EVENT_DISABLE_TIMING));
    CUstream s = NULL;
    if (!strcmp(which, "created") || !strcmp(which, "destroyed")) {
        CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
        CK(launch_slow(s, work));
        CK(cuEventRecord(done, s));
        if (!strcmp(which, "destroyed"))
            CK(cuStreamDestroy(s));
    } else if (!strcmp(which, "legacy")) {
        CK(launch_slow(NULL, work));
        CK(cuEventRecord(done, NULL));
    } else if (!strcmp(which, "own-ptds")) {
        CK(launch_slow(CU_STREAM_PER_THREAD, work));
        CK(cuEventRecord(done, CU_STREAM_PER_THREAD));
    } else if (!strcmp(which, "other-ptds")) {
        struct other o = {ctx, work, done};
        pthread_t t;
        if (pthread_create(&t, NULL, other_thread, &o) != 0 || pthread_join(t, NULL) != 0)
            return 1;
    } else if (!strcmp(which, "small-moving") || !strcmp(which, "small-idle")) {
        return small_free(which, work, done);
    } else {
        fprintf(stderr, "usage: free_wait_prog created|legacy|destroyed|own-ptds|other-ptds|"
                        "small-moving|small-idle\n");
        return 2;
    }
    free_counted(which, managed, done);
    CK(cuCtxSynchronize());
    if (!strcmp(which, "created"))
        CK(cuStreamDestroy(s));
    CK(cuMemFree(work));
    return 0;
}
