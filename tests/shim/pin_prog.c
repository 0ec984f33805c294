/* pin_prog.c — allocations handed to users libshim cannot follow, and pointer queries on evicted
 * ones (tests/shim/test_pin.sh). Every allocation is 4 MiB (two 2 MiB chunks), filled with its
 * own pattern.
 *
 *   pin_prog pin     allocates P0..P2 and O0..O5; exports P0 with cuIpcGetMemHandle, asks
 *                    cuMemGetAddressRange about P1 + 12345, asks for P2's handle with
 *                    cuMemRetainAllocationHandle (refused for cuMemAlloc memory); then touches
 * O0..O5 in turn, three rounds (a small budget evicts whatever may move), and prints each call's
 * result, the addresses, and each allocation's checksum. pin_prog query   allocates X, then touches
 * O0..O3 (X is evicted under a small budget), then prints X's pointer attributes (one by one and
 * all at once) relative to X. pin_prog hostvmm maps a VMM range onto host-located memory and prints
 * its memory type. Lines are "key value ...", the same natively and under libshim unless libshim
 * changed an answer. */
#include "simgpu.h"

#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prog.h"

#define BUF    ((size_t)4 << 20)
#define OTHERS 6

/* Adds 1 to every 4096th word of its 4 MiB buffer. */
static void k_touch(void **params)
{
    uint32_t *p = *(uint32_t **)params[0];
    for (size_t i = 0; i < BUF / 4; i += 4096)
        p[i] += 1;
}

static CUfunction touch_fn;

