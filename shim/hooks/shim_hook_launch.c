/* shim_hook_launch.c — launch hooks: the hot path. Records the launch, its function and the
 * allocations it touches.
 *
 * Per launch, in steady state: the cached function description (a lock-free
 * table probe), one relaxed atomic for the launch index, one for the step
 * hash, the pointer scan (sequence-locked table reads) and one trace record into
 * the thread's buffer. Nothing is allocated or locked, except rarely: a launch
 * with more than SHIM_SCAN_LOCAL parameter words may grow its thread's scan
 * buffer (shim_scan.c), and the first launch of a function after a module unload
 * reads its layout again (shim_params.c). Profiled steps add two event records
 * (and a brief lock) around the launch. */
#include "shim_hooks.h"

/* One launch, whichever entry point made it: what the launch path reads, and how to submit it. */
struct launch_args {
    CUfunction f;
    CUstream stream;
    bool per_thread;
    void **params, **extra;
    enum { LAUNCH_PLAIN, LAUNCH_EX, LAUNCH_COOP } kind;
    union {
        shim_fn_cuLaunchKernel plain; /* also the _ptsz variant's type */
        shim_fn_cuLaunchKernelEx ex;
        shim_fn_cuLaunchCooperativeKernel coop;
    } real;
    unsigned gx, gy, gz, bx, by, bz, shmem; /* PLAIN and COOP */
    const CUlaunchConfig *config;           /* EX */
};

/* The real launch. */
static inline CUresult submit(const struct launch_args *a)
{
    switch (a->kind) {
    case LAUNCH_EX:
        return a->real.ex(a->config, a->f, a->params, a->extra);
    case LAUNCH_COOP:
        return a->real.coop(a->f, a->gx, a->gy, a->gz, a->bx, a->by, a->bz, a->shmem, a->stream,
                            a->params);
    default:
        return a->real.plain(a->f, a->gx, a->gy, a->gz, a->bx, a->by, a->bz, a->shmem, a->stream,
                             a->params, a->extra);
    }
}

/* Before the real launch: times it if this step is profiled. */
static int before(const struct launch_args *a)
{
    return shim_steps_profiling(&shim.steps) ? shim_timing_begin(a->stream, a->per_thread) : -1;
}

/* The allocations a launch touches (scanned before it is submitted: residency needs them). */
struct touched {
    struct shim_scan s; /* all of them, however many */
    bool pinned;        /* managed ones were made resident and pinned */
    CUresult refuse;    /* not CUDA_SUCCESS: a range could not be made usable; the launch is
                           not submitted and the program gets this error */
};

static inline void scan(struct touched *t, const struct launch_args *a, const struct shim_func *fn)
{
    t->pinned = false;
    t->refuse = CUDA_SUCCESS;
    if (!(shim.record & CONF_RECORD_LAUNCHES) && shim.mode != CONF_MODE_AUTO) {
        t->s.ids = t->s.local;
        t->s.n = 0;
        t->s.locked = false;
        return;
    }
    shim_scan_params(fn, a->params, a->extra, &t->s);
    if (a->params && fn->nparams <= 0 && fn->id)
        SHIM_LOG_ONCE(SHIM_LOG_INFO, "a kernel's parameter layout is unknown to the driver: its "
                                     "launches show no touched allocations");
    if (shim.mode == CONF_MODE_AUTO) /* record mode never starts residency */
        t->pinned = shim_resid_enter(t->s.ids, t->s.n, a->stream, a->per_thread, true, &t->refuse);
}

