/* shim_resid_move.c — moves: starting evictions and restores, cancelling them, completing
 * them once their copy is known done (by the mover or by a thread that waits), and giving
 * them up when the copy's end cannot be known.
 *
 * A move copies on the shim's own stream after a fence (events recorded after
 * the last submitted touches on every stream that touched the unit), records
 * `done`, and is completed — remapped — only once `done` is known complete, so
 * no range is ever unmapped under work that may still touch it. Every failure
 * before the move starts undoes what was done; a failure after (a copy or a
 * remap that fails) is the ERROR transition: the range still maps the chunks
 * that hold the data. No wait here is unbounded: a thread that waits for a move
 * synchronises on the copy itself and completes the move, and a move whose copy
 * cannot be waited for RESID_MAX_ERRORS times is given up. */
#include "shim_resid_moves.h"

#include "base_time.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

int resid_fence(struct resid_ctx *r, struct resid_unit *u, CUstream stream)
{
    bool ok = !u->streams_unknown;
    for (uint8_t i = 0; ok && i < u->nstreams; i++) {
        CUevent e = resid_event_get(r);
        ok = e && r->drv->record(e, u->streams[i]) == CUDA_SUCCESS &&
             r->drv->wait_event(stream, e) == CUDA_SUCCESS;
        resid_event_put(r, e); /* the wait holds the record it saw: the event may be reused */
    }
    /* A stream we cannot name (per-thread, destroyed, or too many): wait for all the program's
       work (its touches come from the program's streams). */
    if (!ok) {
        CUresult rc = r->drv->program_sync();
        if (rc != CUDA_SUCCESS) {
            resid_driver_failed(r, rc);
            return -1;
        }
    }
    u->nstreams = 0;
    u->streams_unknown = false;
    return 0;
}

struct resid_move *resid_move_new(struct resid_unit *u, enum shim_move_dir dir,
                                  const struct resid_cause *cause)
{
    struct resid_move *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    if (!(m->chunks = calloc(u->n, sizeof *m->chunks))) {
        free(m);
        return NULL;
    }
    m->unit = u;
    m->unit_id = u->id;
    m->dir = dir;
    m->cause = *cause;
    m->n = u->n;
    m->bytes = u->size;
    return m;
}

void resid_move_free(struct resid_ctx *r, struct resid_move *m)
{
    resid_fence_drop(r, m->done);
    free(m->chunks);
    free(m);
}

/* Copies u's bytes from chunks `from` to the move's chunks on stream s and records done;
   0, or -1. Both sides are read and written at the chunks' own addresses, never through
   u's range, so the range may be unmapped (its unit freed) while the copy runs: only the
   chunks must outlive it, which their fences see to. */
static int copy_all(struct resid_ctx *r, struct resid_move *m, struct resid_chunk **from,
                    CUstream s)
{
    struct resid_unit *u = m->unit;
    CUresult rc = CUDA_SUCCESS;
    int timed = shim_timing_copy_begin(
        s, m->dir == SHIM_MOVE_TO_DEVICE); /* the link's speed, for the planner */
    /* The two sides may be cut into chunks differently: one copy per piece where both are
       whole (one copy in all when each side is one chunk). */
    uint32_t i = 0, j = 0;
    uint64_t in_from = 0, in_to = 0;
    for (uint64_t off = 0; off < u->size && rc == CUDA_SUCCESS;) {
        if (i >= u->n || j >= u->n || !from[i] || !m->chunks[j]) {
            rc = CUDA_ERROR_INVALID_VALUE; /* a side shorter than the unit: never, but no copy */
            break;
        }
        uint64_t len = u->size - off;
        uint64_t left_from = resid_chunk_bytes(r, from[i]) - in_from;
        uint64_t left_to = resid_chunk_bytes(r, m->chunks[j]) - in_to;
        len = len < left_from ? len : left_from;
        len = len < left_to ? len : left_to;
        rc = r->drv->copy(m->chunks[j]->addr + in_to, from[i]->addr + in_from, len, s);
        off += len;
        in_from += len;
        in_to += len;
        if (in_from == resid_chunk_bytes(r, from[i]))
            i++, in_from = 0;
        if (in_to == resid_chunk_bytes(r, m->chunks[j]))
            j++, in_to = 0;
    }
    CUevent e = rc == CUDA_SUCCESS ? resid_event_get(r) : NULL;
    if (e && (rc = r->drv->record(e, s)) == CUDA_SUCCESS)
        m->done = resid_fence_new(r, e); /* numbered now: in the stream's order */
    else
        resid_event_put(r, e);
    if (m->done)
        shim_timing_copy_end(timed, s, m->dir == SHIM_MOVE_TO_DEVICE, u->size);
    else
        shim_timing_cancel(timed);
    resid_driver_failed(r, rc);
    return m->done ? 0 : -1;
}

