/* shim_real.c — the only place that resolves real symbols: the real dlsym, the driver, its
 * functions.
 *
 * The real dlsym is found with dlvsym(RTLD_NEXT, "dlsym", VERSION) over the glibc
 * versions that have defined it, newest first (never _dl_sym). The driver is
 * libcuda.so.1 as the dynamic linker finds it (tests point LD_LIBRARY_PATH at
 * the simulated one). Each hooked symbol's real address is looked up by its
 * exported name: those addresses are what cuGetProcAddress is routed by. */
#include "shim_core.h"

#include <dlfcn.h>
#include <stdio.h>

typedef void *(*dlsym_fn)(void *, const char *);

/* Names of the real table's slots: hooks first, then used functions. */
static const char *const real_names[] = {
#define SHIM_HOOK_NAME(sym, params, args) #sym,
    SHIM_HOOKS(SHIM_HOOK_NAME) SHIM_USES(SHIM_HOOK_NAME)
#undef SHIM_HOOK_NAME
};
#define REAL_COUNT (sizeof real_names / sizeof real_names[0])

static dlsym_fn real_dlsym_fn;

static dlsym_fn find_real_dlsym(void)
{
    static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.17", "GLIBC_2.2.5", "GLIBC_2.0"};
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        void *p = dlvsym(RTLD_NEXT, "dlsym", versions[i]);
        if (p)
            return (dlsym_fn)p;
    }
    return NULL;
}

void *shim_real_dlsym_address(void)
{
    dlsym_fn f = __atomic_load_n(&real_dlsym_fn, __ATOMIC_ACQUIRE);
    if (!f) {
        f = find_real_dlsym();
        __atomic_store_n(&real_dlsym_fn, f, __ATOMIC_RELEASE);
    }
    return (void *)f;
}

void *shim_real_dlsym(void *handle, const char *name)
{
    dlsym_fn f = (dlsym_fn)shim_real_dlsym_address();
    return f ? f(handle, name) : NULL;
}

int shim_real_resolve(void)
{
    shim.driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!shim.driver) {
        const char *e = dlerror();
        shim_log(SHIM_LOG_ERROR, "cannot open the CUDA driver libcuda.so.1: %s", e ? e : "?");
        return -1;
    }
    _Static_assert(sizeof shim.real == REAL_COUNT * sizeof(void *), "one slot per name");
    void **slots = (void **)&shim.real;
    for (size_t i = 0; i < REAL_COUNT; i++)
        slots[i] = shim_real_dlsym(shim.driver, real_names[i]);
    if (!shim.real.cuGetProcAddress_v2 && !shim.real.cuGetProcAddress) {
        shim_log(SHIM_LOG_ERROR, "libcuda.so.1 has no cuGetProcAddress: not a CUDA driver");
        return -1;
    }
    return 0;
}

int shim_real_resid_missing(char *buf, size_t size)
{
    int missing = 0;
    size_t len = 0;
    if (size)
        buf[0] = '\0';
#define SHIM_RESID_CHECK(sym)                                                                      \
    if (!shim.real.sym) {                                                                          \
        int n_ = len < size ? snprintf(buf + len, size - len, "%s" #sym, missing ? ", " : "") : 0; \
        len += n_ > 0 ? (size_t)n_ : 0;                                                            \
        missing++;                                                                                 \
    }
    SHIM_RESID_NEEDS(SHIM_RESID_CHECK)
#undef SHIM_RESID_CHECK
    return missing;
}
