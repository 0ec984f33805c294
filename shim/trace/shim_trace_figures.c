/* shim_trace_figures.c — the figures every surface prints and their words (shim_trace_figures.h):
 * libc only and stateless, linked by libshim (its exit line) and by the tools' trace reader. */
#include "shim_trace_figures.h"

#include "shim_trace.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static uint64_t sat(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

/* Contract in shim_trace_figures.h. */
int shim_trace_count_move(struct shim_trace_move_counts *c, uint32_t dir, uint32_t reason,
                          uint64_t bytes)
{
    if (dir == SHIM_MOVE_TO_DEVICE) {
        c->restores = sat(c->restores, 1);
        c->bytes_to_device = sat(c->bytes_to_device, bytes);
        return 0;
    }
    if (dir != SHIM_MOVE_TO_HOST)
        return -1;
    if (reason == SHIM_REASON_CANCELLED) {
        c->cancelled_evictions = sat(c->cancelled_evictions, 1);
        c->cancelled_bytes = sat(c->cancelled_bytes, bytes);
    } else {
        c->evictions = sat(c->evictions, 1);
    }
    c->bytes_to_host = sat(c->bytes_to_host, bytes); /* a cancelled copy was made too */
    return 0;
}

/* Contract in shim_trace_figures.h. */
void shim_trace_move_counts_add(struct shim_trace_move_counts *c,
                                const struct shim_trace_move_counts *more)
{
    c->evictions = sat(c->evictions, more->evictions);
    c->cancelled_evictions = sat(c->cancelled_evictions, more->cancelled_evictions);
    c->restores = sat(c->restores, more->restores);
    c->bytes_to_host = sat(c->bytes_to_host, more->bytes_to_host);
    c->bytes_to_device = sat(c->bytes_to_device, more->bytes_to_device);
    c->cancelled_bytes = sat(c->cancelled_bytes, more->cancelled_bytes);
}

/* Contract in shim_trace_figures.h. */
void shim_fig_moves_transition(struct shim_fig_moves *m, uint32_t from, uint32_t event,
                               uint32_t reason)
{
    if (event == SHIM_EV_EVICT || event == SHIM_EV_RESTORE) {
        m->by_reason[reason < SHIM_FIG_REASONS ? reason : 0]++;
        (*(event == SHIM_EV_EVICT ? &m->to_host : &m->to_device))++;
        return;
    }
    if (from != SHIM_RS_EVICTING && from != SHIM_RS_RESTORING)
        return; /* no move was in flight: not a move's end */
    int outcome = event == SHIM_EV_COPY_DONE || event == SHIM_EV_ORDERED ? SHIM_FIG_DONE
                  : event == SHIM_EV_CANCEL                              ? SHIM_FIG_CANCELLED
                  : event == SHIM_EV_ERROR                               ? SHIM_FIG_ERROR
                  : event == SHIM_EV_FREE                                ? SHIM_FIG_FREED
                                                                         : -1;
    if (outcome >= 0)
        m->by_outcome[outcome]++;
}

/* Contract in shim_trace_figures.h. */
uint64_t shim_fig_moves_started(const struct shim_fig_moves *m)
{
    return m->to_host + m->to_device;
}

/* Contract in shim_trace_figures.h. */
uint64_t shim_fig_moves_unfinished(const struct shim_fig_moves *m)
{
    uint64_t ended = m->superseded;
    for (int i = 0; i < SHIM_FIG_OUTCOMES; i++)
        ended += m->by_outcome[i];
    uint64_t started = shim_fig_moves_started(m);
    return started > ended ? started - ended : 0;
}

/* Contract in shim_trace_figures.h. */
const char *shim_fig_outcome_name(uint32_t outcome)
{
    static const char *const names[] = {"done",  "cancelled",  "error",
                                        "freed", "superseded", "unfinished"};
    return outcome <= SHIM_FIG_OUTCOMES + 1 ? names[outcome] : "?";
}

