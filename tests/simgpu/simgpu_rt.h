/* simgpu_rt.h — internal interfaces of the simulated CUDA runtime (libcudart.so.13),
 * grouped by defining file.
 *
 * The runtime reaches the driver only as the real libcudart does: dlopen of
 * "libcuda.so.1", dlsym of "cuGetProcAddress_v2", then cuGetProcAddress_v2 for
 * every other entry point by base name. Two tables of driver entry points are
 * resolved: one with the default (legacy default stream) flag and one with
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, used by the _ptsz/_ptds
 * exports. Every API function is a thin export over an internal function that
 * takes the table to use (SIMGPU_RT_LEGACY or SIMGPU_RT_PER_THREAD).
 *
 * Error contract of every internal cudaError_t function here: it returns
 * cudaSuccess or the runtime error of the call, already recorded as the
 * calling thread's last error (simgpu_rt_error_record), unless stated. */
#ifndef SIMGPU_RT_H
#define SIMGPU_RT_H

#include "simgpu.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

/* The driver's simgpu extension, resolved through cuGetProcAddress_v2 too. */
typedef CUfunction (*simgpu_rt_function_of_fn)(simgpu_body body);

/* X(field, base name, PFN type, cudaVersion asked, kind)
   kind: ANY (one function for both tables), STREAM (the per-thread table asks
   for the per-thread default stream variant), OPTIONAL (like ANY, but the
   runtime still loads without it: a real libcuda has no simgpu extension).
   cuCtxSynchronize is asked for at 12000: at 13000 the real driver may return
   cuCtxSynchronize_v2, whose ABI takes a context argument. */
