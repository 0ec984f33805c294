/* simgpu_clock.c — the host's virtual clocks: the rules by which host threads' time moves, what a
 * submission starts after and what a wait or a query joins.
 *
 * Two sets of rules, chosen once at initialisation (sim.host_model, simgpu_host.c):
 *
 * Shared clock (the default, unchanged since VMM costs came): sim.host_vt is the program's "now":
 * submissions start no earlier, synchronisations of any thread advance it. A VMM call costs the
 * host time, and it is the calling thread that spends it: each thread has its own clock, never
 * behind the shared one (a thread's clock is the later of the two, so it starts at the shared
 * clock). Whether another thread's VMM time delays the program depends on whether the driver
 * serialises VMM calls against launches (sim.vmm_serial): if it does, a VMM call moves the shared
 * clock too; if not, only the calling thread's later calls see its time, and work that touches a
 * range the call made accessible waits for it (sim_clock_submit). With no VMM cost every thread's
 * clock stays at the shared one.
 *
 * Per-thread clocks (SIMGPU_HOST_US_PER_LAUNCH or SIMGPU_HOST_CALLER set: the host is not free).
 * Each host thread has its own clock, and nothing moves it but what the simulator sees that
 * thread do or wait for:
 * - host work advances it: the program's own work (before each launch, or when it says so:
 *   simgpu_host_work), what the driver's own calls cost and the interposer's work on each call
 *   it makes (simgpu_host.c), VMM calls (simgpu_vmm_cost.c);
 * - a command starts on the device no earlier than the clock of the thread that submitted it;
 * - a thread that waits for a command (stream, event or context synchronisation, a synchronous
 *   copy) joins the command's end, so a thread waiting on an event another thread recorded joins
 *   that thread's clock at the record (the record cannot end before it was submitted);
 * - under the driver-wide lock (SIMGPU_VMM_SERIAL=1) a VMM call holds the lock from the calling
 *   thread's time for its cost (a hold), and every submission and VMM call needs the lock: a
 *   thread whose clock falls inside a hold waits to its end, and a thread whose clock is already
 *   past the start of a hold another thread makes is moved on by the hold's length. The second
 *   rule is what makes the lock cost the program one for one: libshim's mover makes its VMM calls
 *   when it sees a copy done, at the copy's end, which the simulated program (its host infinitely
 *   fast in real time) has usually passed already; on a GPU its launches during the hold would
 *   have waited, so its clock goes on from there as if they had;
 * - a query (cuEventQuery, cuStreamQuery) is answered at the world's time (sim.host_vt here: the
 *   latest time any thread has reached, so real time has reached it too), and a thread that learns
 *   that a command is done joins its end. A poller (libshim's mover) has no work of its own to
 *   move its clock; were it answered at its own time it would never see a copy done. Threads
 *   behind the world are behind only because the simulated host runs infinitely fast; a thread
 *   that looks at the device sees it as of the world's time.
 * - a thread's first call starts its clock at the world's time (it was made by a thread that had
 *   got there).
 * With one host thread and no host work both sets give the same times. With several, a wait
 * no longer carries one thread's time to every other (under the shared clock a wait of any
 * thread, libshim's mover's included, moves the program's clock), and two threads' host work
 * runs side by side.
 *
 * Every function here is called with sim.lock held. A thread's shared-clock offset is its own;
 * its per-thread record is moved by itself and by the holds of others. */
#include "simgpu_internal.h"

#include <math.h>
#include <stdlib.h>

/* Shared clock: this thread's clock. It counts only where it is ahead of sim.host_vt (the
   thread's time is the later of the two), so a new thread's 0 starts it at the shared clock. Read
   and written by its own thread only. */
static _Thread_local double thread_vt;

/* Per-thread clocks: this thread's record in sim.threads (simgpu_internal.h), made on its first
   call; other threads read and move its clock under sim.lock (the driver-wide lock's holds). */
static _Thread_local struct sim_thread *self;
static struct sim_thread orphan; /* for a thread whose record could not be made */
static pthread_key_t thread_key;
static pthread_once_t thread_key_once = PTHREAD_ONCE_INIT;

