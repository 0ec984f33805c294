/* simgpu_kernel.c — kernels: registration of host functions, parameter layout, launches. */
#include "simgpu_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool sim_func_valid(const struct sim_func *f)
{
    for (const struct sim_func *g = sim.funcs; g; g = g->next)
        if (g == f)
            return true;
    return false;
}

/* Largest power of two dividing size, at most 8: the parameter's alignment. */
static size_t param_align(size_t size)
{
    size_t a = 1;
    while (a < 8 && size % (a * 2) == 0)
        a *= 2;
    return a;
}

static struct sim_func *find_by_body(simgpu_body body)
{
    for (struct sim_func *g = sim.funcs; g; g = g->next)
        if (g->body == body)
            return g;
    return NULL;
}

static struct sim_func *new_func(const char *name, simgpu_body body, int nparams,
                                 const size_t *sizes)
{
    struct sim_func *f = calloc(1, sizeof *f);
    if (!f || !(f->name = strdup(name))) {
        free(f);
        return NULL;
    }
    f->body = body;
    f->nparams = nparams;
    f->cost_us = 1.0;
    size_t off = 0;
    for (int i = 0; i < nparams; i++) {
        size_t a = param_align(sizes[i]);
        off = (off + a - 1) / a * a;
        f->sizes[i] = sizes[i];
        f->offsets[i] = off;
        off += sizes[i];
    }
    f->total = (off + 7) / 8 * 8;
    return f;
}

CUfunction simgpu_register(const char *name, simgpu_body body, int nparams,
                           const size_t *param_sizes)
{
    if (!name || !body || nparams < 0 || nparams > SIM_MAX_PARAMS || (nparams && !param_sizes))
        return NULL;
    for (int i = 0; i < nparams; i++)
        if (param_sizes[i] == 0 || param_sizes[i] > 4096)
            return NULL;
    if (!sim_ensure_init())
        return NULL;
    pthread_mutex_lock(&sim.lock);
    struct sim_func *f = find_by_body(body);
    if (!f && (f = new_func(name, body, nparams, param_sizes))) {
        f->next = sim.funcs;
        sim.funcs = f;
    }
    pthread_mutex_unlock(&sim.lock);
    return (CUfunction)f;
}

void simgpu_set_cost(CUfunction fn, double usec)
{
    if (!(usec >= 0) || !isfinite(usec))
        return;
    pthread_mutex_lock(&sim.lock);
    struct sim_func *f = sim_func_of(fn);
    if (f)
        f->cost_us = usec;
    pthread_mutex_unlock(&sim.lock);
}

CUfunction simgpu_function_of(simgpu_body body)
{
    pthread_mutex_lock(&sim.lock);
    struct sim_func *f = find_by_body(body);
    pthread_mutex_unlock(&sim.lock);
    return (CUfunction)f;
}

/* Parameter bytes from kernelParams or from a CU_LAUNCH_PARAM_BUFFER_POINTER block. */
static CUresult copy_params(const struct sim_func *f, void **params, void **extra,
                            unsigned char *out)
{
    if (params) {
        for (int i = 0; i < f->nparams; i++) {
            if (!params[i])
                return CUDA_ERROR_INVALID_VALUE;
            memcpy(out + f->offsets[i], params[i], f->sizes[i]);
        }
        return CUDA_SUCCESS;
    }
    if (!extra)
        return f->nparams ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    void *buf = NULL;
    size_t size = 0;
    for (int i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            buf = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1])
            size = *(size_t *)extra[i + 1];
        else
            return CUDA_ERROR_INVALID_VALUE;
    }
    size_t need = f->nparams ? f->offsets[f->nparams - 1] + f->sizes[f->nparams - 1] : 0;
    if (need && (!buf || size < need))
        return CUDA_ERROR_INVALID_VALUE;
    if (need)
        memcpy(out, buf, need);
    return CUDA_SUCCESS;
}

CUresult sim_api_launch(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, CUstream h,
                        bool per_thread, void **params, void **extra)
{
    SIM_NEED_ARGS(sim_need_ctx, gx == 0 || gy == 0 || gz == 0 || (params && extra));
    pthread_mutex_lock(&sim.lock);
    struct sim_func *f = sim_func_of(fn);
    struct sim_stream *s = sim_stream_get(h, per_thread, &rc);
    if (rc == CUDA_SUCCESS && !f)
        rc = CUDA_ERROR_INVALID_HANDLE;
    if (rc == CUDA_SUCCESS)
        rc = sim_sticky();
    struct sim_cmd *c = NULL;
    if (rc == CUDA_SUCCESS && !(c = sim_cmd_new(CMD_KERNEL, ENG_COMPUTE)))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (c && !(c->u.k.params = calloc(1, f->total ? f->total : 8)))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (rc == CUDA_SUCCESS) {
        c->u.k.fn = f;
        c->u.k.cost_us = f->cost_us;
        rc = copy_params(f, params, extra, c->u.k.params);
    }
    if (rc == CUDA_SUCCESS) {
        sim_host_launch(); /* the program's own work before it launches (simgpu_host.c) */
        rc = sim_submit(s, c);
    } else if (c) {
        sim_cmd_unref(c);
    }
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

CUresult sim_api_launch_ex(const CUlaunchConfig *config, CUfunction f, bool per_thread,
                           void **params, void **extra)
{
    if (!config)
        return CUDA_ERROR_INVALID_VALUE;
    return sim_api_launch(f, config->gridDimX, config->gridDimY, config->gridDimZ, config->hStream,
                          per_thread, params, extra);
}

static CUresult param_info(CUfunction h, size_t index, size_t *offset, size_t *size)
{
    pthread_mutex_lock(&sim.lock);
    const struct sim_func *f = sim_func_of(h); /* registered kernels are never freed */
    pthread_mutex_unlock(&sim.lock);
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    if (index >= (size_t)f->nparams || (!offset && !size))
        return CUDA_ERROR_INVALID_VALUE;
    if (offset)
        *offset = f->offsets[index];
    if (size)
        *size = f->sizes[index];
    return CUDA_SUCCESS;
}

static CUresult func_name(CUfunction h, const char **name)
{
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim.lock);
    const struct sim_func *f = sim_func_of(h);
    pthread_mutex_unlock(&sim.lock);
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    *name = f->name;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetParamInfo(CUfunction f, size_t index, size_t *offset, size_t *size)
{
    SIM_ENTER(cuFuncGetParamInfo);
    return param_info(f, index, offset, size);
}

CUresult CUDAAPI cuFuncGetName(const char **name, CUfunction f)
{
    SIM_ENTER(cuFuncGetName);
    return func_name(f, name);
}

/* A registered function also serves as its library kernel handle, and a library's kernel handle
   (simgpu_module.c) as its function handle. */
CUresult CUDAAPI cuKernelGetParamInfo(CUkernel k, size_t index, size_t *offset, size_t *size)
{
    SIM_ENTER(cuKernelGetParamInfo);
    return param_info((CUfunction)k, index, offset, size);
}

CUresult CUDAAPI cuKernelGetName(const char **name, CUkernel k)
{
    SIM_ENTER(cuKernelGetName);
    return func_name((CUfunction)k, name);
}

CUresult CUDAAPI cuKernelGetFunction(CUfunction *out, CUkernel k)
{
    SIM_ENTER(cuKernelGetFunction);
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim.lock);
    bool ok = sim_func_of((CUfunction)k) != NULL;
    pthread_mutex_unlock(&sim.lock);
    if (!ok)
        return CUDA_ERROR_INVALID_HANDLE;
    *out = (CUfunction)k;
    return CUDA_SUCCESS;
}
