/* launch_bench.c — launches N kernels with P pointer parameters (default 2, each to its own
 * allocation) and a count as fast as possible and prints the time per launch. A host
 * synchronisation every STEP launches makes a training-like step that the shim detects, so the
 * measurement covers its steady state (profiled steps excluded by warming up first).
 * Usage: launch_bench N [P]; the null driver reads P from the function handle's value. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define STEP         100
#define WARMUP       5000
#define MAX_POINTERS 512

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int run(long n, CUfunction f, void **args)
{
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
    int p = argc > 2 ? atoi(argv[2]) : 2;
    if (p < 1 || p > MAX_POINTERS)
        return 2;
    static CUdeviceptr d[MAX_POINTERS];
    static void *args[MAX_POINTERS + 1];
    unsigned count = 1024;
    CUfunction f = (CUfunction)(uintptr_t)((uintptr_t)p << 12);
    if (cuInit(0))
        return 1;
    for (int i = 0; i < p; i++) {
        if (cuMemAlloc(&d[i], 8 << 20))
            return 1;
        args[i] = &d[i];
    }
    args[p] = &count;
    if (run(WARMUP, f, args) != 0) /* step detected, profiled steps done */
        return 1;
    double t0 = now_ns();
    if (run(n, f, args) != 0)
        return 1;
    double t1 = now_ns();
    printf("launches=%ld ns_per_launch=%.2f\n", n, (t1 - t0) / (double)n);
    return 0;
}
