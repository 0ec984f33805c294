/* simgpu_peer.c — peer access between simulated devices, peer copies, and pointer attributes.
 *
 * Every pair of distinct simulated devices can access each other (they are the
 * same model, as cuCtxEnablePeerAccess requires: "devices which support unified
 * addressing ... and same major compute capability", cuda.h). Access is off
 * until enabled and is one-way: "access granted by this call is unidirectional"
 * (cuCtxEnablePeerAccess, cuda.h). */
#include "simgpu_internal.h"

CUresult CUDAAPI cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer)
{
    SIM_ENTER(cuDeviceCanAccessPeer);
    CUresult rc = sim_check_device(dev);
    if (rc == CUDA_SUCCESS)
        rc = sim_check_device(peer);
    if (rc == CUDA_SUCCESS && !can)
        rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *can = dev != peer; /* a device is not its own peer (the real driver answers 0) */
    return rc;
}

/* Sets or clears the current context's device's access to peer's device. "Returns
   CUDA_ERROR_INVALID_CONTEXT if there is no current context, peerContext is not a valid
   context, or if the current context is peerContext" (cuda.h). Contexts of one device
   share the setting. */
static CUresult set_peer(CUcontext peer, unsigned flags, bool on)
{
    SIM_NEED_ARGS(sim_need_ctx, flags);
    pthread_mutex_lock(&sim.lock);
    int self = sim_current_device();
    if (!peer || !sim_ctx_valid(peer) || peer == sim_current_ctx()) {
        rc = CUDA_ERROR_INVALID_CONTEXT;
    } else if (sim_ctx_device(peer) == self) {
        rc = CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
    } else if (sim.dev[self].peer[sim_ctx_device(peer)] == on) {
        rc = on ? CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED : CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
    } else {
        sim.dev[self].peer[sim_ctx_device(peer)] = on;
        sim.fence_dev = -1; /* the next kernel sets the fence anew */
    }
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

CUresult CUDAAPI cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags)
{
    SIM_ENTER(cuCtxEnablePeerAccess);
    return set_peer(peer, flags, true);
}

CUresult CUDAAPI cuCtxDisablePeerAccess(CUcontext peer)
{
    SIM_ENTER(cuCtxDisablePeerAccess);
    return set_peer(peer, 0, false);
}

/* Shared by cuMemcpyPeer(Async) and their per-thread forms: the contexts must be valid and
   each address must lie in memory of its context's device (unified addressing already
   tells the devices apart, so the copy itself is an ordinary one). */
CUresult sim_api_copy_peer(uint64_t dst, CUcontext dst_ctx, uint64_t src, CUcontext src_ctx,
                           size_t n, CUstream h, bool per_thread, bool async)
{
    SIM_NEED(sim_need_init);
    pthread_mutex_lock(&sim.lock);
    bool ok = sim_ctx_valid(dst_ctx) && sim_ctx_valid(src_ctx);
    const struct sim_map *d = ok ? sim_map_containing(dst) : NULL;
    const struct sim_map *s = ok ? sim_map_containing(src) : NULL;
    if (!ok)
        rc = CUDA_ERROR_INVALID_CONTEXT;
    else if (!d || !s || (!d->phys->host && d->phys->device != sim_ctx_device(dst_ctx)) ||
             (!s->phys->host && s->phys->device != sim_ctx_device(src_ctx)))
        rc = CUDA_ERROR_INVALID_VALUE;
    /* cudaMemcpyPeer "is asynchronous with respect to the host, but serialized with respect
       all pending and future asynchronous work in to the current device, srcDevice, and
       dstDevice" (cuda_runtime_api.h): the synchronous form waits for the work pending on both
       devices first (the worse case of "serialized"); the Async form orders only by its stream,
       as the program's events say. */
    if (rc == CUDA_SUCCESS && !async) {
        sim_host_wait_device(sim_ctx_device(src_ctx));
        sim_host_wait_device(sim_ctx_device(dst_ctx));
    }
    pthread_mutex_unlock(&sim.lock);
    if (rc != CUDA_SUCCESS)
        return rc;
    /* The copy is issued in the current context (its default stream when h is NULL). */
    return sim_api_copy(dst, src, n, h, per_thread, async);
}
