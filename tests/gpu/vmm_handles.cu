// vmm_handles.cu — what moving memory costs the host on a real GPU, per physical handle (issue
// 23; docs/residency.md). Run by `make gpu-facts`.
//
// Prints a JSON line per figure as it is measured, then the figures as markdown tables, each with
// ratios taken within this run; exits 77 when no GPU is usable, 1 when any call failed. A failed
// call prints a "not ok" line and its section moves on; every wait on the device has a deadline,
// and a watchdog (or SIGTERM, as `timeout` sends) ends the run after WATCHDOG_S seconds with the
// tables as far as they got.
//   1. cuMemCreate, cuMemMap, cuMemSetAccess, cuMemUnmap, cuMemRelease on 64 MiB held as 1, 4 and
//      32 handles, device- and host-located: one map per handle, access set and unmap over the
//      whole range (as libshim does), and access set per handle for comparison; each figure
//      against the same call's on one handle;
//   2. remaps (unmap the range, map its handles, set access) per second with 1, 2 and 4 threads,
//      each on its own range of 1, 4 or 32 handles, against one thread's;
//   3. the host time of a tiny launch while another thread remaps, against nobody remapping: a
//      driver lock shared by VMM calls and launches shows as a slower launch (skipped where the
//      CUDA runtime gives no kernel: the simulated device runs sections 1, 2 and 4 only);
//   4. 64 MiB of managed memory moved each way by cuMemPrefetchAsync (one call, one per 2 MiB)
//      and cuMemPrefetchBatchAsync (CUDA 13), beside cuMemcpyAsync with pinned host memory (the
//      link).
#include "gpu_check.h"
#include <cuda_runtime.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

enum {
    MIB = 1 << 20,
    REPEATS = 9,           // timed rounds per figure of sections 1 and 4, after one warm-up
    MAX_HANDLES = 32,      // 64 MiB as 2 MiB handles, the granularity
    MAX_THREADS = 4,       // remapping threads of section 2
    MAX_SAMPLES = 1 << 16, // per-remap times kept per thread
    REMAP_WINDOW_MS = 1000,
    LAUNCHES = 20000, // per background of section 3, unless LAUNCH_WINDOW_MS passes first
    LAUNCH_WINDOW_MS = 4000,
    LAUNCH_BATCH = 64, // launches between two waits, so that the queue never fills
    WAIT_MS = 10000,   // the longest any wait on the device may take
    WATCHDOG_S = 200,  // make gpu-facts gives the program 240 s
    PIECES = 32,       // section 4's per-piece prefetches: 2 MiB each
};
static const size_t RANGE = 64 * (size_t)MIB;

// A wait passed its deadline: the device is stuck, and the later sections are skipped.
static bool stuck;

// The markdown tables: appended to by the main thread as figures are measured, printed at the end
// (or by the watchdog, as far as they got).
static char report[1 << 15];
static size_t report_len;

static void report_add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report_add(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(report + report_len, sizeof report - report_len, fmt, ap);
    va_end(ap);
    if (n > 0)
        report_len += (size_t)n < sizeof report - report_len ? (size_t)n : 0;
}

static void watchdog(int sig)
{
    static const char line[] = "not ok - watchdog: the run took too long; the tables so far:\n";
    (void)sig;
    (void)!write(1, line, sizeof line - 1);
    (void)!write(1, report, report_len);
    _exit(1);
}

__global__ void tiny() {}

struct Stats {
    double median, p99, min, max;
};

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v[0..n), n > 0, and returns its median, 99th percentile and extremes. */
static Stats summarise(double *v, int n)
{
    qsort(v, n, sizeof *v, by_value);
    double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    int p99 = (99 * n + 99) / 100 - 1;
    return Stats{median, v[p99], v[0], v[n - 1]};
}

/* Milliseconds since *t0, which moves to now. */
static double lap(double *t0)
{
    double t = now_ms(), d = t - *t0;
    *t0 = t;
    return d;
}

/* Polls ev until it completes; false, after a "not ok" line, on an error or after WAIT_MS (and
   then the device is taken as stuck). */
