/* shim_steps.c — finds the training step in the launch stream, without markers.
 *
 * The launches between two host synchronisations form a segment, summarised by
 * its length and an order-sensitive hash of (function, position in segment).
 * A training loop repeats the same segments: when the last P segments equal the
 * P before them (P = 1..8), the job is in steady state with a step of P
 * segments. Steps start at the first launch after the synchronisation that
 * ends the previous step (the loss read in a typical loop). A step boundary is
 * written when the whole step has been seen (so only complete steps are
 * counted); the first detection writes the two steps it compared (the earlier one only if it
 * starts after every step already written: steps never go back). After
 * detection the next profile.iterations steps are profiled (kernel times).
 * A segment that breaks the pattern ends the steady state; detection restarts. The break is
 * said (logged, and told to the listener's changed) only when the program closes another
 * segment after it: the last segment of a run (its teardown: a checksum, a final read) breaks
 * the pattern too, and that is no news.
 *
 * Each steady step's wall time (from one boundary to the next, on the monotonic clock) is kept
 * for the exit line's verdict (shim_steps_median_ms).
 *
 * The launch path does one relaxed atomic add; segments are closed under a
 * mutex at synchronisations, which are not on the launch path. */
#include "shim_core.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HISTORY    32
#define MAX_PERIOD 8

struct segment {
    uint64_t start, count, hash;
};

static _Atomic uint64_t seg_hash;
static _Atomic uint64_t seg_start;
static _Atomic int profiling;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct segment hist[HISTORY]; /* ring, protected by lock */
static unsigned nseg;
static unsigned period;             /* 0: not in steady state */
static unsigned phase;              /* segments of the current step seen */
static _Atomic uint64_t step_no;    /* next step number to write (read without the lock) */
static _Atomic uint64_t step_first; /* first launch of the current step */
static int profile_left;            /* steps still to profile */
static _Atomic uint64_t step_len;   /* launches per step while steady, else 0 */
static bool break_unsaid;           /* the pattern broke at break_at, not said yet */
static uint64_t break_at;
#define STEP_TIMES 64
static uint64_t boundary_ns;         /* the last steady boundary's time; 0: none */
static uint64_t step_ns[STEP_TIMES]; /* the latest steady steps' wall times, a ring */
static unsigned nstep_ns;            /* how many were kept (all time) */
static uint64_t closed_end; /* the launch after the last step written: none starts before */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

void shim_steps_launch(uint64_t seq, uint64_t func_id)
{
    uint64_t pos = seq - atomic_load_explicit(&seg_start, memory_order_relaxed);
    atomic_fetch_add_explicit(&seg_hash, mix(func_id * 0x9E3779B97F4A7C15ull + pos),
                              memory_order_relaxed);
}

uint64_t shim_steps_first(void)
{
    return atomic_load_explicit(&step_first, memory_order_relaxed);
}

uint64_t shim_steps_length(void)
{
    return atomic_load_explicit(&step_len, memory_order_relaxed);
}

uint64_t shim_steps_closed(void)
{
    return atomic_load_explicit(&step_no, memory_order_relaxed);
}

bool shim_steps_profiling(void)
{
    return atomic_load_explicit(&profiling, memory_order_relaxed);
}

static const struct segment *back(unsigned k) /* k = 0: newest */
{
    return &hist[(nseg - 1 - k) % HISTORY];
}

static bool same(const struct segment *a, const struct segment *b)
{
    return a->count == b->count && a->hash == b->hash;
}

