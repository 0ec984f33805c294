/* shim_internal.h — internal interfaces of the preload library, grouped by defining file.
 *
 * The shim exports only the hooks of shim_hooks.h and dlsym; everything here is
 * hidden (-fvisibility=hidden). Errors inside the shim never reach the program:
 * a hook always returns what the real driver returned, and on an internal
 * failure the shim degrades to pass-through for the object concerned and logs
 * it once. */
#ifndef SHIM_INTERNAL_H
#define SHIM_INTERNAL_H

#include "shim_hooks.h"
#include "shim_trace.h"

#include "conf.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Life of the shim in this process. */
enum shim_state {
    SHIM_UNINIT,       /* nothing done yet */
    SHIM_INITIALISING, /* one thread is resolving the driver */
    SHIM_READY,        /* recording */
    SHIM_PASSTHROUGH,  /* real functions only: mode off, bad configuration, failure, fork child */
    SHIM_FAILED        /* the real driver could not be resolved: hooks return an error */
};

/* The shim's one global context. Fields are written during initialisation
   (before state becomes READY, published with release order) unless noted. */
/* Devices that the budgets option can name (each device's manager: shim_resid_ctx.c). */
#define SHIM_MAX_DEVICE_BUDGETS 16

struct shim_ctx {
    _Atomic int state;           /* enum shim_state */
    struct shim_real_table real; /* the real driver's functions (shim_real.c) */
    void *driver;                /* dlopen handle of libcuda.so.1 */
    int mode;                    /* CONF_MODE_* */
    uint32_t record;             /* CONF_RECORD_* bits */
    int profile_iterations;
    uint64_t min_managed_bytes;
    conf_size budget, host_budget; /* as configured; resolved when residency starts */
    conf_size device_budget[SHIM_MAX_DEVICE_BUDGETS]; /* budgets: device d's when set[d] */
    bool device_budget_set[SHIM_MAX_DEVICE_BUDGETS];
    bool unmapped_eviction;      /* evict without host VMM (ranges left unmapped) */
    int planner;                 /* CONF_PLANNER_* */
    bool link_shared;            /* link_duplex = "shared": the planner's link is half duplex */
    double link_both_gbps[2];    /* link_both_gbps (H2D, D2H); 0, 0 when not set */
    double link_remap_us;        /* link_remap in us; -1: measured */
    _Atomic uint64_t launch_seq; /* next launch index (relaxed atomic) */
    _Atomic uint64_t next_id;    /* next allocation / function / graph id */
};

extern struct shim_ctx shim;

/* True while the calling thread runs shim code that may call the driver: such
   calls go straight to the real functions (thread-local). */
extern __thread int shim_inside __attribute__((tls_model("initial-exec")));

/* shim_state.c */
/* Slow path of shim_active: resolves the driver on first use. */
bool shim_active_slow(void);
/* Whether the real table is usable (READY or PASSTHROUGH). */
bool shim_real_ready(void);

/* Whether hooks should record (true) or pass through (false); resolves the
   driver on first use. One atomic load once ready. */
static inline bool shim_active(void)
{
    if (atomic_load_explicit(&shim.state, memory_order_acquire) == SHIM_READY)
        return !shim_inside;
    return shim_active_slow();
}
/* A fresh process-unique id (never 0). */
uint64_t shim_new_id(void);

/* shim_real.c — the only resolver of real symbols */
/* The real dlsym (never the shim's override), and its address (NULL if not found). */
void *shim_real_dlsym(void *handle, const char *name);
void *shim_real_dlsym_address(void);
/* Opens the driver and fills shim.real; returns 0, or -1 (logged). */
int shim_real_resolve(void);
/* The hook whose real function is fn, or NULL. */
void *shim_hook_for_real(void *fn);
/* The hook named name, or NULL. */
void *shim_hook_by_name(const char *name);
/* Writes the names of the entry points in SHIM_RESID_NEEDS that the resolved driver lacks into
   buf (comma-separated, cut to size bytes with its NUL); returns how many are missing (0: the
   residency manager can run). Call after shim_real_resolve succeeded. */