static bool wait_event(CUevent ev, const char *what)
{
    double end = now_ms() + WAIT_MS;
    CUresult r;
    while ((r = cuEventQuery(ev)) == CUDA_ERROR_NOT_READY) {
        if (now_ms() > end) {
            printf("not ok - %s: not done after %d ms\n", what, (int)WAIT_MS);
            count_failure();
            stuck = true;
            return false;
        }
    }
    return CU_OK(r);
}

/* ---- 1. VMM calls per handle ---- */

enum Step { CREATE, MAP, ACCESS_RANGE, UNMAP, ACCESS_EACH, RELEASE, STEPS };
static const char *const step_call[STEPS] = {"cuMemCreate", "cuMemMap",       "cuMemSetAccess",
                                             "cuMemUnmap",  "cuMemSetAccess", "cuMemRelease"};
static const bool step_whole[STEPS] = {false, false, true, true, false, false};

/* Maps h[0..n) over va, one call per piece of size; returns how many were mapped. */
static int map_each(CUdeviceptr va, size_t size, const CUmemGenericAllocationHandle *h, int n)
{
    int i = 0;
    while (i < n && CU_OK(cuMemMap(va + i * size, size, 0, h[i], 0)))
        i++;
    return i;
}

/* Unmaps what map_each mapped: in one call when all n pieces are, else piece by piece (after a
   failure). Returns whether every call succeeded. */
static bool unmap_mapped(CUdeviceptr va, size_t size, int mapped, int n)
{
    if (mapped == n)
        return CU_OK(cuMemUnmap(va, n * size));
    bool ok = true;
    for (int i = 0; i < mapped; i++)
        ok = CU_OK(cuMemUnmap(va + i * size, size)) && ok;
    return ok;
}

/* One round on the free range va: times each step (ms into t) on n handles of RANGE / n bytes
   made with p, and leaves va free. Returns whether every call succeeded. */
static bool vmm_round(CUdeviceptr va, int n, const CUmemAllocationProp *p, double t[STEPS])
{
    const size_t size = RANGE / n;
    const CUmemAccessDesc d = rw_on_device();
    CUmemGenericAllocationHandle h[MAX_HANDLES];
    int made = 0;
    double t0 = now_ms();
    while (made < n && CU_OK(cuMemCreate(&h[made], size, p, 0)))
        made++;
    t[CREATE] = lap(&t0);
    int mapped = made == n ? map_each(va, size, h, n) : 0;
    t[MAP] = lap(&t0);
    bool ok = mapped == n && CU_OK(cuMemSetAccess(va, RANGE, &d, 1));
    t[ACCESS_RANGE] = lap(&t0);
    ok = unmap_mapped(va, size, mapped, n) && ok;
    t[UNMAP] = lap(&t0);
    mapped = ok ? map_each(va, size, h, n) : 0; // again, access set one call per handle
    ok = ok && mapped == n;
    t0 = now_ms();
    for (int i = 0; ok && i < n; i++)
        ok = CU_OK(cuMemSetAccess(va + i * size, size, &d, 1));
    t[ACCESS_EACH] = lap(&t0);
    ok = unmap_mapped(va, size, mapped, n) && ok;
    t0 = now_ms();
    for (int i = 0; i < made; i++)
        ok = CU_OK(cuMemRelease(h[i])) && ok;
    t[RELEASE] = lap(&t0);
    return ok;
}

/* Reports one step's figure over `rounds` rounds of n handles; one_ms is the same step's median on
   one handle (-1: this is that figure; 0: not measured). Returns the median. */
static double vmm_figure(const char *where, int n, int step, double t[][STEPS], int rounds,
                         double one_ms)
{
    double v[REPEATS];
    for (int r = 0; r < rounds; r++)
        v[r] = t[r][step];
    Stats s = summarise(v, rounds);
    int calls = step_whole[step] ? 1 : n;
    const char *how = step_whole[step] ? "whole range" : "per handle";
    if (one_ms < 0)
        one_ms = s.median;
    double vs_one = one_ms > 0 ? s.median / one_ms : 0;
    printf("{\"figure\":\"vmm_call\",\"location\":\"%s\",\"handles\":%d,\"call\":\"%s\","
           "\"how\":\"%s\",\"calls\":%d,\"rounds\":%d,\"median_ms\":%.4f,\"min_ms\":%.4f,"
           "\"max_ms\":%.4f,\"us_per_call\":%.2f,\"us_per_handle\":%.2f,\"vs_one_handle\":%.3f}\n",
           where, n, step_call[step], how, calls, rounds, s.median, s.min, s.max,
           s.median * 1e3 / calls, s.median * 1e3 / n, vs_one);
    char ratio[32] = "n/a";
    if (one_ms > 0)
        snprintf(ratio, sizeof ratio, "%.2fx", vs_one);
    report_add("| %s | %d x %zu MiB | %s (%s) | %d | %.3f | %.3f | %.3f | %.1f | %.1f | %s |\n",
               where, n, RANGE / n / MIB, step_call[step], how, calls, s.median, s.min, s.max,
               s.median * 1e3 / calls, s.median * 1e3 / n, ratio);
    return s.median;
}

