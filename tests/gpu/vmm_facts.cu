// vmm_facts.cu — checks the simulated device's assumptions against a real driver
// (docs/simulated-device.md, issue 2).
//
// Prints one "ok - / not ok - / fact:" line per finding; exits 77 when no GPU is usable, so the
// suite skips cleanly on machines without one. Build and run: make gpu-test.
//   1. host-located VMM memory mapped into a device range is read and written by a kernel;
//   2. one range remapped device -> host -> device keeps its data;
//   3. cuFuncGetParamInfo on a compiled kernel with a by-value struct parameter;
//   4. what cuGetProcAddress returns per flag (legacy / per-thread variants);
//   5. what each VMM call libshim makes costs the host, idle and with unrelated work queued (a
//   call that returns only when that work is done waits for the device);
//   6. whether cuMemUnmap waits for queued work that touches the range (last: it may poison the
//   context).
#include "gpu_check.h"
#include <cuda_runtime.h>
#include <dlfcn.h>

struct Span {
    int *p;
    int n;
};

__global__ void twice_plus_one(int *p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = 2 * p[i] + 1;
}

__global__ void with_struct(Span s, double scale, char tag)
{
    if (threadIdx.x == 0 && s.n > 0)
        s.p[0] = (int)(scale * tag);
}

__global__ void spin_then_write(int *p, long long cycles)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
    p[0] = 1234;
}

static CUresult map_rw(CUdeviceptr va, size_t size, CUmemGenericAllocationHandle h)
{
    CUresult r = cuMemMap(va, size, 0, h, 0);
    if (r != CUDA_SUCCESS)
        return r;
    CUmemAccessDesc acc = rw_on_device();
    return cuMemSetAccess(va, size, &acc, 1);
}

static int host_vmm_and_remap(size_t gran, int host_vmm, CUmemLocation where)
{
    const int n = (int)(gran / sizeof(int));
    static int buf[1 << 20];
    for (int i = 0; i < n; i++)
        buf[i] = i;
    CUdeviceptr va;
    CUmemGenericAllocationHandle dev, host;
    CUmemAllocationProp pd = prop_at(CU_MEM_LOCATION_TYPE_DEVICE);
    CUmemAllocationProp ph = prop_at(where.type);
    ph.location.id = where.id;
    CU(cuMemAddressReserve(&va, gran, 0, 0, 0));
    CU(cuMemCreate(&dev, gran, &pd, 0));
    CU(map_rw(va, gran, dev));
    CU(cuMemcpyHtoD(va, buf, gran));
    twice_plus_one<<<(n + 255) / 256, 256>>>((int *)va, n);
    CU(cuCtxSynchronize());
    if (!host_vmm) {
        printf("fact: host-located VMM not supported (attributes and probe): checks 1-2 skipped\n");
        return 0;
    }
    CUresult r = cuMemCreate(&host, gran, &ph, 0);
    CHECK("cuMemCreate at the host location found", r == CUDA_SUCCESS);
    if (r != CUDA_SUCCESS)
        return 0;
    // evict: copy to host memory through a second mapping, then remap va onto it
    CUdeviceptr tmp;
    CU(cuMemAddressReserve(&tmp, gran, 0, 0, 0));
    CU(map_rw(tmp, gran, host));
    CU(cuMemcpyDtoD(tmp, va, gran));
    CU(cuCtxSynchronize());
    CU(cuMemUnmap(tmp, gran));
    CU(cuMemUnmap(va, gran));
    double t0 = now_ms();
    CU(map_rw(va, gran, host));
    printf("fact: map + set access of %zu bytes of host memory: %.3f ms\n", gran, now_ms() - t0);
    twice_plus_one<<<(n + 255) / 256, 256>>>((int *)va, n); // zero-copy through the link
    CU(cuCtxSynchronize());
    CU(cuMemcpyDtoH(buf, va, gran));
    CHECK("kernel reads and writes host-located memory mapped in the device range",
          buf[0] == 3 && buf[n - 1] == 4 * (n - 1) + 3);
    // restore onto fresh device memory
    CUmemGenericAllocationHandle dev2;
    CU(cuMemCreate(&dev2, gran, &pd, 0));
    CU(map_rw(tmp, gran, dev2));
    CU(cuMemcpyDtoD(tmp, va, gran));
    CU(cuCtxSynchronize());
    CU(cuMemUnmap(tmp, gran));
    CU(cuMemUnmap(va, gran));
    CU(map_rw(va, gran, dev2));
    CU(cuMemcpyDtoH(buf, va, gran));
    CHECK("device -> host -> device remap keeps the data", buf[7] == 4 * 7 + 3);
    CU(cuMemUnmap(va, gran));
    CU(cuMemRelease(dev));
    CU(cuMemRelease(host));
    CU(cuMemRelease(dev2));
    CU(cuMemAddressFree(va, gran));
    CU(cuMemAddressFree(tmp, gran));
    return 0;
}

