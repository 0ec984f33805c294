/* shim_resid_state.c — the residency manager's start (device facts, budget, streams), its table of
 * managed allocations, its event pool and its exit summary. */
#include "shim_resid.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct resid_ctx resid = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .changed = PTHREAD_COND_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
};

static pthread_once_t start_once = PTHREAD_ONCE_INIT;

uint64_t resid_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int attribute(CUdevice_attribute a)
{
    int v = 0;
    return shim.real.cuDeviceGetAttribute(&v, a, resid.device) == CUDA_SUCCESS ? v : 0;
}

/* What the device leaves out of the default budget: memory the shim cannot see
   (the context, libraries' workspaces, lazily loaded modules). */
static uint64_t reserve_of(uint64_t total)
{
    uint64_t r = total / 16;
    if (r < (128u << 20))
        r = 128u << 20;
    return r > (2ull << 30) ? 2ull << 30 : r;
}

static uint64_t host_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

/* Budget and host budget from the configuration and the device's figures. */
static void set_budgets(uint64_t free_bytes, uint64_t total)
{
    uint64_t reserve = reserve_of(total);
    uint64_t fallback = free_bytes > reserve ? free_bytes - reserve : free_bytes / 2;
    resid.budget = conf_size_resolve(&shim.budget, total, fallback);
    if (resid.budget > total) {
        shim_log(SHIM_LOG_WARN, "budget %llu bytes is above the device's %llu: using the device's",
                 (unsigned long long)resid.budget, (unsigned long long)total);
        resid.budget = total;
    }
    resid.host_budget = conf_size_resolve(&shim.host_budget, host_memory(), host_memory() / 2);
    resid.device_total = total;
}

/* Host chunks: host-located VMM memory when the device supports it (attribute 145,
   or 141 for NUMA nodes); otherwise pinned buffers, if unmapped eviction is accepted. */
static void set_host_support(void)
{
    bool host = attribute(CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED);
    bool numa = attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED);
    bool host_vmm = host || numa;
    resid.host_location = host ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_HOST_NUMA;
    resid.unmapped = !host_vmm;
    resid.can_evict = host_vmm || shim.unmapped_eviction;
    if (host_vmm)
        return;
    if (shim.unmapped_eviction)
        shim_log(SHIM_LOG_WARN, "the device cannot map host memory (no host VMM): evicted "
                                "allocations stay unmapped, and an access libshim does not "
                                "foresee will fault (unmapped_eviction = true)");
    else
        shim_log(SHIM_LOG_WARN, "the device cannot map host memory (no host VMM): libshim will "
                                "not evict, so the budget is only a limit (set "
                                "unmapped_eviction = true to evict to unmapped pinned memory)");
}

