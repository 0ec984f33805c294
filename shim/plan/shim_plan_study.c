/* shim_plan_study.c — studies a detected training step for the in-process planner.
 *
 * From the step detection (shim_plan_steady) the hooks hand every allocation, free, launch,
 * copy and kernel time to a step model builder (planner/plan_build.h), under one mutex; the
 * allocations live at that moment are handed over first (made before the study: the
 * model's weights and other long-lived memory). When the last profiled step has closed, one
 * more step is recorded so that its kernel times are all collected (they are read at host
 * synchronisations), and the study goes to a planning thread (shim_plan_make.c).
 *
 * Besides the builder, the study keeps what the executor needs to find each allocation
 * again in later steps: when it was made (the launch index, and how many allocations were made
 * before it at that index) and whether libshim can move it (a managed allocation with a unit
 * of its own). Lock order: the step detector's lock, then the registry's, then this one;
 * residency's lock may be held when an allocation is recorded, never the other way round. */
#include "shim_plan.h"

#include "base_array.h"
#include "plan_build.h"

#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    plan_builder *b;
    struct shim_plan_known_alloc *allocs;
    size_t nallocs, cap;
    bool last_profiled; /* the last profiled step has closed: one more, then plan */
    bool failed;        /* out of memory: the study is dropped at the next step */
} study;

/* Whether the planner runs in this process at all. */
static bool wanted(void)
{
    return shim.mode == CONF_MODE_AUTO && shim.planner == PLAN_KIND_SCHEDULED &&
           shim_resid_started() && !shim_resid_several();
}

/* Drops the study (lock held). */
static void drop(void)
{
    shim_step_studying_set(false);
    plan_build_free(study.b);
    free(study.allocs);
    study.b = NULL;
    study.allocs = NULL;
    study.nallocs = study.cap = 0;
    study.last_profiled = study.failed = false;
}

/* Notes a builder call's result (lock held). */
static void check(plan_err e)
{
    if (e != PLAN_OK && !study.failed) {
        study.failed = true;
        SHIM_LOG_ONCE(SHIM_LOG_WARN, "planner: out of memory while studying the step: no plan "
                                     "(moves stay reactive)");
    }
}

/* Whether a device allocation of bytes and kind is a unit residency can move on its own. */
static bool movable(uint64_t bytes, int kind)
{
    return plan_rules_movable((plan_mem_kind)kind, bytes, shim_resid_slab_max());
}

/* Remembers allocation id made now, the ordinal-th at its launch index (lock held). */
static void note_alloc(uint64_t id, uint64_t bytes, int kind, bool before, uint32_t ordinal)
{
    uint64_t seq = atomic_load_explicit(&shim.launch_seq, memory_order_relaxed);
    if (base_array_grow((void **)&study.allocs, &study.cap, study.nallocs + 1,
                        sizeof *study.allocs)) {
        check(PLAN_ERR_NOMEM);
        return;
    }
    bool unit = movable(bytes, kind);
    study.allocs[study.nallocs++] = (struct shim_plan_known_alloc){
        id, seq, ordinal, unit, before, kind == PLAN_MEM_MANAGED && !unit};
}

/* The live device allocations when the study starts, gathered to be handed over in the
   order they were made (by id): the registry's own order follows addresses, which differ from run
   to run, and the planner breaks ties by the model's allocation order. */
struct live_set {
    struct shim_alloc *a;
    size_t n, cap;
    bool failed;
};

static void gather_live(const struct shim_alloc *a, void *ctx)
{
    struct live_set *s = ctx;
    if (a->kind == PLAN_MEM_HOST || s->failed)
        return;
    if (base_array_grow((void **)&s->a, &s->cap, s->n + 1, sizeof *s->a)) {
        s->failed = true;
        return;
    }
    s->a[s->n++] = *a;
}

static int by_alloc_id(const void *x, const void *y)
{
    uint64_t a = ((const struct shim_alloc *)x)->id, b = ((const struct shim_alloc *)y)->id;
    return (a > b) - (a < b);
}

static void add_live(void)
{
    struct live_set s = {0};
    shim_registry_each(gather_live, &s);
    if (s.failed)
        check(PLAN_ERR_NOMEM);
    qsort(s.a, s.n, sizeof *s.a, by_alloc_id);
    uint64_t seq = atomic_load_explicit(&shim.launch_seq, memory_order_relaxed);
    for (size_t i = 0; i < s.n && !s.failed; i++) {
        const struct shim_alloc *a = &s.a[i];
        if (a->kind == PLAN_MEM_MANAGED && shim_resid_kept_on_host(a->id))
            continue; /* host memory for good: no model holds it */
        check(plan_build_alloc(study.b, a->id, a->size, (plan_mem_kind)a->kind, a->addr, 0, seq));
        note_alloc(a->id, a->size, a->kind, true, 0);
    }
    free(s.a);
}

void shim_plan_steady(void)
{
    if (!wanted())
        return;
    pthread_mutex_lock(&lock);
    drop();
    if ((study.b = plan_build_new()) != NULL) {
        check(plan_build_rounding(study.b, shim_resid_granularity(), 4096));
        check(plan_build_duplex(study.b, !shim.link_shared));
        check(plan_build_link_both(study.b, shim.link_both_gbps[0], shim.link_both_gbps[1]));
        add_live();
        shim_step_studying_set(true);
    } else {
        check(PLAN_ERR_NOMEM);
    }
    pthread_mutex_unlock(&lock);
}

