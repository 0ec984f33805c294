/* doors_prog.c — reaches the driver through each door and reports what it was given.
 *
 * Run under LD_PRELOAD=libshim.so (tests/shim/test_doors.sh). For every door it
 * prints "ok - ..." when the function pointer it obtained belongs to libshim
 * (dladdr) and is the hook of the exact variant asked for, then launches a
 * kernel through it with a by-value struct holding a device pointer, so that
 * the trace can be checked too. Kernels are named after their door. */
#include "simgpu.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

struct span {
    uint64_t pad;
    CUdeviceptr ptr; /* a pointer inside a by-value struct */
    uint32_t n;
};

static int failures;
#define CHECK(name, cond)                                                                          \
    do {                                                                                           \
        int ok_ = (cond);                                                                          \
        printf("%s - %s\n", ok_ ? "ok" : "not ok", name);                                          \
        failures += !ok_;                                                                          \
    } while (0)

static void fill(void **p)
{
    const struct span *s = p[0];
    uint32_t v = *(uint32_t *)p[1];
    uint32_t *d = (uint32_t *)(uintptr_t)s->ptr;
    for (uint32_t i = 0; i < s->n; i++)
        d[i] = v + i;
}

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);

/* Whether fn lives in libshim and is exported there as want. */
static int is_hook(void *fn, const char *want)
{
    Dl_info info;
    if (!fn || !dladdr(fn, &info) || !info.dli_fname || !info.dli_sname)
        return 0;
    /* By the file's own name: the checkout's folder is often called libshim too. */
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    return strncmp(base, "libshim", 7) == 0 && strcmp(info.dli_sname, want) == 0;
}

/* One body per door, so that each door's launches have their own function and name. */
static void door_runtime(void **p)
{
    fill(p);
}
static void door_link(void **p)
{
    fill(p);
}
static void door_dlsym(void **p)
{
    fill(p);
}
static void door_gpa_ptsz(void **p)
{
    fill(p);
}

static void form_ex(void **p)
{
    fill(p);
}
static void form_coop(void **p)
{
    fill(p);
}
static void form_extra(void **p)
{
    fill(p);
}
static void form_graph(void **p)
{
    fill(p);
}

static CUfunction kernel(const char *name, simgpu_body body)
{
    static const size_t sizes[] = {sizeof(struct span), 4};
    return simgpu_register(name, body, 2, sizes);
}

static void launch_via(launch_fn launch, CUfunction f, CUdeviceptr d, uint32_t v)
{
    struct span s = {0, d, 256};
    void *args[] = {&s, &v};
    CHECK("launch returns success", launch(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL) == 0);
}

