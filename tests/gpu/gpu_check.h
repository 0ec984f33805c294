// gpu_check.h — what the real-GPU programs in tests/gpu/ share: their "ok / not ok" checks, the
// driver-call check, a clock, VMM allocation properties and the host-memory probe.
//
// Included by exactly one translation unit per program: `failures` is that program's count of
// "not ok" lines, which decides its exit status.
#ifndef GPU_CHECK_H
#define GPU_CHECK_H

#include <cuda.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int failures;

/* Counts a "not ok" line; safe from any thread. */
static inline void count_failure()
{
    __atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
}

#define CHECK(name, cond)                                                                          \
    do {                                                                                           \
        bool ok_ = (cond);                                                                         \
        printf("%s - %s\n", ok_ ? "ok" : "not ok", name);                                          \
        if (!ok_)                                                                                  \
            count_failure();                                                                       \
    } while (0)

/* Whether a CUDA driver and a GPU are usable; prints the skip line if not (the caller exits 77,
   so the suite skips cleanly on a machine without one). */
static inline bool gpu_present()
{
    if (cuInit(0) != CUDA_SUCCESS) {
        printf("skip - no usable CUDA driver / GPU\n");
        return false;
    }
    int count = 0;
    if (cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
        printf("skip - no GPU\n");
        return false;
    }
    return true;
}

/* Returns whether r is CUDA_SUCCESS; otherwise prints a "not ok" line naming the call and its
   line and counts a failure. Safe from any thread. */
static inline bool cu_ok(CUresult r, const char *call, int line)
{
    if (r == CUDA_SUCCESS)
        return true;
    const char *s = "?";
    cuGetErrorName(r, &s);
    printf("not ok - %s -> %s (line %d)\n", call, s, line);
    count_failure();
    return false;
}
#define CU_OK(call) cu_ok((call), #call, __LINE__)
// For setup a function cannot go on without: returns 1 from it after the "not ok" line.
#define CU(call)                                                                                   \
    do {                                                                                           \
        if (!CU_OK(call))                                                                          \
            return 1;                                                                              \
    } while (0)

static inline double now_ms()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Pinned VMM memory at a location of that type, id 0 (device 0, or host node 0). */
static inline CUmemAllocationProp prop_at(CUmemLocationType where)
{
    CUmemAllocationProp p;
    memset(&p, 0, sizeof p);
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = where;
    p.location.id = 0;
    return p;
}

/* Read and write access for device 0. */
static inline CUmemAccessDesc rw_on_device()
{
    CUmemAccessDesc d;
    d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    d.location.id = 0;
    d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    return d;
}

/* Prints attribute a of dev; returns its value, or -1 when the driver does not know it (an older
   driver answers CUDA_ERROR_INVALID_VALUE), after printing the error. */
static inline int attribute_fact(CUdevice dev, int a, const char *what)
{
    int v = 0;
    CUresult r = cuDeviceGetAttribute(&v, (CUdevice_attribute)a, dev);
    if (r == CUDA_SUCCESS) {
        printf("fact: attribute %d (%s) = %d\n", a, what, v);
        return v;
    }
    const char *s = "?";
    cuGetErrorName(r, &s);
    printf("fact: attribute %d (%s) not known to this driver: %s\n", a, what, s);
    return -1;
}

/* One granule created at loc and released; prints the outcome. */
static inline bool try_create(CUmemLocation loc, size_t gran, const char *what)
{
    CUmemAllocationProp p = prop_at(loc.type);
    p.location.id = loc.id;
    CUmemGenericAllocationHandle h;
    CUresult r = cuMemCreate(&h, gran, &p, 0);
    const char *s = "CUDA_SUCCESS";
    if (r != CUDA_SUCCESS)
        cuGetErrorName(r, &s);
    CUresult rel = r == CUDA_SUCCESS ? cuMemRelease(h) : CUDA_SUCCESS;
    printf("fact: probe cuMemCreate at %s node %d -> %s\n", what, loc.id, s);
    if (r == CUDA_SUCCESS)
        CHECK("the probe allocation is released", rel == CUDA_SUCCESS);
    return r == CUDA_SUCCESS;
}

/* As NCCL probes host memory (ncclCuMemHostEnable in NCCL's src/misc/cudawrap.cc;
   ncclCuMemHostAlloc in NCCL's src/include/alloc.h): HOST_NUMA at the node of attribute 134 (-1
   means no NUMA: node 0), then HOST. Returns whether one worked, and where. */
static inline bool probe_host(CUdevice dev, size_t gran, CUmemLocation *where)
{
    int node = attribute_fact(dev, 134, "HOST_NUMA_ID");
    CUmemLocation numa = {CU_MEM_LOCATION_TYPE_HOST_NUMA, node > 0 ? node : 0};
    CUmemLocation host = {CU_MEM_LOCATION_TYPE_HOST, 0};
    bool by_numa = try_create(numa, gran, "HOST_NUMA");
    bool by_host = try_create(host, gran, "HOST");
    *where = by_numa ? numa : host;
    return by_numa || by_host;
}

#endif
