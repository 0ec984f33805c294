/* shim_prog.c — small CUDA programs for the shim's behaviour tests (tests/shim/test_behaviour.sh).
 *
 *   shim_prog basic     launches a few kernels, prints checksum=
 *   shim_prog fork      launches, forks; the child calls the driver and exits; the parent
 *                       launches again: both must finish normally
 *   shim_prog threads N N threads launch concurrently on their own streams
 *   shim_prog kinds     one allocation of every kind (plain, async, VMM mapping, pinned host),
 *                       each touched by one launch where it is device memory, then freed
 *   shim_prog streams   copies and memsets through the driver's per-thread-stream variants
 *                       (_ptsz, _ptds, found by name as a program built with per-thread
 *                       default streams would call them) and the legacy ones, on the NULL
 *                       stream, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD; each has its own
 *                       byte count (printed with the stream it ran on) so that a trace's copy
 *                       records can be told apart */
#include "simgpu.h"

#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N_WORDS 4096

static void add_seed(void **p)
{
    uint32_t *d = *(uint32_t **)p[0];
    uint32_t seed = *(uint32_t *)p[1];
    for (int i = 0; i < N_WORDS; i++)
        d[i] = d[i] * 31 + seed + (uint32_t)i;
}

static CUfunction fn;

static int setup(void)
{
    CUcontext ctx;
    static const size_t sizes[] = {8, 4};
    fn = simgpu_register("add_seed", add_seed, 2, sizes);
    return cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx) || !fn;
}

/* Launches `count` kernels on stream s into a fresh buffer; returns a checksum or 0 on error. */
static uint64_t work(CUstream s, int count)
{
    CUdeviceptr d;
    uint32_t out[N_WORDS];
    if (cuMemAlloc(&d, sizeof out) || cuMemsetD32Async(d, 0, N_WORDS, s))
        return 0;
    for (uint32_t i = 0; i < (uint32_t)count; i++) {
        void *args[] = {&d, &i};
        if (cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s, args, NULL))
            return 0;
    }
    if (cuStreamSynchronize(s) || cuMemcpyDtoH(out, d, sizeof out) || cuMemFree(d))
        return 0;
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < N_WORDS; i++)
        h = (h ^ out[i]) * 1099511628211ull;
    return h;
}

static int do_fork(void)
{
    if (!work(NULL, 5))
        return 1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        CUdeviceptr d;
        CUresult rc = cuMemAlloc(&d, 4096); /* the device is the parent's: refused */
        printf("child: cuMemAlloc -> %d\n", (int)rc);
        _exit(rc == CUDA_SUCCESS ? 3 : 0);
    }
    int st;
    waitpid(pid, &st, 0);
    uint64_t h = work(NULL, 5);
    printf("child exit %d, parent checksum=%016llx\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1,
           (unsigned long long)h);
    return !(WIFEXITED(st) && WEXITSTATUS(st) == 0 && h);
}

static void *thread_main(void *arg)
{
    CUcontext ctx;
    CUstream s;
    uint64_t *res = arg;
    if (cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx) ||
        cuStreamCreate(&s, CU_STREAM_NON_BLOCKING))
        return NULL;
    *res = work(s, 200);
    cuStreamDestroy(s);
    return NULL;
}

static int do_threads(int n)
{
    pthread_t t[16];
    uint64_t res[16] = {0};
    n = n < 1 ? 1 : n > 16 ? 16 : n;
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, thread_main, &res[i]);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    for (int i = 1; i < n; i++)
        if (res[i] != res[0])
            return 1;
    printf("threads=%d checksum=%016llx\n", n, (unsigned long long)res[0]);
    return res[0] == 0;
}

static int touch(CUdeviceptr d, CUstream s)
{
    uint32_t seed = 7;
    void *args[] = {&d, &seed};
    return cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s, args, NULL) != CUDA_SUCCESS;
}

static int vmm_kind(void)
{
    CUmemAllocationProp prop = {0};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CUdeviceptr va;
    CUmemGenericAllocationHandle h;
    size_t sz = 2 << 20;
    return cuMemAddressReserve(&va, sz, 0, 0, 0) || cuMemCreate(&h, sz, &prop, 0) ||
           cuMemMap(va, sz, 0, h, 0) || cuMemSetAccess(va, sz, &acc, 1) || touch(va, NULL) ||
           cuCtxSynchronize() || cuMemUnmap(va, sz) || cuMemRelease(h) || cuMemAddressFree(va, sz);
}

