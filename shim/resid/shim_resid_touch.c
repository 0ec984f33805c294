/* shim_resid_touch.c — what a launch, copy or memset needs before it is submitted: its units
 * resident and pinned until the submission is done, and its stream remembered for the next
 * fence.
 *
 * Every device operation that can touch a managed range comes through here,
 * on the stream it runs on: kernel launches (all forms), memsets and copies in
 * every direction (shim_hook_copy.c). Graph replays are covered by keeping what
 * a capture touched on the device, and host functions and event waits order
 * through the streams the fence already covers. Pinning first (every touched
 * unit, before any restore makes room) keeps one restore from evicting another
 * the same operation needs. A unit that cannot come back (nothing else can
 * move) stays on the host: the operation reads it through the host link,
 * correct but slower; until it is submitted it marks the unit (host_readers),
 * and no restore remaps the range under it (a fence taken before the
 * submission would not cover it).
 *
 * Cost: the lock is taken once per operation that touches a managed unit and
 * never otherwise; nothing is allocated under it. Unpinning after the
 * submission is one atomic decrement per unit, without the lock: an evictor
 * that sees the pin gone also sees the submission done, so its fence covers it. */
#include "shim_resid_front.h"

#include <stdlib.h>
#include <string.h>

static void note_stream(struct resid_unit *u, CUstream s, bool per_thread)
{
    if ((per_thread && !s) || s == CU_STREAM_PER_THREAD) {
        u->streams_unknown = true; /* another thread cannot name this thread's stream */
        return;
    }
    for (uint8_t i = 0; i < u->nstreams; i++)
        if (u->streams[i] == s)
            return;
    if (u->nstreams < RESID_MAX_STREAMS)
        u->streams[u->nstreams++] = s;
    else
        u->streams_unknown = true;
}

/* Whether u is evicted and unmapped (no host VMM): an operation on it cannot run until it
   comes back (lock held). */
static inline bool unmapped_left(const struct resid_ctx *r, const struct resid_unit *u)
{
    return r->unmapped && u->state == SHIM_RS_HOST && !u->stays_on_host;
}

/* Brings u to the device for an operation on stream s (lock held, u pinned); CUDA_SUCCESS, or
   the error the operation must fail with (its range cannot be made usable). */
static CUresult make_resident(struct resid_ctx *r, struct resid_unit *u, CUstream s)
{
    if (!resid_wait_remap(r, u)) /* another thread is remapping it: only that wait */
        return r->last_error ? r->last_error : CUDA_ERROR_UNKNOWN;
    if (!resid_unstick(r, u))
        return r->last_error ? r->last_error : CUDA_ERROR_UNKNOWN;
    if (u->stays_on_host && u->state == SHIM_RS_HOST)
        return CUDA_SUCCESS; /* kept on the host (host_resident): read through its host mapping */
    if (u->plan_out && u->state != SHIM_RS_DEVICE)
        resid_plan_departed(r, u);
    if (u->state == SHIM_RS_EVICTING && u->move)
        resid_cancel_eviction(r, u, s);
    struct resid_cause why = {SHIM_REASON_DEMAND, s, 0, UINT64_MAX};
    if (u->state != SHIM_RS_HOST || resid_restore(r, u, &why) == 0 || u->state != SHIM_RS_HOST)
        return CUDA_SUCCESS;
    if (!r->unmapped) {
        SHIM_LOG_ONCE(SHIM_LOG_INFO, "an operation needs more than the budget holds at once: it "
                                     "reads some data through the host link");
        return CUDA_SUCCESS;
    }
    /* An unmapped range cannot be read through the link: exceed the budget instead. */
    SHIM_LOG_ONCE(SHIM_LOG_WARN, "an operation needs more than the budget holds at once, and "
                                 "evicted ranges are unmapped: going over the budget for it");
    r->over_budget = true;
    resid_restore(r, u, &why);
    r->over_budget = false;
    return u->state != SHIM_RS_HOST ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY; /* tried again */
}

/* The stream handle that makes the operation's own stream wait: a per-thread entry point's
   NULL stream is the calling thread's default stream, which CU_STREAM_PER_THREAD names for
   the plain entry points libshim calls (the legacy stream would also order it, more widely). */
static inline CUstream waiter_of(CUstream s, bool per_thread)
{
    return per_thread && !s ? CU_STREAM_PER_THREAD : s;
}

