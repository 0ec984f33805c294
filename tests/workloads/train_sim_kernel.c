/* train_sim_kernel.c — the kernels of train_sim: sampled-word arithmetic run by the simulated
 * device, and their virtual costs (FLOPs or bytes of the full-size operation). */
#include "train_sim.h"
#include "workload.h"

#include "simgpu.h"

#include <stdio.h>

#define WORDS_PER_SAMPLE 4
#define PAGE_WORDS       1024   /* 4 KiB */
#define MATMUL_FLOPS     200e12 /* assumed dense throughput, FLOP/s */
#define MEMORY_BPS       2e12   /* assumed memory bandwidth, B/s */
#define MIN_COST_US      2.0    /* launch latency floor */

/* Launch parameter after the pointers: the shape of every tensor. Passed by
   value, as a real kernel's struct argument. */
struct train_sim_args {
    uint64_t words[TRAIN_SIM_MAX_PTRS];
    uint64_t stride; /* in words */
    uint32_t salt, nptrs;
};

enum body { MIX, ADAM, INIT, ZERO, SUM };

static const struct kernel_info {
    const char *name;
    int nin, nout;
    enum body body;
} kernels[TRAIN_SIM_K_COUNT] = {
#define TRAIN_SIM_INFO(name, nin, nout, body) {"train_sim_" #name, nin, nout, body},
    TRAIN_SIM_KERNELS(TRAIN_SIM_INFO)
#undef TRAIN_SIM_INFO
};

/* Samples of a tensor of n words: one per stride, plus the tail. */
static uint64_t sample_count(uint64_t n, uint64_t stride)
{
    return (n + stride - 1) / stride + 1;
}

/* First word of sample k: a page-dependent offset inside the sampled page,
   clamped inside the tensor; the last sample is the tail. */
static uint64_t sample_base(uint64_t k, uint64_t n, uint64_t stride)
{
    uint64_t base = k * stride + workload_mix32((uint32_t)k) % (PAGE_WORDS - WORDS_PER_SAMPLE);

    if (k + 1 == sample_count(n, stride) || base + WORDS_PER_SAMPLE > n)
        base = n - WORDS_PER_SAMPLE;
    return base;
}

static uint32_t fold(uint32_t acc, const uint32_t *t, uint64_t n, uint64_t stride)
{
    uint64_t count = sample_count(n, stride);

    for (uint64_t k = 0; k < count; k++) {
        const uint32_t *w = t + sample_base(k, n, stride);
        for (int i = 0; i < WORDS_PER_SAMPLE; i++)
            acc = workload_mix32(acc ^ w[i]) + (uint32_t)k;
    }
    return acc;
}

/* out = f(acc, sample index, the matching sample of in). */
static void emit(uint32_t *out, uint64_t n, uint32_t acc, const uint32_t *in, uint64_t in_n,
                 uint64_t stride)
{
    uint64_t count = sample_count(n, stride), in_count = sample_count(in_n, stride);

    for (uint64_t k = 0; k < count; k++) {
        uint32_t *w = out + sample_base(k, n, stride);
        const uint32_t *r = in + sample_base(k % in_count, in_n, stride);
        for (int i = 0; i < WORDS_PER_SAMPLE; i++)
            w[i] = workload_mix32(acc + (uint32_t)(k * WORDS_PER_SAMPLE + i)) + r[i];
    }
}

static void run_mix(const struct kernel_info *ki, uint32_t **t, const struct train_sim_args *a)
{
    uint32_t acc = a->salt;

    for (int i = 0; i < ki->nin; i++)
        acc = fold(acc, t[i], a->words[i], a->stride);
    for (int j = 0; j < ki->nout; j++)
        emit(t[ki->nin + j], a->words[ki->nin + j], acc ^ workload_mix32((uint32_t)j + 1), t[0],
             a->words[0], a->stride);
}

/* Adam-like integer update of W, m, v from g at every sampled word. */
static void run_adam(uint32_t **t, const struct train_sim_args *a)
{
    int groups = (int)a->nptrs / 4;

    for (int i = 0; i < groups; i++) {
        uint32_t *w = t[i], *g = t[groups + i], *m = t[2 * groups + i], *v = t[3 * groups + i];
        uint64_t n = a->words[i], count = sample_count(n, a->stride);
        for (uint64_t k = 0; k < count; k++) {
            uint64_t b = sample_base(k, n, a->stride);
            for (uint64_t j = b; j < b + WORDS_PER_SAMPLE; j++) {
                m[j] = m[j] - (m[j] >> 3) + (g[j] >> 3);
                v[j] = v[j] - (v[j] >> 4) + ((g[j] >> 16) * (g[j] >> 16) >> 4);
                w[j] = w[j] - ((m[j] ^ (v[j] >> 7)) >> 6) + a->salt;
            }
        }
    }
}

static void run_fill(uint32_t *t, uint64_t n, uint64_t stride, uint32_t salt, int zero)
{
    uint64_t count = sample_count(n, stride);

    for (uint64_t k = 0; k < count; k++) {
        uint64_t b = sample_base(k, n, stride);
        for (uint64_t j = b; j < b + WORDS_PER_SAMPLE; j++)
            t[j] = zero ? 0 : workload_mix32(salt ^ (uint32_t)j);
    }
}

