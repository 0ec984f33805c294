/* simgpu_rt_peer.c — peer access and peer copies of the simulated runtime, over the driver's
 * cuDeviceCanAccessPeer, cuCtxEnablePeerAccess and cuMemcpyPeer(Async) with the devices'
 * primary contexts (the runtime's contexts are the primary ones). */
#include "simgpu_rt.h"

/* Whether device may access peerDevice's memory directly; the driver's answer. */
cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
{
    if (!canAccessPeer)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    SIMGPU_RT_LOAD(d);
    return simgpu_rt_error_cu(d->device_can_access_peer(canAccessPeer, device, peerDevice));
}

/* cudaDeviceEnablePeerAccess (cuda_runtime_api.h): "On success, all allocations from
   peerDevice will immediately be accessible by the current device"; "access granted by
   this call is unidirectional"; "Returns cudaErrorInvalidDevice if
   cudaDeviceCanAccessPeer() indicates that the current device cannot directly access
   memory from peerDevice" (a device and itself, here). */
cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags)
{
    SIMGPU_RT_ENTER(SIMGPU_RT_LEGACY, d);
    CUcontext peer = NULL;
    cudaError_t e;

    if (peerDevice == simgpu_rt_thread.device)
        return simgpu_rt_error_record(cudaErrorInvalidDevice);
    e = simgpu_rt_driver_primary(peerDevice, &peer);
    if (e != cudaSuccess)
        return e;
    return simgpu_rt_error_cu(d->ctx_enable_peer_access(peer, flags));
}

/* Resolves both devices' primary contexts for a peer copy. */
static cudaError_t peer_contexts(int dst_dev, int src_dev, CUcontext *dst, CUcontext *src)
{
    cudaError_t e = simgpu_rt_driver_primary(dst_dev, dst);

    return e == cudaSuccess ? simgpu_rt_driver_primary(src_dev, src) : e;
}

/* A peer copy of count bytes from src on src_dev to dst on dst_dev: ordered on s when async,
   else synchronous. */
static cudaError_t copy_peer(void *dst, int dst_dev, const void *src, int src_dev, size_t count,
                             cudaStream_t s, bool async)
{
    SIMGPU_RT_ENTER(SIMGPU_RT_LEGACY, d);
    CUcontext dc, sc;
    cudaError_t e = peer_contexts(dst_dev, src_dev, &dc, &sc);

    if (e != cudaSuccess)
        return e;
    CUdeviceptr to = (CUdeviceptr)(uintptr_t)dst, from = (CUdeviceptr)(uintptr_t)src;
    return simgpu_rt_error_cu(async ? d->copy_peer_async(to, dc, from, sc, count, (CUstream)s)
                                    : d->copy_peer(to, dc, from, sc, count));
}

/* Copies count bytes from src on srcDevice to dst on dstDevice, synchronously. */
cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count)
{
    return copy_peer(dst, dstDevice, src, srcDevice, count, NULL, false);
}

/* The same, ordered on stream. */
cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice,
                                size_t count, cudaStream_t stream)
{
    return copy_peer(dst, dstDevice, src, srcDevice, count, stream, true);
}
