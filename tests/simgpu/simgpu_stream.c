/* simgpu_stream.c — streams, command submission, stream workers and what the host knows complete.
 *
 * Ordering: a command runs after the previous command of its stream, after its
 * dependencies (event waits, the legacy stream's implicit synchronisation),
 * and after every command submitted before it on the same engine (compute,
 * host-to-device copy, device-to-host copy): each engine serves tickets in
 * submission order (with SIMGPU_LINK_BOTH_GBPS, copies of both directions also take one
 * link ticket, simgpu_link.c). Virtual time therefore depends only on submission order,
 * never on how worker threads are scheduled, and it is deterministic.
 * Dependencies only point at earlier submissions, so the earliest unfinished
 * command can always run: no deadlock.
 *
 * What the host knows: a command is known complete once the host has waited
 * for it (or for a later command of its stream, or for a command that waited
 * on it). The unmap detector reports unmapping a range that a command not yet
 * known complete touches — whether or not that command has already run, so the
 * report does not depend on timing. */
#include "simgpu_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TOUCH_LOG_LIMIT ((size_t)1 << 20)

static pthread_key_t per_thread_key;

static void *worker_main(void *arg);

static struct sim_stream *stream_alloc(int kind, unsigned flags, int dev)
{
    struct sim_stream *s = sim.free_streams;
    if (s) {
        sim.free_streams = s->next_free;
    } else {
        s = calloc(1, sizeof *s);
        if (!s)
            return NULL;
        s->next_all = sim.streams;
        sim.streams = s;
    }
    s->id = sim.next_stream_id++;
    s->kind = kind;
    s->flags = flags;
    s->device = dev;
    s->live = true;
    s->rng = sim.jitter_seed ^ ((uint64_t)s->id * 0x9E3779B97F4A7C15ull);
    if (!s->worker_started) {
        if (pthread_create(&s->worker, NULL, worker_main, s) != 0) {
            s->live = false;
            s->next_free = sim.free_streams;
            sim.free_streams = s;
            return NULL;
        }
        pthread_detach(s->worker);
        s->worker_started = true;
    }
    return s;
}

/* The key's value: the thread's per-thread default stream of each device. */
static void per_thread_exit(void *p)
{
    struct sim_stream **v = p;
    pthread_mutex_lock(&sim.lock);
    for (int d = 0; d < SIM_MAX_DEVICES; d++)
        if (v[d])
            sim_stream_release(v[d]);
    pthread_mutex_unlock(&sim.lock);
    free(v);
}

int sim_streams_init(void)
{
    if (pthread_key_create(&per_thread_key, per_thread_exit) != 0)
        return -1;
    int ok = 1;
    pthread_mutex_lock(&sim.lock);
    /* Each device's context has its own legacy default stream. */
    for (int d = 0; d < sim.ndevices; d++)
        ok &= (sim.dev[d].legacy = stream_alloc(STREAM_LEGACY, 0, d)) != NULL;
    pthread_mutex_unlock(&sim.lock);
    return ok ? 0 : -1;
}

/* The calling thread's per-thread default stream of device dev, made on first use. */
static struct sim_stream *per_thread_stream(int dev)
{
    struct sim_stream **v = pthread_getspecific(per_thread_key);
    if (!v) {
        v = calloc(SIM_MAX_DEVICES, sizeof *v);
        if (!v || pthread_setspecific(per_thread_key, v) != 0) {
            free(v);
            return NULL;
        }
    }
    if (!v[dev])
        v[dev] = stream_alloc(STREAM_PER_THREAD, 0, dev);
    return v[dev];
}

bool sim_stream_valid(const struct sim_stream *s)
{
    for (const struct sim_stream *t = sim.streams; t; t = t->next_all)
        if (t == s)
            return s->live;
    return false;
}

