/* shim_hook_sync.c — synchronisations, stream capture, graph launches and cuInit. */
#include "shim_hooks.h"

CUresult CUDAAPI cuInit(unsigned int flags)
{
    SHIM_NEED_REAL(cuInit);
    return shim.real.cuInit(flags);
}

CUresult CUDAAPI cuCtxSynchronize(void)
{
    SHIM_NEED_REAL(cuCtxSynchronize);
    CUresult rc = shim.real.cuCtxSynchronize();
    if (rc == CUDA_SUCCESS && shim_active())
        shim_record_sync(SHIM_SYNC_CTX, NULL, false);
    return rc;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
    SHIM_NEED_REAL(cuStreamSynchronize);
    CUresult rc = shim.real.cuStreamSynchronize(hStream);
    if (rc == CUDA_SUCCESS && shim_active())
        shim_record_sync(SHIM_SYNC_STREAM, hStream, false);
    return rc;
}

CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream)
{
    SHIM_NEED_REAL(cuStreamSynchronize_ptsz);
    CUresult rc = shim.real.cuStreamSynchronize_ptsz(hStream);
    if (rc == CUDA_SUCCESS && shim_active())
        shim_record_sync(SHIM_SYNC_STREAM, hStream, true);
    return rc;
}

CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
    SHIM_NEED_REAL(cuEventSynchronize);
    CUresult rc = shim.real.cuEventSynchronize(hEvent);
    if (rc == CUDA_SUCCESS && shim_active())
        shim_record_sync(SHIM_SYNC_EVENT, NULL, false);
    return rc;
}

CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
    SHIM_NEED_REAL(cuStreamBeginCapture_v2);
    CUresult rc = shim.real.cuStreamBeginCapture_v2(hStream, mode);
    if (rc == CUDA_SUCCESS && shim_active())
        shim_capture_begin(hStream, false);
    return rc;
}

CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
    SHIM_NEED_REAL(cuStreamBeginCapture_v2_ptsz);
    CUresult rc = shim.real.cuStreamBeginCapture_v2_ptsz(hStream, mode);
    if (rc == CUDA_SUCCESS && shim_active())
        shim_capture_begin(hStream, true);
    return rc;
}

CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    SHIM_NEED_REAL(cuStreamEndCapture);
    CUresult rc = shim.real.cuStreamEndCapture(hStream, phGraph);
    if (shim_active())
        shim_capture_end(hStream, false); /* the capture is over even when it failed */
    return rc;
}

CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
    SHIM_NEED_REAL(cuStreamEndCapture_ptsz);
    CUresult rc = shim.real.cuStreamEndCapture_ptsz(hStream, phGraph);
    if (shim_active())
        shim_capture_end(hStream, true);
    return rc;
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
    SHIM_NEED_REAL(cuGraphLaunch);
    CUresult rc = shim.real.cuGraphLaunch(hGraphExec, hStream);
    shim_streams_note(hStream, false);
    if (rc == CUDA_SUCCESS && shim_active())
        shim_trace_graph_launch((uint64_t)(uintptr_t)hGraphExec, shim_stream_id(hStream, false));
    return rc;
}

CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    SHIM_NEED_REAL(cuGraphLaunch_ptsz);
    CUresult rc = shim.real.cuGraphLaunch_ptsz(hGraphExec, hStream);
    shim_streams_note(hStream, true);
    if (rc == CUDA_SUCCESS && shim_active())
        shim_trace_graph_launch((uint64_t)(uintptr_t)hGraphExec, shim_stream_id(hStream, true));
    return rc;
}
