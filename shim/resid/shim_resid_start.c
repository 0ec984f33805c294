/* shim_resid_start.c — a device's manager started (device facts, budget, copy streams) on its
 * first use, stopped at exit, and what it did, for the exit line. */
#include "shim_resid_front.h"

#include <stdio.h>
#include <unistd.h>

/* Serialises managers' starts (each is tried once, by the first thread that needs it). */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;

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
   configuration error uses ("error: SOURCE: VALUE is out of range (1MiB to 1PiB)") when a share of
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
                 "%s: %s = \"%s\" is out of range (%s to %s): on device %d (%llu MiB) "
                 "it comes to %llu bytes; libshim keeps no budget on device %d and moves nothing "
                 "there",
                 source, option, value, lo, hi, r->device, (unsigned long long)(total >> 20),
                 (unsigned long long)r->budget, r->device);
        return false;
    }
    if (r->budget < r->gran) {
        shim_log(SHIM_LOG_WARN,
                 "%s: %s = \"%s\" (%llu bytes on device %d) is less than one granule of the "
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
    if (!r->policy)
        r->policy = &resid_policy_reactive;
    if (shim.record & CONF_RECORD_MOVES)
        shim_trace_budget(r->budget, r->host_budget, r->device_total, (uint32_t)r->device);
    if (resid_note_started(r) == 1) {
        shim_log(SHIM_LOG_INFO,
                 "residency: a second device (%d) is managed, within its own budget; the "
                 "in-process planner models one device's step, so moves are reactive from now on",
                 (int)r->device);
        shim_resid_plan_withdraw("a second device is managed");
    }
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

void shim_resid_stop(void)
{
    struct resid_ctx *r;
    for (uint32_t k = 0; (r = resid_started_at(k)) != NULL; k++) {
        pthread_mutex_lock(&r->lock);
        resid_mover_stop(r);
        pthread_mutex_unlock(&r->lock);
    }
}

bool shim_resid_copies_pending(void)
{
    struct resid_ctx *r = resid_current_started();
    if (!r)
        return false;
    pthread_mutex_lock(&r->lock);
    bool pending = resid_copies_pending(r);
    pthread_mutex_unlock(&r->lock);
    return pending;
}

double shim_resid_remap_us(void)
{
    struct resid_ctx *r = resid_primary();
    if (!r)
        return -1;
    pthread_mutex_lock(&r->lock);
    double us = resid_remap_median(r);
    pthread_mutex_unlock(&r->lock);
    return us;
}

bool shim_resid_several(void)
{
    return resid_nstarted() > 1;
}
