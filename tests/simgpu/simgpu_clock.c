/* simgpu_clock.c — the host's virtual clocks: the shared one (sim.host_vt) and each thread's own,
 * which VMM calls charge (SIMGPU_VMM_HOST_COST, SIMGPU_VMM_SERIAL).
 *
 * sim.host_vt is the program's "now": submissions start no earlier, synchronisations advance it.
 * A VMM call costs the host time, and it is the calling thread that spends it: each thread has
 * its own clock, never behind the shared one (a thread's clock is the later of the two, so it
 * starts at the shared clock). Whether another thread's VMM time delays the program depends on
 * whether the driver serialises VMM calls against launches (sim.vmm_serial): if it does, a VMM
 * call moves the shared clock too; if not, only the calling thread's later calls see its time,
 * and work that touches a range the call made accessible waits for it (sim_clock_submit). With
 * no VMM cost every thread's clock stays at the shared one: time is what it was without it. */
#include "simgpu_internal.h"

/* This thread's host clock. It counts only where it is ahead of sim.host_vt (the thread's time is
   the later of the two), so a new thread's 0 starts it at the shared clock. Read and written
   under sim.lock, by its own thread only. */
static _Thread_local double thread_vt;

double sim_clock_now(void)
{
    return thread_vt > sim.host_vt ? thread_vt : sim.host_vt;
}

/* Moves the shared clock to t if t is later; what it moved by counts as VMM time made serial:
   a thread's clock runs ahead of the shared one only by VMM calls. */
static void advance_shared(double t)
{
    if (t <= sim.host_vt)
        return;
    sim.stats.vmm_serial_us += t - sim.host_vt;
    sim.host_vt = t;
}

void sim_clock_join(void)
{
    advance_shared(thread_vt);
}

double sim_clock_vmm(double us, uint64_t handles)
{
    double end = sim_clock_now() + us;
    if (us <= 0)
        return end;
    thread_vt = end;
    sim.stats.vmm_host_us += us;
    sim.stats.vmm_handles += handles;
    if (sim.vmm_serial)
        advance_shared(end); /* the driver-wide lock: launches on every thread wait for it */
    return end;
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
    sim_clock_join();
    if (sim.vmm_host_cost > 0) {
        /* The program waits on the host for a remap before it submits work that touches the
           range (libshim waits for its mover's move): the thread's clock, and the shared one
           it joins, move to the time the range became accessible. Without a VMM cost no
           mapping is ready after the shared clock, so nothing is looked up. */
        double ready = sim.host_vt;
        sim_cmd_touches(c, latest_ready, &ready);
        if (ready > sim.host_vt) {
            sim.stats.vmm_wait_us += ready - sim.host_vt;
            sim.host_vt = ready;
        }
    }
    return sim.host_vt;
}
