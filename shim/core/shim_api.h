/* shim_api.h — THE table of the driver entry points libshim intercepts and of those it calls.
 *
 * X(SYMBOL, (PARAMETERS), (ARGUMENTS)) for every exported driver symbol the
 * shim replaces; every entry point returns CUresult. Generated from it: the
 * hook id enum and name table, the typed table of real functions (core/shim_real.c
 * fills it), the prototypes of every hook (hooks/shim_hooks.h), and both dispatch
 * paths: dlsym by name (hooks/shim_dlsym.c) and cuGetProcAddress by the exact pointer
 * the driver returned (hooks/shim_proc.c), both through hooks/shim_hook_table.c.
 * It lives in the core room because the resolver needs the names; nothing here calls a hook. */
#ifndef SHIM_API_H
#define SHIM_API_H

/* The hooks keep <cuda.h>'s names and must be exported although the shim is
   built with -fvisibility=hidden: declare them with default visibility. */
#pragma GCC visibility push(default)
#include <cuda.h>

#undef cuGetProcAddress /* both ABIs are hooked by their exported names */

#define SHIM_LAUNCH_P                                                                              \
    (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,             \
     unsigned int by, unsigned int bz, unsigned int shmem, CUstream hStream, void **kernelParams,  \
     void **extra)
#define SHIM_LAUNCH_A (f, gx, gy, gz, bx, by, bz, shmem, hStream, kernelParams, extra)
#define SHIM_COOP_P                                                                                \
    (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,             \
     unsigned int by, unsigned int bz, unsigned int shmem, CUstream hStream, void **kernelParams)
#define SHIM_COOP_A (f, gx, gy, gz, bx, by, bz, shmem, hStream, kernelParams)