static unsigned find_period(void)
{
    for (unsigned p = 1; p <= MAX_PERIOD && 2 * p <= nseg; p++) {
        unsigned k = 0;
        while (k < p && same(back(k), back(k + p)))
            k++;
        if (k == p)
            return p;
    }
    return 0;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A steady boundary now: the step that ends here took the time since the last one. */
static void time_boundary(bool step_ended)
{
    uint64_t t = now_ns();
    if (step_ended && boundary_ns)
        step_ns[nstep_ns++ % STEP_TIMES] = t - boundary_ns;
    boundary_ns = t;
}

static int by_value(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

double shim_steps_median_ms(void)
{
    uint64_t v[STEP_TIMES];
    pthread_mutex_lock(&lock);
    unsigned n = nstep_ns < STEP_TIMES ? nstep_ns : STEP_TIMES;
    memcpy(v, step_ns, n * sizeof *v);
    pthread_mutex_unlock(&lock);
    if (n == 0)
        return -1.0;
    qsort(v, n, sizeof *v, by_value);
    uint64_t mid = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return (double)mid / 1e6;
}

/* The program ran on after a break of the pattern: the change was real, say it. */
static void say_break(void)
{
    if (!break_unsaid)
        return;
    break_unsaid = false;
    shim_log(SHIM_LOG_INFO, "training step pattern changed at launch %llu",
             (unsigned long long)break_at);
    const struct shim_step_listener *l = shim_step_listener();
    if (l && l->changed)
        l->changed(break_at);
}

static void step_done(uint64_t first)
{
    uint64_t step = atomic_fetch_add(&step_no, 1);
    shim_trace_step(step, first);
    if (profile_left > 0 && --profile_left == 0)
        atomic_store(&profiling, 0);
    const struct shim_step_listener *l = shim_step_listener();
    if (l)
        l->step_closed(step, first, profile_left);
}

static void start_profiling(void)
{
    profile_left = shim.profile_iterations;
    atomic_store(&profiling, profile_left > 0);
    const struct shim_step_listener *l = shim_step_listener();
    if (l)
        l->steady(); /* the profiled steps are recorded for the planner */
}

static void close_segment(const struct segment *s)
{
    say_break();
    hist[nseg++ % HISTORY] = *s;
    if (period) {
        /* steady: the segment must match the one a period earlier */
        if (!same(back(0), back(period))) {
            period = 0;
            atomic_store(&step_len, 0);
            atomic_store(&profiling, 0);
            const struct shim_step_listener *l = shim_step_listener();
            if (l)
                l->unsteady();
            break_unsaid = true; /* said if the program goes on (say_break) */
            break_at = s->start;
            boundary_ns = 0;
        } else if (++phase == period) {
            time_boundary(true);
            step_done(step_first);
            phase = 0;
            step_first = closed_end = s->start + s->count;
        }
        return;
    }
    unsigned p = find_period();
    if (!p)
        return;
    period = p;
    phase = 0;
    /* The two steps compared, but not one that would start inside a step already written (a
       pattern found again after a break may reach back over it): steps never go back, and the
       segments between the last step written and the next one stay in the last. */
    if (back(2 * p - 1)->start >= closed_end)
        step_done(back(2 * p - 1)->start);
    if (back(p - 1)->start >= closed_end)
        step_done(back(p - 1)->start);
    step_first = closed_end = s->start + s->count;
    time_boundary(false);
    atomic_store(&step_len, s->start + s->count - back(p - 1)->start);
    start_profiling();
    shim_log(SHIM_LOG_INFO,
             "training step detected: %llu launches per step (%u segment%s between host "
             "synchronisations), step %llu begins at launch %llu; kernels are timed for %d "
             "step%s",
             (unsigned long long)(s->start + s->count - back(p - 1)->start), p, p == 1 ? "" : "s",
             (unsigned long long)shim_steps_closed(), (unsigned long long)(s->start + s->count),
             profile_left, profile_left == 1 ? "" : "s");
}

void shim_steps_host_sync(void)
{
    pthread_mutex_lock(&lock);
    uint64_t end = atomic_load(&shim.launch_seq);
    uint64_t start = atomic_load(&seg_start);
    if (end > start) {
        struct segment s = {start, end - start, atomic_exchange(&seg_hash, 0)};
        atomic_store(&seg_start, end);
        close_segment(&s);
    }
    pthread_mutex_unlock(&lock);
}

/* Allocations made at the last launch index that saw one: the ordinals of allocations. */
static pthread_mutex_t ord_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t ord_seq = UINT64_MAX;
static uint32_t ord_n;
static __thread uint32_t last_ordinal;

uint32_t shim_steps_count_alloc(void)
{
    uint64_t seq = atomic_load_explicit(&shim.launch_seq, memory_order_relaxed);
    pthread_mutex_lock(&ord_lock);
    uint32_t ordinal = ord_seq == seq ? ord_n : 0;
    ord_seq = seq;
    ord_n = ordinal + 1;
    pthread_mutex_unlock(&ord_lock);
    return last_ordinal = ordinal;
}

uint32_t shim_steps_last_ordinal(void)
{
    return last_ordinal;
}
