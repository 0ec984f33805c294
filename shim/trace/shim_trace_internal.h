/* shim_trace_internal.h — the trace writer's internals: per-thread rings, the writer state, the
 * file. Functions are grouped under the file that defines them.
 *
 * Data flow: each recording thread owns a ring (single producer) that the one writer thread
 * drains (single consumer) every flush_ms (default SHIM_TRACE_POLL_MS), or sooner when a ring
 * passes half full, into chunks written to the file. A full ring drops the record and counts it;
 * the writer turns the count into a `dropped` record. Rings live until their thread exits.
 * With a size limit, the writer folds the records of later steps into step summaries instead of
 * writing them (shim_trace_bound.c); the program's threads record as they always do.
 */
#ifndef SHIM_TRACE_INTERNAL_H
#define SHIM_TRACE_INTERNAL_H

#include "shim_trace.h"
#include "shim_trace_figures.h"
#include "shim_trace_format.h"

#include "base_map.h"

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

/* One event the writer folds into a step summary (shim_trace_bound.c): a record of a step
   past the detail of a bounded trace, reduced to what the summary needs. */
struct shim_trace_event {
    uint64_t t;     /* the record's time; for a move or a stall its start_ns */
    uint64_t a, b;  /* alloc: id, bytes; free: id; step: step, first_seq; move: bytes, dir;
                       stall: duration */
    uint32_t order; /* position in the drain pass: ties keep it */
    uint16_t kind;
    uint16_t sub; /* alloc: alloc_kind; move: reason */
};

/* The summary being accumulated: the body of the next step_summary record up to the last step
   record read (s), what came after it (tail: merged into s at the next step record, written
   as a summary of no step if none comes), and how many steps s may cover before it is
   written. */
struct shim_trace_bucket {
    struct shim_trace_body_step_summary s, tail;
    uint64_t group;  /* steps s covers once full (a power of two) */
    int tail_events; /* tail holds anything */
};

/* The size limit (writer thread only, after start). file_bytes counts what is in the file. */
struct shim_trace_bound {
    uint64_t max_bytes;   /* 0: no limit */
    uint64_t soft, force; /* detail ends at the next step record past soft, at once past force */
    uint64_t hard;        /* nothing but the END chunk past it (max_bytes less END's room) */
    uint64_t file_bytes;  /* bytes written, whole chunks only */
    int want_switch;      /* past soft: the next step record ends the detail */
    int summarising;      /* detail has ended: records after switch_ns are folded */
    uint64_t switch_ns;   /* the time of the last detailed step record (or the forced end) */
    uint64_t detail_steps, last_detail_step; /* step records written in detail */
    /* live allocations: id -> bytes << 2 | on device << 1 | 1; TOMB: freed before its alloc
       was read */
    base_map live;
    int map_broken;        /* memory ran out: peaks are no longer exact */
    uint64_t device, host; /* bytes held by the live allocations */
    struct shim_trace_event *ev;
    size_t nev, evcap;
    struct shim_trace_bucket bucket;
    unsigned level;            /* summaries cover 1 << level steps */
    uint64_t level_left;       /* summaries still to write at this level */
    uint64_t level_records;    /* summaries per level past the first */
    uint64_t summaries;        /* step_summary records written */
    uint64_t summarised_steps; /* steps they cover */
    uint64_t summarised;       /* records folded into them */
    uint64_t lost_limit;       /* records not written: the file was at its limit */
    uint64_t lost_steps;       /* steps whose summaries were among them */
    uint64_t lost_error;       /* records not written after a write error */
    uint64_t out_records;      /* records in the chunk being filled */
    void (*log)(int level, const char *msg);
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
    _Atomic uint64_t resident_peak;    /* for the END chunk (shim_trace_set_resident_peak)... */
    _Atomic bool have_resident_peak;   /* ...when set */
    char device_name[128];             /* for the END chunk (shim_trace_set_device_name)... */
    _Atomic bool have_device_name;     /* ...when set */
    int write_error;               /* writer: errno of the first failed write (then nothing more) */
    struct shim_trace_bound bound; /* writer: the size limit and the write error's count */
    char path[4096];               /* ctl_lock: the file's path, for messages */
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

/* Writer side: hands the ring's published records to shim_trace_out_record (written into the
   writer's chunk, chunks written as the buffer fills, or folded into a step summary), and
   reports drops. Returns 0: records that cannot be written are counted as lost. */
int shim_trace_ring_drain(struct shim_trace_ring *r);

/* Drains every ring and frees the rings of exited threads. Returns 0, as shim_trace_ring_drain. */
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
   header with time now. Returns 0, or -1 when nothing is to be written (not active, no room). */
static inline int shim_trace_begin_at(struct shim_trace_slot *s, uint16_t kind, uint32_t size,
                                      uint64_t now)
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
    __builtin_memcpy(r->data + off, hdr16, 4);
    __builtin_memcpy(r->data + off + 4, &r->tid, 4);
    __builtin_memcpy(r->data + off + 8, &now, 8);
    s->ring = r;
    s->at = r->data + off + SHIM_TRACE_RECORD_HEADER;
    s->next = head + need;
    return 0;
}

