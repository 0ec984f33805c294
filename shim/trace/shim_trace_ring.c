/* shim_trace_ring.c — per-thread rings: registration, the slow side of the record path, draining.
 */
#include "shim_trace_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread struct shim_trace_ring *shim_trace_tls_ring __attribute__((tls_model("initial-exec")));

/* Set once this thread's ring was handed back at thread exit: the thread records no more. */
static __thread int tls_retired __attribute__((tls_model("initial-exec")));

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t ring_key;
static int key_ok;

/* Takes r out of the registry (reg_lock held). */
static void unlink_locked(struct shim_trace_ring *dead)
{
    struct shim_trace_ring **p = &shim_trace_g.rings;
    while (*p != dead)
        p = &(*p)->next;
    *p = dead->next;
}

/* Thread exit: the writer drains the ring one last time, then frees it; with no writer, the
   ring goes at once (what it holds belongs to no session). */
static void ring_thread_exit(void *p)
{
    struct shim_trace_ring *r = p;
    shim_trace_tls_ring = NULL;
    tls_retired = 1;
    pthread_mutex_lock(&shim_trace_g.reg_lock);
    int drained_later = shim_trace_g.draining;
    if (drained_later)
        atomic_store_explicit(&r->dead, 1, memory_order_release);
    else
        unlink_locked(r);
    pthread_mutex_unlock(&shim_trace_g.reg_lock);
    if (!drained_later)
        free(r);
}

static void make_key(void)
{
    key_ok = pthread_key_create(&ring_key, ring_thread_exit) == 0;
}

static void count_lost(void)
{
    atomic_fetch_add_explicit(&shim_trace_g.lost, 1, memory_order_relaxed);
}

/* Contract in shim_trace_internal.h. Once per thread: one allocation, one brief lock. */
struct shim_trace_ring *shim_trace_ring_attach(void)
{
    pthread_once(&key_once, make_key);
    void *mem = NULL;
    if (tls_retired || !key_ok || posix_memalign(&mem, 64, sizeof(struct shim_trace_ring)) != 0) {
        count_lost();
        return NULL;
    }
    struct shim_trace_ring *r = mem;
    memset(r, 0, offsetof(struct shim_trace_ring, data));
    r->tid = (uint32_t)syscall(SYS_gettid);
    if (pthread_setspecific(ring_key, r) != 0) {
        free(r);
        count_lost();
        return NULL;
    }
    pthread_mutex_lock(&shim_trace_g.reg_lock);
    r->next = shim_trace_g.rings;
    shim_trace_g.rings = r;
    pthread_mutex_unlock(&shim_trace_g.reg_lock);
    shim_trace_tls_ring = r;
    return r;
}

static void count_dropped(struct shim_trace_ring *r)
{
    uint64_t d = atomic_load_explicit(&r->dropped, memory_order_relaxed);
    atomic_store_explicit(&r->dropped, d + 1, memory_order_relaxed);
}

/* Contract in shim_trace_internal.h. */
void shim_trace_ring_reentered(struct shim_trace_ring *r)
{
    count_dropped(r);
}

/* Contract in shim_trace_internal.h. */
int shim_trace_ring_make_room(struct shim_trace_ring *r, uint64_t head, uint64_t need)
{
    r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
    uint64_t used = head + need - r->tail_cache;
    if (used > SHIM_TRACE_RING_BYTES) {
        count_dropped(r);
        return -1;
    }
    if (used > SHIM_TRACE_RING_BYTES / 2 &&
        !atomic_load_explicit(&r->kicked, memory_order_relaxed)) {
        atomic_store_explicit(&r->kicked, 1, memory_order_relaxed);
        shim_trace_writer_kick();
    }
    return 0;
}

static uint16_t ring_u16(const struct shim_trace_ring *r, uint32_t off)
{
    uint16_t v;
    memcpy(&v, r->data + off, sizeof v);
    return v;
}

static int drain_drops(struct shim_trace_ring *r)
{
    uint64_t d = atomic_load_explicit(&r->dropped, memory_order_relaxed);
    if (d == r->dropped_seen)
        return 0;
    uint64_t delta = d - r->dropped_seen;
    r->dropped_seen = d;
    return shim_trace_out_dropped(r->tid, delta, d);
}

