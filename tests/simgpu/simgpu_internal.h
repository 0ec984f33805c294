/* simgpu_internal.h — internal interfaces of the simulated driver, grouped by defining file.
 *
 * Concurrency model: one global mutex, sim.lock, protects every mutable field
 * of the simulator (address space, streams, commands, events, registries,
 * statistics). Stream workers take it to pick and to retire commands and drop
 * it while a command's data work (kernel body, copy, memset) runs. Kernels run
 * one at a time (the compute engine is serial), so the zero-copy fault state is
 * owned by whichever worker is running a kernel. */
#ifndef SIMGPU_INTERNAL_H
#define SIMGPU_INTERNAL_H

#include "simgpu.h"
#include "simgpu_entries.h"

#include "plan.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SIM_GRANULE     ((uint64_t)2 << 20) /* VMM granularity, as current GPUs */
#define SIM_PAGE        ((uint64_t)4096)    /* zero-copy accounting unit */
#define SIM_VA_SIZE     ((uint64_t)256 << 30)
#define SIM_PHYS_MAX    ((uint64_t)256 << 30)
#define SIM_MAX_PARAMS  64
#define SIM_MAX_DEVICES 16 /* bound of SIMGPU_DEVICES */

enum sim_entry {
#define SIM_ENUM(sym, base, ver, var) SIM_E_##sym,
    SIMGPU_ENTRIES(SIM_ENUM)
#undef SIM_ENUM
        SIM_E_COUNT
};

/* Returns CUDA_SUCCESS or the error to return from an entry point: runs the
   one-time initialisation, counts the call, applies fault injection and the
   fork rule. Use at the top of every exported entry point: it passes the
   entry's own return address (its immediate caller, for SIMGPU_FAIL_CALLER),
   which only the entry function itself can take. */
