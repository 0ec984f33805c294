/* shim_resid_state.c — the residency manager's start (device facts, budget, streams), its table of
 * managed allocations, its event pool and its exit summary. */
#include "shim_resid_internal.h"

#include <stdio.h>
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

static int attribute(struct resid_ctx *r, CUdevice_attribute a)
{
    int v = 0;
    return r->drv->attribute(&v, a, r->device) == CUDA_SUCCESS ? v : 0;
}

/* What the device leaves out of the default budget: memory the shim cannot see
   (the context, libraries' workspaces, lazily loaded modules). */
static uint64_t reserve_of(uint64_t total)
{
    uint64_t keep = total / 16;
    if (keep < (128u << 20))
        keep = 128u << 20;
    return keep > (2ull << 30) ? 2ull << 30 : keep;
}

static uint64_t host_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

/* The smallest budget a size option may give (budget's and budgets' MIN in conf.h). */
static uint64_t budget_min(void)
{
    return (uint64_t)conf_option_get(CONF_BUDGET)->min;
}

/* A budget that cannot be kept, said once when the device's manager starts, in the words a
   configuration error uses ("SOURCE: error: VALUE is out of range (1MiB to 1PiB)") when a share of
   the device comes to less than the minimum: such a budget is refused as SHIM_BUDGET=1 is, and
   libshim keeps none on this device (false). A budget under one granule, which is all libshim
   can map at once, is raised to one granule with a warning: the job asked for as little device
   memory as possible, and one granule is that (true). */
static bool check_budget(struct resid_ctx *r, const conf_size *b, const char *option,
                         const char *source, uint64_t total)
{
    char value[48], lo[48], hi[48];
    conf_size min = {.kind = CONF_SIZE_BYTES, .bytes = budget_min()};
    conf_size max = {.kind = CONF_SIZE_BYTES, .bytes = (uint64_t)conf_option_get(CONF_BUDGET)->max};
    conf_size_format(b, value, sizeof value);
    conf_size_format(&min, lo, sizeof lo);
    conf_size_format(&max, hi, sizeof hi);
    if (b->kind == CONF_SIZE_PERCENT && r->budget < min.bytes) {
        shim_log(SHIM_LOG_ERROR,
                 "%s: error: %s = \"%s\" is out of range (%s to %s): on device %d (%llu MiB) "
                 "it comes to %llu bytes; libshim keeps no budget on device %d and moves nothing "
                 "there",
                 source, option, value, lo, hi, r->device, (unsigned long long)(total >> 20),
                 (unsigned long long)r->budget, r->device);
        return false;
    }
    if (r->budget < r->gran) {
        shim_log(
            SHIM_LOG_WARN,
            "%s: warning: %s = \"%s\" (%llu bytes on device %d) is less than one granule of the "
            "device's memory (%llu bytes, the least libshim can map): raised to %llu bytes",
            source, option, value, (unsigned long long)r->budget, r->device,
            (unsigned long long)r->gran, (unsigned long long)r->gran);
        r->budget = r->gran;
    }
    return true;
}

/* Budget and host budget from the configuration and the device's figures; false when the
   budget cannot be kept (check_budget). */
static bool set_budgets(struct resid_ctx *r, uint64_t free_bytes, uint64_t total)
{
    uint64_t reserve = reserve_of(total);
    uint64_t fallback = free_bytes > reserve ? free_bytes - reserve : free_bytes / 2;
    const conf_size *b = &shim.budget; /* budgets names this device's, else budget */
    const char *option = "budget", *source = shim.budget_source;
    char entry[32];
    if (r->device >= 0 && r->device < SHIM_MAX_DEVICE_BUDGETS &&
        shim.device_budget_set[r->device]) {
        b = &shim.device_budget[r->device];
        snprintf(entry, sizeof entry, "budgets entry %d", r->device + 1);
        option = entry;
        source = shim.device_budget_source;
    }
    r->budget = conf_size_resolve(b, total, fallback);
    if (!check_budget(r, b, option, source[0] ? source : "budget", total))
        return false;
    if (r->budget > total) {
        shim_log(SHIM_LOG_WARN, "budget %llu bytes is above the device's %llu: using the device's",
                 (unsigned long long)r->budget, (unsigned long long)total);
        r->budget = total;
    }
    r->host_budget = conf_size_resolve(&shim.host_budget, host_memory(), host_memory() / 2);
    r->device_total = total;
    return true;
}

