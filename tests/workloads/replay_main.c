/* replay_main.c — command line and output of replay, which runs an iteration model (shim-plan's
 * model format, planner/MODEL-FORMAT.md) as a program on the simulated device.
 *
 *   replay MODEL [--steps N] [--malloc async|sync] [--streams] [--stride BYTES]
 *                [--lose STEP:OP] [--waits] [--host ALLOC] [--carry] [--host-us US]
 *
 * --malloc: cudaMallocAsync / cudaFreeAsync on the streams (default), or cudaMalloc / cudaFree.
 * --streams: every op on its model stream (0: the legacy stream); without it, every op on the
 * legacy stream. --stride: bytes between sampled pages (4 KiB multiple, at most 1 MiB; default
 * 64 KiB). --lose is a test instrument: op OP of step STEP reads but writes nothing, as a lost
 * write would; the checksum must then differ. --waits prints the cross-stream waits first, one
 * "wait OP PRODUCER" line each (op OP waits for op PRODUCER of the same step), for tests.
 * --host ALLOC is a test instrument too: cyclic allocation ALLOC is made in host-located memory
 * mapped for the device (replay_host.c), so that the simulator counts the pages kernels read of
 * it (zero_copy_pages); the checksum is the device-located run's. --carry: an allocation that
 * outlives a step lives on as the next step's allocation of its size that exists before it
 * (replay_sched.c), as gradients live from one training step into the next. --host-us US: the
 * program spends US microseconds of host time before each op (simgpu_host_work: before its
 * allocations and launch reach the driver, where an interposer sees them; the simulated device
 * must have per-thread host clocks, SIMGPU_HOST_US_PER_LAUNCH=0 will do).
 *
 * Prints one line per step, "step K device_us=T peak_bytes=P" (virtual time of the step, the
 * simulator's device peak during it), then "summary ..." (with native_peak_bytes, the device
 * peak over the run, and device_us_per_step) and "checksum=<16 hex digits>", which depends only
 * on the model, --steps, --stride and --lose: identical with either --malloc, with or without
 * --streams, on every run and under libshim. Exit status: 0; 1 when a CUDA call fails (named on
 * stderr); 2 for a usage error or a model that does not parse (its file:line on stderr). */
#include "replay.h"
#include "workload.h"

#include "simgpu.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int replay_check(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return 0;
    fprintf(stderr, "replay: %s failed: %s (%s)\n", what, cudaGetErrorString(e),
            cudaGetErrorName(e));
    return -1;
}

static const char usage_text[] =
    "usage: replay MODEL [--steps N] [--malloc async|sync] [--streams] [--stride BYTES]\n"
    "              [--lose STEP:OP] [--waits] [--host ALLOC] [--carry] [--host-us US]\n"
    "defaults: --steps 3 --malloc async --stride 65536\n"
    "  --malloc  async: cudaMallocAsync/cudaFreeAsync; sync: cudaMalloc/cudaFree\n"
    "  --streams each op on its model stream (else all on the legacy stream)\n"
    "  --stride  bytes between sampled 4 KiB pages (4 KiB multiple, at most 1 MiB)\n"
    "  --lose    test instrument: op OP of step STEP writes nothing\n"
    "  --waits   print the cross-stream waits (\"wait OP PRODUCER\") before running\n"
    "  --host    test instrument: cyclic allocation ALLOC lives in host-located memory\n"
    "  --carry   an allocation outliving a step lives on into the next (its size's partner)\n"
    "  --host-us the program's own host time before each op (needs SIMGPU_HOST_US_PER_LAUNCH)\n";

static int usage(const char *msg)
{
    fprintf(stderr, "replay: %s\n%s", msg, usage_text);
    return 2;
}

static int parse_lose(const char *s, struct replay_config *c)
{
    const char *colon = strchr(s, ':');
    char step[16];

    if (!colon || colon - s >= (long)sizeof step)
        return -1;
    memcpy(step, s, (size_t)(colon - s));
    step[colon - s] = '\0';
    return workload_parse_int(step, 0, 1 << 30, &c->lose_step) != 0 ||
                   workload_parse_int(colon + 1, 0, PLAN_MAX_OPS, &c->lose_op) != 0
               ? -1
               : 0;
}

/* One flag, with its value in val (NULL when none follows); returns how many arguments it took
   (1 or 2), or -1. */
static int parse_flag(const char *flag, const char *val, struct replay_config *c)
{
    int stride = 0;

    if (strcmp(flag, "--streams") == 0 || strcmp(flag, "--waits") == 0) {
        *(flag[2] == 's' ? &c->streams : &c->print_waits) = true;
        return 1;
    }
    if (strcmp(flag, "--carry") == 0) {
        c->carry = true;
        return 1;
    }
    if (!val)
        return -1;
    if (strcmp(flag, "--steps") == 0)
        return workload_parse_int(val, 1, 1 << 20, &c->steps) == 0 ? 2 : -1;
    if (strcmp(flag, "--malloc") == 0 && (!strcmp(val, "async") || !strcmp(val, "sync"))) {
        c->async = strcmp(val, "async") == 0;
        return 2;
    }
    if (strcmp(flag, "--host-us") == 0) {
        char *end;
        c->host_us = strtod(val, &end);
        return *end || !(c->host_us >= 0 && c->host_us <= 1e9) ? -1 : 2;
    }
    if (strcmp(flag, "--host") == 0)
        return workload_parse_int(val, 0, PLAN_MAX_ALLOCS, &c->host_alloc) == 0 ? 2 : -1;
    if (strcmp(flag, "--lose") == 0)
        return parse_lose(val, c) == 0 ? 2 : -1;
    if (strcmp(flag, "--stride") == 0 && workload_parse_int(val, 4096, 1 << 20, &stride) == 0 &&
        stride % 4096 == 0) {
        c->stride = (uint64_t)stride;
        return 2;
    }
    return -1;
}