#define SIM_ENTER(sym)                                                                             \
    do {                                                                                           \
        CUresult enter_rc_ = sim_enter(SIM_E_##sym, __builtin_return_address(0));                  \
        if (enter_rc_ != CUDA_SUCCESS)                                                             \
            return enter_rc_;                                                                      \
    } while (0)

/* Declares rc, the result of check (sim_need_init or sim_need_ctx), and returns it from the
   entry point unless it is CUDA_SUCCESS: the preamble of every entry point that needs the
   driver initialised or a current context. */
#define SIM_NEED(check)                                                                            \
    CUresult rc = check();                                                                         \
    do {                                                                                           \
        if (rc != CUDA_SUCCESS)                                                                    \
            return rc;                                                                             \
    } while (0)

/* SIM_NEED(check), then CUDA_ERROR_INVALID_VALUE returned where bad (the arguments' test, true
   when they are invalid): the preamble of an entry point that checks its arguments once the
   driver is ready. */
#define SIM_NEED_ARGS(check, bad)                                                                  \
    SIM_NEED(check);                                                                               \
    do {                                                                                           \
        if (bad)                                                                                   \
            return CUDA_ERROR_INVALID_VALUE;                                                       \
    } while (0)

/* Defines two entry points that share one body, a flag apart: first runs body with the bool
   named flag false, second with it true. Their parameter lists (each of its own types) give the
   parameters body names the same names. For the driver's pairs: legacy and per-thread stream
   (simgpu_ordered.c), module and library, graph and instantiated graph, query and wait. */
#define SIM_TWIN_ENTRIES(flag, first, first_params, second, second_params, body)                   \
    CUresult CUDAAPI first first_params                                                            \
    {                                                                                              \
        SIM_ENTER(first);                                                                          \
        const bool flag = false;                                                                   \
        return body;                                                                               \
    }                                                                                              \
    CUresult CUDAAPI second second_params                                                          \
    {                                                                                              \
        SIM_ENTER(second);                                                                         \
        const bool flag = true;                                                                    \
        return body;                                                                               \
    }

#define SIM_CALLER_MAX 256 /* bytes of a SIMGPU_FAIL_CALLER substring, with its NUL */

/* ENG_PEER: copies between two devices (simgpu_copy.c), on the stream's device. */
enum sim_engine { ENG_NONE = -1, ENG_COMPUTE = 0, ENG_H2D, ENG_D2H, ENG_PEER, ENG_COUNT };
enum sim_cmd_kind { CMD_KERNEL, CMD_COPY, CMD_MEMSET, CMD_MARK, CMD_FREE, CMD_HOSTFN };

struct sim_extents { /* free extents of an address space, sorted by offset */
    struct sim_extent {
        uint64_t off, len;
    } * v;
    size_t n, cap;
};

struct sim_handles { /* a set of live handle pointers */
    uintptr_t *v;
    size_t cap, n, used;
};

struct sim_phys {       /* a physical allocation (cuMemCreate or the backing of cuMemAlloc) */
    uint64_t off, size; /* in the physical file */
    bool host;          /* host-located (CU_MEM_LOCATION_TYPE_HOST / _NUMA) */
    bool released;      /* the creating handle was released */
    int maps;           /* mappings referring to it */
    int handle_refs;    /* 1 + cuMemRetainAllocationHandle calls not yet released */
    int handle_types;   /* CUmemAllocationProp::requestedHandleTypes at cuMemCreate */
    int device;         /* ordinal of the device it is located on (device-located) or was
                           created from (host-located) */
    CUcontext ctx;      /* the context current when it was created (cuPointerGetAttribute) */
};

struct sim_map { /* a mapped device range; sorted by va in sim.maps */
    uint64_t va, size;
    struct sim_phys *phys;
    uint64_t phys_off;
    int prot;        /* CUmemAccess_flags */
    uint64_t id;     /* of the cuMemMap that made it: kept by pieces split off by cuMemSetAccess */
    double ready_vt; /* host time its latest cuMemMap / cuMemSetAccess ended, on the calling
                        thread's clock: work touching it is submitted no earlier (simgpu_clock.c) */
};

struct sim_resv { /* a reserved device range; sorted by va in sim.resv */
    uint64_t va, size;
    int kind;
    struct sim_stream *freed_on; /* RESV_FREEING: the stream of the pending free */
    uint64_t gen;                /* bumped at each free and reuse: stale frees do nothing */
    struct sim_cmd *free_cmd;    /* RESV_FREEING / RESV_POOLED: the free, referenced */
    uint64_t free_seq;           /* its sequence number on freed_on */
};
enum {
    RESV_VMM,     /* cuMemAddressReserve */
    RESV_ALLOC,   /* cuMemAlloc */
    RESV_ASYNC,   /* cuMemAllocAsync */
    RESV_FREEING, /* cuMemFreeAsync submitted, not yet run */
    RESV_POOLED   /* its free has run: kept by the pool until a synchronisation (simgpu_pool.c) */
};

struct sim_func {
    char *name;
    simgpu_body body;
    int nparams;
    size_t sizes[SIM_MAX_PARAMS], offsets[SIM_MAX_PARAMS];
    size_t total;
    double cost_us;
    struct sim_func *next;
};

struct sim_ptr { /* one end of a copy */
    bool dev;    /* a device virtual address */
    uint64_t addr;
};

struct sim_cmd {
    struct sim_cmd *next; /* queue link */
    int refs;
    enum sim_cmd_kind kind;
    int engine;
    bool done, jittered;
    uint64_t ticket, seq;
    uint64_t link_ticket; /* a copy's place on the link when the both-busy rates apply */
    struct sim_stream *stream;
    double host_vt, vstart, vend;
    struct sim_cmd **deps;
    int ndeps;
    union {
        struct {
            struct sim_func *fn;
            unsigned char *params;
            double cost_us; /* fn's cost when submitted: a later simgpu_set_cost leaves
                               queued launches alone (simgpu.h: "each later launch") */
        } k;
        struct {
            struct sim_ptr dst, src; /* engine: by where the bytes live (simgpu_copy.c) */
            size_t bytes;
            void *staging; /* owned snapshot of a pageable source */
        } c;
        struct {
            uint64_t dst;
            uint32_t value;
            int elem;
            size_t count;
            uint64_t host_bytes; /* of the range, backed by host-located memory */
        } m;
        struct {
            uint64_t ptr, gen;
        } f;
        struct sim_hostfn {
            CUhostFn fn;
            void *data;
        } h;
    } u;
};

struct sim_touch {
    uint64_t seq, lo, hi;
};
struct sim_wait {
    uint64_t seq;             /* command of this stream that waited */
    struct sim_stream *other; /* on other's command target */
    uint64_t target;
};

enum { STREAM_USER, STREAM_LEGACY, STREAM_PER_THREAD };

struct sim_stream {
    unsigned id, flags;
    int kind;
    int device; /* ordinal: its commands use this device's engines */
    bool live;
    struct sim_cmd *head, *tail; /* submitted, not yet retired (head may be running) */
    uint64_t next_seq, known_seq;
    double vt_tail;
    struct sim_cmd *last; /* holds a reference */
    pthread_t worker;
    bool worker_started;
    uint64_t rng;
    struct sim_graph *capture;
    uint64_t capture_id;
    struct sim_touch *touches; /* touches of commands not known complete by the host */
    size_t ntouches, touch_cap;
    struct sim_wait *waits;
    size_t nwaits, wait_cap;
    struct sim_stream *next_all, *next_free;
};

struct sim_event {
    unsigned flags;
    struct sim_cmd *rec; /* latest record, referenced */
};

struct sim_graph {
    bool exec;              /* instantiated (CUgraphExec) rather than captured (CUgraph) */
    struct sim_cmd **nodes; /* command templates, not submitted */
    size_t n, cap;
};

struct sim_engine_state {
    uint64_t next_ticket, serving;
    double vfree;
};

struct sim_link { /* SIMGPU_LINK_BOTH_GBPS (simgpu_link.c) */
    bool on;
    uint64_t next_ticket, serving;
    plan_link model; /* the planner's fluid rule, with the busy intervals of both directions */
};

/* A context: each device's primary context, or one made by cuCtxCreate. Its
   address is the CUcontext handle. */
struct sim_ctx {
    uint64_t magic;
    int device;
    bool primary;
    struct sim_ctx *next; /* created contexts, in sim.created */
};

/* One simulated device: its memory accounting, primary context, peer access,
   engines and legacy default stream. */
struct sim_device {
    uint64_t capacity, bytes, peak, window_peak; /* device-located bytes */
    uint64_t kernels;                            /* kernels run on its streams */
    struct sim_ctx primary;
    int primary_refs;
    unsigned primary_flags;
    bool peer[SIM_MAX_DEVICES]; /* cuCtxEnablePeerAccess: its kernels may touch device i */
    struct sim_engine_state engine[ENG_COUNT];
    struct sim_stream *legacy;
};

struct sim_pinned {
    uintptr_t lo, hi;
    bool registered;
};

/* Per-thread host clocks (simgpu_clock.c): one record per host thread that called the driver,
   in sim.threads; its clock is moved by its own thread and, for the driver-wide lock's holds, by
   others, always under sim.lock. */
struct sim_thread {
    double vt;      /* the thread's host time */
    double host_us; /* its own work charged (SIMGPU_HOST_US_PER_LAUNCH, SIMGPU_HOST_CALLER) */
    double vmm_us;  /* its VMM calls' host time */
    double lock_us; /* what the driver-wide lock held it back */
    unsigned order; /* 0 for the first thread that called the driver, and so on */
    bool live;      /* false once the thread has exited */
    struct sim_thread *next;
};
/* A stretch of virtual time during which a VMM call held the driver-wide lock. */
struct sim_hold {
    double s, e;
};
#define SIM_HOLDS 4096 /* holds kept that a thread behind them may still run into */

/* The simulator's one global state. Every field is protected by lock unless
   marked otherwise. */
struct sim_state {
    pthread_mutex_t lock;
    pthread_cond_t changed; /* broadcast on every queue or completion change */
    bool ready;             /* init succeeded (set once, before other threads see it) */
    bool initialised;       /* cuInit has been called */
    bool forked;            /* this is the child of a fork: every call fails */
    bool quiet, host_vmm;
    bool backtrace;       /* SIMGPU_BACKTRACE=1: hazards print the caller's stack */
    int driver_version;   /* SIMGPU_DRIVER_VERSION (simgpu_driver_gen.c); set once at init */
    uint64_t jitter_seed; /* 0: no jitter */
    double h2d_gbps, d2h_gbps, dev_gbps, peer_gbps;
    int ndevices; /* SIMGPU_DEVICES; sim.dev[0 .. ndevices-1] exist */
    struct sim_device dev[SIM_MAX_DEVICES];
    struct sim_ctx *created; /* live cuCtxCreate contexts */
    bool kernel_running;     /* kernels of all devices run one at a time (simgpu_exec.c) */
    int fence_dev;           /* the device whose kernels other devices' memory is fenced
                                against (sim_devices_fence), or -1 */
    CUresult sticky;         /* CUDA_SUCCESS or the sticky context error */
    /* address space */
    uint64_t va_base;
    int phys_fd;
    unsigned char *window; /* the whole physical file, mapped for copies */
    struct sim_extents va_free, phys_free;
    struct sim_resv *resv;
    size_t nresv, resv_cap;
    struct sim_map *maps;
    size_t nmaps, map_cap;
    uint64_t next_map_id;
    _Atomic unsigned char *granule_host; /* per device granule: host-located prot (signal-safe) */
    struct sim_pinned *pinned;
    size_t npinned, pinned_cap;
    /* execution */
    double host_vt; /* the shared host clock; with per-thread clocks the world's: the latest
                       time any thread's clock has reached (simgpu_clock.c) */
    struct sim_stream *streams, *free_streams;
    unsigned next_stream_id;
    uint64_t next_capture_id;
    struct sim_func *funcs;
    struct sim_handles phys_live, events_live, graphs_live;
    struct sim_handles modules_live, modfns_live; /* simgpu_module.c */
    /* statistics and fault injection */
    struct simgpu_stats stats;
    unsigned long calls[SIM_E_COUNT];
    unsigned long fail_at[SIM_E_COUNT]; /* counts calls[], or caller_calls[] under a filter */
    bool fail_sticky[SIM_E_COUNT];
    char fail_caller[SIM_CALLER_MAX];        /* "": every caller matches */
    unsigned long caller_calls[SIM_E_COUNT]; /* calls matching fail_caller since it was set */
    _Atomic bool caller_filter;              /* fail_caller[0] != 0; read without the lock */
    char *stats_path;
    struct { /* the default memory pool's attributes (simgpu_pool.c), all on at start */
        int follow_events, opportunistic, internal_deps;
        uint64_t release_threshold;
    } pool;
    bool link_shared;     /* SIMGPU_LINK_SHARED: both copy directions queue on one engine */
    double vmm_host_cost; /* SIMGPU_VMM_HOST_COST: times the measured cost of VMM calls (0: free) */
    bool vmm_serial;      /* SIMGPU_VMM_SERIAL (default 1): a VMM call's host time delays every
                             thread, as under a driver-wide lock (simgpu_clock.c) */
    bool host_model;      /* per-thread host clocks (simgpu_clock.c): SIMGPU_HOST_US_PER_LAUNCH
                             or SIMGPU_HOST_CALLER is set; set once at initialisation */
    struct sim_thread *threads; /* per-thread clocks: every thread's record, newest first */
    unsigned nthreads;
    struct sim_hold *holds; /* the driver-wide lock's holds not yet behind every live thread, in
                               the order they were made (simgpu_clock.c) */
    size_t nholds, hold_cap;
    double host_us_per_launch;        /* SIMGPU_HOST_US_PER_LAUNCH (0: none); set once at init */
    double host_caller_us;            /* SIMGPU_HOST_CALLER_US: per call of the matching caller */
    char host_caller[SIM_CALLER_MAX]; /* SIMGPU_HOST_CALLER ("": none); set once at init */
    struct sim_link link;
    FILE *timeline; /* SIMGPU_TIMELINE: one line per command run (simgpu_stream.c) */
};

extern struct sim_state sim;

/* simgpu_state.c */
/* Through SIM_ENTER only: ret is the entry's return address. Returns
   CUDA_SUCCESS, or the error the entry returns (uninitialisable, forked, or an
   injected failure). Lock not held. */
CUresult sim_enter(enum sim_entry e, const void *ret);
/* Runs the one-time initialisation; returns whether the simulator is usable. */
bool sim_ensure_init(void);
/* Returns CUDA_SUCCESS if cuInit has been called, else CUDA_ERROR_NOT_INITIALIZED. */
CUresult sim_need_init(void);
/* Returns CUDA_SUCCESS if this thread has a current context (after cuInit). */
CUresult sim_need_ctx(void);
/* Prints "simgpu: ..." on stderr unless SIMGPU_QUIET; never allocates. */
void sim_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* With SIMGPU_BACKTRACE=1, the calling thread's stack to stderr (after a hazard's diagnostic:
   which of the caller's paths did it; addresses resolve with addr2line). */
void sim_diag_backtrace(void);
/* Parses "2GiB", "512MiB", "4096"; returns 0 and *out, or -1. */
int sim_parse_size(const char *s, uint64_t *out);
/* The current context of the calling thread (NULL if none). */
CUcontext sim_current_ctx(void);
void sim_set_current_ctx(CUcontext c);
/* Accounts for device-located bytes created (+) or freed (-) on device dev, and in the
   process totals of sim.stats; lock held. */
void sim_account_device(int dev, int64_t delta);

/* simgpu_device.c */
/* Pushes ctx (valid) on the calling thread's context stack, making it current. Returns
   CUDA_SUCCESS, or CUDA_ERROR_OUT_OF_MEMORY when the stack is full. */
CUresult sim_ctx_push(CUcontext ctx);
/* Pops the current context (returned, NULL if none); the one below becomes current. */
CUcontext sim_ctx_pop(void);

/* simgpu_devices.c — the device table, contexts and peer access */
/* Reads SIMGPU_DEVICES and SIMGPU_MEMORY (one size for every device, or a comma list, one
   per device); a bad value is reported and the default kept. Sets sim.stats.capacity_bytes
   to the sum. Called once, before anything else runs. */
void sim_devices_configure(void);
/* The primary context handle of device dev (0 <= dev < sim.ndevices). */
CUcontext sim_primary_ctx(int dev);
/* Whether c is a live context (a primary one or a created one); lock held. */
bool sim_ctx_valid(CUcontext c);
/* Device ordinal of a valid context. */
int sim_ctx_device(CUcontext c);
/* Ordinal of the calling thread's current context's device; 0 when it has none. */
int sim_current_device(void);
/* Returns CUDA_SUCCESS if dev is an ordinal (after cuInit), else the error to return. */
CUresult sim_check_device(CUdevice dev);
/* Before a kernel of device dev runs: makes the device-located mappings of every device dev
   has no peer access to inaccessible (and the others accessible), so that the kernel
   touching them faults as an illegal access. Lock held. No-op with one device. */
void sim_devices_fence(int dev);

/* simgpu_driver_gen.c — the driver generation (SIMGPU_DRIVER_VERSION) */
/* Reads SIMGPU_DRIVER_VERSION into sim.driver_version (default CUDA_VERSION); a bad value is
   reported and ignored. Called once, at initialisation. */
void sim_driver_gen_read(void);
/* Whether this generation knows attribute a: false means cuDeviceGetAttribute answers
   CUDA_ERROR_INVALID_VALUE. When it returns true for an attribute whose value depends on the
   generation or on SIMGPU_HOST_VMM, *value is set; otherwise *value is left as it was. */
bool sim_driver_gen_attribute(CUdevice_attribute a, int *value);
/* Whether cuMemCreate accepts host location loc (type HOST, HOST_NUMA or another non-device
   type): CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE (unknown to this generation, a bad node) or
   CUDA_ERROR_NOT_SUPPORTED (no host-located VMM). */
CUresult sim_driver_gen_host_location(const CUmemLocation *loc);

/* simgpu_fail.c */
/* Parses SIMGPU_FAIL; returns 0 or -1 on a malformed rule (reported). */
int sim_fail_parse(const char *spec);
/* Looks up an entry by exported name; -1 if unknown. */
int sim_entry_index(const char *name);
/* The exported name of entry e (0 <= e < SIM_E_COUNT). */
const char *sim_entry_name(int e);
/* Sets the SIMGPU_FAIL_CALLER substring (NULL or "" clears it) and restarts
   the matched-call counts. Returns 0, or -1 if it is SIM_CALLER_MAX bytes or
   longer (nothing changes). Lock held. */
int sim_fail_caller_set(const char *substring);
/* Path of the shared object (or program) holding code address ret, as dladdr
   reports it; NULL if none. Takes the loader's lock: call without sim.lock. */
const char *sim_caller_path(const void *ret);
/* The error an injected failure of entry e returns. */
CUresult sim_fail_error(int e);

/* simgpu_handles.c — lock held */
/* Adds p; returns 0, or -1 if the set cannot grow. */
int sim_handles_add(struct sim_handles *s, const void *p);
bool sim_handles_has(const struct sim_handles *s, const void *p);
void sim_handles_del(struct sim_handles *s, const void *p);

/* simgpu_grow.c */
/* Returns array v (elements of elem bytes, room for *cap of them) with room for need: v itself
   when it has it, else v reallocated to twice *cap (first when *cap is 0), doubled until need
   fits, and *cap updated. NULL when out of memory: v and *cap are then untouched. */
void *sim_grow(void *v, size_t *cap, size_t need, size_t elem, size_t first);

/* simgpu_extent.c */
void sim_extents_init(struct sim_extents *x, uint64_t base, uint64_t len);
/* Allocates len bytes aligned to align (power of two); at hint if hint is
   nonzero and free. Returns 0 and *off, or -1 when no extent fits. */
int sim_extents_alloc(struct sim_extents *x, uint64_t len, uint64_t align, uint64_t hint,
                      uint64_t *off);
/* Returns [off, off+len) to the free set, merging neighbours. Returns 0, or -1
   if memory for the list cannot grow (the range is then leaked). */
int sim_extents_free(struct sim_extents *x, uint64_t off, uint64_t len);

/* simgpu_mem.c — the address space; lock held for all */
int sim_mem_init(void);
bool sim_is_device_addr(uint64_t a);
/* Creates physical memory located on device dev (or host-located, made from dev);
   device-located memory counts against dev's capacity. */
struct sim_phys *sim_phys_create(int dev, uint64_t size, bool host, CUresult *rc);
void sim_phys_put(struct sim_phys *p); /* drops a map or handle reference */
bool sim_phys_valid(const struct sim_phys *p);
CUresult sim_resv_add(uint64_t size, uint64_t align, uint64_t hint, int kind, uint64_t *va);
struct sim_resv *sim_resv_find(uint64_t va);       /* exact base */
struct sim_resv *sim_resv_containing(uint64_t va); /* any address inside */
void sim_resv_remove(struct sim_resv *r);
CUresult sim_map_add(uint64_t va, uint64_t size, struct sim_phys *p, uint64_t off, int prot);
struct sim_map *sim_map_containing(uint64_t va);
/* The host protection (PROT_*) of m's device range: PROT_NONE for host-located memory,
   which kernels reach through the zero-copy fault path. */
int sim_map_host_prot(const struct sim_map *m);
/* Whether [va, va+size) is exactly a union of whole mappings, each as cuMemMap
   made it (not part of one split by cuMemSetAccess). */
bool sim_map_whole(uint64_t va, uint64_t size);
/* Index of the first mapping ending after va. */
size_t sim_map_lower(uint64_t va);
void sim_map_remove_at(size_t i);
CUresult sim_map_set_prot(uint64_t va, uint64_t size, int prot);
/* Window address of [va, va+*len): shortens *len to the contiguous mapped
   piece. Returns NULL if va is not mapped with the needed access. */
unsigned char *sim_translate(uint64_t va, uint64_t *len, bool write);
struct sim_pinned *sim_pinned_find(uintptr_t p);
int sim_pinned_add(uintptr_t lo, uintptr_t hi, bool registered);
void sim_pinned_remove(struct sim_pinned *p);

/* simgpu_stream.c */
int sim_streams_init(void);
/* Called with arg and each device range [lo, hi) a command touches. */
typedef void (*sim_touch_visit)(void *arg, uint64_t lo, uint64_t hi);
/* Calls visit for each device range command c touches: a copy's or memset's device ends, and
   [w, w+1) for each kernel parameter word w that is a device address (any may be a pointer).
   Lock held. */
void sim_cmd_touches(const struct sim_cmd *c, sim_touch_visit visit, void *arg);
/* Resolves a stream argument; per_thread selects what NULL means. */
struct sim_stream *sim_stream_get(CUstream h, bool per_thread, CUresult *rc);
struct sim_cmd *sim_cmd_new(enum sim_cmd_kind kind, int engine);
void sim_cmd_ref(struct sim_cmd *c);
void sim_cmd_unref(struct sim_cmd *c);
/* Adds a dependency (referenced) on d; returns -1 if out of memory. */
int sim_cmd_add_dep(struct sim_cmd *c, struct sim_cmd *d);
/* Submits c to s (or appends it to s's capture graph); takes ownership. */
CUresult sim_submit(struct sim_stream *s, struct sim_cmd *c);
/* The queue (engine state) that serves commands of engine e: a shared link serves both copy
   directions from one queue, in submission order. */
static inline int sim_engine_queue(int e)
{
    return e == ENG_D2H && sim.link_shared ? ENG_H2D : e;
}
/* The engine state serving submitted command c: its queue on its stream's device. */
static inline struct sim_engine_state *sim_engine_of(const struct sim_cmd *c)
{
    return &sim.dev[c->stream->device].engine[sim_engine_queue(c->engine)];
}
/* Blocks until c completes, then advances the host clock (joined by the calling thread's,
   sim_clock_join) and what the host knows complete. Lock held (released while waiting). */
void sim_host_wait(struct sim_cmd *c);
/* Whether the calling thread sees c complete (lock held): at its own time (query false: moves
   no clock), or as a query (cuEventQuery, cuStreamQuery) answers (sim_clock_sees). */
bool sim_host_sees_done(struct sim_cmd *c, bool query);
void sim_host_wait_stream(struct sim_stream *s);
void sim_host_wait_all(void);
/* Waits for every stream of device dev. */
void sim_host_wait_device(int dev);
/* Marks commands up to seq of s (and what they waited for) known complete. */
void sim_mark_known(struct sim_stream *s, uint64_t seq);
/* Reports and counts submitted work not known complete that touches [lo, hi). */
void sim_check_unmap_hazard(uint64_t lo, uint64_t hi, const char *what);
/* Creates a user stream. */
CUresult sim_stream_create(unsigned flags, struct sim_stream **out);
void sim_stream_release(struct sim_stream *s);
bool sim_stream_valid(const struct sim_stream *s);

/* simgpu_clock.c — the host clocks (the shared one, or one per thread: sim.host_model); lock
   held for all */
/* The calling thread's host time: under the shared clock the later of its own clock and the
   shared one; with per-thread clocks its own. */
double sim_clock_now(void);
/* The time up to which the calling thread knows what completed: the shared clock, or with
   per-thread clocks its own (the pool's releases at synchronisations go by it). */
double sim_clock_known(void);
/* Shared clock: moves the shared clock to the calling thread's time, so that a thread that
   submits or synchronises makes the program wait for its VMM calls. Nothing with per-thread
   clocks. */
void sim_clock_join(void);
/* The calling thread waited for a command that ended at virtual time end: its clock (the
   shared one, under the shared clock) moves there if end is later. */
void sim_clock_waited(double end);
/* Charges the calling thread a VMM call of us microseconds (0: free, nothing changes) covering
   handles handles, counts both in the statistics, and with sim.vmm_serial holds the driver-wide
   lock for it (the shared clock moves, or with per-thread clocks the call starts after the lock's
   last holder and every later submission waits for it). Returns the time the call ends on the
   thread's clock. */
double sim_clock_vmm(double us, uint64_t handles);
/* Per-thread clocks: the calling thread spends us microseconds of host work (us > 0). Nothing
   under the shared clock. */
void sim_clock_host(double us);
/* Records that the mappings in [va, va+size) became accessible at host time t. */
void sim_clock_mark_ready(uint64_t va, uint64_t size, double t);
/* For sim_submit: joins the calling thread to the shared clock (with per-thread clocks, to the
   driver-wide lock's) and then, with a VMM cost, waits until every mapping c touches is ready.
   Returns the time c is submitted at. */
double sim_clock_submit(const struct sim_cmd *c);
/* Whether the calling thread sees completed command c done: at its own time (query false: what
   the pool may take), or for a query (cuEventQuery, cuStreamQuery) with per-thread clocks at the
   world's time, joining c's end when it is. c->done must be read under the lock. */
bool sim_clock_sees(const struct sim_cmd *c, bool query);

/* simgpu_host.c — the host's own time: SIMGPU_HOST_US_PER_LAUNCH, the driver's calls,
   SIMGPU_HOST_CALLER */
/* Reads the settings (called once, at initialisation, before any thread has a clock); bad
   values are reported and ignored. Sets sim.host_model when either is set. */
void sim_host_configure(void);
/* Charges the launching thread the program's own work before a kernel launch (lock held). */
void sim_host_launch(void);
/* With per-thread clocks, charges the calling thread what driver call e costs the host and, when
   its caller (the entry's return address ret) lies in an object matching SIMGPU_HOST_CALLER, the
   interposer's work. Call without sim.lock (it may ask the loader); takes it when it charges. */
void sim_host_enter(enum sim_entry e, const void *ret);

/* simgpu_vmm_cost.c — what a VMM call costs the host (SIMGPU_VMM_HOST_COST) */
enum sim_vmm_op {
    VMM_RESERVE,
    VMM_ADDR_FREE,
    VMM_CREATE,
    VMM_RELEASE,
    VMM_MAP,
    VMM_SET_ACCESS,
    VMM_UNMAP,
    VMM_OP_COUNT
};
/* Host microseconds call op costs covering handles physical handles and bytes bytes of them,
   times SIMGPU_VMM_HOST_COST; 0 without it. */
double sim_vmm_cost_us(enum sim_vmm_op op, uint64_t handles, uint64_t bytes);
/* The handles mapped in [va, va+size): its mappings, each as cuMemMap made it (a handle mapped
   twice counts twice). Lock held. */
uint64_t sim_vmm_cost_handles(uint64_t va, uint64_t size);

/* simgpu_exec.c — runs commands on workers (lock NOT held) */
/* Executes c's data work; returns its virtual cost in microseconds. */
double sim_exec(struct sim_cmd *c);
int sim_faults_init(void);

/* simgpu_copy.c */
CUresult sim_copy(struct sim_stream *s, struct sim_ptr dst, struct sim_ptr src, size_t n,
                  bool async);
CUresult sim_memset(struct sim_stream *s, uint64_t dst, uint32_t value, int elem, size_t count,
                    bool async);
struct sim_ptr sim_ptr_of(uint64_t addr);
/* Entry-point bodies shared by the legacy and per-thread variants: take the
   lock, check context and sticky error, resolve the stream (per_thread picks
   what NULL means) and submit. */
CUresult sim_api_copy(uint64_t dst, uint64_t src, size_t n, CUstream h, bool per_thread,
                      bool async);
CUresult sim_api_memset(uint64_t dst, uint32_t value, int elem, size_t count, CUstream h,
                        bool per_thread, bool async);
/* Returns the sticky error, or CUDA_SUCCESS. Lock held. */
CUresult sim_sticky(void);
/* The stream of a call that submits work: sim_stream_get, then the sticky error in *rc (the
   stream is usable only when *rc is CUDA_SUCCESS). Lock held. */
static inline struct sim_stream *sim_stream_for_work(CUstream h, bool per_thread, CUresult *rc)
{
    struct sim_stream *s = sim_stream_get(h, per_thread, rc);
    if (*rc == CUDA_SUCCESS)
        *rc = sim_sticky();
    return s;
}

/* simgpu_peer.c */
/* Entry-point body of cuMemcpyPeer(Async) and their per-thread forms. */
CUresult sim_api_copy_peer(uint64_t dst, CUcontext dst_ctx, uint64_t src, CUcontext src_ctx,
                           size_t n, CUstream h, bool per_thread, bool async);

/* simgpu_kernel.c */
bool sim_func_valid(const struct sim_func *f);
/* Entry-point body of every launch form: checks, copies the parameters, submits. */
CUresult sim_api_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, CUstream h,
                        bool per_thread, void **params, void **extra);
