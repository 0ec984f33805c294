/* twin_transformer.c — the eager transformer job of the H100 run: tests/gpu/torch_train.py --model
 * transformer --layers 6 --width 1024 --seq 512 --batch 16 (16 heads), nn.TransformerEncoderLayer
 * with norm_first=True, dim_feedforward 4 x width, dropout 0, batch_first, ReLU; bf16 autocast;
 * the math attention kernels (flash and memory-efficient attention turned off); Adam; PyTorch's
 * cudaMallocAsync backend.
 *
 * T = batch x seq tokens, E = width, F = 4E, H heads of D = E / H; the sizes below are per layer.
 * Forward of one layer, as PyTorch runs it (PyTorch's torch/nn/modules/transformer.py _sa_block
 * and _ff_block, PyTorch's torch/nn/functional.py multi_head_attention_forward, and ATen's math
 * attention, aten/src/ATen/native/transformers/attention.cpp _scaled_dot_product_attention_math):
 *   n1 = layer_norm(x) (fp32: autocast runs layer_norm in fp32; saves x, mean, rstd);
 *   autocast casts n1, in_proj_weight and its bias to bf16 (the casts are saved for backward);
 *   qkv = linear (T x 3E bf16), made contiguous as proj (q, k, v are views of it);
 *   the math attention keeps q, k, v in fp32 ("Keep query, key, value in high precision"):
 *   three casts (T x E fp32 each; v saved), q and k scaled by sqrt(scale) (saved), the scores
 *   q k^T (B x H x S x S fp32), _safe_softmax (softmax, a -inf mask with its row reduction, and
 *   where: the result saved), attn v (fp32), cast back to bf16, and attn cast to bf16 (returned
 *   and dropped);
 *   the heads made contiguous (saved), out_proj (weight and bias cast), the residual add (fp32);
 *   n2 = layer_norm, cast, linear1 (T x F bf16), relu (saved), linear2, the residual add.
 * Backward mirrors it: casts of the gradient to each input's dtype (autograd's ToCopyBackward),
 * per linear the input gradient, the weight gradient (cast to fp32: the parameter's .grad, which
 * outlives the step) and the bias gradient; the attention's products and softmax backward; three
 * select_backward buffers of proj's shape and their sum; layer norm's input gradient and its
 * weight and bias gradients; the residual gradients summed. The first layer's input (x) needs no
 * gradient. Then Adam's foreach path over the 12 parameters of each layer (twin_mlp.c).
 *
 * Carried from the previous step: `out` (kept by the script's variable until the forward pass
 * returns the new one) and every gradient (freed by zero_grad after the loss).
 *
 * GPU time: the linears in bf16 at c->bf16_tflops, the attention's products in fp32 at
 * c->fp32_tflops, the rest at HBM speed (twin_tape.c); the step is set by the host
 * (c->host_us_per_launch, twin_calib.c). */
#include "twin.h"

const struct twin_shape twin_transformer_shape = {
    .layers = 6, .width = 1024, .batch = 16, .seq = 512, .heads = 16};

#define MAX_LAYERS 64
#define NPARAMS    12 /* per layer, in model.parameters() order */
#define WORKSPACE  (32 * TWIN_MIB)

enum { IN_W, IN_B, OUT_W, OUT_B, L1_W, L1_B, L2_W, L2_B, N1_W, N1_B, N2_W, N2_B };

struct tf {
    struct twin_tape *t;
    const struct twin_calib *c;
    uint64_t T, E, F, B, S, H;
    int ws, x, y, out;
    int p[MAX_LAYERS][NPARAMS], ea[MAX_LAYERS][NPARAMS], es[MAX_LAYERS][NPARAMS];
    int g[MAX_LAYERS][NPARAMS], old_g[MAX_LAYERS][NPARAMS];
    uint64_t numel[NPARAMS];
};