/* Contract in shim_trace_figures.h. */
void shim_fig_mark(struct shim_fig_steps *f, uint64_t step, uint64_t t_ns)
{
    if (f->marks >= 2 && f->mark_step[0] + 1 == step && f->mark_step[1] + 2 == step &&
        t_ns >= f->mark_ns[0]) {
        f->walled++;
        f->wall_ns = sat(f->wall_ns, t_ns - f->mark_ns[0]);
    }
    memmove(&f->mark_step[1], &f->mark_step[0], 2 * sizeof f->mark_step[0]);
    memmove(&f->mark_ns[1], &f->mark_ns[0], 2 * sizeof f->mark_ns[0]);
    f->mark_step[0] = step;
    f->mark_ns[0] = t_ns;
    f->marks++;
}

/* Contract in shim_trace_figures.h. */
void shim_fig_plan(struct shim_fig_steps *f, double native_us, double predicted_us, double stall_us,
                   double bound_us)
{
    f->have_plan = 1;
    f->plan_native_us = native_us;
    f->plan_predicted_us = predicted_us;
    f->plan_stall_us = stall_us;
    f->plan_bound_us = bound_us;
}

/* Contract in shim_trace_figures.h. */
void shim_fig_plan_step(struct shim_fig_steps *f, uint64_t step, uint64_t bytes_to_host,
                        uint64_t bytes_to_device, uint64_t stall_ns)
{
    if (f->steady++ == 0)
        f->steady_first = step;
    f->steady_bytes = sat(f->steady_bytes, sat(bytes_to_host, bytes_to_device));
    f->steady_stall_raw_ns = sat(f->steady_stall_raw_ns, stall_ns);
    if (f->marks >= 2 && f->mark_step[0] == step && f->mark_step[1] + 1 == step &&
        f->mark_ns[0] >= f->mark_ns[1]) {
        uint64_t wall = f->mark_ns[0] - f->mark_ns[1];
        f->steady_walled++;
        f->steady_wall_ns = sat(f->steady_wall_ns, wall);
        stall_ns = stall_ns < wall ? stall_ns : wall; /* threads that stalled at once */
    }
    f->steady_stall_ns = sat(f->steady_stall_ns, stall_ns);
}

/* Contract in shim_trace_figures.h. */
int shim_fig_simulated(const char *device_name)
{
    return device_name != NULL && strncmp(device_name, "simgpu", 6) == 0;
}

static double mib(double bytes)
{
    return bytes / 1048576.0;
}

static double ms_of(double ns)
{
    return ns / 1e6;
}

/* The step time against native, and its source (shim_trace_figures.h says which wins). */
static void step_time(const struct shim_figures *f, struct shim_fig_derived *d)
{
    const struct shim_fig_steps *s = &f->steps;
    double wall = d->steady_steps ? d->wall_ms_per_step : d->wall_ms;
    if (f->managed && s->have_plan && s->plan_native_us > 0 && s->plan_predicted_us >= 0) {
        d->step_source = "plan estimate";
        d->step_ms = s->plan_predicted_us / 1e3;
        d->native_ms = s->plan_native_us / 1e3;
        if (isfinite(s->plan_bound_us) && s->plan_bound_us > 0)
            d->bound_ms = s->plan_bound_us / 1e3;
    } else if (!f->simulated && wall >= 0) {
        d->step_source = f->managed ? "measured" : "no budget";
        d->step_ms = wall;
        d->native_ms = d->moved ? -1 : wall; /* nothing moved: the steps ran as native */
    }
    if (d->step_ms >= 0 && d->native_ms > 0)
        d->slowdown = d->step_ms / d->native_ms;
    if (d->bound_ms >= 0 && d->native_ms > 0)
        d->bound_slowdown = d->bound_ms / d->native_ms;
}

