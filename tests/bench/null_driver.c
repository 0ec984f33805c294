/* null_driver.c — a CUDA driver that does nothing, quickly: the baseline for measuring what the
 * shim itself costs per launch (build/bench/null/libcuda.so.1). Allocations return distinct fake
 * addresses. A function handle's value says its layout: P = value >> 12 pointer parameters (2
 * when that is 0), then a 4-byte count. */
#include <cuda.h>
#include <string.h>

#undef cuGetProcAddress

static CUdeviceptr next_addr = 0x7f0000000000ull;

CUresult CUDAAPI cuInit(unsigned int flags)
{
    (void)flags;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    *p = next_addr;
    next_addr += (n + 0xfffff) & ~(CUdeviceptr)0xfffff;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params,
                                void **extra)
{
    (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shmem, (void)s;
    (void)extra;
    return params ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuFuncGetParamInfo(CUfunction f, size_t i, size_t *off, size_t *size)
{
    size_t pointers = (uintptr_t)f >> 12 ? (uintptr_t)f >> 12 : 2;
    if (i > pointers)
        return CUDA_ERROR_INVALID_VALUE;
    *off = 8 * i;
    *size = i < pointers ? 8 : 4;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetName(const char **name, CUfunction f)
{
    (void)f;
    *name = "bench_kernel";
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream s)
{
    (void)s;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetProcAddress_v2(const char *sym, void **pfn, int v, cuuint64_t flags,
                                     CUdriverProcAddressQueryResult *st)
{
    (void)v, (void)flags;
    *pfn = NULL;
    if (strcmp(sym, "cuLaunchKernel") == 0)
        *pfn = (void *)cuLaunchKernel;
    if (st)
        *st = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