/* Section 1 at one location: REPEATS rounds, after one warm-up, for each handle count. */
static void vmm_calls(const char *where, const CUmemAllocationProp *p)
{
    static const int counts[] = {1, 4, 32}; // 1 first: the others are taken against it
    double one[STEPS] = {0};
    size_t gran = 0;
    if (!CU_OK(cuMemGetAllocationGranularity(&gran, p, CU_MEM_ALLOC_GRANULARITY_MINIMUM)))
        return;
    for (int n : counts) {
        if ((RANGE / n) % gran) {
            printf("skip - %s: %zu-byte handles are not whole granules of %zu bytes\n", where,
                   RANGE / n, gran);
            continue;
        }
        CUdeviceptr va = 0;
        if (!CU_OK(cuMemAddressReserve(&va, RANGE, 0, 0, 0)))
            return;
        double t[REPEATS][STEPS];
        int got = 0;
        for (int r = -1; r < REPEATS && vmm_round(va, n, p, t[got]); r++)
            got += r >= 0; // the warm-up round (r = -1) is overwritten
        CU_OK(cuMemAddressFree(va, RANGE));
        for (int s = 0; got > 0 && s < STEPS; s++) {
            double median = vmm_figure(where, n, s, t, got, n == 1 ? -1 : one[s]);
            if (n == 1)
                one[s] = median;
        }
    }
}

/* ---- 2 and 3. Threads that remap in a loop ---- */

enum CrewState { WAIT, RUN, STOP };

/* One thread's own 64 MiB range, backed by device handles, remapped until the crew stops. */
struct Remapper {
    CUcontext ctx;
    int handles, mapped; // mapped: how many of h map_each mapped last
    CUdeviceptr va;
    CUmemGenericAllocationHandle h[MAX_HANDLES];
    const int *state; // its crew's CrewState, read atomically
    double *us;       // host time of each remap, the first MAX_SAMPLES
    int remaps;
};

/* Remappers on threads of their own; threads = how many were started. */
struct Crew {
    Remapper m[MAX_THREADS];
    pthread_t t[MAX_THREADS];
    int opened, threads, state;
    double t_run;
};

static bool remap(Remapper *m)
{
    const size_t size = RANGE / m->handles;
    const CUmemAccessDesc d = rw_on_device();
    if (!unmap_mapped(m->va, size, m->mapped, m->handles))
        return false;
    m->mapped = map_each(m->va, size, m->h, m->handles);
    return m->mapped == m->handles && CU_OK(cuMemSetAccess(m->va, RANGE, &d, 1));
}

static void *remap_loop(void *arg)
{
    Remapper *m = (Remapper *)arg;
    bool ok = CU_OK(cuCtxSetCurrent(m->ctx));
    while (__atomic_load_n(m->state, __ATOMIC_ACQUIRE) == WAIT)
        sched_yield();
    while (ok && __atomic_load_n(m->state, __ATOMIC_ACQUIRE) == RUN) {
        double t0 = now_ms();
        ok = remap(m);
        if (ok && m->remaps < MAX_SAMPLES)
            m->us[m->remaps] = (now_ms() - t0) * 1e3;
        m->remaps += ok;
    }
    return NULL;
}

/* Reserves m's range and backs it with n mapped device handles. Returns whether it all
   worked; remapper_close undoes what did. */
