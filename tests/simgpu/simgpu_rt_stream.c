/* simgpu_rt_stream.c — streams and events of the simulated runtime. The runtime's flag and
 * enum values equal the driver's (cudaStreamNonBlocking == CU_STREAM_NON_BLOCKING,
 * cudaEvent* == CU_EVENT_*), so they pass through unchanged. */
#include "simgpu_rt.h"

/* Enters the runtime for a legacy-table call; the error is recorded. */
static cudaError_t enter(const struct simgpu_rt_driver **d)
{
    return simgpu_rt_driver_enter(SIMGPU_RT_LEGACY, d);
}

/* A blocking stream (synchronises with the legacy default stream). */
cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    return cudaStreamCreateWithFlags(pStream, cudaStreamDefault);
}

/* A stream with cudaStreamDefault or cudaStreamNonBlocking. */
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e;

    if (!pStream || (flags & ~(unsigned)cudaStreamNonBlocking))
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    e = enter(&d);
    if (e != cudaSuccess)
        return e;
    return simgpu_rt_error_cu(d->stream_create(pStream, flags));
}

/* Destroys a stream; work already queued on it still completes. */
cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e = enter(&d);

    if (e != cudaSuccess)
        return e;
    return simgpu_rt_error_cu(d->stream_destroy(stream));
}

cudaError_t simgpu_rt_stream_synchronize(cudaStream_t s, enum simgpu_rt_mode mode)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e = simgpu_rt_driver_enter(mode, &d);

    if (e != cudaSuccess)
        return e;
    return simgpu_rt_error_cu(d->stream_synchronize(s));
}

cudaError_t simgpu_rt_stream_query(cudaStream_t s, enum simgpu_rt_mode mode)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e = simgpu_rt_driver_enter(mode, &d);

    if (e != cudaSuccess)
        return e;
    return simgpu_rt_error_cu(d->stream_query(s));
}

cudaError_t simgpu_rt_stream_wait_event(cudaStream_t s, cudaEvent_t ev, unsigned flags,
                                        enum simgpu_rt_mode mode)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e = simgpu_rt_driver_enter(mode, &d);

    if (e != cudaSuccess)
        return e;
    return simgpu_rt_error_cu(d->stream_wait_event(s, ev, flags));
}

cudaError_t simgpu_rt_stream_event_record(cudaEvent_t ev, cudaStream_t s, enum simgpu_rt_mode mode)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e = simgpu_rt_driver_enter(mode, &d);

    if (e != cudaSuccess)
        return e;
    return simgpu_rt_error_cu(d->event_record(ev, s));
}

/* Waits for all work queued on stream. */
cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    return simgpu_rt_stream_synchronize(stream, SIMGPU_RT_LEGACY);
}

/* cudaSuccess when all work on stream is done, else cudaErrorNotReady. */
cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    return simgpu_rt_stream_query(stream, SIMGPU_RT_LEGACY);
}

/* Makes later work on stream wait for event's recorded work. */
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    return simgpu_rt_stream_wait_event(stream, event, flags, SIMGPU_RT_LEGACY);
}

/* An event with default flags (timing enabled). */
cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}

/* An event with cudaEvent* flags (the CU_EVENT_* bits). */
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e;

    if (!event)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    e = enter(&d);
    if (e != cudaSuccess)
        return e;
    return simgpu_rt_error_cu(d->event_create(event, flags));
}

/* Records event at the current end of stream. */
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    return simgpu_rt_stream_event_record(event, stream, SIMGPU_RT_LEGACY);
}

/* cudaSuccess when the recorded work is done, else cudaErrorNotReady. */
cudaError_t cudaEventQuery(cudaEvent_t event)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e = enter(&d);

    if (e != cudaSuccess)
        return e;
    return simgpu_rt_error_cu(d->event_query(event));
}

/* Waits for the recorded work of event. */
cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e = enter(&d);

    if (e != cudaSuccess)
        return e;
    return simgpu_rt_error_cu(d->event_synchronize(event));
}

/* Milliseconds of (virtual) device time between two completed events. */
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e;

    if (!ms)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    e = enter(&d);
    if (e != cudaSuccess)
        return e;
    return simgpu_rt_error_cu(d->event_elapsed_time(ms, start, end));
}

/* Destroys an event. */
cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e = enter(&d);

    if (e != cudaSuccess)
        return e;
    return simgpu_rt_error_cu(d->event_destroy(event));
}
