/* shim_resid_chunks.c — physical chunk pools, the budget, and making room.
 *
 * Creating physical memory per move is far too slow, so chunks are pooled:
 * every chunk the shim creates stays mapped at its own "arena" address (for
 * the copies) and goes back to its pool when the range it backed no longer
 * needs it. Device chunks count against the budget from creation to release;
 * host chunks against the host budget.
 *
 * A chunk is one physical handle, as large as the unit it was made for: on a
 * real driver a remap's host time grows with the handles it maps, not the
 * bytes (PyTorch's expandable segments note ten 2 MiB handles cost about ten
 * times one 20 MiB handle; tests/bench/RESULTS-gpu.md), so a unit of 32
 * granules moved as one handle costs one unmap, one map and one set-access
 * where it cost 32 handles' worth. The pools are kept by size (steps repeat
 * their sizes); a size the pool lacks is created, after releasing idle chunks
 * of other sizes when the budget needs their room, and pieces of other sizes
 * are used only when neither can be had.
 *
 * Making room tries, in order: a free chunk of the size, chunks freed in stream
 * order on the same stream, creating within the budget, stream-ordered frees
 * that have completed, moves in flight, and new
 * evictions (the policy's best victim first). Every loop here is bounded: a
 * unit whose eviction fails twice in one search is skipped for the rest of it,
 * and a search makes at most a fixed number of rounds per unit. */
#include "shim_resid_internal.h"

#include <stdlib.h>
#include <time.h>

#define ARENA_SLOTS      512     /* chunks per arena reservation */
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

static int more_slots(struct resid_ctx *r)
{
    CUdeviceptr base = 0;
    uint64_t size = ARENA_SLOTS * r->gran;
    if (r->nslots + ARENA_SLOTS > r->slot_cap) {
        size_t cap = r->slot_cap + 4 * ARENA_SLOTS;
        CUdeviceptr *v = realloc(r->slots, cap * sizeof *v);
        if (!v)
            return -1;
        r->slots = v;
        r->slot_cap = cap;
    }
    CUresult rc = r->drv->reserve(&base, size, r->gran);
    if (rc != CUDA_SUCCESS) {
        resid_driver_failed(r, rc);
        r->oom.driver_failed = true;
        return -1;
    }
    for (size_t i = ARENA_SLOTS; i-- > 0;)
        r->slots[r->nslots++] = base + i * r->gran;
    return 0;
}

int resid_map_calls(const struct resid_driver *drv, uint64_t gran, CUdevice dev, CUdeviceptr va,
                    struct resid_chunk *const *c, uint32_t n, CUresult *rc)
{
    uint64_t off = 0;
    *rc = CUDA_SUCCESS;
    for (uint32_t i = 0; i < n && c[i]; i++) {
        uint64_t len = (uint64_t)c[i]->grans * gran;
        if ((*rc = drv->map(va + off, len, c[i]->handle)) != CUDA_SUCCESS)
            break;
        off += len;
    }
    if (*rc == CUDA_SUCCESS && off && (*rc = drv->set_access(va, off, dev)) == CUDA_SUCCESS)
        return 0;
    if (*rc == CUDA_SUCCESS)
        *rc = CUDA_ERROR_INVALID_VALUE; /* nothing to map */
    if (off > 0 && drv->unmap(va, off) != CUDA_SUCCESS)
        shim_log(SHIM_LOG_ERROR, "could not undo a partial mapping at 0x%llx",
                 (unsigned long long)va);
    return -1;
}

int resid_map(struct resid_ctx *r, CUdeviceptr va, struct resid_chunk **c, uint32_t n)
{
    CUresult rc;
    if (resid_map_calls(r->drv, r->gran, r->device, va, c, n, &rc) == 0)
        return 0;
    resid_driver_failed(r, rc);
    r->oom.driver_failed = true;
    return -1;
}

/* A new chunk of grans granules (lock held); NULL on failure, nothing changed. One granule
   takes an arena slot; a larger chunk reserves a range of its own (a cheap call, made only when
   a chunk is created, as its mapping there is). */