/* clang-format off */
#define SHIM_HOOKS(X) \
    X(cuGetProcAddress, (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags), \
      (symbol, pfn, cudaVersion, flags)) \
    X(cuGetProcAddress_v2, (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags, \
      CUdriverProcAddressQueryResult *symbolStatus), (symbol, pfn, cudaVersion, flags, symbolStatus)) \
    X(cuInit, (unsigned int flags), (flags)) \
    X(cuMemAlloc_v2, (CUdeviceptr *dptr, size_t bytesize), (dptr, bytesize)) \
    X(cuMemFree_v2, (CUdeviceptr dptr), (dptr)) \
    X(cuMemAllocAsync, (CUdeviceptr *dptr, size_t bytesize, CUstream hStream), (dptr, bytesize, hStream)) \
    X(cuMemAllocAsync_ptsz, (CUdeviceptr *dptr, size_t bytesize, CUstream hStream), (dptr, bytesize, hStream)) \
    X(cuMemAllocFromPoolAsync, (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream), \
      (dptr, bytesize, pool, hStream)) \
    X(cuMemAllocFromPoolAsync_ptsz, (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream), \
      (dptr, bytesize, pool, hStream)) \
    X(cuMemFreeAsync, (CUdeviceptr dptr, CUstream hStream), (dptr, hStream)) \
    X(cuMemFreeAsync_ptsz, (CUdeviceptr dptr, CUstream hStream), (dptr, hStream)) \
    X(cuMemMap, (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle, \
      unsigned long long flags), (ptr, size, offset, handle, flags)) \
    X(cuMemUnmap, (CUdeviceptr ptr, size_t size), (ptr, size)) \
    X(cuMemHostAlloc, (void **pp, size_t bytesize, unsigned int flags), (pp, bytesize, flags)) \
    X(cuMemAllocHost_v2, (void **pp, size_t bytesize), (pp, bytesize)) \
    X(cuMemFreeHost, (void *p), (p)) \
    X(cuLaunchKernel, SHIM_LAUNCH_P, SHIM_LAUNCH_A) \
    X(cuLaunchKernel_ptsz, SHIM_LAUNCH_P, SHIM_LAUNCH_A) \
    X(cuLaunchKernelEx, (const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra), \
      (config, f, kernelParams, extra)) \
    X(cuLaunchKernelEx_ptsz, (const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra), \
      (config, f, kernelParams, extra)) \
    X(cuLaunchCooperativeKernel, SHIM_COOP_P, SHIM_COOP_A) \
    X(cuLaunchCooperativeKernel_ptsz, SHIM_COOP_P, SHIM_COOP_A) \
    X(cuMemcpy, (CUdeviceptr dst, CUdeviceptr src, size_t n), (dst, src, n)) \
    X(cuMemcpy_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t n), (dst, src, n)) \
    X(cuMemcpyAsync, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hStream), (dst, src, n, hStream)) \
    X(cuMemcpyAsync_ptsz, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hStream), (dst, src, n, hStream)) \
    X(cuMemcpyHtoD_v2, (CUdeviceptr dst, const void *src, size_t n), (dst, src, n)) \
    X(cuMemcpyHtoD_v2_ptds, (CUdeviceptr dst, const void *src, size_t n), (dst, src, n)) \
    X(cuMemcpyDtoH_v2, (void *dst, CUdeviceptr src, size_t n), (dst, src, n)) \
    X(cuMemcpyDtoH_v2_ptds, (void *dst, CUdeviceptr src, size_t n), (dst, src, n)) \
    X(cuMemcpyDtoD_v2, (CUdeviceptr dst, CUdeviceptr src, size_t n), (dst, src, n)) \
    X(cuMemcpyDtoD_v2_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t n), (dst, src, n)) \
    X(cuMemcpyHtoDAsync_v2, (CUdeviceptr dst, const void *src, size_t n, CUstream hStream), (dst, src, n, hStream)) \
    X(cuMemcpyHtoDAsync_v2_ptsz, (CUdeviceptr dst, const void *src, size_t n, CUstream hStream), (dst, src, n, hStream)) \
    X(cuMemcpyDtoHAsync_v2, (void *dst, CUdeviceptr src, size_t n, CUstream hStream), (dst, src, n, hStream)) \
    X(cuMemcpyDtoHAsync_v2_ptsz, (void *dst, CUdeviceptr src, size_t n, CUstream hStream), (dst, src, n, hStream)) \
    X(cuMemcpyDtoDAsync_v2, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hStream), (dst, src, n, hStream)) \
    X(cuMemcpyDtoDAsync_v2_ptsz, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hStream), (dst, src, n, hStream)) \
    X(cuMemsetD8_v2, (CUdeviceptr dst, unsigned char v, size_t n), (dst, v, n)) \
    X(cuMemsetD8_v2_ptds, (CUdeviceptr dst, unsigned char v, size_t n), (dst, v, n)) \
    X(cuMemsetD32_v2, (CUdeviceptr dst, unsigned int v, size_t n), (dst, v, n)) \
    X(cuMemsetD32_v2_ptds, (CUdeviceptr dst, unsigned int v, size_t n), (dst, v, n)) \
    X(cuMemsetD8Async, (CUdeviceptr dst, unsigned char v, size_t n, CUstream hStream), (dst, v, n, hStream)) \
    X(cuMemsetD8Async_ptsz, (CUdeviceptr dst, unsigned char v, size_t n, CUstream hStream), (dst, v, n, hStream)) \
    X(cuMemsetD32Async, (CUdeviceptr dst, unsigned int v, size_t n, CUstream hStream), (dst, v, n, hStream)) \
    X(cuMemsetD32Async_ptsz, (CUdeviceptr dst, unsigned int v, size_t n, CUstream hStream), (dst, v, n, hStream)) \
    X(cuCtxSynchronize, (void), ()) \
    X(cuStreamSynchronize, (CUstream hStream), (hStream)) \
    X(cuStreamSynchronize_ptsz, (CUstream hStream), (hStream)) \
    X(cuEventSynchronize, (CUevent hEvent), (hEvent)) \
    X(cuStreamBeginCapture_v2, (CUstream hStream, CUstreamCaptureMode mode), (hStream, mode)) \
    X(cuStreamBeginCapture_v2_ptsz, (CUstream hStream, CUstreamCaptureMode mode), (hStream, mode)) \
    X(cuStreamEndCapture, (CUstream hStream, CUgraph *phGraph), (hStream, phGraph)) \
    X(cuStreamEndCapture_ptsz, (CUstream hStream, CUgraph *phGraph), (hStream, phGraph)) \
    X(cuGraphLaunch, (CUgraphExec hGraphExec, CUstream hStream), (hGraphExec, hStream)) \
    X(cuGraphLaunch_ptsz, (CUgraphExec hGraphExec, CUstream hStream), (hGraphExec, hStream)) \
    X(cuMemGetInfo_v2, (size_t *free, size_t *total), (free, total)) \
    X(cuStreamCreate, (CUstream *phStream, unsigned int Flags), (phStream, Flags)) \
    X(cuStreamCreateWithPriority, (CUstream *phStream, unsigned int flags, int priority), \
      (phStream, flags, priority)) \
    X(cuStreamDestroy_v2, (CUstream hStream), (hStream)) \
    X(cuModuleUnload, (CUmodule hmod), (hmod)) \
    X(cuLibraryUnload, (CUlibrary library), (library)) \
    X(cuIpcGetMemHandle, (CUipcMemHandle *pHandle, CUdeviceptr dptr), (pHandle, dptr)) \
    X(cuMemExportToShareableHandle, (void *shareableHandle, CUmemGenericAllocationHandle handle, \
      CUmemAllocationHandleType handleType, unsigned long long flags), \
      (shareableHandle, handle, handleType, flags)) \
    X(cuMemRetainAllocationHandle, (CUmemGenericAllocationHandle *handle, void *addr), (handle, addr)) \
    X(cuMemGetAddressRange_v2, (CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr), (pbase, psize, dptr)) \
    X(cuPointerGetAttribute, (void *data, CUpointer_attribute attribute, CUdeviceptr ptr), \
      (data, attribute, ptr)) \
    X(cuPointerGetAttributes, (unsigned int numAttributes, CUpointer_attribute *attributes, void **data, \
      CUdeviceptr ptr), (numAttributes, attributes, data, ptr))
