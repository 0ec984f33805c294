/* simgpu_streamapi.c — stream entry points: create, destroy, synchronize, query, host functions,
 * capture. */
#include "simgpu_internal.h"

/* Both creation entry points: the simulator has no stream priorities. */
static CUresult create(CUstream *out, unsigned int flags)
{
    SIM_NEED_ARGS(sim_need_ctx, !out || flags & ~(unsigned)CU_STREAM_NON_BLOCKING);
    pthread_mutex_lock(&sim.lock);
    struct sim_stream *s = NULL;
    rc = sim_stream_create(flags, &s);
    pthread_mutex_unlock(&sim.lock);
    if (rc == CUDA_SUCCESS)
        *out = (CUstream)s;
    return rc;
}

CUresult CUDAAPI cuStreamCreate(CUstream *out, unsigned int flags)
{
    SIM_ENTER(cuStreamCreate);
    return create(out, flags);
}

CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *out, unsigned int flags, int priority)
{
    SIM_ENTER(cuStreamCreateWithPriority);
    (void)priority;
    return create(out, flags);
}

CUresult CUDAAPI cuStreamDestroy_v2(CUstream h)
{
    SIM_ENTER(cuStreamDestroy_v2);
    pthread_mutex_lock(&sim.lock);
    struct sim_stream *s = (struct sim_stream *)h;
    CUresult rc = h && sim_stream_valid(s) && s->kind == STREAM_USER ? CUDA_SUCCESS
                                                                     : CUDA_ERROR_INVALID_HANDLE;
    if (rc == CUDA_SUCCESS)
        sim_stream_release(s);
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

CUresult sim_on_stream(CUstream h, bool per_thread, sim_stream_op op, void *arg)
{
    pthread_mutex_lock(&sim.lock);
    CUresult rc;
    struct sim_stream *s = sim_stream_get(h, per_thread, &rc);
    if (rc == CUDA_SUCCESS)
        rc = op(s, arg);
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

static CUresult sync_op(struct sim_stream *s, void *unused)
{
    (void)unused;
    if (s->capture)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    sim_host_wait_stream(s);
    return sim_sticky();
}

CUresult sim_api_stream_sync(CUstream h, bool per_thread)
{
    SIM_NEED(sim_need_ctx);
    return sim_on_stream(h, per_thread, sync_op, NULL);
}

static CUresult query_op(struct sim_stream *s, void *unused)
{
    (void)unused;
    if (!s->last)
        return CUDA_SUCCESS;
    return sim_host_sees_done(s->last, true) ? sim_sticky() : CUDA_ERROR_NOT_READY;
}

CUresult sim_api_stream_query(CUstream h, bool per_thread)
{
    SIM_NEED(sim_need_ctx);
    return sim_on_stream(h, per_thread, query_op, NULL);
}

static CUresult flags_op(struct sim_stream *s, void *flags)
{
    *(unsigned *)flags = s->flags;
    return CUDA_SUCCESS;
}

CUresult sim_api_stream_flags(CUstream h, bool per_thread, unsigned *flags)
{
    return flags ? sim_on_stream(h, per_thread, flags_op, flags) : CUDA_ERROR_INVALID_VALUE;
}

static CUresult host_func_op(struct sim_stream *s, void *call)
{
    struct sim_cmd *c = sim_cmd_new(CMD_HOSTFN, ENG_NONE);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    c->u.h = *(const struct sim_hostfn *)call;
    return sim_submit(s, c);
}

CUresult sim_api_host_func(CUstream h, bool per_thread, CUhostFn fn, void *data)
{
    SIM_NEED(sim_need_ctx);
    struct sim_hostfn call = {.fn = fn, .data = data};
    return fn ? sim_on_stream(h, per_thread, host_func_op, &call) : CUDA_ERROR_INVALID_VALUE;
}

static CUresult capture_begin_op(struct sim_stream *s, void *mode)
{
    if (s->kind == STREAM_LEGACY)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    return sim_capture_begin(s, *(const CUstreamCaptureMode *)mode);
}

CUresult sim_api_capture_begin(CUstream h, bool per_thread, CUstreamCaptureMode mode)
{
    SIM_NEED(sim_need_ctx);
    return sim_on_stream(h, per_thread, capture_begin_op, &mode);
}

static CUresult capture_end_op(struct sim_stream *s, void *g)
{
    return sim_capture_end(s, g);
}

CUresult sim_api_capture_end(CUstream h, bool per_thread, CUgraph *g)
{
    return g ? sim_on_stream(h, per_thread, capture_end_op, g) : CUDA_ERROR_INVALID_VALUE;
}

/* Where sim_api_capture_info's answers go. */
struct capture_info {
    CUstreamCaptureStatus *st;
    cuuint64_t *id;
    CUgraph *g;
};

static CUresult capture_info_op(struct sim_stream *s, void *out)
{
    const struct capture_info *i = out;
    return sim_capture_status(s, i->st, i->id, i->g);
}

CUresult sim_api_capture_info(CUstream h, bool per_thread, CUstreamCaptureStatus *st,
                              cuuint64_t *id, CUgraph *g, const CUgraphNode **deps,
                              const CUgraphEdgeData **edges, size_t *ndeps)
{
    if (!st)
        return CUDA_ERROR_INVALID_VALUE;
    struct capture_info out = {.st = st, .id = id, .g = g};
    CUresult rc = sim_on_stream(h, per_thread, capture_info_op, &out);
    /* The simulator's graphs are sequences: no dependency nodes to report. */
    if (deps)
        *deps = NULL;
    if (edges)
        *edges = NULL;
    if (ndeps)
        *ndeps = 0;
    return rc;
}
