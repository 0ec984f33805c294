/* twin.h — internal interfaces of twin, which writes the iteration model (planner/MODEL-FORMAT.md)
 * of a twin of one of the two PyTorch jobs the H100 ran (tests/gpu/torch_train.py; figures in
 * tests/bench/RESULTS-gpu.md), for build/replay to run on the simulated device.
 *
 * A twin is written as the job's step runs in PyTorch: tensors made by the operation that writes
 * them, saved for the backward pass, freed where their last reference goes, one kernel launch per
 * operation with the GPU time the H100's figures and the shapes imply (twin_tape.c). The program
 * then replays it with `replay --carry` (gradients and the output live from one step into the
 * next) and the host time per launch of the model's `# host_us_per_launch` line
 * (SIMGPU_HOST_US_PER_LAUNCH, or replay --host-us under an interposer: twin_main.c).
 *
 * Error contract: int functions return 0, or -1 after printing one line "twin: <what>" on
 * stderr. */
#ifndef TWIN_H
#define TWIN_H

#include "plan.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TWIN_MIB ((uint64_t)1 << 20)

/* The H100's public peak figures (NVIDIA H100 SXM5 80GB datasheet: the card of RESULTS-gpu.md,
   an "H100 80GB HBM3"), and the efficiencies the twins take (twin_tape.c says why). */
#define TWIN_HBM_GBPS       3350.0 /* HBM3 bandwidth, GB/s */
#define TWIN_FP32_TFLOPS    67.0   /* FP32, no tensor cores (the jobs turn TF32 off) */
#define TWIN_BF16_TFLOPS    989.0  /* BF16 tensor cores, dense */
#define TWIN_HBM_EFFICIENCY 0.9    /* what a streaming elementwise kernel reaches of the peak */
#define TWIN_MIN_KERNEL_US  2.0    /* the least a kernel takes on the GPU */

/* The step as it is written: tensors and operations. */
struct twin_tape;

/* The kinds of tensor, by when it lives (planner/MODEL-FORMAT.md's birth and death). */
enum twin_life {
    TWIN_STEP,   /* made in the step (by the next operation), freed in it or outliving it */
    TWIN_CYCLIC, /* weights, optimizer state, inputs: made once, live throughout */
    TWIN_CARRIED /* made in the previous step and freed in this one (`replay --carry`) */
};

/* A new empty tape, or NULL (out of memory, said on stderr). */
struct twin_tape *twin_tape_new(void);
void twin_tape_free(struct twin_tape *t);
/* A tensor of `bytes` bytes; a TWIN_STEP tensor is born before the next operation. Returns its
   id, or -1 (out of memory: the tape is then marked failed, and twin_tape_model says so). */
int twin_tensor(struct twin_tape *t, uint64_t bytes, enum twin_life life);
/* Appends an operation of dur_us microseconds of GPU time touching the n tensors ids[]
   (negative ids are skipped). Returns its index. */
int twin_op(struct twin_tape *t, double dur_us, const int *ids, int n);
/* The tensor dies after the last operation appended so far. */
void twin_free(struct twin_tape *t, int id);
/* The bytes of tensor id (0 for a negative id). */
uint64_t twin_bytes(const struct twin_tape *t, int id);
/* Operations appended so far. */
int twin_ops(const struct twin_tape *t);

/* GPU time of an elementwise or reduction kernel moving `bytes` through HBM. */
double twin_ew_us(uint64_t bytes);
/* GPU time of a matrix product of `flops` at `tflops` achieved. */
double twin_mm_us(double flops, double tflops);

/* One PyTorch foreach operation (torch._foreach_*, as Adam's multi-tensor path calls them) over
   ntensors tensors, in `depth` lists: lists[d][i] is tensor i of list d, of numel[i] elements of
   elem bytes; `traffic` is the elements read and written per element (lerp_: 3). Emits the
   launches multi_tensor_apply makes (chunks of 65536 elements, at most 320 blocks and
   {110, 64, 48, 36, 30}[depth - 1] tensors per launch: ATen's MultiTensorApply.cuh), each touching
   the tensors whose chunks it covers. Returns the launches. */
int twin_foreach(struct twin_tape *t, int depth, const int *const *lists, const uint64_t *numel,
                 int ntensors, int elem, double traffic);

/* Fills: deterministic mode (torch.use_deterministic_algorithms, which torch_train.py sets) fills
   uninitialised memory that torch.empty* returns (torch.utils.deterministic.fill_uninitialized_
   memory, on by default): a fill kernel writes a new tensor before its producer. Which of an
   operator's outputs come from torch.empty* is ATen's business; the twin takes the launches the
   shapes leave unexplained as fills, spread evenly: from now on `fills` of every `tensors` new
   TWIN_STEP tensors, in creation order, get a fill kernel when they are made. */
void twin_tape_fills(struct twin_tape *t, int fills, int tensors);
/* TWIN_STEP tensors made so far. */
int twin_step_tensors(const struct twin_tape *t);

/* The tape as a model: hw the link the planner is told. A carried tensor continues the step's
   tensor of its size that outlives it in the same order (replay --carry pairs the k-th of each
   size): make them in the same order. Returns 0, or -1 (said on stderr). */
int twin_tape_model(const struct twin_tape *t, const plan_hw *hw, plan_model *out);
/* The GPU time of all operations so far, and of the matrix products among them (twin_mm). */
double twin_gpu_us(const struct twin_tape *t, double *mm_us);
/* Appends a matrix product of `flops` at `tflops` achieved touching ids[0..n) (a twin_op that
   twin_gpu_us counts as one). Returns its index. */
int twin_mm(struct twin_tape *t, double flops, double tflops, const int *ids, int n);
/* The step's time on one stream when the host spends host_us before each launch and a kernel
   starts when both the host has launched it and the previous one is done (the simulated device's
   rule, simgpu_clock.c), to the end of the last kernel; *tail (if not NULL) gets how long the host
   then waits for the GPU. */
double twin_step_us(const struct twin_tape *t, double host_us, double *tail);

/* The figures the twins are built with, derived from the H100's measurements (twin_calib.c). */
struct twin_calib {
    int fills, fill_of;        /* twin_tape_fills: fills of every fill_of step tensors */
    double fp32_tflops;        /* matrix products in fp32 (no TF32) */
    double bf16_tflops;        /* matrix products in bf16 on the tensor cores */
    double host_us_per_launch; /* the program's own host time before each launch */
};
/* The H100's figures the calibration matches (tests/bench/RESULTS-gpu.md, libshim at dbfd80c). */
#define TWIN_MLP_STEP_US          67310.0 /* MLP, native, cudaMallocAsync */
#define TWIN_TRANSFORMER_STEP_US  39920.0 /* transformer, eager, native */
#define TWIN_TRANSFORMER_LAUNCHES 981     /* transformer, eager: launches a step */
/* Derives c at the two jobs' own shapes (torch_train.py's). Returns 0, or -1. */
int twin_calibrate(struct twin_calib *c);

/* twin_mlp.c, twin_transformer.c: the two jobs' steps, written onto t with c's figures. */
struct twin_shape {
    int layers, width, batch, seq, heads;
};
/* torch_train.py's shapes: --layers 8 --width 4096 --batch 4096; and --model transformer
   --layers 6 --width 1024 --seq 512 --batch 16 (16 heads). */
extern const struct twin_shape twin_mlp_shape, twin_transformer_shape;
int twin_mlp(struct twin_tape *t, const struct twin_shape *s, const struct twin_calib *c);
int twin_transformer(struct twin_tape *t, const struct twin_shape *s, const struct twin_calib *c);

#endif
