/* shim_resid_alloc.c — managed allocations (made, freed now or in stream order), the budget's
 * share of unmanaged allocations, and the budget view of cuMemGetInfo.
 *
 * A managed allocation is what the program gets from cuMemAlloc /
 * cuMemAllocAsync for a request of at least min_managed_bytes: a unit of its
 * own (a reserved range mapped onto pooled device chunks) when it is larger
 * than half a chunk, a member of a slab otherwise (shim_resid_slab.c). Anything
 * the shim cannot do because a driver call failed is tried again, then handed
 * to the driver's own allocation outside the budget (it steps aside: the kinds
 * of failure are in shim_resid.h), so the program sees an allocation either way;
 * out-of-memory comes only when nothing can move after every bounded wait, and
 * the log says why. */
#include "shim_resid_internal.h"

#include <stdlib.h>

#define ALLOC_TRIES    3 /* attempts at a managed allocation when driver calls fail */
#define ASIDE_FOR_GOOD 2 /* allocations in a row stepped aside for driver failures: for good */

/* Whether stream is one the shim can order reuse on (not a per-thread default). */
static bool nameable(CUstream s, bool per_thread)
{
    return !(per_thread && !s) && s != CU_STREAM_PER_THREAD;
}

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

/* The device memory a managed allocation of bytes needs when nothing already mapped has room
   for it: whole granules (a small one shares a slab, whose chunk is one granule). */
static uint64_t managed_need(const struct resid_ctx *r, uint64_t bytes)
{
    return (bytes + r->gran - 1) / r->gran * r->gran;
}

/* Says once per cause why an allocation of bytes found no room (lock held): a managed one when
   asked is 0, else an unmanaged one of asked bytes (bytes as the driver rounds it). */