static struct resid_chunk *chunk_create(struct resid_ctx *r, bool host, uint32_t grans)
{
    struct resid_chunk *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->host = host;
    c->grans = grans;
    uint64_t bytes = resid_chunk_bytes(r, c);
    CUresult rc;
    if (host && r->unmapped) {
        void *p = NULL;
        if ((rc = r->drv->host_alloc(&p, bytes)) != CUDA_SUCCESS) {
            resid_driver_failed(r, rc);
            r->oom.driver_failed = true;
            free(c);
            return NULL;
        }
        c->addr = (CUdeviceptr)(uintptr_t)p;
        return c;
    }
    if (grans == 1 && r->nslots == 0 && more_slots(r) != 0) {
        free(c);
        return NULL;
    }
    if (grans > 1) {
        if ((rc = r->drv->reserve(&c->addr, bytes, r->gran)) != CUDA_SUCCESS) {
            resid_driver_failed(r, rc);
            r->oom.driver_failed = true;
            free(c);
            return NULL;
        }
        c->own_range = true;
    }
    rc = r->drv->create(&c->handle, bytes, r->device, host, r->host_location);
    if (rc != CUDA_SUCCESS) {
        resid_driver_failed(r, rc);
        r->oom.driver_failed = true;
        if (c->own_range)
            r->drv->address_free(c->addr, bytes);
        free(c);
        return NULL;
    }
    if (!c->own_range)
        c->addr = r->slots[--r->nslots];
    if (resid_map(r, c->addr, &c, 1) != 0) {
        if (c->own_range)
            r->drv->address_free(c->addr, bytes);
        else
            r->slots[r->nslots++] = c->addr;
        r->drv->release(c->handle);
        free(c);
        return NULL;
    }
    r->handles_created++;
    return c;
}

/* Gives a chunk back to the driver (lock held). */
static void chunk_destroy(struct resid_ctx *r, struct resid_chunk *c)
{
    uint64_t bytes = resid_chunk_bytes(r, c);
    resid_fence_drop(r, c->fence);
    if (!c->handle) {
        r->drv->host_free((void *)(uintptr_t)c->addr);
    } else {
        if (r->drv->unmap(c->addr, bytes) == CUDA_SUCCESS) {
            if (c->own_range)
                r->drv->address_free(c->addr, bytes);
            else
                r->slots[r->nslots++] = c->addr; /* the array has room: slots only come back */
        }
        r->drv->release(c->handle);
        r->handles_released++;
    }
    if (c->host)
        r->host_bytes -= bytes;
    else
        r->dev_bytes -= bytes;
    free(c);
}

void resid_give_back(struct resid_ctx *r, struct resid_chunk **c, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (!c[i])
            continue;
        struct resid_chunk **pool = c[i]->host ? &r->free_host : &r->free_dev;
        c[i]->next = *pool;
        *pool = c[i];
        *(c[i]->host ? &r->nfree_host : &r->nfree_dev) += c[i]->grans;
        c[i] = NULL;
    }
}

void resid_set_aside(struct resid_ctx *r, struct resid_chunk **c, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (!c[i])
            continue;
        r->aside_bytes += resid_chunk_bytes(r, c[i]); /* still counted in dev_bytes or host_bytes */
        c[i]->next = r->aside;
        r->aside = c[i];
        c[i] = NULL;
    }
    SHIM_LOG_ONCE(SHIM_LOG_WARN, "residency: a copy's end could not be known: its destination "
                                 "chunks are set aside, never reused");
}

/* Takes a free chunk out of its pool: one of exactly `grans` granules, or with `smaller` the
   largest one below that when there is none; NULL if none (lock held). */
static struct resid_chunk *pop(struct resid_ctx *r, bool host, uint32_t grans, bool smaller)
{
    struct resid_chunk **best = NULL;
    for (struct resid_chunk **l = host ? &r->free_host : &r->free_dev; *l; l = &(*l)->next) {
        uint32_t g = (*l)->grans;
        if (g == grans) {
            best = l;
            break;
        }
        if (smaller && g < grans && (!best || g > (*best)->grans))
            best = l;
    }
    if (!best)
        return NULL;
    struct resid_chunk *c = *best;
    *best = c->next;
    *(host ? &r->nfree_host : &r->nfree_dev) -= c->grans;
    return c;
}

/* Releases free chunks of the pool whose size is not `keep` granules (and that no copy may
   still read) until `grans` granules went back to the driver; how many did (lock held). The
   pools keep the sizes the step uses: a chunk of another size is worth less than the room. */
static uint64_t release_other_sizes(struct resid_ctx *r, bool host, uint32_t keep, uint64_t grans)
{
    uint64_t done = 0;
    for (struct resid_chunk **l = host ? &r->free_host : &r->free_dev; *l && done < grans;) {
        struct resid_chunk *c = *l;
        if (c->grans == keep || (c->fence && r->drv->query(c->fence->event) != CUDA_SUCCESS)) {
            l = &c->next;
            continue;
        }
        *l = c->next;
        *(host ? &r->nfree_host : &r->nfree_dev) -= c->grans;
        done += c->grans;
        chunk_destroy(r, c);
    }
    return done;
}

