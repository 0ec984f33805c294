/* twin_mlp.c — the MLP job of the H100 run: tests/gpu/torch_train.py --layers 8 --width 4096
 * --batch 4096, fp32, TF32 off, Adam, PyTorch's cudaMallocAsync backend (one allocation per
 * tensor, freed when its last reference goes).
 *
 * What the step holds (W = width, B = batch; every activation B x W fp32, every weight W x W):
 * - cyclic: the input x and target y, each Linear's weight and bias, Adam's exp_avg and
 *   exp_avg_sq of each (made at the first step: cyclic from then on), and cuBLAS's workspace
 *   (torch_train.py sets CUBLAS_WORKSPACE_CONFIG=:4096:8: 8 buffers of 4096 KiB, 32 MiB), which
 *   every matrix product touches;
 * - carried from the previous step: its output `out` (the script's variable keeps it until the
 *   forward pass returns the new one) and the gradients (zero_grad(set_to_none=True) frees them
 *   after the forward pass and the loss: the script calls it there);
 * - forward: per block, Linear's output h (saved by GELU for its backward) and GELU's output a
 *   (saved by the next Linear for its weight gradient); the last a is `out`, which outlives the
 *   step (and is saved by the loss);
 * - loss: mse_loss's squared difference (a temporary) and its mean;
 * - backward: the loss's gradient, then per block from the last: GELU's backward (frees h and the
 *   incoming gradient), Linear's input gradient (not for the first block: x needs none), weight
 *   and bias gradients (they outlive the step), freeing the block's input a;
 * - Adam (torch.optim.Adam's default on CUDA: the foreach path, PyTorch's torch/optim/adam.py
 *   _multi_tensor_adam): lerp_ of exp_avg, mul_ and addcmul_ of exp_avg_sq, then sqrt into new
 *   tensors, div_, add_, and addcdiv_ into the parameters; the sqrt tensors are freed after.
 *
 * GPU time: 23 matrix products of 2 W^3 flops each (8 forward, 8 weight gradients, 7 input
 * gradients) at c->fp32_tflops, which twin_calib.c derives from this job's measured step; the rest
 * elementwise and reductions at HBM speed (twin_tape.c). */
#include "twin.h"

const struct twin_shape twin_mlp_shape = {.layers = 8, .width = 4096, .batch = 4096};

#define MAX_LAYERS 64
#define WORKSPACE  (32 * TWIN_MIB) /* CUBLAS_WORKSPACE_CONFIG=:4096:8 */

struct mlp {
    struct twin_tape *t;
    const struct twin_calib *c;
    int L;
    uint64_t act, wbytes, bbytes, welems;
    double mm_flops;
    int x, y, ws, out;
    int w[MAX_LAYERS], b[MAX_LAYERS], mw[MAX_LAYERS], vw[MAX_LAYERS], mb[MAX_LAYERS],
        vb[MAX_LAYERS];
    int h[MAX_LAYERS + 1], a[MAX_LAYERS + 1]; /* a[0] is x */
    int gw[MAX_LAYERS], gb[MAX_LAYERS];
};

/* An operation over the listed tensors (a -1 ends the list). */
#define OP(m, us, ...)                                                                             \
    do {                                                                                           \
        const int ids_[] = {__VA_ARGS__};                                                          \
        twin_op((m)->t, (us), ids_, (int)(sizeof ids_ / sizeof ids_[0]));                          \
    } while (0)
#define MM(m, ...)                                                                                 \
    do {                                                                                           \
        const int ids_[] = {__VA_ARGS__};                                                          \
        twin_mm((m)->t, (m)->mm_flops, (m)->c->fp32_tflops, ids_,                                  \
                (int)(sizeof ids_ / sizeof ids_[0]));                                              \
    } while (0)

static void forward(struct mlp *m)
{
    for (int i = 1; i <= m->L; i++) {
        m->h[i] = twin_tensor(m->t, m->act, TWIN_STEP);
        MM(m, m->a[i - 1], m->w[i - 1], m->b[i - 1], m->h[i], m->ws); /* addmm */
        m->a[i] = twin_tensor(m->t, m->act, TWIN_STEP);
        OP(m, twin_ew_us(2 * m->act), m->h[i], m->a[i]); /* gelu */
    }
    m->out = m->a[m->L];
}

/* mse_loss(out, y): the squared difference, then its mean. */
static void loss(struct mlp *m)
{
    int sq = twin_tensor(m->t, m->act, TWIN_STEP);
    OP(m, twin_ew_us(3 * m->act), m->out, m->y, sq);
    OP(m, twin_ew_us(m->act), sq);
    twin_free(m->t, sq);
}

