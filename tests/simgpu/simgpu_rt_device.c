/* simgpu_rt_device.c — device management and version queries of the simulated runtime.
 * The current device is per host thread and selects the primary context the thread uses. */
#include "simgpu_rt.h"

/* Number of devices the driver reports; 0 and the error when there is none. */
cudaError_t cudaGetDeviceCount(int *count)
{
    cudaError_t e;

    if (!count)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    *count = 0;
    SIMGPU_RT_LOAD(d);
    e = simgpu_rt_error_cu(d->device_get_count(count));
    if (e == cudaSuccess && *count == 0)
        e = simgpu_rt_error_record(cudaErrorNoDevice);
    return e;
}

/* Selects the calling thread's device. cudaSetDevice (cuda_runtime_api.h): "Sets device
   as the current device for the calling host thread. Valid device id's are 0 to
   (cudaGetDeviceCount() - 1)"; "This call will bind the primary context of the specified
   device to the calling thread ... the context will be current on device immediately";
   "This function will do no synchronization with the previous or new device". */
cudaError_t cudaSetDevice(int device)
{
    const struct simgpu_rt_driver *d;
    CUcontext primary = NULL;
    cudaError_t e;
    int n = 0;

    e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess)
        return e;
    if (device < 0 || device >= n)
        return simgpu_rt_error_record(cudaErrorInvalidDevice);
    e = simgpu_rt_driver_load(SIMGPU_RT_LEGACY, &d);
    if (e == cudaSuccess)
        e = simgpu_rt_driver_primary(device, &primary);
    if (e == cudaSuccess)
        e = simgpu_rt_error_cu(d->ctx_set_current(primary));
    if (e == cudaSuccess) {
        simgpu_rt_thread.device = device;
        simgpu_rt_thread.ctx_current = true;
    }
    return e;
}

/* The calling thread's device (0 unless cudaSetDevice said otherwise). */
cudaError_t cudaGetDevice(int *device)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e;

    if (!device)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    e = simgpu_rt_driver_load(SIMGPU_RT_LEGACY, &d);
    if (e == cudaSuccess)
        *device = simgpu_rt_thread.device;
    return e;
}

/* Waits for all work of the thread's current device on every stream ("Blocks until the
   device has completed all preceding requested tasks", cuda_runtime_api.h); other devices
   run on. */
cudaError_t cudaDeviceSynchronize(void)
{
    SIMGPU_RT_ENTER(SIMGPU_RT_LEGACY, d);
    return simgpu_rt_error_cu(d->ctx_synchronize());
}

/* A device attribute; cudaDeviceAttr values equal CUdevice_attribute values. */
cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    CUdevice dev;

    if (!value)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    SIMGPU_RT_LOAD(d);
    if (d->device_get(&dev, device) != CUDA_SUCCESS)
        return simgpu_rt_error_record(cudaErrorInvalidDevice);
    return simgpu_rt_error_cu(d->device_get_attribute(value, (CUdevice_attribute)attr, dev));
}

/* The driver's CUDA version; 0 with success when no driver can be loaded. */
cudaError_t cudaDriverGetVersion(int *driverVersion)
{
    const struct simgpu_rt_driver *d;
    cudaError_t saved = simgpu_rt_thread.last_error;

    if (!driverVersion)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    *driverVersion = 0;
    if (simgpu_rt_driver_load(SIMGPU_RT_LEGACY, &d) != cudaSuccess) {
        simgpu_rt_thread.last_error = saved; /* no driver is not an error here */
        return cudaSuccess;
    }
    return simgpu_rt_error_cu(d->driver_get_version(driverVersion));
}

/* This runtime's version, CUDART_VERSION of the headers it was built with. */
cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
    if (!runtimeVersion)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    *runtimeVersion = CUDART_VERSION;
    return cudaSuccess;
}