struct resid_fence *resid_take_fences(struct resid_ctx *r, struct resid_chunk **c, uint32_t n)
{
    struct resid_fence *latest = NULL;
    for (uint32_t i = 0; i < n; i++) {
        if (!c[i] || !c[i]->fence)
            continue;
        if (!latest || c[i]->fence->seq > latest->seq)
            latest = c[i]->fence;
    }
    resid_fence_ref(latest);
    for (uint32_t i = 0; i < n; i++) {
        if (c[i]) {
            resid_fence_drop(r, c[i]->fence);
            c[i]->fence = NULL;
        }
    }
    return latest;
}

uint64_t resid_trim_device(struct resid_ctx *r, uint64_t bytes)
{
    uint64_t want = bytes / r->gran + (bytes % r->gran != 0);
    if (r->nfree_dev < want) /* spare ranges are pooled chunks too */
        resid_spare_drop(r, want - r->nfree_dev > UINT32_MAX ? UINT32_MAX
                                                             : (uint32_t)(want - r->nfree_dev));
    /* A chunk an eviction's copy may still read (a cancelled one, say) stays pooled. */
    return release_other_sizes(r, false, 0, want) * r->gran;
}

/* What a take has gathered: chunks in out[0..k), covering g of the n granules wanted. */
struct gather {
    struct resid_chunk **out;
    uint32_t n, k, g;
};

static void gather_add(struct gather *t, struct resid_chunk *c)
{
    t->out[t->k++] = c;
    t->g += c->grans;
}

/* Device chunks of stream-ordered frees on `stream`, reusable at once in that stream's order:
   whole chunks that fit in what is still wanted. How many granules it took. */
