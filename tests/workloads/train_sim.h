/* train_sim.h — internal interfaces of train_sim, a transformer-like training step on the
 * simulated device, grouped by defining file.
 *
 * Every tensor is an array of 32-bit words. Kernels touch SAMPLED words only:
 * four consecutive words in one 4 KiB page out of every `stride` bytes, plus
 * the last four words of the tensor, so that every 2 MiB chunk of every tensor
 * is read and written (stride is at most 1 MiB) while a 2 GiB configuration
 * runs in seconds. The arithmetic is integer mixing: any lost or stale sampled
 * word changes every later result, and nothing depends on addresses or on the
 * allocation mode.
 *
 * Error contract: int functions return 0, or -1 after printing one line
 * "train_sim: <call> failed: <message> (<error name>)" on stderr. */
#ifndef TRAIN_SIM_H
#define TRAIN_SIM_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#define TRAIN_SIM_MAX_PTRS 16 /* device pointers of one kernel */

enum train_sim_mode { TRAIN_SIM_SEGMENTS, TRAIN_SIM_ASYNC, TRAIN_SIM_EXACT };

/* Test instrument (--lose): zero one 2 MiB chunk of a tensor in iteration 0,
   as a lost eviction would, to show that the checksum catches it. W1: layer
   0's MLP weight after the step; H: layer 0's MLP activation between forward
   and backward. */
enum train_sim_lose { TRAIN_SIM_LOSE_NONE, TRAIN_SIM_LOSE_W1, TRAIN_SIM_LOSE_H };

struct train_sim_config {
    int layers, hidden, batch, seq, vocab, iters;
    uint64_t stride;          /* sampling stride in bytes */
    enum train_sim_mode mode; /* how tensors get device memory */
    enum train_sim_lose lose;
    uint64_t lose_chunk; /* index of the 2 MiB chunk --lose zeroes */
    int device;          /* first device (--device; -1: $LOCAL_RANK, else 0) */
    int devices;         /* replicas, one per device from `device` on (--devices) */
};

/* A device tensor: words 32-bit words at p (NULL when not allocated). */
struct train_sim_tensor {
    uint32_t *p;
    uint64_t words;
};

/* X(name, inputs, outputs, body): every kernel of the step. The pointer
   parameters are the inputs then the outputs (an output may also be an
   input: it is read before it is written). Bodies: MIX (outputs depend on
   every sampled input word), ADAM (element-wise update of groups W, g, m, v),
   INIT (deterministic values), ZERO, SUM (fold one tensor into out[salt]). */
/* clang-format off */
#define TRAIN_SIM_KERNELS(X) \
    X(embed, 2, 1, MIX)        /* tokens, E -> x0 */ \
    X(qkv, 2, 1, MIX)          /* x, Wqkv -> qkv */ \
    X(attn, 1, 1, MIX)         /* qkv -> att */ \
    X(proj, 3, 1, MIX)         /* att, Wo, x -> y1 (residual) */ \
    X(mlp_up, 2, 1, MIX)       /* y1, W1 -> h */ \
    X(mlp_down, 3, 1, MIX)     /* h, W2, y1 -> out (residual) */ \
    X(loss, 3, 2, MIX)         /* y, tokens, lossbuf -> dy, lossbuf */ \
    X(mlp_down_bwd, 3, 2, MIX) /* dy, h, W2 -> dh, g2 */ \
    X(mlp_up_bwd, 4, 2, MIX)   /* dh, y1, W1, dy -> dy1, g1 */ \
    X(proj_bwd, 3, 2, MIX)     /* dy1, att, Wo -> datt, go */ \
    X(attn_bwd, 2, 1, MIX)     /* datt, qkv -> dqkv */ \
    X(qkv_bwd, 4, 2, MIX)      /* dqkv, x, Wqkv, dy1 -> dx, gqkv */ \
    X(embed_bwd, 2, 1, MIX)    /* dx, tokens -> gE */ \
    X(adam_layer, 16, 0, ADAM) /* W x4, g x4, m x4, v x4 (updated in place) */ \
    X(adam_embed, 4, 0, ADAM)  /* E, gE, mE, vE */ \
    X(init, 0, 1, INIT)        /* -> weight */ \
    X(zero, 0, 1, ZERO)        /* -> optimizer state */ \
    X(sum, 1, 1, SUM)          /* tensor -> checksum words */
/* clang-format on */

enum train_sim_kernel {
#define TRAIN_SIM_ENUM(name, nin, nout, body) TRAIN_SIM_K_##name,
    TRAIN_SIM_KERNELS(TRAIN_SIM_ENUM)
#undef TRAIN_SIM_ENUM
        TRAIN_SIM_K_COUNT
};

/* Prints "train_sim: <what> failed: <message> (<name>)" and returns -1 if
   e is an error, else returns 0. */
int train_sim_check(cudaError_t e, const char *what);
#define TRAIN_SIM_CHECK(call) train_sim_check((call), #call)

/* train_sim_kernel.c */
/* Registers every kernel with a cost proportional to the work (FLOPs or
   bytes) it stands for in configuration c. Returns 0, or -1. */
int train_sim_kernel_register(const struct train_sim_config *c);
/* Launches kernel k on s over n tensors (inputs then outputs) with salt. */
int train_sim_kernel_launch(enum train_sim_kernel k, cudaStream_t s, uint32_t salt,
                            const struct train_sim_config *c, int n,
                            const struct train_sim_tensor *const *t);

/* train_sim_alloc.c — device memory for tensors in one of the three modes;
   all stream-ordered work is on the compute stream given at creation. */
struct train_sim_alloc;
/* Returns the allocator, or NULL (host memory exhausted). */
struct train_sim_alloc *train_sim_alloc_new(enum train_sim_mode mode, cudaStream_t compute);
/* Gives *p bytes of device memory; prints the failing call and returns -1. */
int train_sim_alloc_get(struct train_sim_alloc *a, size_t bytes, void **p);
/* Returns memory from train_sim_alloc_get (stream-ordered after queued work);
   NULL is a no-op. */
int train_sim_alloc_put(struct train_sim_alloc *a, void *p);
/* Releases every cached segment (the run is over) and the allocator; blocks
   still in use are released with their segment. */
int train_sim_alloc_free(struct train_sim_alloc *a);

/* train_sim_model.c */
struct train_sim_model;
/* Allocates and initialises weights and optimizer state. *out is set even
   on failure (so that train_sim_model_free can release what was made). */
int train_sim_model_new(const struct train_sim_config *c, struct train_sim_model **out);
/* One training step: forward, loss, backward, optimizer, loss read back.
   Sets *loss and *device_us (virtual time of the step). */
int train_sim_model_step(struct train_sim_model *m, int iter, uint32_t *loss, double *device_us);
/* Folds every persistent tensor into a 64-bit checksum (read back). */
int train_sim_model_checksum(struct train_sim_model *m, uint64_t *sum);
/* Most bytes of tensors live at once so far (what an exact allocator needs). */
uint64_t train_sim_model_tensor_peak(const struct train_sim_model *m);
/* Frees everything; returns -1 if a CUDA call failed while doing it. */
int train_sim_model_free(struct train_sim_model *m);

#endif