/* clang-format off */
#define SIMGPU_RT_DRIVER(X) \
    X(init, "cuInit", PFN_cuInit_v2000, CUDA_VERSION, ANY) \
    X(driver_get_version, "cuDriverGetVersion", PFN_cuDriverGetVersion_v2020, CUDA_VERSION, ANY) \
    X(device_get, "cuDeviceGet", PFN_cuDeviceGet_v2000, CUDA_VERSION, ANY) \
    X(device_get_count, "cuDeviceGetCount", PFN_cuDeviceGetCount_v2000, CUDA_VERSION, ANY) \
    X(device_get_attribute, "cuDeviceGetAttribute", PFN_cuDeviceGetAttribute_v2000, CUDA_VERSION, ANY) \
    X(primary_ctx_retain, "cuDevicePrimaryCtxRetain", PFN_cuDevicePrimaryCtxRetain_v7000, CUDA_VERSION, ANY) \
    X(ctx_get_current, "cuCtxGetCurrent", PFN_cuCtxGetCurrent_v4000, CUDA_VERSION, ANY) \
    X(ctx_set_current, "cuCtxSetCurrent", PFN_cuCtxSetCurrent_v4000, CUDA_VERSION, ANY) \
    X(ctx_synchronize, "cuCtxSynchronize", PFN_cuCtxSynchronize_v2000, 12000, ANY) \
    X(device_can_access_peer, "cuDeviceCanAccessPeer", PFN_cuDeviceCanAccessPeer_v4000, CUDA_VERSION, ANY) \
    X(ctx_enable_peer_access, "cuCtxEnablePeerAccess", PFN_cuCtxEnablePeerAccess_v4000, CUDA_VERSION, ANY) \
    X(copy_peer, "cuMemcpyPeer", PFN_cuMemcpyPeer_v4000, CUDA_VERSION, ANY) \
    X(copy_peer_async, "cuMemcpyPeerAsync", PFN_cuMemcpyPeerAsync_v4000, CUDA_VERSION, ANY) \
    X(mem_get_info, "cuMemGetInfo", PFN_cuMemGetInfo_v3020, CUDA_VERSION, ANY) \
    X(mem_alloc, "cuMemAlloc", PFN_cuMemAlloc_v3020, CUDA_VERSION, ANY) \
    X(mem_free, "cuMemFree", PFN_cuMemFree_v3020, CUDA_VERSION, ANY) \
    X(mem_alloc_host, "cuMemAllocHost", PFN_cuMemAllocHost_v3020, CUDA_VERSION, ANY) \
    X(mem_host_alloc, "cuMemHostAlloc", PFN_cuMemHostAlloc_v2020, CUDA_VERSION, ANY) \
    X(mem_free_host, "cuMemFreeHost", PFN_cuMemFreeHost_v2000, CUDA_VERSION, ANY) \
    X(mem_alloc_async, "cuMemAllocAsync", PFN_cuMemAllocAsync_v11020, CUDA_VERSION, STREAM) \
    X(mem_free_async, "cuMemFreeAsync", PFN_cuMemFreeAsync_v11020, CUDA_VERSION, STREAM) \
    X(default_mem_pool, "cuDeviceGetDefaultMemPool", PFN_cuDeviceGetDefaultMemPool_v11020, CUDA_VERSION, ANY) \
    X(mem_pool_set_attribute, "cuMemPoolSetAttribute", PFN_cuMemPoolSetAttribute_v11020, CUDA_VERSION, ANY) \
    X(mem_pool_get_attribute, "cuMemPoolGetAttribute", PFN_cuMemPoolGetAttribute_v11020, CUDA_VERSION, ANY) \
    X(copy, "cuMemcpy", PFN_cuMemcpy_v4000, CUDA_VERSION, STREAM) \
    X(copy_async, "cuMemcpyAsync", PFN_cuMemcpyAsync_v4000, CUDA_VERSION, STREAM) \
    X(copy_htod, "cuMemcpyHtoD", PFN_cuMemcpyHtoD_v3020, CUDA_VERSION, STREAM) \
    X(copy_dtoh, "cuMemcpyDtoH", PFN_cuMemcpyDtoH_v3020, CUDA_VERSION, STREAM) \
    X(copy_dtod, "cuMemcpyDtoD", PFN_cuMemcpyDtoD_v3020, CUDA_VERSION, STREAM) \
    X(copy_htod_async, "cuMemcpyHtoDAsync", PFN_cuMemcpyHtoDAsync_v3020, CUDA_VERSION, STREAM) \
    X(copy_dtoh_async, "cuMemcpyDtoHAsync", PFN_cuMemcpyDtoHAsync_v3020, CUDA_VERSION, STREAM) \
    X(copy_dtod_async, "cuMemcpyDtoDAsync", PFN_cuMemcpyDtoDAsync_v3020, CUDA_VERSION, STREAM) \
    X(memset_d8, "cuMemsetD8", PFN_cuMemsetD8_v3020, CUDA_VERSION, STREAM) \
    X(memset_d8_async, "cuMemsetD8Async", PFN_cuMemsetD8Async_v3020, CUDA_VERSION, STREAM) \
    X(stream_create, "cuStreamCreate", PFN_cuStreamCreate_v2000, CUDA_VERSION, ANY) \
    X(stream_destroy, "cuStreamDestroy", PFN_cuStreamDestroy_v4000, CUDA_VERSION, ANY) \
    X(stream_synchronize, "cuStreamSynchronize", PFN_cuStreamSynchronize_v2000, CUDA_VERSION, STREAM) \
    X(stream_query, "cuStreamQuery", PFN_cuStreamQuery_v2000, CUDA_VERSION, STREAM) \
    X(stream_wait_event, "cuStreamWaitEvent", PFN_cuStreamWaitEvent_v3020, CUDA_VERSION, STREAM) \
    X(event_create, "cuEventCreate", PFN_cuEventCreate_v2000, CUDA_VERSION, ANY) \
    X(event_destroy, "cuEventDestroy", PFN_cuEventDestroy_v4000, CUDA_VERSION, ANY) \
    X(event_record, "cuEventRecord", PFN_cuEventRecord_v2000, CUDA_VERSION, STREAM) \
    X(event_query, "cuEventQuery", PFN_cuEventQuery_v2000, CUDA_VERSION, ANY) \
    X(event_synchronize, "cuEventSynchronize", PFN_cuEventSynchronize_v2000, CUDA_VERSION, ANY) \
    X(event_elapsed_time, "cuEventElapsedTime", PFN_cuEventElapsedTime_v12080, CUDA_VERSION, ANY) \
    X(launch_kernel, "cuLaunchKernel", PFN_cuLaunchKernel_v4000, CUDA_VERSION, STREAM) \
    X(stream_begin_capture, "cuStreamBeginCapture", PFN_cuStreamBeginCapture_v10010, CUDA_VERSION, STREAM) \
    X(stream_end_capture, "cuStreamEndCapture", PFN_cuStreamEndCapture_v10000, CUDA_VERSION, STREAM) \
    X(stream_is_capturing, "cuStreamIsCapturing", PFN_cuStreamIsCapturing_v10000, CUDA_VERSION, STREAM) \
    X(graph_instantiate, "cuGraphInstantiate", PFN_cuGraphInstantiateWithFlags_v11040, CUDA_VERSION, ANY) \
    X(graph_launch, "cuGraphLaunch", PFN_cuGraphLaunch_v10000, CUDA_VERSION, STREAM) \
    X(graph_destroy, "cuGraphDestroy", PFN_cuGraphDestroy_v10000, CUDA_VERSION, ANY) \
    X(graph_exec_destroy, "cuGraphExecDestroy", PFN_cuGraphExecDestroy_v10000, CUDA_VERSION, ANY) \
    X(function_of, "simgpu_function_of", simgpu_rt_function_of_fn, CUDA_VERSION, OPTIONAL)
