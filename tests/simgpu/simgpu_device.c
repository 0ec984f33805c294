/* simgpu_device.c — init, version, devices and their attributes, contexts, error strings. */
#include "simgpu_internal.h"

#include <string.h>

#define SIM_DEVICE_NAME "simgpu (simulated NVIDIA H100 80GB HBM3)"

/* rc, or CUDA_ERROR_INVALID_VALUE where rc is success but the answer has nowhere to go. */
static CUresult need_out(CUresult rc, const void *out)
{
    return rc == CUDA_SUCCESS && !out ? CUDA_ERROR_INVALID_VALUE : rc;
}

/* The body of a query: returns what check returned (or CUDA_ERROR_INVALID_VALUE where out is
   NULL), storing value through out only on success; value is evaluated only then. */
#define ANSWER(check, out, value)                                                                  \
    do {                                                                                           \
        CUresult answer_rc_ = need_out(check, out);                                                \
        if (answer_rc_ == CUDA_SUCCESS)                                                            \
            *(out) = (value);                                                                      \
        return answer_rc_;                                                                         \
    } while (0)

CUresult CUDAAPI cuInit(unsigned int flags)
{
    SIM_ENTER(cuInit);
    if (flags)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim.lock);
    sim.initialised = true;
    pthread_mutex_unlock(&sim.lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int *version)
{
    SIM_ENTER(cuDriverGetVersion);
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    *version = sim.driver_version;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *dev, int ordinal)
{
    SIM_ENTER(cuDeviceGet);
    SIM_NEED_ARGS(sim_need_init, !dev);
    if (ordinal < 0 || ordinal >= sim.ndevices)
        return CUDA_ERROR_INVALID_DEVICE;
    *dev = ordinal; /* the simulator's CUdevice is the ordinal */
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *count)
{
    SIM_ENTER(cuDeviceGetCount);
    ANSWER(sim_need_init(), count, sim.ndevices);
}

CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
    SIM_ENTER(cuDeviceGetName);
    CUresult rc = sim_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    strncpy(name, SIM_DEVICE_NAME, (size_t)len - 1);
    name[len - 1] = '\0';
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    SIM_ENTER(cuDeviceTotalMem_v2);
    ANSWER(sim_check_device(dev), bytes, sim.dev[dev].capacity);
}

/* "simgpu-device-NN", NN the ordinal (dev < 100). */
static CUuuid uuid_of(CUdevice dev)
{
    CUuuid u;
    memcpy(u.bytes, "simgpu-device-00", 16);
    u.bytes[14] = (char)('0' + dev / 10);
    u.bytes[15] = (char)('0' + dev % 10);
    return u;
}

CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    SIM_ENTER(cuDeviceGetUuid_v2);
    ANSWER(sim_check_device(dev), uuid, uuid_of(dev));
}

/* Attributes of an H100 SXM that programs commonly ask for; others are 0. Every device
   is the same model, on its own PCI bus. */
static int attribute(CUdevice_attribute a, CUdevice dev)
{
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
        return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
        return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
        return 64;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
        return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
        return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
        return 49152;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
        return 32;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        return 132;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        return 9;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
        return 0;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
        return 1;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
        return 1;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
        return 1;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT:
        return 2;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
        return 1;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
        return 1;
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS:
        return 0;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
        return 1;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
        return 1;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
        return 5120;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
        return 52428800;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
        return 1 + dev;
    default:
        return 0;
    }
}

CUresult CUDAAPI cuDeviceGetAttribute(int *value, CUdevice_attribute a, CUdevice dev)
{
    SIM_ENTER(cuDeviceGetAttribute);
    CUresult rc = sim_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!value || (int)a <= 0 || a >= CU_DEVICE_ATTRIBUTE_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    int v = attribute(a, dev);
    if (!sim_driver_gen_attribute(a, &v))
        return CUDA_ERROR_INVALID_VALUE; /* unknown to this driver generation */
    *value = v;
    return CUDA_SUCCESS;
}

/* ---- contexts: a primary context per device, and cuCtxCreate's (simgpu_devices.c) ---- */

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
    SIM_ENTER(cuDevicePrimaryCtxRetain);
    CUresult rc = need_out(sim_check_device(dev), ctx);
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&sim.lock);
    sim.dev[dev].primary_refs++;
    pthread_mutex_unlock(&sim.lock);
    *ctx = sim_primary_ctx(dev);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    SIM_ENTER(cuDevicePrimaryCtxRelease_v2);
    CUresult rc = sim_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&sim.lock);
    if (sim.dev[dev].primary_refs > 0)
        sim.dev[dev].primary_refs--;
    else
        rc = CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    SIM_ENTER(cuDevicePrimaryCtxGetState);
    CUresult rc = need_out(need_out(sim_check_device(dev), flags), active);
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&sim.lock);
    *flags = sim.dev[dev].primary_flags;
    *active = sim.dev[dev].primary_refs > 0;
    pthread_mutex_unlock(&sim.lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    SIM_ENTER(cuDevicePrimaryCtxSetFlags_v2);
    CUresult rc = sim_check_device(dev);
    if (rc == CUDA_SUCCESS) {
        pthread_mutex_lock(&sim.lock);
        sim.dev[dev].primary_flags = flags;
        pthread_mutex_unlock(&sim.lock);
    }
    return rc;
}

