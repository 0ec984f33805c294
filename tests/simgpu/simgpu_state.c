/* simgpu_state.c — the simulator's global state, one-time initialisation and entry checks. */
#include "simgpu_internal.h"

#include <errno.h>
#include <execinfo.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sim_state sim = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .changed = PTHREAD_COND_INITIALIZER,
    .phys_fd = -1,
    .pool = {.follow_events = 1, .opportunistic = 1, .internal_deps = 1},
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static __thread CUcontext current_ctx;
static __thread bool current_ctx_set;

void sim_diag(const char *fmt, ...)
{
    if (sim.quiet)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(buf, sizeof buf, "simgpu[%d]: ", (int)getpid());
    if (n > 0 && (size_t)n < sizeof buf)
        n += vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof buf - 1)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    ssize_t w = write(2, buf, (size_t)n);
    (void)w;
}

void sim_diag_backtrace(void)
{
    if (sim.quiet || !sim.backtrace)
        return;
    void *frames[48];
    int n = backtrace(frames, 48);
    backtrace_symbols_fd(frames, n, 2);
}

int sim_parse_size(const char *s, uint64_t *out)
{
    static const struct {
        const char *suffix;
        uint64_t mult;
    } units[] = {{"KiB", 1ull << 10},
                 {"MiB", 1ull << 20},
                 {"GiB", 1ull << 30},
                 {"TiB", 1ull << 40},
                 {"KB", 1000},
                 {"MB", 1000000},
                 {"GB", 1000000000},
                 {"B", 1},
                 {"", 1}};
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !(v >= 0) || !isfinite(v))
        return -1;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(end, units[i].suffix) == 0) {
            double bytes = v * (double)units[i].mult;
            if (bytes > 9.0e18)
                return -1;
            *out = (uint64_t)bytes;
            return 0;
        }
    }
    return -1;
}

static double env_double(const char *name, double def)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return def;
    char *end;
    double v = strtod(s, &end);
    if (*end || !(v > 0) || !isfinite(v)) {
        sim_diag("ignoring %s=%s (want a positive number)", name, s);
        return def;
    }
    return v;
}

static void read_environment(void)
{
    const char *s = getenv("SIMGPU_QUIET");
    sim.quiet = s && strcmp(s, "1") == 0;
    s = getenv("SIMGPU_BACKTRACE");
    sim.backtrace = s && strcmp(s, "1") == 0;
    sim_devices_configure();
    sim.h2d_gbps = env_double("SIMGPU_H2D_GBPS", 25.0);
    sim.d2h_gbps = env_double("SIMGPU_D2H_GBPS", 25.0);
    /* Peer copies default to the host link's speed: devices without NVLink exchange data
       over PCIe, the worse case (NVLink is faster). */
    sim.peer_gbps = env_double("SIMGPU_PEER_GBPS", sim.h2d_gbps);
    sim.dev_gbps = env_double("SIMGPU_DEVICE_GBPS", 2000.0);
    s = getenv("SIMGPU_LINK_SHARED");
    sim.link_shared = s && strcmp(s, "1") == 0;
    if ((s = getenv("SIMGPU_LINK_BOTH_GBPS")) && *s)
        sim_link_configure(s);
    if ((s = getenv("SIMGPU_VMM_HOST_COST")) && *s && strcmp(s, "0") != 0)
        sim.vmm_host_cost = env_double("SIMGPU_VMM_HOST_COST", 0);
    sim.vmm_serial = true; /* the worse case, until GPU facts say whether the driver serialises */
    if ((s = getenv("SIMGPU_VMM_SERIAL")) && *s && strcmp(s, "1") != 0) {
        if (strcmp(s, "0") == 0)
            sim.vmm_serial = false;
        else
            sim_diag("ignoring SIMGPU_VMM_SERIAL=%s (want 0 or 1)", s);
    }
    sim_host_configure();
    s = getenv("SIMGPU_HOST_VMM");
    sim.host_vmm = !(s && strcmp(s, "0") == 0);
    sim_driver_gen_read();
    if ((s = getenv("SIMGPU_JITTER")) && *s && strcmp(s, "0") != 0)
        sim.jitter_seed = strtoull(s, NULL, 0) | 1;
    if ((s = getenv("SIMGPU_FAIL")) && *s)
        sim_fail_parse(s);
    if ((s = getenv("SIMGPU_FAIL_CALLER")) && *s && sim_fail_caller_set(s) != 0)
        sim_diag("ignoring SIMGPU_FAIL_CALLER (want a substring shorter than %d bytes)",
                 SIM_CALLER_MAX);
    if ((s = getenv("SIMGPU_STATS")) && *s)
        sim.stats_path = strdup(s);
    if ((s = getenv("SIMGPU_TIMELINE")) && *s && !(sim.timeline = fopen(s, "we")))
        sim_diag("ignoring SIMGPU_TIMELINE=%s: cannot open it", s);
}

