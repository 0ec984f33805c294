/* shim_resid.h — the residency room's seam: what the rooms above it (the plan, the hooks,
 * shim_main.c) may call of the residency manager; every function declared here is defined by a
 * file of shim/resid/ itself (the room's entry points), under the heading that names it. The
 * rooms inside residency, below its entry points, are budget/, moves/, pools/, state/ and
 * driver/ (docs/HOUSE.md); none of them is seen from outside.
 *
 * The residency manager keeps each device's managed allocations within the budget by moving
 * units between device memory and pinned host memory (docs/residency.md). It depends on the
 * core room (shim_core.h) and the trace writer below it, never on the plan or the hooks: the
 * in-process plan reaches it as a compiled plan (struct shim_resid_plan below), made by
 * shim/plan/ and installed here.
 *
 * Errors: an entry point never fails the program for residency's own trouble: it says whether it
 * handled the call, and a CUresult for the program only where the contract says so.
 *
 * Driver failures of libshim's own calls, in three kinds (shim_resid_verdict.c decides):
 *   - transient: one call failed (any error but the two below). What it was for is rolled back
 *     and tried again: an allocation up to three times, a move at its next chance. A single
 *     failure never reaches the program.
 *   - persistent ("sticky" in the simulator's words, SIMGPU_FAIL=E:N:sticky): the same machinery
 *     keeps failing. An allocation whose every try failed in a driver call (or found the budget
 *     full with evictions failing in driver calls) is not refused: it steps aside, going to the
 *     driver as it would without libshim, outside the budget, logged once with the failed call
 *     and its error. When two allocations in a row step aside so, residency steps aside for good:
 *     every later allocation goes to the driver outside the budget, nothing more is evicted,
 *     managed allocations stay valid where they are (an evicted one is read through the host link
 *     until a restore succeeds), and an operation on a range that cannot be made usable again
 *     fails with the driver's error rather than touch wrong data.
 *   - a device error (resid_sticky_error: the context is unusable, every later call of the
 *     program's too fails with it): the program gets that error, as it would without libshim.
 * Out of memory from the driver (the device is full) is not persistent: that allocation goes to
 * the driver, which answers as it would without libshim. So out of memory reaches the program
 * only when the device has no room, or when the budget is full of what cannot move after every
 * bounded wait (moves and submissions in progress are waited for first). */
#ifndef SHIM_RESID_H
#define SHIM_RESID_H

#include "shim_core.h"

/* shim_resid_plan.c — the in-process plan, compiled (the plan room makes it, residency executes
   it) */
/* How a live allocation is recognised as model allocation i in every later step. */
struct shim_resid_plan_key {
    bool movable;     /* a managed allocation with a unit of its own: the plan may move it */
    bool by_id;       /* made before the step was recorded (weights): the same id every step */
    uint64_t id;      /* by_id: its allocation id */
    uint64_t pos;     /* otherwise: launches from the start of its step when it was made */
    uint32_t ordinal; /* and how many allocations were made before it at that launch index */
};

enum shim_resid_plan_act_kind { SHIM_RESID_PLAN_EVICT, SHIM_RESID_PLAN_PREFETCH };

/* One action, done just before a launch position. */
struct shim_resid_plan_act {
    uint32_t alloc; /* model allocation */
    uint8_t kind;   /* enum shim_resid_plan_act_kind */
};

/* A compiled plan: immutable once installed. */
struct shim_resid_plan {
    uint64_t step_len; /* launches per step it was made for */
    uint64_t model_step, model_first_seq;
    uint32_t nallocs;
    struct shim_resid_plan_key *keys; /* [nallocs] */
    uint32_t *act_first;              /* [step_len + 1]: actions before launch k are
                                         act[act_first[k] .. act_first[k + 1]) */
    struct shim_resid_plan_act *act;
    /* What the planner predicts for one step at this budget (the model's virtual time). */
    uint64_t budget, native_peak, floor, predicted_peak;
    double native_us, predicted_us, stall_us, bound_us;
    uint64_t bytes_to_host, bytes_to_device;
    uint32_t evictions, prefetches; /* per step */
    bool feasible;
    double remap_us; /* the mover's host time per move the plan was made with */
    /* The link it was planned for, for the log: "link X GB/s to the device measured, Y GB/s to
       the host assumed, both at once". */
    char link[224];
};

