/* simgpu_rt_memory.c — device, stream-ordered and pinned host allocation of the simulated
 * runtime, and cudaMemGetInfo. */
#include "simgpu_rt.h"

#include <stdint.h>

/* Device memory. size 0 succeeds with *devPtr NULL, as the real runtime. */
cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    const struct simgpu_rt_driver *d;
    CUdeviceptr p = 0;
    cudaError_t e;

    if (!devPtr)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    *devPtr = NULL;
    e = simgpu_rt_driver_enter(SIMGPU_RT_LEGACY, &d);
    if (e != cudaSuccess)
        return e;
    if (size == 0)
        return cudaSuccess;
    e = simgpu_rt_error_cu(d->mem_alloc(&p, size));
    if (e == cudaSuccess)
        *devPtr = (void *)(uintptr_t)p;
    return e;
}

/* Frees cudaMalloc memory; NULL only initialises the context. */
cudaError_t cudaFree(void *devPtr)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e = simgpu_rt_driver_enter(SIMGPU_RT_LEGACY, &d);

    if (e != cudaSuccess)
        return e;
    if (!devPtr)
        return cudaSuccess;
    return simgpu_rt_error_cu(d->mem_free((CUdeviceptr)(uintptr_t)devPtr));
}

cudaError_t simgpu_rt_memory_malloc_async(void **p, size_t size, cudaStream_t s,
                                          enum simgpu_rt_mode mode)
{
    const struct simgpu_rt_driver *d;
    CUdeviceptr dp = 0;
    cudaError_t e;

    if (!p)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    *p = NULL;
    e = simgpu_rt_driver_enter(mode, &d);
    if (e != cudaSuccess)
        return e;
    e = simgpu_rt_error_cu(d->mem_alloc_async(&dp, size, s));
    if (e == cudaSuccess)
        *p = (void *)(uintptr_t)dp;
    return e;
}

cudaError_t simgpu_rt_memory_free_async(void *p, cudaStream_t s, enum simgpu_rt_mode mode)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e = simgpu_rt_driver_enter(mode, &d);

    if (e != cudaSuccess)
        return e;
    return simgpu_rt_error_cu(d->mem_free_async((CUdeviceptr)(uintptr_t)p, s));
}

/* Stream-ordered allocation on the legacy default stream semantics. */
cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
    return simgpu_rt_memory_malloc_async(devPtr, size, hStream, SIMGPU_RT_LEGACY);
}

/* Stream-ordered free on the legacy default stream semantics. */
cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
    return simgpu_rt_memory_free_async(devPtr, hStream, SIMGPU_RT_LEGACY);
}

/* The device's default memory pool (cuDeviceGetDefaultMemPool). */
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{
    const struct simgpu_rt_driver *d;
    CUdevice dev;
    cudaError_t e;

    if (!memPool)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    e = simgpu_rt_driver_enter(SIMGPU_RT_LEGACY, &d);
    if (e != cudaSuccess)
        return e;
    if (d->device_get(&dev, device) != CUDA_SUCCESS)
        return simgpu_rt_error_record(cudaErrorInvalidDevice);
    return simgpu_rt_error_cu(d->default_mem_pool((CUmemoryPool *)memPool, dev));
}

/* A pool attribute; cudaMemPoolAttr and CUmemPool_attribute share their values. */
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e = simgpu_rt_driver_enter(SIMGPU_RT_LEGACY, &d);

    if (e != cudaSuccess)
        return e;
    return simgpu_rt_error_cu(
        d->mem_pool_set_attribute((CUmemoryPool)memPool, (CUmemPool_attribute)attr, value));
}

/* Reads a pool attribute (see cudaMemPoolSetAttribute). */
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e = simgpu_rt_driver_enter(SIMGPU_RT_LEGACY, &d);

    if (e != cudaSuccess)
        return e;
    return simgpu_rt_error_cu(
        d->mem_pool_get_attribute((CUmemoryPool)memPool, (CUmemPool_attribute)attr, value));
}

/* Pinned host memory (cuMemAllocHost). */
cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e;

    if (!ptr)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    *ptr = NULL;
    e = simgpu_rt_driver_enter(SIMGPU_RT_LEGACY, &d);
    if (e != cudaSuccess)
        return e;
    if (size == 0)
        return cudaSuccess;
    return simgpu_rt_error_cu(d->mem_alloc_host(ptr, size));
}

/* Pinned host memory with cudaHostAlloc* flags (the same bits as CU_MEMHOSTALLOC_*). */
cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e;

    if (!pHost)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    *pHost = NULL;
    e = simgpu_rt_driver_enter(SIMGPU_RT_LEGACY, &d);
    if (e != cudaSuccess)
        return e;
    if (size == 0)
        return cudaSuccess;
    return simgpu_rt_error_cu(d->mem_host_alloc(pHost, size, flags));
}

/* Frees pinned host memory; NULL is a no-op. */
cudaError_t cudaFreeHost(void *ptr)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e = simgpu_rt_driver_enter(SIMGPU_RT_LEGACY, &d);

    if (e != cudaSuccess)
        return e;
    if (!ptr)
        return cudaSuccess;
    return simgpu_rt_error_cu(d->mem_free_host(ptr));
}

/* Free and total device memory, as cuMemGetInfo reports them. */
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    const struct simgpu_rt_driver *d;
    cudaError_t e;

    if (!free_bytes || !total_bytes)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    e = simgpu_rt_driver_enter(SIMGPU_RT_LEGACY, &d);
    if (e != cudaSuccess)
        return e;
    return simgpu_rt_error_cu(d->mem_get_info(free_bytes, total_bytes));
}