CUresult sim_stream_create(unsigned flags, struct sim_stream **out)
{
    *out = stream_alloc(STREAM_USER, flags, sim_current_device());
    return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

struct sim_stream *sim_stream_get(CUstream h, bool per_thread, CUresult *rc)
{
    *rc = CUDA_SUCCESS;
    /* The default streams are those of the current context's device. */
    if (h == CU_STREAM_LEGACY || (h == NULL && !per_thread))
        return sim.dev[sim_current_device()].legacy;
    if (h == CU_STREAM_PER_THREAD || h == NULL) {
        struct sim_stream *s = per_thread_stream(sim_current_device());
        if (!s)
            *rc = CUDA_ERROR_OUT_OF_MEMORY;
        return s;
    }
    struct sim_stream *s = (struct sim_stream *)h;
    if (!sim_stream_valid(s) || s->kind != STREAM_USER) {
        *rc = CUDA_ERROR_INVALID_HANDLE;
        return NULL;
    }
    return s;
}

void sim_stream_release(struct sim_stream *s)
{
    /* Work already submitted still completes (as on a real device): wait for
       it, then recycle the stream. Sequence numbers keep growing across
       recycling, so stale (stream, seq) references stay harmless. */
    if (s->last)
        sim_host_wait(s->last);
    s->live = false;
    s->capture = NULL;
    s->ntouches = s->nwaits = 0;
    if (s->last) {
        sim_cmd_unref(s->last);
        s->last = NULL;
    }
    s->next_free = sim.free_streams;
    sim.free_streams = s;
}

/* ---- commands ---- */

struct sim_cmd *sim_cmd_new(enum sim_cmd_kind kind, int engine)
{
    struct sim_cmd *c = calloc(1, sizeof *c);
    if (c) {
        c->refs = 1;
        c->kind = kind;
        c->engine = engine;
    }
    return c;
}

void sim_cmd_ref(struct sim_cmd *c)
{
    c->refs++;
}

static void drop_deps(struct sim_cmd *c)
{
    for (int i = 0; i < c->ndeps; i++)
        sim_cmd_unref(c->deps[i]);
    free(c->deps);
    c->deps = NULL;
    c->ndeps = 0;
}

void sim_cmd_unref(struct sim_cmd *c)
{
    if (--c->refs > 0)
        return;
    drop_deps(c);
    if (c->kind == CMD_KERNEL)
        free(c->u.k.params);
    if (c->kind == CMD_COPY)
        free(c->u.c.staging);
    free(c);
}

int sim_cmd_add_dep(struct sim_cmd *c, struct sim_cmd *d)
{
    if (d->done && d->stream == NULL)
        return 0;
    struct sim_cmd **v = realloc(c->deps, (size_t)(c->ndeps + 1) * sizeof *v);
    if (!v)
        return -1;
    c->deps = v;
    c->deps[c->ndeps++] = d;
    sim_cmd_ref(d);
    return 0;
}

static bool blocking(const struct sim_stream *s)
{
    return s->kind != STREAM_LEGACY && !(s->flags & CU_STREAM_NON_BLOCKING);
}

/* The legacy default stream synchronises with every blocking stream of its device. */
/* The legacy stream's implicit order with blocking streams (cuda.h: CU_STREAM_DEFAULT). A
   dependency that already ran (in real time) still counts: it bounds c's virtual start, and the
   host that waits for c then knows it done. */
static int add_implicit_deps(struct sim_stream *s, struct sim_cmd *c)
{
    struct sim_stream *legacy = sim.dev[s->device].legacy;
    if (s->kind == STREAM_LEGACY) {
        for (struct sim_stream *t = sim.streams; t; t = t->next_all)
            if (t != s && t->live && t->device == s->device && blocking(t) && t->last &&
                sim_cmd_add_dep(c, t->last) != 0)
                return -1;
    } else if (blocking(s) && legacy->last) {
        return sim_cmd_add_dep(c, legacy->last);
    }
    return 0;
}

/* Logs that submitted command arg (a struct sim_cmd) touches [lo, hi): a sim_cmd_touches
   visitor. */
static void log_touch(void *arg, uint64_t lo, uint64_t hi)
{
    struct sim_cmd *c = arg;
    struct sim_stream *s = c->stream;
    if (s->ntouches == s->touch_cap) {
        if (s->touch_cap >= TOUCH_LOG_LIMIT) {
            /* Bounded memory for programs that never synchronise: forget
               the older half (documented limit of the detector). */
            memmove(s->touches, s->touches + s->ntouches / 2,
                    (s->ntouches - s->ntouches / 2) * sizeof *s->touches);
            s->ntouches -= s->ntouches / 2;
        } else {
            struct sim_touch *v =
                sim_grow(s->touches, &s->touch_cap, s->ntouches + 1, sizeof *v, 256);
            if (!v)
                return;
            s->touches = v;
        }
    }
    s->touches[s->ntouches++] = (struct sim_touch){c->seq, lo, hi};
}

void sim_cmd_touches(const struct sim_cmd *c, sim_touch_visit visit, void *arg)
{
    switch (c->kind) {
    case CMD_KERNEL:
        /* Any 8-byte aligned word of the parameters may be a pointer. */
        for (size_t o = 0; o + 8 <= c->u.k.fn->total; o += 8) {
            uint64_t w;
            memcpy(&w, c->u.k.params + o, 8);
            if (sim_is_device_addr(w))
                visit(arg, w, w + 1);
        }
        break;
    case CMD_COPY:
        if (c->u.c.dst.dev && sim_is_device_addr(c->u.c.dst.addr))
            visit(arg, c->u.c.dst.addr, c->u.c.dst.addr + c->u.c.bytes);
        if (c->u.c.src.dev && sim_is_device_addr(c->u.c.src.addr))
            visit(arg, c->u.c.src.addr, c->u.c.src.addr + c->u.c.bytes);
        break;
    case CMD_MEMSET:
        if (sim_is_device_addr(c->u.m.dst))
            visit(arg, c->u.m.dst, c->u.m.dst + c->u.m.count * (size_t)c->u.m.elem);
        break;
    default:
        break;
    }
}

static void log_waits(struct sim_stream *s, struct sim_cmd *c)
{
    for (int i = 0; i < c->ndeps; i++) {
        struct sim_wait *v = sim_grow(s->waits, &s->wait_cap, s->nwaits + 1, sizeof *v, 64);
        if (!v)
            return;
        s->waits = v;
        s->waits[s->nwaits++] = (struct sim_wait){c->seq, c->deps[i]->stream, c->deps[i]->seq};
    }
}

CUresult sim_submit(struct sim_stream *s, struct sim_cmd *c)
{
    if (s->capture)
        return sim_capture_append(s, c);
    if (add_implicit_deps(s, c) != 0) {
        sim_cmd_unref(c);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    c->stream = s;
    c->seq = ++s->next_seq;
    c->host_vt = sim_clock_submit(c);
    if (c->engine != ENG_NONE)
        c->ticket = sim_engine_of(c)->next_ticket++;
    if (sim_link_ordered(c->engine))
        c->link_ticket = sim.link.next_ticket++;
    sim_cmd_touches(c, log_touch, c);
    log_waits(s, c);
    if (s->tail)
        s->tail->next = c;
    else
        s->head = c;
    s->tail = c;
    if (s->last)
        sim_cmd_unref(s->last);
    s->last = c;
    sim_cmd_ref(c); /* one reference for the queue, one for s->last */
    pthread_cond_broadcast(&sim.changed);
    return CUDA_SUCCESS;
}

/* ---- what the host knows ---- */

void sim_mark_known(struct sim_stream *s, uint64_t seq)
{
    if (!s || seq <= s->known_seq)
        return;
    s->known_seq = seq;
    size_t keep = 0;
    for (size_t i = 0; i < s->nwaits; i++) {
        struct sim_wait w = s->waits[i];
        if (w.seq <= seq)
            sim_mark_known(w.other, w.target);
        else
            s->waits[keep++] = w;
    }
    s->nwaits = keep;
    keep = 0;
    for (size_t i = 0; i < s->ntouches; i++)
        if (s->touches[i].seq > seq)
            s->touches[keep++] = s->touches[i];
    s->ntouches = keep;
}

void sim_host_wait(struct sim_cmd *c)
{
    sim_clock_join(); /* the thread waits from its own time (its VMM calls included) */
    sim_cmd_ref(c);
    while (!c->done)
        pthread_cond_wait(&sim.changed, &sim.lock);
    sim_clock_waited(c->vend);
    sim_mark_known(c->stream, c->seq);
    sim_cmd_unref(c);
}

/* How long a query waits, in real time, for a command's stream worker to run it, so that its
   answer depends on virtual time alone; a command that takes longer (a kernel held by a gate
   the host has yet to open, or a heavily loaded machine) is answered "not ready". */
#define QUERY_WAIT_NS 50000000L

bool sim_host_sees_done(struct sim_cmd *c, bool query)
{
    /* A query answers what the host knows at its own (virtual) time: the work ended by then.
       Answering from real time instead (the worker thread happened to run it already) made
       what a program does after a poll depend on thread timing: a poll by a helper thread that
       saw a copy done let the program skip a wait that it needs in virtual time. */
    sim_cmd_ref(c);
    if (!c->done) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += QUERY_WAIT_NS;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        while (!c->done && pthread_cond_timedwait(&sim.changed, &sim.lock, &until) != ETIMEDOUT)
            ;
    }
    bool seen = sim_clock_sees(c, query);
    if (seen)
        sim_mark_known(c->stream, c->seq);
    sim_cmd_unref(c);
    return seen;
}

void sim_host_wait_stream(struct sim_stream *s)
{
    sim_clock_join();
    if (s->last)
        sim_host_wait(s->last);
    sim_pool_trim(); /* a stream synchronisation: the pool gives back completed frees */
    /* The legacy stream also waits for blocking streams' earlier work, which
       its last command depends on; a wait for a blocking stream covers the
       legacy work it depended on the same way. */
}

void sim_host_wait_all(void)
{
    sim_clock_join();
    for (struct sim_stream *s = sim.streams; s; s = s->next_all)
        if (s->live && s->last)
            sim_host_wait(s->last);
    sim_pool_trim();
}

void sim_host_wait_device(int dev)
{
    sim_clock_join();
    for (struct sim_stream *s = sim.streams; s; s = s->next_all)
        if (s->live && s->device == dev && s->last)
            sim_host_wait(s->last);
    sim_pool_trim(); /* a context synchronisation: the pool gives back completed frees (of
                        every device's pool: one pool per process is simulated) */
}

void sim_check_unmap_hazard(uint64_t lo, uint64_t hi, const char *what)
{
    for (struct sim_stream *s = sim.streams; s; s = s->next_all) {
        for (size_t i = 0; i < s->ntouches; i++) {
            struct sim_touch t = s->touches[i];
            if (t.seq > s->known_seq && t.lo < hi && lo < t.hi) {
                sim.stats.unmap_hazards++;
                sim_diag("unmap hazard: %s of [0x%llx, 0x%llx) while command %llu of stream %u, "
                         "not known complete by the host, touches 0x%llx",
                         what, (unsigned long long)lo, (unsigned long long)hi,
                         (unsigned long long)t.seq, s->id, (unsigned long long)t.lo);
                sim_diag_backtrace();
                return;
            }
        }
    }
}

/* ---- workers ---- */

static bool runnable(const struct sim_cmd *c)
{
    for (int i = 0; i < c->ndeps; i++)
        if (!c->deps[i]->done)
            return false;
    if (sim_link_ordered(c->engine) && sim.link.serving != c->link_ticket)
        return false;
    /* Kernel bodies of all devices run one at a time: the zero-copy fault state and the
       cross-device fence (simgpu_exec.c) belong to the running kernel. */
    if (c->kind == CMD_KERNEL && sim.kernel_running)
        return false;
    return c->engine == ENG_NONE || sim_engine_of(c)->serving == c->ticket;
}

static void jitter(struct sim_stream *s)
{
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 7;
    s->rng ^= s->rng << 17;
    struct timespec ts = {0, (long)(s->rng % 200000)};
    pthread_mutex_unlock(&sim.lock);
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&sim.lock);
}

