/* shim_core.h — the core room's seam: what every room above it (residency, the plan, the hooks,
 * shim_main.c) may use, grouped by defining file in shim/core/.
 *
 * The core is the shim's global context and lifecycle, the only resolver of real driver
 * symbols, the log, the registry of live allocations, kernel parameter layouts and the launch
 * scan, the program's streams, graph capture, step detection, kernel timing and the record
 * helpers. It depends only on the trace writer (shim/trace/), conf/ and the CUDA headers: what
 * the rooms above must hear of it (the step study of shim/plan/) they register as a
 * listener (shim_ledger.c), never by a call from here.
 *
 * The shim exports only the hooks and dlsym; everything here is hidden (-fvisibility=hidden).
 * Errors inside the shim never reach the program: a hook always returns what the real driver
 * returned, and on an internal failure the shim degrades to pass-through for the object
 * concerned and logs it once. */
#ifndef SHIM_CORE_H
#define SHIM_CORE_H

#include "shim_api.h"
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

/* A step detector's state (shim_steps.c): the segments of launches between host
   synchronisations it has seen, and the step it found in them. The shim's one detector is
   shim.steps; a test makes a fresh one with shim_steps_init. The launch path touches only the
   open segment's two words (relaxed atomics); the step's answers are atomics read without a
   lock; everything else is protected by lock, or by ord_lock where noted. */
#define SHIM_STEPS_HISTORY 32 /* segments remembered */
#define SHIM_STEPS_TIMES   64 /* steady steps' wall times remembered */
struct shim_steps_segment {
    uint64_t start, count, hash; /* first launch, launches, order-sensitive hash */
};
struct shim_steps {
    _Atomic uint64_t *launch_seq;         /* the launch counter it reads (shim.launch_seq) */
    _Atomic uint64_t seg_hash, seg_start; /* the open segment (launch path) */
    _Atomic int profiling;                /* launches belong to a profiled step */
    _Atomic uint64_t step_no;             /* next step number to write */
    _Atomic uint64_t step_first;          /* first launch of the current step */
    _Atomic uint64_t step_len;            /* launches per step while steady, else 0 */
    pthread_mutex_t lock;                 /* protects the fields below but ord_* */
    struct shim_steps_segment hist[SHIM_STEPS_HISTORY]; /* a ring of the latest segments */
    unsigned nseg;                                      /* segments closed (all time) */
    unsigned period;                    /* segments per step; 0: not in steady state */
    unsigned phase;                     /* segments of the current step seen */
    int profile_left;                   /* steps still to profile */
    bool break_unsaid;                  /* the pattern broke at break_at, not said yet */
    uint64_t break_at;                  /* the first launch of the segment that broke it */
    uint64_t boundary_ns;               /* the last steady boundary's time; 0: none */
    uint64_t step_ns[SHIM_STEPS_TIMES]; /* the latest steady steps' wall times, a ring */
    unsigned nstep_ns;                  /* how many were kept (all time) */
    uint64_t closed_end;                /* the launch after the last step written */
    pthread_mutex_t ord_lock;           /* protects ord_seq and ord_n */
    uint64_t ord_seq;                   /* the last launch index that saw an allocation */
    uint32_t ord_n;                     /* allocations counted at ord_seq */
};
/* A detector as shim_steps_init leaves it, reading the launch counter at seq (a constant
   initialiser, for the shim's own). */
#define SHIM_STEPS_INIT(seq)                                                                       \
    {                                                                                              \
        .launch_seq = (seq), .lock = PTHREAD_MUTEX_INITIALIZER,                                    \
        .ord_lock = PTHREAD_MUTEX_INITIALIZER, .ord_seq = UINT64_MAX                               \
    }

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
    /* Where budget and budgets were set ("SHIM_BUDGET", "FILE:LINE", "default"), for the
       messages about a budget that cannot be kept (shim_resid_start.c). */
    char budget_source[256], device_budget_source[256];
    uint64_t host_resident[SHIM_MAX_DEVICE_BUDGETS]; /* host_resident: sizes kept on the host */
    uint32_t nhost_resident;
    bool unmapped_eviction;      /* evict without host VMM (ranges left unmapped) */
    int planner;                 /* a plan_kind: the `planner` option by name (shim_main.c) */
    bool link_shared;            /* link_duplex = "shared": the planner's link is half duplex */
    double link_both_gbps[2];    /* link_both_gbps (H2D, D2H); 0, 0 when not set */
    double link_remap_us;        /* link_remap in us; -1: measured */
    _Atomic uint64_t launch_seq; /* next launch index (relaxed atomic) */
    _Atomic uint64_t next_id;    /* next allocation / function / graph id */
    _Atomic bool step_studying;  /* the step study is on (shim_step_studying) */
    struct shim_steps steps;     /* step detection (shim_steps.c): its own locks */
};

