/* train_sim_main.c — command line and output of train_sim, a training-like program for the
 * simulated device (docs/simulated-device.md).
 *
 *   train_sim [--mode segments|async|exact] [--layers N] [--hidden N] [--batch N]
 *             [--seq N] [--vocab N] [--iters N] [--stride BYTES] [--lose w1:K|h:K]
 *             [--device D] [--devices N]
 *
 * --device D runs on device D (cudaSetDevice before anything else); without it the
 * device is $LOCAL_RANK when set, as a torchrun worker picks its GPU, else 0.
 * --devices N runs one model replica on each of N devices from there, in one
 * thread that switches device (cudaSetDevice) before each replica's step, as
 * single-process data parallelism does; the replicas compute the same thing, so
 * their checksums must agree, and the one checksum printed is the single-device
 * run's. Iteration lines then carry "device=D" and their peak is that device's.
 *
 * --stride is the sampling stride (4 KiB multiple, at most 1 MiB: every 2 MiB
 * chunk of every tensor is sampled). --lose is a test instrument: it zeroes the
 * 2 MiB chunk K of layer 0's W1 (after step 0) or of its MLP activation
 * (between forward and backward of step 0); the checksum must then differ.
 *
 * Prints one line per iteration,
 *   iter N device_us=<virtual step time> peak_bytes=<device peak during the step> loss=0x...
 * then "summary ..." (with the native peak over the run) and "checksum=<hex>",
 * which depends only on the flags other than --mode: identical in every mode
 * and on every run. Exit status: 0, 1 when a CUDA call fails (the call is
 * named on stderr), 2 for a usage error. */
#include "train_sim.h"
#include "workload.h"

#include "simgpu.h"

#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int train_sim_check(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return 0;
    fprintf(stderr, "train_sim: %s failed: %s (%s)\n", what, cudaGetErrorString(e),
            cudaGetErrorName(e));
    return -1;
}

static const char *const mode_names[] = {"segments", "async", "exact"};

static const char usage_text[] =
    "usage: train_sim [--mode segments|async|exact] [--layers N] [--hidden N]\n"
    "                 [--batch N] [--seq N] [--vocab N] [--iters N] [--stride BYTES]\n"
    "                 [--lose w1:K|h:K] [--device D] [--devices N]\n"
    "defaults: --mode segments --layers 6 --hidden 768 --batch 4 --seq 512 --vocab 8192\n"
    "          --iters 10 --stride 65536\n"
    "  --mode    segments: PyTorch-like caching allocator (2 MiB / 20 MiB segments);\n"
    "            async: cudaMallocAsync per tensor; exact: cudaMalloc per tensor\n"
    "  --stride  bytes between sampled 4 KiB pages (4 KiB multiple, at most 1 MiB)\n"
    "  --device  device to run on (default: $LOCAL_RANK, else 0)\n"
    "  --devices one replica per device on N devices from --device on (default 1)\n"
    "  --lose    test instrument: zero 2 MiB chunk K of layer 0's W1 (after step 0) or\n"
    "            of its MLP activation h (between forward and backward of step 0)\n"
    "about 2 GiB peak: --layers 4 --hidden 1024 --batch 7 --seq 1024\n";

static int usage(const char *msg)
{
    fprintf(stderr, "train_sim: %s\n%s", msg, usage_text);
    return 2;
}

static int parse_mode(const char *s, enum train_sim_mode *out)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(s, mode_names[i]) == 0) {
            *out = (enum train_sim_mode)i;
            return 0;
        }
    return -1;
}

/* Parses "w1:K" or "h:K" for --lose. */
static int parse_lose(const char *s, struct train_sim_config *c)
{
    const char *colon = strchr(s, ':');
    int chunk = 0;

    if (!colon || workload_parse_int(colon + 1, 0, 1 << 30, &chunk) != 0)
        return -1;
    c->lose_chunk = (uint64_t)chunk;
    if (colon - s == 2 && strncmp(s, "w1", 2) == 0)
        c->lose = TRAIN_SIM_LOSE_W1;
    else if (colon - s == 1 && s[0] == 'h')
        c->lose = TRAIN_SIM_LOSE_H;
    else
        return -1;
    return 0;
}

