/* shim_timing.c — kernel durations in profiled steps: an event before and after each launch;
 * the time a stream stood idle before a launch: from the closing event of the launch before it
 * on the same stream to the launch's opening event (the program's host work between launches,
 * which sets the pace of a host-bound step); and the link's speed: the same around the residency
 * manager's own copies while the step model is recorded (each direction's bytes over its copies'
 * time, for the planner's link).
 *
 * Only during profiled steps (shim_steps_profiling) and never on a capturing
 * stream. Event pairs come from a pool created on first use; pairs in flight
 * are read back at host synchronisations, once their closing event has
 * completed, and written as kernel-time records. If events cannot be created
 * the launch is simply not timed. A kernel pair is the tail of its stream until
 * the next one opens there, and is kept (its closing event unrecorded again)
 * until the pair after it has been read: the idle time needs both. An idle time
 * is reported only when the two launches are consecutive (seq and seq + 1), so
 * that a stream's first launch after untimed work, or after a launch on another
 * stream, reports none (the model's single stream could not place it). */
#include "shim_core.h"

#include <math.h>


#define PAIRS 4096

enum pair_kind { PAIR_KERNEL, PAIR_TO_HOST, PAIR_TO_DEVICE };

struct pair {
    CUevent start, end;
    uint64_t seq;   /* PAIR_KERNEL: the launch */
    uint64_t bytes; /* a copy: its bytes */
    enum pair_kind kind;
    bool busy, closed;
    bool read;   /* its time was reported; kept while tail or held */
    bool tail;   /* the latest kernel pair of its stream (tails[]) */
    int held;    /* pairs whose idle time needs this one's closing event */
    int prev;    /* a kernel pair: the one before it on its stream, or -1 */
    uint64_t disturbed_open, disturbed_close; /* `disturbed` before its records */
};

/* Residency's driver calls so far (shim_timing_disturbed): an idle time is the program's own only
   where none came between the two launches' records. */
static _Atomic uint64_t disturbed;

void shim_timing_disturbed(void)
{
    atomic_fetch_add_explicit(&disturbed, 1, memory_order_relaxed);
}

/* The latest kernel pair of each stream seen (a stream the calling thread alone can name, the
   per-thread default stream, has none). */
#define TAILS 16
static struct {
    CUstream stream;
    int slot; /* -1: none */
} tails[TAILS]; /* protected by lock */
static unsigned ntails;

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

/* What one event record costs the host, in microseconds of the device's clock: a kernel pair
   adds two records to the host's work between two launches, which a step whose pace the host
   sets pays and the step without timing does not. The planner takes them off again (the step
   listener's kernel_idle, plan_build_timing_cost). Measured once, on a stream of libshim's own that is idle: three
   records back to back, and the time between the first and the last over two; 0 when it cannot
   be measured. */
static double record_us = -1; /* protected by lock; -1: not measured yet */

static double measure_record_us(void)
{
    static CUevent ev[3];
    CUstream s = NULL;
    float ms = 0;
    if (!shim.real.cuStreamCreate || !shim.real.cuEventSynchronize ||
        shim.real.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
        return 0;
    bool ok = true;
    for (int i = 0; i < 3 && ok; i++)
        ok = (ev[i] || shim.real.cuEventCreate(&ev[i], 0) == CUDA_SUCCESS) &&
             shim.real.cuEventRecord(ev[i], s) == CUDA_SUCCESS;
    ok = ok && shim.real.cuEventSynchronize(ev[2]) == CUDA_SUCCESS &&
         shim.real.cuEventElapsedTime_v2(&ms, ev[0], ev[2]) == CUDA_SUCCESS && ms >= 0;
    if (shim.real.cuStreamDestroy_v2)
        shim.real.cuStreamDestroy_v2(s);
    double us = ok ? (double)ms * 1000.0 / 2 : 0;
    shim_log(SHIM_LOG_INFO,
             "kernel timing: an event record costs the host %.2f us%s; the planner takes the "
             "timing's own records off a step whose pace the host sets",
             us, ok ? " (measured)" : " (not measurable: taken as 0)");
    return us;
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
        *p = (struct pair){.start = p->start, .end = p->end, .busy = true, .prev = -1};
        next_free = (i + 1) % PAIRS;
        return (int)i;
    }
    return -1; /* all in flight: this launch is not timed */
}

/* Takes a pair and records its opening event on stream (lock held); the slot, or -1. */
static int open_pair(CUstream stream, bool per_thread)
{
    int slot = take_pair();
    if (slot >= 0)
        pairs[slot].disturbed_open = atomic_load_explicit(&disturbed, memory_order_relaxed);
    if (slot >= 0 && record(pairs[slot].start, stream, per_thread) != CUDA_SUCCESS) {
        pairs[slot].busy = false;
        slot = -1;
    }
    return slot;
}

/* Gives slot back once nothing needs it: read (or never to be), not a tail, held by none. */
static void release(int slot)
{
    struct pair *p = &pairs[slot];
    if (p->read && !p->tail && p->held == 0)
        p->busy = false;
}

