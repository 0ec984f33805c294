/* test_sim_kernel.c — kernels: parameter layout and passing, launch forms, zero-copy accounting,
 * capture. */
#include "simgpu_test.h"

struct pair {
    CUdeviceptr ptr;
    uint32_t n, seed;
};

/* Kernel with a by-value struct parameter: fills pair.ptr[0..n) with seed + i. */
static void k_fill_struct(void **p)
{
    struct pair *pr = p[1];
    uint32_t scale = *(uint32_t *)p[0];
    uint32_t *dst = (uint32_t *)(uintptr_t)pr->ptr;
    for (uint32_t i = 0; i < pr->n; i++)
        dst[i] = scale * (pr->seed + i);
}

/* Kernel touching one word in each of npages pages: base, npages. */
static void k_touch_pages(void **p)
{
    volatile uint32_t *base = *(uint32_t **)p[0];
    size_t npages = *(size_t *)p[1];
    for (size_t i = 0; i < npages; i++)
        base[i * 1024] += 1;
}

/* One word in each 2 MiB granule of n granules. */
static void k_touch_granules(void **p)
{
    volatile uint32_t *base = *(uint32_t **)p[0];
    size_t n = *(size_t *)p[1];
    for (size_t i = 0; i < n; i++)
        base[i * (2 * MIB / 4) + 7] += 1;
}

static void k_nothing(void **p)
{
    (void)p;
}

static CUfunction struct_fn(void)
{
    static const size_t sizes[] = {4, sizeof(struct pair)};
    return simgpu_register("fill_struct", k_fill_struct, 2, sizes);
}

SIM_TEST(test_param_layout)
{
    (void)state;
    static const size_t sizes[] = {4, 16, 1, 12, 8};
    CUfunction f = simgpu_register("layout", k_nothing, 5, sizes);
    size_t off, size;
    const size_t want_off[] = {0, 8, 24, 28, 40};
    for (size_t i = 0; i < 5; i++) {
        CK(cuFuncGetParamInfo(f, i, &off, &size));
        assert_int_equal(off, want_off[i]);
        assert_int_equal(size, sizes[i]);
    }
    assert_int_equal(cuFuncGetParamInfo(f, 5, &off, &size), CUDA_ERROR_INVALID_VALUE);
    const char *name;
    CK(cuFuncGetName(&name, f));
    assert_string_equal(name, "layout");
    assert_ptr_equal(simgpu_register("again", k_nothing, 0, NULL), f);
    assert_ptr_equal(simgpu_function_of(k_nothing), f);
    CUfunction s = struct_fn();
    assert_ptr_equal(simgpu_function_of(k_fill_struct), s);
}

static void check_filled(CUdeviceptr d, uint32_t n, uint32_t scale, uint32_t seed)
{
    uint32_t out[256];
    CK(cuMemcpyDtoH(out, d, n * 4));
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(out[i], scale * (seed + i));
}