/* Parses one "--flag value" pair; returns 0, or -1 for an unknown flag or a bad value. */
static int parse_flag(const char *flag, const char *val, struct train_sim_config *c)
{
    int stride = 0;

    if (strcmp(flag, "--mode") == 0)
        return parse_mode(val, &c->mode);
    if (strcmp(flag, "--layers") == 0)
        return workload_parse_int(val, 1, 1024, &c->layers);
    if (strcmp(flag, "--hidden") == 0)
        return workload_parse_int(val, 1, 65536, &c->hidden);
    if (strcmp(flag, "--batch") == 0)
        return workload_parse_int(val, 1, 65536, &c->batch);
    if (strcmp(flag, "--seq") == 0)
        return workload_parse_int(val, 1, 1 << 20, &c->seq);
    if (strcmp(flag, "--vocab") == 0)
        return workload_parse_int(val, 1, 1 << 24, &c->vocab);
    if (strcmp(flag, "--iters") == 0)
        return workload_parse_int(val, 1, 1 << 20, &c->iters);
    if (strcmp(flag, "--lose") == 0)
        return parse_lose(val, c);
    if (strcmp(flag, "--device") == 0)
        return workload_parse_int(val, 0, 15, &c->device);
    if (strcmp(flag, "--devices") == 0)
        return workload_parse_int(val, 1, 16, &c->devices);
    if (strcmp(flag, "--stride") == 0 && workload_parse_int(val, 1, 1 << 20, &stride) == 0 &&
        stride % 4096 == 0) {
        c->stride = (uint64_t)stride;
        return 0;
    }
    return -1;
}

/* Returns 0, 2 after a usage error, or -1 after printing --help. */
static int parse_args(int argc, char **argv, struct train_sim_config *c)
{
    char msg[128];

    for (int i = 1; i < argc; i += 2) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_text, stdout);
            return -1;
        }
        if (i + 1 >= argc || parse_flag(argv[i], argv[i + 1], c) != 0) {
            snprintf(msg, sizeof msg, "bad argument '%s%s%s'", argv[i], i + 1 < argc ? " " : "",
                     i + 1 < argc ? argv[i + 1] : "");
            return usage(msg);
        }
    }
    if (c->hidden < 16)
        return usage("--hidden must be at least 16");
    if ((uint64_t)c->batch * (uint64_t)c->seq < 4)
        return usage("--batch times --seq must be at least 4");
    return 0;
}

static double wall_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Driver calls of the given entry points so far, as the simulated driver counted them
   (with or without an interposer in between). */
static unsigned long driver_calls(const char *const *names)
{
    unsigned long n = 0;

    for (; *names; names++)
        n += simgpu_calls(*names);
    return n;
}

static const char *const launch_entries[] = {"cuLaunchKernel", "cuLaunchKernel_ptsz",
                                             "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz", NULL};
static const char *const alloc_entries[] = {"cuMemAlloc_v2", "cuMemAllocAsync",
                                            "cuMemAllocAsync_ptsz", NULL};

/* The step's device peak: the process's with one replica, else device dev's. */
static int window_peak(int dev, bool several, uint64_t *out)
{
    struct simgpu_stats st;
    struct simgpu_device_stats ds;

    if (several ? simgpu_get_device_stats(dev, &ds) != 0 : simgpu_get_stats(&st) != 0) {
        fprintf(stderr, "train_sim: simgpu_get_stats failed\n");
        return -1;
    }
    *out = several ? ds.window_peak_bytes : st.window_peak_bytes;
    return 0;
}

/* One step of the replica on device dev and its line (virtual time, device peak, and the
   launches and allocations the step made, as the driver counted them); *peak is raised to
   the step's device peak. */
static int step(struct train_sim_model *m, int it, int dev, bool several, uint64_t *peak,
                double *device_us)
{
    uint32_t loss = 0;
    uint64_t wpeak = 0;
    unsigned long launches = driver_calls(launch_entries), allocs = driver_calls(alloc_entries);

    if (TRAIN_SIM_CHECK(cudaSetDevice(dev)) != 0)
        return -1;
    simgpu_reset_peak();
    if (train_sim_model_step(m, it, &loss, device_us) != 0 || window_peak(dev, several, &wpeak))
        return -1;
    if (wpeak > *peak)
        *peak = wpeak;
    printf("iter %d ", it);
    if (several)
        printf("device=%d ", dev);
    printf("device_us=%.1f peak_bytes=%" PRIu64 " loss=0x%08" PRIx32 " launches=%lu allocs=%lu\n",
           *device_us, wpeak, loss, driver_calls(launch_entries) - launches,
           driver_calls(alloc_entries) - allocs);
    fflush(stdout);
    return 0;
}