/* slot is done with the pair before it on its stream (lock held). */
static void drop_prev(int slot)
{
    int prev = pairs[slot].prev;
    if (prev < 0)
        return;
    pairs[slot].prev = -1;
    pairs[prev].held--;
    release(prev);
}

/* The tails[] entry of stream, made when new; NULL for a stream that has none or no room. */
static int *tail_of(CUstream stream, bool per_thread)
{
    if ((per_thread && !stream) || stream == CU_STREAM_PER_THREAD)
        return NULL;
    for (unsigned i = 0; i < ntails; i++)
        if (tails[i].stream == stream)
            return &tails[i].slot;
    if (ntails == TAILS)
        return NULL;
    tails[ntails].stream = stream;
    tails[ntails].slot = -1;
    return &tails[ntails++].slot;
}

/* A kernel pair just opened on stream becomes its tail, linked to the one before (lock held). */
static void link_tail(int slot, CUstream stream, bool per_thread)
{
    int *t = tail_of(stream, per_thread);
    if (!t)
        return;
    int prev = *t;
    if (prev >= 0) {
        pairs[prev].tail = false;
        if (pairs[prev].closed) {
            pairs[slot].prev = prev;
            pairs[prev].held++;
        }
        release(prev);
    }
    *t = slot;
    pairs[slot].tail = true;
}

/* slot will never be read (its launch failed, its closing event could not be recorded): it stops
   being its stream's tail and holding the one before, and goes back (lock held). */
static void abandon(int slot)
{
    struct pair *p = &pairs[slot];
    for (unsigned i = 0; i < ntails; i++)
        if (tails[i].slot == slot)
            tails[i].slot = -1;
    p->tail = false;
    drop_prev(slot);
    p->read = true;
    p->closed = false;
    release(slot);
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
    p->disturbed_close = atomic_load_explicit(&disturbed, memory_order_relaxed);
    p->closed = record(p->end, stream, per_thread) == CUDA_SUCCESS;
    if (!p->closed)
        abandon(slot);
    pthread_mutex_unlock(&lock);
}

int shim_timing_begin(CUstream stream, bool per_thread)
{
    if (!shim.real.cuEventCreate || shim_capture_active(stream, per_thread))
        return -1;
    pthread_mutex_lock(&lock);
    if (record_us < 0)
        record_us = measure_record_us();
    int slot = open_pair(stream, per_thread);
    if (slot >= 0)
        link_tail(slot, stream, per_thread);
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
    abandon(slot);
    pthread_mutex_unlock(&lock);
}

/* Hands a completed pair's time on: a kernel's to the trace and the planner's recording, with
   the idle time before it (NAN: none; < 0: disturbed), a copy's to the planner's link. */
static void report(const struct pair *p, double usec, double idle_usec)
{
    if (p->kind == PAIR_KERNEL) {
        shim_trace_kernel_time(p->seq, usec);
        if (!isnan(idle_usec))
            shim_trace_kernel_idle(p->seq, idle_usec, record_us > 0 ? record_us : 0);
    } else
        shim_trace_link_time(p->kind == PAIR_TO_DEVICE, p->bytes, usec);
    const struct shim_step_listener *l = shim_step_listener();
    if (!shim_step_studying() || !l)
        return;
    if (p->kind == PAIR_KERNEL) {
        l->kernel_time(p->seq, usec);
        if (!isnan(idle_usec) && l->kernel_idle)
            l->kernel_idle(p->seq, idle_usec, record_us > 0 ? record_us : 0);
    } else {
        l->link_time(p->kind == PAIR_TO_DEVICE, p->bytes, usec);
    }
}

/* The idle time before kernel pair p (its closing event complete, so that of the pair before it on
   the same stream too): NAN when the two launches are not consecutive or cannot be timed, -1 when
   residency made driver calls between them (disturbed). */
static double idle_before(const struct pair *p)
{
    if (p->prev < 0)
        return NAN;
    const struct pair *q = &pairs[p->prev];
    float ms;
    if (q->seq + 1 != p->seq ||
        shim.real.cuEventElapsedTime_v2(&ms, q->end, p->start) != CUDA_SUCCESS || !(ms >= 0))
        return NAN;
    return q->disturbed_close != p->disturbed_open ? -1 : (double)ms * 1000.0;
}

void shim_timing_collect(void)
{
    if (!shim.real.cuEventQuery || !shim.real.cuEventElapsedTime_v2)
        return;
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < PAIRS; i++) {
        struct pair *p = &pairs[i];
        if (!p->busy || p->read || !p->closed || shim.real.cuEventQuery(p->end) != CUDA_SUCCESS)
            continue;
        float ms;
        if (shim.real.cuEventElapsedTime_v2(&ms, p->start, p->end) == CUDA_SUCCESS)
            report(p, (double)ms * 1000.0, idle_before(p));
        p->read = true;
        drop_prev((int)i);
        release((int)i);
    }
    pthread_mutex_unlock(&lock);
}
