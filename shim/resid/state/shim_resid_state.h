/* shim_resid_state.h — the state room of the residency manager (shim/resid/state/): the one
 * state of each device's manager (struct resid_ctx), the units it moves and their tables by id,
 * the state machine every change of a unit's state goes through, the pooled events and the
 * fences built on them, and what the calling thread's operation in progress holds.
 *
 * What moves is a unit: one large managed allocation, or a slab — one chunk whose range packs
 * several small managed allocations (budget/shim_resid_slab.c). A unit owns a virtual range
 * reserved once and mapped onto pooled physical chunks (pools/shim_resid_chunks.c); the
 * program's pointers stay valid for the unit's whole life, only what backs the range changes.
 *
 * Every state change of a unit goes through resid_fsm() (shim_resid_fsm.c), whose table is the
 * one place that says which event may move a unit from which state to which:
 *
 *   NONE --CREATE--> DEVICE --EVICT--> EVICTING --COPY_DONE--> HOST --RESTORE--> RESTORING
 *                      ^                 |  |                                     |   |
 *                      +-----CANCEL------+  +--ERROR--> DEVICE      HOST <--ERROR--+   |
 *                      +---------------------------COPY_DONE--------------------------+
 *   DEVICE / HOST --FREE--> NONE
 *
 * The rooms of residency, from the entry points down (docs/HOUSE.md): shim/resid/ (the entry
 * points: each finds its manager and takes its lock), budget/ (making room), moves/ (copies and
 * remaps), pools/ (physical chunks), state/ (this room), driver/ (the seam to the driver). A room
 * uses the rooms below it only. This room promises: every function works on the manager passed
 * as r and changes nothing but r's state (and the trace, for transitions); none drops r->lock.
 *
 * Locking: every field below is protected by r->lock unless noted. Calls that wait for the
 * device (event synchronisation) are made without it, and so are a move's remaps (its unit and
 * the move are marked remapping meanwhile: moves/shim_resid_move.c). */
#ifndef SHIM_RESID_STATE_H
#define SHIM_RESID_STATE_H

#include "base_array.h"
#include "base_map.h"
#include "plan_rules.h"
#include "shim_resid_driver.h"

struct shim_resid_plan; /* the compiled plan (shim_resid.h), executed by the entry points' room */

#define RESID_MAX_STREAMS 4  /* touched streams remembered per unit */
#define RESID_MAX_ERRORS  3  /* failed waits on one move before it is given up */
#define RESID_TOUCH_LOG   32 /* latest touches remembered per unit (for the policy) */

/* A unit's states and the events that move it are the trace's (enum shim_resid_state and enum
   shim_resid_event in shim_trace.h, which the tools read): one list, shared. SHIM_EV_CREATE is
   never traced (the allocation record says it). */

/* Why a transition happened, for the trace and the log. */
struct resid_cause {
    enum shim_move_reason reason;
    CUstream stream;   /* the program's stream whose operation caused it, or NULL */
    uint64_t score;    /* the victim score when budget pressure chose it */
    uint64_t next_use; /* predicted launch index of the next use, UINT64_MAX unknown */
};

/* What to evict and what to bring back early. Every function runs under r->lock. */
struct resid_unit;
struct resid_policy {
    const char *name;
    /* Notes a touch of u by the launch with index now. */
    void (*touch)(struct resid_unit *u, uint64_t now);
    /* How good a victim u is at launch now (higher: better); *next_use gets its predicted
       next use (UINT64_MAX unknown). */
    uint64_t (*score)(const struct resid_unit *u, uint64_t now, uint64_t *next_use);
};

/* An event that work must wait for before using chunks or data a move produced (shared). */
struct resid_fence {
    CUevent event;
    int refs;
    uint64_t seq; /* order of the moves on one copy stream: a later one covers earlier ones */
};