/* Checksums every replica (each on its device); they must agree. */
static int checksum_all(struct train_sim_model **m, const struct train_sim_config *c, uint64_t *sum)
{
    for (int d = 0; d < c->devices; d++) {
        uint64_t s = 0;
        if (TRAIN_SIM_CHECK(cudaSetDevice(c->device + d)) != 0 ||
            train_sim_model_checksum(m[d], &s) != 0)
            return -1;
        if (d > 0 && s != *sum) {
            fprintf(stderr,
                    "train_sim: replica on device %d has checksum %016" PRIx64
                    ", device %d's is %016" PRIx64 "\n",
                    c->device + d, s, c->device, *sum);
            return -1;
        }
        *sum = s;
    }
    return 0;
}

static int run(const struct train_sim_config *c)
{
    struct train_sim_model *m[16] = {NULL};
    double t0 = wall_seconds(), device_us = 0;
    uint64_t peak = 0, sum = 0;
    bool several = c->devices > 1;
    int rc = 0;

    for (int d = 0; rc == 0 && d < c->devices; d++) {
        rc = TRAIN_SIM_CHECK(cudaSetDevice(c->device + d));
        if (rc == 0)
            rc = train_sim_model_new(c, &m[d]);
    }
    for (int it = 0; rc == 0 && it < c->iters; it++)
        for (int d = 0; rc == 0 && d < c->devices; d++)
            rc = step(m[d], it, c->device + d, several, &peak, &device_us);
    if (rc == 0)
        rc = checksum_all(m, c, &sum);
    if (rc == 0) {
        printf("summary mode=%s layers=%d hidden=%d batch=%d seq=%d vocab=%d iters=%d "
               "native_peak_bytes=%" PRIu64 " tensor_peak_bytes=%" PRIu64
               " device_us_per_iter=%.1f wall_s=%.2f",
               mode_names[c->mode], c->layers, c->hidden, c->batch, c->seq, c->vocab, c->iters,
               peak, train_sim_model_tensor_peak(m[0]), device_us, wall_seconds() - t0);
        if (several || c->device != 0)
            printf(" device=%d devices=%d", c->device, c->devices);
        printf("\n");
        printf("checksum=%016" PRIx64 "\n", sum);
    }
    /* Each failure said ("train_sim: ... failed: ..."); the model is freed even when its device
       cannot be made current (its host memory, at least, is given back). */
    for (int d = 0; d < c->devices; d++) {
        if (!m[d])
            continue;
        int set = TRAIN_SIM_CHECK(cudaSetDevice(c->device + d));
        if (train_sim_model_free(m[d]) != 0 || set != 0)
            rc = -1;
    }
    return rc == 0 ? 0 : 1;
}

/* --device's default: $LOCAL_RANK (torchrun's local rank), else 0. A bad value is a usage
   error. */
static int default_device(struct train_sim_config *c)
{
    const char *s = getenv("LOCAL_RANK");

    if (c->device >= 0)
        return 0;
    c->device = 0;
    if (s && *s && workload_parse_int(s, 0, 15, &c->device) != 0)
        return usage("LOCAL_RANK must be a device ordinal from 0 to 15");
    return 0;
}

int main(int argc, char **argv)
{
    struct train_sim_config c = {
        .layers = 6,
        .hidden = 768,
        .batch = 4,
        .seq = 512,
        .vocab = 8192,
        .iters = 10,
        .stride = 64 * 1024,
        .mode = TRAIN_SIM_SEGMENTS,
        .device = -1,
        .devices = 1,
    };
    int rc = parse_args(argc, argv, &c);

    if (rc == 0)
        rc = default_device(&c);
    if (rc != 0)
        return rc < 0 ? 0 : rc; /* -1: --help was printed */
    if (c.device + c.devices > 16)
        return usage("--device plus --devices must stay within 16 devices");
    return run(&c);
}
