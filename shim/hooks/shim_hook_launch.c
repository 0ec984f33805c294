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

struct launch_args {
    CUfunction f;
    CUstream stream;
    bool per_thread;
    void **params, **extra;
};

/* Before the real launch: times it if this step is profiled. */
static int before(const struct launch_args *a)
{
    return shim_steps_profiling() ? shim_timing_begin(a->stream, a->per_thread) : -1;
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
    shim_steps_launch(seq, fn->id);
    if (shim.record & CONF_RECORD_LAUNCHES)
        shim_trace_launch(seq, fn->id, shim_stream_id(a->stream, a->per_thread), t->s.ids, t->s.n);
    if (shim_step_recording())
        shim_plan_rec_launch(seq, fn->id, shim_stream_id(a->stream, a->per_thread), t->s.ids,
                             t->s.n);
    shim_scan_release(&t->s);
}

static inline __attribute__((always_inline)) CUresult
launch(shim_fn_cuLaunchKernel real, const struct launch_args *a, unsigned gx, unsigned gy,
       unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shmem)
{
    if (!shim_active())
        return real(a->f, gx, gy, gz, bx, by, bz, shmem, a->stream, a->params, a->extra);
    const struct shim_func *fn = shim_func_get(a->f);
    struct touched t;
    scan(&t, a, fn);
    int slot = before(a);
    CUresult rc = t.refuse
                      ? t.refuse
                      : real(a->f, gx, gy, gz, bx, by, bz, shmem, a->stream, a->params, a->extra);
    after(a, fn, slot, &t, rc);
    return rc;
}

CUresult CUDAAPI cuLaunchKernel SHIM_LAUNCH_P
{
    SHIM_NEED_REAL(cuLaunchKernel);
    struct launch_args a = {f, hStream, false, kernelParams, extra};
    return launch(shim.real.cuLaunchKernel, &a, gx, gy, gz, bx, by, bz, shmem);
}

CUresult CUDAAPI cuLaunchKernel_ptsz SHIM_LAUNCH_P
{
    SHIM_NEED_REAL(cuLaunchKernel_ptsz);
    struct launch_args a = {f, hStream, true, kernelParams, extra};
    return launch(shim.real.cuLaunchKernel_ptsz, &a, gx, gy, gz, bx, by, bz, shmem);
}

static CUresult launch_ex(shim_fn_cuLaunchKernelEx real, bool per_thread,
                          const CUlaunchConfig *config, CUfunction f, void **params, void **extra)
{
    if (!shim_active() || !config)
        return real(config, f, params, extra);
    struct launch_args a = {f, config->hStream, per_thread, params, extra};
    const struct shim_func *fn = shim_func_get(f);
    struct touched t;
    scan(&t, &a, fn);
    int slot = before(&a);
    CUresult rc = t.refuse ? t.refuse : real(config, f, params, extra);
    after(&a, fn, slot, &t, rc);
    return rc;
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                                  void **extra)
{
    SHIM_NEED_REAL(cuLaunchKernelEx);
    return launch_ex(shim.real.cuLaunchKernelEx, false, config, f, kernelParams, extra);
}

CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
                                       void **kernelParams, void **extra)
{
    SHIM_NEED_REAL(cuLaunchKernelEx_ptsz);
    return launch_ex(shim.real.cuLaunchKernelEx_ptsz, true, config, f, kernelParams, extra);
}

static CUresult coop(shim_fn_cuLaunchCooperativeKernel real, const struct launch_args *a,
                     unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                     unsigned shmem)
{
    if (!shim_active())
        return real(a->f, gx, gy, gz, bx, by, bz, shmem, a->stream, a->params);
    const struct shim_func *fn = shim_func_get(a->f);
    struct touched t;
    scan(&t, a, fn);
    int slot = before(a);
    CUresult rc =
        t.refuse ? t.refuse : real(a->f, gx, gy, gz, bx, by, bz, shmem, a->stream, a->params);
    after(a, fn, slot, &t, rc);
    return rc;
}

CUresult CUDAAPI cuLaunchCooperativeKernel SHIM_COOP_P
{
    SHIM_NEED_REAL(cuLaunchCooperativeKernel);
    struct launch_args a = {f, hStream, false, kernelParams, NULL};
    return coop(shim.real.cuLaunchCooperativeKernel, &a, gx, gy, gz, bx, by, bz, shmem);
}

CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz SHIM_COOP_P
{
    SHIM_NEED_REAL(cuLaunchCooperativeKernel_ptsz);
    struct launch_args a = {f, hStream, true, kernelParams, NULL};
    return coop(shim.real.cuLaunchCooperativeKernel_ptsz, &a, gx, gy, gz, bx, by, bz, shmem);
}
