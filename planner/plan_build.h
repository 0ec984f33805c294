/* planner/plan_build.h — the step model builder: turns what libshim recorded about the program
 * (allocations, frees, launches with the allocations they touch, copies, kernel times, step
 * marks, copy-link figures) into the planner's iteration model (plan_model) of one step.
 *
 * Event-fed, so that shim-report (reading a trace) and the shim itself (in the process) share it:
 * the caller hands over every event in the order it happened; the builder only appends, and does
 * all the work in plan_build_model. The rules (which allocations a step holds, their bytes, births,
 * deaths and touches, how missing kernel times are filled) are in planner/MODEL-FORMAT.md ("Models
 * built from a trace").
 *
 * Launch indices ("seq") are the process-wide launch numbers the shim gives, 0, 1, 2, ... An event
 * "at seq" happened when the next launch to be made was seq: an allocation at seq exists for
 * launches seq, seq + 1, ...; a free at seq ends it after launch seq - 1.
 *
 * Pure C as the rest of planner/: libc only, no I/O, no globals. A builder is not thread-safe; the
 * caller serialises the calls on one builder. Error contract: as in plan.h. */
#ifndef PLAN_BUILD_H
#define PLAN_BUILD_H

#include "plan.h"
#include "plan_rules.h"

/* The kinds of memory, and libshim's rules of how it holds each (granule, slabs, what moves, the
   bytes held): planner/rules/plan_rules.h, shared with the shim. */

/* Link figures of a model when neither plan_build_link nor plan_build_move gave them: PCIe 4.0
 * x16 (and the simulated device's default), both directions at once, the generator's remap cost. */
#define PLAN_BUILD_GBPS     25.0
#define PLAN_BUILD_DUPLEX   1
#define PLAN_BUILD_REMAP_US 10.0

typedef struct plan_builder plan_builder;

/* What plan_build_model made, for the caller to report. */
typedef struct plan_build_info {
    uint64_t step;         /* the step modelled (its number in plan_build_step) */
    uint64_t first_seq;    /* its first launch */
    uint64_t end_seq;      /* one past its last launch */
    size_t ops;            /* operations: end_seq - first_seq */
    size_t timed;          /* operations with their own kernel time */
    size_t filled;         /* operations whose time was filled in (no kernel time) */
    size_t unrecorded;     /* launch indices of the step with no launch event (filled too) */
    size_t allocs;         /* allocations in the model */
    size_t cyclic;         /* of which exist before and after the step */
    size_t skipped;        /* device allocations of the step live during none of its launches */
    size_t stray_touches;  /* touches of an id that is not live at that launch: left out */
    size_t placed;         /* allocations live in the step that libshim kept on the host
                              (plan_build_on_host): left out of the model */
    uint64_t placed_bytes; /* their bytes, as the program asked for them */
    int measured_h2d;      /* the bandwidth each way came from plan_build_move figures */
    int measured_d2h;
    size_t steps;        /* steps known to the builder */
    uint64_t first_step; /* the smallest and largest step number known (steps > 0) */
    uint64_t last_step;
} plan_build_info;

/* A new empty builder with the default rounding and link, or NULL when memory ran out. */
plan_builder *plan_build_new(void);

/* Frees b; NULL is accepted. */
void plan_build_free(plan_builder *b);

/* Sets the granularity the device rounds plain, stream-ordered and managed allocations to
 * (granule, a power of two; default PLAN_RULES_GRANULE) and the page of plain allocations smaller
 * than granule (a power of two, at most granule; default PLAN_RULES_PAGE). PLAN_ERR_INVALID. */
plan_err plan_build_rounding(plan_builder *b, uint64_t granule, uint64_t page);

/* An allocation id of bytes (as the program asked: the builder rounds) of the given kind at addr,
 * made at seq, on stream for stream-ordered ones (0 otherwise). PLAN_ERR_NOMEM. */
plan_err plan_build_alloc(plan_builder *b, uint64_t id, uint64_t bytes, plan_mem_kind kind,
                          uint64_t addr, uint64_t stream, uint64_t seq);

/* Allocation id, the latest handed over under that id, is held in host memory for good (libshim's
 * host_resident: made on the host, read there through the link, never moved): it is taken as
 * pinned host memory, which holds no device bytes and is left out of models. An id the builder
 * does not hold is ignored. Cannot fail. */
void plan_build_on_host(plan_builder *b, uint64_t id);

