/* test_caller_lib.c — libtest_caller.so for test_sim_caller (SIMGPU_FAIL_CALLER) and
 * test_sim_host (SIMGPU_HOST_CALLER).
 *
 * Built with -fno-optimize-sibling-calls: a tail call would leave the test
 * program's return address on the stack, and the driver would see the
 * program, not this library, as its caller. */
#include "test_caller_lib.h"

CUresult caller_lib_alloc(CUdeviceptr *p, size_t bytes)
{
    return cuMemAlloc(p, bytes);
}

CUresult caller_lib_event_create(CUevent *e)
{
    return cuEventCreate(e, CU_EVENT_DEFAULT);
}

CUresult caller_lib_event_record(CUevent e, CUstream s)
{
    return cuEventRecord(e, s);
}

CUresult caller_lib_event_query(CUevent e)
{
    return cuEventQuery(e);
}
