/* shim_resid.h — the residency manager's state, shared by shim_resid_*.c only (the rest of the
 * shim sees the functions declared under "shim_resid" in shim_internal.h).
 *
 * A managed allocation owns a virtual range reserved once, mapped chunk by chunk
 * onto physical chunks of the device granularity. Chunks live in pools: device
 * chunks and host-located chunks, each also mapped at its own "arena" address
 * so copies can reach it whatever range it backs at the moment. Moves follow
 *
 *   DEVICE --evict--> EVICTING --copy done--> HOST --restore--> RESTORING --copy done--> DEVICE
 *
 * where the copy runs on the shim's own stream after events recorded on every
 * stream that touched the allocation since the last move (the fence), and the
 * remap runs on the mover thread once the copy is known complete.
 *
 * Locking: every field below is protected by resid.lock unless noted. Driver
 * calls that wait (event synchronisation) are made without it. */
#ifndef SHIM_RESID_H
#define SHIM_RESID_H

#include "shim_internal.h"

#define RESID_MAX_STREAMS 4 /* touched streams remembered per allocation */

enum resid_state { RESID_DEVICE, RESID_EVICTING, RESID_HOST, RESID_RESTORING };

/* An event that work must wait for before using chunks or data a move produced (shared). */
struct resid_fence {
    CUevent event;
    int refs;
    uint64_t seq; /* order of the moves on one copy stream: a later one covers earlier ones */
};

/* One pooled physical chunk (granularity bytes). */
struct resid_chunk {
    CUmemGenericAllocationHandle handle; /* 0: a pinned host buffer (unmapped eviction) */
    CUdeviceptr addr;                    /* arena address (or the pinned buffer) */
    bool host;
    struct resid_chunk *next;  /* free list */
    struct resid_fence *fence; /* device chunk freed by an eviction: its copy must finish
                                  before the chunk is written */
};

/* A copy in flight between device and host chunks, completed by the mover. */
struct resid_move {
    struct resid_alloc *alloc;
    enum shim_move_dir dir;
    enum shim_move_reason reason;
    bool cancelled;              /* a launch cancelled it, or the allocation was freed */
    CUevent done;                /* recorded after the copies on the shim's stream */
    uint32_t n;                  /* chunks */
    struct resid_chunk **chunks; /* the destination: they back the range once remapped */
    uint64_t bytes, start_ns;
    struct resid_move *next; /* mover queue */
};

/* A managed allocation. */
struct resid_alloc {
    uint64_t id;
    CUdeviceptr va;
    uint64_t size, mapped; /* requested bytes; reserved bytes (whole chunks) */
    uint32_t n;
    struct resid_chunk **backing; /* what the range maps now (device or host chunks) */
    enum resid_state state;
    int pins;                /* launches between their residency check and their submission */
    bool graph;              /* touched while capturing: stays on the device */
    bool stuck;              /* a remap failed half way: retried by the mover */
    struct resid_move *move; /* in flight, or NULL */
    CUstream streams[RESID_MAX_STREAMS]; /* touched since the last fence */
    uint8_t nstreams;
    bool streams_unknown; /* more streams, or a per-thread stream: fence with a full sync */
    uint64_t last_use;    /* launch index of the last touch (or of the birth) */
    uint64_t skip_epoch;  /* could not be evicted in this search: skip it */
    uint64_t birth;       /* launch index when it was made */
    uint32_t ntouches, touch_cap;
    uint64_t *touches;         /* launch indices of its touches, ascending (bounded) */
    struct resid_fence *ready; /* its first user waits for this (a restore's copy, or the
                                  evictions that freed its chunks) */
    struct resid_alloc *hnext;
};

/* A managed allocation freed in stream order, waiting for its event. */
struct resid_pending {
    struct resid_alloc *alloc;
    CUevent event;
    CUstream stream; /* its device chunks may be reused at once by this stream */
    struct resid_pending *next;
};

/* The residency manager's one state (part of the shim's global context). */
struct resid_ctx {
    pthread_mutex_t lock;
    pthread_cond_t changed; /* a move completed, chunks came back, or a remap finished */
    pthread_cond_t wake;    /* the mover has work */
    _Atomic bool on;        /* managing new allocations (read without the lock) */
    bool can_evict;         /* host chunks available (host VMM, or accepted unmapped eviction) */
    bool unmapped;          /* evicted ranges stay unmapped (no host VMM) */
    CUmemLocationType host_location; /* HOST, or HOST_NUMA (node 0) */
    uint64_t epoch;                  /* of the current victim search */
    CUdevice device;
    uint64_t gran, budget, host_budget, device_total;
    uint64_t dev_bytes;       /* device chunks that exist + visible unmanaged bytes */
    uint64_t unmanaged_bytes; /* part of dev_bytes */
    uint64_t host_bytes;      /* host chunks that exist */
    uint64_t leaving_bytes;   /* device bytes of evictions in flight */
    struct resid_chunk *free_dev, *free_host;
    uint64_t nfree_dev, nfree_host;
    struct resid_pending *pending; /* stream-ordered frees, oldest first */
    CUdeviceptr *slots;            /* free arena addresses */
    size_t nslots, slot_cap;
    CUstream to_host, to_device; /* the shim's copy streams */
    CUevent *events;             /* pooled events */
    size_t nevents, event_cap;
    struct resid_alloc **table; /* by id, chained */
    size_t table_cap, nallocs;
    struct resid_move *queue, *queue_tail; /* for the mover, in submission order */
    bool mover_running;
    bool stopping;      /* the process is exiting: the mover ends, no new one starts */
    uint64_t fence_seq; /* last fence sequence number given */
    uint64_t slack;     /* budget bytes kept for what the driver holds unseen */
    bool over_budget;   /* a restore that must happen even above the budget */
    pthread_t mover;
    uint64_t evictions, restores, cancelled, stall_ns; /* totals, for the exit log */
};

