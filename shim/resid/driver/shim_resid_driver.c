/* shim_resid_driver.c — the residency manager's seam to the real driver: each entry wraps one
 * shim.real function and answers CUDA_ERROR_NOT_SUPPORTED where the driver lacks it (older
 * drivers have no host-located VMM calls, a minimal driver may lack cuCtxGetDevice), so no
 * residency code ever calls through a NULL pointer. Residency does not even start on such a
 * driver (SHIM_RESID_NEEDS in shim_hooks.h, checked when the driver is resolved). */
#include "shim_resid_driver.h"

/* The latest failed call's entry point and error, and how many failed, on every thread (a
   failure on the mover's thread may be what kept an allocation's room). The name and error are
   for the log: read together without a lock, they may come from two failures at once. */
static _Atomic(const char *) failed_call;
static _Atomic CUresult failed_rc;
static _Atomic uint64_t failed_calls;

static CUresult noted(const char *name, CUresult rc)
{
    if (rc != CUDA_SUCCESS && rc != CUDA_ERROR_NOT_READY) {
        atomic_store_explicit(&failed_call, name, memory_order_relaxed);
        atomic_store_explicit(&failed_rc, rc, memory_order_relaxed);
        atomic_fetch_add_explicit(&failed_calls, 1, memory_order_relaxed);
    }
    return rc;
}

const char *resid_driver_failed_call(CUresult *rc)
{
    *rc = atomic_load_explicit(&failed_rc, memory_order_relaxed);
    return atomic_load_explicit(&failed_call, memory_order_relaxed);
}

uint64_t resid_driver_failures(void)
{
    return atomic_load_explicit(&failed_calls, memory_order_relaxed);
}

/* Calls shim.real.fn with the arguments, or answers NOT_SUPPORTED when it is absent (not a
   failure of the call: the driver lacks it); a failure is noted by the entry point's name. */
#define REAL(fn, ...)                                                                              \
    (shim.real.fn ? noted(#fn, shim.real.fn(__VA_ARGS__)) : CUDA_ERROR_NOT_SUPPORTED)

/* REAL for a call that waits or copies: residency's own work on the host, which a launch's idle
   time measured across it must not be taken for (shim_timing_disturbed: counted as the call
   begins and as it ends, so that a call reaching into a launch gap from either side marks it).
   The allocation path's VMM calls are not counted: they are in every step under libshim. */
#define BUSY_REAL(fn, ...)                                                                         \
    (shim.real.fn ? (shim_timing_disturbed(), ended(noted(#fn, shim.real.fn(__VA_ARGS__))))        \
                  : CUDA_ERROR_NOT_SUPPORTED)

static inline CUresult ended(CUresult rc)
{
    shim_timing_disturbed();
    return rc;
}

static CUresult device(CUdevice *dev)
{
    return REAL(cuCtxGetDevice, dev);
}

static CUresult attribute(int *v, CUdevice_attribute a, CUdevice dev)
{
    return REAL(cuDeviceGetAttribute, v, a, dev);
}

static CUmemAllocationProp device_prop(CUdevice dev)
{
    return (CUmemAllocationProp){.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                 .location = {CU_MEM_LOCATION_TYPE_DEVICE, dev}};
}

static CUresult granularity(size_t *g, CUdevice dev)
{
    CUmemAllocationProp prop = device_prop(dev);
    return REAL(cuMemGetAllocationGranularity, g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
}

static CUresult mem_info(size_t *f, size_t *t)
{
    return REAL(cuMemGetInfo_v2, f, t);
}

static CUresult stream_create(CUstream *s)
{
    return REAL(cuStreamCreate, s, CU_STREAM_NON_BLOCKING);
}

static CUresult reserve(CUdeviceptr *va, size_t size, size_t align)
{
    return REAL(cuMemAddressReserve, va, size, align, 0, 0);
}

static CUresult address_free(CUdeviceptr va, size_t size)
{
    return REAL(cuMemAddressFree, va, size);
}

static CUresult create(CUmemGenericAllocationHandle *h, size_t size, CUdevice dev, bool host,
                       CUmemLocation host_loc)
{
    CUmemAllocationProp prop = device_prop(dev);
    if (host)
        prop.location = host_loc;
    return REAL(cuMemCreate, h, size, &prop, 0);
}

static CUresult release(CUmemGenericAllocationHandle h)
{
    return REAL(cuMemRelease, h);
}

static CUresult map(CUdeviceptr va, size_t size, CUmemGenericAllocationHandle h)
{
    return REAL(cuMemMap, va, size, 0, h, 0);
}

static CUresult unmap(CUdeviceptr va, size_t size)
{
    return REAL(cuMemUnmap, va, size);
}

static CUresult set_access(CUdeviceptr va, size_t size, CUdevice dev)
{
    CUmemAccessDesc d = {{CU_MEM_LOCATION_TYPE_DEVICE, dev}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    return REAL(cuMemSetAccess, va, size, &d, 1);
}

static CUresult copy(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return BUSY_REAL(cuMemcpyAsync, dst, src, n, s);
}

static CUresult event_create(CUevent *e)
{
    return REAL(cuEventCreate, e, CU_EVENT_DISABLE_TIMING);
}
static CUresult record(CUevent e, CUstream s)
{
    return REAL(cuEventRecord, e, s);
}
static CUresult query(CUevent e)
{
    return REAL(cuEventQuery, e);
}
static CUresult event_sync(CUevent e)
{
    return BUSY_REAL(cuEventSynchronize, e);
}
static CUresult wait_event(CUstream s, CUevent e)
{
    return REAL(cuStreamWaitEvent, s, e, 0);
}
static CUresult stream_sync(CUstream s)
{
    return BUSY_REAL(cuStreamSynchronize, s);
}
static CUresult ctx_sync(void)
{
    return BUSY_REAL(cuCtxSynchronize);
}
static CUresult program_sync(void)
{
    shim_timing_disturbed();
    return ended(shim_streams_sync_program()); /* cuStreamSynchronize, else cuCtxSynchronize */
}
static CUresult host_alloc(void **p, size_t n)
{
    return REAL(cuMemHostAlloc, p, n, 0);
}
static CUresult host_free(void *p)
{
    return REAL(cuMemFreeHost, p);
}

static const struct resid_driver real_driver = {
    device,       attribute,    granularity,  mem_info,   stream_create, reserve,
    address_free, create,       release,      map,        unmap,         set_access,
    copy,         event_create, record,       query,      event_sync,    wait_event,
    stream_sync,  ctx_sync,     program_sync, host_alloc, host_free,
};

const struct resid_driver *resid_driver_real(void)
{
    return &real_driver;
}

bool resid_sticky_error(CUresult rc)
{
    /* The CUDA driver API documentation of these codes: "This leaves the process in an
       inconsistent state and any further CUDA work will return the same error. To continue
       using CUDA, the process must be terminated and relaunched." */
    switch (rc) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_DEINITIALIZED:
        return true;
    default:
        return false;
    }
}
