/* shim_resid_plan.c — executes the in-process plan (shim_plan.h) with the residency manager's
 * own moves.
 *
 * A plan names model allocations; the executor finds the live unit behind each one: by id for
 * memory made before the study (weights, optimizer state), else by when it was made in its
 * step (the launch position and the ordinal among the allocations made there), which repeats
 * every step. From the first step boundary after installation, just before each launch it
 * starts the evictions planned after the previous launch (fenced behind every stream that
 * touched the unit, like any eviction) and the prefetches planned at this one (restores,
 * which the touching operation waits for in stream order). The reactive policy stays the
 * safety net: a unit the plan moved out and the program touches early is restored on demand
 * (a departure), and a search for room still evicts what it must. All under r->lock.
 *
 * The trace gets the plan as installed (a plan record: its prediction) and, at each step
 * boundary under it, what it achieved in that step (a plan_step record: the differences of the
 * residency totals since the previous boundary). Both are written whatever trace.record says, as
 * its description promises for plans: a few records per step. */
#include "shim_resid_front.h"

#include <stdlib.h>

/* Launch position of index seq in the step that starts at first and is len launches long. */
static uint64_t position(uint64_t seq, uint64_t first, uint64_t len)
{
    int64_t d = (int64_t)(seq - first) % (int64_t)len;
    return (uint64_t)(d < 0 ? d + (int64_t)len : d);
}

/* Whether key k finds its allocation by when it was made (not by id), and the plan may move it. */
void shim_resid_plan_free(struct shim_resid_plan *p)
{
    if (!p)
        return;
    free(p->keys);
    free(p->act_first);
    free(p->act);
    free(p);
}

static bool positional(const struct shim_resid_plan_key *k)
{
    return k->movable && !k->by_id;
}

/* Orders keys by (position, ordinal). */
static int cmp_key(const struct shim_resid_plan_key *x, uint64_t pos, uint32_t ordinal)
{
    if (x->pos != pos)
        return x->pos < pos ? -1 : 1;
    return x->ordinal < ordinal ? -1 : x->ordinal > ordinal;
}

static int by_key(const void *a, const void *b, void *keys)
{
    const struct shim_resid_plan_key *k = keys, *y = &k[*(const uint32_t *)b];
    return cmp_key(&k[*(const uint32_t *)a], y->pos, y->ordinal);
}

/* The plan's allocation made at pos as the ordinal-th there, or -1 (a binary search of the
   positional keys, r->plan_order). */
