/* simgpu_rt_copy.c — cudaMemcpy / cudaMemset and their async forms, each mapped onto the
 * driver copy of its direction. */
#include "simgpu_rt.h"

#include <stdint.h>

static CUdeviceptr dptr(const void *p)
{
    return (CUdeviceptr)(uintptr_t)p;
}

/* The driver copy for kind. Host-to-host and cudaMemcpyDefault use the
   unified-addressing cuMemcpy / cuMemcpyAsync, which infer the direction from
   the pointers, as the real runtime does on a UVA system. */
static CUresult copy_sync(const struct simgpu_rt_driver *d, void *dst, const void *src, size_t n,
                          enum cudaMemcpyKind kind)
{
    switch (kind) {
    case cudaMemcpyHostToDevice:
        return d->copy_htod(dptr(dst), src, n);
    case cudaMemcpyDeviceToHost:
        return d->copy_dtoh(dst, dptr(src), n);
    case cudaMemcpyDeviceToDevice:
        return d->copy_dtod(dptr(dst), dptr(src), n);
    default:
        return d->copy(dptr(dst), dptr(src), n);
    }
}

static CUresult copy_async(const struct simgpu_rt_driver *d, void *dst, const void *src, size_t n,
                           enum cudaMemcpyKind kind, cudaStream_t s)
{
    switch (kind) {
    case cudaMemcpyHostToDevice:
        return d->copy_htod_async(dptr(dst), src, n, s);
    case cudaMemcpyDeviceToHost:
        return d->copy_dtoh_async(dst, dptr(src), n, s);
    case cudaMemcpyDeviceToDevice:
        return d->copy_dtod_async(dptr(dst), dptr(src), n, s);
    default:
        return d->copy_async(dptr(dst), dptr(src), n, s);
    }
}

cudaError_t simgpu_rt_copy_memcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                                  cudaStream_t s, bool async, enum simgpu_rt_mode mode)
{
    if ((unsigned)kind > (unsigned)cudaMemcpyDefault)
        return simgpu_rt_error_record(cudaErrorInvalidMemcpyDirection);
    SIMGPU_RT_ENTER(mode, d);
    if (n == 0)
        return cudaSuccess;
    if (!dst || !src)
        return simgpu_rt_error_record(cudaErrorInvalidValue);
    if (async)
        return simgpu_rt_error_cu(copy_async(d, dst, src, n, kind, s));
    return simgpu_rt_error_cu(copy_sync(d, dst, src, n, kind));
}

cudaError_t simgpu_rt_copy_memset(void *dst, int value, size_t n, cudaStream_t s, bool async,
                                  enum simgpu_rt_mode mode)
{
    SIMGPU_RT_ENTER(mode, d);
    if (n == 0)
        return cudaSuccess;
    if (async)
        return simgpu_rt_error_cu(d->memset_d8_async(dptr(dst), (unsigned char)value, n, s));
    return simgpu_rt_error_cu(d->memset_d8(dptr(dst), (unsigned char)value, n));
}