/* Contract in shim_trace_internal.h. Records never wrap: a PAD kind sends the reader to 0. */
int shim_trace_ring_drain(struct shim_trace_ring *r)
{
    atomic_store_explicit(&r->kicked, 0, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    int rc = 0;
    while (tail < head && rc == 0) {
        uint32_t off = (uint32_t)tail & SHIM_TRACE_RING_MASK;
        if (ring_u16(r, off) == SHIM_TRACE_PAD) {
            tail += SHIM_TRACE_RING_BYTES - off;
            continue;
        }
        uint16_t size = ring_u16(r, off + 2);
        if (size < SHIM_TRACE_RECORD_HEADER || size > head - tail) {
            tail = head; /* cannot happen unless a record was interrupted by another on the
                            same thread (a signal handler): give up what is left */
            break;
        }
        if (shim_trace_g.out_len + size > SHIM_TRACE_OUT_BYTES) {
            atomic_store_explicit(&r->tail, tail, memory_order_release);
            shim_trace_out_flush(); /* a failure counts the records as lost from now on */
        }
        rc = shim_trace_out_record(r->data + off, size);
        tail += size;
    }
    atomic_store_explicit(&r->tail, tail, memory_order_release);
    return rc == 0 ? drain_drops(r) : rc;
}

static void unlink_ring(struct shim_trace_ring *dead)
{
    pthread_mutex_lock(&shim_trace_g.reg_lock);
    unlink_locked(dead);
    pthread_mutex_unlock(&shim_trace_g.reg_lock);
}

/* Contract in shim_trace_internal.h. New rings are pushed at the head of the list and only
   this function unlinks, so the list can be walked without the lock from a snapshot. */
int shim_trace_ring_drain_all(void)
{
    pthread_mutex_lock(&shim_trace_g.reg_lock);
    struct shim_trace_ring *r = shim_trace_g.rings;
    pthread_mutex_unlock(&shim_trace_g.reg_lock);
    int rc = 0;
    while (r != NULL) {
        struct shim_trace_ring *next = r->next;
        int dead = atomic_load_explicit(&r->dead, memory_order_acquire);
        if (rc == 0)
            rc = shim_trace_ring_drain(r);
        if (dead) {
            unlink_ring(r);
            free(r);
        }
        r = next;
    }
    uint64_t lost = atomic_load_explicit(&shim_trace_g.lost, memory_order_relaxed);
    if (rc == 0 && lost != shim_trace_g.lost_seen) {
        rc = shim_trace_out_dropped(0, lost - shim_trace_g.lost_seen, lost);
        shim_trace_g.lost_seen = lost;
    }
    return rc;
}

/* Contract in shim_trace_internal.h. Called with no writer thread, under ctl_lock. */
void shim_trace_ring_reset_all(void)
{
    pthread_mutex_lock(&shim_trace_g.reg_lock);
    for (struct shim_trace_ring *r = shim_trace_g.rings; r != NULL; r = r->next) {
        uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
        atomic_store_explicit(&r->tail, head, memory_order_release);
        r->dropped_seen = atomic_load_explicit(&r->dropped, memory_order_relaxed);
    }
    pthread_mutex_unlock(&shim_trace_g.reg_lock);
    shim_trace_g.lost_seen = atomic_load_explicit(&shim_trace_g.lost, memory_order_relaxed);
}

/* Contract in shim_trace_internal.h. */
void shim_trace_ring_set_draining(int on)
{
    pthread_mutex_lock(&shim_trace_g.reg_lock);
    shim_trace_g.draining = on;
    struct shim_trace_ring **p = &shim_trace_g.rings;
    while (!on && *p != NULL) {
        struct shim_trace_ring *r = *p;
        if (atomic_load_explicit(&r->dead, memory_order_acquire)) {
            *p = r->next;
            free(r);
        } else
            p = &r->next;
    }
    pthread_mutex_unlock(&shim_trace_g.reg_lock);
}

/* Contract in shim_trace_internal.h. Only the calling thread exists: no lock is taken (the
   parent may have held one at the fork). The dead rings are left in place, untouched (their
   pages stay shared with the parent); a later session in the child frees them. */
void shim_trace_ring_after_fork(void)
{
    struct shim_trace_ring *mine = shim_trace_tls_ring;
    for (struct shim_trace_ring *r = shim_trace_g.rings; r != NULL; r = r->next) {
        if (r != mine) {
            atomic_store_explicit(&r->dead, 1, memory_order_relaxed);
            continue;
        }
        atomic_store_explicit(&r->head, 0, memory_order_relaxed);
        atomic_store_explicit(&r->tail, 0, memory_order_relaxed);
        atomic_store_explicit(&r->dropped, 0, memory_order_relaxed);
        atomic_store_explicit(&r->kicked, 0, memory_order_relaxed);
        r->busy = 0;
        r->tail_cache = 0;
        r->dropped_seen = 0;
        r->tid = (uint32_t)syscall(SYS_gettid);
    }
}
