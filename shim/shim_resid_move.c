/* shim_resid_move.c — starting evictions and restores, cancelling them, waiting for them, and
 * choosing what to evict.
 *
 * A move copies on the shim's own stream after a fence (events recorded after
 * the last submitted touches), records `done`, and hands the remap to the
 * mover. Every failure before the move is queued undoes what was done: the
 * allocation keeps its state and its data where they were. */
#include "shim_resid.h"

#include <stdlib.h>

int resid_fence(struct resid_alloc *a, CUstream stream)
{
    bool ok = !a->streams_unknown;
    for (uint8_t i = 0; ok && i < a->nstreams; i++) {
        CUevent e = resid_event_get();
        ok = e && shim.real.cuEventRecord(e, a->streams[i]) == CUDA_SUCCESS &&
             shim.real.cuStreamWaitEvent(stream, e, 0) == CUDA_SUCCESS;
        resid_event_put(e); /* the wait holds the record it saw: the event may be reused */
    }
    /* A stream we cannot name (per-thread, destroyed, or too many): wait for everything. */
    if (!ok && shim.real.cuCtxSynchronize() != CUDA_SUCCESS)
        return -1;
    a->nstreams = 0;
    a->streams_unknown = false;
    return 0;
}

static struct resid_move *move_new(struct resid_alloc *a, enum shim_move_dir dir,
                                   enum shim_move_reason reason)
{
    struct resid_move *m = calloc(1, sizeof *m);
    if (m && !(m->chunks = calloc(a->n, sizeof *m->chunks))) {
        free(m);
        return NULL;
    }
    if (m) {
        *m = (struct resid_move){a, dir, reason, false, NULL, a->n, m->chunks, 0, 0, NULL};
        m->bytes = a->size;
    }
    return m;
}

static void move_free(struct resid_move *m)
{
    free(m->chunks);
    free(m);
}

/* Copies a's bytes from chunks `from` to the move's chunks on stream s and records done. */
static int copy_all(struct resid_move *m, struct resid_chunk **from, CUdeviceptr from_va,
                    CUstream s)
{
    struct resid_alloc *a = m->alloc;
    for (uint32_t i = 0; i < a->n; i++) {
        uint64_t off = (uint64_t)i * resid.gran;
        uint64_t len = a->size - off < resid.gran ? a->size - off : resid.gran;
        CUdeviceptr src = from ? from[i]->addr : from_va + off;
        if (shim.real.cuMemcpyAsync(m->chunks[i]->addr, src, len, s) != CUDA_SUCCESS)
            return -1;
    }
    m->done = resid_event_get();
    return m->done && shim.real.cuEventRecord(m->done, s) == CUDA_SUCCESS ? 0 : -1;
}

/* Undoes a move that was never queued: copies already submitted must finish before
   its chunks can be reused; if that cannot be known, the chunks are not reused. */
static void abandon(struct resid_move *m, CUstream s)
{
    if (shim.real.cuStreamSynchronize(s) == CUDA_SUCCESS)
        resid_give_back(m->chunks, m->n);
    else
        SHIM_LOG_ONCE(SHIM_LOG_ERROR, "a failed move's copy stream could not be synchronised: "
                                      "its chunks are set aside");
    resid_event_put(m->done);
    move_free(m);
}

static void launch_move(struct resid_alloc *a, struct resid_move *m, enum resid_state state)
{
    m->start_ns = resid_now_ns();
    a->state = state;
    a->move = m;
    resid_mover_queue(m);
}

int resid_evict(struct resid_alloc *a, enum shim_move_reason reason)
{
    if (!resid.can_evict || a->state != RESID_DEVICE || a->pins || a->graph || a->move)
        return -1;
    struct resid_move *m = move_new(a, SHIM_MOVE_TO_HOST, reason);
    if (!m)
        return -1;
    if (resid_take_host(m->chunks, a->n) != 0) {
        move_free(m);
        return -1;
    }
    if (resid_fence(a, resid.to_host) != 0) {
        resid_give_back(m->chunks, m->n);
        move_free(m);
        return -1;
    }
    if (copy_all(m, NULL, a->va, resid.to_host) != 0) {
        abandon(m, resid.to_host);
        return -1;
    }
    resid.leaving_bytes += a->mapped;
    launch_move(a, m, RESID_EVICTING);
    return 0;
}

