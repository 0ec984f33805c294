/* shim_trace_live.c — this run's figures as the records go by: the step, plan, plan_step and
 * transition record functions feed shim_trace_figures.h's arithmetic with what their records
 * say, so that libshim's exit line is what a reader of the trace computes (shim_trace_figures.h
 * says why the arithmetic is shared). Fed whether or not a trace is written. */
#include "shim_trace_internal.h"

#include <string.h>

/* The figures and their lock. Steps, plans and plan steps come a few times a step; transitions a
   few times a move: never on the launch path. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct shim_fig_steps steps;
static struct shim_fig_moves moves;
static int have_moves;

/* Contract in shim_trace_internal.h. The time is taken under the lock, so that marks reach the
   figures in the order of their records' times (a reader sorts records by time). */
uint64_t shim_trace_live_mark(uint64_t step)
{
    pthread_mutex_lock(&lock);
    uint64_t t = shim_trace_now_ns();
    shim_fig_mark(&steps, step, t);
    pthread_mutex_unlock(&lock);
    return t;
}

/* Contract in shim_trace_internal.h. */
void shim_trace_live_plan(const struct shim_trace_plan *p)
{
    pthread_mutex_lock(&lock);
    shim_fig_plan(&steps, p->native_us, p->predicted_us, p->stall_us, p->bound_us);
    pthread_mutex_unlock(&lock);
}

/* Contract in shim_trace_internal.h. */
void shim_trace_live_plan_step(const struct shim_trace_plan_step *s)
{
    pthread_mutex_lock(&lock);
    shim_fig_plan_step(&steps, s->step, s->bytes_to_host, s->bytes_to_device, s->stall_ns);
    pthread_mutex_unlock(&lock);
}

/* Contract in shim_trace_internal.h. */
void shim_trace_live_transition(const struct shim_trace_transition *t)
{
    pthread_mutex_lock(&lock);
    have_moves = 1;
    shim_fig_moves_transition(&moves, t->from, t->event, t->reason);
    pthread_mutex_unlock(&lock);
}

/* Contract in shim_trace_internal.h. */
void shim_trace_live_after_fork(void)
{
    pthread_mutex_init(&lock, NULL);
    memset(&steps, 0, sizeof steps);
    memset(&moves, 0, sizeof moves);
    have_moves = 0;
}

/* Contract in shim_trace.h. */
void shim_trace_figures_live(struct shim_fig_steps *s, struct shim_fig_moves *m, int *have)
{
    pthread_mutex_lock(&lock);
    *s = steps;
    *m = moves;
    *have = have_moves;
    pthread_mutex_unlock(&lock);
}
