/* launch_prog.c — launches the shim must read in full (tests/shim/test_wide_launch.sh,
 * test_module_reuse.sh).
 *
 *   launch_prog wide ROUNDS   two sets of WIDE buffers of 2 MiB; each launch of kernel "wide"
 *                             gets one set's pointers in one by-value struct (plus EXTRA
 *                             pointers into the first buffers again, which must count once),
 *                             set A through kernelParams and set B through a
 *                             CU_LAUNCH_PARAM_BUFFER_POINTER block, alternately, ROUNDS times
 *                             each; every buffer's words are read and changed. Prints
 *                             checksum= over every buffer.
 *   launch_prog reload        module A (kernel k_ptr_int(ptr, int)) is loaded, launched on
 *                             buffer X and unloaded; module B (k_int_int_ptr(int, int, ptr))
 *                             is loaded, its function handle must be A's handle value
 *                             (reused), and it is launched on buffer Y. Prints checksum=.
 *   launch_prog reload-library the same with libraries (cuLibraryLoadData, cuLibraryGetKernel,
 *                             cuKernelGetFunction, cuLibraryUnload). */
#include "simgpu.h"

#include <cuda.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIDE   100
#define EXTRA  28
#define BUF    ((size_t)2 << 20)
#define STRIDE 16384 /* words between the ones a kernel changes (64 KiB) */

struct wide_args {
    uint32_t *p[WIDE + EXTRA];
};

/* Every buffer: each STRIDE-th word and the last one, w = w * 31 + i + 1. */
static void k_wide(void **params)
{
    struct wide_args *a = params[0];
    for (size_t i = 0; i < WIDE; i++) {
        for (size_t w = 0; w < BUF / 4; w += STRIDE)
            a->p[i][w] = a->p[i][w] * 31 + (uint32_t)i + 1;
        a->p[i][BUF / 4 - 1] += (uint32_t)i;
    }
}

static uint64_t hash_buffers(CUdeviceptr *d, int n, uint64_t h)
{
    static uint32_t host[BUF / 4];
    for (int i = 0; i < n; i++) {
        if (cuMemcpyDtoH(host, d[i], BUF) != CUDA_SUCCESS)
            return 0;
        for (size_t w = 0; w < BUF / 4; w++)
            h = (h ^ host[w]) * 1099511628211ull;
    }
    return h;
}

static int launch_set(CUfunction f, CUdeviceptr *d, bool through_extra)
{
    struct wide_args a;
    for (int i = 0; i < WIDE + EXTRA; i++)
        a.p[i] = (uint32_t *)(uintptr_t)(d[i % WIDE] + (i < WIDE ? 0 : 8 * (uint64_t)i));
    if (!through_extra) {
        void *args[] = {&a};
        return cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL) != CUDA_SUCCESS;
    }
    size_t size = sizeof a;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &a, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     CU_LAUNCH_PARAM_END};
    return cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra) != CUDA_SUCCESS;
}

static int do_wide(int rounds)
{
    static const size_t sizes[] = {sizeof(struct wide_args)};
    CUfunction f = simgpu_register("wide", k_wide, 1, sizes);
    CUdeviceptr set[2][WIDE];
    for (int s = 0; s < 2; s++) {
        for (int i = 0; i < WIDE; i++) {
            if (cuMemAlloc(&set[s][i], BUF) != CUDA_SUCCESS ||
                cuMemsetD32(set[s][i], (unsigned)(s * WIDE + i), BUF / 4) != CUDA_SUCCESS) {
                fprintf(stderr, "launch_prog: allocation %d of set %d failed\n", i, s);
                return 1;
            }
        }
    }
    for (int r = 0; r < rounds; r++) {
        if (launch_set(f, set[0], false) || launch_set(f, set[1], true)) {
            fprintf(stderr, "launch_prog: launch failed in round %d\n", r);
            return 1;
        }
    }
    CUresult rc = cuCtxSynchronize();
    uint64_t h = rc == CUDA_SUCCESS ? hash_buffers(set[0], WIDE, 1469598103934665603ull) : 0;
    h = h ? hash_buffers(set[1], WIDE, h) : 0;
    if (!h) {
        fprintf(stderr, "launch_prog: the device failed (%d)\n", (int)rc);
        return 1;
    }
    printf("checksum=%016llx\n", (unsigned long long)h);
    return 0;
}

