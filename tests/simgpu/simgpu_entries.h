/* simgpu_entries.h — the one table of simulated driver entry points.
 *
 * X(SYMBOL, BASE, VERSION, VARIANT)
 *   SYMBOL   exported name (what SIMGPU_FAIL and simgpu_calls() name)
 *   BASE     name cuGetProcAddress is asked for
 *   VERSION  first CUDA version (1000*major + 10*minor) that maps BASE to SYMBOL
 *   VARIANT  D: default / legacy stream, P: per-thread default stream (_ptsz, _ptds),
 *            A: both (functions without stream semantics), E: simgpu extension
 * From it are generated: the entry enum (fault injection, call counts), the name
 * table, and cuGetProcAddress's lookup table. */
/* clang-format off */
#define SIMGPU_ENTRIES(X) \
    X(cuInit, cuInit, 2000, A) \
    X(cuDriverGetVersion, cuDriverGetVersion, 2020, A) \
    X(cuGetErrorString, cuGetErrorString, 6000, A) \
    X(cuGetErrorName, cuGetErrorName, 6000, A) \
    X(cuGetExportTable, cuGetExportTable, 3000, A) \
    X(cuGetProcAddress, cuGetProcAddress, 11030, A) \
    X(cuGetProcAddress_v2, cuGetProcAddress, 12000, A) \
    X(cuDeviceGet, cuDeviceGet, 2000, A) \
    X(cuDeviceGetCount, cuDeviceGetCount, 2000, A) \
    X(cuDeviceGetName, cuDeviceGetName, 2000, A) \
    X(cuDeviceGetAttribute, cuDeviceGetAttribute, 2000, A) \
    X(cuDeviceTotalMem_v2, cuDeviceTotalMem, 3020, A) \
    X(cuDeviceGetUuid_v2, cuDeviceGetUuid, 11040, A) \
    X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, 7000, A) \
    X(cuDevicePrimaryCtxRelease_v2, cuDevicePrimaryCtxRelease, 11000, A) \
    X(cuDevicePrimaryCtxGetState, cuDevicePrimaryCtxGetState, 7000, A) \
    X(cuDevicePrimaryCtxSetFlags_v2, cuDevicePrimaryCtxSetFlags, 11000, A) \
    X(cuDevicePrimaryCtxReset_v2, cuDevicePrimaryCtxReset, 11000, A) \
    X(cuCtxGetCurrent, cuCtxGetCurrent, 4000, A) \
    X(cuCtxSetCurrent, cuCtxSetCurrent, 4000, A) \
    X(cuCtxPushCurrent_v2, cuCtxPushCurrent, 4000, A) \
    X(cuCtxPopCurrent_v2, cuCtxPopCurrent, 4000, A) \
    X(cuCtxGetDevice, cuCtxGetDevice, 2000, A) \
    X(cuCtxSynchronize, cuCtxSynchronize, 2000, A) \
    X(cuCtxSynchronize_v2, cuCtxSynchronize, 13000, A) \
    X(cuCtxCreate_v4, cuCtxCreate, 12050, A) \
    X(cuCtxDestroy_v2, cuCtxDestroy, 4000, A) \
    X(cuDeviceCanAccessPeer, cuDeviceCanAccessPeer, 4000, A) \
    X(cuCtxEnablePeerAccess, cuCtxEnablePeerAccess, 4000, A) \
    X(cuCtxDisablePeerAccess, cuCtxDisablePeerAccess, 4000, A) \
    X(cuMemGetInfo_v2, cuMemGetInfo, 3020, A) \
    X(cuMemAlloc_v2, cuMemAlloc, 3020, A) \
    X(cuMemFree_v2, cuMemFree, 3020, A) \
    X(cuMemGetAddressRange_v2, cuMemGetAddressRange, 3020, A) \
    X(cuMemAllocHost_v2, cuMemAllocHost, 3020, A) \
    X(cuMemHostAlloc, cuMemHostAlloc, 2020, A) \
    X(cuMemFreeHost, cuMemFreeHost, 2000, A) \
    X(cuMemHostGetDevicePointer_v2, cuMemHostGetDevicePointer, 3020, A) \
    X(cuMemHostRegister_v2, cuMemHostRegister, 6050, A) \
    X(cuMemHostUnregister, cuMemHostUnregister, 4000, A) \
    X(cuMemAllocAsync, cuMemAllocAsync, 11020, D) \
    X(cuMemAllocAsync_ptsz, cuMemAllocAsync, 11020, P) \
    X(cuMemFreeAsync, cuMemFreeAsync, 11020, D) \
    X(cuMemFreeAsync_ptsz, cuMemFreeAsync, 11020, P) \
    X(cuDeviceGetDefaultMemPool, cuDeviceGetDefaultMemPool, 11020, A) \
    X(cuMemPoolSetAttribute, cuMemPoolSetAttribute, 11020, A) \
    X(cuMemPoolGetAttribute, cuMemPoolGetAttribute, 11020, A) \
    X(cuMemAddressReserve, cuMemAddressReserve, 10020, A) \
    X(cuMemAddressFree, cuMemAddressFree, 10020, A) \
    X(cuMemCreate, cuMemCreate, 10020, A) \
    X(cuMemRelease, cuMemRelease, 10020, A) \
    X(cuMemMap, cuMemMap, 10020, A) \
    X(cuMemUnmap, cuMemUnmap, 10020, A) \
    X(cuMemSetAccess, cuMemSetAccess, 10020, A) \
    X(cuMemGetAccess, cuMemGetAccess, 10020, A) \
    X(cuMemGetAllocationGranularity, cuMemGetAllocationGranularity, 10020, A) \
    X(cuMemGetAllocationPropertiesFromHandle, cuMemGetAllocationPropertiesFromHandle, 10020, A) \
    X(cuMemRetainAllocationHandle, cuMemRetainAllocationHandle, 11000, A) \
    X(cuMemExportToShareableHandle, cuMemExportToShareableHandle, 10020, A) \
    X(cuIpcGetMemHandle, cuIpcGetMemHandle, 4010, A) \
    X(cuPointerGetAttribute, cuPointerGetAttribute, 4000, A) \
    X(cuPointerGetAttributes, cuPointerGetAttributes, 7000, A) \
    X(cuMemcpy, cuMemcpy, 4000, D) \
    X(cuMemcpy_ptds, cuMemcpy, 7000, P) \
    X(cuMemcpyAsync, cuMemcpyAsync, 4000, D) \
    X(cuMemcpyAsync_ptsz, cuMemcpyAsync, 7000, P) \
    X(cuMemcpyHtoD_v2, cuMemcpyHtoD, 3020, D) \
    X(cuMemcpyHtoD_v2_ptds, cuMemcpyHtoD, 7000, P) \
    X(cuMemcpyDtoH_v2, cuMemcpyDtoH, 3020, D) \
    X(cuMemcpyDtoH_v2_ptds, cuMemcpyDtoH, 7000, P) \
    X(cuMemcpyDtoD_v2, cuMemcpyDtoD, 3020, D) \
    X(cuMemcpyDtoD_v2_ptds, cuMemcpyDtoD, 7000, P) \
    X(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync, 3020, D) \
    X(cuMemcpyHtoDAsync_v2_ptsz, cuMemcpyHtoDAsync, 7000, P) \
    X(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync, 3020, D) \
    X(cuMemcpyDtoHAsync_v2_ptsz, cuMemcpyDtoHAsync, 7000, P) \
    X(cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync, 3020, D) \
    X(cuMemcpyDtoDAsync_v2_ptsz, cuMemcpyDtoDAsync, 7000, P) \
    X(cuMemcpyPeer, cuMemcpyPeer, 4000, D) \
    X(cuMemcpyPeer_ptds, cuMemcpyPeer, 7000, P) \
    X(cuMemcpyPeerAsync, cuMemcpyPeerAsync, 4000, D) \
    X(cuMemcpyPeerAsync_ptsz, cuMemcpyPeerAsync, 7000, P) \
    X(cuMemsetD8_v2, cuMemsetD8, 3020, D) \
    X(cuMemsetD8_v2_ptds, cuMemsetD8, 7000, P) \
    X(cuMemsetD32_v2, cuMemsetD32, 3020, D) \
    X(cuMemsetD32_v2_ptds, cuMemsetD32, 7000, P) \
    X(cuMemsetD8Async, cuMemsetD8Async, 3020, D) \
    X(cuMemsetD8Async_ptsz, cuMemsetD8Async, 7000, P) \
    X(cuMemsetD32Async, cuMemsetD32Async, 3020, D) \
    X(cuMemsetD32Async_ptsz, cuMemsetD32Async, 7000, P) \
    X(cuStreamCreate, cuStreamCreate, 2000, A) \
    X(cuStreamCreateWithPriority, cuStreamCreateWithPriority, 5050, A) \
    X(cuStreamDestroy_v2, cuStreamDestroy, 4000, A) \
    X(cuStreamSynchronize, cuStreamSynchronize, 2000, D) \
    X(cuStreamSynchronize_ptsz, cuStreamSynchronize, 7000, P) \
    X(cuStreamQuery, cuStreamQuery, 2000, D) \
    X(cuStreamQuery_ptsz, cuStreamQuery, 7000, P) \
    X(cuStreamWaitEvent, cuStreamWaitEvent, 3020, D) \
    X(cuStreamWaitEvent_ptsz, cuStreamWaitEvent, 7000, P) \
    X(cuStreamGetFlags, cuStreamGetFlags, 5050, D) \
    X(cuStreamGetFlags_ptsz, cuStreamGetFlags, 7000, P) \
    X(cuStreamBeginCapture_v2, cuStreamBeginCapture, 10010, D) \
    X(cuStreamBeginCapture_v2_ptsz, cuStreamBeginCapture, 10010, P) \
    X(cuStreamEndCapture, cuStreamEndCapture, 10000, D) \
    X(cuStreamEndCapture_ptsz, cuStreamEndCapture, 10000, P) \
    X(cuStreamIsCapturing, cuStreamIsCapturing, 10000, D) \
    X(cuStreamIsCapturing_ptsz, cuStreamIsCapturing, 10000, P) \
    X(cuStreamGetCaptureInfo_v3, cuStreamGetCaptureInfo, 12030, D) \
    X(cuStreamGetCaptureInfo_v3_ptsz, cuStreamGetCaptureInfo, 12030, P) \
    X(cuLaunchHostFunc, cuLaunchHostFunc, 10000, D) \
    X(cuLaunchHostFunc_ptsz, cuLaunchHostFunc, 10000, P) \
    X(cuEventCreate, cuEventCreate, 2000, A) \
    X(cuEventDestroy_v2, cuEventDestroy, 4000, A) \
    X(cuEventRecord, cuEventRecord, 2000, D) \
    X(cuEventRecord_ptsz, cuEventRecord, 7000, P) \
    X(cuEventRecordWithFlags, cuEventRecordWithFlags, 11010, D) \
    X(cuEventRecordWithFlags_ptsz, cuEventRecordWithFlags, 11010, P) \
    X(cuEventQuery, cuEventQuery, 2000, A) \
    X(cuEventSynchronize, cuEventSynchronize, 2000, A) \
    X(cuEventElapsedTime_v2, cuEventElapsedTime, 12080, A) \
    X(cuLaunchKernel, cuLaunchKernel, 4000, D) \
    X(cuLaunchKernel_ptsz, cuLaunchKernel, 7000, P) \
    X(cuLaunchKernelEx, cuLaunchKernelEx, 11060, D) \
    X(cuLaunchKernelEx_ptsz, cuLaunchKernelEx, 11060, P) \
    X(cuLaunchCooperativeKernel, cuLaunchCooperativeKernel, 9000, D) \
    X(cuLaunchCooperativeKernel_ptsz, cuLaunchCooperativeKernel, 9000, P) \
    X(cuFuncGetParamInfo, cuFuncGetParamInfo, 12040, A) \
    X(cuFuncGetName, cuFuncGetName, 12030, A) \
    X(cuKernelGetParamInfo, cuKernelGetParamInfo, 12040, A) \
    X(cuKernelGetName, cuKernelGetName, 12030, A) \
    X(cuKernelGetFunction, cuKernelGetFunction, 12000, A) \
    X(cuModuleLoad, cuModuleLoad, 2000, A) \
    X(cuModuleLoadData, cuModuleLoadData, 2000, A) \
    X(cuModuleGetFunction, cuModuleGetFunction, 2000, A) \
    X(cuModuleUnload, cuModuleUnload, 2000, A) \
    X(cuLibraryLoadData, cuLibraryLoadData, 12000, A) \
    X(cuLibraryGetKernel, cuLibraryGetKernel, 12000, A) \
    X(cuLibraryUnload, cuLibraryUnload, 12000, A) \
    X(cuGraphInstantiateWithFlags, cuGraphInstantiate, 11040, A) \
    X(cuGraphLaunch, cuGraphLaunch, 10000, D) \
    X(cuGraphLaunch_ptsz, cuGraphLaunch, 10000, P) \
    X(cuGraphDestroy, cuGraphDestroy, 10000, A) \
    X(cuGraphExecDestroy, cuGraphExecDestroy, 10000, A) \
    X(simgpu_function_of, simgpu_function_of, 0, E)
