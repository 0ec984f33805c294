/* shim_resid_search.c — making room within the budget: the search that gathers a unit's device
 * chunks, evicting what it must.
 *
 * Making room tries, in order: a free chunk of the size, chunks freed in stream
 * order on the same stream, creating within the budget, stream-ordered frees
 * that have completed, moves in flight, and new
 * evictions (the policy's best victim first). Every loop here is bounded: a
 * unit whose eviction fails twice in one search is skipped for the rest of it,
 * and a search makes at most a fixed number of rounds per unit. */
#include "shim_resid_budget.h"

#include <stdlib.h>
#include <time.h>

#define EVICT_TRIES      2       /* failed eviction starts of one unit before a search skips it */
#define ROUNDS_PER_UNIT  4       /* bound on the rounds of one search, per unit (plus a few) */
#define PIN_PAUSE_NS     50000   /* first pause while every victim is pinned or moving, doubling */
#define PIN_PAUSE_MAX_NS 2000000 /* up to this */
/* Waiting for submissions in progress and moves in flight to let their units go, in one search
   for room, at most (wall time, as the other waits of the residency manager): what they hold
   is transient, so a search reports out of memory only after it; a program whose threads wait
   on each other through it gets its answer after this long. */
#define PIN_WAIT_MAX_NS (30ull * 1000000000ull)
/* The same wait, for a new managed allocation that may be placed on the host instead
   (resid_place_on_host): after this long of waiting the budget is contended, not briefly held
   (on a real driver a pin lasts a submission, microseconds; a move a copy, milliseconds), and
   the allocation goes to host memory rather than keep its thread waiting. */
#define PIN_WAIT_HOST_NS (1ull * 1000000000ull)

/* The calling thread's search for room: when it began waiting for pins or moves (0: not yet),
   and its next pause; whether the allocation it searches for may be placed on the host (the
   shorter wait). Per thread: several threads search at once, each with the lock dropped while
   it pauses. */
static __thread uint64_t wait_since_ns, pause_ns;
static __thread bool host_fallback;

void resid_search_host_fallback(bool on)
{
    host_fallback = on;
}

/* Begins a search for room (lock held): its out-of-memory facts and its waits start afresh. */
static void search_begin(struct resid_ctx *r)
{
    r->epoch++;
    r->oom = (struct resid_oom){0};
    wait_since_ns = pause_ns = 0;
}

/* Device chunks of stream-ordered frees on `stream`, reusable at once in that stream's order:
   whole chunks that fit in what is still wanted. How many granules it took. */
static uint32_t take_ordered(struct resid_ctx *r, struct resid_gather *t, CUstream stream)
{
    uint32_t before = t->g;
    for (struct resid_pending *p = r->pending; p && t->g < t->n; p = p->next) {
        struct resid_unit *u = p->unit;
        if (!u || p->stream != stream || u->state != SHIM_RS_DEVICE || u->move)
            continue;
        for (uint32_t i = 0; i < u->n && t->g < t->n; i++) {
            if (u->backing[i] && u->backing[i]->grans <= t->n - t->g) {
                resid_gather_add(t, u->backing[i]);
                u->backing[i] = NULL; /* stays mapped at u->va until the free completes */
            }
        }
    }
    return t->g - before;
}

struct victim_search {
    struct resid_unit *best;
    uint64_t best_score, best_next, now;
};

static void consider(struct resid_ctx *r, struct resid_unit *u, void *arg)
{
    struct victim_search *s = arg;
    if (u->state == SHIM_RS_EVICTING || u->state == SHIM_RS_RESTORING)
        r->oom.moving++;
    if (u->state != SHIM_RS_DEVICE || u->skip_epoch == r->epoch)
        return;
    if (u->pins || u->move || resid_unmovable(u)) {
        if (u->pins > resid_pinned_here(u)) /* pinned by another thread's submission */
            r->oom.pinned++;
        else if (u->move)
            r->oom.moving++;
        else if (u->held)
            r->oom.held++;
        else if (u->graph)
            r->oom.graph++;
        else
            r->oom.mine++;
        return;
    }
    if (resid_slab_reclaim(r, u)) /* an empty slab: room without a copy */
        return;
    uint64_t next = 0, score = r->policy->score(u, s->now, &next);
    /* A tie goes to the newer unit (the larger id): long-lived memory is made first and used
       again; and the choice does not depend on the order the table is walked in. */
    if (!s->best || score > s->best_score || (score == s->best_score && u->id > s->best->id)) {
        s->best = u;
        s->best_score = score;
        s->best_next = next;
    }
}

/* Starts one eviction; true if one started (or an empty slab was released). */
static bool evict_one(struct resid_ctx *r)
{
    if (!r->can_evict || r->sticky || r->stepped_aside)
        return false;
    for (;;) {
        struct victim_search s = {NULL, 0, 0,
                                  atomic_load_explicit(&shim.launch_seq, memory_order_relaxed)};
        uint64_t before = r->dev_bytes;
        r->oom.pinned = r->oom.moving = r->oom.graph = r->oom.held = 0;
        resid_each(r, consider, &s);
        if (r->dev_bytes < before || r->nfree_dev)
            return true;
        if (!s.best)
            return false;
        struct resid_cause why = {SHIM_REASON_BUDGET, NULL, s.best_score, s.best_next};
        if (resid_evict(r, s.best, &why) == 0) {
            r->planned.reactive += r->plan_active;
            return true;
        }
        /* A movable victim that would not move: a driver call failed (or host_budget is
           spent), which the out-of-memory verdict must know (shim_resid_alloc steps aside). */
        if (!(r->host_bytes + r->gran > r->host_budget && !r->nfree_host))
            r->oom.driver_failed = true;
        struct resid_unit *u = s.best; /* a transient failure gets one more try */
        if (u->fail_epoch != r->epoch) {
            u->fail_epoch = r->epoch;
            u->fails = 0;
        }
        if (++u->fails >= EVICT_TRIES)
            u->skip_epoch = r->epoch;
    }
}

