/* test_sim_illegal.c — a kernel touching unmapped memory fails with a sticky illegal address.
 * One process per case: the error poisons the context, as on a device. */
#include "simgpu_test.h"

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static void k_write(void **p)
{
    *(volatile uint32_t *)*(uint32_t **)p[0] = 42;
}

static CUfunction write_fn(void)
{
    static const size_t sizes[] = {8};
    return simgpu_register("write_word", k_write, 1, sizes);
}

/* Runs body in a child process; returns its exit status. */
static int in_child(void (*body)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        body();
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#define CHILD_CHECK(cond, code)                                                                    \
    do {                                                                                           \
        if (!(cond))                                                                               \
            _exit(code);                                                                           \
    } while (0)

static void unmapped_then_sticky(void)
{
    CUcontext ctx;
    CHILD_CHECK(cuInit(0) == CUDA_SUCCESS, 10);
    CHILD_CHECK(cuDevicePrimaryCtxRetain(&ctx, 0) == CUDA_SUCCESS, 11);
    CHILD_CHECK(cuCtxSetCurrent(ctx) == CUDA_SUCCESS, 12);
    CUmemGenericAllocationHandle h;
    CUdeviceptr va;
    CUmemAllocationProp prop = {0};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CHILD_CHECK(cuMemAddressReserve(&va, 2 * MIB, 0, 0, 0) == CUDA_SUCCESS, 13);
    CHILD_CHECK(cuMemCreate(&h, 2 * MIB, &prop, 0) == CUDA_SUCCESS, 14);
    CHILD_CHECK(cuMemMap(va, 2 * MIB, 0, h, 0) == CUDA_SUCCESS, 15);
    /* mapped but no cuMemSetAccess yet: the kernel may not touch it */
    void *args[] = {&va};
    CHILD_CHECK(cuLaunchKernel(write_fn(), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL) == 0, 16);
    CHILD_CHECK(cuCtxSynchronize() == CUDA_ERROR_ILLEGAL_ADDRESS, 17);
    /* sticky: later calls fail too, and nothing more runs */
    CUdeviceptr p;
    CHILD_CHECK(cuMemAlloc(&p, 4096) == CUDA_ERROR_ILLEGAL_ADDRESS, 18);
    CHILD_CHECK(cuLaunchKernel(write_fn(), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL) ==
                    CUDA_ERROR_ILLEGAL_ADDRESS,
                19);
    struct simgpu_stats s;
    simgpu_get_stats(&s);
    CHILD_CHECK(s.illegal_accesses == 1, 20);
}

/* In a forked child: the driver initialised and device 0's primary context current. */
static void child_context(void)
{
    CUcontext ctx;
    cuInit(0);
    cuDevicePrimaryCtxRetain(&ctx, 0);
    cuCtxSetCurrent(ctx);
}

static void freed_memory(void)
{
    child_context();
    CUdeviceptr p;
    CHILD_CHECK(cuMemAlloc(&p, 4096) == CUDA_SUCCESS, 10);
    CHILD_CHECK(cuMemFree(p) == CUDA_SUCCESS, 11);
    void *args[] = {&p};
    CHILD_CHECK(cuLaunchKernel(write_fn(), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL) == 0, 12);
    CHILD_CHECK(cuStreamSynchronize(NULL) == CUDA_ERROR_ILLEGAL_ADDRESS, 13);
}

static void forked_child_is_refused(void)
{
    child_context();
    CUdeviceptr p;
    CHILD_CHECK(cuMemAlloc(&p, 4096) == CUDA_SUCCESS, 10);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        _exit(cuMemAlloc(&p, 4096) == CUDA_ERROR_NOT_PERMITTED ? 0 : 1);
    int status;
    waitpid(pid, &status, 0);
    CHILD_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, 11);
    CHILD_CHECK(cuMemFree(p) == CUDA_SUCCESS, 12); /* the parent carries on */
}

SIM_TEST(test_unmapped_access_is_sticky_illegal_address)
{
    (void)state;
    assert_int_equal(in_child(unmapped_then_sticky), 0);
}

SIM_TEST(test_freed_memory_access_is_illegal_address)
{
    (void)state;
    assert_int_equal(in_child(freed_memory), 0);
}

SIM_TEST(test_fork_child_cannot_use_the_device)
{
    (void)state;
    assert_int_equal(in_child(forked_child_is_refused), 0);
}

int main(void)
{
    setenv("SIMGPU_QUIET", "1", 1);
    return sim_test_run(NULL);
}
