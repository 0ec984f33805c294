/* test_sim_module.c — modules and libraries: images naming registered kernels, function handles
 * per load, invalid after unload and reused by the next load with another kernel's layout. */
#include "simgpu_test.h"

#include <stdio.h>
#include <unistd.h>

/* k_ptr_int(ptr, int): dst[0] = v. */
static void k_ptr_int(void **p)
{
    **(uint32_t **)p[0] = *(uint32_t *)p[1];
}

/* k_int_int_ptr(int, int, ptr): dst[0] = a * b. */
static void k_int_int_ptr(void **p)
{
    **(uint32_t **)p[2] = *(uint32_t *)p[0] * *(uint32_t *)p[1];
}

static void register_kernels(void)
{
    static const size_t a[] = {8, 4}, b[] = {4, 4, 8};
    assert_non_null(simgpu_register("k_ptr_int", k_ptr_int, 2, a));
    assert_non_null(simgpu_register("k_int_int_ptr", k_int_int_ptr, 3, b));
}

static void check_param(CUfunction f, size_t i, size_t want_off, size_t want_size)
{
    size_t off, size;
    CK(cuFuncGetParamInfo(f, i, &off, &size));
    assert_int_equal(off, want_off);
    assert_int_equal(size, want_size);
}

static uint32_t read_word(CUdeviceptr d)
{
    uint32_t v;
    CK(cuMemcpyDtoH(&v, d, 4));
    return v;
}

SIM_TEST(test_handle_reused_with_new_layout)
{
    (void)state;
    register_kernels();
    CUmodule a, b;
    CUfunction f, g;
    CUdeviceptr d;
    CK(cuMemAlloc(&d, 4096));
    CK(cuModuleLoadData(&a, "simgpu-module:k_ptr_int"));
    CK(cuModuleGetFunction(&f, a, "k_ptr_int"));
    assert_ptr_not_equal(f, simgpu_function_of(k_ptr_int)); /* a handle of the module's own */
    check_param(f, 1, 8, 4);
    uint32_t v = 41;
    void *args_a[] = {&d, &v};
    CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args_a, NULL));
    assert_int_equal(read_word(d), 41);

    CK(cuModuleUnload(a));
    size_t off, size;
    assert_int_equal(cuFuncGetParamInfo(f, 0, &off, &size), CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args_a, NULL),
                     CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(cuModuleUnload(a), CUDA_ERROR_INVALID_VALUE);

    CK(cuModuleLoadData(&b, "simgpu-module:k_int_int_ptr"));
    CK(cuModuleGetFunction(&g, b, "k_int_int_ptr"));
    assert_ptr_equal(g, f); /* reused: the same value now runs another kernel */
    check_param(g, 0, 0, 4);
    check_param(g, 2, 8, 8);
    const char *name;
    CK(cuFuncGetName(&name, g));
    assert_string_equal(name, "k_int_int_ptr");
    uint32_t x = 6, y = 7;
    void *args_b[] = {&x, &y, &d};
    CK(cuLaunchKernel(g, 1, 1, 1, 1, 1, 1, 0, NULL, args_b, NULL));
    assert_int_equal(read_word(d), 42);
    CK(cuModuleUnload(b));
    CK(cuMemFree(d));
}

SIM_TEST(test_bad_images_and_names)
{
    (void)state;
    register_kernels();
    static const char *const bad[] = {"",
                                      "garbage",
                                      "simgpu-module:",
                                      "simgpu-module:nope",
                                      "simgpu-module:k_ptr_int,",
                                      "simgpu-module:k_ptr_int,,x"};
    CUmodule m;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(cuModuleLoadData(&m, bad[i]), CUDA_ERROR_INVALID_IMAGE);
    CK(cuModuleLoadData(&m, "simgpu-module:k_ptr_int,k_int_int_ptr"));
    CUfunction f, g;
    CK(cuModuleGetFunction(&f, m, "k_ptr_int"));
    CK(cuModuleGetFunction(&g, m, "k_int_int_ptr"));
    assert_ptr_not_equal(f, g);
    assert_int_equal(cuModuleGetFunction(&f, m, "k_missing"), CUDA_ERROR_NOT_FOUND);
    CK(cuModuleUnload(m));
    assert_int_equal(cuModuleGetFunction(&f, m, "k_ptr_int"), CUDA_ERROR_INVALID_HANDLE);
}

SIM_TEST(test_module_from_file)
{
    (void)state;
    register_kernels();
    char path[] = "/tmp/simgpu-module-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("simgpu-module:k_int_int_ptr\n", f);
    fclose(f);
    CUmodule m;
    CUfunction g;
    CK(cuModuleLoad(&m, path));
    unlink(path);
    CK(cuModuleGetFunction(&g, m, "k_int_int_ptr"));
    check_param(g, 2, 8, 8);
    CK(cuModuleUnload(m));
    assert_int_equal(cuModuleLoad(&m, path), CUDA_ERROR_FILE_NOT_FOUND);
}

SIM_TEST(test_library_kernels)
{
    (void)state;
    register_kernels();
    CUlibrary lib;
    CUkernel k;
    CUfunction f, g;
    CK(cuLibraryLoadData(&lib, "simgpu-module:k_ptr_int", NULL, NULL, 0, NULL, NULL, 0));
    CK(cuLibraryGetKernel(&k, lib, "k_ptr_int"));
    CK(cuKernelGetFunction(&f, k));
    assert_ptr_equal(f, (CUfunction)k);
    size_t off, size;
    CK(cuKernelGetParamInfo(k, 1, &off, &size));
    assert_int_equal(off, 8);
    CUmodule m;
    assert_int_equal(cuModuleGetFunction(&g, (CUmodule)lib, "k_ptr_int"),
                     CUDA_ERROR_INVALID_HANDLE); /* a library is not a module */
    CK(cuLibraryUnload(lib));
    assert_int_equal(cuKernelGetFunction(&f, k), CUDA_ERROR_INVALID_HANDLE);
    CK(cuModuleLoadData(&m, "simgpu-module:k_int_int_ptr"));
    CK(cuModuleGetFunction(&g, m, "k_int_int_ptr"));
    assert_ptr_equal(g, f); /* the library's freed handle, reused by a module */
    CK(cuModuleUnload(m));
}

SIM_TEST(test_entry_points_found)
{
    (void)state;
    static const char *const names[] = {
        "cuModuleLoad",      "cuModuleLoadData",   "cuModuleGetFunction", "cuModuleUnload",
        "cuLibraryLoadData", "cuLibraryGetKernel", "cuLibraryUnload",     "cuKernelGetFunction"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *fn = NULL;
        CUdriverProcAddressQueryResult st;
        CK(cuGetProcAddress(names[i], &fn, 12080, CU_GET_PROC_ADDRESS_DEFAULT, &st));
        assert_non_null(fn);
    }
}

int main(void)
{
    sim_test_ctx();
    return sim_test_run(NULL);
}
