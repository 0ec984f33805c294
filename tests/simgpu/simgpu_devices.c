/* simgpu_devices.c — the table of simulated devices: configuration, contexts, per-device stats,
 * and the fence that keeps a kernel off other devices' memory.
 *
 * SIMGPU_DEVICES=N devices (1..16) share one unified virtual address space, as
 * devices under unified addressing do (CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING
 * is 1), and one physical file; each has its own capacity and accounting
 * (SIMGPU_MEMORY), its own engines (compute, two copy engines, a peer copy
 * queue), its own legacy default stream and its own primary context. */
#include "simgpu_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CTX_MAGIC        0x5349474d50435458ull
#define DEFAULT_CAPACITY ((uint64_t)80 << 30)

static int parse_devices(void)
{
    const char *s = getenv("SIMGPU_DEVICES");
    if (!s || !*s)
        return 1;
    char *end;
    long n = strtol(s, &end, 10);
    if (*end || n < 1 || n > SIM_MAX_DEVICES) {
        sim_diag("ignoring SIMGPU_DEVICES=%s (want a count from 1 to %d); using 1", s,
                 SIM_MAX_DEVICES);
        return 1;
    }
    return (int)n;
}

/* SIMGPU_MEMORY: one size for every device, or "SIZE,SIZE,..." with entry i for device i
   (devices past the list's end take its last entry). A bad entry is reported by its
   position and that device keeps the default. */
static void parse_memory(void)
{
    for (int d = 0; d < sim.ndevices; d++)
        sim.dev[d].capacity = DEFAULT_CAPACITY;
    const char *s = getenv("SIMGPU_MEMORY");
    if (!s || !*s)
        return;
    char item[64];
    int d = 0;
    uint64_t last = DEFAULT_CAPACITY;
    for (const char *p = s; d < SIM_MAX_DEVICES; d++) {
        size_t n = strcspn(p, ",");
        uint64_t v;
        bool ok = n < sizeof item;
        if (ok) {
            memcpy(item, p, n);
            item[n] = '\0';
            ok = sim_parse_size(item, &v) == 0 && v > 0 && v <= SIM_PHYS_MAX / 2;
        }
        if (!ok)
            sim_diag("ignoring entry %d of SIMGPU_MEMORY=%s (want a size such as 2GiB)", d + 1, s);
        last = ok ? v : DEFAULT_CAPACITY;
        if (d < sim.ndevices)
            sim.dev[d].capacity = last;
        if (!p[n])
            break;
        p += n + 1;
    }
    if (d + 1 > sim.ndevices)
        sim_diag("SIMGPU_MEMORY=%s lists %d sizes for %d devices: the extra ones are ignored", s,
                 d + 1, sim.ndevices);
    for (int k = d + 1; k < sim.ndevices; k++)
        sim.dev[k].capacity = last;
}

void sim_devices_configure(void)
{
    sim.ndevices = parse_devices();
    parse_memory();
    sim.stats.capacity_bytes = 0;
    sim.fence_dev = -1;
    for (int d = 0; d < sim.ndevices; d++) {
        sim.dev[d].primary = (struct sim_ctx){CTX_MAGIC, d, true, NULL};
        sim.stats.capacity_bytes += sim.dev[d].capacity;
    }
}

CUcontext sim_primary_ctx(int dev)
{
    return (CUcontext)(void *)&sim.dev[dev].primary;
}

bool sim_ctx_valid(CUcontext c)
{
    for (int d = 0; d < sim.ndevices; d++)
        if (c == sim_primary_ctx(d))
            return true;
    for (const struct sim_ctx *x = sim.created; x; x = x->next)
        if ((CUcontext)(void *)x == c)
            return true;
    return false;
}

int sim_ctx_device(CUcontext c)
{
    return ((const struct sim_ctx *)(const void *)c)->device;
}

int sim_current_device(void)
{
    CUcontext c = sim_current_ctx();
    return c ? sim_ctx_device(c) : 0;
}

CUresult sim_check_device(CUdevice dev)
{
    CUresult rc = sim_need_init();
    if (rc == CUDA_SUCCESS && (dev < 0 || dev >= sim.ndevices))
        rc = CUDA_ERROR_INVALID_DEVICE;
    return rc;
}

/* The fence stays up between kernels and changes only when a kernel of another device runs
   (or peer access changed): changing the protection of every mapping around each kernel
   costs page-table updates in proportion to the memory mapped. Mappings made while a fence
   is up are not fenced until it next changes: a touch of one is missed, never invented. */
void sim_devices_fence(int dev)
{
    if (sim.ndevices == 1 || sim.fence_dev == dev)
        return;
    for (size_t i = 0; i < sim.nmaps; i++) {
        const struct sim_map *m = &sim.maps[i];
        int owner = m->phys->device;
        if (m->phys->host)
            continue; /* host-located memory is reachable from every device (zero-copy) */
        bool fenced = owner != dev && !sim.dev[dev].peer[owner];
        mprotect((void *)(uintptr_t)m->va, m->size, fenced ? PROT_NONE : sim_map_host_prot(m));
    }
    sim.fence_dev = dev;
}

/* ---- contexts made by cuCtxCreate ---- */

/* cuCtxCreate (cuda.h): "Creates a new CUDA context and associates it with the calling
   thread ... If a context is already current to the thread, it is supplanted by the newly
   created context and may be restored by a subsequent call to cuCtxPopCurrent()". The
   simulator's created contexts share their device's streams, memory and peer access with
   its primary context. */
CUresult CUDAAPI cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags,
                                CUdevice dev)
{
    SIM_ENTER(cuCtxCreate_v4);
    (void)params;
    (void)flags;
    CUresult rc = sim_check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    struct sim_ctx *c = malloc(sizeof *c);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&sim.lock);
    *c = (struct sim_ctx){CTX_MAGIC, dev, false, sim.created};
    sim.created = c;
    pthread_mutex_unlock(&sim.lock);
    *pctx = (CUcontext)(void *)c;
    return sim_ctx_push(*pctx);
}

/* Destroys a created context (primary contexts are released, not destroyed: anything else
   is an invalid context here). Its device's work is waited for first. cuCtxDestroy
   (cuda.h): "If ctx is current to the calling thread then ctx will also be popped from the
   current thread's context stack (as though cuCtxPopCurrent() were called)". */
CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx)
{
    SIM_ENTER(cuCtxDestroy_v2);
    SIM_NEED(sim_need_init);
    pthread_mutex_lock(&sim.lock);
    struct sim_ctx **p = &sim.created;
    while (*p && (CUcontext)(void *)*p != ctx)
        p = &(*p)->next;
    struct sim_ctx *c = *p;
    if (c) {
        *p = c->next;
        sim_host_wait_device(c->device);
    }
    pthread_mutex_unlock(&sim.lock);
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (sim_current_ctx() == ctx)
        sim_ctx_pop();
    free(c);
    return CUDA_SUCCESS;
}

/* ---- statistics per device ---- */

int simgpu_get_device_stats(int dev, struct simgpu_device_stats *out)
{
    if (!out || !sim_ensure_init() || dev < 0 || dev >= sim.ndevices)
        return -1;
    pthread_mutex_lock(&sim.lock);
    const struct sim_device *d = &sim.dev[dev];
    *out = (struct simgpu_device_stats){d->capacity, d->bytes, d->peak, d->window_peak, d->kernels};
    pthread_mutex_unlock(&sim.lock);
    return 0;
}

int simgpu_device_count(void)
{
    return sim_ensure_init() ? sim.ndevices : 0;
}