int main(void)
{
    void *d = NULL;
    kernel("door_runtime", door_runtime);
    /* runtime door: libcudart reaches the driver through dlopen + cuGetProcAddress */
    CHECK("cudaMalloc through the runtime", cudaMalloc(&d, 1 << 20) == cudaSuccess);
    CUdeviceptr dev = (CUdeviceptr)(uintptr_t)d, untouched;
    CHECK("a second buffer, never passed to a kernel", cuMemAlloc(&untouched, 1 << 20) == 0);
    struct span s = {0, dev, 256};
    uint32_t v = 1;
    void *args[] = {&s, &v};
    CHECK("cudaLaunchKernel", cudaLaunchKernel((const void *)door_runtime, (dim3){1, 1, 1},
                                               (dim3){1, 1, 1}, args, 0, 0) == cudaSuccess);
    CHECK("cudaDeviceSynchronize", cudaDeviceSynchronize() == cudaSuccess);

    /* door 1: a program linked with -lcuda calls the exported symbol */
    CHECK("linked cuLaunchKernel is the hook", is_hook((void *)&cuLaunchKernel, "cuLaunchKernel"));
    launch_via(cuLaunchKernel, kernel("door_link", door_link), dev, 10);

    /* door 2: dlopen the driver and dlsym on its handle (as Triton does) */
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    void *fn = lib ? dlsym(lib, "cuLaunchKernel") : NULL;
    CHECK("dlsym(libcuda, cuLaunchKernel) is the hook", is_hook(fn, "cuLaunchKernel"));
    if (fn)
        launch_via((launch_fn)fn, kernel("door_dlsym", door_dlsym), dev, 20);
    CHECK("dlsym(RTLD_NEXT, cuMemAlloc_v2) is the hook",
          is_hook(dlsym(RTLD_NEXT, "cuMemAlloc_v2"), "cuMemAlloc_v2"));
    CHECK("dlsym(libcuda, cuDeviceGetName) is the driver's (not hooked)",
          lib && dlsym(lib, "cuDeviceGetName") &&
              !is_hook(dlsym(lib, "cuDeviceGetName"), "cuDeviceGetName"));
    CHECK("dlsym(RTLD_NEXT, printf) still finds libc", dlsym(RTLD_NEXT, "printf") != NULL);

    /* door 3: cuGetProcAddress with the per-thread default stream flag */
    CUdriverProcAddressQueryResult st;
    fn = NULL;
    CHECK("cuGetProcAddress succeeds",
          cuGetProcAddress("cuLaunchKernel", &fn, CUDA_VERSION,
                           CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st) == 0);
    CHECK("cuGetProcAddress(per-thread) is the _ptsz hook", is_hook(fn, "cuLaunchKernel_ptsz"));
    if (fn)
        launch_via((launch_fn)fn, kernel("door_gpa_ptsz", door_gpa_ptsz), dev, 30);
    fn = (void *)1;
    CHECK("an unknown symbol stays not found",
          cuGetProcAddress("cuNoSuchEntry", &fn, CUDA_VERSION, 0, &st) == CUDA_ERROR_NOT_FOUND &&
              st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    fn = NULL;
    CHECK("a version too old is still refused by the driver",
          cuGetProcAddress("cuMemAlloc", &fn, 3000, 0, &st) == CUDA_ERROR_NOT_FOUND &&
              st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT && fn == NULL);

    /* the other launch forms: Ex, cooperative, a packed parameter buffer, a graph */
    struct span sp = {0, dev, 256};
    uint32_t val = 40;
    void *pargs[] = {&sp, &val};
    CUlaunchConfig cfg = {0};
    cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 1;
    CHECK("cuLaunchKernelEx", cuLaunchKernelEx(&cfg, kernel("form_ex", form_ex), pargs, NULL) == 0);
    CHECK("cuLaunchCooperativeKernel",
          cuLaunchCooperativeKernel(kernel("form_coop", form_coop), 1, 1, 1, 1, 1, 1, 0, NULL,
                                    pargs) == 0);
    unsigned char buf[32] = {0};
    memcpy(buf, &sp, sizeof sp);
    memcpy(buf + sizeof sp, &val, 4);
    size_t bufsize = sizeof buf;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &bufsize,
                     CU_LAUNCH_PARAM_END};
    CHECK("cuLaunchKernel with a packed parameter buffer",
          cuLaunchKernel(kernel("form_extra", form_extra), 1, 1, 1, 1, 1, 1, 0, NULL, NULL,
                         extra) == 0);
    CUstream cs;
    CUgraph g;
    CUgraphExec ge;
    CHECK("capture a launch into a graph and launch it twice",
          cuStreamCreate(&cs, 0) == 0 &&
              cuStreamBeginCapture(cs, CU_STREAM_CAPTURE_MODE_GLOBAL) == 0 &&
              cuLaunchKernel(kernel("form_graph", form_graph), 1, 1, 1, 1, 1, 1, 0, cs, pargs,
                             NULL) == 0 &&
              cuStreamEndCapture(cs, &g) == 0 && cuGraphInstantiate(&ge, g, 0) == 0 &&
              cuGraphLaunch(ge, cs) == 0 && cuGraphLaunch(ge, cs) == 0 &&
              cuStreamSynchronize(cs) == 0 && cuGraphExecDestroy(ge) == 0 &&
              cuGraphDestroy(g) == 0 && cuStreamDestroy(cs) == 0);

    uint32_t out[256];
    CHECK("copy back", cuCtxSynchronize() == 0 && cuMemcpyDtoH(out, dev, sizeof out) == 0);
    CHECK("last launch wrote its values", out[0] == 40 && out[255] == 295);
    CHECK("cudaFree", cudaFree(d) == cudaSuccess);
    CHECK("cuMemFree", cuMemFree(untouched) == 0);
    return failures ? 1 : 0;
}
