/* simgpu_rt_error.c — runtime error codes: the driver-to-runtime mapping, names and strings,
 * and the last-error semantics of cudaGetLastError / cudaPeekAtLastError. */
#include "simgpu_rt.h"

/* X(CUresult, cudaError_t): every driver result with a runtime counterpart.
   Their values coincide today, but the mapping is by name so that it stays
   right if they ever diverge. CUDA_ERROR_CONTEXT_ALREADY_CURRENT (deprecated)
   and CUDA_ERROR_KEY_ROTATION have no runtime counterpart and map, like any
   code not listed, to cudaErrorUnknown. */
/* clang-format off */
#define SIMGPU_RT_CU_ERRORS(X) \
    X(CUDA_SUCCESS, cudaSuccess) \
    X(CUDA_ERROR_INVALID_VALUE, cudaErrorInvalidValue) \
    X(CUDA_ERROR_OUT_OF_MEMORY, cudaErrorMemoryAllocation) \
    X(CUDA_ERROR_NOT_INITIALIZED, cudaErrorInitializationError) \
    X(CUDA_ERROR_DEINITIALIZED, cudaErrorCudartUnloading) \
    X(CUDA_ERROR_PROFILER_DISABLED, cudaErrorProfilerDisabled) \
    X(CUDA_ERROR_PROFILER_NOT_INITIALIZED, cudaErrorProfilerNotInitialized) \
    X(CUDA_ERROR_PROFILER_ALREADY_STARTED, cudaErrorProfilerAlreadyStarted) \
    X(CUDA_ERROR_PROFILER_ALREADY_STOPPED, cudaErrorProfilerAlreadyStopped) \
    X(CUDA_ERROR_STUB_LIBRARY, cudaErrorStubLibrary) \
    X(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, cudaErrorCallRequiresNewerDriver) \
    X(CUDA_ERROR_DEVICE_UNAVAILABLE, cudaErrorDevicesUnavailable) \
    X(CUDA_ERROR_NO_DEVICE, cudaErrorNoDevice) \
    X(CUDA_ERROR_INVALID_DEVICE, cudaErrorInvalidDevice) \
    X(CUDA_ERROR_DEVICE_NOT_LICENSED, cudaErrorDeviceNotLicensed) \
    X(CUDA_ERROR_INVALID_IMAGE, cudaErrorInvalidKernelImage) \
    X(CUDA_ERROR_INVALID_CONTEXT, cudaErrorDeviceUninitialized) \
    X(CUDA_ERROR_MAP_FAILED, cudaErrorMapBufferObjectFailed) \
    X(CUDA_ERROR_UNMAP_FAILED, cudaErrorUnmapBufferObjectFailed) \
    X(CUDA_ERROR_ARRAY_IS_MAPPED, cudaErrorArrayIsMapped) \
    X(CUDA_ERROR_ALREADY_MAPPED, cudaErrorAlreadyMapped) \
    X(CUDA_ERROR_NO_BINARY_FOR_GPU, cudaErrorNoKernelImageForDevice) \
    X(CUDA_ERROR_ALREADY_ACQUIRED, cudaErrorAlreadyAcquired) \
    X(CUDA_ERROR_NOT_MAPPED, cudaErrorNotMapped) \
    X(CUDA_ERROR_NOT_MAPPED_AS_ARRAY, cudaErrorNotMappedAsArray) \
    X(CUDA_ERROR_NOT_MAPPED_AS_POINTER, cudaErrorNotMappedAsPointer) \
    X(CUDA_ERROR_ECC_UNCORRECTABLE, cudaErrorECCUncorrectable) \
    X(CUDA_ERROR_UNSUPPORTED_LIMIT, cudaErrorUnsupportedLimit) \
    X(CUDA_ERROR_CONTEXT_ALREADY_IN_USE, cudaErrorDeviceAlreadyInUse) \
    X(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, cudaErrorPeerAccessUnsupported) \
    X(CUDA_ERROR_INVALID_PTX, cudaErrorInvalidPtx) \
    X(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, cudaErrorInvalidGraphicsContext) \
    X(CUDA_ERROR_NVLINK_UNCORRECTABLE, cudaErrorNvlinkUncorrectable) \
    X(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, cudaErrorJitCompilerNotFound) \
    X(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, cudaErrorUnsupportedPtxVersion) \
    X(CUDA_ERROR_JIT_COMPILATION_DISABLED, cudaErrorJitCompilationDisabled) \
    X(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, cudaErrorUnsupportedExecAffinity) \
    X(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, cudaErrorUnsupportedDevSideSync) \
    X(CUDA_ERROR_CONTAINED, cudaErrorContained) \
    X(CUDA_ERROR_INVALID_SOURCE, cudaErrorInvalidSource) \
    X(CUDA_ERROR_FILE_NOT_FOUND, cudaErrorFileNotFound) \
    X(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, cudaErrorSharedObjectSymbolNotFound) \
    X(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, cudaErrorSharedObjectInitFailed) \
    X(CUDA_ERROR_OPERATING_SYSTEM, cudaErrorOperatingSystem) \
    X(CUDA_ERROR_INVALID_HANDLE, cudaErrorInvalidResourceHandle) \
    X(CUDA_ERROR_ILLEGAL_STATE, cudaErrorIllegalState) \
    X(CUDA_ERROR_LOSSY_QUERY, cudaErrorLossyQuery) \
    X(CUDA_ERROR_NOT_FOUND, cudaErrorSymbolNotFound) \
    X(CUDA_ERROR_NOT_READY, cudaErrorNotReady) \
    X(CUDA_ERROR_ILLEGAL_ADDRESS, cudaErrorIllegalAddress) \
    X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, cudaErrorLaunchOutOfResources) \
    X(CUDA_ERROR_LAUNCH_TIMEOUT, cudaErrorLaunchTimeout) \
    X(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, cudaErrorLaunchIncompatibleTexturing) \
    X(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, cudaErrorPeerAccessAlreadyEnabled) \
    X(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, cudaErrorPeerAccessNotEnabled) \
    X(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, cudaErrorSetOnActiveProcess) \
    X(CUDA_ERROR_CONTEXT_IS_DESTROYED, cudaErrorContextIsDestroyed) \
    X(CUDA_ERROR_ASSERT, cudaErrorAssert) \
    X(CUDA_ERROR_TOO_MANY_PEERS, cudaErrorTooManyPeers) \
    X(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, cudaErrorHostMemoryAlreadyRegistered) \
    X(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, cudaErrorHostMemoryNotRegistered) \
    X(CUDA_ERROR_HARDWARE_STACK_ERROR, cudaErrorHardwareStackError) \
    X(CUDA_ERROR_ILLEGAL_INSTRUCTION, cudaErrorIllegalInstruction) \
    X(CUDA_ERROR_MISALIGNED_ADDRESS, cudaErrorMisalignedAddress) \
    X(CUDA_ERROR_INVALID_ADDRESS_SPACE, cudaErrorInvalidAddressSpace) \
    X(CUDA_ERROR_INVALID_PC, cudaErrorInvalidPc) \
    X(CUDA_ERROR_LAUNCH_FAILED, cudaErrorLaunchFailure) \
    X(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, cudaErrorCooperativeLaunchTooLarge) \
    X(CUDA_ERROR_TENSOR_MEMORY_LEAK, cudaErrorTensorMemoryLeak) \
    X(CUDA_ERROR_NOT_PERMITTED, cudaErrorNotPermitted) \
    X(CUDA_ERROR_NOT_SUPPORTED, cudaErrorNotSupported) \
    X(CUDA_ERROR_SYSTEM_NOT_READY, cudaErrorSystemNotReady) \
    X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, cudaErrorSystemDriverMismatch) \
    X(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, cudaErrorCompatNotSupportedOnDevice) \
    X(CUDA_ERROR_MPS_CONNECTION_FAILED, cudaErrorMpsConnectionFailed) \
    X(CUDA_ERROR_MPS_RPC_FAILURE, cudaErrorMpsRpcFailure) \
    X(CUDA_ERROR_MPS_SERVER_NOT_READY, cudaErrorMpsServerNotReady) \
    X(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED, cudaErrorMpsMaxClientsReached) \
    X(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED, cudaErrorMpsMaxConnectionsReached) \
    X(CUDA_ERROR_MPS_CLIENT_TERMINATED, cudaErrorMpsClientTerminated) \
    X(CUDA_ERROR_CDP_NOT_SUPPORTED, cudaErrorCdpNotSupported) \
    X(CUDA_ERROR_CDP_VERSION_MISMATCH, cudaErrorCdpVersionMismatch) \
    X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, cudaErrorStreamCaptureUnsupported) \
    X(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, cudaErrorStreamCaptureInvalidated) \
    X(CUDA_ERROR_STREAM_CAPTURE_MERGE, cudaErrorStreamCaptureMerge) \
    X(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, cudaErrorStreamCaptureUnmatched) \
    X(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, cudaErrorStreamCaptureUnjoined) \
    X(CUDA_ERROR_STREAM_CAPTURE_ISOLATION, cudaErrorStreamCaptureIsolation) \
    X(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, cudaErrorStreamCaptureImplicit) \
    X(CUDA_ERROR_CAPTURED_EVENT, cudaErrorCapturedEvent) \
    X(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, cudaErrorStreamCaptureWrongThread) \
    X(CUDA_ERROR_TIMEOUT, cudaErrorTimeout) \
    X(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, cudaErrorGraphExecUpdateFailure) \
    X(CUDA_ERROR_EXTERNAL_DEVICE, cudaErrorExternalDevice) \
    X(CUDA_ERROR_INVALID_CLUSTER_SIZE, cudaErrorInvalidClusterSize) \
    X(CUDA_ERROR_FUNCTION_NOT_LOADED, cudaErrorFunctionNotLoaded) \
    X(CUDA_ERROR_INVALID_RESOURCE_TYPE, cudaErrorInvalidResourceType) \
    X(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, cudaErrorInvalidResourceConfiguration) \
    X(CUDA_ERROR_UNKNOWN, cudaErrorUnknown)