/* Entry-point body of cuLaunchKernelEx: CUDA_ERROR_INVALID_VALUE without a config, else the
   launch the config describes (its attributes are ignored). */
CUresult sim_api_launch_ex(const CUlaunchConfig *config, CUfunction f, bool per_thread,
                           void **params, void **extra);

/* simgpu_event.c — entry-point bodies shared by both forms (simgpu_ordered.c) */
CUresult sim_api_event_record(CUevent e, CUstream h, bool per_thread);
CUresult sim_api_wait_event(CUstream h, CUevent e, bool per_thread);

/* simgpu_streamapi.c — entry-point bodies shared by both forms (simgpu_ordered.c) */
/* What an entry point does to the stream it names, with sim.lock held. */
typedef CUresult (*sim_stream_op)(struct sim_stream *s, void *arg);
/* Takes sim.lock, resolves h (sim_stream_get) and applies op(stream, arg): op's answer, or the
   error of resolving. */
CUresult sim_on_stream(CUstream h, bool per_thread, sim_stream_op op, void *arg);
CUresult sim_api_stream_sync(CUstream h, bool per_thread);
CUresult sim_api_stream_query(CUstream h, bool per_thread);
CUresult sim_api_stream_flags(CUstream h, bool per_thread, unsigned *flags);
CUresult sim_api_host_func(CUstream h, bool per_thread, CUhostFn fn, void *data);
CUresult sim_api_capture_begin(CUstream h, bool per_thread, CUstreamCaptureMode mode);
CUresult sim_api_capture_end(CUstream h, bool per_thread, CUgraph *g);
CUresult sim_api_capture_info(CUstream h, bool per_thread, CUstreamCaptureStatus *st,
                              cuuint64_t *id, CUgraph *g, const CUgraphNode **deps,
                              const CUgraphEdgeData **edges, size_t *ndeps);

