/* test_sim_proc.c — cuGetProcAddress per version and flag, export table, init and context rules. */
#include "simgpu_exports.h"
#include "simgpu_test.h"

#include <dlfcn.h>

static void *proc(const char *name, int version, cuuint64_t flags, CUresult *rc,
                  CUdriverProcAddressQueryResult *st)
{
    void *fn = (void *)1;
    *rc = cuGetProcAddress(name, &fn, version, flags, st);
    return fn;
}

SIM_TEST(test_flags_pick_the_variant)
{
    (void)state;
    CUresult rc;
    CUdriverProcAddressQueryResult st;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(lib);
    const struct {
        const char *base;
        cuuint64_t flags;
        const char *want;
    } cases[] = {
        {"cuLaunchKernel", CU_GET_PROC_ADDRESS_DEFAULT, "cuLaunchKernel"},
        {"cuLaunchKernel", CU_GET_PROC_ADDRESS_LEGACY_STREAM, "cuLaunchKernel"},
        {"cuLaunchKernel", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuLaunchKernel_ptsz"},
        {"cuMemcpyHtoD", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuMemcpyHtoD_v2_ptds"},
        {"cuMemcpyHtoD", CU_GET_PROC_ADDRESS_DEFAULT, "cuMemcpyHtoD_v2"},
        {"cuMemAlloc", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuMemAlloc_v2"},
        {"cuStreamBeginCapture", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
         "cuStreamBeginCapture_v2_ptsz"},
        {"cuGetProcAddress", CU_GET_PROC_ADDRESS_DEFAULT, "cuGetProcAddress_v2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        void *fn = proc(cases[i].base, 13000, cases[i].flags, &rc, &st);
        assert_int_equal(rc, CUDA_SUCCESS);
        assert_int_equal(st, CU_GET_PROC_ADDRESS_SUCCESS);
        assert_ptr_equal(fn, dlsym(lib, cases[i].want));
    }
    dlclose(lib);
}

SIM_TEST(test_versions_and_unknown_names)
{
    (void)state;
    CUresult rc;
    CUdriverProcAddressQueryResult st;
    assert_null(proc("cuMemAlloc", 3000, 0, &rc, &st)); /* the _v2 ABI came with 3.2 */
    assert_int_equal(rc, CUDA_ERROR_NOT_FOUND);
    assert_int_equal(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    assert_null(proc("cuNoSuchThing", 13000, 0, &rc, &st));
    assert_int_equal(rc, CUDA_ERROR_NOT_FOUND);
    assert_int_equal(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    assert_null(proc("cuMemAlloc_v2", 13000, 0, &rc, &st)); /* base names only */
    proc("cuMemAlloc", 13000, 4, &rc, &st);
    assert_int_equal(rc, CUDA_ERROR_INVALID_VALUE);
    assert_ptr_equal(proc("simgpu_function_of", 13000, 0, &rc, &st), (void *)simgpu_function_of);
    const void *table = (void *)1;
    CUuuid id = {{0}};
    assert_int_equal(cuGetExportTable(&table, &id), CUDA_ERROR_NOT_SUPPORTED);
    assert_null(table);
}

SIM_TEST(test_per_thread_null_stream_is_not_the_legacy_stream)
{
    (void)state;
    /* a NULL stream given to a _ptsz entry is the thread's own stream:
       capture can begin on it, which the legacy stream refuses */
    assert_int_equal(cuStreamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL),
                     CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CK(cuStreamBeginCapture_v2_ptsz(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CUstreamCaptureStatus st;
    CK(cuStreamIsCapturing_ptsz(NULL, &st));
    assert_int_equal(st, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    CK(cuStreamIsCapturing(NULL, &st));
    assert_int_equal(st, CU_STREAM_CAPTURE_STATUS_NONE);
    CUgraph g;
    CK(cuStreamEndCapture_ptsz(NULL, &g));
    CK(cuGraphDestroy(g));
}

/* Results of calls made in main before cuInit and before a context exists. */
static struct {
    CUresult alloc_before_init, version_rc, alloc_without_ctx, ctx_without_ctx;
    int version;
    CUcontext current;
} early;

SIM_TEST(test_calls_need_init_and_context)
{
    (void)state;
    assert_int_equal(early.alloc_before_init, CUDA_ERROR_NOT_INITIALIZED);
    assert_int_equal(early.version_rc, CUDA_SUCCESS);
    assert_int_equal(early.version, CUDA_VERSION);
    assert_int_equal(early.alloc_without_ctx, CUDA_ERROR_INVALID_CONTEXT);
    assert_int_equal(early.ctx_without_ctx, CUDA_SUCCESS);
    assert_null(early.current);
}

int main(void)
{
    CUdeviceptr p;
    early.alloc_before_init = cuMemAlloc(&p, 16);
    early.version_rc = cuDriverGetVersion(&early.version);
    if (cuInit(0) != CUDA_SUCCESS)
        return 1;
    early.alloc_without_ctx = cuMemAlloc(&p, 16);
    early.current = (CUcontext)&p;
    early.ctx_without_ctx = cuCtxGetCurrent(&early.current);
    sim_test_ctx();
    return sim_test_run(NULL);
}