static void backward(struct mlp *m)
{
    int g = twin_tensor(m->t, m->act, TWIN_STEP);
    OP(m, twin_ew_us(3 * m->act), m->out, m->y, g); /* mse_loss_backward */
    for (int i = m->L; i >= 1; i--) {
        int dh = twin_tensor(m->t, m->act, TWIN_STEP);
        OP(m, twin_ew_us(3 * m->act), g, m->h[i], dh); /* gelu_backward */
        twin_free(m->t, g);
        twin_free(m->t, m->h[i]);
        g = -1;
        if (i > 1) {
            g = twin_tensor(m->t, m->act, TWIN_STEP);
            MM(m, dh, m->w[i - 1], g, m->ws); /* grad of the input */
        }
        m->gw[i - 1] = twin_tensor(m->t, m->wbytes, TWIN_STEP);
        MM(m, dh, m->a[i - 1], m->gw[i - 1], m->ws); /* grad of the weight */
        m->gb[i - 1] = twin_tensor(m->t, m->bbytes, TWIN_STEP);
        OP(m, twin_ew_us(m->act), dh, m->gb[i - 1]); /* grad of the bias: a sum over the batch */
        twin_free(m->t, dh);
        if (i > 1)
            twin_free(m->t, m->a[i - 1]);
    }
}

static void adam(struct mlp *m)
{
    int n = 2 * m->L, p[2 * MAX_LAYERS], g[2 * MAX_LAYERS], ea[2 * MAX_LAYERS], es[2 * MAX_LAYERS],
        sq[2 * MAX_LAYERS];
    uint64_t numel[2 * MAX_LAYERS];
    for (int i = 0; i < m->L; i++) { /* model.parameters(): weight, bias of each Linear */
        p[2 * i] = m->w[i], p[2 * i + 1] = m->b[i];
        g[2 * i] = m->gw[i], g[2 * i + 1] = m->gb[i];
        ea[2 * i] = m->mw[i], ea[2 * i + 1] = m->mb[i];
        es[2 * i] = m->vw[i], es[2 * i + 1] = m->vb[i];
        numel[2 * i] = m->welems, numel[2 * i + 1] = m->bbytes / 4;
    }
    const int *lerp[] = {ea, g}, *mul[] = {es}, *addcmul[] = {es, g, g}, *sqrt_[] = {es, sq},
              *one[] = {sq}, *addcdiv[] = {p, ea, sq};
    twin_foreach(m->t, 2, lerp, numel, n, 4, 3);
    twin_foreach(m->t, 1, mul, numel, n, 4, 2);
    twin_foreach(m->t, 3, addcmul, numel, n, 4, 3);
    for (int i = 0; i < n; i++)
        sq[i] = twin_tensor(m->t, twin_bytes(m->t, p[i]), TWIN_STEP);
    twin_foreach(m->t, 2, sqrt_, numel, n, 4, 2);
    twin_foreach(m->t, 1, one, numel, n, 4, 2); /* div_ by sqrt(bias_correction2) */
    twin_foreach(m->t, 1, one, numel, n, 4, 2); /* add_ eps */
    twin_foreach(m->t, 3, addcdiv, numel, n, 4, 4);
    for (int i = 0; i < n; i++)
        twin_free(m->t, sq[i]);
}

int twin_mlp(struct twin_tape *t, const struct twin_shape *s, const struct twin_calib *c)
{
    if (s->layers < 1 || s->layers > MAX_LAYERS)
        return -1;
    struct mlp m = {.t = t, .c = c, .L = s->layers};
    uint64_t W = (uint64_t)s->width, B = (uint64_t)s->batch;
    m.act = B * W * 4;
    m.welems = W * W;
    m.wbytes = W * W * 4;
    m.bbytes = W * 4;
    m.mm_flops = 2.0 * (double)B * (double)W * (double)W;
    m.x = twin_tensor(t, m.act, TWIN_CYCLIC);
    m.y = twin_tensor(t, m.act, TWIN_CYCLIC);
    m.ws = twin_tensor(t, WORKSPACE, TWIN_CYCLIC);
    for (int i = 0; i < m.L; i++) {
        m.w[i] = twin_tensor(t, m.wbytes, TWIN_CYCLIC);
        m.b[i] = twin_tensor(t, m.bbytes, TWIN_CYCLIC);
        m.mw[i] = twin_tensor(t, m.wbytes, TWIN_CYCLIC);
        m.vw[i] = twin_tensor(t, m.wbytes, TWIN_CYCLIC);
        m.mb[i] = twin_tensor(t, m.bbytes, TWIN_CYCLIC);
        m.vb[i] = twin_tensor(t, m.bbytes, TWIN_CYCLIC);
    }
    /* Carried in the order the step makes their successors: out, then the gradients from the
       last block down (replay --carry pairs them by size, in order). */
    int old_out = twin_tensor(t, m.act, TWIN_CARRIED), old_gw[MAX_LAYERS], old_gb[MAX_LAYERS];
    for (int i = m.L - 1; i >= 0; i--) {
        old_gw[i] = twin_tensor(t, m.wbytes, TWIN_CARRIED);
        old_gb[i] = twin_tensor(t, m.bbytes, TWIN_CARRIED);
    }
    m.a[0] = m.x;
    forward(&m);
    twin_free(t, old_out); /* `out` now names the new output */
    loss(&m);
    for (int i = 0; i < m.L; i++) { /* zero_grad(set_to_none=True) */
        twin_free(t, old_gw[i]);
        twin_free(t, old_gb[i]);
    }
    backward(&m);
    adam(&m);
    return 0;
}
