/* shim_resid_chunks.c — physical chunk pools, the budget, and making room.
 *
 * Creating physical memory per move is far too slow, so chunks are pooled:
 * every chunk the shim creates stays mapped at its own "arena" address (for
 * the copies) and goes back to its pool when the range it backed no longer
 * needs it. Device chunks count against the budget from creation to release;
 * host chunks against the host budget. Making room tries, in order: free pool
 * chunks, chunks freed in stream order on the same stream, creating within the
 * budget, stream-ordered frees that have completed, moves in flight, and new
 * evictions (the policy's best victim first). Every loop here is bounded: a
 * unit whose eviction fails twice in one search is skipped for the rest of it,
 * and a search makes at most a fixed number of rounds per unit. */
#include "shim_resid_internal.h"

#include <stdlib.h>
#include <time.h>

#define ARENA_SLOTS      512     /* chunks per arena reservation */
#define EVICT_TRIES      2       /* failed eviction starts of one unit before a search skips it */
#define ROUNDS_PER_UNIT  4       /* bound on the rounds of one search, per unit (plus a few) */
#define PIN_PAUSE_NS     50000   /* first pause while every victim is pinned, doubling */
#define PIN_PAUSE_MAX_NS 2000000 /* up to this */
#define PIN_WAIT_MAX_NS  2000000000 /* pauses for pinned units in one search, at most */

static int more_slots(void)
{
    CUdeviceptr base = 0;
    uint64_t size = ARENA_SLOTS * resid.gran;
    if (resid.nslots + ARENA_SLOTS > resid.slot_cap) {
        size_t cap = resid.slot_cap + 4 * ARENA_SLOTS;
        CUdeviceptr *v = realloc(resid.slots, cap * sizeof *v);
        if (!v)
            return -1;
        resid.slots = v;
        resid.slot_cap = cap;
    }
    CUresult rc = resid.drv->reserve(&base, size, resid.gran);
    if (rc != CUDA_SUCCESS) {
        resid_driver_failed(rc);
        return -1;
    }
    for (size_t i = ARENA_SLOTS; i-- > 0;)
        resid.slots[resid.nslots++] = base + i * resid.gran;
    return 0;
}

int resid_map(CUdeviceptr va, struct resid_chunk **c, uint32_t n)
{
    uint32_t i = 0;
    CUresult rc = CUDA_SUCCESS;
    for (; i < n; i++)
        if ((rc = resid.drv->map(va + i * resid.gran, resid.gran, c[i]->handle)) != CUDA_SUCCESS)
            break;
    if (i == n && (rc = resid.drv->set_access(va, n * resid.gran, resid.device)) == CUDA_SUCCESS)
        return 0;
    resid_driver_failed(rc);
    resid.oom.driver_failed = true;
    if (i > 0 && resid.drv->unmap(va, i * resid.gran) != CUDA_SUCCESS)
        shim_log(SHIM_LOG_ERROR, "could not undo a partial mapping at 0x%llx",
                 (unsigned long long)va);
    return -1;
}

/* A new chunk (lock held); NULL on failure, nothing changed. */
static struct resid_chunk *chunk_create(bool host)
{
    struct resid_chunk *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->host = host;
    CUresult rc;
    if (host && resid.unmapped) {
        void *p = NULL;
        if ((rc = resid.drv->host_alloc(&p, resid.gran)) != CUDA_SUCCESS) {
            resid.oom.driver_failed = true;
            free(c);
            return NULL;
        }
        c->addr = (CUdeviceptr)(uintptr_t)p;
        return c;
    }
    if (resid.nslots == 0 && more_slots() != 0) {
        free(c);
        return NULL;
    }
    rc = resid.drv->create(&c->handle, resid.gran, resid.device, host, resid.host_location);
    if (rc != CUDA_SUCCESS) {
        resid_driver_failed(rc);
        resid.oom.driver_failed = true;
        free(c);
        return NULL;
    }
    c->addr = resid.slots[--resid.nslots];
    if (resid_map(c->addr, &c, 1) != 0) {
        resid.slots[resid.nslots++] = c->addr;
        resid.drv->release(c->handle);
        free(c);
        return NULL;
    }
    return c;
}