/* clang-format on */

/* The kind column of SIMGPU_RT_DRIVER, as SIMGPU_RT_KIND_##kind. */
enum simgpu_rt_kind { SIMGPU_RT_KIND_ANY, SIMGPU_RT_KIND_STREAM, SIMGPU_RT_KIND_OPTIONAL };

/* One table of driver entry points; every field but OPTIONAL ones is non-NULL once loaded. */
struct simgpu_rt_driver {
#define SIMGPU_RT_FIELD(field, name, type, version, kind) type field;
    SIMGPU_RT_DRIVER(SIMGPU_RT_FIELD)
#undef SIMGPU_RT_FIELD
};

/* Which driver table an API call uses. */
enum simgpu_rt_mode { SIMGPU_RT_LEGACY = 0, SIMGPU_RT_PER_THREAD = 1 };

#define SIMGPU_RT_MAX_DEVICES 16 /* the simulated driver's bound of SIMGPU_DEVICES */

/* The runtime's one global state. Fields written inside a pthread_once
   initialiser are read-only afterwards (pthread_once orders them before every
   reader); sticky is the only field written later, atomically. */
struct simgpu_rt_state {
    pthread_once_t load_once;                 /* guards libcuda .. load_error */
    void *libcuda;                            /* dlopen handle of libcuda.so.1 */
    struct simgpu_rt_driver drv[2];           /* indexed by enum simgpu_rt_mode */
    cudaError_t load_error;                   /* cudaSuccess once driver loaded and cuInit done */
    pthread_mutex_t ctx_lock;                 /* guards primary */
    CUcontext primary[SIMGPU_RT_MAX_DEVICES]; /* retained primary contexts, by ordinal */
    _Atomic int sticky;                       /* first context-corrupting error seen, or 0 */
};

/* Per-thread half of the state: what the real runtime keeps per host thread. */
struct simgpu_rt_thread {
    cudaError_t last_error; /* for cudaGetLastError / cudaPeekAtLastError */
    bool ctx_current;       /* the primary context was made current (or one was) */
    int device;             /* the cudaSetDevice choice (0 until then) */
};

extern struct simgpu_rt_state simgpu_rt;
extern _Thread_local struct simgpu_rt_thread simgpu_rt_thread;

/* simgpu_rt_driver.c */
/* Loads the driver (once per process) and runs cuInit; no context is needed.
   Returns cudaSuccess with *drv set, or the load error (recorded). */
cudaError_t simgpu_rt_driver_load(enum simgpu_rt_mode mode, const struct simgpu_rt_driver **drv);
/* Prepares a call that needs the context: loads the driver, retains the primary
   context of the thread's device (cudaSetDevice's choice, 0 by default) and
   makes it current on this thread unless the thread already has a current
   context; fails with the sticky error once the context is corrupted. Returns
   cudaSuccess with *drv set, or the error (recorded). */
cudaError_t simgpu_rt_driver_enter(enum simgpu_rt_mode mode, const struct simgpu_rt_driver **drv);
/* The primary context of device dev, retained on first use (the driver is loaded).
   Returns cudaSuccess with *ctx set, or the error (recorded). */
cudaError_t simgpu_rt_driver_primary(int dev, CUcontext *ctx);

/* simgpu_rt_error.c */
/* The runtime error for a driver result (the real runtime's mapping). */
cudaError_t simgpu_rt_error_from_cu(CUresult r);
/* Records e as the calling thread's last error unless it is cudaSuccess or
   cudaErrorNotReady, and as the process's sticky error if it corrupts the
   context. Returns e. */
