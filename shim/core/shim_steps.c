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
 * The launch path does one relaxed atomic add; segments are closed under the detector's mutex
 * at synchronisations, which are not on the launch path. All of it is the state of one
 * detector (struct shim_steps, shim_core.h): the shim's is shim.steps, a test's its own. */
#include "shim_core.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_PERIOD 8

/* The ordinal of the calling thread's last counted allocation: thread state, not a detector's
   (it hands shim_steps_count_alloc's answer on to code that cannot be given it). */
static __thread uint32_t last_ordinal;

/* Contract in shim_core.h. */
void shim_steps_init(struct shim_steps *s, _Atomic uint64_t *launch_seq)
{
    memset(s, 0, sizeof *s);
    s->launch_seq = launch_seq;
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->ord_lock, NULL);
    s->ord_seq = UINT64_MAX;
}

/* Contract in shim_core.h. */
void shim_steps_fini(struct shim_steps *s)
{
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->ord_lock);
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

void shim_steps_launch(struct shim_steps *s, uint64_t seq, uint64_t func_id)
{
    uint64_t pos = seq - atomic_load_explicit(&s->seg_start, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->seg_hash, mix(func_id * 0x9E3779B97F4A7C15ull + pos),
                              memory_order_relaxed);
}

uint64_t shim_steps_first_seq(const struct shim_steps *s)
{
    return atomic_load_explicit(&s->step_first, memory_order_relaxed);
}

uint64_t shim_steps_step_len(const struct shim_steps *s)
{
    return atomic_load_explicit(&s->step_len, memory_order_relaxed);
}

uint64_t shim_steps_closed(const struct shim_steps *s)
{
    return atomic_load_explicit(&s->step_no, memory_order_relaxed);
}

bool shim_steps_profiling(const struct shim_steps *s)
{
    return atomic_load_explicit(&s->profiling, memory_order_relaxed);
}

static const struct shim_steps_segment *back(const struct shim_steps *s, unsigned k) /* 0: newest */
{
    return &s->hist[(s->nseg - 1 - k) % SHIM_STEPS_HISTORY];
}

static bool same(const struct shim_steps_segment *a, const struct shim_steps_segment *b)
{
    return a->count == b->count && a->hash == b->hash;
}