/* The end of allocation id, at seq, on stream for stream-ordered frees (0 otherwise). A free of
 * an id the builder does not hold is ignored when the model is built. PLAN_ERR_NOMEM. */
plan_err plan_build_free_alloc(plan_builder *b, uint64_t id, uint64_t stream, uint64_t seq);

/* Launch seq of function func on stream; ids[0..n) are the allocations its parameters point into
 * (0 and unknown ids are ignored when the model is built). PLAN_ERR_NOMEM. */
plan_err plan_build_launch(plan_builder *b, uint64_t seq, uint64_t func, uint64_t stream,
                           const uint64_t *ids, size_t n);

/* A copy or memset at seq touching dst_id and src_id (0: memory not tracked). It counts as a touch
 * of the launch it precedes, seq, which waits for it in stream order. PLAN_ERR_NOMEM. */
plan_err plan_build_copy(plan_builder *b, uint64_t seq, uint64_t dst_id, uint64_t src_id);

/* A copy of the program's between host and device (to_device 1: host to device, 0: device to
 * host) of bytes at seq: after launch seq - 1, in stream order before launch seq. A model holds
 * the copies of its step after each of its operations (a copy before the step's first launch is
 * the previous step's last). Ignored when bytes is 0. PLAN_ERR_NOMEM. */
plan_err plan_build_transfer(plan_builder *b, uint64_t seq, int to_device, uint64_t bytes);

/* The measured duration of launch seq, in microseconds. PLAN_ERR_INVALID for a value that is not
 * finite or is negative, PLAN_ERR_NOMEM. */
plan_err plan_build_kernel_time(plan_builder *b, uint64_t seq, double usec);

/* The time the launch's stream stood idle before launch seq started, in microseconds: from the
 * end of the launch before it on the same stream, when that was launch seq - 1 (the model's
 * plan_op.idle_us; a launch without one has none). Of several figures for a seq the first counts,
 * as of kernel times.
 * PLAN_ERR_INVALID for a value that is not finite, is negative or exceeds PLAN_MAX_DURATION,
 * PLAN_ERR_NOMEM. */
plan_err plan_build_kernel_idle(plan_builder *b, uint64_t seq, double usec);

/* The idle time before launch seq was measured with the recorder's own work in it (libshim's
 * residency waited, copied or remapped between the two launches). A step with one such launch is
 * modelled without idle time (every operation's is 0, as without plan_build_kernel_idle): the
 * recorder's work may reach into other gaps than those it marked (a thread waiting for a lock
 * another holds, the driver-wide lock of another thread's remap), and a native estimate that
 * counted it would hide libshim's own cost in the native step. PLAN_ERR_NOMEM. */
plan_err plan_build_kernel_disturbed(plan_builder *b, uint64_t seq);

/* What one of the timing's event records cost the host, in us (default 0). The times were
 * measured with an event recorded before and after each timed launch, work the step without
 * timing does not do; in a step whose pace the host sets it shows up in the times: where the
 * stream stood idle before a timed launch the device waited for the host, and the host would have
 * submitted the launch 2 record_us earlier for each timed launch of the step before it (the host
 * is taken to run on without waiting for the device within a step), and the launch's own time
 * holds one record_us (the opening record's cost before the launch was submitted). Models are
 * built from the times without these (plan_build_ops.c): the step as it runs untimed.
 * PLAN_ERR_INVALID for a value that is not finite, is negative or exceeds PLAN_MAX_DURATION. */
plan_err plan_build_timing_cost(plan_builder *b, double record_us);

/* Step `step` begins at launch first_seq and has closed: it ends where the next step begins, or,
 * for the last one, after the launches handed over so far. PLAN_ERR_NOMEM. */
plan_err plan_build_step(plan_builder *b, uint64_t step, uint64_t first_seq);

/* The link of every model from now on: bandwidths in GB/s in (0, 1e6], duplex 0 or 1, remap cost
 * in [0, 1e9] us. Replaces the defaults and any measured figures. PLAN_ERR_INVALID. */
plan_err plan_build_link(plan_builder *b, double h2d_gbps, double d2h_gbps, int duplex,
                         double remap_us);

/* Whether the link of every model from now on runs both directions at once (1, the default) or
 * one at a time (0); kept by plan_build_link's figures too. PLAN_ERR_INVALID for another value. */
plan_err plan_build_duplex(plan_builder *b, int duplex);