/* Gives a chunk back to the driver (lock held). */
static void chunk_destroy(struct resid_chunk *c)
{
    resid_fence_drop(c->fence);
    if (!c->handle) {
        resid.drv->host_free((void *)(uintptr_t)c->addr);
    } else {
        if (resid.drv->unmap(c->addr, resid.gran) == CUDA_SUCCESS)
            resid.slots[resid.nslots++] = c->addr; /* the array has room: slots only come back */
        resid.drv->release(c->handle);
    }
    if (c->host)
        resid.host_bytes -= resid.gran;
    else
        resid.dev_bytes -= resid.gran;
    free(c);
}

void resid_give_back(struct resid_chunk **c, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (!c[i])
            continue;
        struct resid_chunk **pool = c[i]->host ? &resid.free_host : &resid.free_dev;
        c[i]->next = *pool;
        *pool = c[i];
        (*(c[i]->host ? &resid.nfree_host : &resid.nfree_dev))++;
        c[i] = NULL;
    }
}

void resid_set_aside(struct resid_chunk **c, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (!c[i])
            continue;
        resid.aside_bytes += resid.gran; /* still counted in dev_bytes or host_bytes */
        c[i]->next = resid.aside;
        resid.aside = c[i];
        c[i] = NULL;
    }
    SHIM_LOG_ONCE(SHIM_LOG_WARN, "residency: a copy's end could not be known: its destination "
                                 "chunks are set aside, never reused");
}

static struct resid_chunk *pop(bool host)
{
    struct resid_chunk **pool = host ? &resid.free_host : &resid.free_dev;
    struct resid_chunk *c = *pool;
    if (c) {
        *pool = c->next;
        (*(host ? &resid.nfree_host : &resid.nfree_dev))--;
    }
    return c;
}

struct resid_fence *resid_take_fences(struct resid_chunk **c, uint32_t n)
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
            resid_fence_drop(c[i]->fence);
            c[i]->fence = NULL;
        }
    }
    return latest;
}

uint64_t resid_trim_device(uint64_t bytes)
{
    uint64_t done = 0;
    uint64_t want = bytes / resid.gran + (bytes % resid.gran != 0);
    if (resid.nfree_dev < want) /* spare ranges are pooled chunks too */
        resid_spare_drop(want - resid.nfree_dev > UINT32_MAX ? UINT32_MAX
                                                             : (uint32_t)(want - resid.nfree_dev));
    struct resid_chunk *c, *busy = NULL;
    while (done < bytes && (c = pop(false)) != NULL) {
        /* A chunk an eviction's copy may still read (a cancelled one, say) stays pooled. */
        if (c->fence && resid.drv->query(c->fence->event) != CUDA_SUCCESS) {
            c->next = busy;
            busy = c;
            continue;
        }
        chunk_destroy(c);
        done += resid.gran;
    }
    while ((c = busy) != NULL) {
        busy = c->next;
        resid_give_back(&c, 1);
    }
    return done;
}

/* Device chunks of stream-ordered frees on `stream`, reusable at once in that stream's order. */
static uint32_t take_ordered(struct resid_chunk **out, uint32_t want, CUstream stream)
{
    uint32_t got = 0;
    for (struct resid_pending *p = resid.pending; p && got < want; p = p->next) {
        struct resid_unit *u = p->unit;
        if (!u || p->stream != stream || u->state != RESID_DEVICE || u->move)
            continue;
        for (uint32_t i = 0; i < u->n && got < want; i++) {
            if (u->backing[i]) {
                out[got++] = u->backing[i];
                u->backing[i] = NULL; /* stays mapped at u->va until the free completes */
            }
        }
    }
    return got;
}

struct victim_search {
    struct resid_unit *best;
    uint64_t best_score, best_next, now;
};

