/* shim_timing.c — kernel durations in profiled steps: an event before and after each launch;
 * and the link's speed: the same around the residency manager's own copies while the step model
 * is recorded (each direction's bytes over its copies' time, for the planner's link).
 *
 * Only during profiled steps (shim_steps_profiling) and never on a capturing
 * stream. Event pairs come from a pool created on first use; pairs in flight
 * are read back at host synchronisations, once their closing event has
 * completed, and written as kernel-time records. If events cannot be created
 * the launch is simply not timed. */
#include "shim_core.h"

#define PAIRS 4096

enum pair_kind { PAIR_KERNEL, PAIR_TO_HOST, PAIR_TO_DEVICE };

struct pair {
    CUevent start, end;
    uint64_t seq;   /* PAIR_KERNEL: the launch */
    uint64_t bytes; /* a copy: its bytes */
    enum pair_kind kind;
    bool busy, closed;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct pair pairs[PAIRS]; /* protected by lock */
static unsigned next_free;
/* Copies timed each way (index: to the device). The link's figures settle within a few dozen
   copies; timing every copy would add event records and queries for nothing. */
#define COPY_SAMPLES 64
static unsigned copies_timed[2]; /* protected by lock */

static CUresult record(CUevent e, CUstream s, bool per_thread)
{
    shim_fn_cuEventRecord rec = per_thread ? shim.real.cuEventRecord_ptsz : shim.real.cuEventRecord;
    return rec ? rec(e, s) : CUDA_ERROR_NOT_FOUND;
}

static int take_pair(void)
{
    for (unsigned k = 0; k < PAIRS; k++) {
        unsigned i = (next_free + k) % PAIRS;
        struct pair *p = &pairs[i];
        if (p->busy)
            continue;
        if (!p->start && (shim.real.cuEventCreate(&p->start, 0) != CUDA_SUCCESS ||
                          shim.real.cuEventCreate(&p->end, 0) != CUDA_SUCCESS)) {
            SHIM_LOG_ONCE(SHIM_LOG_WARN, "cannot create timing events: kernels not timed");
            return -1;
        }
        p->busy = true;
        p->closed = false;
        next_free = (i + 1) % PAIRS;
        return (int)i;
    }
    return -1; /* all in flight: this launch is not timed */
}

/* Takes a pair and records its opening event on stream (lock held); the slot, or -1. */
static int open_pair(CUstream stream, bool per_thread)
{
    int slot = take_pair();
    if (slot >= 0 && record(pairs[slot].start, stream, per_thread) != CUDA_SUCCESS) {
        pairs[slot].busy = false;
        slot = -1;
    }
    return slot;
}

/* Records slot's closing event on stream and what it timed; a failed record frees it. */
static void close_pair(int slot, CUstream stream, bool per_thread, enum pair_kind kind,
                       uint64_t seq, uint64_t bytes)
{
    if (slot < 0)
        return;
    pthread_mutex_lock(&lock);
    struct pair *p = &pairs[slot];
    p->kind = kind;
    p->seq = seq;
    p->bytes = bytes;
    p->closed = record(p->end, stream, per_thread) == CUDA_SUCCESS;
    if (!p->closed)
        p->busy = false;
    pthread_mutex_unlock(&lock);
}

int shim_timing_begin(CUstream stream, bool per_thread)
{
    if (!shim.real.cuEventCreate || shim_capture_active(stream, per_thread))
        return -1;
    pthread_mutex_lock(&lock);
    int slot = open_pair(stream, per_thread);
    pthread_mutex_unlock(&lock);
    return slot;
}

void shim_timing_end(int slot, CUstream stream, bool per_thread, uint64_t seq)
{
    close_pair(slot, stream, per_thread, PAIR_KERNEL, seq, 0);
}

int shim_timing_copy_begin(CUstream stream, bool to_device)
{
    if (!shim.real.cuEventCreate || !shim_step_studying())
        return -1;
    pthread_mutex_lock(&lock);
    int slot = copies_timed[to_device] < COPY_SAMPLES ? open_pair(stream, false) : -1;
    if (slot >= 0)
        copies_timed[to_device]++;
    pthread_mutex_unlock(&lock);
    return slot;
}

void shim_timing_copy_end(int slot, CUstream stream, bool to_device, uint64_t bytes)
{
    close_pair(slot, stream, false, to_device ? PAIR_TO_DEVICE : PAIR_TO_HOST, 0, bytes);
}

void shim_timing_cancel(int slot)
{
    if (slot < 0)
        return;
    pthread_mutex_lock(&lock);
    pairs[slot].busy = false;
    pthread_mutex_unlock(&lock);
}

/* Hands a completed pair's time on: a kernel's to the trace and the planner's recording, a
   copy's to the planner's link. */
static void report(const struct pair *p, double usec)
{
    if (p->kind == PAIR_KERNEL)
        shim_trace_kernel_time(p->seq, usec);
    else
        shim_trace_link_time(p->kind == PAIR_TO_DEVICE, p->bytes, usec);
    const struct shim_step_listener *l = shim_step_listener();
    if (!shim_step_studying() || !l)
        return;
    if (p->kind == PAIR_KERNEL)
        l->kernel_time(p->seq, usec);
    else
        l->link_time(p->kind == PAIR_TO_DEVICE, p->bytes, usec);
}

void shim_timing_collect(void)
{
    if (!shim.real.cuEventQuery || !shim.real.cuEventElapsedTime_v2)
        return;
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < PAIRS; i++) {
        struct pair *p = &pairs[i];
        if (!p->busy || !p->closed || shim.real.cuEventQuery(p->end) != CUDA_SUCCESS)
            continue;
        float ms;
        if (shim.real.cuEventElapsedTime_v2(&ms, p->start, p->end) == CUDA_SUCCESS)
            report(p, (double)ms * 1000.0);
        p->busy = false;
    }
    pthread_mutex_unlock(&lock);
}