/* clang-format on */

/* Driver functions the shim calls without intercepting them (resolved by name too). */
/* clang-format off */
#define SHIM_USES(X) \
    X(cuFuncGetParamInfo, (CUfunction func, size_t paramIndex, size_t *paramOffset, size_t *paramSize), \
      (func, paramIndex, paramOffset, paramSize)) \
    X(cuKernelGetParamInfo, (CUkernel kernel, size_t paramIndex, size_t *paramOffset, size_t *paramSize), \
      (kernel, paramIndex, paramOffset, paramSize)) \
    X(cuFuncGetName, (const char **name, CUfunction hfunc), (name, hfunc)) \
    X(cuKernelGetName, (const char **name, CUkernel hfunc), (name, hfunc)) \
    X(cuEventCreate, (CUevent *phEvent, unsigned int Flags), (phEvent, Flags)) \
    X(cuEventRecord, (CUevent hEvent, CUstream hStream), (hEvent, hStream)) \
    X(cuEventRecord_ptsz, (CUevent hEvent, CUstream hStream), (hEvent, hStream)) \
    X(cuEventQuery, (CUevent hEvent), (hEvent)) \
    X(cuEventElapsedTime_v2, (float *pMilliseconds, CUevent hStart, CUevent hEnd), (pMilliseconds, hStart, hEnd)) \
    X(cuCtxGetDevice, (CUdevice *device), (device)) \
    X(cuCtxGetCurrent, (CUcontext *pctx), (pctx)) \
    X(cuDeviceGetAttribute, (int *pi, CUdevice_attribute attrib, CUdevice dev), (pi, attrib, dev)) \
    X(cuMemGetAllocationGranularity, (size_t *granularity, const CUmemAllocationProp *prop, \
      CUmemAllocationGranularity_flags option), (granularity, prop, option)) \
    X(cuMemAddressReserve, (CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr, \
      unsigned long long flags), (ptr, size, alignment, addr, flags)) \
    X(cuMemAddressFree, (CUdeviceptr ptr, size_t size), (ptr, size)) \
    X(cuMemCreate, (CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop, \
      unsigned long long flags), (handle, size, prop, flags)) \
    X(cuMemRelease, (CUmemGenericAllocationHandle handle), (handle)) \
    X(cuMemSetAccess, (CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count), \
      (ptr, size, desc, count)) \
    X(cuStreamWaitEvent, (CUstream hStream, CUevent hEvent, unsigned int Flags), (hStream, hEvent, Flags))
/* clang-format on */

/* Entry points the residency manager calls (through its driver seam, shim_resid_driver.c).
   Residency starts only when the driver has every one (shim_real_resid_missing): older
   drivers lack the VMM calls. Keep it equal to what the seam wraps
   (tests/shim/test_old_driver.sh compares them). */
/* clang-format off */
#define SHIM_RESID_NEEDS(X) \
    X(cuCtxGetDevice) X(cuCtxSynchronize) X(cuDeviceGetAttribute) X(cuEventCreate) \
    X(cuEventQuery) X(cuEventRecord) X(cuEventSynchronize) X(cuMemAddressFree) \
    X(cuMemAddressReserve) X(cuMemCreate) X(cuMemFreeHost) X(cuMemGetAllocationGranularity) \
    X(cuMemGetInfo_v2) X(cuMemHostAlloc) X(cuMemMap) X(cuMemRelease) X(cuMemSetAccess) \
    X(cuMemUnmap) X(cuMemcpyAsync) X(cuStreamCreate) X(cuStreamSynchronize) X(cuStreamWaitEvent)
/* clang-format on */

enum shim_hook_id {
#define SHIM_HOOK_ENUM(sym, params, args) SHIM_H_##sym,
    SHIM_HOOKS(SHIM_HOOK_ENUM)
#undef SHIM_HOOK_ENUM
        SHIM_HOOK_COUNT
};

#pragma GCC visibility pop

/* The real driver's functions, resolved by shim_real.c only: the hooked ones
   first (in hook id order), then the used ones. */
#define SHIM_HOOK_TYPE(sym, params, args) typedef CUresult(CUDAAPI *shim_fn_##sym) params;
SHIM_HOOKS(SHIM_HOOK_TYPE)
SHIM_USES(SHIM_HOOK_TYPE)
#undef SHIM_HOOK_TYPE

struct shim_real_table {
#define SHIM_HOOK_FIELD(sym, params, args) shim_fn_##sym sym;
    SHIM_HOOKS(SHIM_HOOK_FIELD)
    SHIM_USES(SHIM_HOOK_FIELD)
#undef SHIM_HOOK_FIELD
};

#endif