/* What one layer's forward saves for its backward. */
struct saved {
    int xin, mean1, rstd1, n1b, wq, proj, vacc, qs, ks, attn, heads, wo, x1, mean2, rstd2, n2b, w1,
        r, w2, xout;
};

#define LIST(...)                                                                                  \
    ((const int[]){__VA_ARGS__}), (int)(sizeof((const int[]){__VA_ARGS__}) / sizeof(int))

static int new16(struct tf *m, uint64_t elems)
{
    return twin_tensor(m->t, 2 * elems, TWIN_STEP);
}
static int new32(struct tf *m, uint64_t elems)
{
    return twin_tensor(m->t, 4 * elems, TWIN_STEP);
}
static void free_(struct tf *m, int id)
{
    twin_free(m->t, id);
}
/* An elementwise or reduction op moving `bytes`. */
static void ew(struct tf *m, uint64_t bytes, const int *ids, int n)
{
    twin_op(m->t, twin_ew_us(bytes), ids, n);
}
static void linear_mm(struct tf *m, uint64_t rows, uint64_t in, uint64_t out, const int *ids, int n)
{
    twin_mm(m->t, 2.0 * (double)rows * (double)in * (double)out, m->c->bf16_tflops, ids, n);
}
/* A batched product in fp32 over B x H heads of (a x k) by (k x b). */
static void attn_mm(struct tf *m, uint64_t a, uint64_t k, uint64_t b, const int *ids, int n)
{
    twin_mm(m->t, 2.0 * (double)(m->B * m->H) * (double)(a * k * b), m->c->fp32_tflops, ids, n);
}
/* A cast of src (elems elements, from sb to db bytes each) into a new tensor. */
static int cast(struct tf *m, int src, uint64_t elems, int sb, int db)
{
    int d = twin_tensor(m->t, elems * (uint64_t)db, TWIN_STEP);
    ew(m, elems * (uint64_t)(sb + db), LIST(src, d));
    return d;
}

/* linear under autocast (input already bf16): weight and bias cast, the product with the bias.
   Sets *w16 to the saved weight cast; returns the output (rows x out bf16). */
static int linear(struct tf *m, int in, int w, int b, uint64_t rows, uint64_t nin, uint64_t nout,
                  int *w16)
{
    *w16 = cast(m, w, nin * nout, 4, 2);
    int b16 = cast(m, b, nout, 4, 2);
    int y = new16(m, rows * nout);
    linear_mm(m, rows, nin, nout, LIST(in, *w16, b16, y, m->ws));
    free_(m, b16); /* the bias cast is not saved: its gradient is a sum of the output's */
    return y;
}

/* layer_norm in fp32: the output, with the saved mean and rstd. */
static int layer_norm(struct tf *m, int in, int w, int b, int *mean, int *rstd)
{
    int n = new32(m, m->T * m->E);
    *mean = new32(m, m->T);
    *rstd = new32(m, m->T);
    ew(m, 2 * 4 * m->T * m->E, LIST(in, w, b, n, *mean, *rstd));
    return n;
}

