/* shim_resid_touch.c — what a launch or copy needs before it is submitted: its managed
 * allocations resident and pinned until the submission is done.
 *
 * Pinning first (every touched allocation, before any restore makes room)
 * keeps one restore from evicting another the same launch needs. An
 * allocation that cannot come back (nothing else can move) stays on the
 * host: the launch reads it through the host link, correct but slower. */
#include "shim_resid.h"

static void note_stream(struct resid_alloc *a, CUstream s, bool per_thread)
{
    if ((per_thread && !s) || s == CU_STREAM_PER_THREAD) {
        a->streams_unknown = true; /* another thread cannot name this thread's stream */
        return;
    }
    for (uint8_t i = 0; i < a->nstreams; i++)
        if (a->streams[i] == s)
            return;
    if (a->nstreams < RESID_MAX_STREAMS)
        a->streams[a->nstreams++] = s;
    else
        a->streams_unknown = true;
}

/* Brings a to the device for a launch on stream s (lock held, a pinned). */
static void make_resident(struct resid_alloc *a, CUstream s)
{
    if (a->stuck && resid_map(a->va, a->backing, a->n) == 0)
        a->stuck = false;
    if (a->state == RESID_EVICTING && a->move)
        resid_cancel_eviction(a, s);
    if (a->state != RESID_HOST || resid_restore(a, SHIM_REASON_DEMAND) == 0 ||
        a->state != RESID_HOST)
        return;
    if (!resid.unmapped) {
        SHIM_LOG_ONCE(SHIM_LOG_INFO, "a launch needs more than the budget holds at once: it "
                                     "reads some data through the host link");
        return;
    }
    /* An unmapped range cannot be read through the link: exceed the budget instead. */
    SHIM_LOG_ONCE(SHIM_LOG_WARN, "a launch needs more than the budget holds at once, and "
                                 "evicted ranges are unmapped: going over the budget for it");
    resid.over_budget = true;
    resid_restore(a, SHIM_REASON_DEMAND);
    resid.over_budget = false;
}

/* The managed allocation with id, or NULL (lock held). */
static inline struct resid_alloc *managed(uint64_t id)
{
    return (id & SHIM_MANAGED_ID_TAG) ? resid_find(id) : NULL;
}

static inline bool any_managed(const uint64_t *ids, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (ids[i] & SHIM_MANAGED_ID_TAG)
            return true;
    return false;
}

bool shim_resid_enter(const uint64_t *ids, uint32_t n, CUstream stream, bool per_thread)
{
    if (!any_managed(ids, n))
        return false;
    bool capturing = shim_capture_active(stream, per_thread);
    uint64_t now = atomic_load_explicit(&shim.launch_seq, memory_order_relaxed);
    pthread_mutex_lock(&resid.lock);
    for (uint32_t i = 0; i < n; i++) {
        struct resid_alloc *a = managed(ids[i]);
        if (!a)
            continue;
        a->pins++;
        a->last_use = now;
        resid_note_touch(a, now);
        if (capturing)
            a->graph = true; /* replays are invisible: it stays on the device from now on */
    }
    for (uint32_t i = 0; i < n; i++) {
        struct resid_alloc *a = managed(ids[i]);
        if (a)
            make_resident(a, stream);
    }
    for (uint32_t i = 0; i < n; i++) {
        struct resid_alloc *a = managed(ids[i]);
        if (a && a->state == RESID_RESTORING)
            resid_wait_move(a, SHIM_REASON_DEMAND);
        if (!a || capturing)
            continue;
        /* Only now: a restore's fence above must not swallow this launch's touch. */
        note_stream(a, stream, per_thread);
        if (a->ready) { /* a copy made its data or chunks: wait in order */
            shim.real.cuStreamWaitEvent(stream, a->ready->event, 0);
            resid_fence_drop(a->ready);
            a->ready = NULL;
        }
    }
    pthread_mutex_unlock(&resid.lock);
    return true;
}

void shim_resid_leave(const uint64_t *ids, uint32_t n)
{
    pthread_mutex_lock(&resid.lock);
    for (uint32_t i = 0; i < n; i++) {
        struct resid_alloc *a = managed(ids[i]);
        if (a && a->pins > 0)
            a->pins--;
    }
    pthread_mutex_unlock(&resid.lock);
}