static bool remapper_open(Remapper *m, CUcontext ctx, int n, const int *state, double *us)
{
    const CUmemAllocationProp p = prop_at(CU_MEM_LOCATION_TYPE_DEVICE);
    const CUmemAccessDesc d = rw_on_device();
    *m = Remapper{ctx, 0, 0, 0, {}, state, us, 0};
    if (!CU_OK(cuMemAddressReserve(&m->va, RANGE, 0, 0, 0)))
        return false;
    while (m->handles < n && CU_OK(cuMemCreate(&m->h[m->handles], RANGE / n, &p, 0)))
        m->handles++;
    if (m->handles < n)
        return false;
    m->mapped = map_each(m->va, RANGE / n, m->h, n);
    return m->mapped == n && CU_OK(cuMemSetAccess(m->va, RANGE, &d, 1));
}

static void remapper_close(Remapper *m)
{
    if (m->handles)
        unmap_mapped(m->va, RANGE / m->handles, m->mapped, m->handles);
    for (int i = 0; i < m->handles; i++)
        CU_OK(cuMemRelease(m->h[i]));
    if (m->va)
        CU_OK(cuMemAddressFree(m->va, RANGE));
}

/* Starts k threads, each remapping its own range of n handles from now on. Returns whether all
   started; crew_stop ends those that did. */
static bool crew_start(Crew *c, CUcontext ctx, int k, int n)
{
    static double samples[MAX_THREADS][MAX_SAMPLES];
    c->opened = c->threads = 0;
    c->state = WAIT;
    c->t_run = now_ms();
    for (; c->opened < k; c->opened++) {
        Remapper *m = &c->m[c->opened];
        if (!remapper_open(m, ctx, n, &c->state, samples[c->opened])) {
            c->opened++; // closed by crew_stop
            return false;
        }
        if (pthread_create(&c->t[c->threads], NULL, remap_loop, m) != 0) {
            printf("not ok - pthread_create for a remapping thread\n");
            count_failure();
            c->opened++;
            return false;
        }
        c->threads++;
    }
    c->t_run = now_ms();
    __atomic_store_n(&c->state, RUN, __ATOMIC_RELEASE);
    return true;
}

/* Stops and joins the crew's threads, releases its ranges; returns how long it ran, ms. */
static double crew_stop(Crew *c)
{
    double ran = now_ms() - c->t_run;
    __atomic_store_n(&c->state, STOP, __ATOMIC_RELEASE);
    for (int i = 0; i < c->threads; i++)
        pthread_join(c->t[i], NULL);
    for (int i = 0; i < c->opened; i++)
        remapper_close(&c->m[i]);
    return ran;
}

/* Every remap time the crew kept, pooled into v (room for MAX_THREADS * MAX_SAMPLES); returns
   how many. */
static int crew_samples(const Crew *c, double *v)
{
    int n = 0;
    for (int i = 0; i < c->threads; i++) {
        int kept = c->m[i].remaps < MAX_SAMPLES ? c->m[i].remaps : MAX_SAMPLES;
        memcpy(v + n, c->m[i].us, kept * sizeof *v);
        n += kept;
    }
    return n;
}

static int crew_remaps(const Crew *c)
{
    int n = 0;
    for (int i = 0; i < c->threads; i++)
        n += c->m[i].remaps;
    return n;
}

static double pooled[MAX_THREADS * MAX_SAMPLES];