/* The ids an operation passed in, kept while its ids hold handles (so that leave gives back
   a small allocation's own id, not its slab's). Grown before the lock is taken; freed when
   the thread ends. */
#define SAVED_INLINE 64
static __thread uint64_t saved_inline[SAVED_INLINE];
static __thread uint64_t *saved_heap;
static __thread uint32_t saved_cap;
static __thread uint64_t *saved; /* of the operation in progress, or NULL */
static pthread_key_t saved_key;
static pthread_once_t saved_once = PTHREAD_ONCE_INIT;

static void saved_key_make(void)
{
    pthread_key_create(&saved_key, free);
}

/* A copy of ids[0..n), or NULL when memory is short (leave then gives back unit ids). */
static uint64_t *save_ids(const uint64_t *ids, uint32_t n)
{
    uint64_t *buf = saved_inline;
    if (n > SAVED_INLINE) {
        if (n > saved_cap) {
            pthread_once(&saved_once, saved_key_make);
            uint64_t *v = realloc(saved_heap, n * sizeof *v);
            if (!v)
                return NULL;
            saved_heap = v;
            saved_cap = n;
            pthread_setspecific(saved_key, v);
        }
        buf = saved_heap;
    }
    memcpy(buf, ids, n * sizeof *ids);
    return buf;
}

/* The unit with id, or NULL (lock held). */
static inline struct resid_unit *managed(struct resid_ctx *r, uint64_t id)
{
    if (!(id & SHIM_MANAGED_ID_TAG))
        return NULL;
    struct resid_unit *u = resid_find(r, id);
    if (u)
        return u;
    struct resid_member *m = resid_member_find(r, id); /* a small allocation: its slab moves */
    return m ? m->unit : NULL;
}

static inline bool any_managed(const uint64_t *ids, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (ids[i] & SHIM_MANAGED_ID_TAG)
            return true;
    return false;
}

/* Orders the operation after fence *f (a copy that writes or reads the unit) until the fence
   is known done, then drops it: on the operation's stream, or on the host while capturing (a
   graph's replays cannot wait for it) or when the stream cannot wait. */
static void wait_fence(struct resid_ctx *r, struct resid_fence **f, CUstream waiter, bool capturing)
{
    if (!*f)
        return;
    CUevent e = (*f)->event;
    if (r->drv->query(e) != CUDA_SUCCESS &&
        ((!capturing && r->drv->wait_event(waiter, e) == CUDA_SUCCESS) ||
         r->drv->event_sync(e) != CUDA_SUCCESS))
        return; /* not known done yet: the next user waits too */
    resid_fence_drop(r, *f);
    *f = NULL;
}

/* After the unit is resident: the stream is remembered, and waits for what made its data. */
static CUresult ready_for(struct resid_ctx *r, struct resid_unit *u, CUstream stream,
                          bool per_thread, bool capturing)
{
    /* A restore in flight: remapped ahead of its copy (by the mover, or here if the mover has
       not yet), this operation waits for the copy in stream order below; otherwise on the
       host, until the move is over. */
    if (u->state == SHIM_RS_RESTORING && u->move) {
        resid_order_restore(r, u->move);
        if (!resid_wait_remap(r, u))
            return r->last_error ? r->last_error : CUDA_ERROR_UNKNOWN;
    }
    if (u->state == SHIM_RS_RESTORING)
        resid_wait_move(r, u, SHIM_REASON_DEMAND);
    if (!resid_unstick(r, u)) /* the restore's remap failed */
        return r->last_error ? r->last_error : CUDA_ERROR_UNKNOWN;
    if (unmapped_left(r, u)) /* its restore failed: nothing is mapped (tried again) */
        return r->last_error ? r->last_error : CUDA_ERROR_UNKNOWN;
    /* A copy that made its data or chunks, or still reads them: every user waits for it. */
    wait_fence(r, &u->ready, waiter_of(stream, per_thread), capturing);
    wait_fence(r, &u->reading, waiter_of(stream, per_thread), capturing);
    /* Only now: a restore's fence above must not swallow this operation's touch. */
    if (!capturing)
        note_stream(u, stream, per_thread);
    return CUDA_SUCCESS;
}

