/* train_sim_model.c — the transformer-like model of train_sim: persistent weights and Adam
 * state, activations born in forward and freed in backward, gradients born in backward and
 * freed after the optimizer (PyTorch's zero_grad(set_to_none=True)), a loss read back each
 * step. */
#include "train_sim.h"

#include "simgpu.h"

#include <stdio.h>
#include <stdlib.h>

enum { W_QKV, W_O, W_UP, W_DOWN, NW }; /* the weights of a layer */

struct layer {
    struct train_sim_tensor w[NW], g[NW], m[NW], v[NW];
    struct train_sim_tensor qkv, att, y1, h, out; /* saved for backward */
};

struct train_sim_model {
    struct train_sim_config c;
    struct train_sim_alloc *alloc;
    cudaStream_t compute, copy;
    cudaEvent_t start, end, tokens_ready;
    uint32_t *tokens_host; /* pinned */
    struct train_sim_tensor tokens, lossbuf, sums;
    struct train_sim_tensor emb[4]; /* E, gE, mE, vE: the adam_embed order */
    struct layer *layers;
    struct train_sim_tensor x0, dy, dh, dy1, datt, dqkv, dx; /* in flight during a step */
    uint64_t live, peak;                                     /* tensor bytes */
    uint64_t loss_history;                                   /* FNV-1a over every loss read back */
};

#define LOSS_WORDS 16
#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME  0x100000001b3ULL

static uint64_t tokens_words(const struct train_sim_config *c)
{
    return (uint64_t)c->batch * (uint64_t)c->seq;
}

static uint64_t act_words(const struct train_sim_config *c, int mult)
{
    return tokens_words(c) * (uint64_t)c->hidden * (uint64_t)mult;
}

static int tensor_new(struct train_sim_model *m, struct train_sim_tensor *t, uint64_t words,
                      const char *name, int layer)
{
    t->words = words;
    if (train_sim_alloc_get(m->alloc, words * 4, (void **)&t->p) != 0) {
        fprintf(stderr, "train_sim: while allocating %s of layer %d (%llu bytes)\n", name, layer,
                (unsigned long long)(words * 4));
        return -1;
    }
    m->live += words * 4;
    if (m->live > m->peak)
        m->peak = m->live;
    return 0;
}

static int tensor_free(struct train_sim_model *m, struct train_sim_tensor *t)
{
    int rc;

    if (!t->p)
        return 0;
    rc = train_sim_alloc_put(m->alloc, t->p);
    m->live -= t->words * 4;
    t->p = NULL;
    return rc;
}

static uint32_t salt(enum train_sim_kernel k, int layer, int iter)
{
    return (uint32_t)iter * 1000003u + (uint32_t)layer * 7919u + (uint32_t)k;
}

static int launch(struct train_sim_model *m, enum train_sim_kernel k, uint32_t s, int n,
                  const struct train_sim_tensor *const *t)
{
    return train_sim_kernel_launch(k, m->compute, s, &m->c, n, t);
}

