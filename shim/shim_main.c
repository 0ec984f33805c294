/* shim_main.c — the one file that may see every room: configuration at load time, what
 * happens when the driver is first resolved (the trace, the step study, fork and exit
 * handling), the exit line.
 *
 * The constructor only reads the configuration (cheap, safe in every process the
 * preload reaches, CUDA or not). The driver is opened at the first hook call
 * (core/shim_state.c), which then calls ready() here. A configuration error is logged and leaves
 * the shim in pass-through: it never stops the program. */
#include "shim_hooks.h"
#include "shim_path.h"

#include "conf.h"
#include "plan.h"
#include "shim_trace_figures.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char trace_pattern[CONF_MAX_STRING + 1];
static unsigned trace_flush_ms;
static uint64_t trace_max_bytes; /* 0: no limit */
static char config_text[8192];   /* the effective configuration, for the trace's header */
static size_t config_len;
static int rank; /* what %r stands for: $RANK, or 0 (see load_rank) */

extern char **environ;

static void log_diags(const conf_diags *d)
{
    for (size_t i = 0; i < d->count; i++)
        shim_log(d->items[i].severity == CONF_ERROR ? SHIM_LOG_ERROR : SHIM_LOG_WARN, "%s",
                 d->items[i].bare);
    if (d->dropped)
        shim_log(SHIM_LOG_ERROR, "%zu more configuration diagnostics not shown", d->dropped);
}

/* What pytorch_backend did, said at the first CUDA call (the preload reaches every process of a
   job, most of which never use CUDA: their logs stay quiet at the default level). */
static enum { BACKEND_UNTOUCHED, BACKEND_SET, BACKEND_JOBS_OWN } backend_note;

static void pytorch_backend(const conf_config *cfg)
{
    if (!conf_get_bool(cfg, CONF_PYTORCH_ASYNC_BACKEND) || shim.mode == CONF_MODE_OFF)
        return;
    const char *cur = getenv("PYTORCH_CUDA_ALLOC_CONF");
    if (cur && *cur) {
        if (!strstr(cur, "backend:cudaMallocAsync"))
            backend_note = BACKEND_JOBS_OWN;
        return;
    }
    setenv("PYTORCH_CUDA_ALLOC_CONF", "backend:cudaMallocAsync", 0);
    backend_note = BACKEND_SET;
}

static void log_backend_note(void)
{
    if (backend_note == BACKEND_JOBS_OWN)
        shim_log(SHIM_LOG_INFO, "PYTORCH_CUDA_ALLOC_CONF=%s is the job's own: left as is",
                 getenv("PYTORCH_CUDA_ALLOC_CONF") ? getenv("PYTORCH_CUDA_ALLOC_CONF") : "");
    else if (backend_note == BACKEND_SET)
        shim_log(SHIM_LOG_INFO, "set PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync (per-tensor "
                                "lifetimes; pytorch.async_backend = false to keep PyTorch's "
                                "default)");
}

static void add_config_line(void *ctx, const char *line)
{
    (void)ctx;
    int n = snprintf(config_text + config_len, sizeof config_text - config_len, "%s\n", line);
    if (n > 0 && config_len + (size_t)n < sizeof config_text)
        config_len += (size_t)n;
}

/* budgets, link_both_gbps, link_remap: typed and checked by conf/ (a bad value is a warning
   there, and the option is at its default: every device takes budget; the link both at full
   speed at once; measured). */
_Static_assert(CONF_MAX_SIZES == SHIM_MAX_DEVICE_BUDGETS,
               "budgets: one entry per device; host_resident: one a size");

/* The `planner` option as a planner kind (planner/plan.h): its choices are named as the kinds
   are, and test_plan_planners checks that each parses, so this is the one mapping. */