static void start(void)
{
    if (shim.mode != CONF_MODE_AUTO)
        return;
    size_t free_bytes = 0, total = 0;
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                .location = {CU_MEM_LOCATION_TYPE_DEVICE, 0}};
    if (shim.real.cuCtxGetDevice(&resid.device) != CUDA_SUCCESS ||
        !attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)) {
        shim_log(SHIM_LOG_WARN, "no current device with virtual memory management: libshim "
                                "records but moves nothing");
        return;
    }
    prop.location.id = resid.device;
    if (shim.real.cuMemGetAllocationGranularity(&resid.gran, &prop,
                                                CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS ||
        resid.gran == 0 || shim.real.cuMemGetInfo_v2(&free_bytes, &total) != CUDA_SUCCESS ||
        shim.real.cuStreamCreate(&resid.to_host, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
        shim.real.cuStreamCreate(&resid.to_device, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
        shim_log(SHIM_LOG_WARN, "could not query the device or create copy streams: libshim "
                                "records but moves nothing");
        return;
    }
    set_budgets(free_bytes, total);
    /* Stream-ordered pools keep freed blocks until their free runs on the device, and
       round: keep two chunks of the budget for what the driver holds that the shim
       does not count. */
    resid.slack = resid.budget > 16 * resid.gran ? 2 * resid.gran : 0;
    set_host_support();
    if (shim.record & CONF_RECORD_MOVES)
        shim_trace_budget(resid.budget, resid.host_budget, resid.device_total);
    shim_log(SHIM_LOG_INFO,
             "budget %llu MiB of %llu MiB (%llu free at start), host budget %llu MiB",
             (unsigned long long)(resid.budget >> 20), (unsigned long long)(total >> 20),
             (unsigned long long)(free_bytes >> 20), (unsigned long long)(resid.host_budget >> 20));
    atomic_store_explicit(&resid.on, true, memory_order_release);
}

bool shim_resid_start(void)
{
    if (atomic_load_explicit(&resid.on, memory_order_acquire))
        return true;
    pthread_once(&start_once, start);
    return atomic_load_explicit(&resid.on, memory_order_acquire);
}

static size_t slot_of(uint64_t id, size_t cap)
{
    return (size_t)(id * 0x9E3779B97F4A7C15ull >> 32) & (cap - 1);
}

struct resid_alloc *resid_find(uint64_t id)
{
    if (!resid.table_cap)
        return NULL;
    struct resid_alloc *a = resid.table[slot_of(id, resid.table_cap)];
    while (a && a->id != id)
        a = a->hnext;
    return a;
}

static int grow_table(void)
{
    size_t cap = resid.table_cap ? 2 * resid.table_cap : 1024;
    struct resid_alloc **t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < resid.table_cap; i++) {
        for (struct resid_alloc *a = resid.table[i], *next; a; a = next) {
            next = a->hnext;
            a->hnext = t[slot_of(a->id, cap)];
            t[slot_of(a->id, cap)] = a;
        }
    }
    free(resid.table);
    resid.table = t;
    resid.table_cap = cap;
    return 0;
}

int resid_insert(struct resid_alloc *a)
{
    if (resid.nallocs + 1 > resid.table_cap && grow_table() != 0)
        return -1;
    size_t s = slot_of(a->id, resid.table_cap);
    a->hnext = resid.table[s];
    resid.table[s] = a;
    resid.nallocs++;
    return 0;
}

void resid_erase(struct resid_alloc *a)
{
    struct resid_alloc **p = &resid.table[slot_of(a->id, resid.table_cap)];
    while (*p && *p != a)
        p = &(*p)->hnext;
    if (*p) {
        *p = a->hnext;
        resid.nallocs--;
    }
}

/* Every allocation, for the victim search. */
void resid_each(void (*fn)(struct resid_alloc *, void *), void *ctx)
{
    for (size_t i = 0; i < resid.table_cap; i++)
        for (struct resid_alloc *a = resid.table[i]; a; a = a->hnext)
            fn(a, ctx);
}

CUevent resid_event_get(void)
{
    if (resid.nevents)
        return resid.events[--resid.nevents];
    CUevent e = NULL;
    if (shim.real.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
        return NULL;
    return e;
}

void resid_event_put(CUevent e)
{
    if (!e)
        return;
    if (resid.nevents == resid.event_cap) {
        size_t cap = resid.event_cap ? 2 * resid.event_cap : 64;
        CUevent *v = realloc(resid.events, cap * sizeof *v);
        if (!v)
            return; /* the event leaks: harmless */
        resid.events = v;
        resid.event_cap = cap;
    }
    resid.events[resid.nevents++] = e;
}

void resid_alloc_free(struct resid_alloc *a)
{
    resid_fence_drop(a->ready);
    free(a->touches);
    free(a->backing);
    free(a);
}

struct resid_fence *resid_fence_new(CUevent e)
{
    struct resid_fence *f = e ? malloc(sizeof *f) : NULL;
    if (f)
        *f = (struct resid_fence){e, 1, ++resid.fence_seq};
    else
        resid_event_put(e);
    return f;
}

struct resid_fence *resid_fence_ref(struct resid_fence *f)
{
    if (f)
        f->refs++;
    return f;
}

void resid_fence_drop(struct resid_fence *f)
{
    if (f && --f->refs == 0) {
        resid_event_put(f->event);
        free(f);
    }
}

void shim_resid_exit_log(void)
{
    if (!atomic_load(&resid.on))
        return;
    pthread_mutex_lock(&resid.lock);
    shim_log(SHIM_LOG_INFO,
             "residency: %llu evictions (%llu cancelled), %llu restores, %.1f ms stalled, budget "
             "%llu MiB",
             (unsigned long long)resid.evictions, (unsigned long long)resid.cancelled,
             (unsigned long long)resid.restores, (double)resid.stall_ns / 1e6,
             (unsigned long long)(resid.budget >> 20));
    pthread_mutex_unlock(&resid.lock);
}
