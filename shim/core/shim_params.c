/* shim_params.c — kernel parameter layouts, read once per function (shim_scan.c reads the
 * parameters through them).
 *
 * Layouts come from cuFuncGetParamInfo (or cuKernelGetParamInfo for library
 * kernel handles) and are cached in a lock-free table keyed by the function
 * handle; entries are never removed. Every 8-byte aligned word of the parameter
 * bytes is a candidate pointer, so pointers inside by-value structs are found too.
 *
 * A handle is only valid until its module or library is unloaded (cuda.h marks
 * cuModuleUnload \note_destroy_ub), and the driver may give the same value to a
 * kernel loaded later, with another layout. So each description carries the
 * unload generation it was read under (shim_params_invalidate counts unloads);
 * the first launch after an unload reads the layout again, keeping the
 * description (and its id) when nothing changed, replacing it otherwise. The
 * launch path pays one relaxed load of the generation and one compare. A launch
 * racing another thread's unload-and-reload of the very handle it launches may
 * still be read with the old layout once. */
#include "shim_core.h"

#include "base_array.h"

#include <stdlib.h>
#include <string.h>

#define FUNC_SLOTS (1u << 16)
#define MAX_PARAMS 32764 /* CUDA's limit on a kernel's parameter bytes: no more parameters */

static struct {
    _Atomic(CUfunction) key;
    struct shim_func *_Atomic fn;
} table[FUNC_SLOTS];

static const struct shim_func unknown_func = {0, 0, 0, NULL, 0, 0, NULL};

/* Successful module and library unloads so far (relaxed: program order or the program's own
   synchronisation orders an unload before a launch of a reused handle). */
static _Atomic uint32_t generation;
static pthread_mutex_t refresh_lock = PTHREAD_MUTEX_INITIALIZER; /* one refresh at a time */

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
    int n = 0;
    size_t cap = 0, off, size;
    while (n < MAX_PARAMS && param_info(f, (size_t)n, &off, &size) == 0 && size < 65536) {
        if (base_array_grow((void **)&p, &cap, (size_t)n + 1, sizeof *p)) {
            free(p);
            return -1;
        }
        p[n++] = (struct param){(uint32_t)off, (uint32_t)size};
    }
    *out = p;
    return n;
}

static uint64_t name_hash(const char *name)
{
    uint64_t h = 1469598103934665603ull;
    for (; *name; name++)
        h = (h ^ (unsigned char)*name) * 1099511628211ull;
    return h;
}

/* A fresh description of f under generation gen, without id or trace record; *name is the
   driver's name for it. NULL out of memory. */
static struct shim_func *describe(CUfunction f, uint32_t gen, const char **name)
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
    fn->nparams = n;
    *name = func_name(f);
    fn->name_hash = name_hash(*name);
    atomic_init(&fn->gen, gen);
    return fn;
}

/* Gives fn its id and records its name. */
static struct shim_func *publish(struct shim_func *fn, const char *name)
{
    fn->id = shim_new_id();
    shim_trace_func_name(fn->id, name);
    return fn;
}

static bool same(const struct shim_func *a, const struct shim_func *b)
{
    return a->nparams == b->nparams && a->nwords == b->nwords && a->name_hash == b->name_hash &&
           memcmp(a->words, b->words, a->nwords * sizeof *a->words) == 0;
}

/* Out of line: the fast path of shim_func_get must not pay for its registers. */
static __attribute__((noinline, cold)) struct shim_func *build(CUfunction f, uint32_t gen)
{
    const char *name;
    struct shim_func *fn = describe(f, gen, &name);
    return fn ? publish(fn, name) : NULL;
}

/* Slot h (key f) holds a description older than the latest unload: reads f again. The same
   layout and name keep the description; anything else replaces it (the old one stays allocated,
   linked from the new one, for launches still using it). Out of memory: no description, rather
   than a stale one. */
static __attribute__((noinline, cold)) const struct shim_func *refresh(size_t h, CUfunction f,
                                                                       uint32_t gen)
{
    pthread_mutex_lock(&refresh_lock);
    struct shim_func *cur = atomic_load_explicit(&table[h].fn, memory_order_acquire);
    const struct shim_func *use = cur;
    if (cur == &unknown_func || atomic_load_explicit(&cur->gen, memory_order_relaxed) != gen) {
        const char *name;
        struct shim_func *fresh = describe(f, gen, &name);
        if (fresh && cur != &unknown_func && same(fresh, cur)) {
            atomic_store_explicit(&cur->gen, gen, memory_order_relaxed);
            free(fresh->words);
            free(fresh);
        } else if (fresh) {
            fresh->replaced = cur == &unknown_func ? NULL : cur;
            use = publish(fresh, name);
            atomic_store_explicit(&table[h].fn, fresh, memory_order_release);
        } else {
            SHIM_LOG_ONCE(SHIM_LOG_WARN, "out of memory re-reading a kernel's parameter layout "
                                         "after a module unload: its launch shows no touches");
            use = &unknown_func;
        }
    }
    pthread_mutex_unlock(&refresh_lock);
    return use;
}

const struct shim_func *shim_func_get(CUfunction f)
{
    uint32_t gen = atomic_load_explicit(&generation, memory_order_relaxed);
    size_t h = (size_t)(((uintptr_t)f >> 4) * 0x9E3779B97F4A7C15ull >> 40) & (FUNC_SLOTS - 1);
    for (size_t probe = 0; probe < FUNC_SLOTS; probe++, h = (h + 1) & (FUNC_SLOTS - 1)) {
        CUfunction k = atomic_load_explicit(&table[h].key, memory_order_acquire);
        if (k == f) {
            struct shim_func *fn;
            while (!(fn = atomic_load_explicit(&table[h].fn, memory_order_acquire)))
                ; /* another thread is describing it: a few driver calls */
            if (__builtin_expect(atomic_load_explicit(&fn->gen, memory_order_relaxed) == gen, 1))
                return fn;
            return refresh(h, f, gen);
        }
        if (k)
            continue;
        CUfunction empty = NULL;
        if (!atomic_compare_exchange_strong(&table[h].key, &empty, f)) {
            h = (h + FUNC_SLOTS - 1) & (FUNC_SLOTS - 1); /* look at this slot again */
            probe--;
            continue;
        }
        struct shim_func *fn = build(f, gen);
        const struct shim_func *use = fn ? fn : &unknown_func;
        atomic_store_explicit(&table[h].fn, (struct shim_func *)use, memory_order_release);
        return use;
    }
    SHIM_LOG_ONCE(SHIM_LOG_WARN, "more than %u kernel functions: the rest are not described",
                  FUNC_SLOTS);
    return &unknown_func;
}

void shim_params_invalidate(void)
{
    atomic_fetch_add_explicit(&generation, 1, memory_order_relaxed);
}