/* One pooled physical chunk: one handle of `grans` granules (as few handles per unit as the
   driver allows: a move remaps each handle, and a remap's host cost grows with the handles, not
   the bytes; shim_resid_chunks.c). */
struct resid_chunk {
    CUmemGenericAllocationHandle handle; /* 0: a pinned host buffer (unmapped eviction) */
    CUdeviceptr addr;                    /* arena address (or the pinned buffer) */
    uint32_t grans;                      /* its size in granules */
    bool host;
    bool own_range; /* addr is a reservation of its own (more than one granule), not a slot */
    struct resid_chunk *next;  /* free list */
    struct resid_fence *fence; /* device chunk freed by an eviction: its copy must finish
                                  before the chunk is written */
};

/* A copy in flight between device and host chunks. */
struct resid_move {
    struct resid_unit *unit; /* not to be followed once cancelled: the unit may be gone */
    uint64_t unit_id;
    enum shim_move_dir dir;
    struct resid_cause cause;
    bool cancelled;              /* a touch cancelled it, or its unit went away */
    bool ordered;                /* a restore whose range was remapped at once: chunks then
                                    holds the host chunks the copy reads, until it ends */
    bool finished;               /* completed or given up; freed by its last waiter */
    bool want_order;             /* a restore whose range may be remapped before its copy
                                    ends (nothing reads it through the host mapping): the
                                    mover does it, or the first thread that touches it */
    bool remapping;              /* a thread is remapping the unit's range with the lock
                                    dropped: nobody else acts on the move or the unit's range
                                    until it is over (resid_wait_remap) */
    int waiters;                 /* threads waiting on done without the lock */
    int errors;                  /* failed queries of done */
    struct resid_fence *done;    /* recorded after the copies on the shim's stream; shared
                                    with the chunks the copy reads and the unit it fills */
    uint32_t n;                  /* slots of chunks (the unit's granules) */
    struct resid_chunk **chunks; /* the destination: they back the range once remapped */
    uint64_t bytes, start_ns;
    struct resid_move *next; /* mover queue */
};

/* A slab's bookkeeping: which 512-byte blocks of its chunk are taken. */
#define RESID_SLAB_BLOCK ((uint32_t)PLAN_RULES_SLAB_BLOCK) /* the planner's rule (plan_rules.h) */
struct resid_slab {
    uint64_t *used;            /* bitmap, one bit per block */
    uint32_t nblocks;          /* blocks in the chunk */
    uint32_t members;          /* allocations living in it (freed in stream order: until done) */
    uint32_t taken;            /* blocks taken */
    struct shim_slab_map *map; /* its range in the address table */
    struct resid_unit *next, *prev; /* every slab, newest first */
    bool kept_empty; /* no member, kept mapped on the device for the next small allocation */
};