/* Frees a compiled plan (NULL is fine). */
void shim_resid_plan_free(struct shim_resid_plan *p);

/* Each entry point below finds the manager it works on once, before it takes a lock. */

/* shim_resid_start.c — a manager's start, its stop, and its totals */
/* Starts residency on first use (device facts, budget, streams); whether it is on. */
bool shim_resid_start(void);
/* At exit: lets the moves in flight complete (at most about a second, so that each has its
   move record and the exit line's totals are the trace's), then ends the mover thread (it must
   not call the driver while the process and the driver tear down); moves still in flight
   after that are abandoned. */
void shim_resid_stop(void);
/* Residency's totals since it started, for the exit line. */
struct shim_resid_totals {
    uint64_t budget;               /* bytes */
    uint64_t resident_peak;        /* the most device bytes held at once (chunks that existed,
                                      free pools and spares included, and unmanaged bytes): the
                                      figure the budget bounds */
    double plan_native_us;         /* the last installed plan's step time without a budget */
    double plan_predicted_us;      /* and under it (its model's time); both 0: no plan */
    uint64_t evictions, cancelled; /* evictions started, and how many were cancelled */
    uint64_t restores, errors;     /* restores started; moves that failed */
    uint64_t bytes_to_host, bytes_to_device, stall_ns;
    bool planned; /* a plan was installed or planned moves were made */
    uint64_t planned_evictions, planned_prefetches, planned_missing, departures;
    uint64_t reactive_evictions;                /* evictions for room while a plan was applied */
    int device;                                 /* the device residency serves */
    uint64_t foreign_allocs, foreign_bytes;     /* allocations on other devices, left alone */
    uint64_t remaps, remaps_by_mover;           /* moves' remaps, and those the mover made */
    uint64_t handles_created, handles_released; /* physical allocations for chunks */
    uint64_t host_births; /* allocations made in host memory: the budget was held by work in
                             progress (each read through the link until restored) */
    uint64_t placed, placed_bytes;          /* allocations kept on the host (host_resident) */
    uint32_t placed_sizes_seen;             /* bit k: host_resident's entry k was matched */
    uint64_t outside_allocs, outside_bytes; /* allocations stepped aside (SHIM_RESID_ASIDE) */
    bool stepped_aside;                     /* for good: nothing new is managed */
};
/* Fills t with the k-th device manager's totals (in start order: 0 is the primary one, which
   the plan serves); false (t zeroed) when there is no k-th. */
bool shim_resid_totals(uint32_t k, struct shim_resid_totals *t);

/* Whether a move of residency's (a copy on its own streams) may still run on the calling
   thread's current device: a cuMemFree now would wait for it (the driver synchronises the
   context). False when residency is off. */
bool shim_resid_copies_pending(void);
/* The median host time in microseconds of libshim's first remaps of a unit's range (up to 64
   timed), or -1 when none was timed yet. */
double shim_resid_remap_us(void);
/* Whether managers serve several devices (the in-process planner then stays off). */
bool shim_resid_several(void);

/* shim_resid_alloc.c — managed allocations made */
/* What the driver should do with an allocation residency was asked about. */
enum shim_resid_verdict {
    SHIM_RESID_DRIVER, /* not residency's: the driver allocates it, counted in the budget */
    SHIM_RESID_DONE,   /* residency handled it: *rc is what the program gets */
    SHIM_RESID_ASIDE,  /* residency's machinery failed (or stepped aside for good): the driver
                          allocates it as without libshim, outside the budget
                          (shim_resid_outside_add) */
};
/* Makes a managed allocation of bytes for the program when it should be one: SHIM_RESID_DONE
   (*rc: CUDA_SUCCESS with *dptr set, out of memory when the budget is full of what cannot move
   after every bounded wait, or the device's permanent error), SHIM_RESID_DRIVER when it is not
   one to manage, SHIM_RESID_ASIDE when residency could not serve it for a driver failure of its
   own. */