static int param_info()
{
    CUfunction f;
    if (cudaGetFuncBySymbol(&f, (const void *)with_struct) != cudaSuccess) {
        printf("not ok - cudaGetFuncBySymbol\n");
        return 1;
    }
    size_t off[3], size[3];
    for (int i = 0; i < 3; i++)
        CU(cuFuncGetParamInfo(f, i, &off[i], &size[i]));
    printf(
        "fact: with_struct(Span, double, char) params at offsets %zu %zu %zu sizes %zu %zu %zu\n",
        off[0], off[1], off[2], size[0], size[1], size[2]);
    CHECK("cuFuncGetParamInfo layout is natural alignment (0/16, 16/8, 24/1)",
          off[0] == 0 && size[0] == 16 && off[1] == 16 && size[1] == 8 && off[2] == 24 &&
              size[2] == 1);
    CHECK("cuFuncGetParamInfo past the last parameter is an error",
          cuFuncGetParamInfo(f, 3, &off[0], &size[0]) != CUDA_SUCCESS);
    return 0;
}

static void proc_variant(void *lib, const char *base, const char *legacy, const char *ptds)
{
    const cuuint64_t flags[] = {CU_GET_PROC_ADDRESS_DEFAULT, CU_GET_PROC_ADDRESS_LEGACY_STREAM,
                                CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM};
    const char *want[] = {legacy, legacy, ptds};
    for (int i = 0; i < 3; i++) {
        void *fn = NULL;
        CUdriverProcAddressQueryResult st;
        CUresult r = cuGetProcAddress(base, &fn, CUDA_VERSION, flags[i], &st);
        void *expect = dlsym(lib, want[i]);
        printf("fact: cuGetProcAddress(%s, flags=%llu) -> %s (%s)\n", base,
               (unsigned long long)flags[i], fn == expect ? want[i] : "another pointer",
               r == CUDA_SUCCESS ? "success" : "error");
        char name[160];
        snprintf(name, sizeof name, "cuGetProcAddress(%s, %llu) is exported %s", base,
                 (unsigned long long)flags[i], want[i]);
        CHECK(name, r == CUDA_SUCCESS && fn == expect);
    }
}

// Host milliseconds of each VMM call libshim makes for a 64 MiB allocation (32 chunks of gran),
// one pass idle and one with ~200 ms of unrelated work queued on the legacy stream: a call that
// takes about that long waits for the device, and on an allocation path it would hold the
// program's host thread to the GPU's pace.
static int vmm_call_costs(size_t gran)
{
    enum { N = 32 };
    CUmemAllocationProp pd = prop_at(CU_MEM_LOCATION_TYPE_DEVICE);
    int *busy = NULL;
    if (cudaMalloc(&busy, sizeof *busy) != cudaSuccess) {
        printf("not ok - cudaMalloc of the busy word\n");
        return 1;
    }
    int rate_khz = 0;
    cudaDeviceGetAttribute(&rate_khz, cudaDevAttrClockRate, 0);
    CUevent ev;
    CU(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            spin_then_write<<<1, 1>>>(busy, (long long)rate_khz * 200);
        CUmemGenericAllocationHandle h[N];
        CUdeviceptr va = 0, pa = 0;
        double t[10];
        t[0] = now_ms();
        for (int i = 0; i < N; i++)
            CU(cuMemCreate(&h[i], gran, &pd, 0));
        t[1] = now_ms();
        CU(cuMemAddressReserve(&va, N * gran, 0, 0, 0));
        t[2] = now_ms();
        for (int i = 0; i < N; i++)
            CU(cuMemMap(va + i * gran, gran, 0, h[i], 0));
        t[3] = now_ms();
        CUmemAccessDesc d = rw_on_device();
        CU(cuMemSetAccess(va, N * gran, &d, 1));
        t[4] = now_ms();
        CU(cuMemUnmap(va, N * gran));
        t[5] = now_ms();
        CU(cuMemAddressFree(va, N * gran));
        t[6] = now_ms();
        for (int i = 0; i < N; i++)
            CU(cuMemRelease(h[i]));
        t[7] = now_ms();
        CU(cuEventRecord(ev, 0));
        CUresult q = cuEventQuery(ev);
        t[8] = now_ms();
        CU(cuMemAllocAsync(&pa, N * gran, 0));
        CU(cuMemFreeAsync(pa, 0));
        t[9] = now_ms();
        const char *what = pass ? "with ~200 ms of work queued" : "idle";
        const char *names[] = {"cuMemCreate x32", "cuMemAddressReserve", "cuMemMap x32",
                               "cuMemSetAccess (64 MiB)", "cuMemUnmap (64 MiB)",
                               "cuMemAddressFree", "cuMemRelease x32",
                               "cuEventRecord + cuEventQuery", "cuMemAllocAsync + cuMemFreeAsync"};
        for (int i = 0; i < 9; i++)
            printf("fact: %s, %s: %.3f ms%s\n", what, names[i], t[i + 1] - t[i],
                   pass && t[i + 1] - t[i] > 100 ? " (WAITED for the queued work)" : "");
        if (pass == 1)
            printf("fact: the event query with work queued answered %d\n", (int)q);
        CU(cuCtxSynchronize());
    }
    CU(cuEventDestroy(ev));
    cudaFree(busy);
    return 0;
}