/* A unit: what moves. */
struct resid_unit {
    uint64_t id; /* the allocation's id, or the slab's (managed-tagged) */
    CUdeviceptr va;
    uint64_t size, mapped;        /* bytes in use (the allocation's, a slab's chunk); reserved */
    uint32_t n;                   /* granules of the range */
    struct resid_chunk **backing; /* what the range maps now (device or host chunks): [n]
                                     slots, the chunks in address order from the first, NULL
                                     after the last (a chunk may span several granules) */
    enum shim_resid_state state;
    _Atomic int pins;         /* operations between their residency check and their submission
                                 (decremented without the lock) */
    _Atomic int host_readers; /* of those, the ones that read it through its host mapping
                                 (resident on the host): until they are submitted, no fence
                                 covers them, so nothing may restore (remap) it */
    bool graph;               /* touched while capturing: stays on the device */
    bool stays_on_host;       /* kept on the host for good (host_resident): touches read it
                                 through the link, nothing restores it (shim_resid_place.c) */
    uint32_t held;            /* holds by exports and raw-range users (shim_resid_hold.c):
                                 while nonzero it stays on the device, for good once a hold
                                 succeeded */
    uint8_t held_why;         /* bit (1 << enum shim_pin_reason) of each successful hold */
    bool stuck;               /* a remap failed half way: the next touch maps it again */
    bool unsettled;           /* a copy given up may still read its range or chunks: the
                                 device must be idle before they go (release) */
    struct resid_move *move;  /* in flight, or NULL */
    CUstream streams[RESID_MAX_STREAMS]; /* touched since the last fence */
    uint8_t nstreams;
    bool streams_unknown; /* more streams, or a per-thread stream: fence with a full sync */
    uint64_t last_use;    /* launch index of the last touch (or of the birth) */
    uint64_t skip_epoch;  /* could not be evicted in this search: skip it */
    uint64_t fail_epoch;  /* the search in which its eviction last failed to start */
    uint32_t fails;       /* failed eviction starts in that search */
    uint64_t birth;       /* launch index when it was made */
    uint32_t ntouches;    /* touches noted so far (the policy's) */
    uint64_t touches[RESID_TOUCH_LOG]; /* launch indices of the latest touches, a ring */
    struct resid_fence *reading;       /* a cancelled eviction's copy that may still read the
                                          unit: every user waits for it until it is known done
                                          (other threads' members of a slab too) */
    struct resid_fence *ready;         /* its users wait for this until it is known done (a
                                          restore's copy, or the evictions that freed its
                                          chunks) */
    struct resid_slab *slab;           /* NULL for a single allocation */
    int64_t plan_alloc;                /* the installed plan's allocation it is, or -1 */
    bool plan_out;                     /* the plan moved it out: a touch before its prefetch
                                          departs from the plan */
    bool prefetching;                  /* a planned prefetch holds it across lock drops: a
                                          free waits for it (prefetched) */
};

/* A small managed allocation living in a slab. */
struct resid_member {
    uint64_t id;
    struct resid_unit *unit; /* the slab it lives in */
    uint32_t first, blocks;  /* its blocks in the slab */
};

/* A unit or member freed in stream order, waiting for its fence: an event recorded on its
   stream at or after the free (budget/shim_resid_reap.c). */
struct resid_pending {
    struct resid_unit *unit;     /* a unit to release, or NULL */
    struct resid_member *member; /* a member to take out of its slab, or NULL */
    struct resid_fence *fence;   /* NULL: not fenced yet (only with a stream) */
    CUstream stream; /* a unit's device chunks may be reused at once by this stream */
    struct resid_pending *next;
};

/* Why the last search for room failed, for the out-of-memory message. */
struct resid_oom {
    uint64_t pinned, moving, graph; /* units that could not be victims, by cause */
    uint64_t held;                  /* exported or shared: never moves (shim_resid_hold.c) */
    uint64_t mine;                  /* pinned by the searching thread's own operation */
    bool host_full;                 /* host_budget was spent */
    bool driver_failed;             /* a driver call failed meanwhile (or an eviction did) */
    uint64_t paused_ns;             /* waited for pinned units to come free */
};

/* Remaps whose host time is kept for the planner's model (link_remap = "measured"). */
#define RESID_REMAP_SAMPLES 64

