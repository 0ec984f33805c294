/* report_trace.h — the trace reader room's seam (tools/trace/): reads a trace file into memory
 * (report_trace_load) and computes what every report is made of: statistics, steps, devices and
 * residency moves (report_stats_compute, report_moves_compute). The format: TRACE-FORMAT.md,
 * beside this header; its definitions come from shim_trace_format.h and the enums of
 * shim_trace.h (the build's SHIM_FORMAT_INC).
 *
 * Who may include it: the report (tools/report/), the trace tests, the trace bench and the
 * fuzz target. It depends on nothing else in tools/ but the growable array (tools/util/); it
 * writes nothing to stdout or stderr and never exits: errors come back as return values, with a
 * one-line reason in the caller's buffer where one is taken. Functions are grouped under the
 * file that defines them.
 */
#ifndef REPORT_TRACE_H
#define REPORT_TRACE_H

#include "shim_trace_figures.h"
#include "shim_trace_format.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One record, decoded. The meaning of a..d depends on kind (enum shim_trace_kind):
     alloc        a alloc_id, b addr, c bytes, d stream, sub alloc_kind, sub2 device (1.6)
     free         a alloc_id, d stream
     func_name    a func_id, text
     launch       a seq, b func_id, c n_allocs, d stream, ids
     kernel_time  a seq, usec
     copy         a dst_id, b src_id, c bytes, d stream, sub dir
     sync         d stream, sub sync_kind
     step         a step, b first_seq
     graph_launch a graph_id, d stream
     note         text
     dropped      a records, b total
     budget       a budget_bytes, b host_budget_bytes, c device_total, d device (1.7)
     move         a alloc_id, b bytes, c start_ns, d end_ns, e device (1.7), sub dir, sub2 reason
     stall        c start_ns, d end_ns, e device (1.7), sub2 reason
     transition   a unit_id, b bytes, c seq, d stream, e score, f next_use, sub event,
                  sub2 reason, sub3 from, sub4 to, device (1.8)
     slab         a slab_id, b addr, c bytes, device (1.8)
     pin          a alloc_id, b unit_id, c addr, d bytes, sub reason, sub2 from
     link_time    b bytes, usec, sub dir (1.9)
     plan         a index in report_trace.plans (every field is there)
     plan_step    a index in report_trace.plan_steps (every field is there)
     step_summary a index in report_trace.summaries (every field is there) */
typedef struct report_rec {
    uint64_t t_ns;
    uint64_t a, b, c, d, e, f;
    double usec;
    size_t text; /* offset of a NUL-terminated string in report_trace.text */
    size_t ids;  /* offset of n_ids values in report_trace.ids */
    uint32_t n_ids;
    uint32_t tid;
    uint32_t sub, sub2;
    uint16_t kind;
    uint8_t sub3, sub4;
    uint32_t device; /* transition's and slab's device field (1.8; 0 before) */
    uint64_t order;  /* position in the file, to keep sorting stable */
} report_rec;

/* A plan record (since format 1.3): an in-process plan as libshim installed it, and its
   prediction for one step at budget_bytes in the planner's model time (not the wall time of a
   run on the simulated device). first_seq: the launch index at installation; bound_us: a lower
   bound of the step time; the bytes and counts are per step; feasible is 0 or 1 as the writer
   gave it (another value travels as it is). t_ns: the record's time. */
typedef struct report_plan {
    uint64_t t_ns;
    uint64_t first_seq, model_step, model_first_seq, step_len;
    uint64_t budget_bytes, predicted_peak_bytes, native_peak_bytes, floor_bytes;
    double native_us, predicted_us, stall_us, bound_us;
    uint64_t bytes_to_host, bytes_to_device, evictions, prefetches, feasible;
    uint64_t slab_max_bytes; /* 1.9; 0 in older traces */
    double remap_us;         /* 1.12; 0 in older traces */
} report_plan;

/* A plan_step record (since format 1.3): what the plan in force did in step `step`, which
   began at launch first_seq (see shim_trace.h's struct shim_trace_plan_step). */
typedef struct report_plan_step {
    uint64_t t_ns;
    uint64_t step, first_seq, evictions, prefetches, missing, departures, reactive_evictions;
    uint64_t bytes_to_host, bytes_to_device, stall_ns;
} report_plan_step;

