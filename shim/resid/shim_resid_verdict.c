/* shim_resid_verdict.c — an allocation residency could not serve: out of memory said with its
 * cause, or libshim's own failure, after which the allocation goes to the driver outside the
 * budget (stepping aside: the kinds of failure are in shim_resid.h). */
#include "shim_resid_front.h"

#define ASIDE_FOR_GOOD 2 /* allocations in a row stepped aside for driver failures: for good */

/* Why allocations are unmanaged, for messages: min_managed_bytes as configured ("64KiB"). */
static const char *min_managed_text(char *buf, size_t n)
{
    conf_size m = {.kind = CONF_SIZE_BYTES, .bytes = shim.min_managed_bytes};
    conf_size_format(&m, buf, n);
    return buf;
}

/* An unmanaged allocation (left to the driver: never moved, never evicted) that the budget has
   no room for, said as such with the option that made it unmanaged (lock held). */
static void explain_unmanaged_oom(struct resid_ctx *r, uint64_t bytes, uint64_t asked,
                                  uint64_t room)
{
    char min[48];
    SHIM_LOG_ONCE(SHIM_LOG_WARN,
                  "out of memory: an unmanaged allocation of %llu bytes (%s min_managed_bytes = "
                  "%s: left to the driver, never moved) does not fit in the budget of %llu bytes: "
                  "unmanaged allocations hold %llu bytes (%.1f MiB) of it, %llu are left, and "
                  "unmanaged memory cannot be evicted",
                  (unsigned long long)bytes,
                  asked < shim.min_managed_bytes ? "smaller than" : "from an explicit pool, or",
                  min_managed_text(min, sizeof min), (unsigned long long)r->budget,
                  (unsigned long long)r->unmanaged_bytes, (double)r->unmanaged_bytes / (1 << 20),
                  (unsigned long long)room);
}

void resid_explain_oom(struct resid_ctx *r, uint64_t bytes, uint64_t asked)
{
    const struct resid_oom *o = &r->oom;
    uint64_t room =
        r->budget > r->unmanaged_bytes + r->slack ? r->budget - r->unmanaged_bytes - r->slack : 0;
    char min[48];
    if (r->sticky)
        SHIM_LOG_ONCE(SHIM_LOG_WARN, "out of memory: the device reported a permanent error (%d)",
                      (int)r->sticky);
    else if (bytes > room && asked)
        explain_unmanaged_oom(r, bytes, asked, room);
    else if (resid_managed_need(r, bytes) > room)
        SHIM_LOG_ONCE(SHIM_LOG_WARN,
                      "out of memory: an allocation of %llu bytes is larger than the budget "
                      "leaves for managed memory (it needs %llu bytes of whole granules; %llu of "
                      "%llu bytes are left, %llu held by unmanaged allocations, smaller than "
                      "min_managed_bytes = %s or from explicit pools)",
                      (unsigned long long)bytes, (unsigned long long)resid_managed_need(r, bytes),
                      (unsigned long long)room, (unsigned long long)r->budget,
                      (unsigned long long)r->unmanaged_bytes, min_managed_text(min, sizeof min));
    else if (o->host_full)
        SHIM_LOG_ONCE(SHIM_LOG_WARN,
                      "out of memory: host_budget is spent (%llu bytes of evicted data on the "
                      "host)",
                      (unsigned long long)r->host_bytes);
    else if (!r->can_evict)
        SHIM_LOG_ONCE(SHIM_LOG_WARN, "out of memory: the budget is full and this device cannot "
                                     "evict (no host VMM; see unmapped_eviction)");
    else
        SHIM_LOG_ONCE(SHIM_LOG_WARN,
                      "out of memory: nothing more can move within the budget (%llu units in "
                      "use by submissions in progress, %llu moving, %llu held by CUDA graphs, "
                      "%llu exported or shared)",
                      (unsigned long long)o->pinned, (unsigned long long)o->moving,
                      (unsigned long long)o->graph, (unsigned long long)o->held);
}

bool resid_machinery_failed(const struct resid_ctx *r, uint64_t before)
{
    return (r->oom.driver_failed || resid_driver_failures() != before) && !r->sticky;
}

bool resid_short_by_set_aside(const struct resid_ctx *r, uint64_t bytes)
{
    return r->aside_bytes > 0 && resid_managed_need(r, bytes) <= r->budget;
}

void resid_step_aside(struct resid_ctx *r, uint64_t bytes, uint64_t before)
{
    CUresult rc;
    const char *call = resid_driver_failed_call(&rc);
    if (!call || resid_driver_failures() == before) { /* no call of the real seam failed since */
        call = NULL;
        rc = r->last_error;
    }
    SHIM_LOG_ONCE(SHIM_LOG_WARN,
                  "residency could not serve an allocation of %llu bytes (libshim's own call %s "
                  "failed: error %d): it goes to the driver as without libshim, outside the "
                  "budget",
                  (unsigned long long)bytes, call ? call : "to the driver", (int)rc);
    if (rc == CUDA_ERROR_OUT_OF_MEMORY || ++r->aside_streak < ASIDE_FOR_GOOD || r->stepped_aside)
        return;
    r->stepped_aside = true;
    shim_log(SHIM_LOG_WARN,
             "residency steps aside for good: libshim's own driver calls keep failing (%s: error "
             "%d); new allocations go to the driver outside the budget, nothing more is evicted, "
             "and managed allocations stay valid where they are",
             call ? call : "a driver call", (int)rc);
}