static int do_kinds(void)
{
    CUdeviceptr plain, async;
    void *host;
    CUstream s;
    if (cuStreamCreate(&s, 0) || cuMemAlloc(&plain, 1 << 20) || touch(plain, NULL) ||
        cuMemAllocAsync(&async, 1 << 20, s) || touch(async, s) || cuMemFreeAsync(async, s) ||
        cuStreamSynchronize(s) || cuMemFree(plain) || vmm_kind() ||
        cuMemHostAlloc(&host, 1 << 20, 0) || cuMemFreeHost(host) || cuStreamDestroy(s))
        return 1;
    puts("kinds done");
    return 0;
}

typedef CUresult (*htod_async_fn)(CUdeviceptr, const void *, size_t, CUstream);
typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t);
typedef CUresult (*memset_async_fn)(CUdeviceptr, unsigned int, size_t, CUstream);
typedef CUresult (*memset_fn)(CUdeviceptr, unsigned char, size_t);

/* The entry point named name, as the dynamic linker finds it (the shim's when preloaded). */
static void *entry(const char *name)
{
    void *f = dlsym(RTLD_DEFAULT, name);
    if (!f)
        fprintf(stderr, "no %s\n", name);
    return f;
}

static int do_streams(void)
{
    htod_async_fn htod_async = (htod_async_fn)entry("cuMemcpyHtoDAsync_v2"),
                  htod_async_ptsz = (htod_async_fn)entry("cuMemcpyHtoDAsync_v2_ptsz");
    htod_fn htod_ptds = (htod_fn)entry("cuMemcpyHtoD_v2_ptds");
    memset_async_fn memset_ptsz = (memset_async_fn)entry("cuMemsetD32Async_ptsz");
    memset_fn memset8_ptds = (memset_fn)entry("cuMemsetD8_v2_ptds");
    static char host[1 << 16];
    CUdeviceptr d;
    if (!htod_async || !htod_async_ptsz || !htod_ptds || !memset_ptsz || !memset8_ptds ||
        cuMemAlloc(&d, sizeof host))
        return 1;
    static const struct {
        const char *call, *stream;
        size_t bytes;
    } plan[] = {
        {"cuMemcpyHtoDAsync_v2_ptsz", "per-thread", 12345},
        {"cuMemcpyHtoDAsync_v2", "legacy", 23456},
        {"cuMemcpyHtoDAsync_v2_ptsz(CU_STREAM_LEGACY)", "legacy", 34567},
        {"cuMemcpyHtoDAsync_v2(CU_STREAM_PER_THREAD)", "per-thread", 45678},
        {"cuMemcpyHtoD_v2_ptds", "per-thread", 56789},
        {"cuMemsetD32Async_ptsz", "per-thread", 4 * 1111},
        {"cuMemsetD8_v2_ptds", "per-thread", 2222},
    };
    CUresult rc = htod_async_ptsz(d, host, plan[0].bytes, NULL);
    rc = rc ? rc : htod_async(d, host, plan[1].bytes, NULL);
    rc = rc ? rc : htod_async_ptsz(d, host, plan[2].bytes, CU_STREAM_LEGACY);
    rc = rc ? rc : htod_async(d, host, plan[3].bytes, CU_STREAM_PER_THREAD);
    rc = rc ? rc : htod_ptds(d, host, plan[4].bytes);
    rc = rc ? rc : memset_ptsz(d, 0, plan[5].bytes / 4, NULL);
    rc = rc ? rc : memset8_ptds(d, 0, plan[6].bytes);
    rc = rc ? rc : cuCtxSynchronize();
    rc = rc ? rc : cuMemFree(d);
    for (size_t i = 0; !rc && i < sizeof plan / sizeof plan[0]; i++)
        printf("%s bytes=%zu stream=%s\n", plan[i].call, plan[i].bytes, plan[i].stream);
    return rc != CUDA_SUCCESS;
}

int main(int argc, char **argv)
{
    if (argc < 2 || setup())
        return 2;
    if (strcmp(argv[1], "basic") == 0) {
        uint64_t h = work(NULL, 10);
        printf("checksum=%016llx\n", (unsigned long long)h);
        return h == 0;
    }
    if (strcmp(argv[1], "fork") == 0)
        return do_fork();
    if (strcmp(argv[1], "kinds") == 0)
        return do_kinds();
    if (strcmp(argv[1], "streams") == 0)
        return do_streams();
    if (strcmp(argv[1], "threads") == 0)
        return do_threads(argc > 2 ? atoi(argv[2]) : 2);
    return 2;
}