/* Device facts, budgets and copy streams; whether residency can run. */
static bool start_device(struct resid_ctx *r)
{
    size_t free_bytes = 0, total = 0, gran = 0;
    if (r->drv->device(&r->device) != CUDA_SUCCESS ||
        !attribute(r, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)) {
        shim_log(SHIM_LOG_WARN, "no current device with virtual memory management: libshim "
                                "records but moves nothing");
        return false;
    }
    bool facts = r->drv->granularity(&gran, r->device) == CUDA_SUCCESS && gran != 0 &&
                 r->drv->mem_info(&free_bytes, &total) == CUDA_SUCCESS;
    r->gran = gran;
    if (facts && !set_budgets(r, free_bytes, total))
        return false;
    if (!facts || r->drv->stream_create(&r->to_host) != CUDA_SUCCESS ||
        r->drv->stream_create(&r->to_device) != CUDA_SUCCESS) {
        shim_log(SHIM_LOG_WARN, "could not query the device or create copy streams: libshim "
                                "records but moves nothing");
        return false;
    }
    /* Stream-ordered pools keep freed blocks until their free runs on the device, and
       round: the driver may hold a little the shim does not count. That matters only when
       the budget leaves the device no room for it: then two chunks of the budget are kept
       for it. Below that, the budget is the shim's account of what it sees (TRACE-FORMAT.md,
       `budget`), and keeping chunks back would move memory at a budget equal to the
       program's own peak, where nothing needs to move. */
    bool tight = r->budget + 2 * r->gran > free_bytes;
    r->slack = tight && r->budget > 16 * r->gran ? 2 * r->gran : 0;
    resid_host_detect(r);
    shim_log(SHIM_LOG_INFO,
             "budget %llu MiB of %llu MiB (%llu free at start), host budget %llu MiB",
             (unsigned long long)(r->budget >> 20), (unsigned long long)(total >> 20),
             (unsigned long long)(free_bytes >> 20), (unsigned long long)(r->host_budget >> 20));
    return true;
}

bool resid_start_with(struct resid_ctx *r, const struct resid_driver *drv)
{
    r->drv = drv;
    if (!start_device(r))
        return false;
    if (shim.record & CONF_RECORD_MOVES)
        shim_trace_budget(r->budget, r->host_budget, r->device_total, (uint32_t)r->device);
    resid_note_started(r);
    atomic_store_explicit(&r->on, true, memory_order_release);
    return true;
}

struct resid_ctx *resid_start_current(void)
{
    struct resid_ctx *r = resid_current();
    if (!r)
        return NULL;
    if (atomic_load_explicit(&r->on, memory_order_acquire))
        return r;
    pthread_mutex_lock(&start_lock);
    /* Only on a driver with SHIM_RESID_NEEDS (shim_state.c); each device's manager once. */
    if (!r->tried && shim.mode == CONF_MODE_AUTO) {
        r->tried = true;
        resid_start_with(r, resid_driver_real());
    }
    pthread_mutex_unlock(&start_lock);
    return atomic_load_explicit(&r->on, memory_order_acquire) ? r : NULL;
}

bool shim_resid_start(void)
{
    return resid_start_current() != NULL;
}

static size_t slot_of(uint64_t id, size_t cap)
{
    return (size_t)(id * 0x9E3779B97F4A7C15ull >> 32) & (cap - 1);
}

/* The two tables by id (units, members) share one shape: a power-of-two array of chains linked
   through hnext. The functions below are written out for each (the shape is small). */

/* Rehashes the chains of old[0..cap) into a new array of ncap chains, or NULL (old untouched). */
static struct resid_unit **units_rehash(struct resid_unit **old, size_t cap, size_t ncap)
{
    struct resid_unit **t = calloc(ncap, sizeof *t);
    if (!t)
        return NULL;
    for (size_t i = 0; i < cap; i++) {
        for (struct resid_unit *x = old[i], *next; x; x = next) {
            next = x->hnext;
            x->hnext = t[slot_of(x->id, ncap)];
            t[slot_of(x->id, ncap)] = x;
        }
    }
    return t;
}