/* The residency manager's one state (part of the shim's global context). */
struct resid_ctx {
    pthread_mutex_t lock;
    pthread_cond_t wake;               /* the mover has work */
    _Atomic bool on;                   /* managing new allocations (read without the lock) */
    const struct resid_driver *drv;    /* set once before on */
    const struct resid_policy *policy; /* set once before on */
    bool can_evict; /* host chunks available (host VMM, or accepted unmapped eviction) */
    bool unmapped;  /* evicted ranges stay unmapped (no host VMM) */
    CUmemLocation host_location; /* HOST, or HOST_NUMA and its node (shim_resid_host.c) */
    CUresult sticky;             /* a permanent device error seen: nothing moves any more */
    CUresult last_error;         /* the latest failed driver call's error */
    uint64_t epoch;              /* of the current victim search */
    CUdevice device;
    uint64_t gran, budget, host_budget, device_total;
    uint64_t dev_bytes;        /* device chunks that exist + visible unmanaged bytes */
    uint64_t dev_peak;         /* dev_bytes' peak: the resident peak (resid_dev_grow) */
    uint64_t unmanaged_bytes;  /* part of dev_bytes */
    uint64_t host_bytes;       /* host chunks that exist */
    uint64_t aside_bytes;      /* chunks set aside for good (a copy whose end is unknown) */
    struct resid_chunk *aside; /* those chunks, never reused */
    struct resid_chunk *free_dev, *free_host;
    uint64_t nfree_dev, nfree_host;             /* granules in the free pools */
    uint64_t handles_created, handles_released; /* physical allocations, for the exit log */
    uint64_t host_births;          /* allocations made in host memory (resid_back_on_host) */
    uint64_t placed, placed_bytes; /* allocations kept on the host (host_resident) */
    uint32_t placed_sizes_seen;    /* bit k: host_resident's entry k matched an allocation */
    struct resid_spare *spares;    /* freed ranges kept mapped, oldest first (shim_resid_spare.c) */
    uint64_t nspares, nspare_chunks;        /* how many, and their chunks (counted in dev_bytes) */
    uint64_t empty_slabs;                   /* slabs kept_empty */
    uint32_t remap_us[RESID_REMAP_SAMPLES]; /* host time of the first remaps (shim_resid_move.c) */
    uint32_t nremap_us;
    struct resid_pending *pending; /* stream-ordered frees, oldest first */
    uint32_t unfenced;             /* of them not fenced yet */
    CUdeviceptr *slots;            /* free arena addresses */
    size_t nslots, slot_cap;
    CUstream to_host, to_device; /* the shim's copy streams */
    CUevent *events;             /* pooled events */
    size_t nevents, event_cap;
    base_map units;           /* id -> struct resid_unit * */
    base_map members;         /* id -> struct resid_member * (small allocations in slabs) */
    struct resid_unit *slabs; /* newest first */
    struct resid_move *queue, *queue_tail; /* moves in flight, in submission order */
    bool mover_running;
    bool stopping;             /* the process is exiting: the mover ends, no new one starts */
    uint64_t fence_seq;        /* last fence sequence number given */
    uint64_t slack;            /* budget bytes kept for what the driver holds unseen */
    bool over_budget;          /* a restore that must happen even above the budget */
    pthread_cond_t prefetched; /* a prefetch let go of its unit (prefetching cleared) */
    pthread_cond_t remapped;   /* a remap made with the lock dropped is over */
    uint64_t remaps_unlocked;  /* remaps made with the lock dropped, and by the mover */
    uint64_t remaps_by_mover;
    struct resid_oom oom;
    pthread_t mover;
    uint64_t evictions, restores, cancelled, errors, stall_ns; /* totals, for the exit log */
    uint64_t bytes_out, bytes_in; /* totals: bytes of the evictions and restores started */
    /* The in-process plan (shim_resid_plan.c), all under the lock but plan_on. */
    struct shim_resid_plan *plan;   /* installed, or NULL */
    _Atomic bool plan_on;           /* plan != NULL (read without the lock) */
    bool plan_active;               /* its actions are being applied (from a step boundary) */
    uint64_t plan_armed_first;      /* the step's first launch when it was installed */
    uint64_t plan_done_seq;         /* actions applied before launches up to this one */
    double plan_native_us;          /* the last installed plan's native and predicted step */
    double plan_predicted_us;       /* times (0: none), kept after a withdrawal (exit line) */
    struct resid_unit **plan_units; /* [plan->nallocs]: the unit holding each one now */
    uint32_t *plan_order;           /* the allocations whose keys are positional, sorted by
                                       (pos, ordinal) */
    uint32_t plan_npos;             /* how many */
    struct resid_plan_counts {
        uint64_t evictions, prefetches; /* planned moves started */
        uint64_t missing;               /* actions whose allocation was not there or not ready */
        uint64_t departures;            /* touches of an allocation the plan had moved out */
        uint64_t reactive;              /* evictions for room while a plan was applied */
    } planned;
    struct resid_plan_mark { /* the totals when the last step closed with a plan installed: */
        struct resid_plan_counts planned; /* a plan_step record is the difference */
        uint64_t bytes_out, bytes_in, stall_ns;
    } plan_mark;
    uint64_t held_units, held_bytes; /* units held for good, and their bytes (reserved) */
    uint64_t transitions[8][8];      /* [from][to], for tests */
    /* Allocations on devices no manager serves (shim_resid_outside.c; kept by the first
       manager started): live addresses, and totals. */
    uint64_t *foreign;
    size_t nforeign, foreign_cap;
    uint64_t foreign_allocs, foreign_bytes;
    /* Stepping aside (shim_resid_verdict.c; the kinds of failure: shim_resid.h). Addresses of the
       allocations left to the driver go to the first manager's foreign list (their frees then
       leave every budget alone); the counts are this manager's. */
    bool stepped_aside;    /* for good: nothing new is managed, nothing more is evicted */
    uint32_t aside_streak; /* allocations in a row that stepped aside for a driver failure */
    uint64_t outside_allocs, outside_bytes;
    bool tried; /* its start was attempted (under the start lock, shim_resid_start.c) */
};