/* A step_summary record (since format 1.4): what a bounded trace's writer folded, past the
   detail, into one record: `steps` steps from `step` on, the first of which began at launch
   first_seq (steps == 0: what came after the last step, or between steps, in no step), in the
   window [start_ns, end_ns]. Counts of the records folded, the most device and pinned host
   bytes held in the window and the device bytes at its end, the residency moves and stalls
   (as report_residency counts them), and moves by reason (index 0: reasons the format does
   not define). Fields a writer did not give are 0. t_ns: the record's time. */
typedef struct report_summary {
    uint64_t t_ns;
    uint64_t step, steps, first_seq, start_ns, end_ns, records;
    uint64_t launches, allocations, frees, copies, syncs, graph_launches, kernel_times;
    uint64_t peak_device_bytes, device_bytes, peak_host_bytes;
    struct shim_trace_move_counts moves; /* evictions .. cancelled_bytes, as in the body */
    uint64_t stalls, stall_ns;
    uint64_t moves_by_reason[8];
} report_summary;

typedef struct report_trace {
    const char *name; /* as given to the loader, for messages */
    uint16_t major, minor;
    int pid, rank;
    uint64_t start_ns;          /* INFO start_ns, else the first record's time */
    uint64_t start_realtime_ns; /* INFO start_realtime_ns: CLOCK_REALTIME at start_ns; 0: none */
    char *command, *config, *writer;
    report_rec *recs; /* sorted by time, then file order */
    size_t n, cap;
    char *text;
    size_t text_len, text_cap;
    uint64_t *ids;
    size_t ids_len, ids_cap;
    report_plan *plans; /* the plan records, in file order */
    size_t nplans, plans_cap;
    report_plan_step *plan_steps; /* the plan_step records, in file order */
    size_t nplan_steps, plan_steps_cap;
    report_summary *summaries; /* the step_summary records, in file order */
    size_t nsummaries, summaries_cap;
    size_t chunks;          /* whole chunks read */
    size_t skipped_chunks;  /* of types this reader does not know */
    size_t skipped_records; /* of kinds this reader does not know */
    uint64_t dropped;       /* sum of the dropped records */
    int complete;           /* the END chunk was read */
    uint64_t end_records, end_dropped;
    /* END keys of a bounded writer (1.4; 0 or empty when absent): the limit, records lost at
       it and after a write error (whose text is write_error), and the detail's last step. */
    uint64_t max_bytes, lost_limit, lost_error;
    uint64_t lost_steps; /* steps whose summaries were lost at the limit (not in iterations) */
    uint64_t detail_steps, last_detail_step; /* have_detail_end: the END chunk gave them */
    int have_detail_end;
    /* have_resident_peak (END chunk, format 1.9): the most device bytes the primary residency
       manager held at once, the figure its budget bounds (older traces and runs without
       residency: 0, not have) */
    uint64_t resident_peak_bytes;
    int have_resident_peak;
    /* END chunk (format 1.13): the name of the device the primary manager served, as the driver
       gives it; "" when not recorded. On the simulated device wall times are the simulator's own
       (shim_fig_simulated). */
    char device_name[128];
    char write_error[120];
    int truncated;         /* the file stops inside a chunk, or without an END chunk */
    uint64_t truncated_at; /* byte offset where the whole chunks end */
    char note[200];        /* why it is truncated, one line */
} report_trace;

/* ---- report_trace_load.c ---- */

/* Reads the trace at path into t. Returns 0 (t->truncated says whether the file ended early),
   or -1 with a one-line reason naming path and a byte offset in err; t is then empty. */
int report_trace_load(report_trace *t, const char *path, char *err, size_t errlen);

/* The same from len bytes at data; name stands for the file in messages. */
int report_trace_load_mem(report_trace *t, const uint8_t *data, size_t len, const char *name,
                          char *err, size_t errlen);

/* Frees what a load made. */
void report_trace_free(report_trace *t);

/* ---- report_trace_records.c ---- */

/* The trace being read: the schema resolved against the kinds this reader knows. */
typedef struct report_schema report_schema;

/* Decodes a SCHEMA payload of len bytes at p (file offset base). 0, or -1 with the reason in
   err ("byte N: ..."). */
int report_schema_parse(report_schema **out, const uint8_t *p, size_t len, uint64_t base, char *err,
                        size_t errlen);

/* Frees a schema report_schema_parse made; NULL is allowed. */
void report_schema_free(report_schema *s);

/* Appends the records of a RECORDS payload to t. 0, or -1 with the reason in err. */
int report_records_parse(report_trace *t, const report_schema *s, const uint8_t *p, size_t len,
                         uint64_t base, char *err, size_t errlen);

/* ---- report_trace_kv.c ---- */

