/* simgpu_rt_driver.c — how the simulated runtime reaches the driver: dlopen, cuGetProcAddress_v2,
 * the primary context of each device, and the runtime's global state. */
#include "simgpu_rt.h"

#include <dlfcn.h>
#include <stddef.h>

struct simgpu_rt_state simgpu_rt = {
    .load_once = PTHREAD_ONCE_INIT,
    .ctx_lock = PTHREAD_MUTEX_INITIALIZER,
    .load_error = cudaErrorInitializationError,
};

_Thread_local struct simgpu_rt_thread simgpu_rt_thread;

/* One cuGetProcAddress_v2 lookup; NULL when the driver does not have it. */
static void *resolve(PFN_cuGetProcAddress_v12000 gpa, const char *name, int version,
                     cuuint64_t flags)
{
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    void *pfn = NULL;

    if (gpa(name, &pfn, version, flags, &status) != CUDA_SUCCESS ||
        status != CU_GET_PROC_ADDRESS_SUCCESS)
        return NULL;
    return pfn;
}

/* Fills both tables; returns false if a required entry point is missing. */
static bool resolve_all(PFN_cuGetProcAddress_v12000 gpa)
{
    struct simgpu_rt_driver *legacy = &simgpu_rt.drv[SIMGPU_RT_LEGACY];
    struct simgpu_rt_driver *per_thread = &simgpu_rt.drv[SIMGPU_RT_PER_THREAD];
    bool ok = true;

#define SIMGPU_RT_RESOLVE(field, name, type, version, kind)                                        \
    legacy->field = (type)resolve(gpa, name, version, CU_GET_PROC_ADDRESS_DEFAULT);                \
    per_thread->field = legacy->field;                                                             \
    if (SIMGPU_RT_KIND_##kind == SIMGPU_RT_KIND_STREAM)                                            \
        per_thread->field =                                                                        \
            (type)resolve(gpa, name, version, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);      \
    if (SIMGPU_RT_KIND_##kind != SIMGPU_RT_KIND_OPTIONAL &&                                        \
        (!legacy->field || !per_thread->field))                                                    \
        ok = false;
    SIMGPU_RT_DRIVER(SIMGPU_RT_RESOLVE)
#undef SIMGPU_RT_RESOLVE
    return ok;
}

/* pthread_once body: the real runtime's driver discovery, then cuInit(0). */
static void load_driver(void)
{
    PFN_cuGetProcAddress_v12000 gpa;

    simgpu_rt.libcuda = dlopen("libcuda.so.1", RTLD_NOW);
    if (!simgpu_rt.libcuda) {
        simgpu_rt.load_error = cudaErrorInsufficientDriver;
        return;
    }
    gpa = (PFN_cuGetProcAddress_v12000)dlsym(simgpu_rt.libcuda, "cuGetProcAddress_v2");
    if (!gpa || !resolve_all(gpa)) {
        simgpu_rt.load_error = cudaErrorInsufficientDriver;
        return;
    }
    simgpu_rt.load_error = simgpu_rt_error_from_cu(simgpu_rt.drv[0].init(0));
}

/* Retains the device's primary context on first use, as the real runtime does on
   the first call that needs a context on that device. */
cudaError_t simgpu_rt_driver_primary(int dev, CUcontext *ctx)
{
    const struct simgpu_rt_driver *d = &simgpu_rt.drv[SIMGPU_RT_LEGACY];
    CUdevice device;
    CUresult r = CUDA_SUCCESS;

    if (dev < 0 || dev >= SIMGPU_RT_MAX_DEVICES)
        return simgpu_rt_error_record(cudaErrorInvalidDevice);
    pthread_mutex_lock(&simgpu_rt.ctx_lock);
    if (!simgpu_rt.primary[dev]) {
        r = d->device_get(&device, dev);
        if (r == CUDA_SUCCESS)
            r = d->primary_ctx_retain(&simgpu_rt.primary[dev], device);
    }
    *ctx = simgpu_rt.primary[dev];
    pthread_mutex_unlock(&simgpu_rt.ctx_lock);
    return simgpu_rt_error_cu(r);
}

cudaError_t simgpu_rt_driver_load(enum simgpu_rt_mode mode, const struct simgpu_rt_driver **drv)
{
    pthread_once(&simgpu_rt.load_once, load_driver);
    *drv = &simgpu_rt.drv[mode];
    return simgpu_rt_error_record(simgpu_rt.load_error);
}

/* Makes the thread device's primary context current unless the thread already
   has one (a context the program made current through the driver API is
   respected). */
static cudaError_t bind_thread(const struct simgpu_rt_driver *d)
{
    CUcontext cur = NULL, primary = NULL;
    CUresult r;
    cudaError_t e;

    if (simgpu_rt_thread.ctx_current)
        return cudaSuccess;
    r = d->ctx_get_current(&cur);
    if (r == CUDA_SUCCESS && !cur) {
        e = simgpu_rt_driver_primary(simgpu_rt_thread.device, &primary);
        if (e != cudaSuccess)
            return e;
        r = d->ctx_set_current(primary);
    }
    if (r != CUDA_SUCCESS)
        return simgpu_rt_error_from_cu(r);
    simgpu_rt_thread.ctx_current = true;
    return cudaSuccess;
}

cudaError_t simgpu_rt_driver_enter(enum simgpu_rt_mode mode, const struct simgpu_rt_driver **drv)
{
    cudaError_t e = simgpu_rt_driver_load(mode, drv);

    if (e != cudaSuccess)
        return e;
    e = simgpu_rt_error_sticky();
    if (e == cudaSuccess)
        e = bind_thread(*drv);
    return simgpu_rt_error_record(e);
}