static void consider(struct resid_unit *u, void *ctx)
{
    struct victim_search *s = ctx;
    if (u->state == RESID_EVICTING || u->state == RESID_RESTORING)
        resid.oom.moving++;
    if (u->state != RESID_DEVICE || u->skip_epoch == resid.epoch)
        return;
    if (u->pins || u->move || resid_unmovable(u)) {
        if (u->pins > resid_pinned_here(u)) /* pinned by another thread's submission */
            resid.oom.pinned++;
        else if (u->move)
            resid.oom.moving++;
        else if (u->held)
            resid.oom.held++;
        else if (u->graph)
            resid.oom.graph++;
        else
            resid.oom.mine++;
        return;
    }
    if (resid_slab_reclaim(u)) /* an empty slab: room without a copy */
        return;
    uint64_t next = 0, score = resid.policy->score(u, s->now, &next);
    if (!s->best || score > s->best_score) {
        s->best = u;
        s->best_score = score;
        s->best_next = next;
    }
}

/* Starts one eviction; true if one started (or an empty slab was released). */
static bool evict_one(void)
{
    if (!resid.can_evict || resid.sticky)
        return false;
    for (;;) {
        struct victim_search s = {NULL, 0, 0,
                                  atomic_load_explicit(&shim.launch_seq, memory_order_relaxed)};
        uint64_t before = resid.dev_bytes;
        resid.oom.pinned = resid.oom.moving = resid.oom.graph = resid.oom.held = 0;
        resid_each(consider, &s);
        if (resid.dev_bytes < before || resid.nfree_dev)
            return true;
        if (!s.best)
            return false;
        struct resid_cause why = {SHIM_REASON_BUDGET, NULL, s.best_score, s.best_next};
        if (resid_evict(s.best, &why) == 0) {
            resid.planned.reactive += resid.plan_active;
            return true;
        }
        struct resid_unit *u = s.best; /* a transient failure gets one more try */
        if (u->fail_epoch != resid.epoch) {
            u->fail_epoch = resid.epoch;
            u->fails = 0;
        }
        if (++u->fails >= EVICT_TRIES)
            u->skip_epoch = resid.epoch;
    }
}

/* One step towards room: true if something changed (retry), false if nothing can move. */
static bool make_progress(void)
{
    if (resid_reap(false))
        return true;
    /* Spare ranges are free memory kept mapped: unmap one before waiting or evicting. */
    if (resid.spares && resid_spare_drop(1))
        return true;
    if (resid_slab_release_empty()) /* an empty slab kept mapped: room without a copy */
        return true;
    /* Moves already done give their room back first, whether or not the mover thread has
       polled them yet: waiting for the oldest move instead (a copy back still running) would
       make the time this costs depend on the mover's timing. */
    if (resid_complete_done() > 0)
        return true;
    if (resid_wait_oldest())
        return true;
    if (resid.pending && resid_reap(true))
        return true;
    if (evict_one())
        return true;
    /* An operation making its own units resident holds pins while it looks: if it waited for
       others' pins, two of them could wait for each other. It reads through the host link
       instead (or fails cleanly), and lets its pins go; only allocations wait. */
    if (!resid.oom.pinned || resid_in_operation() || resid.oom.paused_ns >= PIN_WAIT_MAX_NS)
        return false;
    /* Units pinned by operations in progress on other threads come free when their driver
       call returns — at once for a launch, after the copy for a synchronous copy: let them
       finish, then look again, backing off (bounded: PIN_WAIT_MAX_NS in all). */
    uint64_t ns = resid.oom.paused_ns < PIN_PAUSE_NS ? PIN_PAUSE_NS : resid.oom.paused_ns;
    ns = ns > PIN_PAUSE_MAX_NS ? PIN_PAUSE_MAX_NS : ns;
    resid.oom.paused_ns += ns;
    pthread_mutex_unlock(&resid.lock);
    struct timespec pause = {0, (long)ns};
    nanosleep(&pause, NULL);
    pthread_mutex_lock(&resid.lock);
    return true;
}

/* The most rounds a search for room may take. */
static uint64_t round_limit(void)
{
    return ROUNDS_PER_UNIT * (resid.nunits + 4) + PIN_WAIT_MAX_NS / PIN_PAUSE_NS;
}

