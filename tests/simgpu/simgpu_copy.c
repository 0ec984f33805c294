/* simgpu_copy.c — copies and memsets: classification, host-memory semantics, submission.
 *
 * Engines: host-to-device and device-to-host copies use their own copy engine
 * (bytes over SIMGPU_H2D_GBPS / SIMGPU_D2H_GBPS); device-to-device copies and
 * memsets run on the compute engine at SIMGPU_DEVICE_GBPS (a copy reads and
 * writes, so it counts twice). Host memory semantics follow the real driver:
 * an asynchronous copy from pageable memory snapshots the source before it
 * returns, an asynchronous copy into pageable memory is synchronous, pinned
 * memory is read and written when the copy runs. */
#include "simgpu_internal.h"

#include <stdlib.h>
#include <string.h>

struct sim_ptr sim_ptr_of(uint64_t addr)
{
    return (struct sim_ptr){sim_is_device_addr(addr), addr};
}

CUresult sim_sticky(void)
{
    return sim.sticky;
}

/* Whether [addr, addr+n) is mapped with the access; lock held. */
static bool mapped(uint64_t addr, size_t n, bool write)
{
    size_t done = 0;
    while (done < n) {
        uint64_t len = n - done;
        if (!sim_translate(addr + done, &len, write))
            return false;
        done += len;
    }
    return true;
}

static int engine_of(struct sim_ptr dst, struct sim_ptr src)
{
    if (dst.dev && !src.dev)
        return ENG_H2D;
    if (src.dev && !dst.dev)
        return ENG_D2H;
    return dst.dev ? ENG_COMPUTE : ENG_NONE;
}

CUresult sim_copy(struct sim_stream *s, struct sim_ptr dst, struct sim_ptr src, size_t n,
                  bool async)
{
    if ((dst.dev && !mapped(dst.addr, n, true)) || (src.dev && !mapped(src.addr, n, false)) ||
        (!dst.dev && !dst.addr) || (!src.dev && !src.addr))
        return CUDA_ERROR_INVALID_VALUE;
    if (n == 0)
        return CUDA_SUCCESS;
    struct sim_cmd *c = sim_cmd_new(CMD_COPY, engine_of(dst, src));
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    c->u.c.dst = dst;
    c->u.c.src = src;
    c->u.c.bytes = n;
    bool pageable_src = !src.dev && !sim_pinned_find((uintptr_t)src.addr);
    bool pageable_dst = !dst.dev && !sim_pinned_find((uintptr_t)dst.addr);
    if (async && pageable_src && !s->capture) {
        c->u.c.staging = malloc(n);
        if (!c->u.c.staging) {
            sim_cmd_unref(c);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        memcpy(c->u.c.staging, (const void *)(uintptr_t)src.addr, n);
    }
    bool wait = (!async || pageable_dst) && !s->capture;
    if (wait)
        sim_cmd_ref(c);
    CUresult rc = sim_submit(s, c);
    if (wait) {
        if (rc == CUDA_SUCCESS)
            sim_host_wait(c);
        sim_cmd_unref(c);
    }
    return rc == CUDA_SUCCESS ? sim_sticky() : rc;
}

CUresult sim_memset(struct sim_stream *s, uint64_t dst, uint32_t value, int elem, size_t count,
                    bool async)
{
    if (!sim_is_device_addr(dst) || !mapped(dst, count * (size_t)elem, true) ||
        (elem == 4 && dst % 4))
        return CUDA_ERROR_INVALID_VALUE;
    if (count == 0)
        return CUDA_SUCCESS;
    struct sim_cmd *c = sim_cmd_new(CMD_MEMSET, ENG_COMPUTE);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    c->u.m.dst = dst;
    c->u.m.value = elem == 1 ? (value & 0xff) * 0x01010101u : value;
    c->u.m.elem = elem;
    c->u.m.count = count;
    (void)async; /* memsets are asynchronous to the host either way, as documented */
    return sim_submit(s, c);
}

CUresult sim_api_copy(uint64_t dst, uint64_t src, size_t n, CUstream h, bool per_thread, bool async)
{
    CUresult rc = sim_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&sim.lock);
    struct sim_stream *s = sim_stream_get(h, per_thread, &rc);
    if (rc == CUDA_SUCCESS)
        rc = sim_sticky();
    if (rc == CUDA_SUCCESS)
        rc = sim_copy(s, sim_ptr_of(dst), sim_ptr_of(src), n, async);
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

CUresult sim_api_memset(uint64_t dst, uint32_t value, int elem, size_t count, CUstream h,
                        bool per_thread, bool async)
{
    CUresult rc = sim_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&sim.lock);
    struct sim_stream *s = sim_stream_get(h, per_thread, &rc);
    if (rc == CUDA_SUCCESS)
        rc = sim_sticky();
    if (rc == CUDA_SUCCESS)
        rc = sim_memset(s, dst, value, elem, count, async);
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

/* ---- legacy-stream entry points (per-thread ones are in simgpu_ptds.c) ---- */

CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    SIM_ENTER(cuMemcpy);
    return sim_api_copy(dst, src, n, NULL, false, false);
}

CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
    SIM_ENTER(cuMemcpyAsync);
    return sim_api_copy(dst, src, n, h, false, true);
}

CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    SIM_ENTER(cuMemcpyHtoD_v2);
    return sim_api_copy(dst, (uintptr_t)src, n, NULL, false, false);
}

CUresult CUDAAPI cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    SIM_ENTER(cuMemcpyDtoH_v2);
    return sim_api_copy((uintptr_t)dst, src, n, NULL, false, false);
}

CUresult CUDAAPI cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    SIM_ENTER(cuMemcpyDtoD_v2);
    return sim_api_copy(dst, src, n, NULL, false, false);
}

CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream h)
{
    SIM_ENTER(cuMemcpyHtoDAsync_v2);
    return sim_api_copy(dst, (uintptr_t)src, n, h, false, true);
}

CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream h)
{
    SIM_ENTER(cuMemcpyDtoHAsync_v2);
    return sim_api_copy((uintptr_t)dst, src, n, h, false, true);
}

CUresult CUDAAPI cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h)
{
    SIM_ENTER(cuMemcpyDtoDAsync_v2);
    return sim_api_copy(dst, src, n, h, false, true);
}

CUresult CUDAAPI cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n)
{
    SIM_ENTER(cuMemsetD8_v2);
    return sim_api_memset(dst, v, 1, n, NULL, false, false);
}

CUresult CUDAAPI cuMemsetD32_v2(CUdeviceptr dst, unsigned int v, size_t n)
{
    SIM_ENTER(cuMemsetD32_v2);
    return sim_api_memset(dst, v, 4, n, NULL, false, false);
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream h)
{
    SIM_ENTER(cuMemsetD8Async);
    return sim_api_memset(dst, v, 1, n, h, false, true);
}

CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, CUstream h)
{
    SIM_ENTER(cuMemsetD32Async);
    return sim_api_memset(dst, v, 4, n, h, false, true);
}