/* Undoes a move that never started: copies already submitted must finish before its chunks
   can be reused; if that cannot be known, the chunks are set aside. */
static void abandon(struct resid_ctx *r, struct resid_move *m, CUstream s)
{
    CUresult rc = r->drv->stream_sync(s);
    resid_driver_failed(r, rc);
    if (rc == CUDA_SUCCESS)
        resid_give_back(r, m->chunks, m->n);
    else
        resid_set_aside(r, m->chunks, m->n);
    resid_move_free(r, m);
}

static void start(struct resid_ctx *r, struct resid_unit *u, struct resid_move *m,
                  enum shim_resid_event ev)
{
    m->start_ns = resid_now_ns();
    resid_fsm(r, u, ev, &m->cause);
    u->move = m;
    resid_mover_queue(r, m);
}

/* Lets go of u's ordered restore still in flight (its copy is then only waited for to give its
   host chunks back), so that u can move again; its users, and the next copy of u, wait for
   that copy through u->ready. */
static void detach_ordered(struct resid_ctx *r, struct resid_unit *u)
{
    if (!resid_move_poll(r, u->move, false)) {
        u->move->cancelled = true;
        u->move = NULL;
    }
}

int resid_evict(struct resid_ctx *r, struct resid_unit *u, const struct resid_cause *cause)
{
    if (!r->can_evict || r->sticky || u->state != SHIM_RS_DEVICE || u->pins || resid_unmovable(u) ||
        (u->move && !u->move->ordered))
        return -1;
    struct resid_move *m = resid_move_new(u, SHIM_MOVE_TO_HOST, cause);
    if (!m)
        return -1;
    if (resid_take_host(r, m->chunks, u->n) != 0) {
        resid_move_free(r, m);
        return -1;
    }
    /* A restore's copy may still be writing u's device chunks: the copy out comes after it. */
    if (u->ready && r->drv->query(u->ready->event) != CUDA_SUCCESS &&
        r->drv->wait_event(r->to_host, u->ready->event) != CUDA_SUCCESS) {
        resid_give_back(r, m->chunks, m->n);
        resid_move_free(r, m);
        return -1;
    }
    if (resid_fence(r, u, r->to_host) != 0) {
        resid_give_back(r, m->chunks, m->n);
        resid_move_free(r, m);
        return -1;
    }
    if (copy_all(r, m, u->backing, r->to_host) != 0) {
        abandon(r, m, r->to_host);
        return -1;
    }
    if (u->move) /* only now: the copy out is ordered after it */
        detach_ordered(r, u);
    start(r, u, m, SHIM_EV_EVICT);
    return 0;
}

