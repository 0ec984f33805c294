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
    X(cuGraphInstantiateWithFlags, cuGraphInstantiate, 11040, A) \
    X(cuGraphLaunch, cuGraphLaunch, 10000, D) \
    X(cuGraphLaunch_ptsz, cuGraphLaunch, 10000, P) \
    X(cuGraphDestroy, cuGraphDestroy, 10000, A) \
    X(cuGraphExecDestroy, cuGraphExecDestroy, 10000, A) \
    X(simgpu_function_of, simgpu_function_of, 0, E)
/* clang-format on */