static void attention(struct tf *m, struct saved *s, int heads_out_bf16[1])
{
    uint64_t T = m->T, E = m->E, S = m->S, D = m->E / m->H, SS = m->B * m->H * S * S;
    int qacc = cast(m, s->proj, T * E, 2, 4), kacc = cast(m, s->proj, T * E, 2, 4);
    s->vacc = cast(m, s->proj, T * E, 2, 4);
    s->qs = new32(m, T * E);
    ew(m, 8 * T * E, LIST(qacc, s->qs));
    free_(m, qacc);
    s->ks = new32(m, T * E);
    ew(m, 8 * T * E, LIST(kacc, s->ks));
    free_(m, kacc);
    int scores = new32(m, SS);
    attn_mm(m, S, D, S, LIST(s->qs, s->ks, scores, m->ws));
    /* _safe_softmax: softmax, then where(all(scores == -inf), 0, softmax) */
    int sm = new32(m, SS);
    ew(m, 8 * SS, LIST(scores, sm));
    twin_op(m->t, 0, NULL, 0); /* scalar_tensor(-inf) */
    int masked = twin_tensor(m->t, SS, TWIN_STEP);
    ew(m, 5 * SS, LIST(scores, masked));
    int rows = twin_tensor(m->t, m->B * m->H * S, TWIN_STEP);
    ew(m, SS, LIST(masked, rows));
    twin_op(m->t, 0, NULL, 0); /* scalar_tensor(0) */
    s->attn = new32(m, SS);
    ew(m, 8 * SS, LIST(rows, sm, s->attn));
    free_(m, sm);
    free_(m, masked);
    free_(m, rows);
    free_(m, scores);
    int o32 = new32(m, T * E);
    attn_mm(m, S, S, D, LIST(s->attn, s->vacc, o32, m->ws));
    int o16 = cast(m, o32, T * E, 4, 2);
    free_(m, o32);
    int a16 = cast(m, s->attn, SS, 4, 2); /* returned beside the output, then dropped */
    free_(m, a16);
    heads_out_bf16[0] = new16(m, T * E); /* permute(2, 0, 1, 3).contiguous() */
    ew(m, 4 * T * E, LIST(o16, heads_out_bf16[0]));
    free_(m, o16);
}

static void layer_forward(struct tf *m, int l, struct saved *s)
{
    uint64_t T = m->T, E = m->E, F = m->F;
    const int *p = m->p[l];
    int n1 = layer_norm(m, s->xin, p[N1_W], p[N1_B], &s->mean1, &s->rstd1);
    s->n1b = cast(m, n1, T * E, 4, 2);
    free_(m, n1);
    int qkv = linear(m, s->n1b, p[IN_W], p[IN_B], T, E, 3 * E, &s->wq);
    s->proj = new16(m, 3 * T * E);
    ew(m, 12 * T * E, LIST(qkv, s->proj));
    free_(m, qkv);
    attention(m, s, &s->heads);
    int y = linear(m, s->heads, p[OUT_W], p[OUT_B], T, E, E, &s->wo);
    s->x1 = new32(m, T * E);
    ew(m, 10 * T * E, LIST(s->xin, y, s->x1));
    free_(m, y);
    int n2 = layer_norm(m, s->x1, p[N2_W], p[N2_B], &s->mean2, &s->rstd2);
    s->n2b = cast(m, n2, T * E, 4, 2);
    free_(m, n2);
    int f1 = linear(m, s->n2b, p[L1_W], p[L1_B], T, E, F, &s->w1);
    s->r = new16(m, T * F);
    ew(m, 4 * T * F, LIST(f1, s->r));
    free_(m, f1);
    int f2 = linear(m, s->r, p[L2_W], p[L2_B], T, F, E, &s->w2);
    s->xout = new32(m, T * E);
    ew(m, 10 * T * E, LIST(s->x1, f2, s->xout));
    free_(m, f2);
}

/* A linear's backward: gy (rows x nout bf16) against its saved input (rows x nin bf16) and
   weight cast w16. Returns the input gradient (bf16), or -1 when need_input is false; makes
   the fp32 weight and bias gradients g[wi], g[bi]. */
static int linear_backward(struct tf *m, int l, int gy, int in, int w16, uint64_t rows,
                           uint64_t nin, uint64_t nout, int wi, int bi, bool need_input)
{
    int gin = -1;
    if (need_input) {
        gin = new16(m, rows * nin);
        linear_mm(m, rows, nout, nin, LIST(gy, w16, gin, m->ws));
    }
    int gw16 = new16(m, nin * nout);
    linear_mm(m, nout, rows, nin, LIST(gy, in, gw16, m->ws));
    int gb16 = new16(m, nout);
    ew(m, 2 * rows * nout, LIST(gy, gb16));
    m->g[l][wi] = cast(m, gw16, nin * nout, 2, 4);
    m->g[l][bi] = cast(m, gb16, nout, 2, 4);
    free_(m, gw16);
    free_(m, gb16);
    free_(m, w16);
    return gin;
}