static void remap_throughput(CUcontext ctx)
{
    static const int counts[] = {1, 4, 32}, threads[] = {1, 2, 4}; // 1 thread first
    report_add("\n### Remaps: each thread remaps its own 64 MiB range for %d ms (unmap, map each "
               "handle, set access; / 1 thread's: against one thread on ranges of as many "
               "handles, remaps/s of all threads together)\n\n| threads | handles per range | "
               "remaps | remaps/s | / 1 thread's | us per remap, median | / 1 thread's | p99 |\n"
               "|---|---|---|---|---|---|---|---|\n",
               (int)REMAP_WINDOW_MS);
    for (int n : counts) {
        double one_rate = 0, one_median = 0;
        for (int k : threads) {
            Crew c;
            bool started = crew_start(&c, ctx, k, n);
            if (started)
                usleep(REMAP_WINDOW_MS * 1000);
            double ms = crew_stop(&c);
            int remaps = crew_remaps(&c), kept = crew_samples(&c, pooled);
            if (!started || kept == 0)
                continue;
            Stats s = summarise(pooled, kept);
            double rate = remaps * 1e3 / ms;
            if (k == 1) {
                one_rate = rate;
                one_median = s.median;
            }
            double rate_x = one_rate > 0 ? rate / one_rate : 0;
            double median_x = one_median > 0 ? s.median / one_median : 0;
            printf("{\"figure\":\"remap\",\"threads\":%d,\"handles\":%d,\"remaps\":%d,"
                   "\"ms\":%.1f,\"remaps_per_s\":%.1f,\"us_per_remap_median\":%.1f,"
                   "\"us_per_remap_p99\":%.1f,\"rate_vs_one_thread\":%.3f,"
                   "\"median_vs_one_thread\":%.3f}\n",
                   k, n, remaps, ms, rate, s.median, s.p99, rate_x, median_x);
            char rx[32] = "n/a", mx[32] = "n/a";
            if (one_rate > 0)
                snprintf(rx, sizeof rx, "%.2fx", rate_x);
            if (one_median > 0)
                snprintf(mx, sizeof mx, "%.2fx", median_x);
            report_add("| %d | %d | %d | %.0f | %s | %.1f | %s | %.1f |\n", k, n, remaps, rate, rx,
                       s.median, mx, s.p99);
        }
    }
}

/* Launches f (no parameters) on s up to n times or for LAUNCH_WINDOW_MS, timing each call (us
   into us) and waiting for the queue every LAUNCH_BATCH launches. Returns how many it timed. */
static int time_launches(CUfunction f, CUstream s, CUevent ev, double *us, int n)
{
    double end = now_ms() + LAUNCH_WINDOW_MS;
    int i = 0;
    for (; i < n && now_ms() < end; i++) {
        double t0 = now_ms();
        CUresult r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL);
        us[i] = (now_ms() - t0) * 1e3;
        if (!cu_ok(r, "cuLaunchKernel(tiny)", __LINE__))
            return i;
        if (i % LAUNCH_BATCH == LAUNCH_BATCH - 1 &&
            !(CU_OK(cuEventRecord(ev, s)) && wait_event(ev, "a batch of tiny launches")))
            return i + 1;
    }
    return i;
}

/* Reports one background's launches (sorting us); returns their median. */
static double launch_figure(int n, int got, double *us, double quiet, const Crew *c, double ms)
{
    Stats s = summarise(us, got);
    char what[64] = "nobody remapping";
    if (n)
        snprintf(what, sizeof what, "another thread remapping %d handle%s", n, n > 1 ? "s" : "");
    int remaps = n ? crew_remaps(c) : 0;
    printf("{\"figure\":\"launch\",\"background\":\"%s\",\"launches\":%d,\"median_us\":%.2f,"
           "\"p99_us\":%.2f,\"max_us\":%.1f,\"remaps\":%d,\"remaps_per_s\":%.1f}\n",
           what, got, s.median, s.p99, s.max, remaps, n ? remaps * 1e3 / ms : 0.0);
    report_add("| %s | %d | %.2f | %.2f | %.1f | %.2fx | %d |\n", what, got, s.median, s.p99, s.max,
               quiet > 0 ? s.median / quiet : 1.0, remaps);
    return s.median;
}

/* Section 3: the main thread launches while nobody, then one thread with 1 or 32 handles,
   remaps. */
static void launch_latency(CUcontext ctx, CUfunction f)
{
    static const int background[] = {0, 1, 32}; // handles of the remapping thread; 0: none
    static double us[LAUNCHES];
    CUstream s;
    CUevent ev;
    if (!CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)))
        return;
    if (CU_OK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING))) {
        report_add("\n### A tiny launch's host time on one thread (us)\n\n| meanwhile | launches | "
                   "median | p99 | max | median / nobody's | remaps meanwhile |\n"
                   "|---|---|---|---|---|---|---|\n");
        double quiet = 0;
        if (time_launches(f, s, ev, us, 1000) == 1000) // warm-up
            for (int n : background) {
                Crew c;
                if (n && !crew_start(&c, ctx, 1, n)) {
                    crew_stop(&c);
                    continue;
                }
                int got = time_launches(f, s, ev, us, LAUNCHES);
                double ms = n ? crew_stop(&c) : 0;
                double median = got > 0 ? launch_figure(n, got, us, quiet, &c, ms) : 0;
                if (n == 0)
                    quiet = median;
            }
        CU_OK(cuEventDestroy(ev));
    }
    CU_OK(cuStreamDestroy(s));
}