static uint32_t take_ordered(struct resid_ctx *r, struct gather *t, CUstream stream)
{
    uint32_t before = t->g;
    for (struct resid_pending *p = r->pending; p && t->g < t->n; p = p->next) {
        struct resid_unit *u = p->unit;
        if (!u || p->stream != stream || u->state != SHIM_RS_DEVICE || u->move)
            continue;
        for (uint32_t i = 0; i < u->n && t->g < t->n; i++) {
            if (u->backing[i] && u->backing[i]->grans <= t->n - t->g) {
                gather_add(t, u->backing[i]);
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
    if (!s->best || score > s->best_score) {
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
    return ROUNDS_PER_UNIT * (r->nunits + 4) + PIN_WAIT_MAX_NS / PIN_PAUSE_MAX_NS + 64;
}

/* Whether grans more device granules fit in the budget now. */
static bool device_fits(const struct resid_ctx *r, uint32_t grans)
{
    return r->over_budget || r->dev_bytes + (uint64_t)grans * r->gran + r->slack <= r->budget;
}

/* Creates a device chunk for the rest of t within the budget: one of exactly that size, after
   releasing pooled chunks of other sizes if the budget needs their room (a move then remaps one
   handle for good, where pieces would cost a remap each at every move); one granule at a time
   only if the driver refuses the large one. False when the budget or the driver allows nothing
   more (lock held). */
static bool create_device(struct resid_ctx *r, struct gather *t)
{
    uint32_t need = t->n - t->g;
    if (!device_fits(r, need) && r->nfree_dev) {
        uint64_t over = r->dev_bytes + (uint64_t)need * r->gran + r->slack - r->budget;
        release_other_sizes(r, false, need, over / r->gran + (over % r->gran != 0));
    }
    struct resid_chunk *c;
    if (!device_fits(r, need))
        return false;
    if ((c = chunk_create(r, false, need)) != NULL) {
        resid_dev_grow(r, resid_chunk_bytes(r, c));
        gather_add(t, c);
        return true;
    }
    bool any = false; /* the driver refused a large one: one granule at a time */
    while (need > 1 && t->g < t->n && device_fits(r, 1) && (c = chunk_create(r, false, 1))) {
        resid_dev_grow(r, r->gran);
        gather_add(t, c);
        any = true;
    }
    return any;
}

int resid_take_device(struct resid_ctx *r, struct resid_chunk **out, uint32_t n, CUstream stream,
                      bool ordered, bool *reused)
{
    struct gather t = {out, n, 0, 0};
    bool may_create = true;
    search_begin(r);
    for (uint64_t round = 0; round < round_limit(r); round++) {
        struct resid_chunk *c;
        if (t.g < n && (c = pop(r, false, n - t.g, false)) != NULL) /* the size the step used */
            gather_add(&t, c);
        if (t.g < n && ordered && take_ordered(r, &t, stream) && reused)
            *reused = true;
        /* Pieces of other sizes already made: a handle more to remap at each move of the unit,
           where a chunk of its own would cost a release and a creation now (on a real driver
           about as much host time as ten remaps of a handle, tests/bench/RESULTS-gpu.md). */
        while (t.g < n && (c = pop(r, false, n - t.g, true)) != NULL)
            gather_add(&t, c);
        while (t.g < n && may_create)
            if (!create_device(r, &t))
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

/* Whether grans more host granules fit in the host budget now. */
static bool host_fits(const struct resid_ctx *r, uint32_t grans)
{
    return r->host_bytes + (uint64_t)grans * r->gran <= r->host_budget;
}

/* A new host chunk of grans granules within the host budget (releasing pooled host chunks of
   other sizes if the host budget needs their room), or NULL (lock held). */
static struct resid_chunk *create_host(struct resid_ctx *r, uint32_t grans)
{
    if (!host_fits(r, grans) && r->nfree_host) {
        uint64_t over = r->host_bytes + (uint64_t)grans * r->gran - r->host_budget;
        release_other_sizes(r, true, grans, over / r->gran + (over % r->gran != 0));
    }
    struct resid_chunk *c = host_fits(r, grans) ? chunk_create(r, true, grans) : NULL;
    if (c)
        r->host_bytes += resid_chunk_bytes(r, c);
    return c;
}

int resid_take_host(struct resid_ctx *r, struct resid_chunk **out, uint32_t n)
{
    struct gather t = {out, n, 0, 0};
    struct resid_chunk *c;
    if ((c = pop(r, true, n, false)) != NULL || (c = create_host(r, n)) != NULL)
        gather_add(&t, c);
    while (t.g < n && (c = pop(r, true, n - t.g, true)) != NULL)
        gather_add(&t, c);
    while (t.g < n && (c = create_host(r, 1)) != NULL)
        gather_add(&t, c);
    if (t.g == n)
        return 0;
    if (!host_fits(r, 1))
        r->oom.host_full = true;
    resid_give_back(r, out, t.k);
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

/* Completes pending free *link (its event is done): the range or the member goes. */
static void finish_pending(struct resid_ctx *r, struct resid_pending **link)
{
    struct resid_pending *p = *link;
    *link = p->next;
    resid_event_put(r, p->event);
    if (p->unit) {
        resid_release(r, p->unit,
                      &(struct resid_cause){SHIM_REASON_FREED, p->stream, 0, UINT64_MAX});
    }
    if (p->member)
        resid_slab_free(r, p->member);
    free(p);
}

uint32_t resid_reap_oldest(struct resid_ctx *r)
{
    uint32_t n = 0;
    while (r->pending && !(r->pending->unit && r->pending->unit->move) &&
           r->drv->query(r->pending->event) == CUDA_SUCCESS) {
        finish_pending(r, &r->pending);
        n++;
    }
    return n;
}

bool resid_reap(struct resid_ctx *r, bool wait)
{
    bool any = false;
    for (struct resid_pending **l = &r->pending; *l;) {
        struct resid_unit *u = (*l)->unit;
        if ((!u || !u->move) && r->drv->query((*l)->event) == CUDA_SUCCESS) {
            finish_pending(r, l);
            any = true;
        } else {
            l = &(*l)->next;
        }
    }
    if (any || !wait || !r->pending)
        return any;
    struct resid_pending *p = r->pending;
    if (p->unit && p->unit->move) {
        resid_wait_move(r, p->unit, SHIM_REASON_BUDGET);
        return true;
    }
    CUevent e = p->event;
    uint64_t t0 = resid_now_ns();
    pthread_mutex_unlock(&r->lock);
    CUresult rc = r->drv->event_sync(e);
    pthread_mutex_lock(&r->lock);
    resid_stalled(r, t0, SHIM_REASON_BUDGET);
    resid_driver_failed(r, rc);
    if (rc == CUDA_SUCCESS && r->pending == p) {
        finish_pending(r, &r->pending);
        return true;
    }
    return rc == CUDA_SUCCESS;
}