cudaError_t simgpu_rt_error_record(cudaError_t e);
/* simgpu_rt_error_record(simgpu_rt_error_from_cu(r)). */
cudaError_t simgpu_rt_error_cu(CUresult r);
/* The first sticky error recorded in this process, or cudaSuccess. */
cudaError_t simgpu_rt_error_sticky(void);

/* simgpu_rt_memory.c — stream-ordered allocation and free on s, with the table of mode */
cudaError_t simgpu_rt_memory_malloc_async(void **p, size_t size, cudaStream_t s,
                                          enum simgpu_rt_mode mode);
cudaError_t simgpu_rt_memory_free_async(void *p, cudaStream_t s, enum simgpu_rt_mode mode);

/* simgpu_rt_copy.c — copies and memsets (of count bytes to (unsigned char)value); async false
   is the synchronous API, in the order of the mode's default stream, true orders them on s */
cudaError_t simgpu_rt_copy_memcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                                  cudaStream_t s, bool async, enum simgpu_rt_mode mode);
cudaError_t simgpu_rt_copy_memset(void *dst, int value, size_t n, cudaStream_t s, bool async,
                                  enum simgpu_rt_mode mode);

/* simgpu_rt_stream.c */
/* Waits for all work queued on s. */
cudaError_t simgpu_rt_stream_synchronize(cudaStream_t s, enum simgpu_rt_mode mode);
/* Returns cudaErrorNotReady (not recorded) while work is pending. */
cudaError_t simgpu_rt_stream_query(cudaStream_t s, enum simgpu_rt_mode mode);
/* Makes later work on s wait for e's recorded work. */
cudaError_t simgpu_rt_stream_wait_event(cudaStream_t s, cudaEvent_t e, unsigned flags,
                                        enum simgpu_rt_mode mode);
/* Records e at the current end of s. */
cudaError_t simgpu_rt_stream_event_record(cudaEvent_t e, cudaStream_t s, enum simgpu_rt_mode mode);

/* simgpu_rt_launch.c */
/* Launches the kernel registered for the host function func (simgpu_register). */
cudaError_t simgpu_rt_launch_kernel(const void *func, dim3 grid, dim3 block, void **args,
                                    size_t shared, cudaStream_t s, enum simgpu_rt_mode mode);
/* Capture: start capturing s's work into a graph, end it and return the graph, ask whether s
   is capturing (cudaStreamCaptureStatus has the driver's values). */
cudaError_t simgpu_rt_launch_begin_capture(cudaStream_t s, enum cudaStreamCaptureMode cm,
                                           enum simgpu_rt_mode mode);
cudaError_t simgpu_rt_launch_end_capture(cudaStream_t s, cudaGraph_t *g, enum simgpu_rt_mode mode);
cudaError_t simgpu_rt_launch_is_capturing(cudaStream_t s, enum cudaStreamCaptureStatus *st,
                                          enum simgpu_rt_mode mode);
/* Replays an instantiated graph on s. */
cudaError_t simgpu_rt_launch_graph(cudaGraphExec_t e, cudaStream_t s, enum simgpu_rt_mode mode);

/* The stream-ordered API functions, which the runtime exports twice: cudaMemcpy and
 * cudaMemcpy_ptds, cudaLaunchKernel and cudaLaunchKernel_ptsz, ... Both forms run one internal
 * function with the table of their mode (mode in BODY).
 *
 * X(NAME, (PARAMETERS), BODY)
 *   NAME        the legacy name; <cuda_runtime_api.h> maps it to the per-thread one (and gives
 *               that one's prototype) where CUDA_API_PER_THREAD_DEFAULT_STREAM is defined
 *   PARAMETERS  the prototype's parameter list
 *   BODY        the expression both return, in terms of the parameters and mode
 * Expanded twice with SIMGPU_RT_DEFINE: in legacy mode (simgpu_rt_ordered.c) and in per-thread
 * mode (simgpu_rt_ptsz.c). */