/* layer_norm's backward: the input gradient (fp32, when need_input) and the weight and bias
   gradients. */
static int ln_backward(struct tf *m, int l, int gn, int in, int mean, int rstd, int wi, int bi,
                       bool need_input)
{
    int gx = -1;
    const int *p = m->p[l];
    if (need_input) {
        gx = new32(m, m->T * m->E);
        ew(m, 3 * 4 * m->T * m->E, LIST(gn, in, mean, rstd, p[wi], gx));
    }
    m->g[l][wi] = new32(m, m->E);
    m->g[l][bi] = new32(m, m->E);
    ew(m, 2 * 4 * m->T * m->E, LIST(gn, in, mean, rstd, m->g[l][wi], m->g[l][bi]));
    free_(m, mean);
    free_(m, rstd);
    return gx;
}

/* The sum a + b into a new fp32 tensor, freeing both. */
static int accumulate(struct tf *m, int a, int b)
{
    int s = new32(m, m->T * m->E);
    ew(m, 12 * m->T * m->E, LIST(a, b, s));
    free_(m, a);
    free_(m, b);
    return s;
}

static int attention_backward(struct tf *m, struct saved *s, int gheads)
{
    uint64_t T = m->T, E = m->E, S = m->S, D = m->E / m->H, SS = m->B * m->H * S * S;
    int go = cast(m, gheads, T * E, 2, 4); /* the heads' permute is a view; o16 = o32.to(bf16) */
    free_(m, gheads);
    int gattn = new32(m, SS), gv = new32(m, T * E);
    attn_mm(m, S, D, S, LIST(go, s->vacc, gattn, m->ws));
    attn_mm(m, S, S, D, LIST(s->attn, go, gv, m->ws));
    free_(m, go);
    free_(m, s->vacc);
    int gscores = new32(m, SS);
    ew(m, 12 * SS, LIST(gattn, s->attn, gscores)); /* _softmax_backward_data */
    free_(m, gattn);
    free_(m, s->attn);
    int gqs = new32(m, T * E), gks = new32(m, T * E);
    attn_mm(m, S, S, D, LIST(gscores, s->ks, gqs, m->ws));
    attn_mm(m, S, S, D, LIST(gscores, s->qs, gks, m->ws));
    free_(m, gscores);
    free_(m, s->qs);
    free_(m, s->ks);
    int gq = new32(m, T * E), gk = new32(m, T * E);
    ew(m, 8 * T * E, LIST(gqs, gq)); /* the scaling's backward */
    free_(m, gqs);
    ew(m, 8 * T * E, LIST(gks, gk));
    free_(m, gks);
    int g16[3] = {cast(m, gq, T * E, 4, 2), cast(m, gk, T * E, 4, 2), cast(m, gv, T * E, 4, 2)};
    free_(m, gq);
    free_(m, gk);
    free_(m, gv);
    /* select_backward of proj[0], proj[1], proj[2]: zeros of proj's shape and the slice */
    int sel[3];
    for (int i = 0; i < 3; i++) {
        sel[i] = new16(m, 3 * T * E);
        ew(m, 6 * T * E, LIST(sel[i]));
        ew(m, 4 * T * E, LIST(g16[i], sel[i]));
        free_(m, g16[i]);
    }
    int sum = new16(m, 3 * T * E);
    ew(m, 18 * T * E, LIST(sel[0], sel[1], sum));
    free_(m, sel[0]);
    free_(m, sel[1]);
    int gproj = new16(m, 3 * T * E);
    ew(m, 18 * T * E, LIST(sum, sel[2], gproj));
    free_(m, sum);
    free_(m, sel[2]);
    free_(m, s->proj);
    int gqkv = new16(m, 3 * T * E); /* back through the views: a contiguous copy */
    ew(m, 12 * T * E, LIST(gproj, gqkv));
    free_(m, gproj);
    return gqkv;
}

