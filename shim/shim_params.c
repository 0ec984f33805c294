/* shim_params.c — kernel parameter layouts, read once per function (shim_scan.c reads the
 * parameters through them).
 *
 * Layouts come from cuFuncGetParamInfo (or cuKernelGetParamInfo for library
 * kernel handles) and are cached in a lock-free table keyed by the function
 * handle: functions live as long as their module, entries are never removed.
 * Every 8-byte aligned word of the parameter bytes is a candidate pointer, so
 * pointers inside by-value structs are found too. */
#include "shim_internal.h"

#include <stdlib.h>
#include <string.h>

#define FUNC_SLOTS (1u << 16)
#define MAX_PARAMS 32764 /* CUDA's limit on a kernel's parameter bytes: no more parameters */

static struct {
    _Atomic(CUfunction) key;
    struct shim_func *_Atomic fn;
} table[FUNC_SLOTS];

static const struct shim_func unknown_func = {0, 0, 0, NULL};

static int param_info(CUfunction f, size_t i, size_t *off, size_t *size)
{
    if (shim.real.cuFuncGetParamInfo &&
        shim.real.cuFuncGetParamInfo(f, i, off, size) == CUDA_SUCCESS)
        return 0;
    if (shim.real.cuKernelGetParamInfo &&
        shim.real.cuKernelGetParamInfo((CUkernel)f, i, off, size) == CUDA_SUCCESS)
        return 0;
    return -1;
}

static const char *func_name(CUfunction f)
{
    const char *name = NULL;
    if (shim.real.cuFuncGetName && shim.real.cuFuncGetName(&name, f) == CUDA_SUCCESS && name)
        return name;
    if (shim.real.cuKernelGetName && shim.real.cuKernelGetName(&name, (CUkernel)f) == 0 && name)
        return name;
    return "?";
}

struct param {
    uint32_t off, size;
};

/* The words to scan: every 8-byte aligned word of the parameter block, as
   (parameter, offset inside it). Returns 0, or -1 out of memory. */
static int plan_words(struct shim_func *fn, const struct param *p, int n)
{
    uint32_t count = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++) {
            for (uint32_t w = (p[i].off + 7) & ~7u; w + 8 <= p[i].off + p[i].size; w += 8) {
                if (pass && count < fn->nwords)
                    fn->words[count] = (struct shim_word){(uint16_t)i, (uint16_t)(w - p[i].off)};
                count++;
            }
        }
        if (!pass) {
            fn->nwords = count;
            fn->words = malloc((count ? count : 1) * sizeof *fn->words);
            if (!fn->words)
                return -1;
            count = 0;
        }
    }
    return 0;
}

/* The driver's layout of f into *out (malloc'd; NULL when empty): returns how many parameters
   (0 when the driver cannot describe f), or -1 out of memory. */
static int read_layout(CUfunction f, struct param **out)
{
    struct param *p = NULL;
    int n = 0, cap = 0;
    size_t off, size;
    while (n < MAX_PARAMS && param_info(f, (size_t)n, &off, &size) == 0 && size < 65536) {
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            struct param *v = realloc(p, (size_t)cap * sizeof *v);
            if (!v) {
                free(p);
                return -1;
            }
            p = v;
        }
        p[n++] = (struct param){(uint32_t)off, (uint32_t)size};
    }
    *out = p;
    return n;
}

/* Out of line: the fast path of shim_func_get must not pay for its registers. */
static __attribute__((noinline, cold)) struct shim_func *build(CUfunction f)
{
    struct shim_func *fn = calloc(1, sizeof *fn);
    struct param *p = NULL;
    /* A function the driver cannot describe reads as having no parameters: its
       launches show no touched allocations (the launch hook logs it once). */
    int n = fn ? read_layout(f, &p) : -1;
    if (n < 0 || plan_words(fn, p, n) != 0) {
        free(p);
        free(fn);
        return NULL;
    }
    free(p);
    fn->id = shim_new_id();
    fn->nparams = n;
    shim_trace_func_name(fn->id, func_name(f));
    return fn;
}

const struct shim_func *shim_func_get(CUfunction f)
{
    size_t h = (size_t)(((uintptr_t)f >> 4) * 0x9E3779B97F4A7C15ull >> 40) & (FUNC_SLOTS - 1);
    for (size_t probe = 0; probe < FUNC_SLOTS; probe++, h = (h + 1) & (FUNC_SLOTS - 1)) {
        CUfunction k = atomic_load_explicit(&table[h].key, memory_order_acquire);
        if (k == f) {
            struct shim_func *fn;
            while (!(fn = atomic_load_explicit(&table[h].fn, memory_order_acquire)))
                ; /* another thread is describing it: a few driver calls */
            return fn;
        }
        if (k)
            continue;
        CUfunction empty = NULL;
        if (!atomic_compare_exchange_strong(&table[h].key, &empty, f)) {
            h = (h + FUNC_SLOTS - 1) & (FUNC_SLOTS - 1); /* look at this slot again */
            probe--;
            continue;
        }
        struct shim_func *fn = build(f);
        const struct shim_func *use = fn ? fn : &unknown_func;
        atomic_store_explicit(&table[h].fn, (struct shim_func *)use, memory_order_release);
        return use;
    }
    SHIM_LOG_ONCE(SHIM_LOG_WARN, "more than %u kernel functions: the rest are not described",
                  FUNC_SLOTS);
    return &unknown_func;
}
