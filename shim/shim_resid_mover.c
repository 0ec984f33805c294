/* shim_resid_mover.c — the mover thread: completes moves whose copies are done, remapping their
 * ranges in batches.
 *
 * Remapping is the step that must not race with the device: a range is
 * unmapped only once its copy is known complete, and the copy ran after the
 * fence, so every touch submitted before the move is known complete too. The
 * mover polls the events of the moves in flight (without waiting on any one,
 * so one slow copy does not hold back the others and the mover never blocks
 * the device clock), remaps every completed move in one pass, and sleeps on a
 * condition while nothing is in flight. A remap that fails puts the range back
 * on the chunks it had: the data stays where it was. */
#include "shim_resid.h"

#include <stdlib.h>
#include <time.h>

#define POLL_NS 20000 /* between event polls while moves are in flight */

static void *mover_main(void *arg);

void resid_mover_queue(struct resid_move *m)
{
    m->next = NULL;
    if (resid.queue_tail)
        resid.queue_tail->next = m;
    else
        resid.queue = m;
    resid.queue_tail = m;
    if (!resid.mover_running && !resid.stopping) {
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        resid.mover_running = pthread_create(&resid.mover, &attr, mover_main, NULL) == 0;
        pthread_attr_destroy(&attr);
        if (!resid.mover_running)
            SHIM_LOG_ONCE(SHIM_LOG_WARN, "no mover thread: moves complete when someone waits");
    }
    pthread_cond_signal(&resid.wake);
}

/* Points a's range at the move's chunks; 0, or -1 with the old mapping back in place. */
static int remap(struct resid_alloc *a, struct resid_move *m)
{
    bool was_mapped = !a->stuck && !(resid.unmapped && a->state == RESID_RESTORING);
    bool to_unmapped = resid.unmapped && m->dir == SHIM_MOVE_TO_HOST;
    if (was_mapped && shim.real.cuMemUnmap(a->va, a->mapped) != CUDA_SUCCESS)
        return -1;
    if (to_unmapped || resid_map(a->va, m->chunks, a->n) == 0)
        return 0;
    if (!was_mapped || resid_map(a->va, a->backing, a->n) == 0)
        return -1;
    /* Neither mapping could be made: both copies hold the data; keep trying. */
    for (int tries = 0; tries < 3; tries++)
        if (resid_map(a->va, m->chunks, a->n) == 0)
            return 0;
    a->stuck = true; /* the range should map the new chunks: the next touch tries again */
    SHIM_LOG_ONCE(SHIM_LOG_ERROR, "a managed range could not be mapped again after a move: "
                                  "accesses to it will fault");
    return -1;
}

static void trace_move(const struct resid_move *m, enum shim_move_reason reason)
{
    if (shim.record & CONF_RECORD_MOVES)
        shim_trace_move(m->dir, m->alloc->id, m->bytes, m->start_ns, resid_now_ns(), reason);
}

/* Finishes move m, whose copy is complete (lock held). */
static void complete(struct resid_move *m)
{
    struct resid_alloc *a = m->alloc;
    if (m->cancelled) {
        resid_give_back(m->chunks, m->n);
        trace_move(m, SHIM_REASON_CANCELLED);
    } else {
        bool evict = m->dir == SHIM_MOVE_TO_HOST;
        if (evict)
            resid.leaving_bytes -= a->mapped;
        int rc = remap(a, m);
        if (rc == 0)
            a->stuck = false;
        if (rc == 0 || a->stuck) {
            struct resid_fence *f = resid_fence_new(m->done);
            m->done = NULL;
            for (uint32_t i = 0; evict && i < a->n; i++) /* written only after the copy */
                a->backing[i]->fence = resid_fence_ref(f);
            resid_give_back(a->backing, a->n);
            for (uint32_t i = 0; i < a->n; i++)
                a->backing[i] = m->chunks[i];
            a->state = evict ? RESID_HOST : RESID_DEVICE;
            (*(evict ? &resid.evictions : &resid.restores))++;
            trace_move(m, m->reason);
            if (!evict) { /* the first user of the data waits for the copy */
                resid_fence_drop(a->ready);
                a->ready = resid_fence_ref(f);
            }
            resid_fence_drop(f);
        } else {
            resid_give_back(m->chunks, m->n);
            a->state = evict ? RESID_DEVICE : RESID_HOST;
        }
        a->move = NULL;
    }
    resid_event_put(m->done);
    free(m->chunks);
    free(m);
    pthread_cond_broadcast(&resid.changed);
}

/* Completes every queued move whose copy is done, in one pass; returns how many. */
static int complete_batch(void)
{
    int n = 0;
    for (struct resid_move **l = &resid.queue, *prev = NULL; *l;) {
        struct resid_move *m = *l;
        if (shim.real.cuEventQuery(m->done) != CUDA_SUCCESS) {
            prev = m;
            l = &m->next;
            continue;
        }
        *l = m->next;
        if (resid.queue_tail == m)
            resid.queue_tail = prev;
        complete(m);
        n++;
    }
    return n;
}

static void *mover_main(void *arg)
{
    (void)arg;
    shim_inside = 1; /* nothing the mover does is the program's */
    pthread_mutex_lock(&resid.lock);
    while (!resid.stopping) {
        if (!resid.queue) {
            pthread_cond_wait(&resid.wake, &resid.lock);
            continue;
        }
        if (complete_batch() > 0)
            continue;
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += POLL_NS;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&resid.wake, &resid.lock, &until);
    }
    resid.mover_running = false;
    pthread_cond_broadcast(&resid.changed);
    pthread_mutex_unlock(&resid.lock);
    return NULL;
}

void shim_resid_stop(void)
{
    pthread_mutex_lock(&resid.lock);
    resid.stopping = true;
    pthread_cond_broadcast(&resid.wake);
    while (resid.mover_running)
        pthread_cond_wait(&resid.changed, &resid.lock);
    pthread_mutex_unlock(&resid.lock);
}
