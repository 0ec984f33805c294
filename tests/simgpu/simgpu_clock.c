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
 * - host work advances it: the program's own work before each launch, the interposer's work on
 *   each call it makes (simgpu_host.c), VMM calls (simgpu_vmm_cost.c);
 * - a command starts on the device no earlier than the clock of the thread that submitted it;
 * - a thread that waits for a command (stream, event or context synchronisation, a synchronous
 *   copy) joins the command's end, so a thread waiting on an event another thread recorded joins
 *   that thread's clock at the record (the record cannot end before it was submitted);
 * - under the driver-wide lock (SIMGPU_VMM_SERIAL=1) a VMM call starts no earlier than the end of
 *   the last one on any thread, and so does every submission: the lock's clock
 *   (sim.vmm_lock_vt) is joined by every thread that needs the lock;
 * - a query (cuEventQuery, cuStreamQuery) is answered at the world's time (sim.host_vt here: the
 *   latest time any thread has reached, so real time has reached it too), and a thread that learns
 *   that a command is done joins its end. A poller (libshim's mover) has no work of its own to
 *   move its clock; were it answered at its own time it would never see a copy done. Threads
 *   behind the world are behind only because the simulated host runs infinitely fast; a thread
 *   that looks at the device sees it as of the world's time.
 * - a thread's first call starts its clock at the world's time (it was made by a thread that had
 *   got there).
 * With one host thread both sets give the same times. With several, waits no longer carry one
 * thread's time to every other (the shared clock made the program wait whenever libshim's mover
 * waited for a copy), and two threads' host work runs side by side.
 *
 * Every function here is called with sim.lock held; a thread's own clock is read and written by
 * that thread only. */
#include "simgpu_internal.h"

/* This thread's host clock. Shared clock: it counts only where it is ahead of sim.host_vt (the
   thread's time is the later of the two), so a new thread's 0 starts it at the shared clock.
   Per-thread clocks: the thread's time itself, once started. */
static _Thread_local double thread_vt;
static _Thread_local bool thread_started;

/* Per-thread clocks: starts the calling thread's clock at the world's time on its first call. */
static void start(void)
{
    if (!thread_started) {
        thread_started = true;
        thread_vt = sim.host_vt;
    }
}

/* Per-thread clocks: the calling thread's clock moved to t (if later), and the world's with it. */
static void move_to(double t)
{
    if (t > thread_vt)
        thread_vt = t;
    if (thread_vt > sim.host_vt)
        sim.host_vt = thread_vt;
}

/* Per-thread clocks, with the driver-wide lock: the calling thread waits for it (its clock
   moves to the end of the last VMM call of any thread); what it waited counts as serial time. */
static void wait_lock(void)
{
    if (!sim.vmm_serial || sim.vmm_lock_vt <= thread_vt)
        return;
    sim.stats.vmm_serial_us += sim.vmm_lock_vt - thread_vt;
    move_to(sim.vmm_lock_vt);
}

double sim_clock_now(void)
{
    if (sim.host_model) {
        start();
        return thread_vt;
    }
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
    if (sim.host_model) {
        start();
        move_to(end);
    } else if (end > sim.host_vt) {
        sim.host_vt = end;
    }
}

double sim_clock_vmm(double us, uint64_t handles)
{
    if (us <= 0)
        return sim_clock_now();
    if (sim.host_model) {
        start();
        wait_lock();
        move_to(thread_vt + us);
        if (sim.vmm_serial)
            sim.vmm_lock_vt = thread_vt; /* the driver-wide lock is held until then */
    } else {
        thread_vt = sim_clock_now() + us;
        if (sim.vmm_serial)
            advance_shared(thread_vt); /* the driver-wide lock: launches on every thread wait */
    }
    sim.stats.vmm_host_us += us;
    sim.stats.vmm_handles += handles;
    return thread_vt;
}

void sim_clock_host(double us)
{
    if (!sim.host_model || !(us > 0))
        return;
    start();
    move_to(thread_vt + us);
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
    if (sim.host_model) {
        start();
        wait_lock(); /* a launch needs the driver's lock that VMM calls hold */
    } else {
        sim_clock_join();
    }
    double *clock = sim.host_model ? &thread_vt : &sim.host_vt;
    if (sim.vmm_host_cost > 0) {
        /* The program waits on the host for a remap before it submits work that touches the
           range (libshim waits for its mover's move): the submitting thread's clock (the shared
           one, under the shared clock) moves to the time the range became accessible. Without
           a VMM cost no mapping is ready later than any clock, so nothing is looked up. */
        double ready = *clock;
        sim_cmd_touches(c, latest_ready, &ready);
        if (ready > *clock) {
            sim.stats.vmm_wait_us += ready - *clock;
            if (sim.host_model)
                move_to(ready);
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
    start();
    if (!query)
        return c->vend <= thread_vt;
    if (c->vend > thread_vt && c->vend > sim.host_vt)
        return false;
    move_to(c->vend); /* it learned that the command is done: it is at least at its end */
    return true;
}
