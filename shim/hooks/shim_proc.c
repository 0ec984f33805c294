/* shim_proc.c — door 3: cuGetProcAddress answers with the hook of the exact variant the driver
 * chose.
 *
 * The real driver is asked first, with the caller's flags and version; only a
 * successful answer that is exactly the real address of a hooked symbol is
 * replaced, by that symbol's hook. Versions and per-thread flags therefore pick
 * the same ABI with and without the shim, and the driver's own errors and
 * statuses (not found, version not sufficient) reach the caller unchanged. */
#include "shim_hooks.h"

static void route(CUresult rc, void **pfn)
{
    if (rc == CUDA_SUCCESS && pfn && *pfn && shim_real_ready()) {
        void *hook = shim_hook_for_real(*pfn);
        if (hook)
            *pfn = hook;
    }
}

CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                     cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
    if (!shim_real_ready() || !shim.real.cuGetProcAddress_v2)
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = shim.real.cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, symbolStatus);
    route(rc, pfn);
    return rc;
}

CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    if (!shim_real_ready() || !shim.real.cuGetProcAddress)
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = shim.real.cuGetProcAddress(symbol, pfn, cudaVersion, flags);
    route(rc, pfn);
    return rc;
}