extern struct resid_ctx resid;

/* shim_resid_state.c */
/* The allocation with id (tagged), or NULL. */
struct resid_alloc *resid_find(uint64_t id);
/* Adds a to the table; returns 0, or -1 when out of memory. */
int resid_insert(struct resid_alloc *a);
/* Removes a from the table. */
void resid_erase(struct resid_alloc *a);
/* Frees a's record (its ranges and chunks must already be dealt with). */
void resid_alloc_free(struct resid_alloc *a);
/* Calls fn on every managed allocation. */
void resid_each(void (*fn)(struct resid_alloc *, void *), void *ctx);
/* An event from the pool (created on demand, timing disabled); NULL on failure. */
CUevent resid_event_get(void);
/* Gives an event back to the pool. */
void resid_event_put(CUevent e);
/* Nanoseconds of CLOCK_MONOTONIC. */
uint64_t resid_now_ns(void);

/* shim_resid_chunks.c */
/* Takes n device chunks, making room within the budget (evicting allocations that are
   not pinned, waiting for moves in flight: the lock may be dropped meanwhile). With
   ordered, chunks freed in stream order on `stream` may be reused at once (*reused is
   set then). Returns 0, or -1 (nothing taken) when nothing more can move. */
int resid_take_device(struct resid_chunk **out, uint32_t n, CUstream stream, bool ordered,
                      bool *reused);
/* Takes n host chunks within the host budget; 0, or -1. */
int resid_take_host(struct resid_chunk **out, uint32_t n);
/* Returns chunks to their pool (device or host by the chunk). */
void resid_give_back(struct resid_chunk **c, uint32_t n);
/* The latest eviction fence among chunks c[0..n) (a new reference, or NULL); the chunks'
   own fences are dropped: whoever writes them waits for the returned fence first. */
struct resid_fence *resid_take_fences(struct resid_chunk **c, uint32_t n);
/* Makes room for bytes of unmanaged device memory; 0, or -1 when nothing can move. */
int resid_room_for_unmanaged(uint64_t bytes);
/* Releases free device chunks to the driver until `bytes` were released; returns how many. */
uint64_t resid_trim_device(uint64_t bytes);
/* Completes the stream-ordered frees whose event is known done (wait: wait for the oldest). */
bool resid_reap(bool wait);

/* shim_resid_move.c */
/* Starts evicting a (DEVICE, not pinned); 0, or -1 with a unchanged. */
int resid_evict(struct resid_alloc *a, enum shim_move_reason reason);
/* Starts restoring a (HOST); 0, or -1 with a unchanged (it stays readable on the host). */
int resid_restore(struct resid_alloc *a, enum shim_move_reason reason);
/* Cancels a's eviction for a launch on stream: the stream waits for the copy. */
void resid_cancel_eviction(struct resid_alloc *a, CUstream stream);
/* The allocation to evict next (LRU among DEVICE, unpinned, non-graph), or NULL. */
struct resid_alloc *resid_victim(void);
/* Records events after the touches of a on its streams and makes stream wait for them;
   0, or -1 (nothing waited). */
int resid_fence(struct resid_alloc *a, CUstream stream);
/* Maps chunks c[0..n) at va and enables access; 0, or -1 with nothing mapped. */
int resid_map(CUdeviceptr va, struct resid_chunk **c, uint32_t n);
/* Waits (lock dropped meanwhile) until a's move in flight is over, counting the stall. */
void resid_wait_move(struct resid_alloc *a, enum shim_move_reason reason);
/* Counts (and traces) a stall of the program's thread that began at t0. */
void resid_stalled(uint64_t t0, enum shim_move_reason reason);
/* Waits until the oldest move in flight is over (room is coming); false if none. */
bool resid_wait_oldest(void);
/* Unmaps a's range and frees it, returning its chunks (the range is no longer used). */
void resid_release(struct resid_alloc *a);

/* A fence owning event e (one reference); NULL on failure. */
struct resid_fence *resid_fence_new(CUevent e);
/* Another reference to f. */
struct resid_fence *resid_fence_ref(struct resid_fence *f);
/* Drops a reference (NULL is fine); the event goes back to the pool with the last one. */
void resid_fence_drop(struct resid_fence *f);

/* shim_resid_predict.c */
/* Records a touch of a by the launch with index now. */
void resid_note_touch(struct resid_alloc *a, uint64_t now);
/* How good a victim a is (higher: used later; least recently used when unknown). */
uint64_t resid_evict_score(const struct resid_alloc *a, uint64_t now);

/* shim_resid_mover.c */
/* Queues m for the mover (starting the thread on first use). */
void resid_mover_queue(struct resid_move *m);

#endif