int resid_take_device(struct resid_chunk **out, uint32_t n, CUstream stream, bool ordered,
                      bool *reused)
{
    uint32_t got = 0;
    bool may_create = true;
    resid.epoch++;
    resid.oom = (struct resid_oom){0};
    for (uint64_t round = 0; round < round_limit(); round++) {
        struct resid_chunk *c;
        while (got < n && (c = pop(false)) != NULL)
            out[got++] = c;
        if (got < n && ordered) {
            uint32_t k = take_ordered(out + got, n - got, stream);
            got += k;
            if (k && reused)
                *reused = true;
        }
        while (got < n && may_create &&
               (resid.over_budget || resid.dev_bytes + resid.gran + resid.slack <= resid.budget)) {
            if ((c = chunk_create(false)) == NULL) {
                may_create = false; /* the device is fuller than the budget says */
                break;
            }
            resid.dev_bytes += resid.gran;
            out[got++] = c;
        }
        if (got == n)
            return 0;
        if (!make_progress())
            break;
        may_create = true;
    }
    resid_give_back(out, got);
    resid.oom.host_full = resid.host_bytes + resid.gran > resid.host_budget && !resid.nfree_host;
    return -1;
}

int resid_take_host(struct resid_chunk **out, uint32_t n)
{
    uint32_t got = 0;
    struct resid_chunk *c;
    while (got < n && (c = pop(true)) != NULL)
        out[got++] = c;
    while (got < n && resid.host_bytes + resid.gran <= resid.host_budget) {
        if ((c = chunk_create(true)) == NULL)
            break;
        resid.host_bytes += resid.gran;
        out[got++] = c;
    }
    if (got == n)
        return 0;
    if (resid.host_bytes + resid.gran > resid.host_budget)
        resid.oom.host_full = true;
    resid_give_back(out, got);
    return -1;
}

int resid_room_for_unmanaged(uint64_t bytes)
{
    resid.epoch++;
    resid.oom = (struct resid_oom){0};
    for (uint64_t round = 0; resid.dev_bytes + bytes > resid.budget; round++) {
        if (resid_trim_device(resid.dev_bytes + bytes - resid.budget))
            continue;
        if (round >= round_limit() || !make_progress())
            return -1;
    }
    return 0;
}

bool resid_shed(uint64_t bytes)
{
    if (resid_trim_device(bytes))
        return true;
    resid.epoch++;
    resid.oom = (struct resid_oom){0};
    for (uint64_t round = 0; round < round_limit(); round++) {
        if (!make_progress())
            return false;
        if (resid_trim_device(bytes))
            return true;
    }
    return false;
}

/* Completes pending free *link (its event is done): the range or the member goes. */
static void finish_pending(struct resid_pending **link)
{
    struct resid_pending *p = *link;
    *link = p->next;
    resid_event_put(p->event);
    if (p->unit) {
        resid_release(p->unit, &(struct resid_cause){SHIM_REASON_FREED, p->stream, 0, UINT64_MAX});
    }
    if (p->member)
        resid_slab_free(p->member);
    free(p);
}

uint32_t resid_reap_oldest(void)
{
    uint32_t n = 0;
    while (resid.pending && !(resid.pending->unit && resid.pending->unit->move) &&
           resid.drv->query(resid.pending->event) == CUDA_SUCCESS) {
        finish_pending(&resid.pending);
        n++;
    }
    return n;
}

bool resid_reap(bool wait)
{
    bool any = false;
    for (struct resid_pending **l = &resid.pending; *l;) {
        struct resid_unit *u = (*l)->unit;
        if ((!u || !u->move) && resid.drv->query((*l)->event) == CUDA_SUCCESS) {
            finish_pending(l);
            any = true;
        } else {
            l = &(*l)->next;
        }
    }
    if (any || !wait || !resid.pending)
        return any;
    struct resid_pending *p = resid.pending;
    if (p->unit && p->unit->move) {
        resid_wait_move(p->unit, SHIM_REASON_BUDGET);
        return true;
    }
    CUevent e = p->event;
    uint64_t t0 = resid_now_ns();
    pthread_mutex_unlock(&resid.lock);
    CUresult rc = resid.drv->event_sync(e);
    pthread_mutex_lock(&resid.lock);
    resid_stalled(t0, SHIM_REASON_BUDGET);
    resid_driver_failed(rc);
    if (rc == CUDA_SUCCESS && resid.pending == p) {
        finish_pending(&resid.pending);
        return true;
    }
    return rc == CUDA_SUCCESS;
}