/* clang-format on */

/* The stream-ordered entry points, which the driver exports twice: in the legacy default stream's
 * form and in the per-thread default stream's (_ptsz, _ptds). Both forms run one body; only what
 * a NULL stream means differs, which the body is told by pt (true: per-thread).
 *
 * X(LEGACY, PER_THREAD, (PARAMETERS), BODY)
 *   LEGACY, PER_THREAD  the two exported symbols (each also a row of SIMGPU_ENTRIES)
 *   PARAMETERS          the prototype's parameter list, as <cuda.h> gives it
 *   BODY                the expression both return, in terms of the parameters and pt
 * From it are generated: both definitions of each (simgpu_ordered.c) and the per-thread
 * prototypes, which <cuda.h> declares only in per-thread mode (simgpu_exports.h). The simulator
 * ignores block dimensions, shared memory sizes and the flags of event records and waits. */
#define SIM_COPY_P       (CUdeviceptr dst, CUdeviceptr src, size_t n)
#define SIM_COPY_ASYNC_P (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
#define SIM_LAUNCH_P                                                                               \
    (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,   \
     unsigned shmem, CUstream h, void **params, void **extra)
#define SIM_COOP_P                                                                                 \
    (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,   \
     unsigned shmem, CUstream h, void **params)
#define SIM_IGNORE_BLOCK ((void)bx, (void)by, (void)bz, (void)shmem)
#define SIM_PEER_P                                                                                 \
    (CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t n)