static void on_fork_child(void)
{
    /* Worker threads do not exist in the child: the device is unusable, as a
       real driver's is after fork. The lock was taken in prepare. */
    sim.forked = true;
    pthread_mutex_init(&sim.lock, NULL);
    pthread_cond_init(&sim.changed, NULL);
}

static void on_fork_prepare(void)
{
    pthread_mutex_lock(&sim.lock);
}

static void on_fork_parent(void)
{
    pthread_mutex_unlock(&sim.lock);
}

static void init_once_fn(void)
{
    read_environment();
    if (sim_mem_init() != 0 || sim_streams_init() != 0 || sim_faults_init() != 0) {
        sim_diag("initialisation failed: %s", strerror(errno));
        return;
    }
    pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child);
    if (sim.stats_path)
        atexit(sim_stats_atexit);
    sim.ready = true;
}

bool sim_ensure_init(void)
{
    pthread_once(&init_once, init_once_fn);
    return sim.ready;
}

/* Counts call e and returns whether fault injection fails it. Under a caller
   filter only calls whose caller's path (NULL: unknown) contains the
   substring are matched against the rules, and they have their own count.
   Lock held. */
static bool count_call(enum sim_entry e, const char *caller)
{
    unsigned long n = ++sim.calls[e];
    if (sim.fail_caller[0]) {
        if (!caller || !strstr(caller, sim.fail_caller))
            return false;
        n = ++sim.caller_calls[e];
    }
    return sim.fail_at[e] && (n == sim.fail_at[e] || (sim.fail_sticky[e] && n > sim.fail_at[e]));
}

CUresult sim_enter(enum sim_entry e, const void *ret)
{
    if (!sim_ensure_init())
        return CUDA_ERROR_NO_DEVICE;
    if (sim.forked)
        return CUDA_ERROR_NOT_PERMITTED; /* the child of a fork */
    /* dladdr only under a caller filter, and never under sim.lock: it takes
       the loader's lock, which a thread inside dlopen holds while a library
       constructor calls the driver. */
    const char *caller = atomic_load(&sim.caller_filter) ? sim_caller_path(ret) : NULL;
    pthread_mutex_lock(&sim.lock);
    bool fail = count_call(e, caller);
    if (fail)
        sim.stats.injected_failures++;
    pthread_mutex_unlock(&sim.lock);
    sim_host_enter(e, ret); /* what the call costs the host (simgpu_host.c) */
    return fail ? sim_fail_error(e) : CUDA_SUCCESS;
}

CUresult sim_need_init(void)
{
    return sim.initialised ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

CUresult sim_need_ctx(void)
{
    if (!sim.initialised)
        return CUDA_ERROR_NOT_INITIALIZED;
    return sim_current_ctx() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUcontext sim_current_ctx(void)
{
    return current_ctx_set ? current_ctx : NULL;
}

void sim_set_current_ctx(CUcontext c)
{
    current_ctx = c;
    current_ctx_set = c != NULL;
}

void sim_account_device(int dev, int64_t delta)
{
    struct sim_device *d = &sim.dev[dev];
    d->bytes = (uint64_t)((int64_t)d->bytes + delta);
    if (d->bytes > d->peak)
        d->peak = d->bytes;
    if (d->bytes > d->window_peak)
        d->window_peak = d->bytes;
    sim.stats.device_bytes = (uint64_t)((int64_t)sim.stats.device_bytes + delta);
    if (sim.stats.device_bytes > sim.stats.peak_device_bytes)
        sim.stats.peak_device_bytes = sim.stats.device_bytes;
    if (sim.stats.device_bytes > sim.stats.window_peak_bytes)
        sim.stats.window_peak_bytes = sim.stats.device_bytes;
}