/* After the real launch: unpin; if it succeeded, number it, feed the step detector, record it. */
static void after(const struct launch_args *a, const struct shim_func *fn, int slot,
                  struct touched *t, CUresult rc)
{
    if (t->pinned)
        shim_resid_leave(t->s.ids, t->s.n);
    if (rc != CUDA_SUCCESS) {
        if (slot >= 0)
            shim_timing_cancel(slot);
        shim_scan_release(&t->s);
        return;
    }
    uint64_t seq = atomic_fetch_add_explicit(&shim.launch_seq, 1, memory_order_relaxed);
    if (slot >= 0)
        shim_timing_end(slot, a->stream, a->per_thread, seq);
    shim_steps_launch(&shim.steps, seq, fn->id);
    if (shim.record & CONF_RECORD_LAUNCHES)
        shim_trace_launch(seq, fn->id, shim_stream_id(a->stream, a->per_thread), t->s.ids, t->s.n);
    if (shim_step_studying())
        shim_plan_study_launch(seq, fn->id, shim_stream_id(a->stream, a->per_thread), t->s.ids,
                               t->s.n);
    shim_scan_release(&t->s);
}

/* The launch path around the real launch: scan, make resident, time, submit (or refuse), record. */
static inline __attribute__((always_inline)) CUresult launch(const struct launch_args *a)
{
    if (!shim_active() || (a->kind == LAUNCH_EX && !a->config))
        return submit(a);
    const struct shim_func *fn = shim_func_get(a->f);
    struct touched t;
    scan(&t, a, fn);
    int slot = before(a);
    CUresult rc = t.refuse ? t.refuse : submit(a);
    after(a, fn, slot, &t, rc);
    return rc;
}

/* A launch with a grid (cuLaunchKernel, cuLaunchCooperativeKernel and their _ptsz forms). */
#define GRID_LAUNCH(kind_, field, sym, per_thread_, extra_)                                        \
    do {                                                                                           \
        SHIM_NEED_REAL(sym);                                                                       \
        struct launch_args a = {.f = f,                                                            \
                                .stream = hStream,                                                 \
                                .per_thread = per_thread_,                                         \
                                .params = kernelParams,                                            \
                                .extra = extra_,                                                   \
                                .kind = kind_,                                                     \
                                .real.field = shim.real.sym,                                       \
                                .gx = gx,                                                          \
                                .gy = gy,                                                          \
                                .gz = gz,                                                          \
                                .bx = bx,                                                          \
                                .by = by,                                                          \
                                .bz = bz,                                                          \
                                .shmem = shmem};                                                   \
        return launch(&a);                                                                         \
    } while (0)

CUresult CUDAAPI cuLaunchKernel SHIM_LAUNCH_P
{
    GRID_LAUNCH(LAUNCH_PLAIN, plain, cuLaunchKernel, false, extra);
}

CUresult CUDAAPI cuLaunchKernel_ptsz SHIM_LAUNCH_P
{
    GRID_LAUNCH(LAUNCH_PLAIN, plain, cuLaunchKernel_ptsz, true, extra);
}

/* A launch described by a CUlaunchConfig (cuLaunchKernelEx and its _ptsz form). */
#define CONFIG_LAUNCH(sym, per_thread_)                                                            \
    do {                                                                                           \
        SHIM_NEED_REAL(sym);                                                                       \
        struct launch_args a = {.f = f,                                                            \
                                .stream = config ? config->hStream : NULL,                         \
                                .per_thread = per_thread_,                                         \
                                .params = kernelParams,                                            \
                                .extra = extra,                                                    \
                                .kind = LAUNCH_EX,                                                 \
                                .real.ex = shim.real.sym,                                          \
                                .config = config};                                                 \
        return launch(&a);                                                                         \
    } while (0)

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                                  void **extra)
{
    CONFIG_LAUNCH(cuLaunchKernelEx, false);
}

CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
                                       void **kernelParams, void **extra)
{
    CONFIG_LAUNCH(cuLaunchKernelEx_ptsz, true);
}

CUresult CUDAAPI cuLaunchCooperativeKernel SHIM_COOP_P
{
    GRID_LAUNCH(LAUNCH_COOP, coop, cuLaunchCooperativeKernel, false, NULL);
}

CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz SHIM_COOP_P
{
    GRID_LAUNCH(LAUNCH_COOP, coop, cuLaunchCooperativeKernel_ptsz, true, NULL);
}