#define SIM_PEER_ASYNC_P                                                                           \
    (CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t n, CUstream h)
#define SIM_CAPTURE_INFO_P                                                                         \
    (CUstream h, CUstreamCaptureStatus * st, cuuint64_t * id, CUgraph * g,                         \
     const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps)
/* clang-format off */
#define SIMGPU_ORDERED(X) \
    X(cuMemAllocAsync, cuMemAllocAsync_ptsz, (CUdeviceptr *p, size_t n, CUstream h), \
      sim_api_alloc_async(p, n, h, pt)) \
    X(cuMemFreeAsync, cuMemFreeAsync_ptsz, (CUdeviceptr p, CUstream h), sim_api_free_async(p, h, pt)) \
    X(cuMemcpy, cuMemcpy_ptds, SIM_COPY_P, sim_api_copy(dst, src, n, NULL, pt, false)) \
    X(cuMemcpyAsync, cuMemcpyAsync_ptsz, SIM_COPY_ASYNC_P, sim_api_copy(dst, src, n, h, pt, true)) \
    X(cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds, (CUdeviceptr dst, const void *src, size_t n), \
      sim_api_copy(dst, (uintptr_t)src, n, NULL, pt, false)) \
    X(cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds, (void *dst, CUdeviceptr src, size_t n), \
      sim_api_copy((uintptr_t)dst, src, n, NULL, pt, false)) \
    X(cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds, SIM_COPY_P, sim_api_copy(dst, src, n, NULL, pt, false)) \
    X(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz, (CUdeviceptr dst, const void *src, size_t n, CUstream h), \
      sim_api_copy(dst, (uintptr_t)src, n, h, pt, true)) \
    X(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz, (void *dst, CUdeviceptr src, size_t n, CUstream h), \
      sim_api_copy((uintptr_t)dst, src, n, h, pt, true)) \
    X(cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz, SIM_COPY_ASYNC_P, \
      sim_api_copy(dst, src, n, h, pt, true)) \
    X(cuMemsetD8_v2, cuMemsetD8_v2_ptds, (CUdeviceptr dst, unsigned char v, size_t n), \
      sim_api_memset(dst, v, 1, n, NULL, pt, false)) \
    X(cuMemsetD32_v2, cuMemsetD32_v2_ptds, (CUdeviceptr dst, unsigned int v, size_t n), \
      sim_api_memset(dst, v, 4, n, NULL, pt, false)) \
    X(cuMemsetD8Async, cuMemsetD8Async_ptsz, (CUdeviceptr dst, unsigned char v, size_t n, CUstream h), \
      sim_api_memset(dst, v, 1, n, h, pt, true)) \
    X(cuMemsetD32Async, cuMemsetD32Async_ptsz, (CUdeviceptr dst, unsigned int v, size_t n, CUstream h), \
      sim_api_memset(dst, v, 4, n, h, pt, true)) \
    X(cuMemcpyPeer, cuMemcpyPeer_ptds, SIM_PEER_P, \
      sim_api_copy_peer(dst, dst_ctx, src, src_ctx, n, NULL, pt, false)) \
    X(cuMemcpyPeerAsync, cuMemcpyPeerAsync_ptsz, SIM_PEER_ASYNC_P, \
      sim_api_copy_peer(dst, dst_ctx, src, src_ctx, n, h, pt, true)) \
    X(cuStreamSynchronize, cuStreamSynchronize_ptsz, (CUstream h), sim_api_stream_sync(h, pt)) \
    X(cuStreamQuery, cuStreamQuery_ptsz, (CUstream h), sim_api_stream_query(h, pt)) \
    X(cuStreamWaitEvent, cuStreamWaitEvent_ptsz, (CUstream h, CUevent e, unsigned int flags), \
      ((void)flags, sim_api_wait_event(h, e, pt))) \
    X(cuStreamGetFlags, cuStreamGetFlags_ptsz, (CUstream h, unsigned int *flags), \
      sim_api_stream_flags(h, pt, flags)) \
    X(cuStreamBeginCapture_v2, cuStreamBeginCapture_v2_ptsz, (CUstream h, CUstreamCaptureMode mode), \
      sim_api_capture_begin(h, pt, mode)) \
    X(cuStreamEndCapture, cuStreamEndCapture_ptsz, (CUstream h, CUgraph *g), sim_api_capture_end(h, pt, g)) \
    X(cuStreamIsCapturing, cuStreamIsCapturing_ptsz, (CUstream h, CUstreamCaptureStatus *st), \
      sim_api_capture_info(h, pt, st, NULL, NULL, NULL, NULL, NULL)) \
    X(cuStreamGetCaptureInfo_v3, cuStreamGetCaptureInfo_v3_ptsz, SIM_CAPTURE_INFO_P, \
      sim_api_capture_info(h, pt, st, id, g, deps, edges, ndeps)) \
    X(cuLaunchHostFunc, cuLaunchHostFunc_ptsz, (CUstream h, CUhostFn fn, void *data), \
      sim_api_host_func(h, pt, fn, data)) \
    X(cuEventRecord, cuEventRecord_ptsz, (CUevent e, CUstream h), sim_api_event_record(e, h, pt)) \
    X(cuEventRecordWithFlags, cuEventRecordWithFlags_ptsz, (CUevent e, CUstream h, unsigned int flags), \
      ((void)flags, sim_api_event_record(e, h, pt))) \
    X(cuLaunchKernel, cuLaunchKernel_ptsz, SIM_LAUNCH_P, \
      (SIM_IGNORE_BLOCK, sim_api_launch(f, gx, gy, gz, h, pt, params, extra))) \
    X(cuLaunchKernelEx, cuLaunchKernelEx_ptsz, (const CUlaunchConfig *config, CUfunction f, void **params, void **extra), \
      sim_api_launch_ex(config, f, pt, params, extra)) \
    X(cuLaunchCooperativeKernel, cuLaunchCooperativeKernel_ptsz, SIM_COOP_P, \
      (SIM_IGNORE_BLOCK, sim_api_launch(f, gx, gy, gz, h, pt, params, NULL))) \
    X(cuGraphLaunch, cuGraphLaunch_ptsz, (CUgraphExec e, CUstream h), sim_api_graph_launch(e, h, pt))
/* clang-format on */