/* simgpu_graph.c */
CUresult sim_api_graph_launch(CUgraphExec e, CUstream h, bool per_thread);

/* simgpu_alloc.c */
/* Entry-point bodies shared by both forms (simgpu_ordered.c) */
CUresult sim_api_alloc_async(CUdeviceptr *out, size_t bytes, CUstream h, bool per_thread);
CUresult sim_api_free_async(CUdeviceptr ptr, CUstream h, bool per_thread);
/* Unmaps and releases a cuMemAlloc / cuMemAllocAsync range (lock held). */
void sim_release_range(uint64_t va);
/* Runs a cuMemFreeAsync: releases the range unless it was reused since (lock held). */
void sim_release_async(uint64_t va, uint64_t gen);

/* simgpu_pool.c — the default memory pool; lock held for all */
/* The best-fitting freed block (at most twice size) an allocation on s may take now, or NULL:
   one freed on s, one whose free s waited for through an event, or one whose free the host
   sees complete (as the pool's reuse attributes allow). */
struct sim_resv *sim_pool_reusable(struct sim_stream *s, uint64_t size);
/* Drops r's reference to its free command (r is reused or released). */
void sim_pool_forget_free(struct sim_resv *r);
/* Gives back to the device every pooled block whose free the host sees complete: called where
   the pool releases memory (synchronisations, and before an allocation fails). */