static unsigned find_period(const struct shim_steps *s)
{
    for (unsigned p = 1; p <= MAX_PERIOD && 2 * p <= s->nseg; p++) {
        unsigned k = 0;
        while (k < p && same(back(s, k), back(s, k + p)))
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
static void time_boundary(struct shim_steps *s, bool step_ended)
{
    uint64_t t = now_ns();
    if (step_ended && s->boundary_ns)
        s->step_ns[s->nstep_ns++ % SHIM_STEPS_TIMES] = t - s->boundary_ns;
    s->boundary_ns = t;
}

static int by_value(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

double shim_steps_median_ms(struct shim_steps *s)
{
    uint64_t v[SHIM_STEPS_TIMES];
    pthread_mutex_lock(&s->lock);
    unsigned n = s->nstep_ns < SHIM_STEPS_TIMES ? s->nstep_ns : SHIM_STEPS_TIMES;
    memcpy(v, s->step_ns, n * sizeof *v);
    pthread_mutex_unlock(&s->lock);
    if (n == 0)
        return -1.0;
    qsort(v, n, sizeof *v, by_value);
    uint64_t mid = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return (double)mid / 1e6;
}

/* The program ran on after a break of the pattern: the change was real, say it. */
static void say_break(struct shim_steps *s)
{
    if (!s->break_unsaid)
        return;
    s->break_unsaid = false;
    shim_log(SHIM_LOG_INFO, "training step pattern changed at launch %llu",
             (unsigned long long)s->break_at);
    const struct shim_step_listener *l = shim_step_listener();
    if (l && l->changed)
        l->changed(s->break_at);
}

static void step_done(struct shim_steps *s, uint64_t first)
{
    uint64_t step = atomic_fetch_add(&s->step_no, 1);
    shim_trace_step(step, first);
    if (s->profile_left > 0 && --s->profile_left == 0)
        atomic_store(&s->profiling, 0);
    const struct shim_step_listener *l = shim_step_listener();
    if (l)
        l->step_closed(step, first, s->profile_left);
}

static void start_profiling(struct shim_steps *s)
{
    s->profile_left = shim.profile_iterations;
    atomic_store(&s->profiling, s->profile_left > 0);
    const struct shim_step_listener *l = shim_step_listener();
    if (l)
        l->steady(); /* the profiled steps are recorded for the planner */
}

static void close_segment(struct shim_steps *s, const struct shim_steps_segment *g)
{
    say_break(s);
    s->hist[s->nseg++ % SHIM_STEPS_HISTORY] = *g;
    if (s->period) {
        /* steady: the segment must match the one a period earlier */
        if (!same(back(s, 0), back(s, s->period))) {
            s->period = 0;
            atomic_store(&s->step_len, 0);
            atomic_store(&s->profiling, 0);
            const struct shim_step_listener *l = shim_step_listener();
            if (l)
                l->unsteady();
            s->break_unsaid = true; /* said if the program goes on (say_break) */
            s->break_at = g->start;
            s->boundary_ns = 0;
        } else if (++s->phase == s->period) {
            time_boundary(s, true);
            step_done(s, s->step_first);
            s->phase = 0;
            s->step_first = s->closed_end = g->start + g->count;
        }
        return;
    }
    unsigned p = find_period(s);
    if (!p)
        return;
    s->period = p;
    s->phase = 0;
    /* The two steps compared, but not one that would start inside a step already written (a
       pattern found again after a break may reach back over it): steps never go back, and the
       segments between the last step written and the next one stay in the last. */
    if (back(s, 2 * p - 1)->start >= s->closed_end)
        step_done(s, back(s, 2 * p - 1)->start);
    if (back(s, p - 1)->start >= s->closed_end)
        step_done(s, back(s, p - 1)->start);
    s->step_first = s->closed_end = g->start + g->count;
    time_boundary(s, false);
    atomic_store(&s->step_len, g->start + g->count - back(s, p - 1)->start);
    start_profiling(s);
    shim_log(SHIM_LOG_INFO,
             "training step detected: %llu launches per step (%u segment%s between host "
             "synchronisations), step %llu begins at launch %llu; kernels are timed for %d "
             "step%s",
             (unsigned long long)(g->start + g->count - back(s, p - 1)->start), p,
             p == 1 ? "" : "s", (unsigned long long)shim_steps_closed(s),
             (unsigned long long)(g->start + g->count), s->profile_left,
             s->profile_left == 1 ? "" : "s");
}

void shim_steps_host_sync(struct shim_steps *s)
{
    pthread_mutex_lock(&s->lock);
    uint64_t end = atomic_load(s->launch_seq);
    uint64_t start = atomic_load(&s->seg_start);
    if (end > start) {
        struct shim_steps_segment g = {start, end - start, atomic_exchange(&s->seg_hash, 0)};
        atomic_store(&s->seg_start, end);
        close_segment(s, &g);
    }
    pthread_mutex_unlock(&s->lock);
}

/* Allocations made at the last launch index that saw one: the ordinals of allocations. */
uint32_t shim_steps_count_alloc(struct shim_steps *s)
{
    uint64_t seq = atomic_load_explicit(s->launch_seq, memory_order_relaxed);
    pthread_mutex_lock(&s->ord_lock);
    uint32_t ordinal = s->ord_seq == seq ? s->ord_n : 0;
    s->ord_seq = seq;
    s->ord_n = ordinal + 1;
    pthread_mutex_unlock(&s->ord_lock);
    return last_ordinal = ordinal;
}

uint32_t shim_steps_last_ordinal(void)
{
    return last_ordinal;
}