/* Whether u may never move again (exported, shared, or in a graph; holds: shim_resid_hold.c). */
static inline bool resid_unmovable(const struct resid_unit *u)
{
    return u->graph || u->held;
}

/* Whether an operation not yet submitted reads u through its host mapping: a fence now
   would not cover it, and a remap would pull the range from under it. */
static inline bool resid_read_through_host(const struct resid_unit *u)
{
    return atomic_load_explicit(&u->host_readers, memory_order_acquire) > 0;
}

/* The device memory a managed allocation of bytes needs when nothing already mapped has room
   for it: whole granules (a small one shares a slab, whose chunk is one granule). */
static inline uint64_t resid_managed_need(const struct resid_ctx *r, uint64_t bytes)
{
    return (bytes + r->gran - 1) / r->gran * r->gran;
}

/* Counts bytes more on the device (lock held), and the resident peak with them. */
static inline void resid_dev_grow(struct resid_ctx *r, uint64_t bytes)
{
    r->dev_bytes += bytes;
    if (r->dev_bytes > r->dev_peak)
        r->dev_peak = r->dev_bytes;
}

/* Bytes of chunk c. */
static inline uint64_t resid_chunk_bytes(const struct resid_ctx *r, const struct resid_chunk *c)
{
    return (uint64_t)c->grans * r->gran;
}

/* The largest managed allocation that shares a slab: half a chunk (plan_rules.h's slab_max). */
static inline uint64_t resid_slab_max(const struct resid_ctx *r)
{
    return r->gran / 2;
}

/* One residency manager per device (shim_resid_ctx.c): device D's is resid_ctxs[D], for D below
   RESID_MAX_DEVICES; a device beyond that has none (its allocations are left to the driver).
   Every internal function works on the manager passed as its first parameter, r. Each entry point
   (shim_resid_*) finds its manager once, before it takes a lock (by the current device, by the
   allocation it is given, or the primary one for the plan), and passes it down; a thread never
   holds two managers' locks. The mover thread gets its manager as its thread argument. */
#define RESID_MAX_DEVICES 16
extern struct resid_ctx resid_ctxs[RESID_MAX_DEVICES];

/* shim_resid_ctx.c — the managers, and which one an entry point works on */
/* Makes r an idle manager (nothing started) whose victims policy chooses (NULL: the reactive
   policy, which its start sets): what resid_ctxs[] hold before their start. r must not be in
   use. */