/* One layer's backward from gout (fp32, the gradient of its output); returns its input's
   gradient, or -1 for the first layer. */
static int layer_backward(struct tf *m, int l, struct saved *s, int gout)
{
    uint64_t T = m->T, E = m->E, F = m->F;
    bool first = l == 0;
    /* xout = x1 + f2 */
    int gf2 = cast(m, gout, T * E, 4, 2);
    int gr = linear_backward(m, l, gf2, s->r, s->w2, T, F, E, L2_W, L2_B, true);
    free_(m, gf2);
    int gf1 = new16(m, T * F);
    ew(m, 6 * T * F, LIST(gr, s->r, gf1)); /* threshold_backward */
    free_(m, gr);
    free_(m, s->r);
    int gn2b = linear_backward(m, l, gf1, s->n2b, s->w1, T, E, F, L1_W, L1_B, true);
    free_(m, gf1);
    free_(m, s->n2b);
    int gn2 = cast(m, gn2b, T * E, 2, 4);
    free_(m, gn2b);
    int gx1 = ln_backward(m, l, gn2, s->x1, s->mean2, s->rstd2, N2_W, N2_B, true);
    free_(m, gn2);
    free_(m, s->x1);
    gx1 = accumulate(m, gout, gx1);
    /* x1 = xin + y */
    int gy = cast(m, gx1, T * E, 4, 2);
    int gheads = linear_backward(m, l, gy, s->heads, s->wo, T, E, E, OUT_W, OUT_B, true);
    free_(m, gy);
    free_(m, s->heads);
    int gqkv = attention_backward(m, s, gheads);
    int gn1b = linear_backward(m, l, gqkv, s->n1b, s->wq, T, E, 3 * E, IN_W, IN_B, true);
    free_(m, gqkv);
    free_(m, s->n1b);
    int gn1 = cast(m, gn1b, T * E, 2, 4);
    free_(m, gn1b);
    int gxin = ln_backward(m, l, gn1, s->xin, s->mean1, s->rstd1, N1_W, N1_B, !first);
    free_(m, gn1);
    if (first) {
        free_(m, gx1);
        return -1;
    }
    free_(m, s->xin);
    return accumulate(m, gx1, gxin);
}

static void adam(struct tf *m, int L)
{
    int n = L * NPARAMS, p[MAX_LAYERS * NPARAMS], g[MAX_LAYERS * NPARAMS], ea[MAX_LAYERS * NPARAMS],
        es[MAX_LAYERS * NPARAMS], sq[MAX_LAYERS * NPARAMS];
    uint64_t numel[MAX_LAYERS * NPARAMS];
    for (int l = 0; l < L; l++)
        for (int k = 0; k < NPARAMS; k++) {
            int i = l * NPARAMS + k;
            p[i] = m->p[l][k], g[i] = m->g[l][k], ea[i] = m->ea[l][k], es[i] = m->es[l][k];
            numel[i] = m->numel[k];
        }
    const int *lerp[] = {ea, g}, *mul[] = {es}, *addcmul[] = {es, g, g}, *sqrt_[] = {es, sq},
              *one[] = {sq}, *addcdiv[] = {p, ea, sq};
    twin_foreach(m->t, 2, lerp, numel, n, 4, 3);
    twin_foreach(m->t, 1, mul, numel, n, 4, 2);
    twin_foreach(m->t, 3, addcmul, numel, n, 4, 3);
    for (int i = 0; i < n; i++)
        sq[i] = twin_tensor(m->t, 4 * numel[i], TWIN_STEP);
    twin_foreach(m->t, 2, sqrt_, numel, n, 4, 2);
    twin_foreach(m->t, 1, one, numel, n, 4, 2);
    twin_foreach(m->t, 1, one, numel, n, 4, 2);
    twin_foreach(m->t, 3, addcdiv, numel, n, 4, 4);
    for (int i = 0; i < n; i++)
        twin_free(m->t, sq[i]);
}