extern struct shim_ctx shim;

/* True while the calling thread runs shim code that may call the driver: such
   calls go straight to the real functions (thread-local). */
extern __thread int shim_inside __attribute__((tls_model("initial-exec")));

/* shim_state.c — the lifecycle (UNINIT -> INITIALISING -> READY, PASSTHROUGH or FAILED) */
/* What happens when the driver is first resolved, set once by the constructor (shim_main.c)
   before any hook can run: config_ok false (a configuration error) or mode off leave the shim in
   pass-through; otherwise on_ready runs (under the resolution's once-lock, with shim.real
   filled) and the state becomes READY. Without a call, the shim passes everything through. */
void shim_state_configure(bool config_ok, void (*on_ready)(void));
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
    int kind; /* plan_mem_kind */
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

/* shim_steps.c — training step detection, on a detector s (the shim's is &shim.steps). Every
   function may be called from any thread; the step listener (shim_step_listener) hears what
   every detector finds. */
/* A fresh detector reading the launch counter at launch_seq (the counter the launches it is fed
   are numbered by). Cannot fail. */
void shim_steps_init(struct shim_steps *s, _Atomic uint64_t *launch_seq);
/* Releases s's locks; s is not used again (but for shim_steps_init). */
void shim_steps_fini(struct shim_steps *s);
/* Feeds one launch (sequence number and function id). */
void shim_steps_launch(struct shim_steps *s, uint64_t seq, uint64_t func_id);
/* The host blocked on the device (a synchronisation or a synchronous copy). */
void shim_steps_host_sync(struct shim_steps *s);
/* Launches per training step while the job is in steady state, 0 otherwise. */
uint64_t shim_steps_step_len(const struct shim_steps *s);
/* Steps closed so far, which is also the number of the step in progress (steps count from 0). */
uint64_t shim_steps_closed(const struct shim_steps *s);
/* The median wall time of the latest steady steps (up to SHIM_STEPS_TIMES, each from one step
   boundary to the next), in ms; -1 when no steady step was timed. Takes the detector's lock. */
double shim_steps_median_ms(struct shim_steps *s);
/* Whether launches now belong to a profiled step (kernels are timed). */
bool shim_steps_profiling(const struct shim_steps *s);
/* The first launch index of the current step while steady (the step after the last one closed). */
uint64_t shim_steps_first_seq(const struct shim_steps *s);
/* Counts an allocation the program makes now (when the step is recorded or a plan is on):
   returns how many were made before it at the same launch index, its ordinal, also kept for the
   calling thread (shim_steps_last_ordinal). */
uint32_t shim_steps_count_alloc(struct shim_steps *s);
/* The ordinal the calling thread's last shim_steps_count_alloc returned (thread-local). */
uint32_t shim_steps_last_ordinal(void);
/* shim_timing.c — kernel durations in profiled steps */
/* Records an event before a launch on stream; returns a slot to close, or -1. */
int shim_timing_begin(CUstream stream, bool per_thread);
/* Records the closing event of slot after the launch of seq. */
void shim_timing_end(int slot, CUstream stream, bool per_thread, uint64_t seq);
/* Records an event before one of the residency manager's copies on its stream while the step
   model is recorded (shim_step_studying), for the first 64 copies each way (to_device: a
   restore); returns a slot to close, or -1. */
int shim_timing_copy_begin(CUstream stream, bool to_device);
/* Records the closing event of slot after a copy of bytes (to_device: a restore). */
void shim_timing_copy_end(int slot, CUstream stream, bool to_device, uint64_t bytes);
/* Gives slot back when its launch (or copy) failed. */
void shim_timing_cancel(int slot);
/* Emits the durations of completed timed launches (called at host syncs). */
void shim_timing_collect(void);
/* Residency begins or ends work of its own that waits, copies or remaps, on whichever thread: the
   host time it takes is libshim's, not the program's, so a launch's idle time measured across it
   is not the program's own (reported as disturbed). One relaxed atomic increment. */
void shim_timing_disturbed(void);


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

/* shim_ledger.c — what an operation leaves behind: the registry entry, the trace record, and
   the step study's event. The step study lives in the plan room above; it hears the core
   (and residency) through this listener, registered once before the state is READY
   (shim_main.c). Every entry is called without any lock of libshim's held but the registry's
   callers' own, from any thread. */