static void run(enum train_sim_kernel k, void **params)
{
    const struct kernel_info *ki = &kernels[k];
    uint32_t *t[TRAIN_SIM_MAX_PTRS];
    int n = ki->nin + ki->nout;
    const struct train_sim_args *a = params[n];

    for (int i = 0; i < n; i++)
        t[i] = *(uint32_t **)params[i];
    if (ki->body == MIX)
        run_mix(ki, t, a);
    else if (ki->body == ADAM)
        run_adam(t, a);
    else if (ki->body == SUM)
        t[1][a->salt] = fold(a->salt, t[0], a->words[0], a->stride);
    else
        run_fill(t[0], a->words[0], a->stride, a->salt, ki->body == ZERO);
}

#define TRAIN_SIM_BODY(name, nin, nout, body)                                                      \
    static void k_##name(void **params)                                                            \
    {                                                                                              \
        run(TRAIN_SIM_K_##name, params);                                                           \
    }
TRAIN_SIM_KERNELS(TRAIN_SIM_BODY)
#undef TRAIN_SIM_BODY

static const simgpu_body bodies[TRAIN_SIM_K_COUNT] = {
#define TRAIN_SIM_FN(name, nin, nout, body) k_##name,
    TRAIN_SIM_KERNELS(TRAIN_SIM_FN)
#undef TRAIN_SIM_FN
};

/* FLOPs of the full-size operation a matmul-like kernel stands for. */
static double flops(enum train_sim_kernel k, const struct train_sim_config *c)
{
    double t = (double)c->batch * c->seq, h = c->hidden;
    double attn = 4.0 * c->batch * (double)c->seq * c->seq * h;

    switch (k) {
    case TRAIN_SIM_K_qkv:
        return 2 * t * h * 3 * h;
    case TRAIN_SIM_K_attn:
        return attn;
    case TRAIN_SIM_K_proj:
        return 2 * t * h * h;
    case TRAIN_SIM_K_mlp_up:
    case TRAIN_SIM_K_mlp_down:
        return 2 * t * h * 4 * h;
    case TRAIN_SIM_K_qkv_bwd:
        return 4 * t * h * 3 * h;
    case TRAIN_SIM_K_attn_bwd:
        return 2 * attn;
    case TRAIN_SIM_K_proj_bwd:
        return 4 * t * h * h;
    case TRAIN_SIM_K_mlp_up_bwd:
    case TRAIN_SIM_K_mlp_down_bwd:
        return 4 * t * h * 4 * h;
    default:
        return 0;
    }
}

/* Bytes a memory-bound kernel moves at full size (4-byte elements). */
static double bytes(enum train_sim_kernel k, const struct train_sim_config *c)
{
    double t = (double)c->batch * c->seq, h = c->hidden, v = c->vocab;

    switch (k) {
    case TRAIN_SIM_K_embed:
    case TRAIN_SIM_K_embed_bwd:
    case TRAIN_SIM_K_loss:
        return 3 * 4 * t * h;
    case TRAIN_SIM_K_adam_layer:
        return 7 * 4 * 12 * h * h; /* W, m, v read and written, g read */
    case TRAIN_SIM_K_adam_embed:
        return 7 * 4 * v * h;
    default:
        return 0;
    }
}

static double cost_us(enum train_sim_kernel k, const struct train_sim_config *c)
{
    double us = flops(k, c) / MATMUL_FLOPS * 1e6 + bytes(k, c) / MEMORY_BPS * 1e6;

    return us > MIN_COST_US ? us : MIN_COST_US;
}

int train_sim_kernel_register(const struct train_sim_config *c)
{
    size_t sizes[TRAIN_SIM_MAX_PTRS + 1];

    for (int k = 0; k < TRAIN_SIM_K_COUNT; k++) {
        int n = kernels[k].nin + kernels[k].nout;
        for (int i = 0; i < n; i++)
            sizes[i] = sizeof(void *);
        sizes[n] = sizeof(struct train_sim_args);
        CUfunction f = simgpu_register(kernels[k].name, bodies[k], n + 1, sizes);
        if (!f) {
            fprintf(stderr, "train_sim: simgpu_register(%s) failed\n", kernels[k].name);
            return -1;
        }
        simgpu_set_cost(f, cost_us((enum train_sim_kernel)k, c));
    }
    return 0;
}

int train_sim_kernel_launch(enum train_sim_kernel k, cudaStream_t s, uint32_t salt,
                            const struct train_sim_config *c, int n,
                            const struct train_sim_tensor *const *t)
{
    struct train_sim_args a = {.stride = c->stride / 4, .salt = salt, .nptrs = (uint32_t)n};
    void *ptrs[TRAIN_SIM_MAX_PTRS];
    void *params[TRAIN_SIM_MAX_PTRS + 1];
    char what[64];

    if (n != kernels[k].nin + kernels[k].nout) {
        fprintf(stderr, "train_sim: %s takes %d tensors, not %d\n", kernels[k].name,
                kernels[k].nin + kernels[k].nout, n);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        ptrs[i] = t[i]->p;
        a.words[i] = t[i]->words;
        params[i] = &ptrs[i];
    }
    params[n] = &a;
    snprintf(what, sizeof what, "cudaLaunchKernel(%s)", kernels[k].name);
    return train_sim_check(cudaLaunchKernel((const void *)bodies[k], (dim3){256, 1, 1},
                                            (dim3){256, 1, 1}, params, 0, s),
                           what);
}