static void thread_exit(void *p)
{
    pthread_mutex_lock(&sim.lock);
    ((struct sim_thread *)p)->live = false; /* kept: its figures go into the statistics */
    pthread_mutex_unlock(&sim.lock);
}

static void thread_key_make(void)
{
    if (pthread_key_create(&thread_key, thread_exit) != 0)
        sim_diag("no per-thread clock destructor: exited threads stay listed as live");
}

/* Per-thread clocks: the calling thread's record, its clock started at the world's time on its
   first call. */
static struct sim_thread *me(void)
{
    if (self)
        return self;
    pthread_once(&thread_key_once, thread_key_make);
    struct sim_thread *t = calloc(1, sizeof *t);
    if (!t) {
        sim_diag("out of memory for a thread's clock: such threads share one");
        t = &orphan;
    } else {
        t->order = sim.nthreads++;
        t->next = sim.threads;
        sim.threads = t;
        pthread_setspecific(thread_key, t);
    }
    t->live = true;
    if (t->vt < sim.host_vt)
        t->vt = sim.host_vt;
    return self = t;
}

/* Per-thread clocks: thread t's clock moved to time u (if later), and the world's with it. */
static void move_to(struct sim_thread *t, double u)
{
    if (u > t->vt)
        t->vt = u;
    if (t->vt > sim.host_vt)
        sim.host_vt = t->vt;
}

/* Per-thread clocks, with the driver-wide lock: the calling thread waits for it where its clock
   falls inside a hold (a VMM call of any thread held it from s to e: it moves to e); what it
   waited counts as serial time. */
static void wait_lock(struct sim_thread *t)
{
    if (!sim.vmm_serial)
        return;
    for (size_t i = 0; i < sim.nholds; i++) {
        const struct sim_hold *h = &sim.holds[i];
        if (t->vt >= h->s && t->vt < h->e) {
            sim.stats.vmm_serial_us += h->e - t->vt;
            t->lock_us += h->e - t->vt;
            move_to(t, h->e);
        }
    }
}

/* Drops the holds that end before every live thread's clock (none can run into them now), and
   the oldest beyond SIM_HOLDS (a thread still behind them is not held back by them: said once). */
static void prune_holds(void)
{
    double least = INFINITY;
    for (const struct sim_thread *t = sim.threads; t; t = t->next)
        if (t->live && t->vt < least)
            least = t->vt;
    size_t keep = 0, over = sim.nholds >= SIM_HOLDS ? sim.nholds - SIM_HOLDS + 1 : 0;
    static bool said;
    if (over && !said) {
        said = true;
        sim_diag("more than %d VMM calls ahead of a thread: the oldest no longer hold it back",
                 SIM_HOLDS);
    }
    for (size_t i = 0; i < sim.nholds; i++)
        if (i >= over && sim.holds[i].e > least)
            sim.holds[keep++] = sim.holds[i];
    sim.nholds = keep;
}

/* Per-thread clocks: thread `by` held the driver-wide lock from s to e. Every other thread whose
   clock is already past s submitted work while the lock was held (its submissions are in
   virtual time after s, whatever the real-time order of the calls): the hold stopped it, so its
   clock moves on by the hold's length; one still before s waits if it comes into the hold
   (wait_lock). The hold is remembered, joined to the previous one when it follows on. */
static void hold(struct sim_thread *by, double s, double e)
{
    for (struct sim_thread *t = sim.threads; t; t = t->next) {
        if (t == by || !t->live || t->vt <= s)
            continue;
        sim.stats.vmm_serial_us += e - s;
        t->lock_us += e - s;
        move_to(t, t->vt + (e - s));
    }
    if (sim.nholds && sim.holds[sim.nholds - 1].e == s) {
        sim.holds[sim.nholds - 1].e = e;
        return;
    }
    prune_holds();
    struct sim_hold *v = sim_grow(sim.holds, &sim.hold_cap, sim.nholds + 1, sizeof *v, 64);
    if (!v)
        return; /* not remembered: a thread behind it is not held back (rare, harmless) */
    sim.holds = v;
    sim.holds[sim.nholds++] = (struct sim_hold){s, e};
}

