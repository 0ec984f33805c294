/* shim_trace.h — the trace writer's interface: what the interposer records, from any thread.
 *
 * Contract shared by the interposer (the caller) and the trace writer (shim_trace_*.c):
 * - Every record function is cheap and callable from any thread at any time,
 *   including before shim_trace_start() and after shim_trace_stop() (then it
 *   does nothing). It appends to the calling thread's buffer: no global lock and
 *   no allocation on the common path (a full buffer is handed to the writer
 *   thread). It never blocks on I/O, never calls exit() or abort(), and never
 *   calls into CUDA.
 * - Identifiers are chosen by the interposer: alloc_id and func_id are nonzero
 *   and unique for the life of the process (an id is never reused); stream is
 *   the CUstream value as an integer (0 = legacy default stream, 2 = per-thread).
 * - seq is the process-wide launch index (0, 1, 2, ... in launch order) that the
 *   interposer assigns; kernel times and step boundaries refer to it.
 * - Each record gets a timestamp (nanoseconds, CLOCK_MONOTONIC) and the
 *   calling thread's id when it is recorded.
 */
#ifndef SHIM_TRACE_H
#define SHIM_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "plan_rules.h"
#include "shim_trace_format.h"

/* What kind of memory an allocation record describes: plan_mem_kind (planner/rules/plan_rules.h,
   the one list of kinds, which the planner's models use too), with its names. */

/* Direction of a copy record. */
enum shim_copy_dir {
    SHIM_COPY_H2D = 1,
    SHIM_COPY_D2H = 2,
    SHIM_COPY_D2D = 3,
    SHIM_COPY_H2H = 4,
    SHIM_COPY_MEMSET = 5, /* dst_id set, src_id 0 */
};

/* What a synchronisation record waited for. */
enum shim_sync_kind {
    SHIM_SYNC_CTX = 1,    /* cuCtxSynchronize */
    SHIM_SYNC_STREAM = 2, /* cuStreamSynchronize */
    SHIM_SYNC_EVENT = 3,  /* cuEventSynchronize */
    SHIM_SYNC_COPY = 4,   /* a synchronous copy */
};

/* Which way a residency move went. */
enum shim_move_dir {
    SHIM_MOVE_TO_HOST = 1,   /* an eviction: device -> pinned host memory */
    SHIM_MOVE_TO_DEVICE = 2, /* a restore: host -> device */
};

/* Why the residency manager moved (or waited for) an allocation. */
enum shim_move_reason {
    SHIM_REASON_BUDGET = 1,        /* evicted to make room within the budget */
    SHIM_REASON_DEMAND = 2,        /* restored because a launch or copy needs it now */
    SHIM_REASON_PREFETCH = 3,      /* restored ahead of its predicted next use */
    SHIM_REASON_CANCELLED = 4,     /* an eviction a launch cancelled: bytes were copied, the
                                      device copy stays */
    SHIM_REASON_PLANNED_EVICT = 5, /* a plan evicted it after its last use before a gap */
    SHIM_REASON_ERROR = 6,         /* rolled back after a failed driver call */
    SHIM_REASON_FREED = 7,         /* the program freed it */
    SHIM_REASON_PLACEMENT = 8,     /* (transitions, 1.11) made on the host to stay there: its size
                                      is one of host_resident's */
};

/* The short name of a reason ("budget", "demand", "prefetch", "cancelled", "planned", "error",
   "freed", "placement"; "?" for a value the format does not define), as libshim's log and the
   tools print it: the one table of these names, beside the enum. */
static inline const char *shim_move_reason_name(uint32_t reason)
{
    static const char *const names[] = {
        [SHIM_REASON_BUDGET] = "budget",         [SHIM_REASON_DEMAND] = "demand",
        [SHIM_REASON_PREFETCH] = "prefetch",     [SHIM_REASON_CANCELLED] = "cancelled",
        [SHIM_REASON_PLANNED_EVICT] = "planned", [SHIM_REASON_ERROR] = "error",
        [SHIM_REASON_FREED] = "freed",           [SHIM_REASON_PLACEMENT] = "placement"};
    return reason < sizeof names / sizeof names[0] && names[reason] ? names[reason] : "?";
}

/* Why an allocation was pinned on the device for good (the pin record, since 1.5): the entry
   point that handed its memory or its address range to someone libshim cannot follow. */