/* Keeps the host time of a remap that began at t0 among the first RESID_REMAP_SAMPLES. */
static void remap_timed(struct resid_ctx *r, uint64_t t0)
{
    uint64_t us = (resid_now_ns() - t0) / 1000;
    if (r->nremap_us < RESID_REMAP_SAMPLES)
        r->remap_us[r->nremap_us++] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

static int by_value(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

double resid_remap_median(struct resid_ctx *r)
{
    uint32_t v[RESID_REMAP_SAMPLES];
    uint32_t n = r->nremap_us;
    memcpy(v, r->remap_us, n * sizeof *v);
    if (!n)
        return -1;
    qsort(v, n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + (double)v[n / 2]) / 2;
}

/* What a remap needs, read under the lock, so that its driver calls can run without it. */
struct remap_job {
    const struct resid_driver *drv;
    uint64_t gran;
    CUdevice device;
    CUdeviceptr va;
    uint64_t mapped;
    uint32_t n;
    struct resid_chunk **to, **back; /* the move's chunks; the range's present ones */
    bool was_mapped, to_unmapped;
};

/* The driver calls of a remap (no lock): 0 done; -1 failed with the old mapping in place; -2
   failed and neither mapping could be made. *rc: the failed call's error. */
static int remap_calls(const struct remap_job *j, CUresult *rc)
{
    *rc = CUDA_SUCCESS;
    if (j->was_mapped && (*rc = j->drv->unmap(j->va, j->mapped)) != CUDA_SUCCESS)
        return -1;
    if (j->to_unmapped || resid_map_calls(j->drv, j->gran, j->device, j->va, j->to, j->n, rc) == 0)
        return 0;
    CUresult again;
    if (!j->was_mapped ||
        resid_map_calls(j->drv, j->gran, j->device, j->va, j->back, j->n, &again) == 0)
        return -1;
    return -2;
}

#define REMAP_WAIT_NS     (30ull * 1000000000ull) /* a remap by another thread, at most */
#define REMAP_WAIT_STEPNS 100000000ull            /* waking every 100 ms meanwhile */

/* Waits while m is being remapped by another thread, at most REMAP_WAIT_NS (the caller holds
   m by m->waiters); true if the remap is over. */
static bool wait_remap(struct resid_ctx *r, struct resid_move *m)
{
    uint64_t t0 = resid_now_ns();
    while (m->remapping && resid_now_ns() - t0 < REMAP_WAIT_NS) {
        struct timespec until = base_deadline_after(CLOCK_REALTIME, REMAP_WAIT_STEPNS);
        pthread_cond_timedwait(&r->remapped, &r->lock, &until);
    }
    resid_stalled(r, t0, SHIM_REASON_DEMAND);
    if (m->remapping)
        SHIM_LOG_ONCE(SHIM_LOG_ERROR, "a remap by another thread did not end within 30 s: the "
                                      "operation that needs its range fails rather than wait");
    return !m->remapping;
}

bool resid_wait_remap(struct resid_ctx *r, struct resid_unit *u)
{
    struct resid_move *m = u->move;
    if (!m || !m->remapping)
        return true;
    m->waiters++;
    bool over = wait_remap(r, m);
    if (--m->waiters == 0 && m->finished)
        resid_move_free(r, m);
    return over;
}

/* Points u's range at the move's chunks; 0, or -1 with the old mapping in place (or, if
   neither mapping could be made, u->stuck set: the next touch maps the old chunks again).
   The driver calls run with the lock dropped (m->remapping set meanwhile: every other thread
   that needs u or its move waits, resid_wait_remap), so launches that touch other units never
   wait for a remap; on a real driver a remap costs the host far more than the planner's
   default (tests/bench/RESULTS-gpu.md). Times the remap. */
static int remap(struct resid_ctx *r, struct resid_unit *u, struct resid_move *m)
{
    struct remap_job j = {
        r->drv,
        r->gran,
        r->device,
        u->va,
        u->mapped,
        u->n,
        m->chunks,
        u->backing,
        !u->stuck && !(r->unmapped && u->state == SHIM_RS_RESTORING),
        r->unmapped && m->dir == SHIM_MOVE_TO_HOST,
    };
    CUresult rc;
    m->remapping = true;
    pthread_mutex_unlock(&r->lock);
    uint64_t t0 = resid_now_ns();
    int got = remap_calls(&j, &rc);
    pthread_mutex_lock(&r->lock);
    m->remapping = false;
    pthread_cond_broadcast(&r->remapped);
    r->remaps_unlocked++;
    r->remaps_by_mover += resid_on_mover();
    if (got == 0) {
        remap_timed(r, t0);
        return 0;
    }
    resid_driver_failed(r, rc);
    r->oom.driver_failed = true;
    if (got == -2) {
        u->stuck = true;
        SHIM_LOG_ONCE(SHIM_LOG_ERROR, "a managed range could not be mapped again after a failed "
                                      "move: it is mapped again at its next use");
    }
    return -1;
}

bool resid_unstick(struct resid_ctx *r, struct resid_unit *u)
{
    if (!u->stuck)
        return true;
    if (resid_map(r, u->va, u->backing, u->n) == 0) {
        u->stuck = false;
        return true;
    }
    SHIM_LOG_ONCE(SHIM_LOG_ERROR, "a managed range cannot be mapped again (the driver refuses): "
                                  "operations on it fail with the driver's error");
    return false;
}

/* Remaps restoring u onto its device chunks before m's copy ends (ORDERED): every user of u
   waits for the copy in stream order (u->ready), and the host chunks, which the copy reads at
   their own addresses, stay with m until it ends. Only for a unit no queued work touches
   through its host mapping (quiet): unmapping it is then safe at once. If the remap fails,
   nothing changed: the move completes as any other. */
void resid_order_restore(struct resid_ctx *r, struct resid_move *m)
{
    struct resid_unit *u = m->unit;
    if (!m->want_order || m->ordered || m->remapping || m->cancelled || m->finished)
        return;
    m->want_order = false;
    if (remap(r, u, m) != 0)
        return;
    u->stuck = false;
    for (uint32_t i = 0; i < u->n; i++) {
        struct resid_chunk *host = u->backing[i];
        u->backing[i] = m->chunks[i];
        m->chunks[i] = host;
    }
    m->ordered = true;
    resid_fence_drop(r, u->ready);
    u->ready = resid_fence_ref(m->done);
    resid_fsm(r, u, SHIM_EV_ORDERED, &m->cause);
}

int resid_restore_start(struct resid_ctx *r, struct resid_unit *u, struct resid_move *m)
{
    /* Room may have been made with the lock dropped: someone else may have moved u. */
    bool quiet = !u->nstreams && !u->streams_unknown; /* no touch through the host mapping */
    if (u->state != SHIM_RS_HOST || u->move || resid_read_through_host(u) ||
        resid_fence(r, u, r->to_device) != 0) {
        resid_give_back(r, m->chunks, m->n);
        resid_move_free(r, m);
        return u->state == SHIM_RS_HOST ? -1 : 0;
    }
    struct resid_fence *f = resid_take_fences(r, m->chunks, m->n);
    CUresult rc = f ? r->drv->wait_event(r->to_device, f->event) : CUDA_SUCCESS;
    if (rc != CUDA_SUCCESS || copy_all(r, m, u->backing, r->to_device) != 0) {
        for (uint32_t i = 0; i < m->n; i++) /* their next owner still waits for that copy */
            resid_chunk_fence(r, m->chunks[i], f);
        resid_fence_drop(r, f);
        abandon(r, m, r->to_device);
        return -1;
    }
    resid_fence_drop(r, f); /* chunks freed by evictions: their copies come first */
    m->want_order = quiet;  /* the mover remaps it, off this thread (resid_order_restore) */
    start(r, u, m, SHIM_EV_RESTORE);
    return 0;
}

void resid_cancel_eviction(struct resid_ctx *r, struct resid_unit *u, CUstream stream)
{
    struct resid_move *m = u->move;
    /* The copy still reads u's device chunks. Its result is discarded, and its host chunks
       go back only once it ends (complete()); but u may be freed before then, so u's chunks
       carry its fence: whoever takes them next waits for the copy before writing them. Every
       use of u waits for it too until it is known done — this touch, and a slab's other
       members on other threads' streams — so that no write races the read. */
    for (uint32_t i = 0; i < u->n; i++)
        resid_chunk_fence(r, u->backing[i], m->done);
    resid_fence_drop(r, u->reading); /* the eviction stream runs in order: the later copy covers */
    u->reading = resid_fence_ref(m->done);
    m->cancelled = true;
    u->move = NULL;
    resid_fsm(r, u, SHIM_EV_CANCEL,
              &(struct resid_cause){SHIM_REASON_CANCELLED, stream, 0, UINT64_MAX});
}

/* The move record (start to end) beside the transitions, for the summary and Perfetto. */
static void trace_move(struct resid_ctx *r, const struct resid_move *m,
                       enum shim_move_reason reason)
{
    if (shim.record & CONF_RECORD_MOVES)
        shim_trace_move(m->dir, m->unit_id, m->bytes, m->start_ns, resid_now_ns(), reason,
                        (uint32_t)r->device);
}

/* Finishes m, whose copy is known complete (lock held). */
static void complete(struct resid_ctx *r, struct resid_move *m)
{
    struct resid_unit *u = m->unit;
    if (m->cancelled) { /* an ordered restore let go of keeps its reason: it was not undone */
        resid_give_back(r, m->chunks, m->n);
        trace_move(r, m, m->ordered ? m->cause.reason : SHIM_REASON_CANCELLED);
        return;
    }
    bool evict = m->dir == SHIM_MOVE_TO_HOST;
    if (m->ordered) { /* remapped already: the host chunks it read are free now */
        u->move = NULL;
        resid_give_back(r, m->chunks, m->n);
        trace_move(r, m, m->cause.reason);
        return;
    }
    int remapped = remap(r, u, m); /* u->move stays set meanwhile: others wait for the remap */
    u->move = NULL;
    if (remapped != 0) {
        resid_give_back(r, m->chunks, m->n);
        u->skip_epoch = r->epoch; /* not again in this search; the caller may retry */
        r->oom.driver_failed = true;
        resid_fsm(r, u, SHIM_EV_ERROR,
                  &(struct resid_cause){SHIM_REASON_ERROR, NULL, 0, UINT64_MAX});
        return;
    }
    u->stuck = false;
    for (uint32_t i = 0; evict && i < u->n; i++) /* written only after the copy */
        resid_chunk_fence(r, u->backing[i], m->done);
    resid_give_back(r, u->backing, u->n);
    for (uint32_t i = 0; i < u->n; i++)
        u->backing[i] = m->chunks[i];
    if (!evict) { /* the next user of the data waits for the copy */
        resid_fence_drop(r, u->ready);
        u->ready = resid_fence_ref(m->done);
    }
    resid_fsm(r, u, SHIM_EV_COPY_DONE, &m->cause);
    trace_move(r, m, m->cause.reason);
}

/* Gives m up: its copy failed, or its end cannot be known (lock held). */
static void give_up(struct resid_ctx *r, struct resid_move *m, CUresult rc)
{
    struct resid_unit *u = m->unit;
    resid_driver_failed(r, rc);
    /* The copy may still write the destination, or read an ordered restore's source (in
       m->chunks either way): never reuse them. Otherwise the source holds the data and the
       range still maps it. */
    resid_set_aside(r, m->chunks, m->n);
    if (m->cancelled)
        return;
    u->unsettled = true; /* later copies on the same stream come after it; a release does not */
    if (m->ordered) {    /* u maps the copy's destination, which its users wait for already */
        u->move = NULL;
        r->oom.driver_failed = true;
        return;
    }
    /* The copy may still read u's chunks (its source): u's users wait for it in stream order
       (a wait the driver may still accept), and so does the next owner of its device chunks
       (a release of an unsettled unit waits for the whole device first). An earlier reading
       fence is over: u was moved again since, which needs it done. */
    for (uint32_t i = 0; m->dir == SHIM_MOVE_TO_HOST && i < u->n; i++)
        resid_chunk_fence(r, u->backing[i], m->done);
    resid_fence_drop(r, u->reading);
    u->reading = resid_fence_ref(m->done);
    u->move = NULL;
    u->skip_epoch = r->epoch;
    r->oom.driver_failed = true;
    resid_fsm(r, u, SHIM_EV_ERROR, &(struct resid_cause){SHIM_REASON_ERROR, NULL, 0, UINT64_MAX});
}

/* m is over: off the queue, and freed unless a waiter still holds it. */
static void finish(struct resid_ctx *r, struct resid_move *m)
{
    resid_mover_unqueue(r, m);
    m->finished = true;
    if (!m->waiters)
        resid_move_free(r, m);
}

/* Whether m is over after waiting for another thread's remap of it, if one is in progress:
   1 over (m freed unless others still wait), 0 not over and no remap in progress, -1 a remap
   still in progress (waited for in vain, or not waited for without wait). Lock held. */
static int after_remap(struct resid_ctx *r, struct resid_move *m, bool wait)
{
    if (m->remapping) {
        if (!wait)
            return -1;
        m->waiters++;
        wait_remap(r, m);
        m->waiters--;
    }
    if (m->finished) {
        if (!m->waiters)
            resid_move_free(r, m);
        return 1;
    }
    return m->remapping ? -1 : 0;
}

bool resid_move_poll(struct resid_ctx *r, struct resid_move *m, bool wait)
{
    /* Another thread may be completing or ordering m with the lock dropped (remapping), now or
       once this one comes back from waiting for the copy: only that thread completes it. */
    int over = after_remap(r, m, wait);
    if (over)
        return over > 0;
    CUresult rc = r->drv->query(m->done->event);
    if (rc == CUDA_ERROR_NOT_READY && !wait)
        return false;
    if (rc != CUDA_SUCCESS) {
        CUevent done = m->done->event; /* m->done lives while m has waiters */
        m->waiters++;
        pthread_mutex_unlock(&r->lock);
        rc = r->drv->event_sync(done);
        pthread_mutex_lock(&r->lock);
        m->waiters--;
        if ((over = after_remap(r, m, true)) != 0)
            return over > 0;
    }
    if (rc == CUDA_SUCCESS)
        complete(r, m);
    else if (resid_sticky_error(rc) || ++m->errors >= RESID_MAX_ERRORS)
        give_up(r, m, rc);
    else
        return false;
    finish(r, m);
    return true;
}

void resid_stalled(struct resid_ctx *r, uint64_t t0, enum shim_move_reason reason)
{
    uint64_t t1 = resid_now_ns();
    r->stall_ns += t1 - t0;
    if (shim.record & CONF_RECORD_MOVES)
        shim_trace_stall(t0, t1, reason, (uint32_t)r->device);
}

void resid_wait_move(struct resid_ctx *r, struct resid_unit *u, enum shim_move_reason reason)
{
    uint64_t t0 = resid_now_ns();
    /* Each round completes or gives up the move, or counts one failed wait of it. */
    for (int round = 0; u->move && round < 2 * RESID_MAX_ERRORS + 2; round++)
        resid_move_poll(r, u->move, true);
    resid_stalled(r, t0, reason);
}

bool resid_wait_oldest(struct resid_ctx *r)
{
    /* An eviction gives its device chunks back; a restore turns its unit into a victim
       again once its operation is submitted. */
    struct resid_move *m = r->queue;
    while (m && m->cancelled)
        m = m->next;
    if (!m)
        return false;
    uint64_t t0 = resid_now_ns();
    resid_move_poll(r, m, true);
    resid_stalled(r, t0, SHIM_REASON_BUDGET);
    return true;
}

void resid_release(struct resid_ctx *r, struct resid_unit *u, const struct resid_cause *cause)
{
    bool mapped = !(r->unmapped && u->state == SHIM_RS_HOST) && !u->stuck;
    bool kept = resid_spare_keep(r, u); /* whole on the device: its range stays mapped */
    resid_fsm(r, u, SHIM_EV_FREE, cause);
    if (kept) {
        resid_unit_free(r, u);
        return;
    }
    if (u->unsettled && r->drv->ctx_sync() != CUDA_SUCCESS) {
        SHIM_LOG_ONCE(SHIM_LOG_WARN, "a freed managed range may still be read by a copy whose end "
                                     "is unknown: it is left mapped and its chunks are not reused");
        resid_set_aside(r, u->backing, u->n);
    } else if (mapped) {
        resid_unmap_range(r, u->va, u->mapped, u->backing, u->n);
    } else {
        r->drv->address_free(u->va, u->mapped);
        resid_give_back(r, u->backing, u->n);
    }
    resid_unit_free(r, u);
}
