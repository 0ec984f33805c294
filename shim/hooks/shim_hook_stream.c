/* shim_hook_stream.c — stream creation and destruction: the program's streams are listed
 * (shim_streams.c) so that libshim can wait for the program's work alone. */
#include "shim_hooks.h"

CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    SHIM_NEED_REAL(cuStreamCreate);
    CUresult rc = shim.real.cuStreamCreate(phStream, Flags);
    if (rc == CUDA_SUCCESS && phStream)
        shim_streams_created(*phStream);
    return rc;
}

CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    SHIM_NEED_REAL(cuStreamCreateWithPriority);
    CUresult rc = shim.real.cuStreamCreateWithPriority(phStream, flags, priority);
    if (rc == CUDA_SUCCESS && phStream)
        shim_streams_created(*phStream);
    return rc;
}

CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream)
{
    SHIM_NEED_REAL(cuStreamDestroy_v2);
    shim_streams_destroyed(hStream); /* first: no wait may name it once it is gone */
    shim_resid_stream_destroyed(hStream); /* frees ordered on it are fenced while it exists */
    return shim.real.cuStreamDestroy_v2(hStream);
}
