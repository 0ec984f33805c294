/* shim_prog.c — small CUDA programs for the shim's behaviour tests (tests/shim/test_behaviour.sh).
 *
 *   shim_prog basic     launches a few kernels, prints checksum=
 *   shim_prog fork      launches, forks; the child calls the driver and exits; the parent
 *                       launches again: both must finish normally
 *   shim_prog threads N N threads launch concurrently on their own streams
 *   shim_prog kinds     one allocation of every kind (plain, async, VMM mapping, pinned host),
 *                       each touched by one launch where it is device memory, then freed */
#include "simgpu.h"

#include <cuda.h>
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
    if (strcmp(argv[1], "threads") == 0)
        return do_threads(argc > 2 ? atoi(argv[2]) : 2);
    return 2;
}
