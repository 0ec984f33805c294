/* shim_trace_internal.h — the trace writer's internals: per-thread rings, the writer state, the
 * file. Functions are grouped under the file that defines them.
 *
 * Data flow: each recording thread owns a ring (single producer) that the one writer thread
 * drains (single consumer) every flush_ms (default SHIM_TRACE_POLL_MS), or sooner when a ring
 * passes half full, into chunks written to the file. A full ring drops the record and counts it;
 * the writer turns the count into a `dropped` record. Rings live until their thread exits.
 */
#ifndef SHIM_TRACE_INTERNAL_H
#define SHIM_TRACE_INTERNAL_H

#include "shim_trace.h"
#include "shim_trace_format.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the trace writer stores little-endian values as they are in memory"
#endif

#define SHIM_TRACE_RING_BYTES (512u << 10) /* per recording thread; a power of two */
#define SHIM_TRACE_RING_MASK  (SHIM_TRACE_RING_BYTES - 1)
#define SHIM_TRACE_OUT_BYTES  (1u << 20) /* the writer's chunk payload */
#define SHIM_TRACE_POLL_MS    10
#define SHIM_TRACE_PAD        0 /* kind 0 in a ring: skip to the ring's end (never in a file) */

/* One thread's buffer. head and the bytes before it belong to the owner thread; tail to the
   writer. Both count bytes since the ring was made (offset = count & MASK). */
struct shim_trace_ring {
    _Atomic uint64_t head;      /* bytes published by the owner (release) */
    uint64_t tail_cache;        /* owner only: the tail it last read */
    _Atomic uint64_t dropped;   /* owner only writes: records that did not fit */
    uint32_t tid;               /* owner's thread id, copied into each record */
    volatile sig_atomic_t busy; /* owner: a record is being written (a signal handler's record
                                   on the same thread is dropped instead of overwriting it) */
    _Atomic int dead;           /* set by the owner's thread-exit destructor */
    _Atomic int kicked;         /* owner asked the writer to drain; writer clears */
    _Alignas(64) _Atomic uint64_t tail; /* bytes consumed by the writer (release) */
    uint64_t dropped_seen;              /* writer only: dropped already written as a record */
    struct shim_trace_ring *next;       /* the registry list (see shim_trace_state.rings) */
    _Alignas(64) uint8_t data[SHIM_TRACE_RING_BYTES];
};

/* The writer's one global state. Lock order: ctl_lock, then reg_lock or wake_lock. */
struct shim_trace_state {
    /* read by every record: alone on its cache line, away from what the writer updates */
    _Alignas(64) _Atomic int active; /* records accepted (written under ctl_lock) */
    pthread_mutex_t ctl_lock;        /* serialises start, stop and forget */
    int running;                /* ctl_lock: a session is open (file and writer thread exist) */
    pid_t owner_pid;            /* ctl_lock: the process that started the session */
    int fd;                     /* ctl_lock; the writer thread uses it while running */
    pthread_t thread;           /* ctl_lock: the writer thread while running */
    pthread_mutex_t wake_lock;  /* protects stop_requested and wakes the writer */
    pthread_cond_t wake;        /* CLOCK_MONOTONIC condition */
    int stop_requested;         /* wake_lock */
    int kicked;                 /* wake_lock: a ring passed half full */
    unsigned poll_ms;           /* ctl_lock: the drain period of the running session */
    _Atomic int hold;           /* test seam: the writer does not drain while set */
    pthread_mutex_t drain_lock; /* held by the writer while it drains (makes hold synchronous) */
    pthread_mutex_t reg_lock;   /* protects rings (pushes by new threads, unlinks by the writer) */
    struct shim_trace_ring *rings;
    int draining; /* reg_lock: a writer thread exists (it frees the rings of exited threads) */
    _Atomic uint64_t lost;     /* records of threads without a ring (exited, out of memory) */
    uint64_t lost_seen;        /* writer: lost already written as a record */
    uint32_t crc_table[256];   /* built once by the first start, read-only afterwards */
    _Alignas(64) uint8_t *out; /* writer: SHIM_TRACE_OUT_BYTES of chunk payload */
    uint32_t out_len;          /* writer */
    uint64_t records, dropped, chunks; /* writer: totals for the END chunk */
    int write_error; /* writer: errno of the first failed write (then nothing more) */
};

extern struct shim_trace_state shim_trace_g;

/* ---- shim_trace_ring.c: rings and the record path ---- */

extern __thread struct shim_trace_ring *shim_trace_tls_ring
    __attribute__((tls_model("initial-exec")));

/* The calling thread's ring, made and registered on first use. NULL when the thread has
   exited or memory ran out (the record is then counted in shim_trace_g.lost). */
struct shim_trace_ring *shim_trace_ring_attach(void);

/* Space is short (the owner's view says more than half full): rereads tail, wakes the writer
   once, and returns 0 when need bytes fit, -1 (counted as dropped) when they do not. */
