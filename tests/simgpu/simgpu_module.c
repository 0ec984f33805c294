/* simgpu_module.c — modules and libraries: cuModuleLoadData, cuModuleLoad, cuModuleGetFunction,
 * cuModuleUnload, cuLibraryLoadData, cuLibraryGetKernel, cuLibraryUnload.
 *
 * An image is text naming kernels already registered with simgpu_register:
 *
 *     simgpu-module:NAME[,NAME...]
 *
 * (NUL-terminated for the *LoadData calls; the whole file for cuModuleLoad). A NAME is the
 * name of the most recently registered kernel so called; an image that is not of this form, or
 * names an unregistered kernel, is CUDA_ERROR_INVALID_IMAGE. Loading gives each named kernel a
 * fresh function handle owned by the module. A library's kernel handle is also the function
 * handle cuKernelGetFunction returns, as a registered function is both.
 *
 * Unloading frees the handles, and later loads reuse the most recently freed first, as a real
 * driver may: cuda.h documents cuModuleUnload with \note_destroy_ub ("use of the handle after
 * this call is undefined behavior"), so once a module is unloaded the same handle value can
 * come back from another load describing another kernel with another parameter layout. Until
 * it is reused, a freed handle is answered with CUDA_ERROR_INVALID_HANDLE. */
#include "simgpu_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMAGE_PREFIX "simgpu-module:"
#define IMAGE_MAX    65536

struct sim_modfn { /* a function handle owned by a module or library */
    struct sim_func *fn;
    struct sim_module *owner; /* NULL while free */
    struct sim_modfn *next_free;
};

struct sim_module {
    bool library;
    int n;
    struct sim_modfn **fns;
};

static struct sim_modfn *free_fns; /* freed handles, most recent first; lock held */

struct sim_func *sim_func_of(CUfunction h)
{
    struct sim_func *f = (struct sim_func *)h;
    if (sim_func_valid(f))
        return f;
    if (!sim_handles_has(&sim.modfns_live, h))
        return NULL;
    return ((struct sim_modfn *)h)->fn;
}

static struct sim_func *find_by_name(const char *name, size_t len)
{
    for (struct sim_func *g = sim.funcs; g; g = g->next)
        if (strlen(g->name) == len && memcmp(g->name, name, len) == 0)
            return g;
    return NULL;
}

static struct sim_modfn *take_handle(void)
{
    struct sim_modfn *h = free_fns;
    if (h)
        free_fns = h->next_free;
    else
        h = calloc(1, sizeof *h); /* never freed: a stale handle stays safe to look at */
    if (h && sim_handles_add(&sim.modfns_live, h) != 0) {
        h->next_free = free_fns;
        free_fns = h;
        return NULL;
    }
    return h;
}

static void release(struct sim_module *m)
{
    for (int i = m->n - 1; i >= 0; i--) { /* the first kernel's handle ends up first to reuse */
        struct sim_modfn *h = m->fns[i];
        sim_handles_del(&sim.modfns_live, h);
        h->owner = NULL;
        h->fn = NULL;
        h->next_free = free_fns;
        free_fns = h;
    }
    sim_handles_del(&sim.modules_live, m);
    free(m->fns);
    free(m);
}

/* Adds the kernel named [name, name+len) to m; CUDA_ERROR_INVALID_IMAGE if none is. */
static CUresult add_kernel(struct sim_module *m, const char *name, size_t len)
{
    struct sim_func *f = len ? find_by_name(name, len) : NULL;
    if (!f)
        return CUDA_ERROR_INVALID_IMAGE;
    struct sim_modfn **v = realloc(m->fns, (size_t)(m->n + 1) * sizeof *v);
    if (!v)
        return CUDA_ERROR_OUT_OF_MEMORY;
    m->fns = v;
    struct sim_modfn *h = take_handle();
    if (!h)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *h = (struct sim_modfn){f, m, NULL};
    m->fns[m->n++] = h;
    return CUDA_SUCCESS;
}