void sim_pool_trim(void);

/* simgpu_graph.c */
CUresult sim_capture_begin(struct sim_stream *s, CUstreamCaptureMode mode);
CUresult sim_capture_end(struct sim_stream *s, CUgraph *g);
CUresult sim_capture_status(struct sim_stream *s, CUstreamCaptureStatus *st, cuuint64_t *id,
                            CUgraph *g);
CUresult sim_capture_append(struct sim_stream *s, struct sim_cmd *c);

/* simgpu_module.c — lock held */
/* The kernel a function handle runs: a registered function, or a live module's or library's
   handle for one; NULL for anything else (a stale handle included). */
struct sim_func *sim_func_of(CUfunction h);

/* simgpu_proc.c */
CUresult sim_get_proc(const char *sym, void **pfn, int version, cuuint64_t flags,
                      CUdriverProcAddressQueryResult *status);

/* simgpu_link.c — lock held */
/* Reads SIMGPU_LINK_BOTH_GBPS ("H2D,D2H"); call after the full rates are read. Returns 0, or
   -1 when the setting is malformed or conflicts with SIMGPU_LINK_SHARED (reported, ignored). */
int sim_link_configure(const char *spec);
/* Whether commands of engine e take a link ticket: the both-busy rates are set and e copies
   over the link. */
bool sim_link_ordered(int engine);
/* Places a copy of bytes on engine (ENG_H2D or ENG_D2H) starting at virtual time start, after
   every copy with an earlier link ticket; returns its duration in microseconds under the fluid
   rule (plan_link_place) and records its busy interval. Never fails: when the interval cannot be
   recorded (out of memory, diagnosed once), later copies of the other direction are not slowed
   by it. */
double sim_link_place(int engine, double start, uint64_t bytes);

/* simgpu_stats.c */
void sim_stats_atexit(void);

#endif