/* A plan was withdrawn at the last break of the pattern, not said yet (the detector's lock
   orders unsteady and changed). */
static bool withdrawn_unsaid;

void shim_plan_unsteady(void)
{
    pthread_mutex_lock(&lock);
    drop();
    pthread_mutex_unlock(&lock);
    withdrawn_unsaid = shim_resid_plan_withdraw(NULL);
}

void shim_plan_changed(uint64_t launch)
{
    if (withdrawn_unsaid)
        shim_log(SHIM_LOG_INFO,
                 "planner: plan withdrawn (the training step changed at launch %llu): moves are "
                 "reactive again",
                 (unsigned long long)launch);
    withdrawn_unsaid = false;
}

void shim_plan_step_closed(uint64_t step, uint64_t first_seq, int profiled_left)
{
    /* Before our lock: both take residency's. What the plan in force achieved in the step
       is recorded before a new plan may replace it. */
    shim_resid_plan_step_closed(step, first_seq);
    shim_plan_collect(step + 1);
    pthread_mutex_lock(&lock);
    if (!study.b) {
        pthread_mutex_unlock(&lock);
        return;
    }
    check(plan_build_step(study.b, step, first_seq));
    if (study.failed) {
        drop();
    } else if (profiled_left == 0 && !study.last_profiled) {
        study.last_profiled = true; /* its kernel times arrive by the end of the next step */
    } else if (study.last_profiled) {
        shim_step_studying_set(false);
        plan_builder *b = study.b;
        struct shim_plan_known_alloc *allocs = study.allocs;
        uint64_t n = study.nallocs;
        study.b = NULL;
        study.allocs = NULL;
        drop();
        shim_plan_make_async(b, allocs, n);
    }
    pthread_mutex_unlock(&lock);
}

void shim_plan_study_alloc(uint64_t id, uint64_t addr, uint64_t bytes, int kind, uint64_t stream,
                           uint32_t ordinal)
{
    if (kind == PLAN_MEM_HOST)
        return;
    pthread_mutex_lock(&lock);
    if (study.b) {
        check(plan_build_alloc(study.b, id, bytes, (plan_mem_kind)kind, addr, stream,
                               atomic_load_explicit(&shim.launch_seq, memory_order_relaxed)));
        note_alloc(id, bytes, kind, false, ordinal);
    }
    pthread_mutex_unlock(&lock);
}

void shim_plan_study_free(uint64_t id, uint64_t stream)
{
    pthread_mutex_lock(&lock);
    if (study.b)
        check(plan_build_free_alloc(study.b, id, stream,
                                    atomic_load_explicit(&shim.launch_seq, memory_order_relaxed)));
    pthread_mutex_unlock(&lock);
}

void shim_plan_study_launch(uint64_t seq, uint64_t func, uint64_t stream, const uint64_t *ids,
                            uint32_t n)
{
    pthread_mutex_lock(&lock);
    if (study.b)
        check(plan_build_launch(study.b, seq, func, stream, ids, n));
    pthread_mutex_unlock(&lock);
}

void shim_plan_study_copy(uint64_t dst, uint64_t src, enum shim_copy_dir dir, uint64_t bytes)
{
    pthread_mutex_lock(&lock);
    uint64_t seq = atomic_load_explicit(&shim.launch_seq, memory_order_relaxed);
    if (study.b)
        check(plan_build_copy(study.b, seq, dst, src));
    if (study.b && (dir == SHIM_COPY_H2D || dir == SHIM_COPY_D2H))
        check(plan_build_transfer(study.b, seq, dir == SHIM_COPY_H2D, bytes));
    pthread_mutex_unlock(&lock);
}

void shim_plan_study_link(bool to_device, uint64_t bytes, double usec)
{
    pthread_mutex_lock(&lock);
    if (study.b)
        check(plan_build_move(study.b, to_device, bytes, usec));
    pthread_mutex_unlock(&lock);
}

void shim_plan_study_kernel_time(uint64_t seq, double usec)
{
    pthread_mutex_lock(&lock);
    if (study.b && plan_build_kernel_time(study.b, seq, usec) == PLAN_ERR_NOMEM)
        check(PLAN_ERR_NOMEM);
    pthread_mutex_unlock(&lock);
}

void shim_plan_study_kernel_idle(uint64_t seq, double usec, double record_us)
{
    pthread_mutex_lock(&lock);
    plan_err e = !study.b ? PLAN_OK
                 : usec < 0 ? plan_build_kernel_disturbed(study.b, seq)
                            : plan_build_kernel_idle(study.b, seq, usec);
    if (e == PLAN_ERR_NOMEM)
        check(PLAN_ERR_NOMEM);
    if (study.b)
        plan_build_timing_cost(study.b, record_us);
    pthread_mutex_unlock(&lock);
}

/* The study as the core's step listener. */
static const struct shim_step_listener study_listener = {
    .steady = shim_plan_steady,
    .step_closed = shim_plan_step_closed,
    .unsteady = shim_plan_unsteady,
    .changed = shim_plan_changed,
    .kernel_time = shim_plan_study_kernel_time,
    .kernel_idle = shim_plan_study_kernel_idle,
    .link_time = shim_plan_study_link,
    .alloc = shim_plan_study_alloc,
    .copy = shim_plan_study_copy,
};

void shim_plan_listen(void)
{
    shim_step_listen(&study_listener);
}
