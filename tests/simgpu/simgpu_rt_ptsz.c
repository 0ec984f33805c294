/* simgpu_rt_ptsz.c — the per-thread default stream exports (cudaLaunchKernel_ptsz,
 * cudaMemcpy_ptds, ...). This file is compiled with CUDA_API_PER_THREAD_DEFAULT_STREAM, so the
 * runtime header maps every name below to its _ptsz / _ptds variant with its exact
 * prototype; each forwards to the driver table resolved with
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM. */
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#include "simgpu_rt.h"

/* cudaMemcpy_ptds: synchronous copy in the per-thread default stream's order. */
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return simgpu_rt_copy_memcpy(dst, src, count, kind, NULL, false, SIMGPU_RT_PER_THREAD);
}

/* cudaMemcpyAsync_ptsz. */
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream)
{
    return simgpu_rt_copy_memcpy(dst, src, count, kind, stream, true, SIMGPU_RT_PER_THREAD);
}

/* cudaMemset_ptds. */
cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    return simgpu_rt_copy_memset(devPtr, value, count, NULL, false, SIMGPU_RT_PER_THREAD);
}

/* cudaMemsetAsync_ptsz. */
cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    return simgpu_rt_copy_memset(devPtr, value, count, stream, true, SIMGPU_RT_PER_THREAD);
}

/* cudaMallocAsync_ptsz. */
cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
    return simgpu_rt_memory_malloc_async(devPtr, size, hStream, SIMGPU_RT_PER_THREAD);
}

/* cudaFreeAsync_ptsz. */
cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
    return simgpu_rt_memory_free_async(devPtr, hStream, SIMGPU_RT_PER_THREAD);
}

/* cudaStreamSynchronize_ptsz. */
cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    return simgpu_rt_stream_synchronize(stream, SIMGPU_RT_PER_THREAD);
}

/* cudaStreamQuery_ptsz. */
cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    return simgpu_rt_stream_query(stream, SIMGPU_RT_PER_THREAD);
}

/* cudaStreamWaitEvent_ptsz. */
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    return simgpu_rt_stream_wait_event(stream, event, flags, SIMGPU_RT_PER_THREAD);
}

/* cudaEventRecord_ptsz. */
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    return simgpu_rt_stream_event_record(event, stream, SIMGPU_RT_PER_THREAD);
}

/* cudaLaunchKernel_ptsz. */
cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                             size_t sharedMem, cudaStream_t stream)
{
    return simgpu_rt_launch_kernel(func, gridDim, blockDim, args, sharedMem, stream,
                                   SIMGPU_RT_PER_THREAD);
}

/* cudaStreamBeginCapture_ptsz. */
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    return simgpu_rt_launch_begin_capture(stream, mode, SIMGPU_RT_PER_THREAD);
}

/* cudaStreamEndCapture_ptsz. */
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
    return simgpu_rt_launch_end_capture(stream, pGraph, SIMGPU_RT_PER_THREAD);
}

/* cudaStreamIsCapturing_ptsz. */
cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{
    return simgpu_rt_launch_is_capturing(stream, pCaptureStatus, SIMGPU_RT_PER_THREAD);
}

/* cudaGraphLaunch_ptsz. */
cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    return simgpu_rt_launch_graph(graphExec, stream, SIMGPU_RT_PER_THREAD);
}
