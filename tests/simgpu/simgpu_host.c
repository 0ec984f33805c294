/* simgpu_host.c — the host's own time (the host is not free): the program's work before each
 * launch (SIMGPU_HOST_US_PER_LAUNCH), what the driver's own calls cost the host, and an
 * interposer's work on each driver call it makes (SIMGPU_HOST_CALLER, SIMGPU_HOST_CALLER_US), all
 * charged to the calling thread's clock (simgpu_clock.c). Setting either variable turns on
 * per-thread clocks; the driver's call costs apply with them only, so that times without them
 * stay what they were.
 *
 * The driver's own calls, whoever makes them (VMM calls are charged by simgpu_vmm_cost.c):
 * - an asynchronous copy (cuMemcpy*Async): 5 us, the low end of the 5-7 us per cudaMemcpyAsync
 *   that DualPath measured (Wu et al., "DualPath: Breaking the Storage Bandwidth Bottleneck in
 *   Agentic LLM Inference", arXiv 2602.21548, section 5.2);
 * - an event record: 4.5 us, half of the 9 us a cuEventRecord and a cuEventQuery took together on
 *   the H100 with work queued (tests/bench/RESULTS-gpu.md; 15 us idle);
 * - launches are the program's own time (SIMGPU_HOST_US_PER_LAUNCH covers what a launch costs
 *   its host, the driver's part included), and polls are never charged (below); other calls
 *   are not charged (no figure: stream waits, allocations from the pool, queries of state).
 *
 * The interposer is recognised by where a call comes from, never by anything it tells the
 * simulator: a driver call whose immediate caller (the entry's return address) lies in a shared
 * object whose path contains SIMGPU_HOST_CALLER is the interposer's. That is every call it
 * forwards for the program (its hook's own work on the way) and every call of its own (fences,
 * copies, VMM calls; VMM calls also cost what the driver charges, simgpu_vmm_cost.c). What stays
 * uncharged: a hook that forwards by a tail call (no return address of the interposer's is left:
 * it did next to nothing); the interposer's work between driver calls beyond the per-call figure
 * (its planning thread, the trace writer, a long parameter scan); its mutex and condition waits
 * (the simulator cannot see them: with SIMGPU_VMM_SERIAL=1 the driver-wide lock stands in for a
 * lock held across VMM calls); and polls (cuEventQuery, cuStreamQuery): how many a poller makes
 * depends on real time, so charging them would make virtual time depend on thread timing.
 *
 * Default per-call figure: 25.7 ns, libshim's own cost per launch in steady state, measured with
 * the null driver (tests/bench/RESULTS-recording.md: 27.7 ns with libshim, 2.0 ns without). */
#include "simgpu_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CALLER_US_DEFAULT 0.0257 /* tests/bench/RESULTS-recording.md, "shim's own cost" */

/* A non-negative number of microseconds from the environment, or def (unset, or a bad value,
   reported). Sets *set when the variable holds a good value. */
static double env_us(const char *name, double def, bool *set)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return def;
    char *end;
    double v = strtod(s, &end);
    if (*end || !(v >= 0) || !isfinite(v)) {
        sim_diag("ignoring %s=%s (want a number of microseconds, 0 or more)", name, s);
        return def;
    }
    if (set)
        *set = true;
    return v;
}

void sim_host_configure(void)
{
    bool per_launch = false;
    sim.host_us_per_launch = env_us("SIMGPU_HOST_US_PER_LAUNCH", 0, &per_launch);
    sim.host_caller_us = env_us("SIMGPU_HOST_CALLER_US", CALLER_US_DEFAULT, NULL);
    const char *s = getenv("SIMGPU_HOST_CALLER");
    if (s && *s) {
        if (strlen(s) < sizeof sim.host_caller)
            strcpy(sim.host_caller, s);
        else
            sim_diag("ignoring SIMGPU_HOST_CALLER (want a substring shorter than %d bytes)",
                     SIM_CALLER_MAX);
    }
    sim.host_model = per_launch || sim.host_caller[0];
    sim.stats.host_us_per_launch = sim.host_us_per_launch;
}

int simgpu_host_work(double usec)
{
    if (!sim_ensure_init() || !sim.host_model || !(usec >= 0) || !isfinite(usec))
        return -1;
    pthread_mutex_lock(&sim.lock);
    sim_clock_host(usec);
    sim.stats.host_launch_us += usec;
    pthread_mutex_unlock(&sim.lock);
    return 0;
}

void sim_host_launch(void)
{
    if (!(sim.host_us_per_launch > 0))
        return;
    sim_clock_host(sim.host_us_per_launch);
    sim.stats.host_launch_us += sim.host_us_per_launch;
}

/* Whether code address ret lies in an object whose path contains sim.host_caller. Remembered per
   thread by address (a call site's object never changes while it can return there), so that the
   loader is asked once per call site and thread. Without sim.lock (dladdr takes the loader's). */
static bool caller_matches(const void *ret)
{
    enum { SLOTS = 256 };
    static _Thread_local struct {
        const void *ret;
        bool match;
    } seen[SLOTS];
    size_t i = ((uintptr_t)ret >> 2) % SLOTS;
    if (seen[i].ret != ret) {
        const char *path = sim_caller_path(ret);
        seen[i].match = path && strstr(path, sim.host_caller);
        seen[i].ret = ret;
    }
    return seen[i].match;
}

#define COPY_ASYNC_US 5.0 /* DualPath, arXiv 2602.21548: 5-7 us per cudaMemcpyAsync */
#define EVENT_RECORD_US                                                                            \
    4.5 /* RESULTS-gpu.md: cuEventRecord + cuEventQuery, 9 us with work queued */

/* What the driver's own call e costs its caller's host, in microseconds. */
static double driver_us(enum sim_entry e)
{
    switch (e) {
    case SIM_E_cuMemcpyAsync:
    case SIM_E_cuMemcpyAsync_ptsz:
    case SIM_E_cuMemcpyHtoDAsync_v2:
    case SIM_E_cuMemcpyHtoDAsync_v2_ptsz:
    case SIM_E_cuMemcpyDtoHAsync_v2:
    case SIM_E_cuMemcpyDtoHAsync_v2_ptsz:
    case SIM_E_cuMemcpyDtoDAsync_v2:
    case SIM_E_cuMemcpyDtoDAsync_v2_ptsz:
    case SIM_E_cuMemcpyPeerAsync:
    case SIM_E_cuMemcpyPeerAsync_ptsz:
        return COPY_ASYNC_US;
    case SIM_E_cuEventRecord:
    case SIM_E_cuEventRecord_ptsz:
    case SIM_E_cuEventRecordWithFlags:
    case SIM_E_cuEventRecordWithFlags_ptsz:
        return EVENT_RECORD_US;
    default:
        return 0;
    }
}

static bool poll(enum sim_entry e)
{
    return e == SIM_E_cuEventQuery || e == SIM_E_cuStreamQuery || e == SIM_E_cuStreamQuery_ptsz;
}

void sim_host_enter(enum sim_entry e, const void *ret)
{
    if (!sim.host_model || poll(e))
        return;
    double driver = driver_us(e);
    bool interposer = sim.host_caller[0] && caller_matches(ret);
    if (!(driver > 0) && !interposer)
        return;
    pthread_mutex_lock(&sim.lock);
    sim_clock_host(driver);
    sim.stats.host_driver_us += driver;
    if (interposer) {
        sim_clock_host(sim.host_caller_us);
        sim.stats.host_caller_us += sim.host_caller_us;
        sim.stats.host_caller_calls++;
    }
    pthread_mutex_unlock(&sim.lock);
}
