/* twin_main.c — command line of twin, which writes the iteration model of a twin of one of the two
 * PyTorch jobs the H100 ran (twin.h) for build/replay.
 *
 *   twin mlp|transformer [--layers N] [--width N] [--batch N] [--seq N] [--heads N] [--gbps G]
 *
 * The shape flags change the job's shape (defaults: torch_train.py's, as the H100 ran it); the
 * figures the twin is built with stay those derived at the H100's shapes (twin_calib.c). --gbps:
 * the link the model's hw line tells a planner (default 48 GB/s each way, what libshim measured
 * of its own copies on the H100). Writes the model on stdout, headed by comment lines:
 * "# host_us_per_launch US" (run it with SIMGPU_HOST_US_PER_LAUNCH=US), and what the step holds.
 * Run: `SIMGPU_HOST_US_PER_LAUNCH=US replay MODEL --carry`; under an interposer rather
 * `SIMGPU_HOST_US_PER_LAUNCH=0 replay MODEL --carry --host-us US`, which charges the program's time
 * before the op's calls reach the interposer, as Python's comes before libshim sees a PyTorch op.
 * Exit status 0, 1 on failure, 2 for a usage error. */
#include "twin.h"
#include "workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: twin mlp|transformer [--layers N] [--width N] [--batch N] [--seq N] [--heads N]\n"
    "            [--gbps G]\n";

static int usage(const char *msg)
{
    fprintf(stderr, "twin: %s\n%s", msg, usage_text);
    return 2;
}

/* The flags after the job's name into *s and *gbps; 0, or -1. */
static int parse(int argc, char **argv, struct twin_shape *s, int *gbps)
{
    for (int i = 2; i < argc; i += 2) {
        if (i + 1 >= argc)
            return -1;
        const char *f = argv[i], *v = argv[i + 1];
        int *dst = !strcmp(f, "--layers")  ? &s->layers
                   : !strcmp(f, "--width") ? &s->width
                   : !strcmp(f, "--batch") ? &s->batch
                   : !strcmp(f, "--seq")   ? &s->seq
                   : !strcmp(f, "--heads") ? &s->heads
                   : !strcmp(f, "--gbps")  ? gbps
                                           : NULL;
        if (!dst || workload_parse_int(v, 1, 1 << 20, dst) != 0)
            return -1;
    }
    return 0;
}

static int write_model(const plan_model *m)
{
    char *text;
    size_t len;
    if (plan_model_write(m, &text, &len) != PLAN_OK) {
        fprintf(stderr, "twin: out of memory writing the model\n");
        return -1;
    }
    int rc = fwrite(text, 1, len, stdout) == len ? 0 : -1;
    free(text);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(usage_text, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    bool mlp = !strcmp(argv[1], "mlp");
    if (!mlp && strcmp(argv[1], "transformer"))
        return usage("the job is mlp or transformer");
    struct twin_shape s = mlp ? twin_mlp_shape : twin_transformer_shape;
    int gbps = 48;
    if (parse(argc, argv, &s, &gbps) != 0)
        return usage("bad flag or value");
    struct twin_calib c;
    struct twin_tape *t = NULL;
    plan_model m;
    plan_model_init(&m);
    int rc = twin_calibrate(&c) == 0 && (t = twin_tape_new()) ? 0 : -1;
    if (rc == 0) {
        twin_tape_fills(t, c.fills, c.fill_of);
        rc = (mlp ? twin_mlp : twin_transformer)(t, &s, &c);
        if (rc != 0)
            fprintf(stderr, "twin: the shape is out of range\n");
    }
    plan_hw hw = {.h2d_gbps = gbps, .d2h_gbps = gbps, .duplex = 1, .remap_us = 0};
    if (rc == 0)
        rc = twin_tape_model(t, &hw, &m);
    if (rc == 0) {
        double tail, mm, gpu = twin_gpu_us(t, &mm);
        double step = twin_step_us(t, c.host_us_per_launch, &tail);
        uint64_t native = 0, floor = 0;
        plan_peaks(&m, &native, &floor);
        printf("# twin of torch_train.py's %s (tests/workloads/twin_%s.c): layers %d, width %d, "
               "batch %d, seq %d, heads %d\n",
               argv[1], argv[1], s.layers, s.width, s.batch, s.seq, s.heads);
        printf("# host_us_per_launch %.3f\n", c.host_us_per_launch);
        printf("# launches %d, GPU time %.0f us (matrix products %.0f us at %.1f fp32 / %.1f bf16 "
               "TFLOPS), host time %.0f us, step on one stream %.0f us (the host then waits %.0f "
               "us), peak %.0f MiB\n",
               twin_ops(t), gpu, mm, c.fp32_tflops, c.bf16_tflops,
               c.host_us_per_launch * twin_ops(t), step, tail, (double)native / TWIN_MIB);
        printf("# fills: %d of every %d new tensors; run: SIMGPU_HOST_US_PER_LAUNCH=%.3f replay "
               "MODEL --carry, or under an interposer SIMGPU_HOST_US_PER_LAUNCH=0 replay MODEL "
               "--carry --host-us %.3f\n",
               c.fills, c.fill_of, c.host_us_per_launch, c.host_us_per_launch);
        rc = write_model(&m);
    }
    plan_model_free(&m);
    twin_tape_free(t);
    return rc == 0 ? 0 : 1;
}