static double start_time(const struct sim_stream *s, const struct sim_cmd *c)
{
    double t = s->vt_tail > c->host_vt ? s->vt_tail : c->host_vt;
    for (int i = 0; i < c->ndeps; i++)
        if (c->deps[i]->vend > t)
            t = c->deps[i]->vend;
    if (c->engine != ENG_NONE && sim_engine_of(c)->vfree > t)
        t = sim_engine_of(c)->vfree;
    return t;
}

/* SIMGPU_TIMELINE: what ran where and when, in virtual microseconds (lock held):
   KIND STREAM ENGINE START END DETAIL (a kernel's name, a copy's bytes). */
static void timeline(const struct sim_stream *s, const struct sim_cmd *c)
{
    static const char *const kinds[] = {"kernel", "copy", "memset", "mark", "free", "hostfn"};
    if (c->kind == CMD_MARK || c->kind == CMD_FREE)
        return;
    fprintf(sim.timeline, "%s %u %d %.3f %.3f ", kinds[c->kind], s->id, c->engine, c->vstart,
            c->vend);
    if (c->kind == CMD_KERNEL)
        fprintf(sim.timeline, "%s\n", c->u.k.fn->name);
    else if (c->kind == CMD_COPY)
        fprintf(sim.timeline, "%zu\n", c->u.c.bytes);
    else
        fputc('\n', sim.timeline);
}