enum shim_pin_reason {
    SHIM_PIN_IPC = 1,    /* cuIpcGetMemHandle: another process may map it */
    SHIM_PIN_EXPORT = 2, /* cuMemExportToShareableHandle of one of its chunks */
    SHIM_PIN_RETAIN = 3, /* cuMemRetainAllocationHandle (libshim now refuses it for managed memory:
                            kept for traces written before) */
    SHIM_PIN_RANGE = 4,  /* cuMemGetAddressRange: raw range users (NCCL registration) */
};

/* Residency state of a unit (what moves: one managed allocation, or a slab that packs
   several small managed allocations into one 2 MiB chunk). The residency manager's state machine
   (shim/resid/state/shim_resid_fsm.c) uses these names and the events below; the tools read them.
 */
enum shim_resid_state {
    SHIM_RS_NONE = 0, /* before it exists / after it is gone */
    SHIM_RS_DEVICE = 1,
    SHIM_RS_EVICTING = 2,
    SHIM_RS_HOST = 3,
    SHIM_RS_RESTORING = 4,
};

/* What happened to it. */
enum shim_resid_event {
    SHIM_EV_EVICT = 1,       /* an eviction's copy was submitted (DEVICE -> EVICTING) */
    SHIM_EV_RESTORE = 2,     /* a restore's copy was submitted (HOST -> RESTORING) */
    SHIM_EV_COPY_DONE = 3,   /* the copy completed and the range was remapped (-> HOST or DEVICE) */
    SHIM_EV_CANCEL = 4,      /* a touch cancelled an eviction in flight (EVICTING -> DEVICE) */
    SHIM_EV_ERROR = 5,       /* a driver call failed: the step was undone (state restored) */
    SHIM_EV_FREE = 6,        /* the program freed it (-> NONE) */
    SHIM_EV_CREATE = 7,      /* it was made (NONE -> DEVICE): the residency manager's own event,
                                never written to a trace (the allocation or slab record says it) */
    SHIM_EV_ORDERED = 8,     /* a restore's range was remapped before its copy ended: its users
                                wait for the copy in stream order (RESTORING -> DEVICE) */
    SHIM_EV_CREATE_HOST = 9, /* it was made in host memory (NONE -> HOST): the budget was held by
                                submissions or moves in progress (1.10; bytes: its size) */
};

/* One residency transition of unit unit_id (an allocation id, or a slab id from
   shim_trace_slab). from/to: enum shim_resid_state; event: enum shim_resid_event;
   reason: enum shim_move_reason. bytes: what the transition's copy moves (0 if none);
   stream: the program's stream whose operation caused it (0 if none); seq: the launch
   index when it happened; score: the victim score when budget pressure chose it (0
   otherwise; higher = better victim); next_use: the predicted launch index of the unit's
   next use (UINT64_MAX when unknown). */
struct shim_trace_transition {
    uint64_t unit_id, bytes, stream, seq, score, next_use;
    uint8_t from, to, event, reason;
    uint32_t device; /* the device whose manager owns the unit */
};

/* An in-process plan when it was installed (the plan record). first_seq: the launch index at
   installation (a step boundary: the first launch of the step it applies from, unless another
   thread launched meanwhile); model_step, model_first_seq: the recorded step it was made from;
   step_len: launches per step. The prediction is for one step at budget_bytes, in the model's
   time: predicted_us of which stall_us stalled, native_us without a budget, bound_us a lower
   bound of the step time; the peaks and floor in bytes; bytes each way, evictions and
   prefetches per step; feasible: the plan keeps the budget; slab_max_bytes (1.9): the largest
   managed allocation that shares a slab, so that a reader knows which allocations the plan
   could move on their own (planner/rules/plan_rules.h, plan_rules_movable). */
struct shim_trace_plan {
    SHIM_TRACE_PLAN_FIGURES; /* first_seq .. prefetches, as the record's body has them */
    bool feasible;
    uint64_t slab_max_bytes;
    double remap_us; /* 1.12: the mover's host time per move the plan was made with (measured, or
                        link_remap's), so that a reader's model of the step is the plan's */
};

/* What a plan achieved in one step (the plan_step record): step `step` began at launch
   first_seq; the rest counts what happened between its start and its end boundary: planned
   evictions and prefetches started, planned moves whose allocation was absent or busy
   (missing), touches of an allocation the plan had moved out before its prefetch
   (departures), evictions for room (reactive_evictions), bytes of every eviction and restore
   the shim started, and nanoseconds the program's threads stalled on residency. */