void resid_ctx_init(struct resid_ctx *r, const struct resid_policy *policy);
/* The calling thread's current device as the driver seam drv says it: 0 when drv lacks the call
   or the call fails (as core's shim_current_device). */
uint32_t resid_current_device(const struct resid_driver *drv);
/* The manager slot of the calling thread's current device (started or not), or NULL when that
   device has none. A failed driver call gets one more try; then the only manager started serves,
   if there is exactly one, else NULL. A driver without the call has device 0. */
struct resid_ctx *resid_current(void);
/* resid_current's manager if it has started, else NULL. */
struct resid_ctx *resid_current_started(void);
/* The manager for a launch or copy: the only one started, or with several the current device's
   (resid_current). NULL when none started. */
struct resid_ctx *resid_for_operation(void);
/* The started manager holding managed allocation or slab id, or NULL if none does. Takes each
   manager's lock in turn: call it with none held. */
struct resid_ctx *resid_for_id(uint64_t id);
/* Notes that r has started (called once per manager, under the start lock): the first becomes
   the primary. Returns how many managers had started before it (1: r is the second). */
uint32_t resid_note_started(struct resid_ctx *r);
/* The primary manager (the first started, which the in-process plan serves), or NULL. */
struct resid_ctx *resid_primary(void);
/* The k-th started manager (in start order), or NULL past the last. */
struct resid_ctx *resid_started_at(uint32_t k);
/* How many managers have started. */
uint32_t resid_nstarted(void);

/* shim_resid_ids.c — the tables by id (lock held), and the ids kept on the host (lock-free) */
/* The unit with id (tagged), or NULL. */
struct resid_unit *resid_find(struct resid_ctx *r, uint64_t id);
/* How many units the table holds. */
static inline size_t resid_nunits(const struct resid_ctx *r)
{
    return base_map_count(&r->units);
}
/* Adds u to the table; 0, or -1 when out of memory (the table unchanged). */
int resid_insert(struct resid_ctx *r, struct resid_unit *u);
/* Removes u from the table. */
void resid_erase(struct resid_ctx *r, struct resid_unit *u);
/* The member with id, or NULL. */
struct resid_member *resid_member_find(struct resid_ctx *r, uint64_t id);
/* Adds m to the member table; 0, or -1 when out of memory. */
int resid_member_insert(struct resid_ctx *r, struct resid_member *m);
/* Removes m from the member table. */
void resid_member_erase(struct resid_ctx *r, struct resid_member *m);
/* Calls fn(r, u, arg) on every unit u of r (fn may take u out of the table). */
void resid_each(struct resid_ctx *r, void (*fn)(struct resid_ctx *, struct resid_unit *, void *),
                void *arg);
/* Notes id among the units kept on the host for good (host_resident), which
   resid_placed_has answers without any lock; says once when the set is full. */
void resid_placed_note(uint64_t id);
/* Forgets id in that set (the unit is freed); no-op if absent. Lock-free. */
void resid_placed_forget(uint64_t id);
/* Whether id is in that set. Lock-free (any thread, any lock held). */
bool resid_placed_has(uint64_t id);

/* shim_resid_unit.c — unit records */
/* A new unit record of bytes (rounded up to whole chunks), state NONE; NULL on failure. */
struct resid_unit *resid_unit_new(struct resid_ctx *r, uint64_t bytes);
/* resid_unit_new with its virtual range reserved (nothing mapped); NULL on failure. */
struct resid_unit *resid_unit_reserve(struct resid_ctx *r, uint64_t bytes);
/* Frees u's record (its range and chunks must already be dealt with): the plan and the set of
   units kept on the host forget it. */
void resid_unit_free(struct resid_ctx *r, struct resid_unit *u);
/* u is going away: the installed plan forgets it (its allocation binds no unit). */
void resid_plan_unbind(struct resid_ctx *r, struct resid_unit *u);