/* Contract in shim_trace_figures.h. */
void shim_fig_derive(const struct shim_figures *f, struct shim_fig_derived *d)
{
    const struct shim_fig_steps *s = &f->steps;
    *d = (struct shim_fig_derived){.step_source = "none",
                                   .step_ms = -1,
                                   .native_ms = -1,
                                   .slowdown = -1,
                                   .bound_ms = -1,
                                   .bound_slowdown = -1,
                                   .wall_ms_per_step = -1,
                                   .wall_ms = -1};
    double total = (double)f->bytes_to_host + (double)f->bytes_to_device;
    d->moved = f->managed && total > 0;
    if (s->walled)
        d->wall_ms = ms_of((double)s->wall_ns) / (double)s->walled;
    if (s->steady) {
        double k = (double)s->steady;
        d->steady_steps = s->steady;
        d->steady_from = s->steady_first;
        d->bytes_per_step = (double)s->steady_bytes / k;
        d->stall_ms_per_step = ms_of((double)s->steady_stall_ns) / k;
        if (s->steady_walled)
            d->wall_ms_per_step = ms_of((double)s->steady_wall_ns) / (double)s->steady_walled;
        d->other_steps = s->marks > s->steady ? s->marks - s->steady : 0;
        double other = total - (double)s->steady_bytes;
        d->other_bytes = other > 0 ? other : 0;
        d->other_stall_ms = f->stall_ns > s->steady_stall_raw_ns
                                ? ms_of((double)(f->stall_ns - s->steady_stall_raw_ns))
                                : 0;
    }
    step_time(f, d);
}

/* A buffer words are appended to: each addition is cut to what is left, never past it. */
typedef struct words {
    char *buf;
    size_t n, len;
} words;

static words words_at(char *buf, size_t n)
{
    if (n)
        buf[0] = '\0';
    return (words){buf, n, 0};
}