/* X(cudaError_t, string): every runtime error with the message of cudaGetErrorString. */
#define SIMGPU_RT_ERRORS(X) \
    X(cudaSuccess, "no error") \
    X(cudaErrorInvalidValue, "invalid argument") \
    X(cudaErrorMemoryAllocation, "out of memory") \
    X(cudaErrorInitializationError, "initialization error") \
    X(cudaErrorCudartUnloading, "driver shutting down") \
    X(cudaErrorProfilerDisabled, "profiler disabled while using external profiling tool") \
    X(cudaErrorProfilerNotInitialized, "profiler not initialized: call cudaProfilerInitialize()") \
    X(cudaErrorProfilerAlreadyStarted, "profiler already started") \
    X(cudaErrorProfilerAlreadyStopped, "profiler already stopped") \
    X(cudaErrorInvalidConfiguration, "invalid configuration argument") \
    X(cudaErrorInvalidPitchValue, "invalid pitch argument") \
    X(cudaErrorInvalidSymbol, "invalid device symbol") \
    X(cudaErrorInvalidHostPointer, "invalid host pointer") \
    X(cudaErrorInvalidDevicePointer, "invalid device pointer") \
    X(cudaErrorInvalidTexture, "invalid texture reference") \
    X(cudaErrorInvalidTextureBinding, "texture is not bound to a pointer") \
    X(cudaErrorInvalidChannelDescriptor, "invalid channel descriptor") \
    X(cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy") \
    X(cudaErrorAddressOfConstant, "invalid address of constant") \
    X(cudaErrorTextureFetchFailed, "fetch from texture failed") \
    X(cudaErrorTextureNotBound, "cannot fetch from a texture that is not bound") \
    X(cudaErrorSynchronizationError, "incorrect use of __syncthreads()") \
    X(cudaErrorInvalidFilterSetting, "linear filtering not supported for non-float type") \
    X(cudaErrorInvalidNormSetting, "read as normalized float not supported for 32-bit non float type") \
    X(cudaErrorMixedDeviceExecution, "device emulation mode and device execution mode cannot be mixed") \
    X(cudaErrorNotYetImplemented, "feature not yet implemented") \
    X(cudaErrorMemoryValueTooLarge, "memory size or pointer value too large to fit in 32 bit") \
    X(cudaErrorStubLibrary, "CUDA driver is a stub library") \
    X(cudaErrorInsufficientDriver, "CUDA driver version is insufficient for CUDA runtime version") \
    X(cudaErrorCallRequiresNewerDriver, "API call is not supported in the installed CUDA driver") \
    X(cudaErrorInvalidSurface, "invalid surface reference") \
    X(cudaErrorDuplicateVariableName, "duplicate global variable looked up by string name") \
    X(cudaErrorDuplicateTextureName, "duplicate texture looked up by string name") \
    X(cudaErrorDuplicateSurfaceName, "duplicate surface looked up by string name") \
    X(cudaErrorDevicesUnavailable, "CUDA-capable device(s) is/are busy or unavailable") \
    X(cudaErrorIncompatibleDriverContext, "incompatible driver context") \
    X(cudaErrorMissingConfiguration, "__global__ function call is not configured") \
    X(cudaErrorPriorLaunchFailure, "unspecified launch failure in prior launch") \
    X(cudaErrorLaunchMaxDepthExceeded, "launch would exceed maximum depth of nested launches") \
    X(cudaErrorLaunchFileScopedTex, "launch failed because kernel uses unsupported, file-scoped textures (texture objects are supported)") \
    X(cudaErrorLaunchFileScopedSurf, "launch failed because kernel uses unsupported, file-scoped surfaces (surface objects are supported)") \
    X(cudaErrorSyncDepthExceeded, "cudaDeviceSynchronize failed because caller's grid depth exceeds cudaLimitDevRuntimeSyncDepth") \
    X(cudaErrorLaunchPendingCountExceeded, "launch failed because launch would exceed cudaLimitDevRuntimePendingLaunchCount") \
    X(cudaErrorInvalidDeviceFunction, "invalid device function") \
    X(cudaErrorNoDevice, "no CUDA-capable device is detected") \
    X(cudaErrorInvalidDevice, "invalid device ordinal") \
    X(cudaErrorDeviceNotLicensed, "device doesn't have valid Grid license") \
    X(cudaErrorSoftwareValidityNotEstablished, "integrity checks failed") \
    X(cudaErrorStartupFailure, "startup failure in cuda runtime") \
    X(cudaErrorInvalidKernelImage, "device kernel image is invalid") \
    X(cudaErrorDeviceUninitialized, "invalid device context") \
    X(cudaErrorMapBufferObjectFailed, "mapping of buffer object failed") \
    X(cudaErrorUnmapBufferObjectFailed, "unmapping of buffer object failed") \
    X(cudaErrorArrayIsMapped, "array is mapped") \
    X(cudaErrorAlreadyMapped, "resource already mapped") \
    X(cudaErrorNoKernelImageForDevice, "no kernel image is available for execution on the device") \
    X(cudaErrorAlreadyAcquired, "resource already acquired") \
    X(cudaErrorNotMapped, "resource not mapped") \
    X(cudaErrorNotMappedAsArray, "resource not mapped as array") \
    X(cudaErrorNotMappedAsPointer, "resource not mapped as pointer") \
    X(cudaErrorECCUncorrectable, "uncorrectable ECC error encountered") \
    X(cudaErrorUnsupportedLimit, "limit is not supported on this architecture") \
    X(cudaErrorDeviceAlreadyInUse, "exclusive-thread device already in use by a different thread") \
    X(cudaErrorPeerAccessUnsupported, "peer access is not supported between these two devices") \
    X(cudaErrorInvalidPtx, "a PTX JIT compilation failed") \
    X(cudaErrorInvalidGraphicsContext, "invalid OpenGL or DirectX context") \
    X(cudaErrorNvlinkUncorrectable, "uncorrectable NVLink error detected during the execution") \
    X(cudaErrorJitCompilerNotFound, "PTX JIT compiler library not found") \
    X(cudaErrorUnsupportedPtxVersion, "the provided PTX was compiled with an unsupported toolchain.") \
    X(cudaErrorJitCompilationDisabled, "PTX JIT compilation was disabled") \
    X(cudaErrorUnsupportedExecAffinity, "the provided execution affinity is not supported") \
    X(cudaErrorUnsupportedDevSideSync, "the provided device side synchronization is not supported") \
    X(cudaErrorContained, "an error was contained to the affected work") \
    X(cudaErrorInvalidSource, "device kernel image is invalid") \
    X(cudaErrorFileNotFound, "file not found") \
    X(cudaErrorSharedObjectSymbolNotFound, "shared object symbol not found") \
    X(cudaErrorSharedObjectInitFailed, "shared object initialization failed") \
    X(cudaErrorOperatingSystem, "OS call failed or operation not supported on this OS") \
    X(cudaErrorInvalidResourceHandle, "invalid resource handle") \
    X(cudaErrorIllegalState, "the operation cannot be performed in the present state") \
    X(cudaErrorLossyQuery, "attempted introspection would be semantically lossy") \
    X(cudaErrorSymbolNotFound, "named symbol not found") \
    X(cudaErrorNotReady, "device not ready") \
    X(cudaErrorIllegalAddress, "an illegal memory access was encountered") \
    X(cudaErrorLaunchOutOfResources, "too many resources requested for launch") \
    X(cudaErrorLaunchTimeout, "the launch timed out and was terminated") \
    X(cudaErrorLaunchIncompatibleTexturing, "launch uses incompatible texturing mode") \
    X(cudaErrorPeerAccessAlreadyEnabled, "peer access is already enabled") \
    X(cudaErrorPeerAccessNotEnabled, "peer access has not been enabled") \
    X(cudaErrorSetOnActiveProcess, "cannot set while device is active in this process") \
    X(cudaErrorContextIsDestroyed, "context is destroyed") \
    X(cudaErrorAssert, "device-side assert triggered") \
    X(cudaErrorTooManyPeers, "peer mapping resources exhausted") \
    X(cudaErrorHostMemoryAlreadyRegistered, "part or all of the requested memory range is already mapped") \
    X(cudaErrorHostMemoryNotRegistered, "pointer does not correspond to a registered memory region") \
    X(cudaErrorHardwareStackError, "hardware stack error") \
    X(cudaErrorIllegalInstruction, "an illegal instruction was encountered") \
    X(cudaErrorMisalignedAddress, "misaligned address") \
    X(cudaErrorInvalidAddressSpace, "operation not supported on global/shared address space") \
    X(cudaErrorInvalidPc, "invalid program counter") \
    X(cudaErrorLaunchFailure, "unspecified launch failure") \
    X(cudaErrorCooperativeLaunchTooLarge, "too many blocks in cooperative launch") \
    X(cudaErrorTensorMemoryLeak, "tensor memory not completely freed") \
    X(cudaErrorNotPermitted, "operation not permitted") \
    X(cudaErrorNotSupported, "operation not supported") \
    X(cudaErrorSystemNotReady, "system not yet initialized") \
    X(cudaErrorSystemDriverMismatch, "system has unsupported display driver / cuda driver combination") \
    X(cudaErrorCompatNotSupportedOnDevice, "forward compatibility was attempted on non supported HW") \
    X(cudaErrorMpsConnectionFailed, "MPS client failed to connect to the MPS control daemon or the MPS server") \
    X(cudaErrorMpsRpcFailure, "the remote procedural call between the MPS server and the MPS client failed") \
    X(cudaErrorMpsServerNotReady, "MPS server is not ready to accept new MPS client requests") \
    X(cudaErrorMpsMaxClientsReached, "the hardware resources required to create MPS client have been exhausted") \
    X(cudaErrorMpsMaxConnectionsReached, "the hardware resources required to support device connections have been exhausted") \
    X(cudaErrorMpsClientTerminated, "the MPS client has been terminated by the server") \
    X(cudaErrorCdpNotSupported, "is using CUDA Dynamic Parallelism, but the current configuration, like MPS, does not support it") \
    X(cudaErrorCdpVersionMismatch, "unsupported interaction between different versions of CUDA Dynamic Parallelism") \
    X(cudaErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing") \
    X(cudaErrorStreamCaptureInvalidated, "operation failed due to a previous error during capture") \
    X(cudaErrorStreamCaptureMerge, "operation would result in a merge of separate capture sequences") \
    X(cudaErrorStreamCaptureUnmatched, "capture was not ended in the same stream as it began") \
    X(cudaErrorStreamCaptureUnjoined, "capturing stream has unjoined work") \
    X(cudaErrorStreamCaptureIsolation, "dependency created on uncaptured work in another stream") \
    X(cudaErrorStreamCaptureImplicit, "operation would make the legacy stream depend on a capturing blocking stream") \
    X(cudaErrorCapturedEvent, "operation not permitted on an event last recorded in a capturing stream") \
    X(cudaErrorStreamCaptureWrongThread, "attempt to terminate a thread-local capture sequence from another thread") \
    X(cudaErrorTimeout, "wait operation timed out") \
    X(cudaErrorGraphExecUpdateFailure, "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update") \
    X(cudaErrorExternalDevice, "an async error has occurred in a external entity outside of CUDA") \
    X(cudaErrorInvalidClusterSize, "a kernel launch error has occurred due to cluster misconfiguration") \
    X(cudaErrorFunctionNotLoaded, "the function handle is not loaded when calling an API that requires a loaded function") \
    X(cudaErrorInvalidResourceType, "one or more resources passed in are not valid resource types for the operation") \
    X(cudaErrorInvalidResourceConfiguration, "one or more resources are insufficient or non-applicable for the operation") \
    X(cudaErrorUnknown, "unknown error") \
    X(cudaErrorApiFailureBase, "api failure base")