/* Reads an INFO or END payload and hands each pair to fn (key and value NUL-terminated).
   0, or -1 with the reason in err. */
int report_kv_parse(const uint8_t *p, size_t len, uint64_t base,
                    void (*fn)(void *ctx, const char *key, const char *value), void *ctx, char *err,
                    size_t errlen);

/* ---- report_trace_stats.c ---- */

typedef struct report_kernel {
    const char *name;
    uint64_t launches, timed;
    double total_us, min_us, max_us;
} report_kernel;

typedef struct report_alloc {
    uint64_t id, addr, bytes, stream;
    uint64_t t_alloc, t_free; /* t_free valid when freed */
    uint64_t touches;         /* launches whose parameters pointed into it */
    uint32_t kind, tid;
    uint32_t device; /* CUDA device ordinal (format 1.6; 0 in older traces) */
    int freed;
    int64_t step;      /* the step it was made in, -1 before the first */
    int64_t free_step; /* the step it was freed in (freed), -1 before the first or after the last */
    /* the names of the kernels of the first and the last launch whose parameters pointed into it
       (NULL: none did); strings of the stats, valid while it is */
    const char *first_kernel, *last_kernel;
} report_alloc;

/* Residency moves and stalls (since format 1.1), overall or of one step. An eviction is a move
   to host whose reason is not "cancelled"; a cancelled eviction is counted apart, but its
   bytes were copied, so they are in bytes_to_host. stall_ns sums the stalls' durations. */
typedef struct report_residency {
    struct shim_trace_move_counts moves; /* shim_trace_count_move: the writer's arithmetic */
    uint64_t stalls, stall_ns;
} report_residency;

typedef struct report_step {
    uint64_t step, first_seq, t_start;
    uint64_t covers; /* steps this row stands for: 1, or a step_summary record's steps */
    int summary;     /* from a step_summary record (format 1.4): its figures are the record's
                        plus those of any detailed record in its window */
    uint64_t t_mark; /* when the step's mark was written (the step had closed) */
    uint64_t end_seq, t_end; /* first launch after the step (UINT64_MAX: none), its end time */
    uint64_t launches, allocations, frees, peak_device_bytes;
    report_residency residency; /* moves and stalls that started in [t_start, t_end) */
} report_step;

/* Device bytes held on device `device` (a slot) after an alloc or free record that changed them
   (pinned host memory excluded), one entry per device changed: the walk the peaks come from, so
   the largest value of the primary device's entries is peak_device_bytes. */
typedef struct report_held {
    uint64_t t_ns;
    size_t rec; /* index in report_trace.recs */
    uint64_t bytes;
    uint32_t device;
} report_held;

#define REPORT_MAX_DEVICES 64

typedef struct report_stats {
    uint64_t launches, allocations, frees, copies, syncs, graph_launches, notes, kernel_times;
    uint64_t warmup_launches, launches_per_iteration, allocations_per_iteration;
    /* Device figures (peak, end, the held series, steps' peaks) are those of the primary
       device: the one managed allocations are on (the device libshim serves), else the device
       of the first device allocation. Every device's own are in device_*. */
    uint64_t peak_device_bytes, peak_t_ns, end_device_bytes, peak_host_bytes;
    uint32_t primary_device;
    uint32_t ndevices; /* highest device ordinal with an allocation, plus one (at most
                          REPORT_MAX_DEVICES; higher ordinals count in the last) */
    uint64_t device_allocs[REPORT_MAX_DEVICES], device_peak[REPORT_MAX_DEVICES];
    /* Each device's manager (format 1.7: budget, move and stall records name their device; in
       older traces every one counts as the primary device's): its budget (0: no budget record)
       and its moves and stalls. */
    uint64_t device_budget[REPORT_MAX_DEVICES];
    report_residency device_residency[REPORT_MAX_DEVICES];
    uint64_t copy_bytes[6]; /* by enum shim_copy_dir */
    uint64_t unmatched_frees, unmatched_times, duplicate_allocs;
    uint64_t first_ns, last_ns;
    /* The primary device's last budget record, else the last one (budgets == 0: none, and the
       three are 0). */
    uint64_t budgets, budget_bytes, host_budget_bytes, device_total;
    report_residency residency; /* every move and stall, in steps or not */
    uint64_t odd_moves;         /* moves of a direction the format does not define: not counted */
    report_step *steps;         /* by first_seq */
    size_t nsteps;
    /* Steps in all: nsteps, plus what summary rows cover beyond one step each. */
    uint64_t iterations;
    /* Bounded traces (format 1.4): step_summary records, the steps they cover, the records
       folded into them; the first summarised step (valid when summarised_steps > 0). */
    uint64_t summaries, summarised_steps, summarised_records, first_summarised_step;
    uint64_t moves_by_reason[8]; /* every move (detailed or summarised) by reason; 0: other */
    report_kernel *kernels;      /* by total time, then launches, then name */
    size_t nkernels;
    report_alloc *allocs; /* in the order they were made */
    size_t nallocs;
    report_held *held; /* in record order (one record's, by device) */
    size_t nheld;
    char **names; /* owned names of unnamed functions */
    size_t nnames;
} report_stats;

