/* shim_resid_mover.c — the mover thread: remaps restores ahead of their copies and completes
 * moves whose copies are done, in batches, so that remaps happen off the program's threads
 * (and with the residency lock dropped: shim_resid_move.c).
 *
 * The mover polls the events of the moves in flight (without waiting on any
 * one, so one slow copy does not hold back the others and the mover never
 * blocks the device clock), completes every move whose copy is done in one
 * pass, and sleeps on a condition while nothing is in flight. A thread that
 * needs a move over does not wait for the mover: it waits for the copy and
 * completes the move itself (resid_move_poll), so the mover is an accelerator,
 * never a dependency. */
#include "shim_resid_moves.h"

#include "base_time.h"

#include <time.h>

#define POLL_NS 20000 /* between event polls while moves are in flight */

static void *mover_main(void *arg);

bool resid_copies_pending(struct resid_ctx *r)
{
    /* A move whose copy the driver reports done no longer runs, even before it is completed
       here; the first one still running answers (the queue is in issue order, so that is
       usually its head). */
    bool pending = false;
    for (struct resid_move *m = r->queue; m && !pending; m = m->next)
        pending = !m->done || r->drv->query(m->done->event) != CUDA_SUCCESS;
    return pending;
}

void resid_mover_queue(struct resid_ctx *r, struct resid_move *m)
{
    m->next = NULL;
    if (r->queue_tail)
        r->queue_tail->next = m;
    else
        r->queue = m;
    r->queue_tail = m;
    if (!r->mover_running && !r->stopping) {
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        r->mover_running = pthread_create(&r->mover, &attr, mover_main, r) == 0;
        pthread_attr_destroy(&attr);
        if (!r->mover_running)
            SHIM_LOG_ONCE(SHIM_LOG_WARN, "no mover thread: moves complete when someone waits");
    }
    pthread_cond_signal(&r->wake);
}

void resid_mover_unqueue(struct resid_ctx *r, struct resid_move *m)
{
    struct resid_move *prev = NULL;
    for (struct resid_move **l = &r->queue; *l; prev = *l, l = &(*l)->next) {
        if (*l != m)
            continue;
        *l = m->next;
        if (r->queue_tail == m)
            r->queue_tail = prev;
        m->next = NULL;
        return;
    }
}

/* Contract in shim_resid_moves.h. A move that completes may be freed and the lock may have been
   dropped: the pass then starts again from the head (each restart follows one move off the
   queue, so it ends). A move still queued after a poll is still valid, and so is its
   successor. */
int resid_complete_done(struct resid_ctx *r)
{
    int n = 0;
restart:
    for (struct resid_move *m = r->queue; m; m = m->next) {
        if (m->waiters || m->remapping)
            continue;
        if (resid_move_poll(r, m, false)) {
            n++;
            goto restart;
        }
    }
    return n;
}

/* Remaps the restores queued that may be remapped before their copy ends (the program's thread
   never does, unless it touches one first); the lock drops during each. How many. */
static int order_restores(struct resid_ctx *r)
{
    int n = 0;
restart:
    for (struct resid_move *m = r->queue; m; m = m->next) {
        if (m->want_order && !m->ordered && !m->remapping && !m->cancelled && !m->waiters) {
            resid_order_restore(r, m); /* clears want_order: each is tried once */
            n++;
            goto restart;
        }
    }
    return n;
}

static __thread bool on_mover;

bool resid_on_mover(void)
{
    return on_mover;
}

static void *mover_main(void *arg)
{
    struct resid_ctx *r = arg; /* the device's manager whose moves it completes */
    shim_inside = 1;           /* nothing the mover does is the program's */
    on_mover = true;
    pthread_mutex_lock(&r->lock);
    while (!r->stopping) {
        if (!r->queue) {
            pthread_cond_wait(&r->wake, &r->lock);
            continue;
        }
        shim_timing_disturbed(); /* its remaps are libshim's host time, not the program's */
        uint32_t done = order_restores(r) + resid_complete_done(r);
        shim_timing_disturbed();
        if (done > 0)
            continue;
        struct timespec until = base_deadline_after(CLOCK_REALTIME, POLL_NS);
        pthread_cond_timedwait(&r->wake, &r->lock, &until);
    }
    r->mover_running = false;
    pthread_cond_broadcast(&r->wake);
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

/* Waits on r's condition for about 10 ms (lock held). */
static void nap(struct resid_ctx *r)
{
    struct timespec until = base_deadline_after(CLOCK_REALTIME, 10000000u);
    pthread_cond_timedwait(&r->wake, &r->lock, &until);
}

/* Lets the moves still in flight complete (at most about a second): each then has its move
   record, its chunks go back, and the totals at exit count only moves the trace also holds
   (an eviction a launch cancelled stays queued until its copy ends, after the program's last
   free). Without a mover, this thread completes them. */
static void drain(struct resid_ctx *r)
{
    for (int i = 0; r->queue && i < 100; i++) {
        if (!r->mover_running)
            resid_complete_done(r);
        if (r->queue)
            nap(r);
    }
}

void resid_mover_stop(struct resid_ctx *r)
{
    drain(r);
    r->stopping = true;
    pthread_cond_broadcast(&r->wake);
    for (int i = 0; r->mover_running && i < 100; i++) /* at most about a second */
        nap(r);
}