static int planner_kind(const conf_config *cfg)
{
    char name[32];
    plan_kind k;
    conf_option_choice(CONF_PLANNER, conf_get_choice(cfg, CONF_PLANNER), name, sizeof name);
    if (plan_kind_parse(name, &k) == PLAN_OK)
        return k;
    shim_log(SHIM_LOG_WARN, "planner '%s' is no planner kind: moves stay reactive", name);
    return PLAN_KIND_REACTIVE;
}

/* host_resident: the sizes whose allocations are kept on the host (plain byte counts; an
   empty entry is skipped). */
static void placement_options(const conf_config *cfg)
{
    conf_sizes h = conf_get_sizes(cfg, CONF_HOST_RESIDENT);
    shim.nhost_resident = 0;
    for (int k = 0; k < CONF_MAX_SIZES; k++)
        if ((h.given >> k) & 1u)
            shim.host_resident[shim.nhost_resident++] = h.at[k].bytes;
}

static void link_options(const conf_config *cfg)
{
    conf_sizes b = conf_get_sizes(cfg, CONF_BUDGETS);
    for (int d = 0; d < SHIM_MAX_DEVICE_BUDGETS; d++) {
        shim.device_budget_set[d] = (b.given >> d) & 1u;
        shim.device_budget[d] = b.at[d];
    }
    conf_speeds both = conf_get_speeds(cfg, CONF_LINK_BOTH_GBPS);
    shim.link_both_gbps[0] = (double)both.bytes_per_s[0] / 1e9;
    shim.link_both_gbps[1] = (double)both.bytes_per_s[1] / 1e9;
    int64_t remap = conf_get_duration_ns(cfg, CONF_LINK_REMAP);
    shim.link_remap_us = remap == CONF_DURATION_WORD ? -1 : (double)remap / 1e3;
}

static void apply(const conf_config *cfg)
{
    shim.mode = conf_get_choice(cfg, CONF_MODE);
    shim.record = conf_get_flags(cfg, CONF_TRACE_RECORD);
    shim.profile_iterations = (int)conf_get_int(cfg, CONF_PROFILE_ITERATIONS);
    conf_size m = conf_get_size(cfg, CONF_MIN_MANAGED_BYTES);
    shim.min_managed_bytes = conf_size_resolve(&m, 0, 2u << 20);
    shim.budget = conf_get_size(cfg, CONF_BUDGET);
    conf_setting_source(cfg, CONF_BUDGET, shim.budget_source, sizeof shim.budget_source);
    conf_setting_source(cfg, CONF_BUDGETS, shim.device_budget_source,
                        sizeof shim.device_budget_source);
    shim.host_budget = conf_get_size(cfg, CONF_HOST_BUDGET);
    shim.unmapped_eviction = conf_get_bool(cfg, CONF_UNMAPPED_EVICTION);
    shim.planner = planner_kind(cfg);
    shim.link_shared = conf_get_choice(cfg, CONF_LINK_DUPLEX) == CONF_LINK_SHARED;
    link_options(cfg);
    placement_options(cfg);
    snprintf(trace_pattern, sizeof trace_pattern, "%s", conf_get_string(cfg, CONF_TRACE_PATH));
    trace_flush_ms = (unsigned)(conf_get_duration_ns(cfg, CONF_TRACE_FLUSH_INTERVAL) / 1000000);
    conf_size max = conf_get_size(cfg, CONF_TRACE_MAX_BYTES);
    trace_max_bytes = conf_size_resolve(&max, 0, 0);
    conf_config_describe(cfg, add_config_line, NULL);
    pytorch_backend(cfg);
}

/* The process's rank, for %r in trace.path and log.file and the trace's header: $RANK (the
   global rank torchrun and the other PyTorch launchers set), strictly decimal. Unset: 0. Not a
   rank: 0, and one warning naming the variable and its value (once the log is open). LOCAL_RANK
   is not used: it repeats on every node, so files of different nodes' ranks would share a name.
   Returns whether the value was bad. */
static bool load_rank(const char **value)
{
    *value = getenv(SHIM_PATH_RANK_VAR);
    return shim_path_rank(*value, &rank) == SHIM_RANK_BAD;
}