/* ---- 4. Moving 64 MiB: managed-memory prefetches and copies ---- */

// The driver's prefetch entry points at the ABI of CUDA 12.2 (a CUmemLocation and flags) and
// 13.0, resolved at run time so that the program builds with any CUDA 12 toolkit and runs on a
// driver that lacks them.
typedef CUresult (*prefetch_fn)(CUdeviceptr, size_t, CUmemLocation, unsigned int, CUstream);
typedef CUresult (*prefetch_batch_fn)(CUdeviceptr *, size_t *, size_t, CUmemLocation *, size_t *,
                                      size_t, unsigned long long, CUstream);

enum Way { PREFETCH, PREFETCH_PIECES, PREFETCH_BATCH, MEMCPY, WAYS };
static const char *const way_name[WAYS] = {
    "cuMemPrefetchAsync, managed", "cuMemPrefetchAsync per 2 MiB, managed",
    "cuMemPrefetchBatchAsync of 2 MiB pieces, managed", "cuMemcpyAsync, pinned host memory"};

struct Movers {
    CUdeviceptr managed, dev;
    void *pinned;
    prefetch_fn prefetch;
    prefetch_batch_fn batch;
};

/* The driver's name at the ABI of version; NULL, after a "skip" line, when it has none. */
static void *driver_entry(const char *name, int version)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult r = cuGetProcAddress(name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &found);
    if (r == CUDA_SUCCESS && found == CU_GET_PROC_ADDRESS_SUCCESS && fn)
        return fn;
    printf("skip - %s at the ABI of CUDA %d: not in this driver (result %d, found %d)\n", name,
           version, (int)r, (int)found);
    return NULL;
}

/* Queues the move of 64 MiB toward the device or the host on s in way w. Returns whether every
   call succeeded. */
static bool move(const Movers *mv, int w, bool to_device, CUstream s)
{
    CUmemLocation to = {to_device ? CU_MEM_LOCATION_TYPE_DEVICE : CU_MEM_LOCATION_TYPE_HOST, 0};
    const size_t piece = RANGE / PIECES;
    CUdeviceptr p[PIECES];
    size_t size[PIECES], first = 0;
    bool ok = true;
    switch (w) {
    case PREFETCH:
        return CU_OK(mv->prefetch(mv->managed, RANGE, to, 0, s));
    case PREFETCH_PIECES:
        for (int i = 0; ok && i < PIECES; i++)
            ok = CU_OK(mv->prefetch(mv->managed + i * piece, piece, to, 0, s));
        return ok;
    case PREFETCH_BATCH:
        for (int i = 0; i < PIECES; i++) {
            p[i] = mv->managed + i * piece;
            size[i] = piece;
        }
        return CU_OK(mv->batch(p, size, PIECES, &to, &first, 1, 0, s));
    default:
        return to_device ? CU_OK(cuMemcpyHtoDAsync(mv->dev, mv->pinned, RANGE, s))
                         : CU_OK(cuMemcpyDtoHAsync(mv->pinned, mv->dev, RANGE, s));
    }
}

/* Reports one way and direction; copy_ms is cuMemcpyAsync's median done time that way (0: not
   measured). Returns this way's median done time. */