/* The rates in GB/s of each direction while the other is copying too (model keyword link_both),
 * for every model from now on, kept by plan_build_link; 0, 0 removes them. Each is capped at its
 * direction's rate of the model (measured or given), and dropped on a link that is not duplex.
 * PLAN_ERR_INVALID unless both are 0 or both in (0, 1e6]. */
plan_err plan_build_link_both(plan_builder *b, double h2d_gbps, double d2h_gbps);

/* One copy of the shim's own between device and host (an eviction: to_device 0, a restore:
 * to_device 1) of bytes that took usec from submission to remap. Without plan_build_link, each
 * direction's bandwidth is its bytes over its time, summed over its moves (remap included).
 * Ignored when bytes or usec is not positive. PLAN_ERR_INVALID for a usec that is not finite. */
plan_err plan_build_move(plan_builder *b, int to_device, uint64_t bytes, double usec);

/* Builds the model of step `step` (its number, as given to plan_build_step; -1: the last step
 * with a kernel time, or the last step when none has one) into the initialised empty model *out and
 * describes it in *info (may be NULL). PLAN_ERR_INVALID with a message: no step handed over, no
 * such step, a step without launches, no kernel time in the step; PLAN_ERR_LIMIT: more operations,
 * allocations or touches than a model holds; PLAN_ERR_NOMEM. */
plan_err plan_build_model(const plan_builder *b, int64_t step, plan_model *out,
                          plan_build_info *info, char *msg, size_t cap);

/* plan_build_model, and the allocation id of each model allocation into *ids, a new array of
 * out->nallocs entries (free() it; NULL on failure), so that a caller can find the allocation
 * again (the shim's plan executor). Same errors. */
plan_err plan_build_model_ids(const plan_builder *b, int64_t step, plan_model *out,
                              plan_build_info *info, uint64_t **ids, char *msg, size_t cap);

/* What plan_model_hold found, for the caller to report: allocations and their bytes as held. */
typedef struct plan_hold_info {
    size_t unmanaged, members, units; /* allocations left to the driver, in slabs, units */
    uint64_t unmanaged_bytes, member_bytes, unit_bytes; /* their bytes as held (a member's:
                                                           its blocks), summed */
    size_t slab_chunks; /* the most slabs holding members at one operation */
    size_t slab_lives;  /* the slab allocations added (a slab's span of holding members) */
} plan_hold_info;

/* m into the initialised empty model *out as plan_model_pin does (allocation i pinned unless
 * movable[i]), with the slab members that member[i] marks holding 1 byte each (the format's
 * least) and their slabs' chunks, packed as libshim packs them (planner/plan_slab.c), as pinned
 * allocations of a granule each after m's: out's allocation i is m's for i < m->nallocs. A
 * member's bytes in m are its size or blocks (rounded up to 512-byte blocks here). For models built
 * from a trace (the shim's in-process plan, shim-report plan), whose members are counted in
 * blocks. Counts members and slabs into *info (may be NULL; the unmanaged and unit counts stay 0).
 * PLAN_ERR_INVALID for a granule that is not a power of two of at least a block; PLAN_ERR_NOMEM or
 * a limit of plan_model_add_alloc. */
plan_err plan_model_pin_slabs(const plan_model *m, const bool *movable, const bool *member,
                              uint64_t granule, plan_model *out, plan_hold_info *info);

/* m as libshim holds it into the initialised empty model *out: each allocation's bytes taken
 * as a request of that size, given the kind plan_rules_kind says, held as plan_rules_held_bytes
 * says, its moves copying its own bytes (plan_alloc's moved: m's, at most what it holds), and
 * pinned (plan_model_pin) unless plan_rules_movable; operations, touches, copies and the link as
 * in m. A slab member holds 1 byte (the format's least) and the slabs' chunks are allocations of
 * a granule each after m's, pinned, one per span of operations a slab holds members as libshim
 * packs them (planner/plan_slab.c), so out's allocation i is m's for i < m->nallocs. Describes the
 * allocations in *info (may be NULL). PLAN_ERR_INVALID for rules whose granule or page is not a
 * power of two or whose page exceeds the granule; PLAN_ERR_NOMEM or a limit of
 * plan_model_add_alloc. */
plan_err plan_model_hold(const plan_model *m, const plan_hold_rules *r, plan_model *out,
                         plan_hold_info *info);

#endif