/* clang-format off */
#define SIMGPU_RT_ORDERED(X) \
    X(cudaMemcpy, (void *dst, const void *src, size_t count, enum cudaMemcpyKind kind), \
      simgpu_rt_copy_memcpy(dst, src, count, kind, NULL, false, mode)) \
    X(cudaMemcpyAsync, (void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, \
      cudaStream_t stream), simgpu_rt_copy_memcpy(dst, src, count, kind, stream, true, mode)) \
    X(cudaMemset, (void *devPtr, int value, size_t count), \
      simgpu_rt_copy_memset(devPtr, value, count, NULL, false, mode)) \
    X(cudaMemsetAsync, (void *devPtr, int value, size_t count, cudaStream_t stream), \
      simgpu_rt_copy_memset(devPtr, value, count, stream, true, mode)) \
    X(cudaMallocAsync, (void **devPtr, size_t size, cudaStream_t hStream), \
      simgpu_rt_memory_malloc_async(devPtr, size, hStream, mode)) \
    X(cudaFreeAsync, (void *devPtr, cudaStream_t hStream), \
      simgpu_rt_memory_free_async(devPtr, hStream, mode)) \
    X(cudaStreamSynchronize, (cudaStream_t stream), simgpu_rt_stream_synchronize(stream, mode)) \
    X(cudaStreamQuery, (cudaStream_t stream), simgpu_rt_stream_query(stream, mode)) \
    X(cudaStreamWaitEvent, (cudaStream_t stream, cudaEvent_t event, unsigned int flags), \
      simgpu_rt_stream_wait_event(stream, event, flags, mode)) \
    X(cudaEventRecord, (cudaEvent_t event, cudaStream_t stream), \
      simgpu_rt_stream_event_record(event, stream, mode)) \
    X(cudaLaunchKernel, (const void *func, dim3 gridDim, dim3 blockDim, void **args, \
      size_t sharedMem, cudaStream_t stream), \
      simgpu_rt_launch_kernel(func, gridDim, blockDim, args, sharedMem, stream, mode)) \
    X(cudaStreamBeginCapture, (cudaStream_t stream, enum cudaStreamCaptureMode cm), \
      simgpu_rt_launch_begin_capture(stream, cm, mode)) \
    X(cudaStreamEndCapture, (cudaStream_t stream, cudaGraph_t *pGraph), \
      simgpu_rt_launch_end_capture(stream, pGraph, mode)) \
    X(cudaStreamIsCapturing, (cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus), \
      simgpu_rt_launch_is_capturing(stream, pCaptureStatus, mode)) \
    X(cudaGraphLaunch, (cudaGraphExec_t graphExec, cudaStream_t stream), \
      simgpu_rt_launch_graph(graphExec, stream, mode))
/* clang-format on */

/* One definition of a SIMGPU_RT_ORDERED row, for the table of mode_value. */
#define SIMGPU_RT_DEFINE(mode_value, name, params, body)                                           \
    cudaError_t name params                                                                        \
    {                                                                                              \
        const enum simgpu_rt_mode mode = mode_value;                                               \
        return body;                                                                               \
    }

/* Declares d, the driver's table of mode as get (simgpu_rt_driver_load or _enter) gives it,
   and returns get's error (recorded) from the function when that fails. */
#define SIMGPU_RT_TABLE(get, mode, d)                                                              \
    const struct simgpu_rt_driver *d;                                                              \
    do {                                                                                           \
        cudaError_t table_e_ = get(mode, &d);                                                      \
        if (table_e_ != cudaSuccess)                                                               \
            return table_e_;                                                                       \
    } while (0)

/* Loads the driver for a call that needs no context (simgpu_rt_driver_load, the legacy table):
   declares d, the table, and returns the error (recorded) from the function when that fails. */
#define SIMGPU_RT_LOAD(d) SIMGPU_RT_TABLE(simgpu_rt_driver_load, SIMGPU_RT_LEGACY, d)

/* Prepares an API call with the table of mode (simgpu_rt_driver_enter): declares d, the table,
   and returns the error (recorded) from the function using it when that fails. */
#define SIMGPU_RT_ENTER(mode, d) SIMGPU_RT_TABLE(simgpu_rt_driver_enter, mode, d)

/* Defines runtime function name (params) that passes its call to the driver unchanged: call, a
   member of the legacy table with its arguments, and its result as a runtime error. */
#define SIMGPU_RT_FORWARD(name, params, call)                                                      \
    cudaError_t name params                                                                        \
    {                                                                                              \
        SIMGPU_RT_ENTER(SIMGPU_RT_LEGACY, d);                                                      \
        return simgpu_rt_error_cu(d->call);                                                        \
    }

#endif
