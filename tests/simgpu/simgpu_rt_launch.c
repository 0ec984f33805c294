/* simgpu_rt_launch.c — kernel launch, stream capture and graphs of the simulated runtime.
 * A kernel's host function (the simgpu_body given to simgpu_register) is the func of
 * cudaLaunchKernel; the driver's simgpu_function_of extension turns it into the
 * CUfunction that cuLaunchKernel takes. */
#include "simgpu_rt.h"

#include <stdint.h>

/* The real runtime rejects empty grids or blocks and blocks above 1024 threads
   before reaching the driver. */
static bool config_ok(dim3 grid, dim3 block)
{
    uint64_t threads = (uint64_t)block.x * block.y * block.z;

    if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z)
        return false;
    return threads <= 1024;
}

cudaError_t simgpu_rt_launch_kernel(const void *func, dim3 grid, dim3 block, void **args,
                                    size_t shared, cudaStream_t s, enum simgpu_rt_mode mode)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e = simgpu_rt_driver_enter(mode, &d);
    CUfunction f;

    if (e != cudaSuccess)
        return e;
    if (!config_ok(grid, block))
        return simgpu_rt_error_record(cudaErrorInvalidConfiguration);
    f = func && d->function_of ? d->function_of((simgpu_body)(uintptr_t)func) : NULL;
    if (!f)
        return simgpu_rt_error_record(cudaErrorInvalidDeviceFunction);
    return simgpu_rt_error_cu(d->launch_kernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                               (unsigned)shared, s, args, NULL));
}

cudaError_t simgpu_rt_launch_begin_capture(cudaStream_t s, enum cudaStreamCaptureMode cm,
                                           enum simgpu_rt_mode mode)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e = simgpu_rt_driver_enter(mode, &d);

    if (e != cudaSuccess)
        return e;
    return simgpu_rt_error_cu(d->stream_begin_capture(s, (CUstreamCaptureMode)cm));
}

cudaError_t simgpu_rt_launch_end_capture(cudaStream_t s, cudaGraph_t *g, enum simgpu_rt_mode mode)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e = simgpu_rt_driver_enter(mode, &d);

    if (e != cudaSuccess)
        return e;
    return simgpu_rt_error_cu(d->stream_end_capture(s, g));
}

cudaError_t simgpu_rt_launch_is_capturing(cudaStream_t s, enum cudaStreamCaptureStatus *st,
                                          enum simgpu_rt_mode mode)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e = simgpu_rt_driver_enter(mode, &d);

    if (e != cudaSuccess)
        return e;
    if (!st)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    return simgpu_rt_error_cu(d->stream_is_capturing(s, (CUstreamCaptureStatus *)st));
}

cudaError_t simgpu_rt_launch_graph(cudaGraphExec_t ge, cudaStream_t s, enum simgpu_rt_mode mode)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e = simgpu_rt_driver_enter(mode, &d);

    if (e != cudaSuccess)
        return e;
    return simgpu_rt_error_cu(d->graph_launch(ge, s));
}

/* Launches the kernel registered for the host function func (simgpu_register). */
cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                             size_t sharedMem, cudaStream_t stream)
{
    return simgpu_rt_launch_kernel(func, gridDim, blockDim, args, sharedMem, stream,
                                   SIMGPU_RT_LEGACY);
}

/* Starts capturing the work submitted to stream into a graph. */
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    return simgpu_rt_launch_begin_capture(stream, mode, SIMGPU_RT_LEGACY);
}

/* Ends the capture of stream and returns the captured graph. */
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
    return simgpu_rt_launch_end_capture(stream, pGraph, SIMGPU_RT_LEGACY);
}

/* Whether stream is capturing (cudaStreamCaptureStatus*, same values as the driver's). */
cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{
    return simgpu_rt_launch_is_capturing(stream, pCaptureStatus, SIMGPU_RT_LEGACY);
}

/* Instantiates graph (cuGraphInstantiate, i.e. cuGraphInstantiateWithFlags). */
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                 unsigned long long flags)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e = simgpu_rt_driver_enter(SIMGPU_RT_LEGACY, &d);

    if (e != cudaSuccess)
        return e;
    return simgpu_rt_error_cu(d->graph_instantiate(pGraphExec, graph, flags));
}

/* Replays an instantiated graph on stream. */
cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    return simgpu_rt_launch_graph(graphExec, stream, SIMGPU_RT_LEGACY);
}

/* Destroys a graph. */
cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e = simgpu_rt_driver_enter(SIMGPU_RT_LEGACY, &d);

    if (e != cudaSuccess)
        return e;
    return simgpu_rt_error_cu(d->graph_destroy(graph));
}

/* Destroys an instantiated graph. */
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e = simgpu_rt_driver_enter(SIMGPU_RT_LEGACY, &d);

    if (e != cudaSuccess)
        return e;
    return simgpu_rt_error_cu(d->graph_exec_destroy(graphExec));
}