enum shim_resid_verdict shim_resid_alloc(CUdeviceptr *dptr, size_t bytes, CUstream stream,
                                         bool per_thread, bool async, CUresult *rc);

/* shim_resid_free.c — managed allocations freed */
/* Frees managed allocation id (already out of the registry): at once after the device
   is idle, or (async) in the order of stream. CUDA_ERROR_INVALID_VALUE if unknown. */
CUresult shim_resid_free(uint64_t id, CUstream stream, bool per_thread, bool async);
/* The program is destroying stream: frees ordered on it that wait to be fenced are fenced now,
   while it can still be named. Before the real cuStreamDestroy; nothing when no residency
   manager runs. */
void shim_resid_stream_destroyed(CUstream stream);

/* shim_resid_unmanaged.c — what the budget counts but residency does not manage */
/* Makes room in the budget for an unmanaged allocation of bytes: SHIM_RESID_DRIVER (room made:
   allocate and count it), SHIM_RESID_DONE with *rc out of memory (nothing can move), or
   SHIM_RESID_ASIDE (residency's machinery failed or stepped aside: allocate outside the budget,
   shim_resid_outside_add). */
enum shim_resid_verdict shim_resid_unmanaged_room(uint64_t bytes, CUresult *rc);
/* Counts an allocation the driver made at addr outside the budget after SHIM_RESID_ASIDE, and
   remembers addr so that its free leaves the budget alone (shim_resid_foreign_remove finds it). */
void shim_resid_outside_add(uint64_t addr, uint64_t bytes);
/* The driver ran out of memory for an unmanaged allocation: frees device memory if it
   can; true if retrying may succeed. */
bool shim_resid_unmanaged_retry(uint64_t bytes);
/* Counts an unmanaged allocation of bytes in (add) or out of the budget. */
void shim_resid_unmanaged_add(uint64_t bytes, bool add);
/* Turns the driver's (free, total) into the budget view. */
void shim_resid_mem_info(size_t *free_bytes, size_t *total);

/* shim_resid_outside.c — allocations on devices no manager serves */
/* Whether the calling thread's current device is not the one residency serves (residency
   is started first); true with that device in *dev. */
bool shim_resid_foreign(int *dev);
/* Counts an allocation the driver made at addr on device dev, which residency does not
   serve, and remembers addr; logs the first one. */
void shim_resid_foreign_add(uint64_t addr, uint64_t bytes, int dev);
/* Forgets the allocation at addr on another device; whether it was one. */
bool shim_resid_foreign_remove(uint64_t addr);
/* Whether addr is an allocation on another device, or outside the budget (it is kept). */
bool shim_resid_foreign_has(uint64_t addr);

/* shim_resid_touch.c — what an operation needs before it is submitted */
/* Before a launch, copy or memset on stream that touches allocations ids: managed units are
   made resident and pinned, and the stream is noted for the next fence. Returns true if any
   was managed; then the managed entries of ids hold handles until shim_resid_leave, which
   must be called once the operation was submitted (or failed) and puts the ids back. Takes
   the residency lock at most once, and only when an id is managed. *refuse is set to an error
   when a range could not be made usable (a remap the driver keeps refusing, an unmapped
   eviction that cannot come back): the operation must then not be submitted, and the program
   gets that error instead of a fault; it is left alone otherwise. launch: the operation is a
   kernel launch, and the plan's moves due before it are started first; a copy or memset leaves
   them to the next launch or allocation, so that planned evictions queue on the link behind
   the program's own copies (such as the loss read that ends a step), not ahead of them. */