static int64_t lookup(struct resid_ctx *r, const struct shim_resid_plan *p, uint64_t pos,
                      uint32_t ordinal)
{
    uint32_t lo = 0, hi = r->plan_npos;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = cmp_key(&p->keys[r->plan_order[mid]], pos, ordinal);
        if (c == 0)
            return r->plan_order[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static void bind(struct resid_ctx *r, struct resid_unit *u, int64_t a)
{
    struct resid_unit *old = r->plan_units[a];
    if (old && old != u)
        old->plan_alloc = -1;
    r->plan_units[a] = u;
    u->plan_alloc = a;
    u->plan_out = false;
}

void resid_plan_bind(struct resid_ctx *r, struct resid_unit *u, uint64_t seq, uint32_t ordinal)
{
    u->plan_alloc = -1;
    const struct shim_resid_plan *p = r->plan;
    if (!p || u->slab)
        return;
    int64_t a =
        lookup(r, p, position(seq, shim_steps_first_seq(&shim.steps), p->step_len), ordinal);
    if (a >= 0)
        bind(r, u, a);
}

void resid_plan_departed(struct resid_ctx *r, struct resid_unit *u)
{
    u->plan_out = false;
    r->planned.departures++;
    SHIM_LOG_ONCE(SHIM_LOG_INFO, "planner: the program used an allocation before the plan "
                                 "brought it back: restored on demand (counted as a departure)");
}

/* Forgets unit u's binding (for resid_each). */
static void forget(struct resid_ctx *r, struct resid_unit *u, void *arg)
{
    (void)r;
    (void)arg;
    u->plan_alloc = -1;
    u->plan_out = false;
}

/* Removes the installed plan (lock held). */
static void withdraw(struct resid_ctx *r)
{
    atomic_store_explicit(&r->plan_on, false, memory_order_relaxed);
    resid_each(r, forget, NULL);
    shim_resid_plan_free(r->plan);
    free(r->plan_units);
    free(r->plan_order);
    r->plan = NULL;
    r->plan_units = NULL;
    r->plan_order = NULL;
    r->plan_npos = 0;
    r->plan_active = false;
}

bool shim_resid_plan_withdraw(const char *why)
{
    struct resid_ctx *r = resid_primary();
    bool had = false;
    if (r && atomic_load_explicit(&r->plan_on, memory_order_relaxed)) {
        pthread_mutex_lock(&r->lock);
        had = r->plan != NULL;
        if (had && why)
            shim_log(SHIM_LOG_INFO, "planner: plan withdrawn (%s): moves are reactive again", why);
        withdraw(r);
        pthread_mutex_unlock(&r->lock);
    }
    return had;
}

/* The totals a plan_step record counts from (lock held). */
static struct resid_plan_mark mark_now(struct resid_ctx *r)
{
    return (struct resid_plan_mark){r->planned, r->bytes_out, r->bytes_in, r->stall_ns};
}

/* The plan record of p, installed now (lock held). */
static void trace_plan(const struct shim_resid_plan *p)
{
    struct shim_trace_plan rec = {
        .first_seq = atomic_load_explicit(&shim.launch_seq, memory_order_relaxed),
        .model_step = p->model_step,
        .model_first_seq = p->model_first_seq,
        .step_len = p->step_len,
        .budget_bytes = p->budget,
        .predicted_peak_bytes = p->predicted_peak,
        .native_peak_bytes = p->native_peak,
        .floor_bytes = p->floor,
        .native_us = p->native_us,
        .predicted_us = p->predicted_us,
        .stall_us = p->stall_us,
        .bound_us = p->native_us + p->bound_us, /* the plan's bound is of the stall */
        .bytes_to_host = p->bytes_to_host,
        .bytes_to_device = p->bytes_to_device,
        .evictions = p->evictions,
        .prefetches = p->prefetches,
        .feasible = p->feasible,
        .slab_max_bytes = shim_resid_slab_max(),
        .remap_us = p->remap_us,
    };
    shim_trace_plan(&rec);
}

void shim_resid_plan_step_closed(uint64_t step, uint64_t first_seq)
{
    struct resid_ctx *r = resid_primary();
    if (!r || !atomic_load_explicit(&r->plan_on, memory_order_relaxed))
        return;
    pthread_mutex_lock(&r->lock);
    struct resid_plan_mark now = mark_now(r), *was = &r->plan_mark;
    if (r->plan_active) {
        struct shim_trace_plan_step rec = {
            .step = step,
            .first_seq = first_seq,
            .evictions = now.planned.evictions - was->planned.evictions,
            .prefetches = now.planned.prefetches - was->planned.prefetches,
            .missing = now.planned.missing - was->planned.missing,
            .departures = now.planned.departures - was->planned.departures,
            .reactive_evictions = now.planned.reactive - was->planned.reactive,
            .bytes_to_host = now.bytes_out - was->bytes_out,
            .bytes_to_device = now.bytes_in - was->bytes_in,
            .stall_ns = now.stall_ns - was->stall_ns,
        };
        shim_trace_plan_step(&rec);
    }
    *was = now;
    pthread_mutex_unlock(&r->lock);
}

void shim_resid_plan_install(struct shim_resid_plan *p)
{
    uint32_t *order = malloc((p->nallocs + 1) * sizeof *order);
    struct resid_unit **units = calloc(p->nallocs + 1, sizeof *units);
    if (!order || !units) {
        free(order);
        free(units);
        shim_resid_plan_free(p);
        SHIM_LOG_ONCE(SHIM_LOG_WARN, "planner: out of memory installing the plan");
        return;
    }
    uint32_t npos = 0;
    for (uint32_t i = 0; i < p->nallocs; i++)
        if (positional(&p->keys[i]))
            order[npos++] = i;
    qsort_r(order, npos, sizeof *order, by_key, p->keys);
    struct resid_ctx *r = resid_primary();
    if (!r || shim_resid_several()) { /* a second device started meanwhile */
        free(order);
        free(units);
        shim_resid_plan_free(p);
        return;
    }
    pthread_mutex_lock(&r->lock);
    withdraw(r);
    if (shim_steps_step_len(&shim.steps) !=
        p->step_len) { /* the step changed while it was planned */
        pthread_mutex_unlock(&r->lock);
        free(order);
        free(units);
        shim_resid_plan_free(p);
        return;
    }
    r->plan = p;
    r->plan_native_us = p->native_us;
    r->plan_predicted_us = p->predicted_us;
    r->plan_units = units;
    r->plan_order = order;
    r->plan_npos = npos;
    for (uint32_t a = 0; a < p->nallocs; a++) {
        const struct shim_resid_plan_key *k = &p->keys[a];
        struct resid_unit *u = k->by_id && k->movable ? resid_find(r, k->id) : NULL;
        if (u && !u->slab)
            bind(r, u, a);
    }
    r->plan_armed_first = shim_steps_first_seq(&shim.steps);
    r->plan_active = false;
    r->plan_mark = mark_now(r); /* its first step counts from here */
    trace_plan(p);
    atomic_store_explicit(&r->plan_on, true, memory_order_relaxed);
    pthread_mutex_unlock(&r->lock);
}

/* Counts a planned move that could not be made, and says why at debug level. */
static void missed(struct resid_ctx *r, const char *what, uint32_t a, uint64_t pos,
                   const struct resid_unit *u)
{
    r->planned.missing++;
    shim_log(SHIM_LOG_DEBUG, "planner: %s of allocation %u before launch %llu of the step: %s",
             what, a, (unsigned long long)pos,
             !u         ? "not found"
             : u->move  ? "moving"
             : u->pins  ? "in use"
             : u->graph ? "captured"
             : u->held  ? "exported"
                        : resid_state_name(u->state));
}

/* One planned eviction of allocation a. */
static void evict(struct resid_ctx *r, uint32_t a, uint64_t pos)
{
    struct resid_unit *u = r->plan_units[a];
    struct resid_cause why = {SHIM_REASON_PLANNED_EVICT, NULL, 0, UINT64_MAX};
    if (u && u->state == SHIM_RS_DEVICE && resid_evict(r, u, &why) == 0) {
        r->planned.evictions++;
        u->plan_out = true;
    } else if (!u || u->state == SHIM_RS_DEVICE) {
        missed(r, "eviction", a, pos, u);
    }
}

/* One planned prefetch of allocation a: its eviction first completes (it must, to restore).
   The lock may drop meanwhile (waits for moves or room): the unit is held (prefetching) so
   that a free of it waits, and the plan may be withdrawn: only u is used after. */
static void prefetch(struct resid_ctx *r, uint32_t a, uint64_t pos)
{
    struct resid_unit *u = r->plan_units[a];
    if (!u || u->prefetching) {
        if (!u)
            missed(r, "prefetch", a, pos, u);
        return;
    }
    u->prefetching = true;
    if (u->state == SHIM_RS_EVICTING && u->move)
        resid_move_poll(r, u->move, true);
    struct resid_cause why = {SHIM_REASON_PREFETCH, NULL, 0, UINT64_MAX};
    if (u->state == SHIM_RS_HOST && resid_restore(r, u, &why) == 0) {
        r->planned.prefetches++;
        u->plan_out = false;
    } else if (u->state != SHIM_RS_DEVICE) {
        missed(r, "prefetch", a, pos, u);
    }
    u->prefetching = false;
    pthread_cond_broadcast(&r->prefetched);
}

void resid_plan_advance(struct resid_ctx *r, uint64_t next)
{
    struct shim_resid_plan *p = r->plan;
    if (!p)
        return;
    uint64_t first = shim_steps_first_seq(&shim.steps), len = p->step_len;
    if (shim_steps_step_len(&shim.steps) != len)
        return; /* not in the steady state it was made for: the step detector withdraws it */
    if (!r->plan_active) {
        if (first == r->plan_armed_first)
            return; /* from the next step boundary */
        r->plan_active = true;
        r->plan_done_seq = first;
    }
    if (next + 1 > r->plan_done_seq + len) /* at most one step of catching up */
        r->plan_done_seq = next + 1 - len;
    /* Claimed before it is applied: the lock may drop in a move, and another thread's launch
       must not apply the same position again. */
    while (r->plan == p && r->plan_done_seq <= next) {
        uint64_t pos = position(r->plan_done_seq++, first, len);
        for (uint32_t i = p->act_first[pos]; r->plan == p && i < p->act_first[pos + 1]; i++) {
            struct shim_resid_plan_act act = p->act[i];
            if (act.kind == SHIM_RESID_PLAN_EVICT)
                evict(r, act.alloc, pos);
            else
                prefetch(r, act.alloc, pos);
        }
    }
}

void shim_resid_plan_tick(void)
{
    struct resid_ctx *r = resid_primary();
    if (r) {
        pthread_mutex_lock(&r->lock);
        resid_plan_advance(r, atomic_load_explicit(&shim.launch_seq, memory_order_relaxed));
        pthread_mutex_unlock(&r->lock);
    }
}

/* The accessors below read the primary manager without its lock: the plan's recording calls them
   while a manager's lock is held (an allocation's). */
uint64_t shim_resid_plan_budget(void)
{
    const struct resid_ctx *c = resid_primary();
    return c && c->budget > c->slack ? c->budget - c->slack : 0;
}

uint64_t shim_resid_slab_max(void)
{
    const struct resid_ctx *c = resid_primary();
    return c ? resid_slab_max(c) : 0;
}

uint64_t shim_resid_granularity(void)
{
    const struct resid_ctx *c = resid_primary();
    return c ? c->gran : 0;
}

bool shim_resid_started(void)
{
    struct resid_ctx *c = resid_primary();
    return c && atomic_load_explicit(&c->on, memory_order_acquire);
}

bool shim_resid_plan_on(void)
{
    struct resid_ctx *c = resid_primary();
    return c && atomic_load_explicit(&c->plan_on, memory_order_relaxed);
}
