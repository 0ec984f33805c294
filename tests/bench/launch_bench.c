/* launch_bench.c — launches N kernels with two pointer parameters as fast as possible and prints
 * the time per launch. A host synchronisation every STEP launches makes a training-like step that
 * the shim detects, so the measurement covers its steady state (profiled steps excluded by
 * warming up first). Usage: launch_bench N */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define STEP   100
#define WARMUP 5000

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int run(long n, CUfunction f, CUdeviceptr a, CUdeviceptr b)
{
    unsigned count = 1024;
    void *args[] = {&a, &b, &count};
    for (long i = 0; i < n; i++) {
        if (cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, NULL, args, NULL) != CUDA_SUCCESS)
            return -1;
        if (i % STEP == STEP - 1)
            cuStreamSynchronize(NULL);
    }
    return 0;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    CUdeviceptr a, b;
    CUfunction f = (CUfunction)(uintptr_t)0x1000;
    if (cuInit(0) || cuMemAlloc(&a, 8 << 20) || cuMemAlloc(&b, 8 << 20))
        return 1;
    if (run(WARMUP, f, a, b) != 0) /* step detected, profiled steps done */
        return 1;
    double t0 = now_ns();
    if (run(n, f, a, b) != 0)
        return 1;
    double t1 = now_ns();
    printf("launches=%ld ns_per_launch=%.2f\n", n, (t1 - t0) / (double)n);
    return 0;
}