static double move_figure(int w, bool to_device, double *call_us, double *done_ms, int rounds,
                          double copy_ms)
{
    static const int calls[WAYS] = {1, PIECES, 1, 1};
    Stats c = summarise(call_us, rounds), d = summarise(done_ms, rounds);
    const char *to = to_device ? "device" : "host";
    double gbs = RANGE / d.median / 1e6;
    if (w == MEMCPY)
        copy_ms = d.median;
    double vs_copy = copy_ms > 0 ? d.median / copy_ms : 0;
    printf("{\"figure\":\"move\",\"how\":\"%s\",\"to\":\"%s\",\"calls\":%d,\"rounds\":%d,"
           "\"call_us_median\":%.1f,\"call_us_min\":%.1f,\"call_us_max\":%.1f,"
           "\"done_ms_median\":%.3f,\"done_ms_min\":%.3f,\"done_ms_max\":%.3f,\"gb_per_s\":%.1f,"
           "\"done_vs_copy\":%.3f}\n",
           way_name[w], to, calls[w], rounds, c.median, c.min, c.max, d.median, d.min, d.max, gbs,
           vs_copy);
    char ratio[32] = "n/a";
    if (copy_ms > 0)
        snprintf(ratio, sizeof ratio, "%.2fx", vs_copy);
    report_add("| %s | %s | %d | %.1f (%.1f-%.1f) | %.3f (%.3f-%.3f) | %.1f | %s |\n", way_name[w],
               to, calls[w], c.median, c.min, c.max, d.median, d.min, d.max, gbs, ratio);
    return d.median;
}

/* REPEATS round trips (after one warm-up) of way w: to the device, then back to the host; each
   direction reported against copy_ms[direction] (to the device, to the host), which the copies
   (w == MEMCPY, timed first) fill in. */
static void time_way(const Movers *mv, int w, CUstream s, CUevent ev, double copy_ms[2])
{
    double call_us[2][REPEATS], done_ms[2][REPEATS];
    int got = 0;
    for (int r = -1; r < REPEATS && !stuck; r++) {
        bool ok = true;
        for (int dir = 0; ok && dir < 2; dir++) {
            double t0 = now_ms();
            ok = move(mv, w, dir == 0, s);
            call_us[dir][got] = (now_ms() - t0) * 1e3;
            ok = ok && CU_OK(cuEventRecord(ev, s)) && wait_event(ev, way_name[w]);
            done_ms[dir][got] = now_ms() - t0;
        }
        if (!ok)
            break;
        got += r >= 0; // the warm-up round (r = -1) is overwritten
    }
    for (int dir = 0; got > 0 && dir < 2; dir++) {
        double median = move_figure(w, dir == 0, call_us[dir], done_ms[dir], got, copy_ms[dir]);
        if (w == MEMCPY)
            copy_ms[dir] = median;
    }
}

/* Which ways this device and driver allow; a "skip" line for each one they do not. */
static void ways_allowed(CUdevice dev, Movers *mv, bool allowed[WAYS])
{
    int managed = 0, concurrent = 0;
    CU_OK(cuDeviceGetAttribute(&managed, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, dev));
    CU_OK(cuDeviceGetAttribute(&concurrent, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev));
    bool prefetchable = managed && concurrent;
    if (!prefetchable)
        printf("skip - prefetches: managed memory %d, concurrent managed access %d\n", managed,
               concurrent);
    mv->prefetch = prefetchable ? (prefetch_fn)driver_entry("cuMemPrefetchAsync", 12020) : NULL;
    mv->batch =
        prefetchable ? (prefetch_batch_fn)driver_entry("cuMemPrefetchBatchAsync", 13000) : NULL;
    allowed[PREFETCH] = allowed[PREFETCH_PIECES] = mv->prefetch != NULL;
    allowed[PREFETCH_BATCH] = mv->batch != NULL;
    allowed[MEMCPY] = true;
}

static void moves(CUdevice dev)
{
    Movers mv = {};
    bool allowed[WAYS];
    ways_allowed(dev, &mv, allowed);
    CUstream s;
    CUevent ev;
    if (!CU_OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)))
        return;
    bool have_ev = CU_OK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    if (allowed[PREFETCH] && CU_OK(cuMemAllocManaged(&mv.managed, RANGE, CU_MEM_ATTACH_GLOBAL)))
        memset((void *)mv.managed, 1, RANGE); // its pages start on the host
    if (have_ev && CU_OK(cuMemAlloc(&mv.dev, RANGE)) && CU_OK(cuMemAllocHost(&mv.pinned, RANGE))) {
        report_add("\n### Moving 64 MiB (call: host time of the calls, us; done: from the first "
                   "call until an event after them is seen complete, ms; median (min-max) of %d "
                   "round trips; / copy's: done against cuMemcpyAsync's the same way)\n\n"
                   "| how | to | calls | call us | done ms | GB/s | / copy's |\n"
                   "|---|---|---|---|---|---|---|\n",
                   (int)REPEATS);
        static const int order[WAYS] = {MEMCPY, PREFETCH, PREFETCH_PIECES, PREFETCH_BATCH};
        double copy_ms[2] = {0, 0};
        for (int i = 0; i < WAYS && !stuck; i++)
            if (allowed[order[i]] && (order[i] == MEMCPY || mv.managed))
                time_way(&mv, order[i], s, ev, copy_ms);
    }
    if (have_ev)
        CU_OK(cuEventDestroy(ev));
    if (mv.managed)
        CU_OK(cuMemFree(mv.managed));
    if (mv.dev)
        CU_OK(cuMemFree(mv.dev));
    if (mv.pinned)
        CU_OK(cuMemFreeHost(mv.pinned));
    CU_OK(cuStreamDestroy(s));
}

