/* simgpu_proc.c — cuGetProcAddress: the driver's symbol lookup by base name, version and stream
 * mode.
 *
 * As the real driver: the caller names the base symbol ("cuMemAlloc"), the
 * CUDA version it was built for picks the ABI (cuMemAlloc_v2 from 3.2), and
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM picks the _ptsz / _ptds
 * variant where one exists. Symbols whose every variant is newer than the
 * requested version answer VERSION_NOT_SUFFICIENT; unknown ones
 * SYMBOL_NOT_FOUND, both with CUDA_ERROR_NOT_FOUND and *pfn = NULL.
 *
 * Only exported entry points are answered: a build of the library that hides
 * some (module.mk's "old driver", linked with a version script that makes them
 * local) lacks them through cuGetProcAddress as through dlsym, as an older
 * driver would. */
#include "simgpu_exports.h"
#include "simgpu_internal.h"

#include <dlfcn.h>
#include <string.h>

#undef cuGetProcAddress
CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                  cuuint64_t flags);

static const struct proc_entry {
    const char *base;
    int version;
    char variant;
    void *fn;
} table[] = {
#define SIM_PROC(sym, base, ver, var) {#base, ver, #var[0], (void *)&sym},
    SIMGPU_ENTRIES(SIM_PROC)
#undef SIM_PROC
};

static bool variant_ok(char variant, bool per_thread, bool fallback)
{
    if (variant == 'A' || variant == 'E')
        return true;
    if (fallback)
        return variant == 'D';
    return variant == (per_thread ? 'P' : 'D');
}

/* Whether fn is the address of an exported symbol (of this library, or of an interposer that
   the dynamic linker bound the table's reference to). A local function has none. */
static bool exported(void *fn)
{
    Dl_info info;
    return dladdr(fn, &info) && info.dli_saddr == fn;
}

/* Best entry for the name: the newest whose version is not above `version`. */
static const struct proc_entry *lookup(const char *sym, int version, bool per_thread, bool *known)
{
    const struct proc_entry *best = NULL;
    for (int pass = 0; pass < 2 && !best; pass++) {
        for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
            const struct proc_entry *e = &table[i];
            if (strcmp(e->base, sym) != 0 || !variant_ok(e->variant, per_thread, pass == 1) ||
                !exported(e->fn))
                continue;
            *known = true;
            if (e->version <= version && (!best || e->version > best->version))
                best = e;
        }
        if (!per_thread)
            break; /* the fallback pass only serves per-thread lookups */
    }
    return best;
}

CUresult sim_get_proc(const char *sym, void **pfn, int version, cuuint64_t flags,
                      CUdriverProcAddressQueryResult *status)
{
    if (!sym || !pfn ||
        (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
                               CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)))
        return CUDA_ERROR_INVALID_VALUE;
    bool per_thread = flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    bool known = false;
    const struct proc_entry *e = lookup(sym, version, per_thread, &known);
    *pfn = e ? e->fn : NULL;
    if (status)
        *status = e       ? CU_GET_PROC_ADDRESS_SUCCESS
                  : known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                          : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return e ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                     cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
    SIM_ENTER(cuGetProcAddress_v2);
    return sim_get_proc(symbol, pfn, cudaVersion, flags, status);
}

CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    SIM_ENTER(cuGetProcAddress);
    return sim_get_proc(symbol, pfn, cudaVersion, flags, NULL);
}
