/* shim_plan_make.c — the planning thread: from a study to an installed plan.
 *
 * One detached thread per study (a few per run: one per detected step pattern). It builds
 * the model of the last recorded step with kernel times (plan_build_model_ids), pins in the
 * model what libshim cannot move (memory left to the driver, small allocations that share
 * slabs: they get a touch at every operation they live through, so no plan moves them but
 * every plan counts their bytes), plans it with the scheduled planner for the budget, and
 * compiles the plan's entries into actions per launch position for the executor
 * (shim_resid_plan.c). Nothing here touches the driver or the program's threads.
 *
 * The plan is installed by the step detector at the boundary that ends the step during which
 * it was made (shim_plan_collect), which waits for the planner if it is not done yet: a plan
 * always starts at the same step of a run, whatever the threads' timing, so runs under the
 * simulated device measure the same virtual time every time. */
#include "shim_core.h"
#include "shim_plan.h"

#include "base_time.h"
#include "plan_build.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The longest a step boundary waits for the plan being made. */
#define COLLECT_WAIT_S 2

/* A model larger than this many touches once pinned is not planned (memory and time). */
#define MAX_PINNED_TOUCHES ((uint64_t)1 << 25)

struct job {
    plan_builder *b;
    struct shim_plan_known_alloc *allocs;
    uint64_t n;
};

static _Atomic int running; /* planning threads alive */
static pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static bool pending;                  /* a plan is being made */
static struct shim_resid_plan *ready; /* made, not yet installed */

static int by_id(const void *a, const void *b)
{
    uint64_t x = ((const struct shim_plan_known_alloc *)a)->id;
    uint64_t y = ((const struct shim_plan_known_alloc *)b)->id;
    return x < y ? -1 : x > y;
}

static const struct shim_plan_known_alloc *find(const struct job *j, uint64_t id)
{
    struct shim_plan_known_alloc key = {.id = id};
    return bsearch(&key, j->allocs, j->n, sizeof key, by_id);
}

/* m with every allocation that keys[] marks unmovable touched at each operation it lives
   through, and the slab members among them holding their slabs' chunks as libshim packs them
   (plan_model_pin_slabs), into the empty model *out. */
static plan_err pin_unmovable(const plan_model *m, const struct job *j, const uint64_t *ids,
                              const struct shim_resid_plan_key *keys, plan_model *out)
{
    bool *movable = malloc(2 * m->nallocs * sizeof *movable + 1), *member = movable + m->nallocs;
    if (!movable)
        return PLAN_ERR_NOMEM;
    for (size_t i = 0; i < m->nallocs; i++) {
        const struct shim_plan_known_alloc *a = find(j, ids[i]);
        movable[i] = keys[i].movable;
        member[i] = a && a->member;
    }
    plan_err e = plan_model_pin_slabs(m, movable, member, shim_resid_granularity(), out, NULL);
    free(movable);
    return e;
}

/* How each model allocation is found again: by id if it was live when the study began,
   else by when it was made relative to the modelled step's first launch. */
static struct shim_resid_plan_key *make_keys(const struct job *j, const uint64_t *ids, size_t n,
                                             uint64_t first, uint64_t step_len, size_t *movable)
{
    struct shim_resid_plan_key *k = calloc(n + 1, sizeof *k);
    *movable = 0;
    for (size_t i = 0; k && i < n; i++) {
        const struct shim_plan_known_alloc *a = find(j, ids[i]);
        if (!a)
            continue; /* not movable: pinned */
        k[i].movable = a->movable;
        k[i].by_id = a->before;
        k[i].id = a->id;
        /* (seq - first) modulo the step: earlier steps' positions fold onto this one. */
        k[i].pos = (a->seq % step_len + step_len - first % step_len) % step_len;
        k[i].ordinal = a->ordinal;
        *movable += a->movable;
    }
    return k;
}

/* Where entry e puts an action of kind: before launch position *pos (evictions go right after
   their operation, i.e. before the next launch). False when e has no such action. */
static bool action_at(const plan_entry *e, int kind, uint64_t L, uint64_t *pos)
{
    int64_t at = kind == SHIM_RESID_PLAN_EVICT ? (int64_t)e->evict_after + 1 : e->prefetch_at;
    if (at < 0)
        return false;
    *pos = (uint64_t)at % L; /* a position of the next step: the same one, a step later */
    return true;
}

/* Compiles p's entries for movable allocations into per-position actions of sp, the evictions
   of a position before its prefetches. */
