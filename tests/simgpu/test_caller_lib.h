/* test_caller_lib.h — a shared library (libtest_caller.so) that calls the driver for
 * test_sim_caller and test_sim_host: its calls come from another shared object than the test
 * program's. */
#ifndef TEST_CALLER_LIB_H
#define TEST_CALLER_LIB_H

#include <cuda.h>

/* cuMemAlloc_v2 called from the library; returns what it returns. */
CUresult caller_lib_alloc(CUdeviceptr *p, size_t bytes);

/* cuEventCreate called from the library; returns what it returns. */
CUresult caller_lib_event_create(CUevent *e);

/* cuEventRecord called from the library; returns what it returns. */
CUresult caller_lib_event_record(CUevent e, CUstream s);

/* cuEventQuery called from the library; returns what it returns. */
CUresult caller_lib_event_query(CUevent e);

#endif