static void explain_oom(struct resid_ctx *r, uint64_t bytes, uint64_t asked)
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
    else if (managed_need(r, bytes) > room)
        SHIM_LOG_ONCE(SHIM_LOG_WARN,
                      "out of memory: an allocation of %llu bytes is larger than the budget "
                      "leaves for managed memory (it needs %llu bytes of whole granules; %llu of "
                      "%llu bytes are left, %llu held by unmanaged allocations, smaller than "
                      "min_managed_bytes = %s or from explicit pools)",
                      (unsigned long long)bytes, (unsigned long long)managed_need(r, bytes),
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

bool resid_may_place_on_host(const struct resid_ctx *r, uint64_t bytes)
{
    return r->can_evict && !r->unmapped && !r->sticky && !r->stepped_aside &&
           !r->oom.driver_failed && (r->oom.pinned || r->oom.moving) &&
           managed_need(r, bytes) + r->slack <= r->budget;
}

int resid_back_on_host(struct resid_ctx *r, struct resid_unit *u)
{
    if (resid_take_host(r, u->backing, u->n) != 0)
        return 1;
    if (resid_map(r, u->va, u->backing, u->n) != 0) {
        resid_give_back(r, u->backing, u->n);
        return -1;
    }
    r->host_births++;
    SHIM_LOG_ONCE(SHIM_LOG_INFO,
                  "an allocation found the budget held by submissions or moves in progress for "
                  "a second: it is made in host memory, read through the link until it can come "
                  "to the device (counted as 'made on the host' at exit)");
    return 0;
}

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
    if (!resid_spare_take(r, u, stream, ordered, &reused))
        return false;
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
    bool ordered = async && nameable(stream, per_thread), on_host = false;
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
        u->id = shim_record_alloc_kept_on_host(u->va, bytes, shim_stream_id(stream, per_thread));
        if (u->id)
            resid_placed_born(r, u);
    } else {
        u->id = shim_record_alloc(u->va, bytes, SHIM_ALLOC_MANAGED,
                                  shim_stream_id(stream, per_thread), r->plan != NULL);
        if (on_host && u->id) /* traced after the allocation record, under its id */
            resid_fsm(r, u, SHIM_EV_CREATE_HOST, NULL);
    }
    if (u->id && resid_insert(r, u) == 0) {
        if (r->plan && !u->stays_on_host) /* shim_record_alloc counted it */
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
    m->id = shim_registry_add_unplaced(va, bytes, SHIM_ALLOC_MANAGED);
    if (m->id && resid_member_insert(r, m) == 0) {
        shim_registry_slab_set(m->unit->slab->map, va, bytes, m->id);
        if (shim.record & CONF_RECORD_ALLOCS)
            shim_trace_alloc_on(m->id, va, bytes, SHIM_ALLOC_MANAGED,
                                shim_stream_id(stream, per_thread), (uint32_t)r->device);
        if (shim_step_recording() || r->plan)
            shim_record_step_alloc(m->id, va, bytes, SHIM_ALLOC_MANAGED,
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

/* Whether the search that just ended failed for the driver's sake (a failed call, a failed
   eviction, any call of libshim's own that failed on any thread since `before` failures: the
   mover's failed remap undoes the eviction this search waited for), not because the budget is
   full of what cannot move (lock held). */
static bool machinery_failed(const struct resid_ctx *r, uint64_t before)
{
    return (r->oom.driver_failed || resid_driver_failures() != before) && !r->sticky;
}

/* Whether the budget lacks room for an allocation of bytes only as far as libshim's own failures
   set chunks aside (never reused, still counted): some chunks were set aside, and the allocation
   alone would fit in the budget. Out of memory then would be libshim's doing. Lock held. */
static bool short_by_set_aside(const struct resid_ctx *r, uint64_t bytes)
{
    return r->aside_bytes > 0 && managed_need(r, bytes) <= r->budget;
}

/* An allocation of bytes goes to the driver outside the budget because residency's own calls
   failed: says so once with the cause, and steps aside for good when the failures persist
   (ASIDE_FOR_GOOD allocations in a row; not for the driver's out of memory, which says the
   device is full, not that libshim's machinery is broken). before: libshim's failed calls
   (resid_driver_failures) when the search began. Lock held. */
static void step_aside(struct resid_ctx *r, uint64_t bytes, uint64_t before)
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

enum shim_resid_verdict shim_resid_alloc(CUdeviceptr *dptr, size_t bytes, CUstream stream,
                                         bool per_thread, bool async, CUresult *rc)
{
    struct resid_ctx *r;
    /* Which requests are managed, and which share a slab, is planner/plan_build.h's one rule
       (plan_build_kind, plan_build_movable), which every model of libshim's memory follows. */
    if (plan_build_kind(bytes, shim.min_managed_bytes) != PLAN_MEM_MANAGED ||
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
                               r->host_bytes + managed_need(r, bytes) <= r->host_budget);
    for (int attempt = 0; attempt < ALLOC_TRIES && got != 0 && !r->sticky && !r->stepped_aside;
         attempt++) {
        r->oom.driver_failed = false;
        before = resid_driver_failures();
        got = !plan_build_movable(PLAN_MEM_MANAGED, bytes, resid_slab_max(r))
                  ? try_member(r, dptr, bytes, stream, per_thread)
                  : try_unit(r, dptr, bytes, stream, per_thread, async);
        if (got == 1 && !machinery_failed(r, before))
            break;
    }
    resid_search_host_fallback(false);
    enum shim_resid_verdict v = SHIM_RESID_DONE;
    *rc = CUDA_SUCCESS;
    if (got == 0) {
        r->aside_streak = 0;
    } else if (r->sticky) { /* the program must see the device's error, not a fresh one */
        *rc = r->sticky;
    } else if (got == 1 && !machinery_failed(r, before) && !r->stepped_aside &&
               !short_by_set_aside(r, bytes)) {
        explain_oom(r, bytes, 0);
        *rc = CUDA_ERROR_OUT_OF_MEMORY;
    } else { /* stepped aside meanwhile by another thread's search (with the lock dropped) too;
                or the budget is short only by chunks libshim's own failures set aside: out of
                memory would be libshim's doing, not the program's */
        step_aside(r, bytes, before);
        v = SHIM_RESID_ASIDE;
    }
    pthread_mutex_unlock(&r->lock);
    return v;
}

/* Waits until the program's queued work is done, as cuMemFree does (a failed call is tried
   again); false if it never was. The residency manager's copies need not be: a unit being freed
   has no move left (shim_resid_free waits for it), and its chunks carry the fences of earlier
   copies (resid_chunk_fence). */
static bool device_idle(struct resid_ctx *r)
{
    for (int i = 0; i < 3; i++) {
        CUresult rc = r->drv->program_sync();
        if (rc == CUDA_SUCCESS)
            return true;
        if (resid_sticky_error(rc))
            return false;
    }
    return false;
}

/* Queues the free of u or m in the order of stream (lock held); false if no event could be
   recorded. */
static bool free_later(struct resid_ctx *r, struct resid_unit *u, struct resid_member *m,
                       CUstream stream, bool per_thread)
{
    struct resid_pending *p = calloc(1, sizeof *p);
    CUevent e = p ? resid_event_get(r) : NULL;
    if (!e || r->drv->record(e, stream) != CUDA_SUCCESS) {
        resid_event_put(r, e);
        free(p);
        return false;
    }
    *p = (struct resid_pending){u, m, e, nameable(stream, per_thread) ? stream : NULL, NULL};
    struct resid_pending **l = &r->pending;
    while (*l)
        l = &(*l)->next;
    *l = p;
    return true;
}

/* Frees unit u (out of the table, no move in flight) at once (lock held). */
static void free_now(struct resid_ctx *r, struct resid_unit *u, bool idle)
{
    struct resid_cause why = {SHIM_REASON_FREED, NULL, 0, UINT64_MAX};
    if (idle) {
        resid_release(r, u, &why);
        return;
    }
    resid_fsm(r, u, SHIM_EV_FREE, &why);
    /* Queued work may still use it: its range and chunks are set aside for good. */
    SHIM_LOG_ONCE(SHIM_LOG_WARN, "the device could not be synchronised before a free: the "
                                 "freed range is kept mapped and its memory is not reused");
    resid_set_aside(r, u->backing, u->n);
    resid_unit_free(r, u);
}

CUresult shim_resid_free(uint64_t id, CUstream stream, bool per_thread, bool async)
{
    if (async)
        shim_streams_note(stream, per_thread);
    struct resid_ctx *r = resid_for_id(id);
    if (!r)
        return CUDA_ERROR_INVALID_VALUE;
    /* As cuMemFree does: nothing queued may use it after. The wait covers the current
       device's work (shim_streams_sync_program): freed while another device is current, the
       allocation's own device may still run work on it, so its memory is then set aside (kept
       mapped, never reused) rather than unmapped under that work. */
    bool own = !shim_resid_several() || resid_current_device(r->drv) == (uint32_t)r->device;
    if (!async && !own)
        SHIM_LOG_ONCE(SHIM_LOG_WARN, "a managed allocation was freed with cuMemFree while another "
                                     "device was current: its memory is not reused");
    bool idle = async || (own && device_idle(r));
    pthread_mutex_lock(&r->lock);
    struct resid_member *m = resid_member_find(r, id);
    struct resid_unit *u = m ? NULL : resid_find(r, id);
    if (!m && !u) {
        pthread_mutex_unlock(&r->lock);
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (m) {
        resid_member_erase(r, m);
        if (async && free_later(r, NULL, m, stream, per_thread)) {
            pthread_mutex_unlock(&r->lock);
            return CUDA_SUCCESS;
        }
        /* Its blocks may be reused, and an empty slab unmapped, only once no queued work
           uses them: after the device was idle, or the stream was (no event could order
           the free). Otherwise they stay taken for good. */
        if (async)
            idle = r->drv->stream_sync(stream) == CUDA_SUCCESS || device_idle(r);
        if (idle) {
            resid_slab_free(r, m);
        } else {
            SHIM_LOG_ONCE(SHIM_LOG_WARN, "the device could not be synchronised before a free: "
                                         "the freed memory is not reused");
            free(m);
        }
        pthread_mutex_unlock(&r->lock);
        return CUDA_SUCCESS;
    }
    resid_erase(r, u);       /* first: no search may pick it while the lock is dropped below */
    resid_plan_unbind(r, u); /* nor the plan */
    while (u->prefetching)   /* a prefetch holds it across a lock drop: bounded, as its search */
        pthread_cond_wait(&r->prefetched, &r->lock);
    resid_wait_move(r, u, SHIM_REASON_BUDGET); /* bounded: the move is over after it */
    if (u->move) { /* never: but if so, leave it all where it is rather than unmap it */
        u->move->cancelled = true;
        u->move = NULL;
    } else if (!(async && free_later(r, u, NULL, stream, per_thread))) {
        if (async)
            idle = r->drv->stream_sync(stream) == CUDA_SUCCESS || device_idle(r);
        free_now(r, u, idle);
    }
    pthread_mutex_unlock(&r->lock);
    return CUDA_SUCCESS;
}

/* What an unmanaged allocation of bytes holds on the device, as the driver rounds it. */
static uint64_t visible_bytes(struct resid_ctx *r, uint64_t bytes)
{
    uint64_t unit = bytes >= r->gran ? r->gran : 4096;
    return (bytes + unit - 1) / unit * unit;
}

enum shim_resid_verdict shim_resid_unmanaged_room(uint64_t bytes, CUresult *rc)
{
    struct resid_ctx *r = resid_start_current();
    if (!r)
        return SHIM_RESID_DRIVER;
    pthread_mutex_lock(&r->lock);
    enum shim_resid_verdict v = SHIM_RESID_DRIVER;
    if (r->stepped_aside) {
        v = SHIM_RESID_ASIDE;
    } else {
        if (r->plan)
            resid_plan_advance(r, atomic_load_explicit(&shim.launch_seq, memory_order_relaxed));
        uint64_t before = resid_driver_failures();
        if (resid_room_for_unmanaged(r, visible_bytes(r, bytes)) != 0) {
            if (machinery_failed(r, before) || r->stepped_aside ||
                short_by_set_aside(r, visible_bytes(r, bytes))) {
                step_aside(r, bytes, before);
                v = SHIM_RESID_ASIDE;
            } else {
                explain_oom(r, visible_bytes(r, bytes), bytes ? bytes : 1);
                *rc = r->sticky ? r->sticky : CUDA_ERROR_OUT_OF_MEMORY;
                v = SHIM_RESID_DONE;
            }
        }
    }
    pthread_mutex_unlock(&r->lock);
    return v;
}

void shim_resid_outside_add(uint64_t addr, uint64_t bytes)
{
    struct resid_ctx *r = resid_current();
    if (!r || !atomic_load_explicit(&r->on, memory_order_acquire))
        return;
    pthread_mutex_lock(&r->lock);
    r->outside_allocs++;
    r->outside_bytes += bytes;
    pthread_mutex_unlock(&r->lock);
    resid_outside_remember(addr);
}

bool shim_resid_unmanaged_retry(uint64_t bytes)
{
    struct resid_ctx *r = resid_current();
    if (!r || !atomic_load_explicit(&r->on, memory_order_acquire))
        return false;
    pthread_mutex_lock(&r->lock);
    /* The device is fuller than the budget says: give back pooled chunks, or move one. */
    bool progress = resid_shed(r, visible_bytes(r, bytes));
    pthread_mutex_unlock(&r->lock);
    return progress;
}

void shim_resid_unmanaged_add(uint64_t bytes, bool add)
{
    struct resid_ctx *r = resid_current();
    if (!r || !atomic_load_explicit(&r->on, memory_order_acquire))
        return;
    uint64_t v = visible_bytes(r, bytes);
    pthread_mutex_lock(&r->lock);
    if (add) {
        resid_dev_grow(r, v);
        r->unmanaged_bytes += v;
    } else if (r->unmanaged_bytes >= v) {
        r->dev_bytes -= v;
        r->unmanaged_bytes -= v;
    }
    pthread_mutex_unlock(&r->lock);
}

void shim_resid_mem_info(size_t *free_bytes, size_t *total)
{
    struct resid_ctx *r;
    if (!free_bytes || !total || !(r = resid_start_current()))
        return;
    pthread_mutex_lock(&r->lock);
    uint64_t budget = r->budget < *total ? r->budget : *total;
    /* Held by the program: device chunks not sitting free in the pool or in spare ranges, and
       unmanaged bytes. */
    uint64_t idle = (r->nfree_dev + r->nspare_chunks) * r->gran;
    uint64_t held = r->dev_bytes - idle;
    uint64_t left = held < budget ? budget - held : 0;
    uint64_t phys = *free_bytes + idle;
    pthread_mutex_unlock(&r->lock);
    *total = budget;
    *free_bytes = left < phys ? left : phys;
}