/* Computes the statistics of a loaded trace. 0, or -1 when memory ran out. */
int report_stats_compute(report_stats *s, const report_trace *t);

/* Frees what report_stats_compute made; s is then empty. */
void report_stats_free(report_stats *s);

/* The step's wall time: its time window's length in microseconds, or -1 when the window ends
   before it starts. */
double report_step_wall_us(const report_step *st);

/* The primary device of a trace: that of its first managed allocation (the device libshim
   serves), else of its first device allocation, else 0. */
uint32_t report_primary_device(const report_trace *t);
/* The highest device ordinal of a device allocation, plus one: at least 1, at most
   REPORT_MAX_DEVICES. */
uint32_t report_device_count(const report_trace *t);

/* The slot of a device ordinal in the per-device arrays: itself, or REPORT_MAX_DEVICES - 1 for
   ordinals past it (they are counted together there). */
uint32_t report_device_slot(uint64_t device);
/* The device (a slot) of a record: an alloc's own (1.6; 0 before); a budget's, move's or
   stall's from format 1.7 and a transition's or slab's from 1.8, else primary (older traces
   had one residency manager, which served the primary device); primary for other kinds. */
uint32_t report_record_device(const report_trace *t, const report_rec *r, uint32_t primary);

/* Whether the reports show device slot d of s: it is the primary device, or it holds
   allocations, or its residency manager moved something. */
int report_device_shown(const report_stats *s, uint32_t d);

/* Whether an allocation of this kind takes device memory (everything but pinned host). */
int report_alloc_on_device(uint32_t kind);

/* ---- report_trace_figures.c: the figures every surface prints (shim_trace_figures.h) ---- */

/* The figures of t (s: report_stats_compute of t) into f: the verdict's from the budget records,
   the END chunk's resident peak and device name and the primary device's moves and stalls; the
   steps, plans, plan steps and the moves' taxonomy from their records, fed in time order as
   libshim's exit line was fed them. Cannot fail. */
void report_figures_make(const report_trace *t, const report_stats *s, struct shim_figures *f);

/* ---- report_trace_names.c: allocation names a person can recognise ---- */

/* An allocation's role in the training step, from its lifetime against the steps: STATE was made
   before the first step and kept into it (weights, optimizer state made at setup); KEPT was made
   in a step and kept past its end (optimizer state made lazily in the first step, or a caching
   allocator's segment); TEMP lives within one step (activations, temporaries: made and freed in
   the same step; without steps, anything freed); WARMUP was made and freed before the first
   step; HOST is pinned host memory. */
typedef enum report_alloc_role {
    REPORT_ROLE_STATE,
    REPORT_ROLE_KEPT,
    REPORT_ROLE_TEMP,
    REPORT_ROLE_WARMUP,
    REPORT_ROLE_HOST
} report_alloc_role;
/* The role of a, an allocation of s. */
report_alloc_role report_alloc_role_of(const report_alloc *a, const report_stats *s);
/* "weights/state", "kept across steps", "activation/temp", "warm-up temp", "pinned host"; "?"
   for another value. */
const char *report_alloc_role_name(report_alloc_role r);
/* The longest name report_alloc_name writes, with its terminator. */
#define REPORT_ALLOC_NAME_MAX 160
/* Writes a's name into buf (n bytes, cut to fit and terminated) and returns buf: its size, role
   and the kernels of the first and last launches that touched it, e.g. "64.0 MiB weights/state
   (embed_fwd .. adam_step)", "(one_kernel)" when they are the same, "(no kernel used it)". */
const char *report_alloc_name(const report_alloc *a, const report_stats *s, char *buf, size_t n);
/* The allocation of s with id, or NULL. */
const report_alloc *report_alloc_find(const report_stats *s, uint64_t id);

/* ---- report_trace_moves.c: residency transitions paired into moves (since format 1.2) ---- */