double sim_clock_now(void)
{
    if (sim.host_model)
        return me()->vt;
    return thread_vt > sim.host_vt ? thread_vt : sim.host_vt;
}

double sim_clock_known(void)
{
    return sim.host_model ? sim_clock_now() : sim.host_vt;
}

/* Shared clock: moves the shared clock to t if t is later; what it moved by counts as VMM time
   made serial: a thread's clock runs ahead of the shared one only by VMM calls. */
static void advance_shared(double t)
{
    if (t <= sim.host_vt)
        return;
    sim.stats.vmm_serial_us += t - sim.host_vt;
    sim.host_vt = t;
}

void sim_clock_join(void)
{
    if (!sim.host_model)
        advance_shared(thread_vt);
}

void sim_clock_waited(double end)
{
    if (sim.host_model)
        move_to(me(), end);
    else if (end > sim.host_vt) {
        sim.host_vt = end;
    }
}

double sim_clock_vmm(double us, uint64_t handles)
{
    if (us <= 0)
        return sim_clock_now();
    sim.stats.vmm_host_us += us;
    sim.stats.vmm_handles += handles;
    if (!sim.host_model) {
        thread_vt = sim_clock_now() + us;
        if (sim.vmm_serial)
            advance_shared(thread_vt); /* the driver-wide lock: launches on every thread wait */
        return thread_vt;
    }
    struct sim_thread *t = me();
    wait_lock(t); /* a call that comes into another's hold starts after it */
    double s = t->vt;
    move_to(t, s + us);
    t->vmm_us += us;
    if (sim.vmm_serial)
        hold(t, s, t->vt);
    return t->vt;
}

void sim_clock_host(double us)
{
    if (!sim.host_model || !(us > 0))
        return;
    struct sim_thread *t = me();
    t->host_us += us;
    move_to(t, t->vt + us);
}

void sim_clock_mark_ready(uint64_t va, uint64_t size, double t)
{
    for (size_t i = sim_map_lower(va); i < sim.nmaps && sim.maps[i].va < va + size; i++)
        sim.maps[i].ready_vt = t;
}

/* The later of *t and the ready time of every mapping [lo, hi) overlaps (a sim_cmd_touches
   visitor). */
static void latest_ready(void *arg, uint64_t lo, uint64_t hi)
{
    double *t = arg;
    for (size_t i = sim_map_lower(lo); i < sim.nmaps && sim.maps[i].va < hi; i++)
        if (sim.maps[i].ready_vt > *t)
            *t = sim.maps[i].ready_vt;
}

double sim_clock_submit(const struct sim_cmd *c)
{
    struct sim_thread *t = sim.host_model ? me() : NULL;
    if (t)
        wait_lock(t); /* a launch needs the driver's lock that VMM calls hold */
    else
        sim_clock_join();
    double *clock = t ? &t->vt : &sim.host_vt;
    if (sim.vmm_host_cost > 0) {
        /* The program waits on the host for a remap before it submits work that touches the
           range (libshim waits for its mover's move): the submitting thread's clock (the shared
           one, under the shared clock) moves to the time the range became accessible. Without
           a VMM cost no mapping is ready later than any clock, so nothing is looked up. */
        double ready = *clock;
        sim_cmd_touches(c, latest_ready, &ready);
        if (ready > *clock) {
            sim.stats.vmm_wait_us += ready - *clock;
            if (t)
                move_to(t, ready);
            else
                sim.host_vt = ready;
        }
    }
    return *clock;
}

bool sim_clock_sees(const struct sim_cmd *c, bool query)
{
    if (!c->done)
        return false;
    if (!sim.host_model)
        return c->vend <= sim_clock_now(); /* the thread's own time: never joined */
    struct sim_thread *t = me();
    if (!query)
        return c->vend <= t->vt;
    if (c->vend > t->vt && c->vend > sim.host_vt)
        return false;
    move_to(t, c->vend); /* it learned that the command is done: it is at least at its end */
    return true;
}