static int unmap_waits(size_t gran)
{
    CUdeviceptr va;
    CUmemGenericAllocationHandle h;
    CUmemAllocationProp pd = prop_at(CU_MEM_LOCATION_TYPE_DEVICE);
    CU(cuMemAddressReserve(&va, gran, 0, 0, 0));
    CU(cuMemCreate(&h, gran, &pd, 0));
    CU(map_rw(va, gran, h));
    int rate_khz = 0;
    cudaDeviceGetAttribute(&rate_khz, cudaDevAttrClockRate, 0);
    long long cycles = (long long)rate_khz * 300; // ~300 ms
    spin_then_write<<<1, 1>>>((int *)va, cycles);
    double t0 = now_ms();
    CUresult r = cuMemUnmap(va, gran);
    double unmap_ms = now_ms() - t0;
    CUresult sync = cuCtxSynchronize();
    const char *sn = "?";
    cuGetErrorName(sync, &sn);
    printf("fact: cuMemUnmap with a ~300 ms kernel queued on the range returned %d after %.1f ms; "
           "the kernel then finished with %s\n",
           (int)r, unmap_ms, sn);
    printf("fact: cuMemUnmap %s for queued work\n", unmap_ms > 200 ? "WAITED" : "did NOT wait");
    return 0;
}

int main()
{
    if (!gpu_present())
        return 77;
    cudaError_t ce = cudaFree(0); // primary context current on this thread
    if (ce != cudaSuccess) {
        printf("not ok - cudaFree(0) -> %s\n", cudaGetErrorName(ce));
        return 1;
    }
    CUdevice dev;
    CU(cuDeviceGet(&dev, 0));
    char name[128];
    CU(cuDeviceGetName(name, sizeof name, dev));
    int drv = 0;
    CU(cuDriverGetVersion(&drv));
    printf("fact: %s, driver %d\n", name, drv);
    int a102 = attribute_fact(dev, 102, "VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED");
    CHECK("device VMM supported (attribute 102)", a102 == 1);
    int a141 = attribute_fact(dev, 141, "HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED");
    int a145 = attribute_fact(dev, 145, "HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED");
    size_t gran = 0;
    CUmemAllocationProp pd = prop_at(CU_MEM_LOCATION_TYPE_DEVICE);
    CU(cuMemGetAllocationGranularity(&gran, &pd, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    printf("fact: device VMM granularity %zu bytes\n", gran);
    CHECK("granularity is 2 MiB as simulated", gran == (2u << 20));
    CUmemLocation where = {CU_MEM_LOCATION_TYPE_HOST, 0};
    bool probed = probe_host(dev, gran, &where);
    if (a141 >= 0 && a145 >= 0)
        CHECK("the attributes agree with the probe (141 or 145 set iff a host cuMemCreate works)",
              (a141 == 1 || a145 == 1) == probed);
    if (host_vmm_and_remap(gran, probed, where) || param_info())
        return 1;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (lib) {
        proc_variant(lib, "cuLaunchKernel", "cuLaunchKernel", "cuLaunchKernel_ptsz");
        proc_variant(lib, "cuMemcpyHtoD", "cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2_ptds");
        proc_variant(lib, "cuMemAlloc", "cuMemAlloc_v2", "cuMemAlloc_v2");
        void *fn = NULL;
        CUdriverProcAddressQueryResult st;
        CUresult pr = cuGetProcAddress("cuCtxSynchronize", &fn, 13000, 0, &st);
        CHECK("cuGetProcAddress(cuCtxSynchronize, 13000) answers", pr == CUDA_SUCCESS && fn);
        printf("fact: cuGetProcAddress(cuCtxSynchronize, 13000) -> %s\n",
               fn == dlsym(lib, "cuCtxSynchronize_v2") ? "cuCtxSynchronize_v2"
               : fn == dlsym(lib, "cuCtxSynchronize")  ? "cuCtxSynchronize"
                                                       : "another pointer");
    }
    if (vmm_call_costs(gran))
        return 1;
    unmap_waits(gran);
    return failures ? 1 : 0;
}