/* shim_resid_fence.c — pooled events, fences, and the driver's failures */
/* An event from the pool (created on demand, timing disabled); NULL on failure. */
CUevent resid_event_get(struct resid_ctx *r);
/* Gives an event back to the pool. */
void resid_event_put(struct resid_ctx *r, CUevent e);
/* A fence owning event e (one reference); NULL on failure (e goes back to the pool). */
struct resid_fence *resid_fence_new(struct resid_ctx *r, CUevent e);
/* Another reference to f (NULL is fine). */
struct resid_fence *resid_fence_ref(struct resid_fence *f);
/* Drops a reference (NULL is fine); the event goes back to the pool with the last one. */
void resid_fence_drop(struct resid_ctx *r, struct resid_fence *f);
/* Makes chunk c wait for fence f before it is written again, keeping whichever of f and its
   present fence comes later on the eviction stream (all chunk fences are evictions). */
void resid_chunk_fence(struct resid_ctx *r, struct resid_chunk *c, struct resid_fence *f);
/* Notes that a driver call failed with rc (a sticky error stops all moves). */
void resid_driver_failed(struct resid_ctx *r, CUresult rc);
/* Nanoseconds of CLOCK_MONOTONIC. */
uint64_t resid_now_ns(void);

/* shim_resid_fsm.c — the state machine */
/* Moves u along event ev for cause (NULL: none given). Returns 0, or -1 when the table has no
   such transition (a bug: logged, u unchanged). Traces the transition with its cause. */
int resid_fsm(struct resid_ctx *r, struct resid_unit *u, enum shim_resid_event ev,
              const struct resid_cause *cause);
/* The state the table gives for (from, ev), or -1 if there is none. */
int resid_fsm_next(enum shim_resid_state from, enum shim_resid_event ev);
/* Name of a state or an event, for logs. */
const char *resid_state_name(enum shim_resid_state s);
const char *resid_event_name(enum shim_resid_event ev);

/* shim_resid_op.c — the calling thread's operation in progress */
/* While an operation is in progress (shim_resid_enter .. shim_resid_leave), each managed entry of
   its ids[] holds a handle instead of the id: the pinned unit's address with RESID_HANDLE_PINNED,
   plus RESID_HANDLE_HOST_READ while the operation reads the unit through its host mapping. A
   handle is never an id: ids count up from 1, and managed ones carry SHIM_MANAGED_ID_TAG (bit 62)
   and never bit 63; user-space addresses are below 2^47 and a unit is at least 8-aligned, so its
   address leaves bit 0 free. The handle bits and the id tag are distinct (asserted). */
#define RESID_HANDLE_PINNED    ((uint64_t)1 << 63)
#define RESID_HANDLE_HOST_READ ((uint64_t)1)
#define RESID_HANDLE_BITS      (RESID_HANDLE_PINNED | RESID_HANDLE_HOST_READ)
_Static_assert((RESID_HANDLE_BITS & SHIM_MANAGED_ID_TAG) == 0,
               "a handle's bits must differ from the managed-id tag");
_Static_assert(_Alignof(struct resid_unit) > RESID_HANDLE_HOST_READ,
               "a unit's address must leave the host-read bit free");
/* The unit a handle names. */
static inline struct resid_unit *resid_unit_of_handle(uint64_t handle)
{
    return (struct resid_unit *)(uintptr_t)(handle & ~RESID_HANDLE_BITS);
}
/* The calling thread's operation now holds handles in ids[0..n) (n 0: none), which a search for
   room must not wait for (its own pins). */
void resid_op_set(const uint64_t *ids, uint32_t n);
/* How many pins on u the calling thread's operation in progress holds. */
int resid_pinned_here(const struct resid_unit *u);
/* Whether the calling thread is making an operation's units resident (it holds pins). */
bool resid_in_operation(void);

#endif