static bool compile(struct shim_resid_plan *sp, const plan *p)
{
    uint64_t L = sp->step_len, pos;
    sp->act_first = calloc(L + 1, sizeof *sp->act_first);
    sp->act = malloc((2 * p->n + 1) * sizeof *sp->act);
    uint32_t *fill = calloc(L + 1, sizeof *fill);
    bool ok = sp->act_first && sp->act && fill;
    for (int kind = SHIM_RESID_PLAN_EVICT; ok && kind <= SHIM_RESID_PLAN_PREFETCH; kind++) {
        for (size_t i = 0; i < p->n; i++) {
            const plan_entry *e = &p->entries[i];
            if (e->alloc >= sp->nallocs || !sp->keys[e->alloc].movable ||
                !action_at(e, kind, L, &pos)) /* slabs (after the model's) never move */
                continue;
            sp->act_first[pos + 1]++;
            (*(kind == SHIM_RESID_PLAN_EVICT ? &sp->evictions : &sp->prefetches))++;
        }
    }
    for (uint64_t k = 0; ok && k < L; k++)
        sp->act_first[k + 1] += sp->act_first[k];
    for (int kind = SHIM_RESID_PLAN_EVICT; ok && kind <= SHIM_RESID_PLAN_PREFETCH; kind++) {
        for (size_t i = 0; i < p->n; i++) {
            const plan_entry *e = &p->entries[i];
            if (e->alloc < sp->nallocs && sp->keys[e->alloc].movable && action_at(e, kind, L, &pos))
                sp->act[sp->act_first[pos] + fill[pos]++] =
                    (struct shim_resid_plan_act){e->alloc, (uint8_t)kind};
        }
    }
    free(fill);
    return ok;
}

/* The remap cost the plan assumes into *us: link_remap when set, else the median of libshim's own
   remaps when one was timed, else the model's default; returns how it was found, for the log. */
static const char *remap_of(double *us)
{
    if (shim.link_remap_us >= 0) {
        *us = shim.link_remap_us;
        return "set";
    }
    double measured = shim_resid_remap_us();
    if (measured < 0)
        return "assumed";
    *us = measured;
    return "measured";
}

/* Whether plan sp is worth applying: one that holds the budget is; one over it (the budget is
   below what the planner could reach) leaves the rest to the reactive policy, and is worth its
   moves only when it does at least half the lowering of the peak the budget asks. A plan that
   lowered the peak by almost nothing cost DLRM rank 0 415 ms a step at 100% of its peak against
   8.4 ms under the reactive policy alone (635 against 19.7 ms at 75%; RESULTS-real.md), while
   train_sim's segments at 50%, a plan three quarters of the way, ran 20.3 ms against 24.8. */
static bool worth_applying(const struct shim_resid_plan *sp)
{
    if (sp->feasible || sp->native_peak <= sp->budget)
        return true;
    uint64_t saved =
        sp->native_peak > sp->predicted_peak ? sp->native_peak - sp->predicted_peak : 0;
    return saved >= (sp->native_peak - sp->budget + 1) / 2;
}

