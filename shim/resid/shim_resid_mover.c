/* shim_resid_mover.c — the mover thread: completes moves whose copies are done, in batches,
 * so that remaps happen off the program's threads.
 *
 * The mover polls the events of the moves in flight (without waiting on any
 * one, so one slow copy does not hold back the others and the mover never
 * blocks the device clock), completes every move whose copy is done in one
 * pass, and sleeps on a condition while nothing is in flight. A thread that
 * needs a move over does not wait for the mover: it waits for the copy and
 * completes the move itself (resid_move_poll), so the mover is an accelerator,
 * never a dependency. */
#include "shim_resid_internal.h"

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
        resid.mover_running = pthread_create(&resid.mover, &attr, mover_main, resid_cur) == 0;
        pthread_attr_destroy(&attr);
        if (!resid.mover_running)
            SHIM_LOG_ONCE(SHIM_LOG_WARN, "no mover thread: moves complete when someone waits");
    }
    pthread_cond_signal(&resid.wake);
}

void resid_mover_unqueue(struct resid_move *m)
{
    struct resid_move *prev = NULL;
    for (struct resid_move **l = &resid.queue; *l; prev = *l, l = &(*l)->next) {
        if (*l != m)
            continue;
        *l = m->next;
        if (resid.queue_tail == m)
            resid.queue_tail = prev;
        m->next = NULL;
        return;
    }
}

/* Contract in shim_resid.h. A move that completes may be freed and the lock may have been
   dropped: the pass then starts again from the head (each restart follows one move off the
   queue, so it ends). A move still queued after a poll is still valid, and so is its
   successor. */
int resid_complete_done(void)
{
    int n = 0;
restart:
    for (struct resid_move *m = resid.queue; m; m = m->next) {
        if (m->waiters == 0 && resid_move_poll(m, false)) {
            n++;
            goto restart;
        }
    }
    return n;
}

static void *mover_main(void *arg)
{
    resid_cur = arg; /* the device's manager whose moves it completes */
    shim_inside = 1; /* nothing the mover does is the program's */
    pthread_mutex_lock(&resid.lock);
    while (!resid.stopping) {
        if (!resid.queue) {
            pthread_cond_wait(&resid.wake, &resid.lock);
            continue;
        }
        if (resid_complete_done() > 0)
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
    pthread_cond_broadcast(&resid.wake);
    pthread_mutex_unlock(&resid.lock);
    return NULL;
}

/* Stops the selected manager's mover (at most about a second). */
static void stop_one(void)
{
    pthread_mutex_lock(&resid.lock);
    resid.stopping = true;
    pthread_cond_broadcast(&resid.wake);
    for (int i = 0; resid.mover_running && i < 100; i++) { /* at most about a second */
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 10000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&resid.wake, &resid.lock, &until);
    }
    pthread_mutex_unlock(&resid.lock);
}

void shim_resid_stop(void)
{
    struct resid_ctx *c;
    for (uint32_t k = 0; (c = resid_started_at(k)) != NULL; k++) {
        resid_cur = c;
        stop_one();
    }
}
