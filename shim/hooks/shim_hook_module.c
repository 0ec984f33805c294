/* shim_hook_module.c — module and library unloads: the function handles they owned become invalid
 * (cuda.h: cuModuleUnload \note_destroy_ub), and a later load may return the same values for
 * other kernels, so cached parameter layouts are checked again at their next launch. */
#include "shim_hooks.h"

CUresult CUDAAPI cuModuleUnload(CUmodule hmod)
{
    SHIM_NEED_REAL(cuModuleUnload);
    CUresult rc = shim.real.cuModuleUnload(hmod);
    if (rc == CUDA_SUCCESS && shim_active())
        shim_params_invalidate();
    return rc;
}

CUresult CUDAAPI cuLibraryUnload(CUlibrary library)
{
    SHIM_NEED_REAL(cuLibraryUnload);
    CUresult rc = shim.real.cuLibraryUnload(library);
    if (rc == CUDA_SUCCESS && shim_active())
        shim_params_invalidate();
    return rc;
}