static void touch(CUdeviceptr p)
{
    void *args[] = {&p};
    CK(cuLaunchKernel(touch_fn, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
}

static CUdeviceptr filled(uint32_t seed)
{
    static uint32_t host[BUF / 4];
    CUdeviceptr p;
    CK(cuMemAlloc(&p, BUF));
    for (size_t i = 0; i < BUF / 4; i++)
        host[i] = seed * 2654435761u + (uint32_t)i;
    CK(cuMemcpyHtoD(p, host, BUF));
    return p;
}

static unsigned long long checksum(CUdeviceptr p)
{
    static uint32_t host[BUF / 4];
    CK(cuMemcpyDtoH(host, p, BUF));
    unsigned long long s = 0;
    for (size_t i = 0; i < BUF / 4; i++)
        s = s * 31 + host[i];
    return s;
}

static int pin(void)
{
    CUdeviceptr pinned[3], other[OTHERS];
    for (int i = 0; i < 3; i++)
        pinned[i] = filled(100 + (uint32_t)i);
    for (int i = 0; i < OTHERS; i++)
        other[i] = filled((uint32_t)i);
    CUipcMemHandle ipc;
    printf("ipc %d\n", (int)cuIpcGetMemHandle(&ipc, pinned[0]));
    CUdeviceptr base = 0;
    size_t size = 0;
    CUresult rc = cuMemGetAddressRange(&base, &size, pinned[1] + 12345);
    printf("range %d %lld %zu\n", (int)rc, (long long)(base - pinned[1]), size);
    CUmemGenericAllocationHandle h = 0;
    rc = cuMemRetainAllocationHandle(&h, (void *)(uintptr_t)(pinned[2] + 5));
    printf("retain %d\n", (int)rc);
    if (rc == CUDA_SUCCESS)
        CK(cuMemRelease(h));
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < OTHERS; i++)
            touch(other[i]);
    CK(cuCtxSynchronize());
    for (int i = 0; i < 3; i++)
        printf("addr P%d 0x%llx\nsum P%d %llu\n", i, (unsigned long long)pinned[i], i,
               checksum(pinned[i]));
    for (int i = 0; i < OTHERS; i++)
        printf("addr O%d 0x%llx\nsum O%d %llu\n", i, (unsigned long long)other[i], i,
               checksum(other[i]));
    return 0;
}

static const CUpointer_attribute attrs[] = {
    CU_POINTER_ATTRIBUTE_MEMORY_TYPE,      CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
    CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
    CU_POINTER_ATTRIBUTE_CONTEXT,          CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
    CU_POINTER_ATTRIBUTE_IS_MANAGED,       CU_POINTER_ATTRIBUTE_MAPPED,
    CU_POINTER_ATTRIBUTE_MAPPING_SIZE,
};
#define NATTRS (sizeof attrs / sizeof attrs[0])

/* Prints one answer, relative to x (addresses) and ctx (the context) so that lines compare. */
static void print_attr(const char *how, CUpointer_attribute a, CUresult rc, const uint64_t *v,
                       CUdeviceptr x, CUcontext ctx)
{
    long long shown = (long long)*v;
    if (a == CU_POINTER_ATTRIBUTE_RANGE_START_ADDR || a == CU_POINTER_ATTRIBUTE_DEVICE_POINTER)
        shown = (long long)(*v - x);
    else if (a == CU_POINTER_ATTRIBUTE_CONTEXT)
        shown = *v == (uint64_t)(uintptr_t)ctx;
    else if (a == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL || a == CU_POINTER_ATTRIBUTE_MEMORY_TYPE ||
             a == CU_POINTER_ATTRIBUTE_IS_MANAGED || a == CU_POINTER_ATTRIBUTE_MAPPED)
        shown = (int)(uint32_t)*v;
    printf("%s %d rc=%d value=%lld\n", how, (int)a, (int)rc, shown);
}

static int query(void)
{
    CUcontext ctx;
    CK(cuCtxGetCurrent(&ctx));
    CUdeviceptr x = filled(7);
    for (int i = 0; i < 4; i++)
        touch(filled((uint32_t)i));
    CK(cuCtxSynchronize());
    CUdeviceptr p = x + 100;
    for (size_t i = 0; i < NATTRS; i++) {
        uint64_t v = 0;
        CUresult rc = cuPointerGetAttribute(&v, attrs[i], p);
        print_attr("attr", attrs[i], rc, &v, x, ctx);
    }
    uint64_t vals[NATTRS] = {0};
    void *data[NATTRS];
    for (size_t i = 0; i < NATTRS; i++)
        data[i] = &vals[i];
    CUresult rc = cuPointerGetAttributes(NATTRS, (CUpointer_attribute *)attrs, data, p);
    for (size_t i = 0; i < NATTRS; i++)
        print_attr("attrs", attrs[i], rc, &vals[i], x, ctx);
    uint64_t host = 0;
    printf("host_pointer rc=%d\n",
           (int)cuPointerGetAttribute(&host, CU_POINTER_ATTRIBUTE_HOST_POINTER, p));
    printf("sum X %llu\n", checksum(x));
    return 0;
}

static int hostvmm(void)
{
    CUmemAllocationProp prop = {0};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_HOST;
    CUmemGenericAllocationHandle h;
    CUdeviceptr va;
    CK(cuMemCreate(&h, (size_t)2 << 20, &prop, 0));
    CK(cuMemAddressReserve(&va, (size_t)4 << 20, 0, 0, 0));
    CK(cuMemMap(va, (size_t)2 << 20, 0, h, 0));
    unsigned int type = 0;
    CK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, va));
    CUdeviceptr base;
    size_t size;
    CK(cuMemGetAddressRange(&base, &size, va + 5));
    printf("hostvmm type %u range %lld %zu\n", type, (long long)(base - va), size);
    return 0;
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "";
    prog_primary_ctx();
    static const size_t sizes[] = {8};
    touch_fn = simgpu_register("touch", k_touch, 1, sizes);
    if (!strcmp(which, "pin"))
        return pin();
    if (!strcmp(which, "query"))
        return query();
    if (!strcmp(which, "hostvmm"))
        return hostvmm();
    fprintf(stderr, "usage: pin_prog pin|query|hostvmm\n");
    return 2;
}