SIM_TEST(test_launch_forms_pass_struct_params)
{
    (void)state;
    CUdeviceptr d;
    CK(cuMemAlloc(&d, 4096));
    uint32_t scale = 3;
    struct pair pr = {d, 256, 10};
    void *args[] = {&scale, &pr};
    CK(cuLaunchKernel(struct_fn(), 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
    check_filled(d, 256, 3, 10);

    /* the same through a packed parameter buffer */
    unsigned char buf[24] = {0};
    scale = 5;
    memcpy(buf, &scale, 4);
    memcpy(buf + 8, &pr, sizeof pr);
    size_t bufsize = sizeof buf;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &bufsize,
                     CU_LAUNCH_PARAM_END};
    CK(cuLaunchKernel(struct_fn(), 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
    check_filled(d, 256, 5, 10);

    CUlaunchConfig cfg = {0};
    cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 1;
    scale = 7;
    CK(cuLaunchKernelEx(&cfg, struct_fn(), args, NULL));
    check_filled(d, 256, 7, 10);
    scale = 9;
    CK(cuLaunchCooperativeKernel(struct_fn(), 1, 1, 1, 1, 1, 1, 0, NULL, args));
    check_filled(d, 256, 9, 10);

    assert_int_equal(cuLaunchKernel(struct_fn(), 0, 1, 1, 1, 1, 1, 0, NULL, args, NULL),
                     CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(cuLaunchKernel((CUfunction)&pr, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL),
                     CUDA_ERROR_INVALID_HANDLE);
    CK(cuMemFree(d));
}

SIM_TEST(test_zero_copy_pages_counted_and_timed)
{
    (void)state;
    CUmemGenericAllocationHandle h;
    CUdeviceptr va = sim_test_vmm(4 * MIB, CU_MEM_LOCATION_TYPE_HOST, &h);
    static const size_t sizes[] = {8, 8};
    CUfunction f = simgpu_register("touch_pages", k_touch_pages, 2, sizes);
    simgpu_set_cost(f, 10.0);
    struct simgpu_stats before = sim_test_stats();
    CUevent a, b;
    CK(cuEventCreate(&a, 0));
    CK(cuEventCreate(&b, 0));
    size_t npages = 300;
    void *args[] = {&va, &npages};
    CK(cuEventRecord(a, NULL));
    CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL)); /* pages re-counted per kernel */
    CK(cuEventRecord(b, NULL));
    CK(cuEventSynchronize(b));
    struct simgpu_stats after = sim_test_stats();
    assert_int_equal(after.zero_copy_kernels - before.zero_copy_kernels, 2);
    assert_int_equal(after.zero_copy_pages - before.zero_copy_pages, 600);
    float ms;
    CK(cuEventElapsedTime(&ms, a, b));
    /* 2 x (10 us + 300 pages x 4096 B / 25 GB/s) */
    double want_us = 2 * (10.0 + 300.0 * 4096 / 25e3);
    assert_true(ms * 1000.0 > want_us - 0.01 && ms * 1000.0 < want_us + 0.01);
    uint32_t word;
    CK(cuMemcpyDtoH(&word, va + 299 * 4096, 4));
    assert_int_equal(word, 2); /* the data went to host memory and is intact */
    CK(cuMemUnmap(va, 4 * MIB));
    CK(cuMemRelease(h));
    CK(cuMemAddressFree(va, 4 * MIB));
    CK(cuEventDestroy(a));
    CK(cuEventDestroy(b));
}

/* A kernel may read any amount of host-located memory through the link: 600 granules (1.2 GiB,
   more than the 256 an earlier table held) read by one kernel are all legal, each one page. */
SIM_TEST(test_zero_copy_of_many_granules)
{
    (void)state;
    size_t n = 600;
    CUmemGenericAllocationHandle h;
    CUdeviceptr va = sim_test_vmm(n * 2 * MIB, CU_MEM_LOCATION_TYPE_HOST, &h);
    static const size_t sizes[] = {8, 8};
    CUfunction f = simgpu_register("touch_granules", k_touch_granules, 2, sizes);
    struct simgpu_stats before = sim_test_stats();
    void *args[] = {&va, &n};
    CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CK(cuCtxSynchronize());
    struct simgpu_stats after = sim_test_stats();
    assert_int_equal(after.illegal_accesses - before.illegal_accesses, 0);
    assert_int_equal(after.zero_copy_pages - before.zero_copy_pages, 2 * n);
    uint32_t word;
    CK(cuMemcpyDtoH(&word, va + (n - 1) * 2 * MIB + 7 * 4, 4));
    assert_int_equal(word, 2); /* both kernels wrote the last granule */
}

SIM_TEST(test_capture_and_graph_replay)
{
    (void)state;
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    CUdeviceptr d;
    CK(cuMemAlloc(&d, 4096));
    CK(cuMemsetD32(d, 0, 1024));
    static const size_t sizes[] = {8, 8};
    CUfunction f = simgpu_register("touch_pages", k_touch_pages, 2, sizes);
    size_t npages = 1;
    void *args[] = {&d, &npages};
    CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CUstreamCaptureStatus st;
    CK(cuStreamIsCapturing(s, &st));
    assert_int_equal(st, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    unsigned long kernels_before = sim_test_stats().kernels;
    CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
    CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
    assert_int_equal(cuStreamSynchronize(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CUgraph g;
    CK(cuStreamEndCapture(s, &g));
    CK(cuStreamSynchronize(s));
    assert_int_equal(sim_test_stats().kernels, kernels_before); /* captured, not run */
    CUgraphExec e;
    CK(cuGraphInstantiate(&e, g, 0));
    for (int i = 0; i < 3; i++)
        CK(cuGraphLaunch(e, s));
    CK(cuStreamSynchronize(s));
    uint32_t v;
    CK(cuMemcpyDtoH(&v, d, 4));
    assert_int_equal(v, 6);
    assert_int_equal(sim_test_stats().kernels, kernels_before + 6);
    CK(cuGraphExecDestroy(e));
    CK(cuGraphDestroy(g));
    CK(cuMemFree(d));
    CK(cuStreamDestroy(s));
}

static void per_thread_launch(CUdeviceptr d, uint32_t seed)
{
    void *fn;
    CUdriverProcAddressQueryResult st;
    CK(cuGetProcAddress("cuLaunchKernel", &fn, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                        &st));
    typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  unsigned, unsigned, CUstream, void **, void **);
    launch_fn launch = (launch_fn)fn;
    size_t n = 64;
    void *args[] = {&d, &n, &seed};
    CK(launch(sim_test_fill_fn(), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CK(cuGetProcAddress("cuStreamSynchronize", &fn, 12000,
                        CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
    typedef CUresult (*sync_fn)(CUstream);
    CK(((sync_fn)fn)(NULL));
}

SIM_TEST(test_per_thread_stream_variant_runs)
{
    (void)state;
    CUdeviceptr d;
    CK(cuMemAlloc(&d, 4096));
    per_thread_launch(d, 40);
    uint32_t out[64];
    CK(cuMemcpyDtoH(out, d, sizeof out));
    assert_int_equal(out[63], 103);
    CK(cuMemFree(d));
}

int main(void)
{
    sim_test_ctx();
    return sim_test_run(NULL);
}