static void retire(struct sim_stream *s, struct sim_cmd *c, double cost)
{
    c->vend = c->vstart + cost;
    if (sim.timeline)
        timeline(s, c);
    s->vt_tail = c->vend;
    if (c->engine != ENG_NONE) {
        sim_engine_of(c)->vfree = c->vend;
        sim_engine_of(c)->serving++;
    }
    if (sim_link_ordered(c->engine))
        sim.link.serving++;
    if (c->vend > sim.stats.device_time_us)
        sim.stats.device_time_us = c->vend;
    s->head = c->next;
    if (!s->head)
        s->tail = NULL;
    c->next = NULL;
    c->done = true;
    drop_deps(c);
    sim_cmd_unref(c);
    pthread_cond_broadcast(&sim.changed);
}

static void *worker_main(void *arg)
{
    struct sim_stream *s = arg;
    pthread_mutex_lock(&sim.lock);
    for (;;) {
        struct sim_cmd *c = s->head;
        if (!c || !runnable(c)) {
            pthread_cond_wait(&sim.changed, &sim.lock);
            continue;
        }
        if (sim.jitter_seed && !c->jittered) {
            c->jittered = true;
            jitter(s);
            continue; /* re-check: nothing may have changed, but the lock was dropped */
        }
        c->vstart = start_time(s, c);
        double cost = 0;
        bool kernel = c->kind == CMD_KERNEL;
        if (kernel) {
            sim.kernel_running = true;
            sim_devices_fence(s->device);
        }
        if (c->kind != CMD_MARK) {
            pthread_mutex_unlock(&sim.lock);
            cost = sim_exec(c);
            pthread_mutex_lock(&sim.lock);
        }
        if (c->kind == CMD_COPY && sim_link_ordered(c->engine))
            cost = sim_link_place(c->engine, c->vstart, c->u.c.bytes);
        if (kernel)
            sim.kernel_running = false;
        retire(s, c, cost);
    }
    return NULL;
}