int shim_real_resid_missing(char *buf, size_t size);

/* shim_log.c — allocation-free, rate-limited */
enum shim_log_level { SHIM_LOG_ERROR = 1, SHIM_LOG_WARN, SHIM_LOG_INFO, SHIM_LOG_DEBUG };
/* Sets the level (0: off) and, unless off, opens log.file's pattern (NULL or empty: standard
   error) with %p and %r (rank) expanded; a file that cannot be used is reported once on
   standard error, which the log then keeps. */
void shim_log_open(int level, const char *pattern, int rank);
void shim_log(enum shim_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Logs at most once per call site (pass a static flag). */
#define SHIM_LOG_ONCE(level, ...)                                                                  \
    do {                                                                                           \
        static _Atomic int once_;                                                                  \
        if (!atomic_exchange(&once_, 1))                                                           \
            shim_log(level, __VA_ARGS__);                                                          \
    } while (0)

/* shim_registry.c — live allocations, found by address */
/* Ids of managed allocations carry this bit, so a launch scan tells them apart for free. */
#define SHIM_MANAGED_ID_TAG ((uint64_t)1 << 62)
struct shim_alloc {
    uint64_t id, addr, size;
    int kind; /* enum shim_alloc_kind */
};
/* Adds [addr, addr+size); returns its id (0 if it could not be tracked). */
uint64_t shim_registry_add(uint64_t addr, uint64_t size, int kind);
/* Adds [addr, addr+size) for its alloc/free records only: it is never found by address (a
   small allocation inside a slab, whose range is found instead); its id, or 0. */
uint64_t shim_registry_add_unplaced(uint64_t addr, uint64_t size, int kind);
/* Puts a slab's range [addr, addr+size) in the address table: lookups inside it answer the
   member set with shim_registry_slab_set, else slab_id. Returns its map, or NULL (out of
   memory: nothing placed). */
struct shim_slab_map *shim_registry_add_slab(uint64_t addr, uint64_t size, uint64_t slab_id);
/* Names member_id (0: none) as the owner of [addr, addr+size) inside slab map m. */
void shim_registry_slab_set(struct shim_slab_map *m, uint64_t addr, uint64_t size,
                            uint64_t member_id);
/* Takes slab map m's range out of the address table; the map is kept for reuse. */
void shim_registry_remove_slab(struct shim_slab_map *m);
/* Removes the allocation starting at addr; fills *out and returns true if found. */
bool shim_registry_remove(uint64_t addr, struct shim_alloc *out);
/* Removes every allocation inside [addr, addr+size) of the given kind; calls fn on each. */
void shim_registry_remove_range(uint64_t addr, uint64_t size, int kind,
                                void (*fn)(const struct shim_alloc *));
/* The most bytes of device allocations (every kind but pinned host memory, as the program asked
   for them) live at once so far: what `shim-report summary` calls peak_device_bytes. */
uint64_t shim_registry_device_peak(void);
/* Calls fn(record, ctx) for every live allocation, under the registry's lock (fn must not call
   the registry). */
void shim_registry_each(void (*fn)(const struct shim_alloc *, void *), void *ctx);

/* The address table, read lock-free on the launch path (written by shim_registry.c only):
   64 KiB granules over the 48-bit address space in 1 GiB leaves; each granule holds up to
   two ranges inline under a sequence lock (odd version: being written). */
#define SHIM_REG_GRANULE_SHIFT 16
#define SHIM_REG_LEAF_SHIFT    14
#define SHIM_REG_TOP_SIZE      ((size_t)1 << (48 - SHIM_REG_GRANULE_SHIFT - SHIM_REG_LEAF_SHIFT))
#define SHIM_REG_LEAF_SIZE     ((size_t)1 << SHIM_REG_LEAF_SHIFT)
#define SHIM_REG_MIN_TRACKED   ((uint64_t)1 << SHIM_REG_GRANULE_SHIFT)
struct shim_reg_slot {
    _Atomic uint64_t addr, end, id;
};
struct shim_granule {
    _Atomic uint32_t version;
    struct shim_reg_slot s[2];
};
extern struct shim_granule *_Atomic shim_registry_top[SHIM_REG_TOP_SIZE];

/* Id in the slot if it holds addr (0 otherwise). Acquire loads keep the closing version
   read after them (no fence needed; plain loads on x86). */
static inline uint64_t shim_reg_slot_match(const struct shim_reg_slot *sl, uint64_t addr)
{
    uint64_t a = atomic_load_explicit(&sl->addr, memory_order_acquire);
    uint64_t end = atomic_load_explicit(&sl->end, memory_order_acquire);
    return addr >= a && addr < end ? atomic_load_explicit(&sl->id, memory_order_acquire) : 0;
}

/* A slab's range in the address table: its slot's id is the map's address tagged with
   SHIM_REG_SLAB_TAG, and the map names the allocation owning each 512-byte block (0: none,
   then the slab's own id answers). Maps are never freed, only reused, so a lock-free reader
   never follows a dangling pointer. */
#define SHIM_REG_SLAB_TAG   ((uint64_t)1 << 63)
#define SHIM_REG_SLAB_SHIFT 9
struct shim_slab_map {
    uint64_t base, size, slab_id;
    _Atomic uint64_t *member; /* size >> SHIM_REG_SLAB_SHIFT entries */
    struct shim_slab_map *next_free;
};

/* The allocation in slab map m (tagged slot id) holding addr, or the slab's id. */
static inline uint64_t shim_reg_slab_member(uint64_t tagged, uint64_t addr)
{
    const struct shim_slab_map *m =
        (const struct shim_slab_map *)(uintptr_t)(tagged & ~SHIM_REG_SLAB_TAG);
    uint64_t off = addr - m->base;
    uint64_t id = off < m->size ? atomic_load_explicit(&m->member[off >> SHIM_REG_SLAB_SHIFT],
                                                       memory_order_acquire)
                                : 0;
    return id ? id : m->slab_id;
}

/* Id of the allocation containing addr, 0 if none (lock-free; retries while a writer changes
   the granule). Inside a slab, the member allocation's id (the slab's when no member holds
   that block). */
static inline uint64_t shim_registry_find(uint64_t addr)
{
    if (addr >> 48)
        return 0;
    struct shim_granule *leaf = atomic_load_explicit(
        &shim_registry_top[addr >> (SHIM_REG_GRANULE_SHIFT + SHIM_REG_LEAF_SHIFT)],
        memory_order_acquire);
    if (!leaf)
        return 0;
    struct shim_granule *e = &leaf[(addr >> SHIM_REG_GRANULE_SHIFT) & (SHIM_REG_LEAF_SIZE - 1)];
    for (;;) {
        uint32_t v = atomic_load_explicit(&e->version, memory_order_acquire);
        uint64_t found = shim_reg_slot_match(&e->s[0], addr);
        if (!found)
            found = shim_reg_slot_match(&e->s[1], addr);
        if (!(v & 1) && atomic_load_explicit(&e->version, memory_order_relaxed) == v)
            return found & SHIM_REG_SLAB_TAG ? shim_reg_slab_member(found, addr) : found;
    }
}

/* shim_params.c — kernel parameter layouts and pointer scanning */
struct shim_func {
    uint64_t id;
    int nparams; /* parameters the driver described */
    uint32_t nwords;
    /* the 8-byte aligned words of the parameter block: parameter index and the
       word's offset inside that parameter */
    struct shim_word {
        uint16_t param;
        uint16_t offset;
    } * words;
    _Atomic uint32_t gen;       /* unload generation it was last read under (shim_params.c) */
    uint64_t name_hash;         /* of the driver's name for it, to tell a reused handle */
    struct shim_func *replaced; /* the stale description this one replaced, never freed:
                                   a launch on another thread may still read it */
};
/* The cached description of f (resolving it on first use, and again on the first use after a
   module or library unload); never NULL. Lock-free in steady state. */
const struct shim_func *shim_func_get(CUfunction f);
/* A module or library was unloaded: its function handles may come back describing other
   kernels, so every cached description is checked again at its next use. */
void shim_params_invalidate(void);

/* shim_scan.c — the allocations a launch touches */
#define SHIM_SCAN_LOCAL     64   /* ids kept in the caller's struct */
#define SHIM_SCAN_MAX_WORDS 4096 /* CUDA caps kernel parameters at 32,764 bytes */
/* One launch's touched allocations: ids[0..n), each once. ids is `local`, the calling thread's
   buffer, or (locked) a buffer shared while memory is short. */
struct shim_scan {
    uint64_t *ids;
    uint32_t n;
    bool locked;
    uint64_t local[SHIM_SCAN_LOCAL];
};
/* Fills s with every allocation the launch's parameter words (kernelParams through fn's
   layout, or extra's CU_LAUNCH_PARAM_BUFFER_POINTER block) point into, duplicates removed, in
   time linear in the words. Lock-free unless memory is short (then launches with more than
   SHIM_SCAN_LOCAL words serialise until shim_scan_release). Never fails. */
void shim_scan_params(const struct shim_func *fn, void **params, void **extra, struct shim_scan *s);
/* Releases the shared buffer (shim_scan_release only). */
void shim_scan_unlock(void);
/* Done with s's ids (they are invalid afterwards); releases the shared buffer if s held it. */
static inline void shim_scan_release(struct shim_scan *s)
{
    if (__builtin_expect(s->locked, 0)) {
        s->locked = false;
        shim_scan_unlock();
    }
}

/* shim_steps.c — training step detection */
/* Feeds one launch (sequence number and function id). */
void shim_steps_launch(uint64_t seq, uint64_t func_id);
/* The host blocked on the device (a synchronisation or a synchronous copy). */
void shim_steps_host_sync(void);
/* Launches per training step while the job is in steady state, 0 otherwise. */
uint64_t shim_steps_length(void);
/* Steps closed so far, which is also the number of the step in progress (steps count from 0). */
uint64_t shim_steps_closed(void);
/* Whether launches now belong to a profiled step (kernels are timed). */
bool shim_steps_profiling(void);
/* The first launch index of the current step while steady (the step after the last one closed). */
uint64_t shim_steps_first(void);

/* shim_resid_plan.c — the in-process plan, seen from outside residency */
struct shim_plan;
/* Installs compiled plan p (taking it; any earlier plan goes): applied from the next step
   boundary, and recorded in the trace (a plan record). Freed at once, and not recorded, if the
   step changed meanwhile. */
void shim_resid_plan_install(struct shim_plan *p);
/* Step `step`, which began at launch first_seq, has closed (from the step detector, never
   under the plan recorder's lock: this takes residency's). Under an active plan it records what
   the plan achieved in that step (a plan_step record); with a plan installed it marks the
   totals the next step's record counts from. Cheap without a plan. */
void shim_resid_plan_step_closed(uint64_t step, uint64_t first_seq);
/* Removes the installed plan, logging why; moves are reactive again. */
void shim_resid_plan_withdraw(const char *why);
/* Applies the plan's actions due before the next launch (launches touching no managed memory). */
void shim_resid_plan_tick(void);
/* The budget a plan must hold (the residency budget less its slack). */
uint64_t shim_resid_plan_budget(void);
/* The median host time in microseconds of libshim's first remaps of a unit's range (up to 64
   timed), or -1 when none was timed yet. */
double shim_resid_remap_us(void);
/* The largest managed allocation that shares a slab; the device granularity. */
uint64_t shim_resid_slab_max(void);
uint64_t shim_resid_granularity(void);
/* Whether residency has started (and manages allocations). */
bool shim_resid_started(void);
/* Whether managers serve several devices (the in-process planner then stays off). */
bool shim_resid_several(void);
/* Whether a plan is installed (one relaxed load). */
bool shim_resid_plan_on(void);

/* shim_timing.c — kernel durations in profiled steps */
/* Records an event before a launch on stream; returns a slot to close, or -1. */
int shim_timing_begin(CUstream stream, bool per_thread);
/* Records the closing event of slot after the launch of seq. */
void shim_timing_end(int slot, CUstream stream, bool per_thread, uint64_t seq);
/* Records an event before one of the residency manager's copies on its stream while the step
   model is recorded (shim_plan_recording), for the first 64 copies each way (to_device: a
   restore); returns a slot to close, or -1. */
int shim_timing_copy_begin(CUstream stream, bool to_device);
/* Records the closing event of slot after a copy of bytes (to_device: a restore). */
void shim_timing_copy_end(int slot, CUstream stream, bool to_device, uint64_t bytes);
/* Gives slot back when its launch (or copy) failed. */
void shim_timing_cancel(int slot);
/* Emits the durations of completed timed launches (called at host syncs). */
void shim_timing_collect(void);

/* shim_capture.c — streams being captured into graphs */
void shim_capture_begin(CUstream stream, bool per_thread);
void shim_capture_end(CUstream stream, bool per_thread);
bool shim_capture_active(CUstream stream, bool per_thread);

/* shim_streams.c — the program's streams (libshim waits for the program's work alone) */
/* Lists stream s, which the program created. */
void shim_streams_created(CUstream s);
/* Forgets s, which the program destroys (its work may still run: the next wait is a full one). */
void shim_streams_destroyed(CUstream s);
/* Notes that the calling thread queues work on its per-thread default stream. */
void shim_streams_note_per_thread(void);
/* Notes work queued on stream (per_thread: through a _ptsz/_ptds entry point, where NULL names
   the per-thread stream); cheap after a thread's first per-thread use. */
static inline void shim_streams_note(CUstream stream, bool per_thread)
{
    if ((per_thread && !stream) || stream == CU_STREAM_PER_THREAD)
        shim_streams_note_per_thread();
}
/* Waits until the program's queued work is done, but not libshim's own copies where the
   program's streams can be told apart (else it synchronises the context). CUDA_SUCCESS, or the
   driver's error (a sticky one is returned as the device reports it). */
CUresult shim_streams_sync_program(void);

/* shim_resid_*.c — the residency manager (its own state is in shim_resid.h) */
/* Starts residency on first use (device facts, budget, streams); whether it is on. */
bool shim_resid_start(void);
/* Makes a managed allocation of bytes for the program when it should be one: true if it
   handled the call (*rc says how it went), false to let the driver allocate instead. */
bool shim_resid_alloc(CUdeviceptr *dptr, size_t bytes, CUstream stream, bool per_thread, bool async,
                      CUresult *rc);
/* Frees managed allocation id (already out of the registry): at once after the device
   is idle, or (async) in the order of stream. CUDA_ERROR_INVALID_VALUE if unknown. */
CUresult shim_resid_free(uint64_t id, CUstream stream, bool per_thread, bool async);
/* Makes room in the budget for an unmanaged allocation of bytes; 0, or -1 when nothing
   can move (the allocation should fail with out-of-memory). */
int shim_resid_unmanaged_room(uint64_t bytes);
/* The driver ran out of memory for an unmanaged allocation: frees device memory if it
   can; true if retrying may succeed. */
bool shim_resid_unmanaged_retry(uint64_t bytes);
/* Counts an unmanaged allocation of bytes in (add) or out of the budget. */
void shim_resid_unmanaged_add(uint64_t bytes, bool add);
/* Whether the calling thread's current device is not the one residency serves (residency
   is started first); true with that device in *dev. */
bool shim_resid_foreign(int *dev);
/* Counts an allocation the driver made at addr on device dev, which residency does not
   serve, and remembers addr; logs the first one. */
void shim_resid_foreign_add(uint64_t addr, uint64_t bytes, int dev);
/* The calling thread's current device (its context's), for the trace: 0 when the driver
   cannot say. */
uint32_t shim_current_device(void);
/* Forgets the allocation at addr on another device; whether it was one. */
bool shim_resid_foreign_remove(uint64_t addr);
/* Turns the driver's (free, total) into the budget view. */
void shim_resid_mem_info(size_t *free_bytes, size_t *total);
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
/* At exit: ends the mover thread (it must not call the driver while the process and the
   driver tear down); moves still in flight are abandoned. */
void shim_resid_stop(void);
/* Residency's totals since it started, for the exit line. */
struct shim_resid_totals {
    uint64_t budget;               /* bytes */
    uint64_t evictions, cancelled; /* evictions started, and how many were cancelled */
    uint64_t restores, errors;     /* restores started; moves that failed */
    uint64_t bytes_to_host, bytes_to_device, stall_ns;
    bool planned; /* a plan was installed or planned moves were made */
    uint64_t planned_evictions, planned_prefetches, planned_missing, departures;
    uint64_t reactive_evictions;            /* evictions for room while a plan was applied */
    int device;                             /* the device residency serves */
    uint64_t foreign_allocs, foreign_bytes; /* allocations on other devices, left alone */
};
/* Fills t with the k-th device manager's totals (in start order: 0 is the primary one, which
   the plan serves); false (t zeroed) when there is no k-th. */
bool shim_resid_totals(uint32_t k, struct shim_resid_totals *t);

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

/* Hook helpers shared by hook files */
/* Returns from the hook with an error when the real function is not available
   (the driver could not be opened, or it lacks this entry point). A driver may lack any entry
   point: outside the residency files, every shim.real.X call is either in X's own hook after
   SHIM_NEED_REAL(X), or checked for NULL where it is made (shim_params.c, shim_timing.c,
   shim_proc.c); the residency manager runs only when SHIM_RESID_NEEDS are all there. */
#define SHIM_NEED_REAL(sym)                                                                        \
    do {                                                                                           \
        if (atomic_load_explicit(&shim.state, memory_order_acquire) != SHIM_READY &&               \
            !shim_real_ready())                                                                    \
            return CUDA_ERROR_NOT_INITIALIZED;                                                     \
        if (!shim.real.sym)                                                                        \
            return CUDA_ERROR_NOT_FOUND;                                                           \
    } while (0)
/* Registers and records a new allocation; returns its id (0 if untracked). */
uint64_t shim_record_alloc(uint64_t addr, uint64_t bytes, enum shim_alloc_kind kind,
                           uint64_t stream);
/* Records a copy (or memset, src 0) between addresses on stream (as the entry point named it:
   per_thread for _ptsz/_ptds; shim_stream_id); host addresses map to 0. */
void shim_record_copy(enum shim_copy_dir dir, uint64_t dst, uint64_t src, uint64_t bytes,
                      CUstream stream, bool per_thread);
/* A host synchronisation point: kernel times, step detection, trace record (stream as in
   shim_record_copy). */
void shim_record_sync(enum shim_sync_kind kind, CUstream stream, bool per_thread);

/* THE stream normaliser: the id of the stream a hook's stream argument names, as the trace and
   the planner record it and capture tracking matches it. `per_thread` is whether the entry point
   called is a per-thread-stream variant (_ptsz, _ptds): there NULL is the calling thread's
   per-thread default stream; in the other variants NULL is the legacy default stream.
   CU_STREAM_LEGACY and CU_STREAM_PER_THREAD name those streams in every variant. Ids: 0 for the
   legacy stream, CU_STREAM_PER_THREAD's value (2) for the per-thread stream, the handle value
   for any other stream (tools/TRACE-FORMAT.md). Every hook records streams through this. */
static inline uint64_t shim_stream_id(CUstream s, bool per_thread)
{
    if (!s)
        return per_thread ? (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD : 0;
    if (s == CU_STREAM_LEGACY)
        return 0;
    return (uint64_t)(uintptr_t)s;
}

#endif