/* One step towards room: true if something changed (retry), false if nothing can move. */
static bool make_progress(struct resid_ctx *r)
{
    if (resid_reap(r, false))
        return true;
    /* Spare ranges are free memory kept mapped: unmap one before waiting or evicting. */
    if (r->spares && resid_spare_drop(r, 1))
        return true;
    if (resid_slab_release_empty(r)) /* an empty slab kept mapped: room without a copy */
        return true;
    /* Moves already done give their room back first, whether or not the mover thread has
       polled them yet: waiting for the oldest move instead (a copy back still running) would
       make the time this costs depend on the mover's timing. */
    if (resid_complete_done(r) > 0)
        return true;
    if (resid_wait_oldest(r))
        return true;
    if (r->pending && resid_reap(r, true))
        return true;
    if (evict_one(r))
        return true;
    /* An operation making its own units resident holds pins while it looks: if it waited for
       others' pins, two of them could wait for each other. It reads through the host link
       instead (or fails cleanly), and lets its pins go; only allocations wait. */
    if ((!r->oom.pinned && !r->oom.moving) || resid_in_operation())
        return false;
    /* Units pinned by operations in progress on other threads come free when their driver
       call returns — at once for a launch, after the copy for a synchronous copy — and moving
       ones when their move ends: a transient state, not a full budget. Let them finish, then
       look again, backing off (bounded: PIN_WAIT_MAX_NS of wall time in all). */
    uint64_t now = resid_now_ns();
    if (!wait_since_ns)
        wait_since_ns = now;
    if (now - wait_since_ns >= (host_fallback ? PIN_WAIT_HOST_NS : PIN_WAIT_MAX_NS))
        return false;
    uint64_t ns = pause_ns < PIN_PAUSE_NS ? PIN_PAUSE_NS : pause_ns;
    ns = ns > PIN_PAUSE_MAX_NS ? PIN_PAUSE_MAX_NS : ns;
    pause_ns = 2 * ns;
    r->oom.paused_ns += ns;
    pthread_mutex_unlock(&r->lock);
    struct timespec pause = {0, (long)ns};
    nanosleep(&pause, NULL);
    pthread_mutex_lock(&r->lock);
    return true;
}

/* The most rounds a search for room may take: a few per unit, and the pauses of its wait. */
static uint64_t round_limit(struct resid_ctx *r)
{
    return ROUNDS_PER_UNIT * (resid_nunits(r) + 4) + PIN_WAIT_MAX_NS / PIN_PAUSE_MAX_NS + 64;
}

int resid_take_device(struct resid_ctx *r, struct resid_chunk **out, uint32_t n, CUstream stream,
                      bool ordered, bool *reused)
{
    struct resid_gather t = {out, n, 0, 0};
    bool may_create = true;
    search_begin(r);
    for (uint64_t round = 0; round < round_limit(r); round++) {
        struct resid_chunk *c;
        if (t.g < n &&
            (c = resid_pool_pop(r, false, n - t.g, false)) != NULL) /* the size the step used */
            resid_gather_add(&t, c);
        if (t.g < n && ordered && take_ordered(r, &t, stream) && reused)
            *reused = true;
        /* Pieces of other sizes already made: a handle more to remap at each move of the unit,
           where a chunk of its own would cost a release and a creation now (on a real driver
           about as much host time as ten remaps of a handle, tests/bench/RESULTS-gpu.md). */
        while (t.g < n && (c = resid_pool_pop(r, false, n - t.g, true)) != NULL)
            resid_gather_add(&t, c);
        while (t.g < n && may_create)
            if (!resid_pool_create_device(r, &t))
                may_create = false; /* the budget is spent, or the device is fuller than it says */
        if (t.g == n)
            return 0;
        if (!make_progress(r))
            break;
        may_create = true;
    }
    resid_give_back(r, out, t.k);
    r->oom.host_full = r->host_bytes + r->gran > r->host_budget && !r->nfree_host;
    return -1;
}

int resid_room_for_unmanaged(struct resid_ctx *r, uint64_t bytes)
{
    search_begin(r);
    for (uint64_t round = 0; r->dev_bytes + bytes > r->budget; round++) {
        if (resid_trim_device(r, r->dev_bytes + bytes - r->budget))
            continue;
        if (round >= round_limit(r) || !make_progress(r))
            return -1;
    }
    return 0;
}

bool resid_shed(struct resid_ctx *r, uint64_t bytes)
{
    if (resid_trim_device(r, bytes))
        return true;
    search_begin(r);
    for (uint64_t round = 0; round < round_limit(r); round++) {
        if (!make_progress(r))
            return false;
        if (resid_trim_device(r, bytes))
            return true;
    }
    return false;
}
