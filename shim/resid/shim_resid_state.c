/* shim_resid_state.c — the residency manager's start (device facts, budget, streams), its table of
 * managed allocations, its event pool and its exit summary. */
#include "shim_resid_internal.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* Serialises managers' starts (each is tried once, by the first thread that needs it). */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;

uint64_t resid_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int attribute(CUdevice_attribute a)
{
    int v = 0;
    return resid.drv->attribute(&v, a, resid.device) == CUDA_SUCCESS ? v : 0;
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
    const conf_size *b = &shim.budget; /* budgets names this device's, else budget */
    if (resid.device >= 0 && resid.device < SHIM_MAX_DEVICE_BUDGETS &&
        shim.device_budget_set[resid.device])
        b = &shim.device_budget[resid.device];
    resid.budget = conf_size_resolve(b, total, fallback);
    if (resid.budget > total) {
        shim_log(SHIM_LOG_WARN, "budget %llu bytes is above the device's %llu: using the device's",
                 (unsigned long long)resid.budget, (unsigned long long)total);
        resid.budget = total;
    }
    resid.host_budget = conf_size_resolve(&shim.host_budget, host_memory(), host_memory() / 2);
    resid.device_total = total;
}

/* Device facts, budgets and copy streams; whether residency can run. */
static bool start_device(void)
{
    size_t free_bytes = 0, total = 0, gran = 0;
    if (resid.drv->device(&resid.device) != CUDA_SUCCESS ||
        !attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)) {
        shim_log(SHIM_LOG_WARN, "no current device with virtual memory management: libshim "
                                "records but moves nothing");
        return false;
    }
    if (resid.drv->granularity(&gran, resid.device) != CUDA_SUCCESS || gran == 0 ||
        resid.drv->mem_info(&free_bytes, &total) != CUDA_SUCCESS ||
        resid.drv->stream_create(&resid.to_host) != CUDA_SUCCESS ||
        resid.drv->stream_create(&resid.to_device) != CUDA_SUCCESS) {
        shim_log(SHIM_LOG_WARN, "could not query the device or create copy streams: libshim "
                                "records but moves nothing");
        return false;
    }
    resid.gran = gran;
    set_budgets(free_bytes, total);
    /* Stream-ordered pools keep freed blocks until their free runs on the device, and
       round: the driver may hold a little the shim does not count. That matters only when
       the budget leaves the device no room for it: then two chunks of the budget are kept
       for it. Below that, the budget is the shim's account of what it sees (TRACE-FORMAT.md,
       `budget`), and keeping chunks back would move memory at a budget equal to the
       program's own peak, where nothing needs to move. */
    bool tight = resid.budget + 2 * resid.gran > free_bytes;
    resid.slack = tight && resid.budget > 16 * resid.gran ? 2 * resid.gran : 0;
    resid_host_detect();
    shim_log(SHIM_LOG_INFO,
             "budget %llu MiB of %llu MiB (%llu free at start), host budget %llu MiB",
             (unsigned long long)(resid.budget >> 20), (unsigned long long)(total >> 20),
             (unsigned long long)(free_bytes >> 20), (unsigned long long)(resid.host_budget >> 20));
    return true;
}

bool resid_start_with(const struct resid_driver *drv)
{
    resid.drv = drv;
    if (!start_device())
        return false;
    if (shim.record & CONF_RECORD_MOVES)
        shim_trace_budget(resid.budget, resid.host_budget, resid.device_total,
                          (uint32_t)resid.device);
    resid_note_started();
    atomic_store_explicit(&resid.on, true, memory_order_release);
    return true;
}

bool shim_resid_start(void)
{
    if (!resid_use_current())
        return false;
    if (atomic_load_explicit(&resid.on, memory_order_acquire))
        return true;
    pthread_mutex_lock(&start_lock);
    /* Only on a driver with SHIM_RESID_NEEDS (shim_state.c); each device's manager once. */
    if (!resid.tried && shim.mode == CONF_MODE_AUTO) {
        resid.tried = true;
        resid_start_with(resid_driver_real());
    }
    pthread_mutex_unlock(&start_lock);
    return atomic_load_explicit(&resid.on, memory_order_acquire);
}

static size_t slot_of(uint64_t id, size_t cap)
{
    return (size_t)(id * 0x9E3779B97F4A7C15ull >> 32) & (cap - 1);
}

/* The two tables by id (units, members) share one shape: a power-of-two array of chains
   linked through hnext. */
