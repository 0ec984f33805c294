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
    SIMGPU_RT_ENTER(mode, d);
    CUfunction f;

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
    SIMGPU_RT_ENTER(mode, d);
    return simgpu_rt_error_cu(d->stream_begin_capture(s, (CUstreamCaptureMode)cm));
}

cudaError_t simgpu_rt_launch_end_capture(cudaStream_t s, cudaGraph_t *g, enum simgpu_rt_mode mode)
{
    SIMGPU_RT_ENTER(mode, d);
    return simgpu_rt_error_cu(d->stream_end_capture(s, g));
}

cudaError_t simgpu_rt_launch_is_capturing(cudaStream_t s, enum cudaStreamCaptureStatus *st,
                                          enum simgpu_rt_mode mode)
{
    SIMGPU_RT_ENTER(mode, d);
    if (!st)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    return simgpu_rt_error_cu(d->stream_is_capturing(s, (CUstreamCaptureStatus *)st));
}

cudaError_t simgpu_rt_launch_graph(cudaGraphExec_t ge, cudaStream_t s, enum simgpu_rt_mode mode)
{
    SIMGPU_RT_ENTER(mode, d);
    return simgpu_rt_error_cu(d->graph_launch(ge, s));
}

/* Instantiates graph (cuGraphInstantiate, i.e. cuGraphInstantiateWithFlags). */
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                 unsigned long long flags)
{
    SIMGPU_RT_ENTER(SIMGPU_RT_LEGACY, d);
    return simgpu_rt_error_cu(d->graph_instantiate(pGraphExec, graph, flags));
}

/* Destroys a graph (cudaGraphDestroy), or an instantiated one (cudaGraphExecDestroy). */
SIMGPU_RT_FORWARD(cudaGraphDestroy, (cudaGraph_t graph), graph_destroy(graph))
SIMGPU_RT_FORWARD(cudaGraphExecDestroy, (cudaGraphExec_t graphExec), graph_exec_destroy(graphExec))