/* How a move ended: the transition of its unit that followed its EVICT or RESTORE. */
enum report_outcome {
    REPORT_DONE = 0,       /* COPY_DONE: the copy completed and the range was remapped */
    REPORT_CANCELLED = 1,  /* CANCEL: a touch cancelled the eviction */
    REPORT_ERROR = 2,      /* ERROR: a driver call failed, the step was undone */
    REPORT_FREED = 3,      /* FREE: the program freed the unit */
    REPORT_SUPERSEDED = 4, /* another EVICT or RESTORE of the unit came first (its end was lost) */
    REPORT_UNFINISHED = 5, /* the trace ends first */
};
#define REPORT_OUTCOMES 6
#define REPORT_REASONS  8 /* by_reason[0]: reasons the format does not define; 1..7 by enum */

/* One move: an EVICT or RESTORE transition and the transition of the same unit that ended it.
   Times are the records' (CLOCK_MONOTONIC ns). A unit is a slab when a slab record names its
   id; members then counts the device allocations live at t_start whose address lies in the
   slab's range (allocated at or before t_start, not freed at or before it). device: the device
   (a slot) whose manager moved it (report_record_device of the starting transition). */
typedef struct report_move {
    uint64_t unit, bytes, stream, seq, score, next_use; /* of the starting transition */
    uint64_t t_start;               /* t_end, end_seq: the ending transition's when end_rec */
    uint64_t t_end, end_seq;        /* is not SIZE_MAX, else 0; t_end >= t_start (time order) */
    size_t start_rec, end_rec;      /* indexes in report_trace.recs; end_rec SIZE_MAX: none */
    uint32_t event;                 /* SHIM_EV_EVICT or SHIM_EV_RESTORE */
    uint32_t reason;                /* the starting transition's */
    uint32_t end_event, end_reason; /* the ending transition's; 0 without one */
    uint32_t outcome;               /* enum report_outcome */
    uint32_t device;
    int slab;
    uint64_t members;
    const report_alloc *alloc; /* the allocation the unit is (not a slab), NULL when unknown */
} report_move;

/* A transition that neither starts a move nor completes one with COPY_DONE: every CANCEL,
   ERROR and FREE (whether or not it ended a move), a COPY_DONE with no move open, and events
   the format does not define. */
typedef struct report_other {
    size_t rec;      /* index in report_trace.recs */
    size_t move;     /* index in report_moves.moves of the move it ended; SIZE_MAX: none */
    uint32_t device; /* as for a move */
    int slab;
    uint64_t members; /* as for a move, at the transition's time */
} report_other;

typedef struct report_moves {
    report_move *moves; /* in start order */
    size_t nmoves;
    report_other *others; /* in time order */
    size_t nothers;
    uint64_t transitions, slabs;        /* records of each kind */
    uint64_t by_reason[REPORT_REASONS]; /* moves by their starting reason */
    uint64_t by_outcome[REPORT_OUTCOMES];
    /* The same counts as the taxonomy every surface prints (shim_trace_figures.h): what the
       totals line says in its words. libshim's exit line and the summary count each transition
       by its states (shim_fig_moves_transition); in a trace libshim wrote every move's end
       leaves a moving state, so the counts are these. */
    struct shim_fig_moves taxonomy;
    uint64_t bytes_to_host, bytes_to_device; /* of every move's copy, whatever its outcome */
    uint64_t by_device[REPORT_MAX_DEVICES];  /* moves by device */
    const report_stats *stats; /* what it was computed with: the moves' allocations' names */
} report_moves;

/* Pairs the transitions of t into moves; s (report_stats_compute of t) gives the allocations
   that slab members are counted from. 0, or -1 when memory ran out (m is then empty). */
int report_moves_compute(report_moves *m, const report_trace *t, const report_stats *s);

/* Frees what report_moves_compute made; m is then empty. */
void report_moves_free(report_moves *m);

/* Short names: "done", "cancelled", ... for enum report_outcome, "?" past it. */
const char *report_outcome_name(uint32_t outcome);

/* ---- report_trace_map.c: a u64 -> u64 hash map ---- */

typedef struct report_map {
    uint64_t *keys, *vals; /* vals[i] == 0: empty slot; stored values are value + 1 */
    size_t cap, n;
} report_map;

/* Sets key to value (value < UINT64_MAX). 0, or -1 when memory ran out. */
int report_map_put(report_map *m, uint64_t key, uint64_t value);

/* Whether key is there; its value in *value. */
int report_map_get(const report_map *m, uint64_t key, uint64_t *value);

/* Frees the map's storage; m is then empty and may be used again. */
void report_map_free(report_map *m);

#endif