CUresult CUDAAPI cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    SIM_ENTER(cuDevicePrimaryCtxReset_v2);
    CUresult rc = sim_check_device(dev);
    if (rc == CUDA_SUCCESS) {
        pthread_mutex_lock(&sim.lock);
        sim_host_wait_device(dev);
        pthread_mutex_unlock(&sim.lock);
    }
    return rc;
}

static bool valid_ctx(CUcontext c)
{
    pthread_mutex_lock(&sim.lock);
    bool ok = sim_ctx_valid(c);
    pthread_mutex_unlock(&sim.lock);
    return ok;
}

/* The thread's context stack below the current context (cuCtxPushCurrent / PopCurrent). */
#define CTX_STACK_MAX 16
static __thread CUcontext ctx_stack[CTX_STACK_MAX];
static __thread int ctx_depth;

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *ctx)
{
    SIM_ENTER(cuCtxGetCurrent);
    ANSWER(sim_need_init(), ctx, sim_current_ctx());
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
    SIM_ENTER(cuCtxSetCurrent);
    CUresult rc = sim_need_init();
    if (rc == CUDA_SUCCESS && ctx && !valid_ctx(ctx))
        rc = CUDA_ERROR_INVALID_CONTEXT;
    if (rc == CUDA_SUCCESS)
        sim_set_current_ctx(ctx);
    return rc;
}

/* "Pushes the given context ctx onto the CPU thread's stack of current contexts" (cuda.h);
   the simulator's stack holds CTX_STACK_MAX contexts below the current one, and a deeper
   push fails with out of memory. */
CUresult sim_ctx_push(CUcontext ctx)
{
    if (sim_current_ctx()) {
        if (ctx_depth == CTX_STACK_MAX)
            return CUDA_ERROR_OUT_OF_MEMORY;
        ctx_stack[ctx_depth++] = sim_current_ctx();
    }
    sim_set_current_ctx(ctx);
    return CUDA_SUCCESS;
}

CUcontext sim_ctx_pop(void)
{
    CUcontext c = sim_current_ctx();
    sim_set_current_ctx(ctx_depth > 0 ? ctx_stack[--ctx_depth] : NULL);
    return c;
}

CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx)
{
    SIM_ENTER(cuCtxPushCurrent_v2);
    CUresult rc = sim_need_init();
    if (rc == CUDA_SUCCESS && !valid_ctx(ctx))
        rc = CUDA_ERROR_INVALID_CONTEXT;
    return rc == CUDA_SUCCESS ? sim_ctx_push(ctx) : rc;
}

CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext *ctx)
{
    SIM_ENTER(cuCtxPopCurrent_v2);
    SIM_NEED(sim_need_ctx);
    CUcontext c = sim_ctx_pop();
    if (ctx)
        *ctx = c;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice *dev)
{
    SIM_ENTER(cuCtxGetDevice);
    ANSWER(sim_need_ctx(), dev, sim_current_device());
}

/* Waits for the work of live context c's device only, then answers the sticky error. */
static CUresult ctx_wait(CUcontext c)
{
    pthread_mutex_lock(&sim.lock);
    sim_host_wait_device(sim_ctx_device(c));
    CUresult rc = sim_sticky();
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

/* Waits for the work of the current context's device only ("Blocks until the current
   context has completed all preceding requested tasks", cuda.h). */
static CUresult ctx_synchronize(void)
{
    SIM_NEED(sim_need_ctx);
    return ctx_wait(sim_current_ctx());
}

CUresult CUDAAPI cuCtxSynchronize(void)
{
    SIM_ENTER(cuCtxSynchronize);
    return ctx_synchronize();
}

/* CUDA 13: the context is named (NULL: the current one). */
CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx)
{
    SIM_ENTER(cuCtxSynchronize_v2);
    if (ctx && !valid_ctx(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    /* synchronising a named context does not need it to be current; it waits for that
       context's device, whichever is current */
    return ctx ? ctx_wait(ctx) : ctx_synchronize();
}

/* ---- errors ---- */

static const struct error {
    CUresult code;
    const char *name, *text;
} errors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE", "the operation is not permitted"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"},
    {CUDA_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED" /* fork child */,
     "operation not permitted (the simulated device is unusable after fork)"},
    {CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
     "part or all of the requested memory range is already mapped"},
    {CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
     "pointer does not correspond to a registered memory region"},
    {CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
     "peer access is already enabled"},
    {CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED",
     "peer access has not been enabled"},
    {CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
     "peer access is not supported between these two devices"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

/* The table's row of code; CUDA_ERROR_INVALID_VALUE (*row untouched) for a code it lacks. */
static CUresult error_row(CUresult code, const struct error **row)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == code) {
            *row = &errors[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGetErrorString(CUresult code, const char **text)
{
    SIM_ENTER(cuGetErrorString);
    const struct error *e = NULL;
    ANSWER(error_row(code, &e), text, e->text);
}

CUresult CUDAAPI cuGetErrorName(CUresult code, const char **name)
{
    SIM_ENTER(cuGetErrorName);
    const struct error *e = NULL;
    ANSWER(error_row(code, &e), name, e->name);
}

CUresult CUDAAPI cuGetExportTable(const void **table, const CUuuid *id)
{
    SIM_ENTER(cuGetExportTable);
    (void)id;
    if (table)
        *table = NULL;
    return CUDA_ERROR_NOT_SUPPORTED; /* private tables of the real runtime: none here */
}