/* The program's command line, arguments separated by spaces (empty if unreadable). */
static const char *command_line(char *buf, size_t n)
{
    FILE *f = fopen("/proc/self/cmdline", "r");
    size_t len = f ? fread(buf, 1, n - 1, f) : 0;
    if (f)
        fclose(f);
    for (size_t i = 0; i + 1 < len; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[len] = '\0';
    return buf;
}

/* What the trace writer says (its limit reached, a write error), in the shim's log. */
static void trace_log(int level, const char *msg)
{
    shim_log((enum shim_log_level)level, "%s", msg);
}

static void start_trace(void)
{
    if (!trace_pattern[0])
        return;
    char err[256], cmd[1024];
    struct shim_trace_info info = {(int)getpid(), rank,           command_line(cmd, sizeof cmd),
                                   config_text,   trace_flush_ms, trace_max_bytes,
                                   trace_log};
    if (shim_trace_start(trace_pattern, &info, err, sizeof err) != 0)
        shim_log(SHIM_LOG_ERROR, "no trace: %s", err);
}

static void on_fork_child(void)
{
    /* The child has none of the parent's threads: stop recording there. */
    shim_trace_forget_after_fork();
    if (atomic_load(&shim.state) == SHIM_READY)
        atomic_store(&shim.state, SHIM_PASSTHROUGH);
}

static double mib(uint64_t bytes)
{
    return (double)bytes / (1 << 20);
}

/* The exit line being written: each addition is cut to what is left, never past it. */
struct line {
    char buf[3072];
    size_t len;
};

static void line_add(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line_add(struct line *l, const char *fmt, ...)
{
    if (l->len + 1 >= sizeof l->buf)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(l->buf + l->len, sizeof l->buf - l->len, fmt, ap);
    va_end(ap);
    if (k > 0)
        l->len = l->len + (size_t)k < sizeof l->buf ? l->len + (size_t)k : sizeof l->buf - 1;
}

/* The name of CUDA device `ordinal` as the driver gives it, in buf (empty when unknown): the
   trace's END chunk and the figures say from it which clock a wall time is (on the simulated
   device it is the simulator's own, shim_fig_simulated). */
static const char *device_name(int ordinal, char *buf, int n)
{
    CUresult (*get)(CUdevice *, int) =
        (CUresult(*)(CUdevice *, int))shim_real_dlsym(shim.driver, "cuDeviceGet");
    CUresult (*name)(char *, int, CUdevice) =
        (CUresult(*)(char *, int, CUdevice))shim_real_dlsym(shim.driver, "cuDeviceGetName");
    CUdevice dev;
    buf[0] = '\0';
    if (!get || !name || get(&dev, ordinal) != CUDA_SUCCESS || name(buf, n, dev) != CUDA_SUCCESS)
        buf[0] = '\0';
    buf[n - 1] = '\0';
    return buf;
}

/* The run's figures as the trace's reader computes them (shim_trace_figures.h): the verdict
   from residency's totals, the steps, plans and moves from what the trace writer's record
   functions were fed. */
static void figures(struct shim_figures *f, const struct shim_resid_totals *t, bool managed)
{
    char name[128];
    *f = (struct shim_figures){
        .managed = managed,
        .have_resident_peak = managed,
        .budget = t->budget,
        .resident_peak = t->resident_peak,
        .alloc_peak = shim_registry_device_peak(),
        .devices_together = shim_resid_several(),
        .bytes_to_host = t->bytes_to_host,
        .bytes_to_device = t->bytes_to_device,
        .stall_ns = t->stall_ns,
    };
    shim_trace_figures_live(&f->steps, &f->moves, &f->have_moves);
    device_name(managed ? t->device : 0, name, sizeof name);
    f->simulated = shim_fig_simulated(name);
    if (name[0])
        shim_trace_set_device_name(name);
}

/* The verdict that opens the exit line: fitted or not (the resident peak against the budget),
   the allocations' peak apart, the step time against native, the steady state under the plan
   and the warm-up apart: the words every surface prints (shim_trace_figures.h). */
static void verdict(struct line *l, const struct shim_figures *f)
{
    struct shim_fig_derived d;
    char w[1024];
    shim_fig_derive(f, &d);
    line_add(l, "%s", shim_fig_verdict_words(w, sizeof w, f));
    line_add(l, "; %s", shim_fig_step_words(w, sizeof w, f, &d));
    if (*shim_fig_steady_words(w, sizeof w, f, &d))
        line_add(l, "; %s", w);
    if (*shim_fig_warmup_words(w, sizeof w, f, &d))
        line_add(l, "; %s", w);
}

/* host_resident's sizes that no allocation matched (sizes must match exactly): a warning each,
   after the exit line, so that a list copied from another job or a rounded size is noticed. */
static void unmatched_placements(bool managed)
{
    if (!managed || !shim.nhost_resident)
        return;
    uint32_t seen = 0;
    struct shim_resid_totals o;
    for (uint32_t k = 0; shim_resid_totals(k, &o); k++)
        seen |= o.placed_sizes_seen;
    for (uint32_t k = 0; k < shim.nhost_resident; k++)
        if (!((seen >> k) & 1u))
            shim_log(SHIM_LOG_WARN,
                     "host_resident: no managed allocation of exactly %llu bytes was made (entry "
                     "%u; the sizes are the program's own, as shim-plan prints them)",
                     (unsigned long long)shim.host_resident[k], k + 1);
}

/* One device manager's totals as residency counts them: evictions and restores completed,
   evictions cancelled, moves failed; bytes of the moves started; stall. */
static void totals_words(struct line *l, const struct shim_resid_totals *t)
{
    line_add(l,
             "%llu evictions (%llu cancelled), %llu restores, %llu errors, %.1f MiB to host, %.1f "
             "MiB to device, %.1f ms stalled, budget %llu MiB",
             (unsigned long long)t->evictions, (unsigned long long)t->cancelled,
             (unsigned long long)t->restores, (unsigned long long)t->errors, mib(t->bytes_to_host),
             mib(t->bytes_to_device), (double)t->stall_ns / 1e6,
             (unsigned long long)(t->budget >> 20));
}

/* What residency moved and what the plan did: the totals, the moves' taxonomy (as `shim-report
   moves` counts it, when the transitions were recorded), then each of what is rarer. */
static void residency_words(struct line *l, const struct shim_resid_totals *t,
                            const struct shim_figures *f)
{
    char w[512];
    line_add(l, "residency: ");
    totals_words(l, t);
    if (f->have_moves)
        line_add(l, "; moves: %s", shim_fig_moves_words(w, sizeof w, &f->moves));
    if (t->planned)
        line_add(l,
                 "; plan: %llu planned evictions and %llu prefetches, %llu missed (allocation "
                 "absent or busy), %llu departures (used before the plan brought it back), %llu "
                 "evictions for room",
                 (unsigned long long)t->planned_evictions,
                 (unsigned long long)t->planned_prefetches, (unsigned long long)t->planned_missing,
                 (unsigned long long)t->departures, (unsigned long long)t->reactive_evictions);
    if (t->remaps)
        line_add(l, "; remaps: %llu (%llu by the mover), %llu handles created, %llu released",
                 (unsigned long long)t->remaps, (unsigned long long)t->remaps_by_mover,
                 (unsigned long long)t->handles_created, (unsigned long long)t->handles_released);
    if (t->host_births)
        line_add(l, "; %llu allocations made on the host (the budget held by work in progress)",
                 (unsigned long long)t->host_births);
    if (t->placed)
        line_add(l, "; %llu allocations kept on the host (host_resident, %.1f MiB)",
                 (unsigned long long)t->placed, mib(t->placed_bytes));
    if (t->foreign_allocs)
        line_add(l,
                 "; serving device %d: %llu allocations (%.1f MiB) on other devices left to the "
                 "driver",
                 t->device, (unsigned long long)t->foreign_allocs, mib(t->foreign_bytes));
    if (t->outside_allocs || t->stepped_aside)
        line_add(l,
                 "; stepped aside%s: %llu allocations (%.1f MiB) left to the driver outside the "
                 "budget",
                 t->stepped_aside ? " for good" : "", (unsigned long long)t->outside_allocs,
                 mib(t->outside_bytes));
    /* Further devices' managers, each within its own budget (the figures above are the first's:
       the device the first allocation was made on). */
    struct shim_resid_totals o;
    for (uint32_t k = 1; shim_resid_totals(k, &o); k++) {
        line_add(l, "; device %d: ", o.device);
        totals_words(l, &o);
    }
}

/* The exit lines: the verdict and its figures first, then the steps, what residency moved and
   what the plan did. Two lines, each within the log's line (shim_log cuts a longer one). */
static void exit_line(void)
{
    struct shim_resid_totals t;
    struct shim_figures f;
    struct line l = {.len = 0};
    bool managed = shim_resid_totals(0, &t);
    if (managed)
        shim_trace_set_resident_peak(t.resident_peak);
    figures(&f, &t, managed);
    verdict(&l, &f);
    shim_log(SHIM_LOG_INFO, "exit: %s", l.buf);
    l.len = 0;
    line_add(&l, "%llu step%s; ", (unsigned long long)f.steps.marks, f.steps.marks == 1 ? "" : "s");
    if (managed)
        residency_words(&l, &t, &f);
    else
        line_add(&l, "nothing moved (%s)",
                 shim.mode == CONF_MODE_RECORD ? "mode = record" : "residency did not start");
    shim_log(SHIM_LOG_INFO, "exit: %s", l.buf);
    unmatched_placements(managed);
}

static void at_exit(void)
{
    if (atomic_load(&shim.state) == SHIM_READY) {
        shim_timing_collect();
        shim_plan_stop();
        shim_resid_stop();
        shim_free_later_flush(true); /* the moves are over: the program's kept frees */
        exit_line();
        shim_trace_stop();
    }
}

/* Mode auto needs the residency manager's entry points: without them, record only. */
static void check_residency(void)
{
    char names[1024];
    int missing = shim.mode == CONF_MODE_AUTO ? shim_real_resid_missing(names, sizeof names) : 0;
    if (!missing)
        return;
    shim_log(SHIM_LOG_WARN,
             "the driver lacks %s, which the residency manager needs (%d entry point%s): libshim "
             "records but moves nothing",
             names, missing, missing == 1 ? "" : "s");
    shim.mode = CONF_MODE_RECORD;
}

/* The driver is resolved and the configuration is good: start what READY needs. */
static void ready(void)
{
    log_backend_note();
    check_residency();
    shim_plan_listen();
    start_trace();
    pthread_atfork(NULL, NULL, on_fork_child);
    atexit(at_exit);
}

__attribute__((constructor)) static void shim_load(void)
{
    conf_config cfg;
    conf_diags diags = {0};
    int rc = conf_config_load(&cfg, environ, NULL, &diags);
    const char *rank_text;
    bool bad_rank = load_rank(&rank_text);
    shim_log_open((int)conf_get_choice(&cfg, CONF_LOG_LEVEL), conf_get_string(&cfg, CONF_LOG_FILE),
                  rank);
    if (bad_rank)
        shim_log(SHIM_LOG_WARN,
                 "%s=\"%.64s%s\" is not a rank (decimal digits, at most 2147483647): %%r and the "
                 "trace's rank are 0",
                 SHIM_PATH_RANK_VAR, rank_text, strlen(rank_text) > 64 ? "..." : "");
    log_diags(&diags);
    shim_state_configure(rc == 0, ready);
    if (rc == 0) {
        apply(&cfg);
    } else {
        shim_log(SHIM_LOG_ERROR, "configuration errors above: libshim passes everything through");
    }
    conf_diags_free(&diags);
    conf_config_free(&cfg);
}