/* ---- the run ---- */

/* Makes device 0's primary context current through the CUDA runtime, which also gives the tiny
   kernel (*f); where the runtime does not start (a driver it does not know: the simulated
   device), through the driver, and *f stays NULL (section 3 is skipped). Returns whether a context
   is current. */
static bool primary_context(CUdevice dev, CUcontext *ctx, CUfunction *f)
{
    cudaError_t ce = cudaFree(0);
    if (ce == cudaSuccess && cudaGetFuncBySymbol(f, (const void *)tiny) == cudaSuccess)
        return CU_OK(cuCtxGetCurrent(ctx));
    *f = NULL;
    printf("skip - launch latency (section 3): the CUDA runtime gave no kernel (%s); the primary "
           "context through the driver\n",
           cudaGetErrorName(ce != cudaSuccess ? ce : cudaErrorInvalidDeviceFunction));
    return CU_OK(cuDevicePrimaryCtxRetain(ctx, dev)) && CU_OK(cuCtxSetCurrent(*ctx));
}

/* Section 1 on device memory, then on host memory where the driver makes it. */
static void vmm_sections(CUdevice dev)
{
    report_add("### VMM calls on 64 MiB (host time, ms: median, min, max of %d rounds; the last "
               "column: the median against the same call's on one 64 MiB handle)\n\n"
               "| location | handles | call | calls | median | min | max | us per call | us per "
               "handle | / 1 handle's |\n|---|---|---|---|---|---|---|---|---|---|\n",
               (int)REPEATS);
    CUmemAllocationProp pd = prop_at(CU_MEM_LOCATION_TYPE_DEVICE);
    vmm_calls("device", &pd);
    CUmemLocation where;
    if (!probe_host(dev, 2 * MIB, &where)) {
        printf("skip - host-located VMM: the driver refused cuMemCreate at HOST_NUMA and HOST\n");
        return;
    }
    CUmemAllocationProp ph = prop_at(where.type);
    ph.location.id = where.id;
    vmm_calls(where.type == CU_MEM_LOCATION_TYPE_HOST_NUMA ? "host_numa" : "host", &ph);
}

int main()
{
    setvbuf(stdout, NULL, _IOLBF, 0); // in order with the watchdog's write
    if (!gpu_present())
        return 77;
    signal(SIGALRM, watchdog);
    signal(SIGTERM, watchdog);
    alarm(WATCHDOG_S);
    CUcontext ctx = NULL;
    CUfunction f = NULL;
    CUdevice dev;
    CU(cuDeviceGet(&dev, 0));
    if (!primary_context(dev, &ctx, &f))
        return 1;
    char name[128];
    int drv = 0;
    CU(cuDeviceGetName(name, sizeof name, dev));
    CU(cuDriverGetVersion(&drv));
    printf("fact: %s, driver %d, built with CUDA %d\n", name, drv, (int)CUDA_VERSION);
    if (attribute_fact(dev, 102, "VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED") == 1) {
        vmm_sections(dev);
        if (!stuck)
            remap_throughput(ctx);
        if (!stuck && f)
            launch_latency(ctx, f);
    } else {
        printf("skip - VMM sections: no virtual memory management on this device\n");
    }
    if (!stuck)
        moves(dev);
    printf("\n## GPU facts: %s, driver %d\n\n", name, drv);
    fputs(report, stdout);
    return failures ? 1 : 0;
}
