/* twin_calib.c — the figures the twins are built with, each derived from a measurement of the
 * H100 run (tests/bench/RESULTS-gpu.md, libshim at dbfd80c) and the jobs' shapes, in this order:
 *
 * 1. Launches: the eager transformer made 981 launches a step. The operations its shapes imply
 *    (twin_transformer.c, without fills) come to fewer; the rest are taken as deterministic-mode
 *    fills of new tensors (twin_tape_fills), spread evenly over the step's new tensors. The MLP
 *    gets fills at the same rate (the same PyTorch, the same mode).
 * 2. Matrix products: the MLP's native step (67.31 ms, cudaMallocAsync) is GPU-bound (about 140
 *    launches at the host's 40 us each take under 6 ms of it), so its GPU time is its step: what
 *    its elementwise kernels and reductions leave of 67.31 ms goes to its 23 matrix products,
 *    which gives the fp32 rate achieved (about 50 TFLOPS, 75% of the 67 TFLOPS peak). The same
 *    fraction of the bf16 tensor-core peak is taken for the transformer's linears.
 * 3. Host time: the eager transformer's step (39.92 ms native) is host-bound ("the host issues
 *    the whole step, then waits 1-4 ms for the GPU"): the host time per launch is the one for
 *    which the twin's step on one stream (twin_step_us, the simulated device's rule) is 39.92 ms.
 *    The MLP's host spends the same per launch (the same framework on the same machine). */
#include "twin.h"

#include <math.h>
#include <stdio.h>

typedef int (*twin_job)(struct twin_tape *, const struct twin_shape *, const struct twin_calib *);

/* The job's step at its own shape with c's figures, or NULL. */
static struct twin_tape *build(twin_job job, const struct twin_shape *s, const struct twin_calib *c)
{
    struct twin_tape *t = twin_tape_new();
    if (t && c->fill_of)
        twin_tape_fills(t, c->fills, c->fill_of);
    if (t && job(t, s, c) != 0) {
        fprintf(stderr, "twin: the calibration's step could not be written\n");
        twin_tape_free(t);
        t = NULL;
    }
    return t;
}

int twin_calibrate(struct twin_calib *c)
{
    *c = (struct twin_calib){.fp32_tflops = 1, .bf16_tflops = 1};
    struct twin_tape *t = build(twin_transformer, &twin_transformer_shape, c);
    if (!t)
        return -1;
    int ops = twin_ops(t), tensors = twin_step_tensors(t);
    twin_tape_free(t);
    c->fills = ops < TWIN_TRANSFORMER_LAUNCHES ? TWIN_TRANSFORMER_LAUNCHES - ops : 0;
    c->fill_of = tensors;

    if (!(t = build(twin_mlp, &twin_mlp_shape, c)))
        return -1;
    double mm, all = twin_gpu_us(t, &mm);
    twin_tape_free(t);
    if (!(all - mm < TWIN_MLP_STEP_US)) {
        fprintf(stderr, "twin: the MLP's other kernels alone exceed its measured step\n");
        return -1;
    }
    c->fp32_tflops = mm / (TWIN_MLP_STEP_US - (all - mm)); /* mm was at 1 TFLOPS */
    c->bf16_tflops = c->fp32_tflops / TWIN_FP32_TFLOPS * TWIN_BF16_TFLOPS;

    if (!(t = build(twin_transformer, &twin_transformer_shape, c)))
        return -1;
    double lo = 0, hi = TWIN_TRANSFORMER_STEP_US / twin_ops(t);
    if (twin_step_us(t, 0, NULL) >= TWIN_TRANSFORMER_STEP_US) {
        fprintf(stderr, "twin: the transformer's GPU time alone exceeds its measured step\n");
        twin_tape_free(t);
        return -1;
    }
    for (int i = 0; i < 60; i++) { /* the step grows with the host time per launch */
        double mid = (lo + hi) / 2;
        if (twin_step_us(t, mid, NULL) < TWIN_TRANSFORMER_STEP_US)
            lo = mid;
        else
            hi = mid;
    }
    c->host_us_per_launch = round(lo * 1000) / 1000;
    twin_tape_free(t);
    return 0;
}
