/* shim_hook_module.c — module and library unloads: the function handles they owned become invalid
 * (cuda.h: cuModuleUnload \note_destroy_ub), and a later load may return the same values for
 * other kernels, so cached parameter layouts are checked again at their next launch. */
#include "shim_hooks.h"

SHIM_HOOK_AFTER(cuModuleUnload, (CUmodule hmod), (hmod), shim_params_invalidate())

SHIM_HOOK_AFTER(cuLibraryUnload, (CUlibrary library), (library), shim_params_invalidate())
