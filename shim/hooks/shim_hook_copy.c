/* shim_hook_copy.c — copies and memsets: recorded as accesses; synchronous ones are host
 * synchronisations.
 *
 * The direction comes from the entry point; for cuMemcpy / cuMemcpyAsync
 * (unified addressing) it is read from which ends are known device
 * allocations. A synchronous copy blocks the host like a stream
 * synchronisation, which the step detector needs (loss.item()). */
#include "shim_hooks.h"

/* Whether a copy entry point is a per-thread-stream variant (folds to a constant). */
#define PER_THREAD(sym)                                                                            \
    (sizeof(#sym) > 6 && #sym[sizeof(#sym) - 6] == '_' && #sym[sizeof(#sym) - 5] == 'p' &&         \
     #sym[sizeof(#sym) - 4] == 't')

/* Managed ends of a copy are made resident and pinned before it is submitted. */
static bool copy_enter(uint64_t *ids, uint32_t *n, uint64_t dst, uint64_t src, CUstream stream,
                       bool per_thread, CUresult *refuse)
{
    *n = 0;
    if (!shim_active())
        return false;
    uint64_t d = dst ? shim_registry_find(dst) : 0, s = src ? shim_registry_find(src) : 0;
    if (d)
        ids[(*n)++] = d;
    if (s && s != d)
        ids[(*n)++] = s;
    return shim_resid_enter(ids, *n, stream, per_thread, false, refuse);
}

/* One copy hook: residency, real call, then the record (and a host sync when synchronous). */
#define COPY_HOOK(sym, params, call, dir, dst, src, n, stream, sync)                               \
    CUresult CUDAAPI sym params                                                                    \
    {                                                                                              \
        SHIM_NEED_REAL(sym);                                                                       \
        uint64_t ids_[2];                                                                          \
        uint32_t nids_;                                                                            \
        CUresult refuse_ = CUDA_SUCCESS;                                                           \
        bool pinned_ = copy_enter(ids_, &nids_, (uint64_t)(uintptr_t)(dst),                        \
                                  (uint64_t)(uintptr_t)(src), stream, PER_THREAD(sym), &refuse_);  \
        CUresult rc = refuse_ != CUDA_SUCCESS ? refuse_ : shim.real.sym call;                      \
        if (pinned_)                                                                               \
            shim_resid_leave(ids_, nids_);                                                         \
        if (rc == CUDA_SUCCESS && shim_active()) {                                                 \
            shim_ledger_copy(dir, (uint64_t)(uintptr_t)(dst), (uint64_t)(uintptr_t)(src), n,       \
                             stream, PER_THREAD(sym));                                             \
            if (sync)                                                                              \
                shim_ledger_sync(SHIM_SYNC_COPY, stream, PER_THREAD(sym));                         \
        }                                                                                          \
        return rc;                                                                                 \
    }

/* cuMemcpy has no direction: D2D when both ends are known device memory. */
static enum shim_copy_dir unified_dir(CUdeviceptr dst, CUdeviceptr src)
{
    bool d = shim_registry_find(dst) != 0, s = shim_registry_find(src) != 0;
    return d && s ? SHIM_COPY_D2D : d ? SHIM_COPY_H2D : s ? SHIM_COPY_D2H : SHIM_COPY_H2H;
}

/* clang-format off */
COPY_HOOK(cuMemcpy, (CUdeviceptr dst, CUdeviceptr src, size_t n), (dst, src, n),
          unified_dir(dst, src), dst, src, n, NULL, true)
COPY_HOOK(cuMemcpy_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t n), (dst, src, n),
          unified_dir(dst, src), dst, src, n, NULL, true)
COPY_HOOK(cuMemcpyAsync, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hStream),
          (dst, src, n, hStream), unified_dir(dst, src), dst, src, n, hStream, false)
COPY_HOOK(cuMemcpyAsync_ptsz, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hStream),
          (dst, src, n, hStream), unified_dir(dst, src), dst, src, n, hStream, false)
COPY_HOOK(cuMemcpyHtoD_v2, (CUdeviceptr dst, const void *src, size_t n), (dst, src, n),
          SHIM_COPY_H2D, dst, src, n, NULL, true)