bool shim_resid_enter(uint64_t *ids, uint32_t n, CUstream stream, bool per_thread, bool launch,
                      CUresult *refuse);
/* After the operation was submitted: unpins (lock-free) and restores ids. */
void shim_resid_leave(uint64_t *ids, uint32_t n);

/* shim_resid_place.c — allocations kept on the host for good */
/* Whether allocation id is kept in host memory for good (host_resident): a model of the step
   leaves it out. Lock-free (any thread, any lock held). */
bool shim_resid_kept_on_host(uint64_t id);

/* shim_resid_hold.c — allocations that must never move, and the ranges pointer queries report */
/* A managed allocation as the program sees it. */
struct shim_managed_range {
    uint64_t id;      /* the allocation's id (stable for its life) */
    CUdeviceptr base; /* its range: a unit's reservation, a small allocation's blocks */
    uint64_t size;
    CUdevice device; /* the device it was allocated on */
};
/* Whether p lies inside a managed allocation; then fills *r. Takes the residency lock only
   when p is managed. */
bool shim_resid_range(CUdeviceptr p, struct shim_managed_range *r);
/* A hold in progress (shim_resid_hold .. shim_resid_hold_done). */
struct shim_hold {
    bool active;
    enum shim_pin_reason reason;
    uint64_t unit_id, alloc_id, addr, bytes;
    uint32_t from; /* enum shim_resid_state before the hold */
};
/* Before an entry point that hands the memory at p to a user libshim cannot follow: false if
   p is not managed (forward the call as is). Else the allocation (its slab, if small) is
   brought to the device, waiting on the host for copies in flight, and held there: *rc is
   CUDA_SUCCESS (forward the call, then call shim_resid_hold_done) or the error the program
   gets instead (nothing held; the call must not be forwarded). */
bool shim_resid_hold(CUdeviceptr p, enum shim_pin_reason why, struct shim_hold *h, CUresult *rc);
/* As shim_resid_hold for the managed unit one of whose physical chunks is handle. */
bool shim_resid_hold_handle(CUmemGenericAllocationHandle handle, enum shim_pin_reason why,
                            struct shim_hold *h, CUresult *rc);
/* After the forwarded call: ok makes the hold permanent (traced and logged once per
   allocation and reason); a failed call undoes it. Nothing when h holds nothing. */
void shim_resid_hold_done(struct shim_hold *h, bool ok);

/* shim_resid_plan.c — the in-process plan's executor */
/* Installs compiled plan p (taking it; any earlier plan goes): applied from the next step
   boundary, and recorded in the trace (a plan record). Freed at once, and not recorded, if the
   step changed meanwhile. */
void shim_resid_plan_install(struct shim_resid_plan *p);
/* Step `step`, which began at launch first_seq, has closed (from the step detector, never
   under the plan recorder's lock: this takes residency's). Under an active plan it records what
   the plan achieved in that step (a plan_step record); with a plan installed it marks the
   totals the next step's record counts from. Cheap without a plan. */
void shim_resid_plan_step_closed(uint64_t step, uint64_t first_seq);
/* Removes the installed plan; moves are reactive again. Logs why, unless why is NULL (the
   caller says it later, if at all). Returns whether a plan was installed. */
bool shim_resid_plan_withdraw(const char *why);
/* Applies the plan's actions due before the next launch (launches touching no managed memory). */
void shim_resid_plan_tick(void);
/* The budget a plan must hold (the residency budget less its slack). */
uint64_t shim_resid_plan_budget(void);
/* The largest managed allocation that shares a slab; the device granularity. */
uint64_t shim_resid_slab_max(void);
uint64_t shim_resid_granularity(void);
/* Whether residency has started (and manages allocations). */
bool shim_resid_started(void);
/* Whether a plan is installed (one relaxed load). */
bool shim_resid_plan_on(void);

#endif
