/* simgpu_ptds.c — the per-thread default stream variants (_ptsz, _ptds) of stream-ordered entry
 * points.
 *
 * Compiled with CUDA_API_PER_THREAD_DEFAULT_STREAM: <cuda.h> then maps each
 * name below to its _ptsz / _ptds symbol. A NULL stream means the calling
 * thread's default stream. */
#include "simgpu_exports.h"
#include "simgpu_internal.h"

CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream h)
{
    SIM_ENTER(cuMemAllocAsync_ptsz);
    return sim_api_alloc_async(p, n, h, true);
}

CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr p, CUstream h)
{
    SIM_ENTER(cuMemFreeAsync_ptsz);
    return sim_api_free_async(p, h, true);
}

CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    SIM_ENTER(cuMemcpy_ptds);
    return sim_api_copy(dst, src, n, NULL, true, false);
}

CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
    SIM_ENTER(cuMemcpyAsync_ptsz);
    return sim_api_copy(dst, src, n, h, true, true);
}

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t n)
{
    SIM_ENTER(cuMemcpyHtoD_v2_ptds);
    return sim_api_copy(dst, (uintptr_t)src, n, NULL, true, false);
}

CUresult CUDAAPI cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t n)
{
    SIM_ENTER(cuMemcpyDtoH_v2_ptds);
    return sim_api_copy((uintptr_t)dst, src, n, NULL, true, false);
}

CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    SIM_ENTER(cuMemcpyDtoD_v2_ptds);
    return sim_api_copy(dst, src, n, NULL, true, false);
}

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n, CUstream h)
{
    SIM_ENTER(cuMemcpyHtoDAsync_v2_ptsz);
    return sim_api_copy(dst, (uintptr_t)src, n, h, true, true);
}

CUresult CUDAAPI cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream h)
{
    SIM_ENTER(cuMemcpyDtoHAsync_v2_ptsz);
    return sim_api_copy((uintptr_t)dst, src, n, h, true, true);
}

CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
    SIM_ENTER(cuMemcpyDtoDAsync_v2_ptsz);
    return sim_api_copy(dst, src, n, h, true, true);
}

CUresult CUDAAPI cuMemsetD8(CUdeviceptr dst, unsigned char v, size_t n)
{
    SIM_ENTER(cuMemsetD8_v2_ptds);
    return sim_api_memset(dst, v, 1, n, NULL, true, false);
}

CUresult CUDAAPI cuMemsetD32(CUdeviceptr dst, unsigned int v, size_t n)
{
    SIM_ENTER(cuMemsetD32_v2_ptds);
    return sim_api_memset(dst, v, 4, n, NULL, true, false);
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream h)
{
    SIM_ENTER(cuMemsetD8Async_ptsz);
    return sim_api_memset(dst, v, 1, n, h, true, true);
}

CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, CUstream h)
{
    SIM_ENTER(cuMemsetD32Async_ptsz);
    return sim_api_memset(dst, v, 4, n, h, true, true);
}

CUresult CUDAAPI cuStreamSynchronize(CUstream h)
{
    SIM_ENTER(cuStreamSynchronize_ptsz);
    return sim_api_stream_sync(h, true);
}

CUresult CUDAAPI cuStreamQuery(CUstream h)
{
    SIM_ENTER(cuStreamQuery_ptsz);
    return sim_api_stream_query(h, true);
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream h, CUevent e, unsigned int flags)
{
    SIM_ENTER(cuStreamWaitEvent_ptsz);
    (void)flags;
    return sim_api_wait_event(h, e, true);
}

CUresult CUDAAPI cuStreamGetFlags(CUstream h, unsigned int *flags)
{
    SIM_ENTER(cuStreamGetFlags_ptsz);
    return sim_api_stream_flags(h, true, flags);
}

CUresult CUDAAPI cuStreamBeginCapture(CUstream h, CUstreamCaptureMode mode)
{
    SIM_ENTER(cuStreamBeginCapture_v2_ptsz);
    return sim_api_capture_begin(h, true, mode);
}

CUresult CUDAAPI cuStreamEndCapture(CUstream h, CUgraph *g)
{
    SIM_ENTER(cuStreamEndCapture_ptsz);
    return sim_api_capture_end(h, true, g);
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream h, CUstreamCaptureStatus *st)
{
    SIM_ENTER(cuStreamIsCapturing_ptsz);
    return sim_api_capture_info(h, true, st, NULL, NULL, NULL, NULL, NULL);
}

CUresult CUDAAPI cuStreamGetCaptureInfo(CUstream h, CUstreamCaptureStatus *st, cuuint64_t *id,
                                        CUgraph *g, const CUgraphNode **deps,
                                        const CUgraphEdgeData **edges, size_t *ndeps)
{
    SIM_ENTER(cuStreamGetCaptureInfo_v3_ptsz);
    return sim_api_capture_info(h, true, st, id, g, deps, edges, ndeps);
}

CUresult CUDAAPI cuLaunchHostFunc(CUstream h, CUhostFn fn, void *data)
{
    SIM_ENTER(cuLaunchHostFunc_ptsz);
    return sim_api_host_func(h, true, fn, data);
}

CUresult CUDAAPI cuEventRecord(CUevent e, CUstream h)
{
    SIM_ENTER(cuEventRecord_ptsz);
    return sim_api_event_record(e, h, true);
}

CUresult CUDAAPI cuEventRecordWithFlags(CUevent e, CUstream h, unsigned int flags)
{
    SIM_ENTER(cuEventRecordWithFlags_ptsz);
    (void)flags;
    return sim_api_event_record(e, h, true);
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                unsigned by, unsigned bz, unsigned shmem, CUstream h, void **params,
                                void **extra)
{
    SIM_ENTER(cuLaunchKernel_ptsz);
    (void)bx, (void)by, (void)bz, (void)shmem;
    return sim_api_launch(f, gx, gy, gz, h, true, params, extra);
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **params,
                                  void **extra)
{
    SIM_ENTER(cuLaunchKernelEx_ptsz);
    if (!config)
        return CUDA_ERROR_INVALID_VALUE;
    return sim_api_launch(f, config->gridDimX, config->gridDimY, config->gridDimZ, config->hStream,
                          true, params, extra);
}

CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                           unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                                           CUstream h, void **params)
{
    SIM_ENTER(cuLaunchCooperativeKernel_ptsz);
    (void)bx, (void)by, (void)bz, (void)shmem;
    return sim_api_launch(f, gx, gy, gz, h, true, params, NULL);
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec e, CUstream h)
{
    SIM_ENTER(cuGraphLaunch_ptsz);
    return sim_api_graph_launch(e, h, true);
}

CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src,
                              CUcontext src_ctx, size_t n)
{
    SIM_ENTER(cuMemcpyPeer_ptds);
    return sim_api_copy_peer(dst, dst_ctx, src, src_ctx, n, NULL, true, false);
}

CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src,
                                   CUcontext src_ctx, size_t n, CUstream h)
{
    SIM_ENTER(cuMemcpyPeerAsync_ptsz);
    return sim_api_copy_peer(dst, dst_ctx, src, src_ctx, n, h, true, true);
}
