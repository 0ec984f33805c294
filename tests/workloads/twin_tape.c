/* twin_tape.c — the tape a twin's step is written on (tensors, operations, touches), the GPU time
 * of its kernels, PyTorch's foreach launches and deterministic-mode fills, and the tape as a
 * model (planner/MODEL-FORMAT.md).
 *
 * GPU time. Elementwise and reduction kernels move their bytes at TWIN_HBM_EFFICIENCY (0.9) of the
 * HBM3 peak: streaming kernels of tens of MiB run near the peak; 0.9 is an assumption, and the
 * twins are insensitive to it (the MLP's matrix products take the rest of its measured step, the
 * transformer's step is set by its host). No kernel takes less than TWIN_MIN_KERNEL_US (assumed:
 * a kernel over a few KiB still takes microseconds). Matrix products run at the rate each twin
 * says (twin_mlp.c derives it from the MLP's measured step). */
#include "twin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tensor {
    uint64_t bytes;
    enum twin_life life;
    int birth, death; /* operation numbers; -1: before the step / outlives it */
    int *touch;       /* operations that touch it, in order */
    int ntouch, cap;
};

struct twin_tape {
    struct tensor *v;
    int n, cap;
    double *dur; /* per operation */
    bool *mm;    /* per operation: a matrix product (twin_mm) */
    int nops, cap_ops;
    int fills, fill_of; /* twin_tape_fills: fills per fill_of step tensors (0: none) */
    int step_tensors;
    bool failed;
};

static void *grow(void *p, int *cap, int need, size_t each)
{
    if (need <= *cap)
        return p;
    int c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(p, (size_t)c * each);
    if (q)
        *cap = c;
    return q;
}

struct twin_tape *twin_tape_new(void)
{
    struct twin_tape *t = calloc(1, sizeof *t);
    if (!t)
        fprintf(stderr, "twin: out of memory for the tape\n");
    return t;
}

void twin_tape_free(struct twin_tape *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->n; i++)
        free(t->v[i].touch);
    free(t->v);
    free(t->dur);
    free(t->mm);
    free(t);
}

static void touch(struct twin_tape *t, int id, int op)
{
    struct tensor *x = &t->v[id];
    if (x->ntouch && x->touch[x->ntouch - 1] == op)
        return;
    int *v = grow(x->touch, &x->cap, x->ntouch + 1, sizeof *v);
    if (!v) {
        t->failed = true;
        return;
    }
    x->touch = v;
    x->touch[x->ntouch++] = op;
}

int twin_op(struct twin_tape *t, double dur_us, const int *ids, int n)
{
    int cap = t->cap_ops;
    double *d = grow(t->dur, &cap, t->nops + 1, sizeof *d);
    if (d)
        t->dur = d;
    bool *m = d ? grow(t->mm, &t->cap_ops, t->nops + 1, sizeof *m) : NULL;
    if (!m) {
        t->failed = true;
        return t->nops - 1;
    }
    t->mm = m;
    int op = t->nops++;
    t->mm[op] = false;
    t->dur[op] = dur_us > TWIN_MIN_KERNEL_US ? dur_us : TWIN_MIN_KERNEL_US;
    for (int i = 0; i < n; i++)
        if (ids[i] >= 0 && ids[i] < t->n)
            touch(t, ids[i], op);
    return op;
}

int twin_mm(struct twin_tape *t, double flops, double tflops, const int *ids, int n)
{
    int op = twin_op(t, twin_mm_us(flops, tflops), ids, n);
    if (op >= 0 && !t->failed)
        t->mm[op] = true;
    return op;
}

double twin_gpu_us(const struct twin_tape *t, double *mm_us)
{
    double all = 0, mm = 0;
    for (int q = 0; q < t->nops; q++) {
        all += t->dur[q];
        mm += t->mm[q] ? t->dur[q] : 0;
    }
    if (mm_us)
        *mm_us = mm;
    return all;
}

double twin_step_us(const struct twin_tape *t, double host_us, double *tail)
{
    double host = 0, gpu = 0;
    for (int q = 0; q < t->nops; q++) {
        host += host_us;
        gpu = (gpu > host ? gpu : host) + t->dur[q];
    }
    if (tail)
        *tail = gpu - host;
    return gpu;
}