/* Parses text (len bytes) and makes the module; lock held. */
static CUresult load(const char *text, size_t len, bool library, struct sim_module **out)
{
    size_t plen = strlen(IMAGE_PREFIX);
    if (len < plen || memcmp(text, IMAGE_PREFIX, plen) != 0)
        return CUDA_ERROR_INVALID_IMAGE;
    struct sim_module *m = calloc(1, sizeof *m);
    if (!m || sim_handles_add(&sim.modules_live, m) != 0) {
        free(m);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    m->library = library;
    CUresult rc = CUDA_SUCCESS;
    for (const char *p = text + plen, *end = text + len; rc == CUDA_SUCCESS && p <= end;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        rc = add_kernel(m, p, (size_t)(stop - p));
        p = stop + 1;
    }
    if (rc != CUDA_SUCCESS) {
        release(m);
        return rc;
    }
    *out = m;
    return CUDA_SUCCESS;
}

/* Body of every load: checks, then load() under the lock. */
static CUresult load_api(const char *text, size_t len, bool library, struct sim_module **out)
{
    if (!out || !text)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = library ? sim_need_init() : sim_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&sim.lock);
    rc = load(text, len, library, out);
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

/* The live module (or library) h, or NULL; lock held. */
static struct sim_module *live(const void *h, bool library)
{
    struct sim_module *m = (struct sim_module *)h;
    return h && sim_handles_has(&sim.modules_live, h) && m->library == library ? m : NULL;
}

/* Body of cuModuleGetFunction and cuLibraryGetKernel. */
static CUresult get_fn(const void *h, bool library, const char *name, void **out)
{
    if (!out || !name)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = library ? sim_need_init() : sim_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&sim.lock);
    struct sim_module *m = live(h, library);
    rc = m ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_INVALID_HANDLE;
    for (int i = 0; m && i < m->n; i++) {
        if (strcmp(m->fns[i]->fn->name, name) == 0) {
            *out = m->fns[i];
            rc = CUDA_SUCCESS;
            break;
        }
    }
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

/* Body of cuModuleUnload and cuLibraryUnload. */
static CUresult unload(const void *h, bool library)
{
    CUresult rc = library ? sim_need_init() : sim_need_ctx();
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&sim.lock);
    struct sim_module *m = live(h, library);
    if (m)
        release(m);
    pthread_mutex_unlock(&sim.lock);
    return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Body of cuModuleLoadData and cuLibraryLoadData: image is the module's text. */
static CUresult load_text(const void *image, bool library, void *out)
{
    const char *text = image;
    return load_api(text, text ? strnlen(text, IMAGE_MAX) : 0, library, out);
}

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
    SIM_ENTER(cuModuleLoadData);
    return load_text(image, false, module);
}

CUresult CUDAAPI cuModuleLoad(CUmodule *module, const char *fname)
{
    SIM_ENTER(cuModuleLoad);
    if (!module || !fname)
        return CUDA_ERROR_INVALID_VALUE;
    FILE *f = fopen(fname, "rb");
    if (!f)
        return CUDA_ERROR_FILE_NOT_FOUND;
    char *buf = malloc(IMAGE_MAX);
    size_t len = buf ? fread(buf, 1, IMAGE_MAX, f) : 0;
    fclose(f);
    if (!buf)
        return CUDA_ERROR_OUT_OF_MEMORY;
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\0'))
        len--;
    CUresult rc = load_api(buf, len, false, (struct sim_module **)module);
    free(buf);
    return rc;
}

/* A function by name, and unloading: the same for a module and a library (library). */
SIM_TWIN_ENTRIES(library, cuModuleGetFunction, (CUfunction * out, CUmodule h, const char *name),
                 cuLibraryGetKernel, (CUkernel * out, CUlibrary h, const char *name),
                 get_fn(h, library, name, (void **)out))
SIM_TWIN_ENTRIES(library, cuModuleUnload, (CUmodule h), cuLibraryUnload, (CUlibrary h),
                 unload(h, library))

CUresult CUDAAPI cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                                   void **jitOptionsValues, unsigned int numJitOptions,
                                   CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                   unsigned int numLibraryOptions)
{
    SIM_ENTER(cuLibraryLoadData);
    (void)jitOptions, (void)jitOptionsValues, (void)numJitOptions;
    (void)libraryOptions, (void)libraryOptionValues, (void)numLibraryOptions;
    return load_text(code, true, library);
}