/* Plans the study of j; returns the plan, or NULL with why in msg. */
static struct shim_resid_plan *make(struct job *j, char *msg, size_t cap)
{
    qsort(j->allocs, j->n, sizeof *j->allocs, by_id);
    plan_model m, pinned;
    plan_model_init(&m);
    plan_model_init(&pinned);
    plan_build_info info;
    uint64_t *ids = NULL;
    plan_err e = plan_build_model_ids(j->b, -1, &m, &info, &ids, msg, cap);
    if (e)
        return NULL;
    const char *remap_how = remap_of(&m.hw.remap_us);
    struct shim_resid_plan *sp = calloc(1, sizeof *sp);
    size_t movable = 0;
    if (sp) {
        sp->step_len = m.nops;
        sp->model_step = info.step;
        sp->model_first_seq = info.first_seq;
        sp->nallocs = (uint32_t)m.nallocs;
        sp->keys = make_keys(j, ids, m.nallocs, info.first_seq, m.nops, &movable);
    }
    uint64_t pinned_touches = 0;
    for (size_t i = 0; sp && sp->keys && i < m.nallocs; i++)
        pinned_touches += sp->keys[i].movable ? m.allocs[i].ntouch : m.nops;
    plan p;
    plan_init(&p);
    plan_stats st = {0};
    if (!sp || !sp->keys) {
        snprintf(msg, cap, "out of memory");
    } else if (pinned_touches > MAX_PINNED_TOUCHES) {
        snprintf(msg, cap, "the step is too large to plan in the process (%llu touches)",
                 (unsigned long long)pinned_touches);
    } else if ((e = pin_unmovable(&m, j, ids, sp->keys, &pinned)) != PLAN_OK ||
               (e = plan_peaks(&pinned, &sp->native_peak, &sp->floor)) != PLAN_OK) {
        snprintf(msg, cap, "%s", plan_strerror(e));
    } else {
        sp->budget = shim_resid_plan_budget();
        plan none;
        plan_init(&none);
        plan_stats native = {0};
        if ((e = plan_make(&pinned, PLAN_KIND_NONE, sp->budget, &none, &native)) == PLAN_OK &&
            (e = plan_make(&pinned, PLAN_KIND_SCHEDULED, sp->budget, &p, &st)) == PLAN_OK &&
            (e = plan_lower_bound(&pinned, sp->budget, &sp->bound_us)) == PLAN_OK &&
            compile(sp, &p)) {
            sp->native_us = native.step_us;
            sp->predicted_us = st.step_us;
            sp->stall_us = st.stall_us;
            sp->predicted_peak = st.peak_bytes;
            sp->bytes_to_host = st.bytes_to_host;
            sp->bytes_to_device = st.bytes_to_device;
            sp->feasible = st.feasible;
            sp->remap_us = m.hw.remap_us;
            snprintf(sp->link, sizeof sp->link,
                     "link %.3f GB/s to the device%s, %.3f GB/s to the host%s, %s", m.hw.h2d_gbps,
                     info.measured_h2d ? " measured" : " assumed", m.hw.d2h_gbps,
                     info.measured_d2h ? " measured" : " assumed",
                     m.hw.duplex ? "both at once" : "one way at a time");
            if (m.hw.both_h2d_gbps > 0)
                snprintf(sp->link + strlen(sp->link), sizeof sp->link - strlen(sp->link),
                         " (%.3f/%.3f GB/s both busy)", m.hw.both_h2d_gbps, m.hw.both_d2h_gbps);
            snprintf(sp->link + strlen(sp->link), sizeof sp->link - strlen(sp->link),
                     ", remap %.0f us %s", m.hw.remap_us, remap_how);
            snprintf(msg, cap, "step %llu (%zu launches, %zu allocations, %zu movable; %s)",
                     (unsigned long long)info.step, m.nops, m.nallocs, movable, sp->link);
        } else {
            snprintf(msg, cap, "%s", e ? plan_strerror(e) : "out of memory");
            e = e ? e : PLAN_ERR_NOMEM;
        }
        plan_free(&none);
    }
    if (e == PLAN_OK && sp && sp->act && !worth_applying(sp)) {
        snprintf(msg, cap,
                 "the plan nearest the %llu MiB budget lowers the %llu MiB peak only to %llu MiB, "
                 "less than half the way",
                 (unsigned long long)(sp->budget >> 20),
                 (unsigned long long)((sp->native_peak + (1u << 20) - 1) >> 20),
                 (unsigned long long)((sp->predicted_peak + (1u << 20) - 1) >> 20));
        e = PLAN_ERR_INVALID;
    }
    bool ok = sp && sp->keys && sp->act && e == PLAN_OK && pinned_touches <= MAX_PINNED_TOUCHES;
    plan_free(&p);
    plan_model_free(&pinned);
    plan_model_free(&m);
    free(ids);
    if (!ok) {
        shim_resid_plan_free(sp);
        return NULL;
    }
    return sp;
}

static void *planner_main(void *arg)
{
    shim_inside = 1; /* nothing here is the program's */
    struct job *j = arg;
    char msg[256] = "";
    struct shim_resid_plan *sp = make(j, msg, sizeof msg);
    if (!sp) {
        shim_log(SHIM_LOG_WARN, "planner: no plan (%s): moves stay reactive", msg);
    } else {
        char text[512];
        snprintf(text, sizeof text,
                 "planner: %s at budget %llu MiB: predicted %.0f us per step (%.0f us stalled; "
                 "native %.0f us, lower bound %.0f us), peak %llu MiB%s, %u evictions and %u "
                 "prefetches per step; applied from the next step",
                 msg, (unsigned long long)(sp->budget >> 20), sp->predicted_us, sp->stall_us,
                 sp->native_us, sp->native_us + sp->bound_us,
                 (unsigned long long)(sp->predicted_peak >> 20),
                 sp->feasible ? "" : " (over the budget: the reactive policy makes up the rest)",
                 sp->evictions, sp->prefetches);
        shim_log(SHIM_LOG_DEBUG, "%s", text); /* said at info once it applies (collect) */
        shim_trace_note(text);
    }
    pthread_mutex_lock(&ready_lock);
    shim_resid_plan_free(ready);
    ready = sp;
    pending = false;
    pthread_cond_broadcast(&ready_cond);
    pthread_mutex_unlock(&ready_lock);
    plan_build_free(j->b);
    free(j->allocs);
    free(j);
    atomic_fetch_sub(&running, 1);
    return NULL;
}