int resid_restore(struct resid_alloc *a, enum shim_move_reason reason)
{
    if (a->state != RESID_HOST || a->move)
        return -1;
    struct resid_move *m = move_new(a, SHIM_MOVE_TO_DEVICE, reason);
    if (!m)
        return -1;
    if (resid_take_device(m->chunks, a->n, NULL, false, NULL) != 0) {
        move_free(m);
        return -1;
    }
    /* Room may have been made with the lock dropped: someone else may have moved a. */
    if (a->state != RESID_HOST || a->move || resid_fence(a, resid.to_device) != 0) {
        resid_give_back(m->chunks, m->n);
        move_free(m);
        return a->state == RESID_HOST ? -1 : 0;
    }
    struct resid_fence *f = resid_take_fences(m->chunks, m->n);
    if (f) /* chunks freed by evictions: their copies come first */
        shim.real.cuStreamWaitEvent(resid.to_device, f->event, 0);
    resid_fence_drop(f);
    if (copy_all(m, a->backing, 0, resid.to_device) != 0) {
        abandon(m, resid.to_device);
        return -1;
    }
    launch_move(a, m, RESID_RESTORING);
    return 0;
}

void resid_cancel_eviction(struct resid_alloc *a, CUstream stream)
{
    struct resid_move *m = a->move;
    /* The launch must not write while the copy still reads (its result is discarded,
       but the rule keeps the host copy meaningful until then). */
    if (shim.real.cuStreamWaitEvent(stream, m->done, 0) != CUDA_SUCCESS)
        shim.real.cuEventSynchronize(m->done);
    m->cancelled = true;
    a->move = NULL;
    a->state = RESID_DEVICE;
    resid.leaving_bytes -= a->mapped;
    resid.cancelled++;
}

struct victim_search {
    struct resid_alloc *best;
    uint64_t best_score, now;
};

static void consider(struct resid_alloc *a, void *ctx)
{
    struct victim_search *s = ctx;
    if (a->state != RESID_DEVICE || a->pins || a->graph || a->move || a->skip_epoch == resid.epoch)
        return;
    uint64_t score = resid_evict_score(a, s->now);
    if (!s->best || score > s->best_score) {
        s->best = a;
        s->best_score = score;
    }
}

struct resid_alloc *resid_victim(void)
{
    if (!resid.can_evict)
        return NULL;
    struct victim_search s = {NULL, 0,
                              atomic_load_explicit(&shim.launch_seq, memory_order_relaxed)};
    resid_each(consider, &s);
    return s.best;
}

void resid_stalled(uint64_t t0, enum shim_move_reason reason)
{
    uint64_t t1 = resid_now_ns();
    resid.stall_ns += t1 - t0;
    if (shim.record & CONF_RECORD_MOVES)
        shim_trace_stall(t0, t1, reason);
}

void resid_wait_move(struct resid_alloc *a, enum shim_move_reason reason)
{
    uint64_t t0 = resid_now_ns();
    while (a->move) {
        struct resid_move *m = a->move;
        CUevent e = m->done;
        /* The host waits for the copy itself (so its clock shows the stall), then for
           the mover's remap. */
        pthread_mutex_unlock(&resid.lock);
        shim.real.cuEventSynchronize(e);
        pthread_mutex_lock(&resid.lock);
        pthread_cond_signal(&resid.wake);
        while (a->move == m)
            pthread_cond_wait(&resid.changed, &resid.lock);
    }
    resid_stalled(t0, reason);
}

bool resid_wait_oldest(void)
{
    struct resid_move *m = resid.queue;
    while (m && m->cancelled)
        m = m->next;
    if (!m)
        return false;
    resid_wait_move(m->alloc, SHIM_REASON_BUDGET);
    return true;
}

void resid_release(struct resid_alloc *a)
{
    bool mapped = !(resid.unmapped && a->state == RESID_HOST);
    if (mapped && shim.real.cuMemUnmap(a->va, a->mapped) != CUDA_SUCCESS &&
        shim.real.cuMemUnmap(a->va, a->mapped) != CUDA_SUCCESS) {
        SHIM_LOG_ONCE(SHIM_LOG_WARN, "a freed managed range could not be unmapped: its address "
                                     "range is left reserved");
    } else {
        shim.real.cuMemAddressFree(a->va, a->mapped);
    }
    resid_give_back(a->backing, a->n);
    resid_alloc_free(a);
}