static struct resid_member **members_rehash(struct resid_member **old, size_t cap, size_t ncap)
{
    struct resid_member **t = calloc(ncap, sizeof *t);
    if (!t)
        return NULL;
    for (size_t i = 0; i < cap; i++) {
        for (struct resid_member *x = old[i], *next; x; x = next) {
            next = x->hnext;
            x->hnext = t[slot_of(x->id, ncap)];
            t[slot_of(x->id, ncap)] = x;
        }
    }
    return t;
}

struct resid_unit *resid_find(struct resid_ctx *r, uint64_t id)
{
    if (!r->units_cap)
        return NULL;
    struct resid_unit *x = r->units[slot_of(id, r->units_cap)];
    while (x && x->id != id)
        x = x->hnext;
    return x;
}

int resid_insert(struct resid_ctx *r, struct resid_unit *u)
{
    if (r->nunits + 1 > r->units_cap) {
        size_t ncap = r->units_cap ? 2 * r->units_cap : 1024;
        struct resid_unit **t = units_rehash(r->units, r->units_cap, ncap);
        if (!t)
            return -1;
        free(r->units);
        r->units = t;
        r->units_cap = ncap;
    }
    size_t s = slot_of(u->id, r->units_cap);
    u->hnext = r->units[s];
    r->units[s] = u;
    r->nunits++;
    return 0;
}

void resid_erase(struct resid_ctx *r, struct resid_unit *u)
{
    if (!r->units_cap)
        return;
    struct resid_unit **p = &r->units[slot_of(u->id, r->units_cap)];
    while (*p && *p != u)
        p = &(*p)->hnext;
    if (*p) {
        *p = u->hnext;
        r->nunits--;
    }
}

struct resid_member *resid_member_find(struct resid_ctx *r, uint64_t id)
{
    if (!r->members_cap)
        return NULL;
    struct resid_member *x = r->members[slot_of(id, r->members_cap)];
    while (x && x->id != id)
        x = x->hnext;
    return x;
}

int resid_member_insert(struct resid_ctx *r, struct resid_member *m)
{
    if (r->nmembers + 1 > r->members_cap) {
        size_t ncap = r->members_cap ? 2 * r->members_cap : 1024;
        struct resid_member **t = members_rehash(r->members, r->members_cap, ncap);
        if (!t)
            return -1;
        free(r->members);
        r->members = t;
        r->members_cap = ncap;
    }
    size_t s = slot_of(m->id, r->members_cap);
    m->hnext = r->members[s];
    r->members[s] = m;
    r->nmembers++;
    return 0;
}

void resid_member_erase(struct resid_ctx *r, struct resid_member *m)
{
    if (!r->members_cap)
        return;
    struct resid_member **p = &r->members[slot_of(m->id, r->members_cap)];
    while (*p && *p != m)
        p = &(*p)->hnext;
    if (*p) {
        *p = m->hnext;
        r->nmembers--;
    }
}

void resid_each(struct resid_ctx *r, void (*fn)(struct resid_ctx *, struct resid_unit *, void *),
                void *arg)
{
    for (size_t i = 0; i < r->units_cap; i++)
        for (struct resid_unit *u = r->units[i], *next; u; u = next) {
            next = u->hnext; /* fn may take u out */
            fn(r, u, arg);
        }
}

struct resid_unit *resid_unit_new(struct resid_ctx *r, uint64_t bytes)
{
    struct resid_unit *u = calloc(1, sizeof *u);
    if (!u)
        return NULL;
    u->n = (uint32_t)((bytes + r->gran - 1) / r->gran);
    u->size = bytes;
    u->plan_alloc = -1;
    u->mapped = (uint64_t)u->n * r->gran;
    if (!(u->backing = calloc(u->n, sizeof *u->backing))) {
        free(u);
        return NULL;
    }
    return u;
}

struct resid_unit *resid_unit_reserve(struct resid_ctx *r, uint64_t bytes)
{
    struct resid_unit *u = resid_unit_new(r, bytes);
    if (!u)
        return NULL;
    CUresult rc = r->drv->reserve(&u->va, u->mapped, r->gran);
    if (rc == CUDA_SUCCESS)
        return u;
    resid_driver_failed(r, rc);
    resid_unit_free(r, u);
    return NULL;
}