int shim_trace_ring_make_room(struct shim_trace_ring *r, uint64_t head, uint64_t need);

/* A record began while another was being written on the same thread (from a signal
   handler): counts it as dropped. */
void shim_trace_ring_reentered(struct shim_trace_ring *r);

/* Writer side: copies the ring's published records into the writer's chunk, writing chunks as
   the buffer fills, and reports drops. 0, or -1 when the file can no longer be written. */
int shim_trace_ring_drain(struct shim_trace_ring *r);

/* Drains every ring and frees the rings of exited threads. 0, or -1 on a write error. */
int shim_trace_ring_drain_all(void);

/* Start of a session (no writer yet): forgets what rings hold from an earlier session. */
void shim_trace_ring_reset_all(void);

/* Says whether a writer thread exists (set before it starts, cleared after it is joined).
   Without one, exiting threads free their rings themselves; clearing frees the dead ones. */
void shim_trace_ring_set_draining(int on);

/* In a fork child: keeps the caller's ring (emptied), marks the other threads' rings dead. */
void shim_trace_ring_after_fork(void);

/* A record being written: the slot in the ring and where head goes once it is complete. */
struct shim_trace_slot {
    struct shim_trace_ring *ring;
    uint8_t *at;
    uint64_t next;
};

static inline uint64_t shim_trace_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Reserves size bytes (a multiple of 8, at most SHIM_TRACE_RECORD_MAX) and writes the record
   header. Returns 0, or -1 when nothing is to be written (not active, no room). */
static inline int shim_trace_begin(struct shim_trace_slot *s, uint16_t kind, uint32_t size)
{
    if (!atomic_load_explicit(&shim_trace_g.active, memory_order_relaxed))
        return -1;
    struct shim_trace_ring *r = shim_trace_tls_ring;
    if (__builtin_expect(r == NULL, 0) && (r = shim_trace_ring_attach()) == NULL)
        return -1;
    if (__builtin_expect(r->busy, 0)) {
        shim_trace_ring_reentered(r);
        return -1;
    }
    r->busy = 1;
    atomic_signal_fence(memory_order_seq_cst);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint32_t off = (uint32_t)head & SHIM_TRACE_RING_MASK;
    uint32_t contiguous = SHIM_TRACE_RING_BYTES - off;
    uint64_t need = size <= contiguous ? size : (uint64_t)contiguous + size;
    if (__builtin_expect(head + need - r->tail_cache > SHIM_TRACE_RING_BYTES / 2, 0) &&
        shim_trace_ring_make_room(r, head, need) != 0) {
        r->busy = 0;
        return -1;
    }
    if (size > contiguous) {
        uint16_t pad = SHIM_TRACE_PAD;
        __builtin_memcpy(r->data + off, &pad, sizeof pad);
        off = 0;
    }
    uint16_t hdr16[2] = {kind, (uint16_t)size};
    uint64_t now = shim_trace_now_ns();
    __builtin_memcpy(r->data + off, hdr16, 4);
    __builtin_memcpy(r->data + off + 4, &r->tid, 4);
    __builtin_memcpy(r->data + off + 8, &now, 8);
    s->ring = r;
    s->at = r->data + off + SHIM_TRACE_RECORD_HEADER;
    s->next = head + need;
    return 0;
}

/* Publishes the record begun by shim_trace_begin. */
static inline void shim_trace_commit(const struct shim_trace_slot *s)
{
    atomic_store_explicit(&s->ring->head, s->next, memory_order_release);
    atomic_signal_fence(memory_order_seq_cst);
    s->ring->busy = 0;
}

/* ---- shim_trace_file.c: the file ---- */

/* Writes a chunk (header with CRC, then payload) at the file's end. 0, or -1 with errno set. */
int shim_trace_write_chunk(int fd, uint32_t type, const void *payload, uint32_t len);

/* Writes the preamble, the INFO chunk and the SCHEMA chunk. 0, or -1 with errno set. */
int shim_trace_write_head(int fd, const struct shim_trace_info *info, uint64_t start_ns);

/* Writes the END chunk with the writer's totals. 0, or -1 with errno set. */
int shim_trace_write_end(int fd);

/* ---- shim_trace_writer.c: the writer thread ---- */

/* Appends one record (size bytes at rec) to the chunk being filled, writing the chunk out
   first when it is full. 0, or -1 once the file cannot be written. */
int shim_trace_out_append(const void *rec, uint32_t size);

/* Appends a `dropped` record for thread tid. 0, or -1 once the file cannot be written. */
int shim_trace_out_dropped(uint32_t tid, uint64_t records, uint64_t total);

/* Writes the chunk being filled, if any. 0, or -1 once the file cannot be written. */
int shim_trace_out_flush(void);

/* Asks the writer thread to drain soon (from a ring past half full). */
void shim_trace_writer_kick(void);

/* Test seam: while hold is nonzero the writer thread does not drain rings (stop still does). */
void shim_trace_writer_hold(int hold);

#endif
