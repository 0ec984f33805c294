/* shim_resid_driver.h — the residency manager's seam to the driver (as mimalloc's prim.h is
 * its seam to the operating system): every driver call residency makes goes through struct
 * resid_driver, so the state machine, the pools and the policies run against a fake in unit
 * tests (tests/residency/fake_driver.c) and no residency file calls shim.real directly.
 * The real implementation is shim_resid_driver.c. */
#ifndef SHIM_RESID_DRIVER_H
#define SHIM_RESID_DRIVER_H

#include "shim_core.h"

/* The driver seam. Every function returns CUDA_SUCCESS or the driver's error;
   CUDA_ERROR_NOT_SUPPORTED when the driver lacks the entry point. None takes a manager's lock. */
struct resid_driver {
    CUresult (*device)(CUdevice *dev);
    CUresult (*attribute)(int *v, CUdevice_attribute a, CUdevice dev);
    CUresult (*granularity)(size_t *g, CUdevice dev);
    CUresult (*mem_info)(size_t *free_bytes, size_t *total);
    CUresult (*stream_create)(CUstream *s);
    CUresult (*reserve)(CUdeviceptr *va, size_t size, size_t align);
    CUresult (*address_free)(CUdeviceptr va, size_t size);
    /* Physical memory of size bytes on the device, or at host location host_loc (HOST, or
       HOST_NUMA with its node) when host is true. */
    CUresult (*create)(CUmemGenericAllocationHandle *h, size_t size, CUdevice dev, bool host,
                       CUmemLocation host_loc);
    CUresult (*release)(CUmemGenericAllocationHandle h);
    CUresult (*map)(CUdeviceptr va, size_t size, CUmemGenericAllocationHandle h);
    CUresult (*unmap)(CUdeviceptr va, size_t size);
    CUresult (*set_access)(CUdeviceptr va, size_t size, CUdevice dev);
    CUresult (*copy)(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s);
    CUresult (*event_create)(CUevent *e);
    CUresult (*record)(CUevent e, CUstream s);
    /* CUDA_SUCCESS: the work before the record is complete; CUDA_ERROR_NOT_READY: not yet. */
    CUresult (*query)(CUevent e);
    CUresult (*event_sync)(CUevent e);
    CUresult (*wait_event)(CUstream s, CUevent e);
    CUresult (*stream_sync)(CUstream s);
    CUresult (*ctx_sync)(void);
    /* Waits for the program's queued work, not necessarily for the residency manager's copies
       (shim_streams_sync_program); what cuMemFree's implicit synchronisation stands for. */
    CUresult (*program_sync)(void);
    CUresult (*host_alloc)(void **p, size_t n);
    CUresult (*host_free)(void *p);
};

/* The real driver's seam (shim.real); entries the driver lacks answer NOT_SUPPORTED. */
const struct resid_driver *resid_driver_real(void);
/* The name of the real driver's entry point whose call through the real seam last failed, on
   any thread (any error but CUDA_ERROR_NOT_READY), its error in *rc; NULL if none did (*rc then
   CUDA_SUCCESS). For the log. */
const char *resid_driver_failed_call(CUresult *rc);
/* How many calls through the real seam failed so far, on every thread (as above): a search for
   room that saw this count change may have lost its room to libshim's own failure, whichever
   thread made the call (the mover's remap, another allocation's eviction). */
uint64_t resid_driver_failures(void);
/* Whether rc is a sticky device error: the context is unusable and every later call fails. */
bool resid_sticky_error(CUresult rc);

#endif