void resid_unit_free(struct resid_ctx *r, struct resid_unit *u)
{
    if (u->stays_on_host)
        resid_placed_forget(u->id);
    resid_plan_unbind(r, u);
    resid_fence_drop(r, u->ready);
    resid_fence_drop(r, u->reading);
    if (u->slab)
        free(u->slab->used);
    free(u->slab);
    free(u->backing);
    free(u);
}

CUevent resid_event_get(struct resid_ctx *r)
{
    if (r->nevents)
        return r->events[--r->nevents];
    CUevent e = NULL;
    CUresult rc = r->drv->event_create(&e);
    if (rc != CUDA_SUCCESS) {
        resid_driver_failed(r, rc);
        return NULL;
    }
    return e;
}

void resid_event_put(struct resid_ctx *r, CUevent e)
{
    if (!e)
        return;
    if (r->nevents == r->event_cap) {
        size_t cap = r->event_cap ? 2 * r->event_cap : 64;
        CUevent *v = realloc(r->events, cap * sizeof *v);
        if (!v)
            return; /* the event leaks: harmless */
        r->events = v;
        r->event_cap = cap;
    }
    r->events[r->nevents++] = e;
}

struct resid_fence *resid_fence_new(struct resid_ctx *r, CUevent e)
{
    struct resid_fence *f = e ? malloc(sizeof *f) : NULL;
    if (f)
        *f = (struct resid_fence){e, 1, ++r->fence_seq};
    else
        resid_event_put(r, e);
    return f;
}

struct resid_fence *resid_fence_ref(struct resid_fence *f)
{
    if (f)
        f->refs++;
    return f;
}

void resid_fence_drop(struct resid_ctx *r, struct resid_fence *f)
{
    if (f && --f->refs == 0) {
        resid_event_put(r, f->event);
        free(f);
    }
}

void resid_chunk_fence(struct resid_ctx *r, struct resid_chunk *c, struct resid_fence *f)
{
    if (!c || !f || (c->fence && c->fence->seq >= f->seq))
        return;
    resid_fence_drop(r, c->fence);
    c->fence = resid_fence_ref(f);
}

void resid_driver_failed(struct resid_ctx *r, CUresult rc)
{
    if (rc != CUDA_SUCCESS)
        r->last_error = rc;
    if (!resid_sticky_error(rc) || r->sticky)
        return;
    r->sticky = rc;
    shim_log(SHIM_LOG_ERROR,
             "residency: the device reported a permanent error (%d): libshim "
             "moves nothing more, and the program will see the error",
             (int)rc);
}

bool shim_resid_totals(uint32_t k, struct shim_resid_totals *t)
{
    *t = (struct shim_resid_totals){0};
    struct resid_ctx *r = resid_started_at(k);
    if (!r || !atomic_load(&r->on))
        return false;
    pthread_mutex_lock(&r->lock);
    const struct resid_plan_counts *p = &r->planned;
    *t = (struct shim_resid_totals){
        .budget = r->budget,
        .resident_peak = r->dev_peak,
        .plan_native_us = r->plan_native_us,
        .plan_predicted_us = r->plan_predicted_us,
        .evictions = r->evictions,
        .cancelled = r->cancelled,
        .restores = r->restores,
        .errors = r->errors,
        .bytes_to_host = r->bytes_out,
        .bytes_to_device = r->bytes_in,
        .stall_ns = r->stall_ns,
        .planned = p->evictions || p->prefetches || r->plan,
        .planned_evictions = p->evictions,
        .planned_prefetches = p->prefetches,
        .planned_missing = p->missing,
        .departures = p->departures,
        .reactive_evictions = p->reactive,
        .device = (int)r->device,
        .foreign_allocs = r->foreign_allocs,
        .foreign_bytes = r->foreign_bytes,
        .remaps = r->remaps_unlocked,
        .remaps_by_mover = r->remaps_by_mover,
        .handles_created = r->handles_created,
        .host_births = r->host_births,
        .placed = r->placed,
        .placed_bytes = r->placed_bytes,
        .placed_sizes_seen = r->placed_sizes_seen,
        .handles_released = r->handles_released,
        .outside_allocs = r->outside_allocs,
        .outside_bytes = r->outside_bytes,
        .stepped_aside = r->stepped_aside,
    };
    pthread_mutex_unlock(&r->lock);
    return true;
}