/* clang-format on */

cudaError_t simgpu_rt_error_from_cu(CUresult r)
{
    switch (r) {
#define SIMGPU_RT_CASE(cu, rt)                                                                     \
    case cu:                                                                                       \
        return rt;
        SIMGPU_RT_CU_ERRORS(SIMGPU_RT_CASE)
#undef SIMGPU_RT_CASE
    default:
        return cudaErrorUnknown;
    }
}

/* Errors after which the context is unusable: every later call fails with
   them and cudaGetLastError does not clear them. */
static bool is_sticky(cudaError_t e)
{
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
        return true;
    default:
        return false;
    }
}

cudaError_t simgpu_rt_error_record(cudaError_t e)
{
    int none = cudaSuccess;

    if (e == cudaSuccess || e == cudaErrorNotReady)
        return e;
    simgpu_rt_thread.last_error = e;
    if (is_sticky(e))
        atomic_compare_exchange_strong(&simgpu_rt.sticky, &none, (int)e);
    return e;
}

cudaError_t simgpu_rt_error_cu(CUresult r)
{
    return simgpu_rt_error_record(simgpu_rt_error_from_cu(r));
}

cudaError_t simgpu_rt_error_sticky(void)
{
    return (cudaError_t)atomic_load(&simgpu_rt.sticky);
}