bool shim_resid_enter(uint64_t *ids, uint32_t n, CUstream stream, bool per_thread, bool launch,
                      CUresult *refuse)
{
    shim_streams_note(stream, per_thread); /* what a later wait for the program must cover */
    /* A launch touching no managed memory looks up no manager (with several, that would ask the
       driver for the current device on every launch); the plan is the primary manager's. */
    struct resid_ctx *r;
    if (!any_managed(ids, n) || !(r = resid_for_operation()) ||
        !atomic_load_explicit(&r->on, memory_order_acquire)) {
        if (launch && shim_resid_plan_on())
            shim_resid_plan_tick(); /* the plan's actions before this launch all the same */
        return false;
    }
    bool capturing = shim_capture_active(stream, per_thread);
    uint64_t now = atomic_load_explicit(&shim.launch_seq, memory_order_relaxed);
    bool any = false;
    CUstream waiter = waiter_of(stream, per_thread);
    saved = save_ids(ids, n);
    pthread_mutex_lock(&r->lock);
    for (uint32_t i = 0; i < n; i++) {
        struct resid_unit *u = managed(r, ids[i]);
        if (!u)
            continue;
        atomic_fetch_add_explicit(&u->pins, 1, memory_order_relaxed);
        u->last_use = now;
        r->policy->touch(u, now);
        if (capturing)
            u->graph = true; /* replays are invisible: it stays on the device from now on */
        ids[i] = (uint64_t)(uintptr_t)u | RESID_HANDLE_PINNED;
        any = true;
    }
    resid_op_set(ids, n); /* a search for room must not wait for this operation's own pins */
    /* The plan's moves before this operation: after its pins, so none moves what it uses. */
    if (launch && r->plan)
        resid_plan_advance(r, now);
    for (uint32_t i = 0; i < n; i++) {
        if (!(ids[i] & RESID_HANDLE_PINNED))
            continue;
        struct resid_unit *u = resid_unit_of_handle(ids[i]);
        CUresult rc = make_resident(r, u, waiter);
        if (rc != CUDA_SUCCESS && !unmapped_left(r, u)) /* that one: tried again below */
            *refuse = rc;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!(ids[i] & RESID_HANDLE_PINNED))
            continue;
        struct resid_unit *u = resid_unit_of_handle(ids[i]);
        CUresult rc = ready_for(r, u, stream, per_thread, capturing);
        /* An unmapped range whose restore failed (its copy or its mapping): restored again, as
           the next touch would, at most RESID_MAX_ERRORS times in all, so that a failure that
           does not last never reaches the operation; one that lasts does. */
        int tries = 1;
        for (; unmapped_left(r, u) && !r->sticky && tries < RESID_MAX_ERRORS; tries++) {
            rc = make_resident(r, u, waiter);
            if (rc == CUDA_SUCCESS || unmapped_left(r, u))
                rc = ready_for(r, u, stream, per_thread, capturing);
        }
        if (unmapped_left(r, u))
            SHIM_LOG_ONCE(SHIM_LOG_ERROR,
                          "an evicted range left unmapped could not come back (its restore "
                          "failed %d times): the operation on it fails with %s",
                          tries,
                          rc == CUDA_ERROR_OUT_OF_MEMORY ? "out of memory" : "the driver's error");
        else if (tries > 1)
            SHIM_LOG_ONCE(SHIM_LOG_INFO, "an evicted range left unmapped came back after its "
                                         "restore failed (made again)");
        if (rc != CUDA_SUCCESS)
            *refuse = rc;
        /* Read through the host mapping: its fence cannot cover this operation until it is
           submitted, so no restore may remap the range before then (resid_restore). Its other
           units' waits may drop the lock, hence here, after the last one for u. */
        if (u->state == SHIM_RS_HOST && !r->unmapped) {
            ids[i] |= RESID_HANDLE_HOST_READ;
            atomic_fetch_add_explicit(&u->host_readers, 1, memory_order_relaxed);
        }
    }
    resid_op_set(NULL, 0);
    pthread_mutex_unlock(&r->lock);
    return any;
}

void shim_resid_leave(uint64_t *ids, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (!(ids[i] & RESID_HANDLE_PINNED))
            continue;
        struct resid_unit *u = resid_unit_of_handle(ids[i]);
        if (ids[i] & RESID_HANDLE_HOST_READ)
            atomic_fetch_sub_explicit(&u->host_readers, 1, memory_order_release);
        ids[i] = saved ? saved[i] : u->id;
        atomic_fetch_sub_explicit(&u->pins, 1, memory_order_release);
    }
}
