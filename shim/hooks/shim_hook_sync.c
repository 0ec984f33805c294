/* shim_hook_sync.c — synchronisations, stream capture, graph launches and cuInit. */
#include "shim_hooks.h"

CUresult CUDAAPI cuInit(unsigned int flags)
{
    SHIM_NEED_REAL(cuInit);
    return shim.real.cuInit(flags);
}

SHIM_HOOK_AFTER(cuCtxSynchronize, (void), (), shim_ledger_sync(SHIM_SYNC_CTX, NULL, false))

SHIM_HOOK_AFTER(cuStreamSynchronize, (CUstream hStream), (hStream),
                shim_ledger_sync(SHIM_SYNC_STREAM, hStream, false))

SHIM_HOOK_AFTER(cuStreamSynchronize_ptsz, (CUstream hStream), (hStream),
                shim_ledger_sync(SHIM_SYNC_STREAM, hStream, true))

SHIM_HOOK_AFTER(cuEventSynchronize, (CUevent hEvent), (hEvent),
                shim_ledger_sync(SHIM_SYNC_EVENT, NULL, false))

SHIM_HOOK_AFTER(cuStreamBeginCapture_v2, (CUstream hStream, CUstreamCaptureMode mode),
                (hStream, mode), shim_capture_begin(hStream, false))

SHIM_HOOK_AFTER(cuStreamBeginCapture_v2_ptsz, (CUstream hStream, CUstreamCaptureMode mode),
                (hStream, mode), shim_capture_begin(hStream, true))

/* The end of a capture: over even when it failed. */
static CUresult end_capture(CUresult rc, CUstream stream, bool per_thread)
{
    if (shim_active())
        shim_capture_end(stream, per_thread);
    return rc;
}

CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    SHIM_NEED_REAL(cuStreamEndCapture);
    return end_capture(shim.real.cuStreamEndCapture(hStream, phGraph), hStream, false);
}

CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
    SHIM_NEED_REAL(cuStreamEndCapture_ptsz);
    return end_capture(shim.real.cuStreamEndCapture_ptsz(hStream, phGraph), hStream, true);
}

/* A graph launch on stream: its work is the program's, and the trace records it. */
static CUresult graph_launched(CUresult rc, CUgraphExec exec, CUstream stream, bool per_thread)
{
    shim_streams_note(stream, per_thread);
    if (rc == CUDA_SUCCESS && shim_active())
        shim_trace_graph_launch((uint64_t)(uintptr_t)exec, shim_stream_id(stream, per_thread));
    return rc;
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
    SHIM_NEED_REAL(cuGraphLaunch);
    return graph_launched(shim.real.cuGraphLaunch(hGraphExec, hStream), hGraphExec, hStream, false);
}

CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    SHIM_NEED_REAL(cuGraphLaunch_ptsz);
    return graph_launched(shim.real.cuGraphLaunch_ptsz(hGraphExec, hStream), hGraphExec, hStream,
                          true);
}