struct shim_step_listener {
    /* step detection (shim_steps.c): the job entered steady state; step `step`, which began at
       launch first_seq, closed with profiled_left profiled steps to go; steady state was lost */
    void (*steady)(void);
    void (*step_closed)(uint64_t step, uint64_t first_seq, int profiled_left);
    void (*unsteady)(void);
    /* the break of the pattern at launch was followed by more work (a real change, not the run's
       last segment): said after the detector's own line; may be NULL */
    void (*changed)(uint64_t launch);
    /* kernel timing (shim_timing.c): launch seq took usec; one of residency's copies of bytes
       took usec (to_device: a restore) */
    void (*kernel_time)(uint64_t seq, double usec);
    /* launch seq's stream stood idle usec before it, after launch seq - 1 there (usec < 0:
       residency made driver calls in between, so the idle time is not the program's alone); one
       of the timing's event records costs the host record_us; may be NULL */
    void (*kernel_idle)(uint64_t seq, double usec, double record_us);
    void (*link_time)(bool to_device, uint64_t bytes, double usec);
    /* an allocation (kind: plan_mem_kind), the ordinal-th at its launch index; a copy
       between allocations dst and src (0: not an allocation) */
    void (*alloc)(uint64_t id, uint64_t addr, uint64_t bytes, int kind, uint64_t stream,
                  uint32_t ordinal);
    void (*copy)(uint64_t dst, uint64_t src, enum shim_copy_dir dir, uint64_t bytes);
};
/* Sets the listener (NULL: none; every event is then dropped). Call before any hook runs. */
void shim_step_listen(const struct shim_step_listener *l);
/* The listener set, or NULL. */
const struct shim_step_listener *shim_step_listener(void);
/* Whether the step study is on now (set by it through shim_step_studying_set): the
   listener's alloc, copy, kernel_time and link_time events are wanted. One relaxed load. */
static inline bool shim_step_studying(void)
{
    return atomic_load_explicit(&shim.step_studying, memory_order_relaxed);
}
void shim_step_studying_set(bool on);
/* Registers and records a new allocation; returns its id (0 if untracked). plan_on: a plan is
   applied, so the allocation's ordinal is counted even when the step is not recorded. */
uint64_t shim_ledger_alloc(uint64_t addr, uint64_t bytes, plan_mem_kind kind, uint64_t stream,
                           bool plan_on);
/* Registers and records a managed allocation kept in host memory for good (host_resident):
   registry and trace as a managed allocation; the step study never sees it and its ordinal
   is not counted (no step model holds it, no plan binds it). Its id, or 0 if untracked. */
uint64_t shim_ledger_alloc_kept_on_host(uint64_t addr, uint64_t bytes, uint64_t stream);
/* Counts allocation id's ordinal at the current launch index (shim_steps_count_alloc) and hands
   it to the listener while the step is recorded: for an allocation registered otherwise (a
   small allocation inside a slab). */
void shim_ledger_step_alloc(uint64_t id, uint64_t addr, uint64_t bytes, int kind, uint64_t stream);
/* Records a copy (or memset, src 0) between addresses on stream (as the entry point named it:
   per_thread for _ptsz/_ptds; shim_stream_id); host addresses map to 0. */
void shim_ledger_copy(enum shim_copy_dir dir, uint64_t dst, uint64_t src, uint64_t bytes,
                      CUstream stream, bool per_thread);
/* A host synchronisation point: kernel times, step detection, trace record (stream as in
   shim_ledger_copy). */
void shim_ledger_sync(enum shim_sync_kind kind, CUstream stream, bool per_thread);
/* The calling thread's current device (its context's), for the trace: 0 when the driver
   cannot say. */
uint32_t shim_current_device(void);

/* THE stream normaliser: the id of the stream a hook's stream argument names, as the trace and
   the planner record it and capture tracking matches it. `per_thread` is whether the entry point
   called is a per-thread-stream variant (_ptsz, _ptds): there NULL is the calling thread's
   per-thread default stream; in the other variants NULL is the legacy default stream.
   CU_STREAM_LEGACY and CU_STREAM_PER_THREAD name those streams in every variant. Ids: 0 for the
   legacy stream, CU_STREAM_PER_THREAD's value (2) for the per-thread stream, the handle value
   for any other stream (tools/trace/TRACE-FORMAT.md). Every hook records streams through this. */
static inline uint64_t shim_stream_id(CUstream s, bool per_thread)
{
    if (!s)
        return per_thread ? (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD : 0;
    if (s == CU_STREAM_LEGACY)
        return 0;
    return (uint64_t)(uintptr_t)s;
}

#endif
