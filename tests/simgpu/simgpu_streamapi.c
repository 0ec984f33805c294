/* simgpu_streamapi.c — stream entry points: create, destroy, synchronize, query, host functions,
 * capture. */
#include "simgpu_internal.h"

/* Both creation entry points: the simulator has no stream priorities. */
static CUresult create(CUstream *out, unsigned int flags)
{
    SIM_NEED(sim_need_ctx);
    if (!out || flags & ~(unsigned)CU_STREAM_NON_BLOCKING)
        return CUDA_ERROR_INVALID_VALUE;
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

CUresult sim_api_stream_sync(CUstream h, bool per_thread)
{
    SIM_NEED(sim_need_ctx);
    pthread_mutex_lock(&sim.lock);
    struct sim_stream *s = sim_stream_get(h, per_thread, &rc);
    if (rc == CUDA_SUCCESS && s->capture)
        rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (rc == CUDA_SUCCESS) {
        sim_host_wait_stream(s);
        rc = sim_sticky();
    }
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

CUresult sim_api_stream_query(CUstream h, bool per_thread)
{
    SIM_NEED(sim_need_ctx);
    pthread_mutex_lock(&sim.lock);
    struct sim_stream *s = sim_stream_get(h, per_thread, &rc);
    if (rc == CUDA_SUCCESS && s->last)
        rc = sim_host_sees_done(s->last, true) ? sim_sticky() : CUDA_ERROR_NOT_READY;
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

CUresult sim_api_stream_flags(CUstream h, bool per_thread, unsigned *flags)
{
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim.lock);
    CUresult rc;
    struct sim_stream *s = sim_stream_get(h, per_thread, &rc);
    if (rc == CUDA_SUCCESS)
        *flags = s->flags;
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

CUresult sim_api_host_func(CUstream h, bool per_thread, CUhostFn fn, void *data)
{
    SIM_NEED(sim_need_ctx);
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim.lock);
    struct sim_stream *s = sim_stream_get(h, per_thread, &rc);
    struct sim_cmd *c = NULL;
    if (rc == CUDA_SUCCESS && !(c = sim_cmd_new(CMD_HOSTFN, ENG_NONE)))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (rc == CUDA_SUCCESS) {
        c->u.h.fn = fn;
        c->u.h.data = data;
        rc = sim_submit(s, c);
    }
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

CUresult sim_api_capture_begin(CUstream h, bool per_thread, CUstreamCaptureMode mode)
{
    SIM_NEED(sim_need_ctx);
    pthread_mutex_lock(&sim.lock);
    struct sim_stream *s = sim_stream_get(h, per_thread, &rc);
    if (rc == CUDA_SUCCESS)
        rc = s->kind == STREAM_LEGACY ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
                                      : sim_capture_begin(s, mode);
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

CUresult sim_api_capture_end(CUstream h, bool per_thread, CUgraph *g)
{
    if (!g)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim.lock);
    CUresult rc;
    struct sim_stream *s = sim_stream_get(h, per_thread, &rc);
    if (rc == CUDA_SUCCESS)
        rc = sim_capture_end(s, g);
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

CUresult sim_api_capture_info(CUstream h, bool per_thread, CUstreamCaptureStatus *st,
                              cuuint64_t *id, CUgraph *g, const CUgraphNode **deps,
                              const CUgraphEdgeData **edges, size_t *ndeps)
{
    if (!st)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim.lock);
    CUresult rc;
    struct sim_stream *s = sim_stream_get(h, per_thread, &rc);
    if (rc == CUDA_SUCCESS)
        rc = sim_capture_status(s, st, id, g);
    pthread_mutex_unlock(&sim.lock);
    /* The simulator's graphs are sequences: no dependency nodes to report. */
    if (deps)
        *deps = NULL;
    if (edges)
        *edges = NULL;
    if (ndeps)
        *ndeps = 0;
    return rc;
}