static void params(struct tf *m, int L)
{
    uint64_t E = m->E, F = m->F;
    const uint64_t numel[NPARAMS] = {3 * E * E, 3 * E, E * E, E, F * E, F, E * F, E, E, E, E, E};
    for (int k = 0; k < NPARAMS; k++)
        m->numel[k] = numel[k];
    for (int l = 0; l < L; l++)
        for (int k = 0; k < NPARAMS; k++) {
            m->p[l][k] = twin_tensor(m->t, 4 * numel[k], TWIN_CYCLIC);
            m->ea[l][k] = twin_tensor(m->t, 4 * numel[k], TWIN_CYCLIC);
            m->es[l][k] = twin_tensor(m->t, 4 * numel[k], TWIN_CYCLIC);
        }
}

int twin_transformer(struct twin_tape *t, const struct twin_shape *s, const struct twin_calib *c)
{
    int L = s->layers;
    if (L < 1 || L > MAX_LAYERS || s->heads < 1 || s->width % s->heads)
        return -1;
    struct tf m = {.t = t, .c = c};
    m.B = (uint64_t)s->batch, m.S = (uint64_t)s->seq, m.E = (uint64_t)s->width;
    m.H = (uint64_t)s->heads, m.T = m.B * m.S, m.F = 4 * m.E;
    m.x = twin_tensor(t, 4 * m.T * m.E, TWIN_CYCLIC);
    m.y = twin_tensor(t, 4 * m.T * m.E, TWIN_CYCLIC);
    m.ws = twin_tensor(t, WORKSPACE, TWIN_CYCLIC);
    params(&m, L);
    /* Carried in the order the step makes their successors: out, then the gradients as the
       backward pass makes them (last layer first; within a layer linear2, linear1, norm2,
       out_proj, in_proj, norm1, weight before bias). */
    static const int order[NPARAMS] = {L2_W,  L2_B,  L1_W, L1_B, N2_W, N2_B,
                                       OUT_W, OUT_B, IN_W, IN_B, N1_W, N1_B};
    int old_out = twin_tensor(t, 4 * m.T * m.E, TWIN_CARRIED);
    for (int l = L - 1; l >= 0; l--)
        for (int k = 0; k < NPARAMS; k++)
            m.old_g[l][order[k]] = twin_tensor(t, 4 * m.numel[order[k]], TWIN_CARRIED);
    struct saved sv[MAX_LAYERS];
    int xin = m.x;
    for (int l = 0; l < L; l++) {
        sv[l].xin = xin;
        layer_forward(&m, l, &sv[l]);
        xin = sv[l].xout;
    }
    m.out = xin;
    twin_free(t, old_out);
    int sq = twin_tensor(t, 4 * m.T * m.E, TWIN_STEP); /* mse_loss: the squared difference */
    ew(&m, 12 * m.T * m.E, LIST(m.out, m.y, sq));
    ew(&m, 4 * m.T * m.E, LIST(sq));
    twin_free(t, sq);
    for (int l = 0; l < L; l++) /* zero_grad(set_to_none=True) */
        for (int k = 0; k < NPARAMS; k++)
            twin_free(t, m.old_g[l][k]);
    int g = twin_tensor(t, 4 * m.T * m.E, TWIN_STEP); /* mse_loss_backward */
    ew(&m, 12 * m.T * m.E, LIST(m.out, m.y, g));
    for (int l = L - 1; l >= 0; l--)
        g = layer_backward(&m, l, &sv[l], g);
    adam(&m, L);
    return 0;
}
