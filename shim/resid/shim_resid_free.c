/* shim_resid_free.c — managed allocations freed by the program: at once once the device is idle
 * (cuMemFree), or in the order of their stream (cuMemFreeAsync: budget/shim_resid_reap.c), whose
 * frees not fenced yet are fenced before the stream is destroyed. */
#include "shim_resid_front.h"

#include <stdlib.h>

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
        if (async && resid_pending_add(r, NULL, m, stream, resid_nameable(stream, per_thread))) {
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
    } else if (!(async &&
                 resid_pending_add(r, u, NULL, stream, resid_nameable(stream, per_thread)))) {
        if (async)
            idle = r->drv->stream_sync(stream) == CUDA_SUCCESS || device_idle(r);
        free_now(r, u, idle);
    }
    pthread_mutex_unlock(&r->lock);
    return CUDA_SUCCESS;
}

void shim_resid_stream_destroyed(CUstream stream)
{
    struct resid_ctx *r;
    for (uint32_t k = 0; (r = resid_started_at(k)) != NULL; k++) {
        pthread_mutex_lock(&r->lock);
        resid_reap_stream_gone(r, stream);
        pthread_mutex_unlock(&r->lock);
    }
}
