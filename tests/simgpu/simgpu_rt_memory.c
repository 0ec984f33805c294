/* simgpu_rt_memory.c — device, stream-ordered and pinned host allocation of the simulated
 * runtime, and cudaMemGetInfo. */
#include "simgpu_rt.h"

#include <stdint.h>

/* Device memory. size 0 succeeds with *devPtr NULL, as the real runtime. */
cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    CUdeviceptr p = 0;
    cudaError_t e;

    if (!devPtr)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    *devPtr = NULL;
    SIMGPU_RT_ENTER(SIMGPU_RT_LEGACY, d);
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
    SIMGPU_RT_ENTER(SIMGPU_RT_LEGACY, d);
    if (!devPtr)
        return cudaSuccess;
    return simgpu_rt_error_cu(d->mem_free((CUdeviceptr)(uintptr_t)devPtr));
}

cudaError_t simgpu_rt_memory_malloc_async(void **p, size_t size, cudaStream_t s,
                                          enum simgpu_rt_mode mode)
{
    CUdeviceptr dp = 0;
    cudaError_t e;

    if (!p)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    *p = NULL;
    SIMGPU_RT_ENTER(mode, d);
    e = simgpu_rt_error_cu(d->mem_alloc_async(&dp, size, s));
    if (e == cudaSuccess)
        *p = (void *)(uintptr_t)dp;
    return e;
}

cudaError_t simgpu_rt_memory_free_async(void *p, cudaStream_t s, enum simgpu_rt_mode mode)
{
    SIMGPU_RT_ENTER(mode, d);
    return simgpu_rt_error_cu(d->mem_free_async((CUdeviceptr)(uintptr_t)p, s));
}

/* The device's default memory pool (cuDeviceGetDefaultMemPool). */
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{
    CUdevice dev;

    if (!memPool)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    SIMGPU_RT_ENTER(SIMGPU_RT_LEGACY, d);
    if (d->device_get(&dev, device) != CUDA_SUCCESS)
        return simgpu_rt_error_record(cudaErrorInvalidDevice);
    return simgpu_rt_error_cu(d->default_mem_pool((CUmemoryPool *)memPool, dev));
}

/* A pool attribute; cudaMemPoolAttr and CUmemPool_attribute share their values. */
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
    SIMGPU_RT_ENTER(SIMGPU_RT_LEGACY, d);
    return simgpu_rt_error_cu(
        d->mem_pool_set_attribute((CUmemoryPool)memPool, (CUmemPool_attribute)attr, value));
}

/* Reads a pool attribute (see cudaMemPoolSetAttribute). */
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
    SIMGPU_RT_ENTER(SIMGPU_RT_LEGACY, d);
    return simgpu_rt_error_cu(
        d->mem_pool_get_attribute((CUmemoryPool)memPool, (CUmemPool_attribute)attr, value));
}

/* Pinned host memory (cuMemAllocHost). */
cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    if (!ptr)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    *ptr = NULL;
    SIMGPU_RT_ENTER(SIMGPU_RT_LEGACY, d);
    if (size == 0)
        return cudaSuccess;
    return simgpu_rt_error_cu(d->mem_alloc_host(ptr, size));
}

/* Pinned host memory with cudaHostAlloc* flags (the same bits as CU_MEMHOSTALLOC_*). */
cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    if (!pHost)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    *pHost = NULL;
    SIMGPU_RT_ENTER(SIMGPU_RT_LEGACY, d);
    if (size == 0)
        return cudaSuccess;
    return simgpu_rt_error_cu(d->mem_host_alloc(pHost, size, flags));
}

/* Frees pinned host memory; NULL is a no-op. */
cudaError_t cudaFreeHost(void *ptr)
{
    SIMGPU_RT_ENTER(SIMGPU_RT_LEGACY, d);
    if (!ptr)
        return cudaSuccess;
    return simgpu_rt_error_cu(d->mem_free_host(ptr));
}

/* Free and total device memory, as cuMemGetInfo reports them. */
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    if (!free_bytes || !total_bytes)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    SIMGPU_RT_ENTER(SIMGPU_RT_LEGACY, d);
    return simgpu_rt_error_cu(d->mem_get_info(free_bytes, total_bytes));
}