#define TENSORS(...)  ((const struct train_sim_tensor *const[]){__VA_ARGS__})
#define NTENSORS(...) ((int)(sizeof TENSORS(__VA_ARGS__) / sizeof(void *)))
#define LAUNCH(m, k, s, ...)                                                                       \
    launch(m, TRAIN_SIM_K_##k, s, NTENSORS(__VA_ARGS__), TENSORS(__VA_ARGS__))

/* ---- setup ------------------------------------------------------------------------------ */

static const char *const weight_names[NW] = {"Wqkv", "Wo", "W1", "W2"};

static int layer_new(struct train_sim_model *m, int l)
{
    uint64_t h = (uint64_t)m->c.hidden;
    const uint64_t words[NW] = {h * 3 * h, h * h, h * 4 * h, 4 * h * h};

    for (int i = 0; i < NW; i++) {
        struct layer *y = &m->layers[l];
        if (tensor_new(m, &y->w[i], words[i], weight_names[i], l) != 0 ||
            tensor_new(m, &y->m[i], words[i], "Adam m", l) != 0 ||
            tensor_new(m, &y->v[i], words[i], "Adam v", l) != 0 ||
            LAUNCH(m, init, salt(TRAIN_SIM_K_init, l, -1 - i), &y->w[i]) != 0 ||
            LAUNCH(m, zero, 0, &y->m[i]) != 0 || LAUNCH(m, zero, 0, &y->v[i]) != 0)
            return -1;
    }
    return 0;
}

static int persistent_new(struct train_sim_model *m)
{
    const struct train_sim_config *c = &m->c;
    uint64_t e = (uint64_t)c->vocab * (uint64_t)c->hidden;
    uint64_t sums = 3 + 12 * (uint64_t)c->layers;

    if (tensor_new(m, &m->tokens, tokens_words(c), "tokens", -1) != 0 ||
        tensor_new(m, &m->lossbuf, LOSS_WORDS, "loss", -1) != 0 ||
        tensor_new(m, &m->sums, sums < LOSS_WORDS ? LOSS_WORDS : sums, "checksums", -1) != 0 ||
        tensor_new(m, &m->emb[0], e, "embedding", -1) != 0 ||
        tensor_new(m, &m->emb[2], e, "Adam m", -1) != 0 ||
        tensor_new(m, &m->emb[3], e, "Adam v", -1) != 0 ||
        LAUNCH(m, init, salt(TRAIN_SIM_K_init, -1, -1), &m->emb[0]) != 0 ||
        LAUNCH(m, zero, 0, &m->emb[2]) != 0 || LAUNCH(m, zero, 0, &m->emb[3]) != 0)
        return -1;
    for (int l = 0; l < c->layers; l++)
        if (layer_new(m, l) != 0)
            return -1;
    return TRAIN_SIM_CHECK(cudaStreamSynchronize(m->compute));
}

int train_sim_model_new(const struct train_sim_config *c, struct train_sim_model **out)
{
    struct train_sim_model *m = calloc(1, sizeof *m);

    *out = m;
    if (!m || !(m->layers = calloc((size_t)c->layers, sizeof *m->layers))) {
        fprintf(stderr, "train_sim: out of host memory\n");
        return -1;
    }
    m->c = *c;
    m->loss_history = FNV_OFFSET;
    if (TRAIN_SIM_CHECK(cudaStreamCreate(&m->compute)) != 0 ||
        TRAIN_SIM_CHECK(cudaStreamCreateWithFlags(&m->copy, cudaStreamNonBlocking)) != 0 ||
        TRAIN_SIM_CHECK(cudaEventCreate(&m->start)) != 0 ||
        TRAIN_SIM_CHECK(cudaEventCreate(&m->end)) != 0 ||
        TRAIN_SIM_CHECK(cudaEventCreateWithFlags(&m->tokens_ready, cudaEventDisableTiming)) != 0 ||
        TRAIN_SIM_CHECK(cudaMallocHost((void **)&m->tokens_host, tokens_words(c) * 4)) != 0 ||
        train_sim_kernel_register(c) != 0)
        return -1;
    m->alloc = train_sim_alloc_new(c->mode, m->compute);
    if (!m->alloc) {
        fprintf(stderr, "train_sim: out of host memory\n");
        return -1;
    }
    return persistent_new(m);
}

/* ---- one step --------------------------------------------------------------------------- */

static int forward_layer(struct train_sim_model *m, int l, int it, const struct train_sim_tensor *x)
{
    struct layer *y = &m->layers[l];
    const struct train_sim_config *c = &m->c;

    return (tensor_new(m, &y->qkv, act_words(c, 3), "qkv", l) ||
            LAUNCH(m, qkv, salt(TRAIN_SIM_K_qkv, l, it), x, &y->w[W_QKV], &y->qkv) ||
            tensor_new(m, &y->att, act_words(c, 1), "attention", l) ||
            LAUNCH(m, attn, salt(TRAIN_SIM_K_attn, l, it), &y->qkv, &y->att) ||
            tensor_new(m, &y->y1, act_words(c, 1), "attention output", l) ||
            LAUNCH(m, proj, salt(TRAIN_SIM_K_proj, l, it), &y->att, &y->w[W_O], x, &y->y1) ||
            tensor_new(m, &y->h, act_words(c, 4), "MLP hidden", l) ||
            LAUNCH(m, mlp_up, salt(TRAIN_SIM_K_mlp_up, l, it), &y->y1, &y->w[W_UP], &y->h) ||
            tensor_new(m, &y->out, act_words(c, 1), "layer output", l) ||
            LAUNCH(m, mlp_down, salt(TRAIN_SIM_K_mlp_down, l, it), &y->h, &y->w[W_DOWN], &y->y1,
                   &y->out))
               ? -1
               : 0;
}

/* --lose: zeroes chunk c->lose_chunk of t in stream order. */
static int lose_chunk(struct train_sim_model *m, const struct train_sim_tensor *t)
{
    const uint64_t chunk = 2u << 20;
    uint64_t off = m->c.lose_chunk * chunk, bytes = t->words * 4;

    if (off >= bytes) {
        fprintf(stderr, "train_sim: --lose chunk %llu is past the end of the tensor (%llu bytes)\n",
                (unsigned long long)m->c.lose_chunk, (unsigned long long)bytes);
        return -1;
    }
    return TRAIN_SIM_CHECK(cudaMemsetAsync((char *)t->p + off, 0,
                                           bytes - off < chunk ? bytes - off : chunk, m->compute));
}

/* Embedding, every layer, then the loss and its gradient m->dy. */
static int forward(struct train_sim_model *m, int it)
{
    const struct train_sim_config *c = &m->c;
    const struct train_sim_tensor *x;
    struct layer *last = &m->layers[c->layers - 1];

    if (tensor_new(m, &m->x0, act_words(c, 1), "embedding output", -1) ||
        LAUNCH(m, embed, salt(TRAIN_SIM_K_embed, -1, it), &m->tokens, &m->emb[0], &m->x0))
        return -1;
    for (int l = 0; l < c->layers; l++) {
        x = l ? &m->layers[l - 1].out : &m->x0;
        if (forward_layer(m, l, it, x) != 0)
            return -1;
    }
    if (it == 0 && c->lose == TRAIN_SIM_LOSE_H && lose_chunk(m, &m->layers[0].h) != 0)
        return -1;
    return (tensor_new(m, &m->dy, act_words(c, 1), "loss gradient", -1) ||
            LAUNCH(m, loss, salt(TRAIN_SIM_K_loss, -1, it), &last->out, &m->tokens, &m->lossbuf,
                   &m->dy, &m->lossbuf) ||
            tensor_free(m, &last->out))
               ? -1
               : 0;
}

/* The MLP half of a layer's backward: dy -> dy1, gradients of W1 and W2. */
static int backward_mlp(struct train_sim_model *m, int l, int it)
{
    struct layer *y = &m->layers[l];
    const struct train_sim_config *c = &m->c;
    uint64_t h = (uint64_t)c->hidden;

    return (tensor_new(m, &m->dh, act_words(c, 4), "MLP hidden gradient", l) ||
            tensor_new(m, &y->g[W_DOWN], 4 * h * h, "W2 gradient", l) ||
            LAUNCH(m, mlp_down_bwd, salt(TRAIN_SIM_K_mlp_down_bwd, l, it), &m->dy, &y->h,
                   &y->w[W_DOWN], &m->dh, &y->g[W_DOWN]) ||
            tensor_new(m, &m->dy1, act_words(c, 1), "attention output gradient", l) ||
            tensor_new(m, &y->g[W_UP], h * 4 * h, "W1 gradient", l) ||
            LAUNCH(m, mlp_up_bwd, salt(TRAIN_SIM_K_mlp_up_bwd, l, it), &m->dh, &y->y1, &y->w[W_UP],
                   &m->dy, &m->dy1, &y->g[W_UP]) ||
            tensor_free(m, &m->dh) || tensor_free(m, &y->h) || tensor_free(m, &y->y1) ||
            tensor_free(m, &m->dy))
               ? -1
               : 0;
}

/* The attention half: dy1 -> dx (the gradient of the layer input x). */
static int backward_attn(struct train_sim_model *m, int l, int it, struct train_sim_tensor *x)
{
    struct layer *y = &m->layers[l];
    const struct train_sim_config *c = &m->c;
    uint64_t h = (uint64_t)c->hidden;

    return (tensor_new(m, &m->datt, act_words(c, 1), "attention gradient", l) ||
            tensor_new(m, &y->g[W_O], h * h, "Wo gradient", l) ||
            LAUNCH(m, proj_bwd, salt(TRAIN_SIM_K_proj_bwd, l, it), &m->dy1, &y->att, &y->w[W_O],
                   &m->datt, &y->g[W_O]) ||
            tensor_free(m, &y->att) ||
            tensor_new(m, &m->dqkv, act_words(c, 3), "qkv gradient", l) ||
            LAUNCH(m, attn_bwd, salt(TRAIN_SIM_K_attn_bwd, l, it), &m->datt, &y->qkv, &m->dqkv) ||
            tensor_free(m, &m->datt) ||
            tensor_new(m, &m->dx, act_words(c, 1), "layer input gradient", l) ||
            tensor_new(m, &y->g[W_QKV], h * 3 * h, "Wqkv gradient", l) ||
            LAUNCH(m, qkv_bwd, salt(TRAIN_SIM_K_qkv_bwd, l, it), &m->dqkv, x, &y->w[W_QKV], &m->dy1,
                   &m->dx, &y->g[W_QKV]) ||
            tensor_free(m, &m->dqkv) || tensor_free(m, &m->dy1) || tensor_free(m, &y->qkv) ||
            tensor_free(m, x))
               ? -1
               : 0;
}

static int backward(struct train_sim_model *m, int it)
{
    for (int l = m->c.layers - 1; l >= 0; l--) {
        struct train_sim_tensor *x = l ? &m->layers[l - 1].out : &m->x0;
        if (backward_mlp(m, l, it) || backward_attn(m, l, it, x))
            return -1;
        m->dy = m->dx; /* the next layer down gets this layer's input gradient */
        m->dx.p = NULL;
    }
    return (tensor_new(m, &m->emb[1], m->emb[0].words, "embedding gradient", -1) ||
            LAUNCH(m, embed_bwd, salt(TRAIN_SIM_K_embed_bwd, -1, it), &m->dy, &m->tokens,
                   &m->emb[1]) ||
            tensor_free(m, &m->dy))
               ? -1
               : 0;
}

static int optimizer(struct train_sim_model *m, int it)
{
    for (int l = 0; l < m->c.layers; l++) {
        struct layer *y = &m->layers[l];
        if (LAUNCH(m, adam_layer, (uint32_t)it + 1, &y->w[0], &y->w[1], &y->w[2], &y->w[3],
                   &y->g[0], &y->g[1], &y->g[2], &y->g[3], &y->m[0], &y->m[1], &y->m[2], &y->m[3],
                   &y->v[0], &y->v[1], &y->v[2], &y->v[3]))
            return -1;
        for (int i = 0; i < NW; i++)
            if (tensor_free(m, &y->g[i]))
                return -1;
    }
    return (LAUNCH(m, adam_embed, (uint32_t)it + 1, &m->emb[0], &m->emb[1], &m->emb[2],
                   &m->emb[3]) ||
            tensor_free(m, &m->emb[1]))
               ? -1
               : 0;
}

/* A new batch of tokens, copied on the copy stream; compute waits for it. */
static int load_tokens(struct train_sim_model *m, int it)
{
    uint64_t n = tokens_words(&m->c);

    for (uint64_t i = 0; i < n; i++)
        m->tokens_host[i] =
            (uint32_t)((i * 2654435761u + (uint64_t)it * 40503u) % (uint64_t)m->c.vocab);
    return (TRAIN_SIM_CHECK(cudaMemcpyAsync(m->tokens.p, m->tokens_host, n * 4,
                                            cudaMemcpyHostToDevice, m->copy)) ||
            TRAIN_SIM_CHECK(cudaEventRecord(m->tokens_ready, m->copy)) ||
            TRAIN_SIM_CHECK(cudaStreamWaitEvent(m->compute, m->tokens_ready, 0)))
               ? -1
               : 0;
}

int train_sim_model_step(struct train_sim_model *m, int iter, uint32_t *loss, double *device_us)
{
    float ms = 0;

    if (TRAIN_SIM_CHECK(cudaEventRecord(m->start, m->compute)) || load_tokens(m, iter) ||
        TRAIN_SIM_CHECK(cudaMemsetAsync(m->lossbuf.p, 0, LOSS_WORDS * 4, m->compute)) ||
        forward(m, iter) || backward(m, iter) || optimizer(m, iter) ||
        (iter == 0 && m->c.lose == TRAIN_SIM_LOSE_W1 && lose_chunk(m, &m->layers[0].w[W_UP])) ||
        TRAIN_SIM_CHECK(
            cudaMemcpyAsync(loss, m->lossbuf.p, 4, cudaMemcpyDeviceToHost, m->compute)) ||
        TRAIN_SIM_CHECK(cudaEventRecord(m->end, m->compute)) ||
        TRAIN_SIM_CHECK(cudaStreamSynchronize(m->compute)) ||
        TRAIN_SIM_CHECK(cudaEventElapsedTime(&ms, m->start, m->end)))
        return -1;
    *device_us = (double)ms * 1000.0;
    for (int i = 0; i < 4; i++)
        m->loss_history = (m->loss_history ^ ((*loss >> (8 * i)) & 0xff)) * FNV_PRIME;
    return 0;
}

/* ---- checksum and teardown -------------------------------------------------------------- */

static int sum_tensor(struct train_sim_model *m, const struct train_sim_tensor *t, uint32_t slot)
{
    return LAUNCH(m, sum, slot, t, &m->sums);
}

int train_sim_model_checksum(struct train_sim_model *m, uint64_t *sum)
{
    uint32_t *host = calloc(m->sums.words, 4);
    uint32_t slot = 0;
    int rc = host ? 0 : -1;

    for (int i = 0; rc == 0 && i < 4; i++)
        if (i != 1) /* the embedding gradient is not persistent */
            rc = sum_tensor(m, &m->emb[i], slot++);
    for (int l = 0; rc == 0 && l < m->c.layers; l++)
        for (int i = 0; rc == 0 && i < NW; i++)
            rc = sum_tensor(m, &m->layers[l].w[i], slot++) ||
                 sum_tensor(m, &m->layers[l].m[i], slot++) ||
                 sum_tensor(m, &m->layers[l].v[i], slot++);
    if (rc == 0)
        rc = TRAIN_SIM_CHECK(cudaMemcpy(host, m->sums.p, slot * 4, cudaMemcpyDeviceToHost));
    *sum = m->loss_history;
    for (uint32_t i = 0; rc == 0 && i < slot * 4; i++)
        *sum = (*sum ^ ((host[i / 4] >> (8 * (i % 4))) & 0xff)) * FNV_PRIME;
    free(host);
    return rc;
}

uint64_t train_sim_model_tensor_peak(const struct train_sim_model *m)
{
    return m->peak;
}

static int layer_free(struct train_sim_model *m, struct layer *y)
{
    struct train_sim_tensor *acts[] = {&y->qkv, &y->att, &y->y1, &y->h, &y->out};
    int rc = 0;

    for (int i = 0; i < NW; i++)
        rc |= tensor_free(m, &y->w[i]) | tensor_free(m, &y->g[i]) | tensor_free(m, &y->m[i]) |
              tensor_free(m, &y->v[i]);
    for (size_t i = 0; i < sizeof acts / sizeof *acts; i++)
        rc |= tensor_free(m, acts[i]);
    return rc;
}

int train_sim_model_free(struct train_sim_model *m)
{
    struct train_sim_tensor *rest[] = {&m->tokens, &m->lossbuf, &m->sums, &m->emb[0], &m->emb[1],
                                       &m->emb[2], &m->emb[3],  &m->x0,   &m->dy,     &m->dh,
                                       &m->dy1,    &m->datt,    &m->dqkv, &m->dx};
    int rc = 0;

    if (!m)
        return 0;
    if (m->alloc) {
        for (int l = 0; m->layers && l < m->c.layers; l++)
            rc |= layer_free(m, &m->layers[l]);
        for (size_t i = 0; i < sizeof rest / sizeof *rest; i++)
            rc |= tensor_free(m, rest[i]);
        rc |= train_sim_alloc_free(m->alloc);
    }
    if (m->tokens_host)
        rc |= TRAIN_SIM_CHECK(cudaFreeHost(m->tokens_host));
    rc |= (m->start && TRAIN_SIM_CHECK(cudaEventDestroy(m->start))) |
          (m->end && TRAIN_SIM_CHECK(cudaEventDestroy(m->end))) |
          (m->tokens_ready && TRAIN_SIM_CHECK(cudaEventDestroy(m->tokens_ready))) |
          (m->copy && TRAIN_SIM_CHECK(cudaStreamDestroy(m->copy))) |
          (m->compute && TRAIN_SIM_CHECK(cudaStreamDestroy(m->compute)));
    free(m->layers);
    free(m);
    return rc ? -1 : 0;
}