/* Returns and clears this thread's last error; a sticky error is never
   cleared: once the thread's own error is consumed it is returned again. */
cudaError_t cudaGetLastError(void)
{
    cudaError_t e = simgpu_rt_thread.last_error;

    simgpu_rt_thread.last_error = cudaSuccess;
    return e != cudaSuccess ? e : simgpu_rt_error_sticky();
}

/* Like cudaGetLastError without clearing anything. */
cudaError_t cudaPeekAtLastError(void)
{
    cudaError_t e = simgpu_rt_thread.last_error;

    return e != cudaSuccess ? e : simgpu_rt_error_sticky();
}

/* The enumerator's name ("cudaErrorMemoryAllocation"), or "unrecognized error code". */
const char *cudaGetErrorName(cudaError_t error)
{
    switch (error) {
#define SIMGPU_RT_NAME(e, s)                                                                       \
    case e:                                                                                        \
        return #e;
        SIMGPU_RT_ERRORS(SIMGPU_RT_NAME)
#undef SIMGPU_RT_NAME
    default:
        return "unrecognized error code";
    }
}

/* The error's message ("out of memory"), or "unrecognized error code". */
const char *cudaGetErrorString(cudaError_t error)
{
    switch (error) {
#define SIMGPU_RT_STRING(e, s)                                                                     \
    case e:                                                                                        \
        return s;
        SIMGPU_RT_ERRORS(SIMGPU_RT_STRING)
#undef SIMGPU_RT_STRING
    default:
        return "unrecognized error code";
    }
}