static void add(words *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(words *w, const char *fmt, ...)
{
    if (w->len + 1 >= w->n)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(w->buf + w->len, w->n - w->len, fmt, ap);
    va_end(ap);
    if (k > 0)
        w->len = w->len + (size_t)k < w->n ? w->len + (size_t)k : w->n - 1;
}

static const char *plural(uint64_t k)
{
    return k == 1 ? "" : "s";
}

/* Contract in shim_trace_figures.h. */
const char *shim_fig_verdict_words(char *buf, size_t n, const struct shim_figures *f)
{
    words w = words_at(buf, n);
    const char *together = f->devices_together ? ", devices together" : "";
    if (f->managed && f->have_resident_peak) {
        int fitted = f->resident_peak <= f->budget;
        add(&w,
            "%s: resident peak %.1f MiB %s the %.1f MiB budget (allocations peaked at %.1f MiB%s, "
            "evicted ones counted)",
            fitted ? "fitted" : "did not fit", mib((double)f->resident_peak),
            fitted ? "within" : "over", mib((double)f->budget), mib((double)f->alloc_peak),
            together);
    } else if (f->managed) {
        add(&w,
            "unknown: the trace has no resident peak (format before 1.9, or cut short); budget "
            "%.1f MiB, allocations peaked at %.1f MiB",
            mib((double)f->budget), mib((double)f->alloc_peak));
    } else {
        add(&w, "no budget: allocations peaked at %.1f MiB%s", mib((double)f->alloc_peak),
            f->devices_together ? " (devices together)" : "");
    }
    return buf;
}

/* Contract in shim_trace_figures.h. */
const char *shim_fig_step_words(char *buf, size_t n, const struct shim_figures *f,
                                const struct shim_fig_derived *d)
{
    words w = words_at(buf, n);
    if (strcmp(d->step_source, "plan estimate") == 0) {
        add(&w, "step %.1f ms %sagainst %.1f ms native, %.2fx", d->step_ms,
            d->moved ? "under the budget " : "", d->native_ms, d->slowdown);
        if (d->bound_slowdown >= 0)
            add(&w, ", at least %.2fx for any plan", d->bound_slowdown);
        add(&w, " (the plan's estimate from measured kernel times%s)",
            d->moved ? "" : "; nothing moved");
    } else if (strcmp(d->step_source, "none") != 0) {
        add(&w, "step %.1f ms measured, %s", d->step_ms,
            !f->managed ? "native (no budget)"
            : d->moved  ? "native unknown (no plan was made)"
                        : "native (nothing moved)");
    } else if (f->simulated) {
        add(&w, "step time unknown: no plan gave an estimate, and the simulated device's wall "
                "time is the simulator's own");
    } else {
        add(&w, "step time not measured (no step with a wall time)");
    }
    return buf;
}

static const char *clock_words(const struct shim_figures *f)
{
    return f->simulated ? "the simulator's own, not the device's time" : "on the host's clock";
}

/* Contract in shim_trace_figures.h. */
const char *shim_fig_steady_words(char *buf, size_t n, const struct shim_figures *f,
                                  const struct shim_fig_derived *d)
{
    words w = words_at(buf, n);
    int wall_is_step =
        strcmp(d->step_source, "measured") == 0 || strcmp(d->step_source, "no budget") == 0;
    if (d->steady_steps) {
        add(&w,
            "steady state under the plan (%llu step%s from step %llu): %.1f MiB moved and %.1f ms "
            "stalled per step",
            (unsigned long long)d->steady_steps, plural(d->steady_steps),
            (unsigned long long)d->steady_from, mib(d->bytes_per_step), d->stall_ms_per_step);
        if (d->wall_ms_per_step >= 0)
            add(&w, ", of %.1f ms of wall time per step (%s)", d->wall_ms_per_step, clock_words(f));
        else
            add(&w, ", wall time not known");
    } else if (f->managed) {
        add(&w, "no plan applied (%llu step%s): %.1f MiB moved and %.1f ms stalled in all",
            (unsigned long long)f->steps.marks, plural(f->steps.marks),
            mib((double)f->bytes_to_host + (double)f->bytes_to_device), ms_of((double)f->stall_ns));
        if (d->wall_ms >= 0 && !wall_is_step)
            add(&w, ", %.1f ms of wall time per step (%s)", d->wall_ms, clock_words(f));
    } else if (d->wall_ms >= 0 && !wall_is_step) {
        add(&w, "%.1f ms of wall time per step (%s)", d->wall_ms, clock_words(f));
    }
    return buf;
}

/* Contract in shim_trace_figures.h. */
const char *shim_fig_warmup_words(char *buf, size_t n, const struct shim_figures *f,
                                  const struct shim_fig_derived *d)
{
    (void)f;
    words w = words_at(buf, n);
    if (d->steady_steps)
        add(&w,
            "warm-up apart (%llu other step%s, and the time outside any step): %.1f MiB moved, "
            "%.1f ms stalled",
            (unsigned long long)d->other_steps, plural(d->other_steps), mib(d->other_bytes),
            d->other_stall_ms);
    return buf;
}

/* Contract in shim_trace_figures.h. */
const char *shim_fig_moves_words(char *buf, size_t n, const struct shim_fig_moves *m)
{
    words w = words_at(buf, n);
    uint64_t started = shim_fig_moves_started(m), unfinished = shim_fig_moves_unfinished(m);
    add(&w, "%llu move%s (%llu to the host, %llu to the device)", (unsigned long long)started,
        plural(started), (unsigned long long)m->to_host, (unsigned long long)m->to_device);
    if (started == 0)
        return buf;
    const char *sep = ": by reason ";
    for (uint32_t r = 1; r <= SHIM_FIG_REASONS; r++) {
        uint32_t k = r % SHIM_FIG_REASONS; /* 1..7, then 0: another value */
        if (m->by_reason[k]) {
            add(&w, "%s%s %llu", sep, k ? shim_move_reason_name(k) : "other",
                (unsigned long long)m->by_reason[k]);
            sep = ", ";
        }
    }
    sep = "; by outcome ";
    for (uint32_t o = 0; o <= SHIM_FIG_OUTCOMES + 1; o++) {
        uint64_t k = o < SHIM_FIG_OUTCOMES    ? m->by_outcome[o]
                     : o == SHIM_FIG_OUTCOMES ? m->superseded
                                              : unfinished;
        if (k) {
            add(&w, "%s%s %llu", sep, shim_fig_outcome_name(o), (unsigned long long)k);
            sep = ", ";
        }
    }
    return buf;
}