/* Returns 0, 2 after a usage error, or -1 after printing --help. */
static int parse_args(int argc, char **argv, struct replay_config *c)
{
    char msg[160];

    for (int i = 1; i < argc;) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_text, stdout);
            return -1;
        }
        if (argv[i][0] != '-' && !c->model_path) {
            c->model_path = argv[i++];
            continue;
        }
        int took = parse_flag(argv[i], i + 1 < argc ? argv[i + 1] : NULL, c);
        if (took < 0) {
            snprintf(msg, sizeof msg, "bad argument '%s%s%.60s'", argv[i], i + 1 < argc ? " " : "",
                     i + 1 < argc ? argv[i + 1] : "");
            return usage(msg);
        }
        i += took;
    }
    return c->model_path ? 0 : usage("no MODEL given");
}

/* Reads and parses the model; prints the parser's "FILE:LINE: error: ..." and returns -1. */
static int load_model(const char *path, plan_model *m)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL, msg[512];
    size_t len = 0, cap = 0, got;

    if (!f) {
        fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    do {
        if (len == cap) {
            char *more = realloc(buf, cap = cap ? 2 * cap : 1 << 16);
            if (!more) {
                fprintf(stderr, "replay: out of memory reading %s\n", path);
                free(buf);
                fclose(f);
                return -1;
            }
            buf = more;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
    } while (got > 0);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        free(buf);
        return -1;
    }
    plan_err e = plan_model_parse(buf, len, path, m, msg, sizeof msg);
    free(buf);
    if (e != PLAN_OK)
        fprintf(stderr, "%s\n", msg);
    return e == PLAN_OK ? 0 : -1;
}

static double wall_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int run(const struct replay_config *c, const plan_model *m)
{
    struct replay_sched s;
    struct simgpu_stats st;
    double t0 = wall_seconds(), mean_us = 0;
    uint64_t sum = 0;
    int rc = replay_sched_build(&s, m, c->streams, c->carry);

    for (uint32_t q = 0; rc == 0 && c->print_waits && q < s.nops; q++)
        for (uint32_t i = s.waits.first[q]; i < s.waits.first[q + 1]; i++)
            printf("wait %u %u\n", q, s.waits.items[i]);
    if (rc == 0)
        rc = replay_kernel_setup(&s, c->stride);
    if (rc == 0)
        rc = replay_run(&s, c, &sum, &mean_us);
    if (rc == 0 && simgpu_get_stats(&st) != 0) {
        fprintf(stderr, "replay: simgpu_get_stats failed\n");
        rc = -1;
    }
    if (rc == 0) {
        printf("summary ops=%zu allocs=%zu cyclic=%zu streams=%zu steps=%d malloc=%s "
               "native_peak_bytes=%" PRIu64 " device_us_per_step=%.3f wall_s=%.2f\n",
               s.nops, s.nallocs, s.ncyclic, s.nstreams, c->steps, c->async ? "async" : "sync",
               st.peak_device_bytes, mean_us, wall_seconds() - t0);
        printf("checksum=%016" PRIx64 "\n", sum);
    }
    replay_kernel_free();
    replay_sched_free(&s);
    return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    struct replay_config c = {.steps = 3,
                              .async = true,
                              .stride = 64 * 1024,
                              .lose_step = -1,
                              .lose_op = -1,
                              .host_alloc = -1,
                              .host_us = -1};
    plan_model m;
    int rc = parse_args(argc, argv, &c);

    if (rc != 0)
        return rc < 0 ? 0 : rc; /* -1: --help was printed */
    plan_model_init(&m);
    if (load_model(c.model_path, &m) != 0) {
        plan_model_free(&m);
        return 2;
    }
    if (c.lose_op >= 0 && (size_t)c.lose_op >= m.nops) {
        fprintf(stderr, "replay: --lose %d:%d: the model has %zu ops\n", c.lose_step, c.lose_op,
                m.nops);
        plan_model_free(&m);
        return 2;
    }
    if (c.host_alloc >= 0 &&
        ((size_t)c.host_alloc >= m.nallocs || m.allocs[c.host_alloc].birth != PLAN_NO_OP ||
         m.allocs[c.host_alloc].death != PLAN_NO_OP)) {
        fprintf(stderr, "replay: --host %d: not a cyclic allocation of the model\n", c.host_alloc);
        plan_model_free(&m);
        return 2;
    }
    rc = run(&c, &m);
    plan_model_free(&m);
    return rc;
}