/* k_ptr_int(ptr, int): *ptr = v. */
static void k_ptr_int(void **p)
{
    **(uint32_t **)p[0] = *(uint32_t *)p[1];
}

/* k_int_int_ptr(int, int, ptr): *ptr = a * b. */
static void k_int_int_ptr(void **p)
{
    **(uint32_t **)p[2] = *(uint32_t *)p[0] * *(uint32_t *)p[1];
}

/* Loads image as a module or library and gets its function named name into *f. */
static int load(bool library, const char *image, const char *name, void **handle, CUfunction *f)
{
    if (!library)
        return cuModuleLoadData((CUmodule *)handle, image) ||
               cuModuleGetFunction(f, (CUmodule)*handle, name);
    CUkernel k;
    return cuLibraryLoadData((CUlibrary *)handle, image, NULL, NULL, 0, NULL, NULL, 0) ||
           cuLibraryGetKernel(&k, (CUlibrary)*handle, name) || cuKernelGetFunction(f, k);
}

static int unload(bool library, void *handle)
{
    return library ? cuLibraryUnload((CUlibrary)handle) : cuModuleUnload((CUmodule)handle);
}

static int do_reload(bool library)
{
    static const size_t sa[] = {8, 4}, sb[] = {4, 4, 8};
    simgpu_register("k_ptr_int", k_ptr_int, 2, sa);
    simgpu_register("k_int_int_ptr", k_int_int_ptr, 3, sb);
    CUdeviceptr x, y;
    void *a, *b;
    CUfunction f, g;
    /* parameters live in one struct, so that a stale layout reads inside it */
    struct {
        CUdeviceptr ptr;
        uint32_t v, pad;
    } pa;
    struct {
        uint32_t a, b;
        CUdeviceptr ptr;
    } pb;
    if (cuMemAlloc(&x, BUF) || cuMemAlloc(&y, BUF) ||
        load(library, "simgpu-module:k_ptr_int", "k_ptr_int", &a, &f))
        return 1;
    pa.ptr = x, pa.v = 7;
    void *args_a[] = {&pa.ptr, &pa.v};
    if (cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args_a, NULL) || cuCtxSynchronize() ||
        unload(library, a) || load(library, "simgpu-module:k_int_int_ptr", "k_int_int_ptr", &b, &g))
        return 1;
    if (g != f) {
        fprintf(stderr, "launch_prog: the driver did not reuse the function handle\n");
        return 1;
    }
    pb.a = 6, pb.b = 7, pb.ptr = y;
    void *args_b[] = {&pb.a, &pb.b, &pb.ptr};
    uint32_t vx = 0, vy = 0;
    if (cuLaunchKernel(g, 1, 1, 1, 1, 1, 1, 0, NULL, args_b, NULL) || cuCtxSynchronize() ||
        cuMemcpyDtoH(&vx, x, 4) || cuMemcpyDtoH(&vy, y, 4) || unload(library, b))
        return 1;
    printf("handle reused: %p\nchecksum=%08x%08x\n", (void *)g, vx, vy);
    return 0;
}

int main(int argc, char **argv)
{
    CUcontext ctx;
    if (argc < 2 || cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx))
        return 2;
    if (strcmp(argv[1], "wide") == 0)
        return do_wide(argc > 2 ? atoi(argv[2]) : 3);
    if (strcmp(argv[1], "reload") == 0)
        return do_reload(false);
    if (strcmp(argv[1], "reload-library") == 0)
        return do_reload(true);
    return 2;
}
