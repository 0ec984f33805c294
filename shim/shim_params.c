/* shim_params.c — kernel parameter layouts (read once per function) and the scan for pointers into
 * allocations.
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
#define MAX_PARAMS 1024

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

/* The words to scan: every 8-byte aligned word of the parameter block, as
   (parameter, offset inside it). Returns 0, or -1 out of memory. */
static int plan_words(struct shim_func *fn, const uint32_t *offs, const uint32_t *sizes, int n)
{
    uint32_t count = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++) {
            for (uint32_t w = (offs[i] + 7) & ~7u; w + 8 <= offs[i] + sizes[i]; w += 8) {
                if (pass && count < fn->nwords)
                    fn->words[count] = (struct shim_word){(uint16_t)i, (uint16_t)(w - offs[i])};
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

static struct shim_func *build(CUfunction f)
{
    struct shim_func *fn = calloc(1, sizeof *fn);
    if (!fn)
        return NULL;
    fn->id = shim_new_id();
    uint32_t offs[MAX_PARAMS], sizes[MAX_PARAMS];
    int n = 0;
    size_t off, size;
    while (n < MAX_PARAMS && param_info(f, (size_t)n, &off, &size) == 0 && size < 65536) {
        offs[n] = (uint32_t)off;
        sizes[n] = (uint32_t)size;
        n++;
    }
    /* A function the driver cannot describe reads as having no parameters: its
       launches show no touched allocations (the launch hook logs it once). */
    fn->nparams = n;
    if (plan_words(fn, offs, sizes, n) != 0) {
        free(fn);
        return NULL;
    }
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

static inline uint32_t add_word(uint64_t w, uint64_t *ids, uint32_t n, uint32_t max)
{
    if (n >= max || w < 4096 || (w >> 48))
        return n;
    uint64_t id = shim_registry_find(w);
    if (!id)
        return n;
    for (uint32_t i = 0; i < n; i++)
        if (ids[i] == id)
            return n;
    ids[n] = id;
    return n + 1;
}

static uint32_t scan_buffer(const unsigned char *buf, size_t len, uint64_t *ids, uint32_t max)
{
    uint32_t n = 0;
    for (size_t o = 0; o + 8 <= len; o += 8) {
        uint64_t w;
        memcpy(&w, buf + o, 8);
        n = add_word(w, ids, n, max);
    }
    return n;
}

static uint32_t scan_extra(void **extra, uint64_t *ids, uint32_t max)
{
    const unsigned char *buf = NULL;
    size_t size = 0;
    for (int i = 0; i < 64 && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            buf = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1])
            size = *(const size_t *)extra[i + 1];
    }
    return buf ? scan_buffer(buf, size, ids, max) : 0;
}

uint32_t shim_params_scan(const struct shim_func *fn, void **params, void **extra, uint64_t *ids,
                          uint32_t max)
{
    if (!params)
        return extra ? scan_extra(extra, ids, max) : 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < fn->nwords; i++) {
        const unsigned char *p = params[fn->words[i].param];
        uint64_t v;
        if (!p)
            continue;
        memcpy(&v, p + fn->words[i].offset, 8);
        n = add_word(v, ids, n, max);
    }
    return n;
}