int twin_tensor(struct twin_tape *t, uint64_t bytes, enum twin_life life)
{
    struct tensor *v = grow(t->v, &t->cap, t->n + 1, sizeof *v);
    if (!v) {
        t->failed = true;
        return -1;
    }
    t->v = v;
    int id = t->n++;
    t->v[id] = (struct tensor){.bytes = bytes, .life = life, .birth = -1, .death = -1};
    if (life == TWIN_STEP) {
        t->v[id].birth = t->nops;
        int j = t->step_tensors++;
        /* fills of every fill_of, evenly: tensor j is filled when floor((j + 1) f / n) steps */
        if (t->fill_of > 0 && (j + 1) * t->fills / t->fill_of > j * t->fills / t->fill_of)
            twin_op(t, twin_ew_us(bytes), &id, 1);
    }
    return id;
}

void twin_free(struct twin_tape *t, int id)
{
    if (id >= 0 && id < t->n && t->v[id].life != TWIN_CYCLIC)
        t->v[id].death = t->nops - 1;
}

uint64_t twin_bytes(const struct twin_tape *t, int id)
{
    return id >= 0 && id < t->n ? t->v[id].bytes : 0;
}

int twin_ops(const struct twin_tape *t)
{
    return t->nops;
}

int twin_step_tensors(const struct twin_tape *t)
{
    return t->step_tensors;
}

void twin_tape_fills(struct twin_tape *t, int fills, int tensors)
{
    t->fills = fills > 0 ? fills : 0;
    t->fill_of = tensors > 0 ? tensors : 0;
}

double twin_ew_us(uint64_t bytes)
{
    return (double)bytes / (TWIN_HBM_GBPS * TWIN_HBM_EFFICIENCY * 1e3);
}

double twin_mm_us(double flops, double tflops)
{
    return flops / (tflops * 1e6);
}

/* multi_tensor_apply's limits (ATen/native/cuda/MultiTensorApply.cuh). */
#define CHUNK_ELEMS 65536
#define MAX_BLOCKS  320
static const int max_tensors[5] = {110, 64, 48, 36, 30};

/* One launch of a foreach over tensors [first, last] (the first and last may be partly
   covered): touches them in every list; elems: the elements its blocks cover. */
static void foreach_launch(struct twin_tape *t, int depth, const int *const *lists, int first,
                           int last, uint64_t elems, int elem, double traffic)
{
    int ids[5 * 110];
    int n = 0;
    for (int i = first; i <= last; i++)
        for (int d = 0; d < depth; d++)
            ids[n++] = lists[d][i];
    twin_op(t, twin_ew_us((uint64_t)((double)elems * elem * traffic)), ids, n);
}

int twin_foreach(struct twin_tape *t, int depth, const int *const *lists, const uint64_t *numel,
                 int ntensors, int elem, double traffic)
{
    int launches = 0, blocks = 0, in_launch = 0, first = 0;
    uint64_t elems = 0;
    for (int i = 0; i < ntensors; i++) {
        uint64_t chunks = (numel[i] + CHUNK_ELEMS - 1) / CHUNK_ELEMS;
        in_launch++;
        for (uint64_t c = 0; c < chunks; c++) {
            uint64_t left = numel[i] - c * CHUNK_ELEMS;
            elems += left < CHUNK_ELEMS ? left : CHUNK_ELEMS;
            blocks++;
            bool last_chunk = c + 1 == chunks;
            bool tensors_full = in_launch == max_tensors[depth - 1] && last_chunk;
            bool blocks_full = blocks == MAX_BLOCKS;
            if (tensors_full || blocks_full || (i + 1 == ntensors && last_chunk)) {
                foreach_launch(t, depth, lists, first, i, elems, elem, traffic);
                launches++;
                blocks = 0;
                elems = 0;
                /* a tensor whose chunks go on carries over into the next launch */
                in_launch = last_chunk ? 0 : 1;
                first = last_chunk ? i + 1 : i;
            }
        }
    }
    return launches;
}

int twin_tape_model(const struct twin_tape *t, const plan_hw *hw, plan_model *out)
{
    plan_model_init(out);
    out->hw = *hw;
    if (t->failed) {
        fprintf(stderr, "twin: out of memory while writing the step\n");
        return -1;
    }
    for (int q = 0; q < t->nops; q++)
        if (plan_model_add_op(out, t->dur[q], 0) != PLAN_OK)
            goto fail;
    for (int i = 0; i < t->n; i++) {
        const struct tensor *x = &t->v[i];
        if (plan_model_add_alloc(out, x->bytes, x->birth, x->death, x->touch, (size_t)x->ntouch) !=
            PLAN_OK)
            goto fail;
    }
    char msg[256];
    if (plan_model_check(out, NULL, msg, sizeof msg) != PLAN_OK) {
        fprintf(stderr, "twin: the step is not a valid model: %s\n", msg);
        plan_model_free(out);
        return -1;
    }
    return 0;
fail:
    fprintf(stderr, "twin: out of memory for the model\n");
    plan_model_free(out);
    return -1;
}