COPY_HOOK(cuMemcpyHtoD_v2_ptds, (CUdeviceptr dst, const void *src, size_t n), (dst, src, n),
          SHIM_COPY_H2D, dst, src, n, NULL, true)
COPY_HOOK(cuMemcpyDtoH_v2, (void *dst, CUdeviceptr src, size_t n), (dst, src, n),
          SHIM_COPY_D2H, dst, src, n, NULL, true)
COPY_HOOK(cuMemcpyDtoH_v2_ptds, (void *dst, CUdeviceptr src, size_t n), (dst, src, n),
          SHIM_COPY_D2H, dst, src, n, NULL, true)
COPY_HOOK(cuMemcpyDtoD_v2, (CUdeviceptr dst, CUdeviceptr src, size_t n), (dst, src, n),
          SHIM_COPY_D2D, dst, src, n, NULL, true)
COPY_HOOK(cuMemcpyDtoD_v2_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t n), (dst, src, n),
          SHIM_COPY_D2D, dst, src, n, NULL, true)
COPY_HOOK(cuMemcpyHtoDAsync_v2, (CUdeviceptr dst, const void *src, size_t n, CUstream hStream),
          (dst, src, n, hStream), SHIM_COPY_H2D, dst, src, n, hStream, false)
COPY_HOOK(cuMemcpyHtoDAsync_v2_ptsz, (CUdeviceptr dst, const void *src, size_t n, CUstream hStream),
          (dst, src, n, hStream), SHIM_COPY_H2D, dst, src, n, hStream, false)
COPY_HOOK(cuMemcpyDtoHAsync_v2, (void *dst, CUdeviceptr src, size_t n, CUstream hStream),
          (dst, src, n, hStream), SHIM_COPY_D2H, dst, src, n, hStream, false)
COPY_HOOK(cuMemcpyDtoHAsync_v2_ptsz, (void *dst, CUdeviceptr src, size_t n, CUstream hStream),
          (dst, src, n, hStream), SHIM_COPY_D2H, dst, src, n, hStream, false)
COPY_HOOK(cuMemcpyDtoDAsync_v2, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hStream),
          (dst, src, n, hStream), SHIM_COPY_D2D, dst, src, n, hStream, false)
COPY_HOOK(cuMemcpyDtoDAsync_v2_ptsz, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hStream),
          (dst, src, n, hStream), SHIM_COPY_D2D, dst, src, n, hStream, false)
COPY_HOOK(cuMemsetD8_v2, (CUdeviceptr dst, unsigned char v, size_t n), (dst, v, n),
          SHIM_COPY_MEMSET, dst, 0, n, NULL, false)
COPY_HOOK(cuMemsetD8_v2_ptds, (CUdeviceptr dst, unsigned char v, size_t n), (dst, v, n),
          SHIM_COPY_MEMSET, dst, 0, n, NULL, false)
COPY_HOOK(cuMemsetD32_v2, (CUdeviceptr dst, unsigned int v, size_t n), (dst, v, n),
          SHIM_COPY_MEMSET, dst, 0, 4 * n, NULL, false)
COPY_HOOK(cuMemsetD32_v2_ptds, (CUdeviceptr dst, unsigned int v, size_t n), (dst, v, n),
          SHIM_COPY_MEMSET, dst, 0, 4 * n, NULL, false)
COPY_HOOK(cuMemsetD8Async, (CUdeviceptr dst, unsigned char v, size_t n, CUstream hStream),
          (dst, v, n, hStream), SHIM_COPY_MEMSET, dst, 0, n, hStream, false)
COPY_HOOK(cuMemsetD8Async_ptsz, (CUdeviceptr dst, unsigned char v, size_t n, CUstream hStream),
          (dst, v, n, hStream), SHIM_COPY_MEMSET, dst, 0, n, hStream, false)
COPY_HOOK(cuMemsetD32Async, (CUdeviceptr dst, unsigned int v, size_t n, CUstream hStream),
          (dst, v, n, hStream), SHIM_COPY_MEMSET, dst, 0, 4 * n, hStream, false)
COPY_HOOK(cuMemsetD32Async_ptsz, (CUdeviceptr dst, unsigned int v, size_t n, CUstream hStream),
          (dst, v, n, hStream), SHIM_COPY_MEMSET, dst, 0, 4 * n, hStream, false)
/* clang-format on */