#define TABLE_FNS(type, arr, cap, count, find, insert, erase)                                      \
    struct type *find(uint64_t id)                                                                 \
    {                                                                                              \
        if (!resid.cap)                                                                            \
            return NULL;                                                                           \
        struct type *x = resid.arr[slot_of(id, resid.cap)];                                        \
        while (x && x->id != id)                                                                   \
            x = x->hnext;                                                                          \
        return x;                                                                                  \
    }                                                                                              \
    static int grow_##arr(void)                                                                    \
    {                                                                                              \
        size_t ncap = resid.cap ? 2 * resid.cap : 1024;                                            \
        struct type **t = calloc(ncap, sizeof *t);                                                 \
        if (!t)                                                                                    \
            return -1;                                                                             \
        for (size_t i = 0; i < resid.cap; i++) {                                                   \
            for (struct type *x = resid.arr[i], *next; x; x = next) {                              \
                next = x->hnext;                                                                   \
                x->hnext = t[slot_of(x->id, ncap)];                                                \
                t[slot_of(x->id, ncap)] = x;                                                       \
            }                                                                                      \
        }                                                                                          \
        free(resid.arr);                                                                           \
        resid.arr = t;                                                                             \
        resid.cap = ncap;                                                                          \
        return 0;                                                                                  \
    }                                                                                              \
    int insert(struct type *x)                                                                     \
    {                                                                                              \
        if (resid.count + 1 > resid.cap && grow_##arr() != 0)                                      \
            return -1;                                                                             \
        size_t s = slot_of(x->id, resid.cap);                                                      \
        x->hnext = resid.arr[s];                                                                   \
        resid.arr[s] = x;                                                                          \
        resid.count++;                                                                             \
        return 0;                                                                                  \
    }                                                                                              \
    void erase(struct type *x)                                                                     \
    {                                                                                              \
        if (!resid.cap)                                                                            \
            return;                                                                                \
        struct type **p = &resid.arr[slot_of(x->id, resid.cap)];                                   \
        while (*p && *p != x)                                                                      \
            p = &(*p)->hnext;                                                                      \
        if (*p) {                                                                                  \
            *p = x->hnext;                                                                         \
            resid.count--;                                                                         \
        }                                                                                          \
    }

TABLE_FNS(resid_unit, units, units_cap, nunits, resid_find, resid_insert, resid_erase)
TABLE_FNS(resid_member, members, members_cap, nmembers, resid_member_find, resid_member_insert,
          resid_member_erase)

void resid_each(void (*fn)(struct resid_unit *, void *), void *ctx)
{
    for (size_t i = 0; i < resid.units_cap; i++)
        for (struct resid_unit *u = resid.units[i], *next; u; u = next) {
            next = u->hnext; /* fn may take u out */
            fn(u, ctx);
        }
}

struct resid_unit *resid_unit_new(uint64_t bytes)
{
    struct resid_unit *u = calloc(1, sizeof *u);
    if (!u)
        return NULL;
    u->n = (uint32_t)((bytes + resid.gran - 1) / resid.gran);
    u->size = bytes;
    u->plan_alloc = -1;
    u->mapped = (uint64_t)u->n * resid.gran;
    if (!(u->backing = calloc(u->n, sizeof *u->backing))) {
        free(u);
        return NULL;
    }
    return u;
}

struct resid_unit *resid_unit_reserve(uint64_t bytes)
{
    struct resid_unit *u = resid_unit_new(bytes);
    if (!u)
        return NULL;
    CUresult rc = resid.drv->reserve(&u->va, u->mapped, resid.gran);
    if (rc == CUDA_SUCCESS)
        return u;
    resid_driver_failed(rc);
    resid_unit_free(u);
    return NULL;
}

void resid_unit_free(struct resid_unit *u)
{
    resid_plan_unbind(u);
    resid_fence_drop(u->ready);
    resid_fence_drop(u->reading);
    if (u->slab)
        free(u->slab->used);
    free(u->slab);
    free(u->backing);
    free(u);
}

CUevent resid_event_get(void)
{
    if (resid.nevents)
        return resid.events[--resid.nevents];
    CUevent e = NULL;
    CUresult rc = resid.drv->event_create(&e);
    if (rc != CUDA_SUCCESS) {
        resid_driver_failed(rc);
        return NULL;
    }
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

void resid_chunk_fence(struct resid_chunk *c, struct resid_fence *f)
{
    if (!c || !f || (c->fence && c->fence->seq >= f->seq))
        return;
    resid_fence_drop(c->fence);
    c->fence = resid_fence_ref(f);
}

void resid_driver_failed(CUresult rc)
{
    if (rc != CUDA_SUCCESS)
        resid.last_error = rc;
    if (!resid_sticky_error(rc) || resid.sticky)
        return;
    resid.sticky = rc;
    shim_log(SHIM_LOG_ERROR,
             "residency: the device reported a permanent error (%d): libshim "
             "moves nothing more, and the program will see the error",
             (int)rc);
}

bool shim_resid_totals(uint32_t k, struct shim_resid_totals *t)
{
    *t = (struct shim_resid_totals){0};
    struct resid_ctx *c = resid_started_at(k);
    if (!c)
        return false;
    resid_cur = c;
    if (!atomic_load(&resid.on))
        return false;
    pthread_mutex_lock(&resid.lock);
    const struct resid_plan_counts *p = &resid.planned;
    *t = (struct shim_resid_totals){
        .budget = resid.budget,
        .evictions = resid.evictions,
        .cancelled = resid.cancelled,
        .restores = resid.restores,
        .errors = resid.errors,
        .bytes_to_host = resid.bytes_out,
        .bytes_to_device = resid.bytes_in,
        .stall_ns = resid.stall_ns,
        .planned = p->evictions || p->prefetches || resid.plan,
        .planned_evictions = p->evictions,
        .planned_prefetches = p->prefetches,
        .planned_missing = p->missing,
        .departures = p->departures,
        .reactive_evictions = p->reactive,
        .device = (int)resid.device,
        .foreign_allocs = resid.foreign_allocs,
        .foreign_bytes = resid.foreign_bytes,
    };
    pthread_mutex_unlock(&resid.lock);
    return true;
}
