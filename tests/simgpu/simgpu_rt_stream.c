/* simgpu_rt_stream.c — streams and events of the simulated runtime. The runtime's flag and
 * enum values equal the driver's (cudaStreamNonBlocking == CU_STREAM_NON_BLOCKING,
 * cudaEvent* == CU_EVENT_*), so they pass through unchanged. */
#include "simgpu_rt.h"

/* A blocking stream (synchronises with the legacy default stream). */
cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    return cudaStreamCreateWithFlags(pStream, cudaStreamDefault);
}

/* A stream with cudaStreamDefault or cudaStreamNonBlocking. */
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    if (!pStream || (flags & ~(unsigned)cudaStreamNonBlocking))
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    SIMGPU_RT_ENTER(SIMGPU_RT_LEGACY, d);
    return simgpu_rt_error_cu(d->stream_create(pStream, flags));
}

/* Destroys a stream; work already queued on it still completes. */
SIMGPU_RT_FORWARD(cudaStreamDestroy, (cudaStream_t stream), stream_destroy(stream))

cudaError_t simgpu_rt_stream_synchronize(cudaStream_t s, enum simgpu_rt_mode mode)
{
    SIMGPU_RT_ENTER(mode, d);
    return simgpu_rt_error_cu(d->stream_synchronize(s));
}

cudaError_t simgpu_rt_stream_query(cudaStream_t s, enum simgpu_rt_mode mode)
{
    SIMGPU_RT_ENTER(mode, d);
    return simgpu_rt_error_cu(d->stream_query(s));
}

cudaError_t simgpu_rt_stream_wait_event(cudaStream_t s, cudaEvent_t ev, unsigned flags,
                                        enum simgpu_rt_mode mode)
{
    SIMGPU_RT_ENTER(mode, d);
    return simgpu_rt_error_cu(d->stream_wait_event(s, ev, flags));
}

cudaError_t simgpu_rt_stream_event_record(cudaEvent_t ev, cudaStream_t s, enum simgpu_rt_mode mode)
{
    SIMGPU_RT_ENTER(mode, d);
    return simgpu_rt_error_cu(d->event_record(ev, s));
}

/* An event with default flags (timing enabled). */
cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}

/* An event with cudaEvent* flags (the CU_EVENT_* bits). */
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    if (!event)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    SIMGPU_RT_ENTER(SIMGPU_RT_LEGACY, d);
    return simgpu_rt_error_cu(d->event_create(event, flags));
}

/* cudaEventQuery: cudaSuccess when the recorded work is done, else cudaErrorNotReady;
   cudaEventSynchronize waits for it. */
SIMGPU_RT_FORWARD(cudaEventQuery, (cudaEvent_t event), event_query(event))
SIMGPU_RT_FORWARD(cudaEventSynchronize, (cudaEvent_t event), event_synchronize(event))

/* Milliseconds of (virtual) device time between two completed events. */
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    if (!ms)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    SIMGPU_RT_ENTER(SIMGPU_RT_LEGACY, d);
    return simgpu_rt_error_cu(d->event_elapsed_time(ms, start, end));
}

/* Destroys an event. */
SIMGPU_RT_FORWARD(cudaEventDestroy, (cudaEvent_t event), event_destroy(event))