bool shim_plan_make_async(struct plan_builder *b, struct shim_plan_known_alloc *allocs, uint64_t n)
{
    struct job *j = malloc(sizeof *j);
    pthread_t t;
    pthread_attr_t attr;
    bool ok = false;
    if (j) {
        *j = (struct job){b, allocs, n};
        pthread_mutex_lock(&ready_lock);
        pending = true;
        pthread_mutex_unlock(&ready_lock);
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        atomic_fetch_add(&running, 1);
        ok = pthread_create(&t, &attr, planner_main, j) == 0;
        pthread_attr_destroy(&attr);
    }
    if (!ok) {
        pthread_mutex_lock(&ready_lock);
        pending = false;
        pthread_mutex_unlock(&ready_lock);
        if (j)
            atomic_fetch_sub(&running, 1);
        SHIM_LOG_ONCE(SHIM_LOG_WARN, "planner: no planning thread: moves stay reactive");
        plan_build_free(b);
        free(allocs);
        free(j);
    }
    return ok;
}

void shim_plan_stop(void)
{
    for (int i = 0; atomic_load(&running) > 0 && i < 200; i++) { /* at most about 2 s */
        struct timespec ms10 = {0, 10000000L};
        nanosleep(&ms10, NULL);
    }
}

/* A duration for a person: microseconds, milliseconds or seconds. */
static void duration(char *buf, size_t n, double us)
{
    if (us < 1000)
        snprintf(buf, n, "%.0f us", us);
    else if (us < 1e6)
        snprintf(buf, n, "%.2f ms", us / 1e3);
    else
        snprintf(buf, n, "%.2f s", us / 1e6);
}

/* The progress line of plan p, applied from step `step`: its predicted step time against the
   step's native time (the planner's model of the step with nothing moved), the stall, the
   lower bound on it, the budget, the moves per step and the link it was planned for. */
static void applied_line(const struct shim_resid_plan *p, uint64_t step, char *text, size_t n)
{
    char pred[32], native[32], stall[32];
    duration(pred, sizeof pred, p->predicted_us);
    duration(native, sizeof native, p->native_us);
    duration(stall, sizeof stall, p->stall_us);
    char slowdown[80] = "no native time to compare with";
    if (p->native_us > 0 && isfinite(p->bound_us))
        snprintf(slowdown, sizeof slowdown, "%+.1f%%, at least %+.1f%% for any plan",
                 100.0 * (p->predicted_us / p->native_us - 1), 100.0 * p->bound_us / p->native_us);
    else if (p->native_us > 0) /* the budget is below the floor: no bound, no plan keeps it */
        snprintf(slowdown, sizeof slowdown, "%+.1f%%; no plan keeps this budget",
                 100.0 * (p->predicted_us / p->native_us - 1));
    snprintf(text, n,
             "planner: plan applied from step %llu: predicted %s per step against %s native (%s), "
             "%s stalled, budget %llu MiB, peak %llu MiB%s, %u evictions and %u prefetches per "
             "step; %s",
             (unsigned long long)step, pred, native, slowdown, stall,
             (unsigned long long)(p->budget >> 20), (unsigned long long)(p->predicted_peak >> 20),
             p->feasible ? "" : " (over the budget: the reactive policy makes up the rest)",
             p->evictions, p->prefetches, p->link);
}

void shim_plan_collect(uint64_t step)
{
    pthread_mutex_lock(&ready_lock);
    if (pending) {
        struct timespec until =
            base_deadline_after(CLOCK_REALTIME, (uint64_t)COLLECT_WAIT_S * BASE_NS_PER_SEC);
        while (pending && pthread_cond_timedwait(&ready_cond, &ready_lock, &until) == 0)
            ;
        if (pending)
            SHIM_LOG_ONCE(SHIM_LOG_WARN,
                          "planner: the plan took longer than a step and %d s: "
                          "it starts at a later step",
                          COLLECT_WAIT_S);
    }
    struct shim_resid_plan *sp = ready;
    ready = NULL;
    pthread_mutex_unlock(&ready_lock);
    if (!sp)
        return;
    char text[640];
    applied_line(sp, step, text, sizeof text); /* sp is residency's (or freed) after install */
    shim_resid_plan_install(sp);
    if (shim_resid_plan_on()) /* installed: it applies from the step beginning now */
        shim_log(SHIM_LOG_INFO, "%s", text);
}
