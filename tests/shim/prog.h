/* prog.h — what the shim's test programs (*_prog.c) share: a driver call that must succeed. */
#ifndef SHIM_TEST_PROG_H
#define SHIM_TEST_PROG_H

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

/* Runs a driver call; on an error, names the call and its result on stderr and exits 1 (the
   scripts read a non-zero status as the run's failure). */
#define CK(call)                                                                                   \
    do {                                                                                           \
        CUresult rc_ = (call);                                                                     \
        if (rc_ != CUDA_SUCCESS) {                                                                 \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, (int)rc_);        \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* Initialises the driver and makes device 0's primary context current; returns it. */
static inline CUcontext prog_primary_ctx(void)
{
    CUcontext ctx;
    CUdevice dev;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    return ctx;
}

#endif
