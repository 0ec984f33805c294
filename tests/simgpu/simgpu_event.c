/* simgpu_event.c — events: record, query, synchronize, elapsed virtual time, stream waits. */
#include "simgpu_internal.h"

#include <stdlib.h>

static struct sim_event *event_of(CUevent e)
{
    return sim_handles_has(&sim.events_live, e) ? (struct sim_event *)e : NULL;
}

CUresult CUDAAPI cuEventCreate(CUevent *out, unsigned int flags)
{
    SIM_ENTER(cuEventCreate);
    SIM_NEED(sim_need_ctx);
    if (!out || flags & ~(unsigned)(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING |
                                    CU_EVENT_INTERPROCESS))
        return CUDA_ERROR_INVALID_VALUE;
    struct sim_event *ev = calloc(1, sizeof *ev);
    pthread_mutex_lock(&sim.lock);
    int bad = !ev || sim_handles_add(&sim.events_live, ev) != 0;
    pthread_mutex_unlock(&sim.lock);
    if (bad) {
        free(ev);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    ev->flags = flags;
    *out = (CUevent)ev;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventDestroy_v2(CUevent e)
{
    SIM_ENTER(cuEventDestroy_v2);
    pthread_mutex_lock(&sim.lock);
    struct sim_event *ev = event_of(e);
    if (ev) {
        if (ev->rec)
            sim_cmd_unref(ev->rec);
        sim_handles_del(&sim.events_live, ev);
        free(ev);
    }
    pthread_mutex_unlock(&sim.lock);
    return ev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* A sim_stream_op: records event e (arg) on s. */
static CUresult record_op(struct sim_stream *s, void *e)
{
    struct sim_event *ev = event_of(e);
    if (!ev)
        return CUDA_ERROR_INVALID_HANDLE;
    if (s->capture)
        return CUDA_SUCCESS; /* records inside a capture are not replayed */
    struct sim_cmd *c = sim_cmd_new(CMD_MARK, ENG_NONE);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    sim_cmd_ref(c);
    CUresult rc = sim_submit(s, c);
    if (ev->rec)
        sim_cmd_unref(ev->rec);
    ev->rec = c;
    return rc;
}

CUresult sim_api_event_record(CUevent e, CUstream h, bool per_thread)
{
    SIM_NEED(sim_need_ctx);
    return sim_on_stream(h, per_thread, record_op, e);
}

/* A sim_stream_op: makes s wait for event e (arg). */
static CUresult wait_op(struct sim_stream *s, void *e)
{
    struct sim_event *ev = event_of(e);
    if (!ev)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!ev->rec || s->capture)
        return CUDA_SUCCESS; /* waiting on a never-recorded event is a no-op, as on a device */
    struct sim_cmd *c = sim_cmd_new(CMD_MARK, ENG_NONE);
    if (!c || sim_cmd_add_dep(c, ev->rec) != 0) {
        if (c)
            sim_cmd_unref(c);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return sim_submit(s, c);
}

CUresult sim_api_wait_event(CUstream h, CUevent e, bool per_thread)
{
    SIM_NEED(sim_need_ctx);
    return sim_on_stream(h, per_thread, wait_op, e);
}

/* cuEventQuery (wait false: done or not yet) and cuEventSynchronize (wait true) on event e. */
static CUresult event_host(CUevent e, bool wait)
{
    pthread_mutex_lock(&sim.lock);
    struct sim_event *ev = event_of(e);
    CUresult rc = ev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    if (ev && ev->rec && !wait) {
        rc = sim_host_sees_done(ev->rec, true) ? sim_sticky() : CUDA_ERROR_NOT_READY;
    } else if (ev && ev->rec) {
        sim_host_wait(ev->rec);
        sim_pool_trim(); /* an event synchronisation: the pool gives back completed frees */
        rc = sim_sticky();
    }
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

/* Whether e's recorded work is done (cuEventQuery), or waits for it (cuEventSynchronize, wait). */
SIM_TWIN_ENTRIES(wait, cuEventQuery, (CUevent e), cuEventSynchronize, (CUevent e),
                 event_host(e, wait))

CUresult CUDAAPI cuEventElapsedTime_v2(float *ms, CUevent start, CUevent end)
{
    SIM_ENTER(cuEventElapsedTime_v2);
    if (!ms)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim.lock);
    struct sim_event *a = event_of(start), *b = event_of(end);
    CUresult rc = CUDA_SUCCESS;
    if (!a || !b || (a->flags | b->flags) & CU_EVENT_DISABLE_TIMING)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else if (!a->rec || !b->rec || !a->rec->done || !b->rec->done)
        rc = CUDA_ERROR_NOT_READY;
    else
        *ms = (float)((b->rec->vend - a->rec->vend) / 1000.0);
    pthread_mutex_unlock(&sim.lock);
    return rc;
}
