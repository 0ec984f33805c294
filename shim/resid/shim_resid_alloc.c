/* shim_resid_alloc.c — managed allocations (made, freed now or in stream order), the budget's
 * share of unmanaged allocations, and the budget view of cuMemGetInfo.
 *
 * A managed allocation is what the program gets from cuMemAlloc /
 * cuMemAllocAsync for a request of at least min_managed_bytes: a unit of its
 * own (a reserved range mapped onto pooled device chunks) when it is larger
 * than half a chunk, a member of a slab otherwise (shim_resid_slab.c). Anything
 * the shim cannot do because a driver call failed is tried again, then handed
 * to the driver's own allocation outside the budget (it steps aside:
 * shim_resid_verdict.c), so the program sees an allocation either way;
 * out-of-memory comes only when nothing can move after every bounded wait, and
 * the log says why. Frees are shim_resid_free.c's. */
#include "shim_resid_front.h"

#include <stdlib.h>

#define ALLOC_TRIES 3 /* attempts at a managed allocation when driver calls fail */

/* Backs u's range with device chunks, or with host chunks if the budget stays held by work in
   progress (resid_may_place_on_host: *on_host set, u left in state NONE for the caller to record
   SHIM_EV_CREATE_HOST once u has its id); lock held. 0, 1 (out of memory), or -1 (a driver call
   failed: try again). */
static int back(struct resid_ctx *r, struct resid_unit *u, CUstream stream, bool ordered,
                bool *on_host)
{
    bool reused = false;
    if (resid_take_device(r, u->backing, u->n, stream, ordered, &reused) != 0) {
        if (r->oom.driver_failed)
            return -1;
        if (!resid_may_place_on_host(r, u->size))
            return 1;
        int got = resid_back_on_host(r, u);
        if (got != 0)
            return got;
        *on_host = true;
    } else {
        if (resid_map(r, u->va, u->backing, u->n) != 0) {
            resid_give_back(r, u->backing, u->n);
            return -1;
        }
        if (reused) /* chunks still in use by that stream's earlier work: fence on it too */
            u->streams[u->nstreams++] = stream;
        resid_fsm(r, u, SHIM_EV_CREATE, NULL);
    }
    u->last_use = atomic_load_explicit(&shim.launch_seq, memory_order_relaxed);
    u->birth = u->last_use;
    u->ready = resid_take_fences(r, u->backing, u->n);
    return 0;
}

/* Gives new unit u a spare range of its size (shim_resid_spare.c), or one a free pending on
   stream leaves; false if there is none (lock held). No driver call but an event query. */
static bool from_spare(struct resid_ctx *r, struct resid_unit *u, CUstream stream, bool ordered)
{
    bool reused = false;
    resid_reap_oldest(r); /* frees known done become spares (cheap: stops at the first not done) */
    if (!resid_spare_take(r, u, stream, ordered, &reused)) {
        /* Frees not fenced yet cannot become spares: fence them (one record per stream, cheaper
           than the range a miss maps), and take what is already done. */
        if (!r->unfenced || !resid_reap_fence(r) || !resid_spare_take(r, u, stream, ordered, &reused))
            return false;
    }
    if (reused) /* the range is still in use by that stream's earlier work: fence on it too */
        u->streams[u->nstreams++] = stream;
    resid_fsm(r, u, SHIM_EV_CREATE, NULL);
    u->last_use = atomic_load_explicit(&shim.launch_seq, memory_order_relaxed);
    u->birth = u->last_use;
    u->ready = resid_take_fences(r, u->backing, u->n);
    return true;
}

/* One attempt at a unit of its own: 0 done (*dptr set), 1 out of memory, -1 driver failure. */
static int try_unit(struct resid_ctx *r, CUdeviceptr *dptr, size_t bytes, CUstream stream,
                    bool per_thread, bool async)
{
    bool ordered = async && resid_nameable(stream, per_thread), on_host = false;
    int entry = resid_placement_of(r, bytes);
    struct resid_unit *u = entry >= 0 ? resid_unit_reserve(r, bytes) : resid_unit_new(r, bytes);
    if (!u)
        return -1;
    if (entry >= 0) { /* kept on the host (host_resident), else made on the device as any */
        int got = resid_place_on_host(r, u, entry);
        if (got == 1)
            got = back(r, u, stream, ordered, &on_host);
        if (got != 0) {
            r->drv->address_free(u->va, u->mapped);
            resid_unit_free(r, u);
            return got;
        }
    } else if (!from_spare(r, u, stream, ordered)) {
        resid_unit_free(r, u);
        if (!(u = resid_unit_reserve(r, bytes)))
            return -1;
        int got = back(r, u, stream, ordered, &on_host);
        if (got != 0) {
            r->drv->address_free(u->va, u->mapped);
            resid_unit_free(r, u);
            return got;
        }
    }
    /* The registry takes its own lock after ours: never the other way round. */
    if (u->stays_on_host) { /* no step model holds it: it is host memory */
        u->id = shim_ledger_alloc_kept_on_host(u->va, bytes, shim_stream_id(stream, per_thread));
        if (u->id)
            resid_placed_born(r, u);
    } else {
        u->id = shim_ledger_alloc(u->va, bytes, PLAN_MEM_MANAGED,
                                  shim_stream_id(stream, per_thread), r->plan != NULL);
        if (on_host && u->id) /* traced after the allocation record, under its id */
            resid_fsm(r, u, SHIM_EV_CREATE_HOST, NULL);
    }
    if (u->id && resid_insert(r, u) == 0) {
        if (r->plan && !u->stays_on_host) /* shim_ledger_alloc counted it */
            resid_plan_bind(r, u, atomic_load_explicit(&shim.launch_seq, memory_order_relaxed),
                            shim_steps_last_ordinal());
        *dptr = u->va;
        return 0;
    }
    if (u->id) {
        struct shim_alloc gone;
        shim_registry_remove(u->va, &gone);
    }
    resid_release(r, u, NULL);
    return -1;
}

