/* phase_prog.c — a training loop whose step may change mid-run (tests/shim/test_verdict.sh).
 *
 *   phase_prog A B   A steps of pattern one (three launches of "phase_one", then a
 *                    synchronisation), then B steps of pattern two (five launches of "phase_two",
 *                    then a synchronisation), then a teardown as a training script has one: one
 *                    launch of "phase_end" and a read of the buffer. Prints the launch at which
 *                    pattern two began (change_at=, the first launch counts 0) and checksum=.
 *
 * With B = 0 the run's only break of its step is the teardown; with B > 2 the step really
 * changes and the program goes on under the new one. */
#include "simgpu.h"

#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define WORDS 1024

static void k_add(void **params)
{
    uint32_t *p = *(uint32_t **)params[0];
    for (size_t i = 0; i < WORDS; i++)
        p[i] = p[i] * 31u + (uint32_t)i + 1u;
}

static int launch(CUfunction f, CUdeviceptr buf)
{
    void *args[] = {&buf};
    return cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL) != CUDA_SUCCESS;
}

/* steps times: n launches of f, then a synchronisation (the step's loss read). */
static int run_steps(CUfunction f, CUdeviceptr buf, int steps, int n)
{
    for (int s = 0; s < steps; s++) {
        for (int k = 0; k < n; k++)
            if (launch(f, buf))
                return 1;
        if (cuCtxSynchronize() != CUDA_SUCCESS)
            return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = {sizeof(CUdeviceptr)};
    CUcontext ctx;
    CUdeviceptr buf;
    static uint32_t host[WORDS];
    if (argc != 3 || cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx))
        return 2;
    int a = atoi(argv[1]), b = atoi(argv[2]);
    CUfunction one = simgpu_register("phase_one", k_add, 1, sizes);
    CUfunction two = simgpu_register("phase_two", k_add, 1, sizes);
    CUfunction end = simgpu_register("phase_end", k_add, 1, sizes);
    if (cuMemAlloc(&buf, WORDS * 4) || cuMemsetD32(buf, 1, WORDS))
        return 1;
    if (run_steps(one, buf, a, 3) || run_steps(two, buf, b, 5) || launch(end, buf) ||
        cuMemcpyDtoH(host, buf, sizeof host)) {
        fprintf(stderr, "phase_prog: the device failed\n");
        return 1;
    }
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < WORDS; i++)
        h = (h ^ host[i]) * 1099511628211ull;
    printf("change_at=%d\nchecksum=%016llx\n", 3 * a, (unsigned long long)h);
    return 0;
}