struct shim_trace_plan_step {
    uint64_t step, first_seq, evictions, prefetches, missing, departures, reactive_evictions;
    uint64_t bytes_to_host, bytes_to_device, stall_ns;
};

struct shim_trace_info { /* written once into the file header */
    int pid, rank;
    const char *command;     /* the program's command line, may be NULL */
    const char *config_text; /* the effective configuration, printable, may be NULL */
    unsigned flush_ms;       /* how often the writer drains the buffers; 0: every 10 ms */
    /* The most bytes the file may take (0: no limit). Near three quarters of it the writer
       stops writing detail at the next step record and writes each later step as one
       step_summary record (tools/trace/TRACE-FORMAT.md, "Bounded traces"); past the limit it
       writes nothing but the END chunk, which always fits. */
    uint64_t max_bytes;
    /* Called by the writer thread, at most once per event, for what the program's log should
       say: the limit reached (level 3, info), the first write error (level 1, error). Levels
       are shim_log's (1 error, 2 warn, 3 info). NULL: nothing is said. */
    void (*log)(int level, const char *msg);
};

/* Opens the trace file: pattern with %p (pid) and %r (rank) expanded by shim_path_expand
   (shim_path.h; at most PATH_MAX - 1 bytes, never cut short), created exclusively with mode
   0600 (an existing file or symbolic link is never overwritten or followed), and starts the
   writer thread. Returns 0, or -1 with a one-line reason in err.
   A later write error (a full disk, EIO, a file size limit) is not returned: the
   writer says it once through info->log, stops recording, cuts the file back to
   its last whole chunk and, when it can, ends it with a note and an END chunk
   that count the records lost. */
int shim_trace_start(const char *pattern, const struct shim_trace_info *info, char *err,
                     size_t errlen);

/* Flushes every thread's buffer, writes the final chunk, stops the writer
   thread and closes the file. Safe to call more than once, and at exit. */
void shim_trace_stop(void);

/* Before shim_trace_stop: the most device bytes the primary residency manager held at once,
   written in the END chunk as resident_peak_bytes (format 1.9). Not called: no such key. */
void shim_trace_set_resident_peak(uint64_t bytes);

/* Before shim_trace_stop: the name of the device the primary residency manager serves (as
   cuDeviceGetName gives it), written in the END chunk as device_name (format 1.13), so that a
   reader knows what the run's clocks were (shim_fig_simulated). Not called: no such key. */
void shim_trace_set_device_name(const char *name);

struct shim_fig_steps;
struct shim_fig_moves;
/* This run's figures so far (shim_trace_figures.h), as its step, plan, plan_step and transition
   records fed them, whether or not a trace is written: the steps, and the moves' taxonomy
   (*have_moves: transitions were recorded, trace.record's moves). For the exit line: a reader of
   the trace is fed the same records. */
void shim_trace_figures_live(struct shim_fig_steps *steps, struct shim_fig_moves *moves,
                             int *have_moves);

/* Writes all cnt buffers of iov to fd (the trace, or the log: shim_trace_file.c), resuming after
   short writes and signals, and stopping at the file size limit (RLIMIT_FSIZE) with EFBIG rather
   than cross it and raise SIGXFSZ, which would end the program. iov is
   updated as it is written. 0, or -1 with errno set (some bytes may be written). */
int shim_trace_write_all(int fd, struct iovec *iov, int cnt);

/* In the child of a fork: forget the parent's file and threads without
   touching them; recording stays off in the child. */
void shim_trace_forget_after_fork(void);

/* Whether records are being written (cheap; for skipping work that only feeds the trace). */
int shim_trace_active(void);

/* ---- records ---- */

/* An allocation on device 0 (pinned host memory: device 0 too). */
void shim_trace_alloc(uint64_t alloc_id, uint64_t addr, uint64_t bytes, plan_mem_kind kind,
                      uint64_t stream);
/* An allocation made on CUDA device ordinal `device` (the device current at the call). */
void shim_trace_alloc_on(uint64_t alloc_id, uint64_t addr, uint64_t bytes, plan_mem_kind kind,
                         uint64_t stream, uint32_t device);