/* One attempt at a member of a slab: as try_unit. */
static int try_member(struct resid_ctx *r, CUdeviceptr *dptr, size_t bytes, CUstream stream,
                      bool per_thread)
{
    struct resid_member *m = NULL;
    CUdeviceptr va = 0;
    int got = resid_slab_alloc(r, bytes, &va, &m);
    if (got != 0)
        return got;
    m->id = shim_registry_add_unplaced(va, bytes, PLAN_MEM_MANAGED);
    if (m->id && resid_member_insert(r, m) == 0) {
        shim_registry_slab_set(m->unit->slab->map, va, bytes, m->id);
        if (shim.record & CONF_RECORD_ALLOCS)
            shim_trace_alloc_on(m->id, va, bytes, PLAN_MEM_MANAGED,
                                shim_stream_id(stream, per_thread), (uint32_t)r->device);
        if (shim_step_studying() || r->plan)
            shim_ledger_step_alloc(m->id, va, bytes, PLAN_MEM_MANAGED,
                                   shim_stream_id(stream, per_thread));
        *dptr = va;
        return 0;
    }
    if (m->id) {
        struct shim_alloc gone;
        shim_registry_remove(va, &gone);
    }
    resid_slab_free(r, m);
    return -1;
}

enum shim_resid_verdict shim_resid_alloc(CUdeviceptr *dptr, size_t bytes, CUstream stream,
                                         bool per_thread, bool async, CUresult *rc)
{
    struct resid_ctx *r;
    /* Which requests are managed, and which share a slab, is planner/rules/plan_rules.h's one rule
       (plan_rules_kind, plan_rules_movable), which every model of libshim's memory follows. */
    if (plan_rules_kind(bytes, shim.min_managed_bytes) != PLAN_MEM_MANAGED ||
        !(r = resid_start_current()) || shim_capture_active(stream, per_thread))
        return SHIM_RESID_DRIVER;
    pthread_mutex_lock(&r->lock);
    if (r->stepped_aside) {
        pthread_mutex_unlock(&r->lock);
        return SHIM_RESID_ASIDE;
    }
    /* The plan's moves due before the next launch come before its allocations, as in the
       model (births at an operation's start, after the evictions that end the one before). */
    if (r->plan)
        resid_plan_advance(r, atomic_load_explicit(&shim.launch_seq, memory_order_relaxed));
    int got = -1;
    uint64_t before = 0;
    /* A failed driver call may be transient: try again before stepping aside (an allocation
       left to the driver can never move, and crowds out everything else). Out of memory with
       nothing failed is the budget's answer, after the search's bounded waits. */
    resid_search_host_fallback(r->can_evict && !r->unmapped &&
                               r->host_bytes + resid_managed_need(r, bytes) <= r->host_budget);
    for (int attempt = 0; attempt < ALLOC_TRIES && got != 0 && !r->sticky && !r->stepped_aside;
         attempt++) {
        r->oom.driver_failed = false;
        before = resid_driver_failures();
        got = !plan_rules_movable(PLAN_MEM_MANAGED, bytes, resid_slab_max(r))
                  ? try_member(r, dptr, bytes, stream, per_thread)
                  : try_unit(r, dptr, bytes, stream, per_thread, async);
        if (got == 1 && !resid_machinery_failed(r, before))
            break;
    }
    resid_search_host_fallback(false);
    enum shim_resid_verdict v = SHIM_RESID_DONE;
    *rc = CUDA_SUCCESS;
    if (got == 0) {
        r->aside_streak = 0;
    } else if (r->sticky) { /* the program must see the device's error, not a fresh one */
        *rc = r->sticky;
    } else if (got == 1 && !resid_machinery_failed(r, before) && !r->stepped_aside &&
               !resid_short_by_set_aside(r, bytes)) {
        resid_explain_oom(r, bytes, 0);
        *rc = CUDA_ERROR_OUT_OF_MEMORY;
    } else { /* stepped aside meanwhile by another thread's search (with the lock dropped) too;
                or the budget is short only by chunks libshim's own failures set aside: out of
                memory would be libshim's doing, not the program's */
        resid_step_aside(r, bytes, before);
        v = SHIM_RESID_ASIDE;
    }
    pthread_mutex_unlock(&r->lock);
    return v;
}
