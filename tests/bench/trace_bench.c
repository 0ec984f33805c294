/* trace_bench.c — what one trace record costs the calling thread (not a test: prints a table).
 *
 *   build/bench/trace_bench [DIR]   (the trace goes to DIR, default /tmp, and is removed)
 *
 * "paced" cases time bursts of 1000 records with a pause between them, so that the writer keeps
 * up (the steady cost on the launch path); "flat out" records without pause, so the writer may
 * fall behind and records are dropped (counted, never blocking).
 */
#include "report_trace.h"
#include "shim_trace.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BURST  1000
#define BURSTS 400

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

enum what { CLOCK_ONLY, LAUNCH, FREE, KERNEL_TIME };

static uint64_t seq;

/* Records n of one kind; returns the nanoseconds it took. */
static uint64_t burst(enum what w, int n)
{
    static const uint64_t ids[3] = {11, 12, 13};
    volatile uint64_t sink = 0;
    uint64_t t0 = now_ns();
    for (int i = 0; i < n; i++) {
        if (w == CLOCK_ONLY)
            sink += now_ns();
        else if (w == LAUNCH)
            shim_trace_launch(seq++, 7, 0x5000, ids, 3);
        else if (w == FREE)
            shim_trace_free((uint64_t)i, 0x5000);
        else
            shim_trace_kernel_time(seq++, 12.5);
    }
    (void)sink;
    return now_ns() - t0;
}

typedef struct job {
    enum what w;
    int paced;
    uint64_t ns, n;
} job;

static void *run_job(void *arg)
{
    job *j = arg;
    int bursts = j->paced ? BURSTS : 4 * BURSTS;
    for (int b = 0; b < bursts; b++) {
        j->ns += burst(j->w, BURST);
        j->n += BURST;
        if (j->paced)
            usleep(1000);
    }
    return NULL;
}

/* ns per record over threads threads; *dropped gets the trace's drop count (0 if inactive). */
static double measure(const char *dir, enum what w, int threads, int paced, int active,
                      uint64_t *dropped)
{
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/trace_bench-%d.trace", dir, (int)getpid());
    struct shim_trace_info info = {(int)getpid(), 0, "trace_bench", NULL, 0, 0, NULL};
    if (active && shim_trace_start(path, &info, err, sizeof err) != 0) {
        fprintf(stderr, "trace_bench: %s\n", err);
        exit(1);
    }
    job jobs[8] = {{0}};
    pthread_t th[8];
    for (int i = 0; i < threads; i++) {
        jobs[i] = (job){w, paced, 0, 0};
        pthread_create(&th[i], NULL, run_job, &jobs[i]);
    }
    uint64_t ns = 0, n = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        ns += jobs[i].ns;
        n += jobs[i].n;
    }
    *dropped = 0;
    if (active) {
        shim_trace_stop();
        report_trace t;
        if (report_trace_load(&t, path, err, sizeof err) == 0) {
            *dropped = t.dropped;
            report_trace_free(&t);
        }
        unlink(path);
    }
    return (double)ns / (double)n;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    static const struct {
        const char *name;
        enum what w;
        int threads, paced, active;
    } cases[] = {
        {"clock_gettime(CLOCK_MONOTONIC) alone", CLOCK_ONLY, 1, 1, 0},
        {"launch, trace not started", LAUNCH, 1, 1, 0},
        {"launch (3 ids, 56 B), 1 thread, paced", LAUNCH, 1, 1, 1},
        {"free (32 B), 1 thread, paced", FREE, 1, 1, 1},
        {"kernel_time (32 B), 1 thread, paced", KERNEL_TIME, 1, 1, 1},
        {"launch, 2 threads, paced", LAUNCH, 2, 1, 1},
        {"launch, 1 thread, flat out", LAUNCH, 1, 0, 1},
        {"launch, 2 threads, flat out", LAUNCH, 2, 0, 1},
    };
    double base = 0;
    printf("%-40s %10s %14s %12s\n", "case", "ns/record", "x clock_gettime", "dropped");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t dropped;
        double ns =
            measure(dir, cases[i].w, cases[i].threads, cases[i].paced, cases[i].active, &dropped);
        if (i == 0)
            base = ns;
        printf("%-40s %10.1f %14.2f %12llu\n", cases[i].name, ns, ns / base,
               (unsigned long long)dropped);
    }
    return 0;
}