/* shim_trace_begin_at with the time now. */
static inline int shim_trace_begin(struct shim_trace_slot *s, uint16_t kind, uint32_t size)
{
    return shim_trace_begin_at(s, kind, size, shim_trace_now_ns());
}

/* Publishes the record begun by shim_trace_begin. */
static inline void shim_trace_commit(const struct shim_trace_slot *s)
{
    atomic_store_explicit(&s->ring->head, s->next, memory_order_release);
    atomic_signal_fence(memory_order_seq_cst);
    s->ring->busy = 0;
}

/* ---- shim_trace_live.c: this run's figures as the records go by (the exit line's) ---- */

/* Each feeds the run's figures (shim_trace_figures.h) with what its record says, whether or not
   a trace is written, under the figures' own lock (taken last, after any lock of the caller's).
   A step mark: returns the time its record must carry, so that a reader of the trace is fed the
   same time. */
uint64_t shim_trace_live_mark(uint64_t step);
void shim_trace_live_plan(const struct shim_trace_plan *p);
void shim_trace_live_plan_step(const struct shim_trace_plan_step *s);
void shim_trace_live_transition(const struct shim_trace_transition *t);
/* In a fork child: the figures start empty, with a fresh lock (another thread may have held it). */
void shim_trace_live_after_fork(void);

/* ---- shim_trace_file.c: the file ---- */

/* Writes a chunk (header with CRC, then payload) at the file's end and counts its bytes in
   shim_trace_g.bound.file_bytes. 0, or -1 with errno set (some of its bytes may be there). */
int shim_trace_write_chunk(int fd, uint32_t type, const void *payload, uint32_t len);

/* Writes the preamble, the INFO chunk and the SCHEMA chunk. 0, or -1 with errno set. */
int shim_trace_write_head(int fd, const struct shim_trace_info *info, uint64_t start_ns);

/* Writes the END chunk with the writer's totals and the size limit's counts. 0, or -1 with
   errno set. */
int shim_trace_write_end(int fd);

/* ---- shim_trace_writer.c: the writer thread ---- */

/* Appends one record (size bytes at rec) to the chunk being filled, writing the chunk out
   first when it is full. A record past the size limit, or after a write error, is counted as
   lost instead. Returns 0. */
int shim_trace_out_append(const void *rec, uint32_t size);

/* Appends a `dropped` record for thread tid. 0, or -1 once the file cannot be written. */
int shim_trace_out_dropped(uint32_t tid, uint64_t records, uint64_t total);

/* Writes the chunk being filled, if any. 0, or -1 once the file cannot be written (the
   first failure counts the chunk's records as lost, cuts the file back to its last whole
   chunk, stops recording and says so through the log callback). */
int shim_trace_out_flush(void);

/* ---- shim_trace_bound.c: the size limit, step summaries ---- */

/* Start of a session, before its head is written: the limit (0: none), the log callback. */
void shim_trace_bound_start(uint64_t max_bytes, void (*log)(int level, const char *msg));

/* Routes one drained record: written (shim_trace_out_append) while the trace is detailed or
   the record belongs to the detailed part, else folded into the step summary. 0, or -1 as
   shim_trace_out_append. */
int shim_trace_out_record(const uint8_t *rec, uint32_t size);

/* The end of a drain pass over every ring: the folded records of the pass, in time order,
   go into their summaries; full summaries are written. */
void shim_trace_bound_pass_end(void);

/* Stop: writes the open summary (what came after the last step record) and, when records
   were lost, a note that says how many and why. Then the END chunk may follow. */
void shim_trace_bound_finish(void);

/* After a failed write: cuts the file back to its last whole chunk (bound.file_bytes) and puts
   the file offset there, so that a later chunk (the last note, END) follows it. */
void shim_trace_cut_back(void);

/* Says msg through the session's log callback, if any. */
void shim_trace_bound_say(int level, const char *msg);

/* ---- shim_trace_writer.c: waking and holding the writer ---- */

/* Asks the writer thread to drain soon (from a ring past half full). */
void shim_trace_writer_kick(void);

/* Test seam: while hold is nonzero the writer thread does not drain rings (stop still does). */
void shim_trace_writer_hold(int hold);

#endif