void shim_trace_free(uint64_t alloc_id, uint64_t stream);
/* The name of a function, recorded once before its first launch record. */
void shim_trace_func_name(uint64_t func_id, const char *name);
/* A kernel launch and the allocations its parameters point into (n may be 0). */
void shim_trace_launch(uint64_t seq, uint64_t func_id, uint64_t stream, const uint64_t *alloc_ids,
                       uint32_t n);
/* The measured duration of launch seq (profiled steps only). */
void shim_trace_kernel_time(uint64_t seq, double usec);
/* A kernel_idle record (1.14): launch seq's stream stood idle usec before it, after launch seq - 1
   there (usec < 0: libshim's own work stood in that time, so it is not the program's); one of the
   timing's event records costs the host record_us (profiled steps only; the planner's figures,
   plan_build_kernel_idle, plan_build_kernel_disturbed, plan_build_timing_cost). */
void shim_trace_kernel_idle(uint64_t seq, double usec, double record_us);

/* A link_time record (1.9): one move's copy of bytes, to the device or to the host, took usec
   on libshim's own stream (timed by events around it, as the in-process planner measures the
   link), so that a reader sees the link libshim saw rather than wall-clock move times. */
void shim_trace_link_time(bool to_device, uint64_t bytes, double usec);
void shim_trace_copy(enum shim_copy_dir dir, uint64_t dst_id, uint64_t src_id, uint64_t bytes,
                     uint64_t stream);
void shim_trace_sync(enum shim_sync_kind kind, uint64_t stream);
/* A training step begins at launch first_seq (step 0 is the first detected). */
void shim_trace_step(uint64_t step, uint64_t first_seq);
/* A graph launch; the allocations it touched were recorded during capture. */
void shim_trace_graph_launch(uint64_t graph_id, uint64_t stream);
/* The residency budget in force: device bytes the shim keeps managed plus visible
   unmanaged allocations within, host bytes it may use for evicted data, and the
   device's physical total, for the device it manages (one record per device's manager, when it
   starts). */
void shim_trace_budget(uint64_t budget_bytes, uint64_t host_budget_bytes, uint64_t device_total,
                       uint32_t device);
/* One residency move of an allocation on device: start_ns when its copy was submitted,
   end_ns when the range was remapped (or the move abandoned), CLOCK_MONOTONIC. */
void shim_trace_move(enum shim_move_dir dir, uint64_t alloc_id, uint64_t bytes, uint64_t start_ns,
                     uint64_t end_ns, enum shim_move_reason reason, uint32_t device);
/* The program's thread was blocked by device's residency manager from start_ns to end_ns
   (waiting for a restore, or for room), for the given reason. */
void shim_trace_stall(uint64_t start_ns, uint64_t end_ns, enum shim_move_reason reason,
                      uint32_t device);
/* One residency transition (struct shim_trace_transition above); t is not kept. A move is
   the EVICT or RESTORE transition that starts it and the one that ends it (COPY_DONE, CANCEL,
   ERROR or FREE of the same unit), each recorded when it happens: the record's time is the
   transition's. Unit ids share the allocation ids' space: a slab id is never an allocation's
   id. A NULL t records nothing. */
void shim_trace_transition(const struct shim_trace_transition *t);
/* Allocation alloc_id (addr, bytes as the program allocated it), part of unit unit_id, was
   pinned on the device for good for reason (enum shim_pin_reason); from: the unit's state
   before (enum shim_resid_state: 1 device, 3 host when it had to be brought back). Recorded
   once per allocation and reason. */
void shim_trace_pin(uint64_t alloc_id, uint64_t unit_id, uint64_t addr, uint64_t bytes,
                    uint32_t reason, uint32_t from);
/* A slab: a device range [addr, addr+bytes) in which several small managed allocations
   live; its unit id moves as one. Recorded once when the slab is made (before its first
   transition); its members are the allocations recorded inside the range while they live.
   device: the CUDA device whose residency manager made it. */
void shim_trace_slab(uint64_t slab_id, uint64_t addr, uint64_t bytes, uint32_t device);
/* An in-process plan was installed (struct shim_trace_plan above); p is not kept. A NULL p
   records nothing. */
void shim_trace_plan(const struct shim_trace_plan *p);
/* A step closed under a plan (struct shim_trace_plan_step above); s is not kept. A NULL s
   records nothing. */
void shim_trace_plan_step(const struct shim_trace_plan_step *s);
/* A free-form event worth showing in the report (degradations, warnings). */
void shim_trace_note(const char *text);

#endif
