/* planner/plan.h — public interface of the swap planner: the iteration model, plans, the
 * steady-state timeline simulator, the planners, the stall lower bound and the model generators.
 *
 * Pure C: libc only, no CUDA headers, no I/O, no mutable globals. Every function is reentrant;
 * objects passed in are only read unless the contract says otherwise.
 *
 * Error contract (same words everywhere): a function returning plan_err returns PLAN_OK (0) on
 * success; on failure it returns a negative code, leaves its outputs in a state that the
 * matching *_free function accepts, and, where it takes a message buffer, writes a
 * NUL-terminated message into it (truncated to its capacity). */
#ifndef PLAN_H
#define PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "No operation": a birth before the step, a death after it, no prefetch, no wait. */
#define PLAN_NO_OP (-1)

/* Size limits of a model; the parser and plan_model_check enforce them. */
#define PLAN_MAX_OPS      (1 << 24)
#define PLAN_MAX_ALLOCS   (1 << 24)
#define PLAN_MAX_TOUCHES  (1 << 27)
#define PLAN_MAX_BYTES    (UINT64_C(1) << 60) /* one allocation, and all of them together */
#define PLAN_MAX_DURATION 1e12                /* microseconds, one operation */

typedef enum plan_err {
    PLAN_OK = 0,
    PLAN_ERR_NOMEM = -1,   /* memory allocation failed */
    PLAN_ERR_INVALID = -2, /* bad argument, model or plan */
    PLAN_ERR_PARSE = -3,   /* text model or size string malformed */
    PLAN_ERR_LIMIT = -4,   /* problem too large (exact planner, size limits) */
} plan_err;

/* Static English text for an error code; never NULL. */
const char *plan_strerror(plan_err err);

/* ---- The iteration model ------------------------------------------------------------------ */

/* Hardware figures. Bandwidths in GB/s (1e9 bytes per second). duplex: non-zero when both
 * directions copy at full speed at the same time, zero when they share one link (copies are then
 * served one at a time). remap_us: host time of libshim's mover per move (unmap, map and set
 * access of the range), not link time: one mover serves the moves one at a time beside the
 * link's copies, an eviction's remap after its copy, a restore's from its issue (the name is
 * kept from when it was charged to the link). both_h2d_gbps and both_d2h_gbps: 0 (absent:
 * duplex decides), or the rates of each direction while the other is copying too, each in
 * (0, its full rate], only with duplex (model keyword link_both; the fluid rule of
 * planner/plan_link.c). */
typedef struct plan_hw {
    double h2d_gbps;
    double d2h_gbps;
    int duplex;
    double remap_us;
    double both_h2d_gbps;
    double both_d2h_gbps;
} plan_hw;

/* One operation (kernel launch) of the step, in launch order. The simulator runs all operations
 * on one compute stream; the stream number is kept for the writer and for callers. idle_us: the
 * time the compute stream stood idle before the operation in the native step, from the end of
 * the one before (for operation 0: the previous step's last) to its start, because the host had
 * not yet submitted it (the program's own host work between launches, model keyword `idle`): the
 * operation cannot start earlier than that after the start of its step, whatever a plan does. 0
 * for a step whose pace the device sets. */
typedef struct plan_op {
    double dur_us;
    uint32_t stream;
    double idle_us;
} plan_op;

/* One allocation. Live from the start of operation birth to the end of operation death;
 * birth == PLAN_NO_OP: exists before the step; death == PLAN_NO_OP: outlives it. An allocation
 * with both is cyclic (weights, optimizer state): its last idle gap wraps into the next step.
 * Its touches are model->touches[touch_first .. touch_first + ntouch), sorted, distinct. */
typedef struct plan_alloc {
    uint64_t bytes; /* what the device holds for it while it is there */
    uint64_t moved; /* what a move of it copies, in [1, bytes]: bytes unless plan_model_set_moved
                       says less (libshim copies an allocation's own bytes, and holds it in
                       whole granules) */
    int32_t birth;
    int32_t death;
    uint32_t touch_first;
    uint32_t ntouch;
} plan_alloc;

/* A model owns its three arrays; build it with plan_model_init and the add functions. */
/* One copy of the program's own between host and device (a loss read, an input upload), in
 * stream order right after operation `after`: the next operation cannot start before it is done,
 * and it runs on its direction's copy engine behind the copies issued before it. */
typedef struct plan_copy {
    int32_t after;
    int to_device; /* 1: host to device, 0: device to host */
    uint64_t bytes;
} plan_copy;

typedef struct plan_model {
    plan_hw hw;
    plan_op *ops;
    size_t nops, cap_ops;
    plan_alloc *allocs;
    size_t nallocs, cap_allocs;
    int32_t *touches;
    size_t ntouches, cap_touches;
    /* Bytes each touch reads of its allocation, parallel to touches (same indices, same
       capacity): 0 means the whole allocation (its moved bytes), a value in [1, its bytes] a
       sparse read (an embedding lookup). NULL when no touch of the model gives bytes, which
       reads as all zeros (plan_touch_read). */
    uint64_t *touch_reads;
    plan_copy *copies; /* in the order they were added; several may follow one operation */
    size_t ncopies, cap_copies;
} plan_model;

/* Empty model with zero hardware figures (set m->hw before use). Cannot fail. */
void plan_model_init(plan_model *m);

/* Frees the arrays and re-initialises m. Accepts an initialised or freed model. */
void plan_model_free(plan_model *m);

/* Appends an operation. PLAN_ERR_NOMEM, or PLAN_ERR_LIMIT beyond PLAN_MAX_OPS. */
plan_err plan_model_add_op(plan_model *m, double dur_us, uint32_t stream);

/* Appends an allocation whose touches are touch[0..n) in any order (sorted and de-duplicated
 * here), each reading the whole allocation. Ranges are checked by plan_model_check, since
 * operations may be added later. PLAN_ERR_NOMEM, or PLAN_ERR_LIMIT beyond the size limits. */
plan_err plan_model_add_alloc(plan_model *m, uint64_t bytes, int32_t birth, int32_t death,
                              const int32_t *touch, size_t n);

/* plan_model_add_alloc where touch[k] reads reads[k] bytes of the allocation (0: the whole;
 * reads NULL: every touch reads the whole). Duplicate touches merge into one that reads the
 * sum of their bytes, or the whole when any of them reads the whole or the sum reaches bytes.
 * Read bytes above bytes are found by plan_model_check. PLAN_ERR_NOMEM, PLAN_ERR_LIMIT. */
plan_err plan_model_add_alloc_reads(plan_model *m, uint64_t bytes, int32_t birth, int32_t death,
                                    const int32_t *touch, const uint64_t *reads, size_t n);

/* Bytes touch k of m (an index into m->touches) reads of allocation a, which it belongs to:
 * its read bytes, or a->moved when it reads the whole (plan_model.touch_reads). */
uint64_t plan_touch_read(const plan_model *m, const plan_alloc *a, size_t k);

/* Whether allocation i of m is read sparsely: at least one of its touches reads fewer bytes than
 * a->moved. Only such allocations may stay on the host (plan.host). */
bool plan_alloc_sparse(const plan_model *m, size_t i);

/* Allocation i's moves copy moved bytes, not all it holds (plan_alloc). PLAN_ERR_INVALID for
 * an i out of range or moved outside [1, its bytes]. */
plan_err plan_model_set_moved(plan_model *m, size_t i, uint64_t moved);

/* Operation q of m stands idle_us before it starts (plan_op.idle_us). PLAN_ERR_INVALID for a q out
 * of range or an idle_us outside [0, PLAN_MAX_DURATION] (or not finite). */
plan_err plan_model_set_idle(plan_model *m, size_t q, double idle_us);

/* Appends a copy of the program's after operation `after` (its range is checked by
 * plan_model_check). PLAN_ERR_NOMEM, or PLAN_ERR_LIMIT beyond PLAN_MAX_OPS copies. */
plan_err plan_model_add_copy(plan_model *m, int32_t after, int to_device, uint64_t bytes);

/* m into the initialised empty model *out, with every allocation i for which movable[i] is false
 * touched at each operation of its life, so that no plan moves it (libshim's in-process planner
 * and shim-report's model of a libshim trace pin what libshim cannot move:
 * plan_rules_movable). PLAN_ERR_NOMEM or a limit of plan_model_add_alloc. */
plan_err plan_model_pin(const plan_model *m, const bool *movable, plan_model *out);

/* Checks a complete model: at least one operation, hardware figures positive and finite,
 * durations and idle times finite in [0, PLAN_MAX_DURATION], bytes in [1, PLAN_MAX_BYTES] (and their sum),
 * birth <= death, every index in range, every touch inside [birth, death], every touch's read
 * bytes at most its allocation's bytes, every copy after an
 * operation of the model with bytes in [1, PLAN_MAX_BYTES]. PLAN_ERR_INVALID with a message;
 * *bad_alloc (when not NULL) is the offending allocation or SIZE_MAX (also for a bad copy). */
plan_err plan_model_check(const plan_model *m, size_t *bad_alloc, char *msg, size_t cap);

/* Parses the text model format (planner/MODEL-FORMAT.md) from buf[0..len), which need not be
 * NUL-terminated, into an initialised empty model m. fname is used only in messages, which read
 * "FNAME:LINE: error: TEXT". PLAN_ERR_PARSE (any malformed or invalid input), PLAN_ERR_NOMEM. */
plan_err plan_model_parse(const char *buf, size_t len, const char *fname, plan_model *m, char *msg,
                          size_t cap);

/* Writes m in the text model format into a new NUL-terminated buffer *out (free() it) of *len
 * bytes. plan_model_parse reads it back to an identical model. PLAN_ERR_NOMEM. */
plan_err plan_model_write(const plan_model *m, char **out, size_t *len);

/* Parses a size in the one size grammar libshim's options use (conf/conf_bytes.h): plain bytes
 * ("1048576") or a number with a unit (K, Ki, KiB ... P, Pi, PiB: powers of 1024, so 40G is
 * 40 GiB; KB ... PB: powers of 1000), case-insensitive, fractions allowed ("1.5GiB"), rounded
 * down to a byte. PLAN_ERR_PARSE on anything else or from 2^64 bytes on. */
plan_err plan_parse_size(const char *s, uint64_t *out);

/* ---- Plans -------------------------------------------------------------------------------- */

/* One chosen idle gap of one allocation. Positions are operation indices; a position p >= nops
 * means operation p - nops of the next step (only for gaps that wrap: cyclic allocations).
 *   evict_after  the copy to host is issued when this operation ends (the gap's last touch or
 *                later);
 *   prefetch_at  the copy back is issued when this operation becomes ready to start (after the
 *                previous one ended and after the waits below), or PLAN_NO_OP when the
 *                allocation dies on host without being touched again;
 *   wait_at      this operation, and the prefetches issued with it, wait until the eviction has
 *                completed (PLAN_NO_OP: nothing waits);
 *   need         the next touch, which waits for the copy back; PLAN_NO_OP with prefetch_at. */
typedef struct plan_entry {
    uint32_t alloc;
    int32_t evict_after;
    int32_t prefetch_at;
    int32_t wait_at;
    int32_t need;
} plan_entry;

/* A plan: moved gaps (entries), and the allocations that stay on the host for the whole step
 * (host: never on the device; each is made in host memory at its birth, freed there at its
 * death, never copied, and every operation touching it reads what it reads through the link:
 * MODEL-FORMAT.md, "Placements"). Planners fill host only when asked (plan_opts). */
typedef struct plan {
    plan_entry *entries;
    size_t n, cap;
    uint32_t *host; /* allocation numbers, in the order pushed */
    size_t nhost, cap_host;
} plan;

/* Empty plan. Cannot fail. */
void plan_init(plan *p);

/* Frees the entries and the host list and re-initialises p. */
void plan_free(plan *p);

/* Appends an entry (not checked here). PLAN_ERR_NOMEM. */
plan_err plan_push(plan *p, plan_entry e);

/* Appends allocation alloc to p's host-resident list (not checked here). PLAN_ERR_NOMEM. */
plan_err plan_push_host(plan *p, uint32_t alloc);

/* Checks p against m: each entry lies inside one idle gap of its allocation (between two
 * consecutive touches, or from the last touch to the death within the step, or the wrapping
 * gap of a cyclic allocation), need is that gap's next touch, evict_after < prefetch_at <= need,
 * evict_after < wait_at <= need (or the death), and at most one entry per gap; every
 * host-resident allocation is in range, listed once, read sparsely (plan_alloc_sparse) and has
 * no entry. PLAN_ERR_INVALID with a message naming the entry or allocation. */
plan_err plan_check(const plan_model *m, const plan *p, char *msg, size_t cap);

/* What each placement of plan p holds: the allocations moved on a schedule (with at least one
 * entry), and the device bytes of those neither moved nor kept on the host (plan.host). */
typedef struct plan_placement {
    size_t moved;
    uint64_t device_bytes;
} plan_placement;

/* Counts p's placements over m into *out. PLAN_ERR_NOMEM (then *out is zero). */
plan_err plan_placement_count(const plan_model *m, const plan *p, plan_placement *out);

/* ---- Simulation --------------------------------------------------------------------------- */

/* Steady-state figures of one step. */
typedef struct plan_stats {
    uint64_t peak_bytes;      /* most device bytes held at any instant of the step */
    double step_us;           /* step time: compute plus the stalls the idle time before later
                                 operations did not absorb */
    double compute_us;        /* the native step: the operations' durations and the idle time
                                 before them (plan_op.idle_us) */
    double stall_us;          /* time the compute stream waited for copies (summed over the
                                 operations: with idle time, step_us grows by less) */
    uint64_t bytes_to_host;   /* per step: what the moves copy (plan_alloc's moved) */
    uint64_t bytes_to_device; /* per step */
    int feasible;             /* peak_bytes <= budget */
    unsigned steps;           /* steps simulated to reach the steady state */
    /* Host-resident allocations (plan.host): what they hold, and what the operations touching
       them read through the link per step and the time it adds to them, which stall_us counts
       (compute_us stays the model's own durations). All 0 for a plan without them. */
    uint64_t host_bytes;
    size_t nhost;
    uint64_t bytes_read;
    double read_us;
} plan_stats;

/* Replays m and p on a timeline with one compute stream, two copy engines (one per direction,
 * sharing one link when !m->hw.duplex) and the host's mover that remaps each move, step after
 * step until the step repeats, and reports the last step. The rules are in planner/MODEL-FORMAT.md
 * ("How a plan is simulated"). PLAN_ERR_INVALID (bad model or plan: see plan_check),
 * PLAN_ERR_NOMEM. */
plan_err plan_simulate(const plan_model *m, const plan *p, uint64_t budget, plan_stats *st);

/* ---- Planners ----------------------------------------------------------------------------- */

typedef enum plan_kind {
    PLAN_KIND_NONE,      /* no plan: the native peak and step time */
    PLAN_KIND_REACTIVE,  /* evict by furthest next use when over budget, restore on touch */
    PLAN_KIND_SCHEDULED, /* gaps chosen ahead, prefetches placed as late as the link allows */
    PLAN_KIND_EXACT,     /* optimal over the canonical plans (small models only) */
} plan_kind;

/* "none", "reactive", "scheduled", "exact"; NULL for a bad value. */
const char *plan_kind_name(plan_kind kind);

/* Inverse of plan_kind_name. PLAN_ERR_INVALID for an unknown name. */
plan_err plan_kind_parse(const char *name, plan_kind *kind);

/* Native peak (no plan) and floor (the smallest peak any plan reaches: bytes that must stay on
 * device during some operation). PLAN_ERR_INVALID, PLAN_ERR_NOMEM. */
plan_err plan_peaks(const plan_model *m, uint64_t *native, uint64_t *floor);

/* Lower bound on the stall time of any plan whose peak stays within budget (+infinity when
 * budget is below the floor). The proof is in plan_bound.c. PLAN_ERR_INVALID, PLAN_ERR_NOMEM. */
plan_err plan_lower_bound(const plan_model *m, uint64_t budget, double *lb_us);

/* Plans m for budget with the given planner into the empty plan *out and simulates it into *st.
 * When no plan of that planner holds the budget, the plan with the smallest peak it found is
 * returned and st->feasible is 0. PLAN_ERR_LIMIT: exact on a model too large for it.
 * PLAN_ERR_INVALID, PLAN_ERR_NOMEM. */
plan_err plan_make(const plan_model *m, plan_kind kind, uint64_t budget, plan *out, plan_stats *st);

/* Options of the planners; a zeroed struct (or NULL) is today's planners exactly.
 *   host  also choose, per allocation read sparsely (plan_alloc_sparse), to keep it on the host
 *         for the whole step (plan.host), when that makes a better plan (plan_stats_cmp);
 *         scheduled and reactive only (exact and none ignore it). The floor and the lower bound
 *         then cover such plans too (plan_peaks_opts, plan_lower_bound_opts). */
typedef struct plan_opts {
    bool host;
} plan_opts;

/* Time an operation that reads bytes of a host-resident allocation through the link spends on
 * it, in microseconds: the 4 KiB pages it touches at the host-to-device rate (what the simulated
 * device charges a kernel for host-located memory). */
double plan_host_read_us(const plan_hw *hw, uint64_t bytes);

/* plan_make with options o (NULL: plan_make). Same errors. */
plan_err plan_make_opts(const plan_model *m, plan_kind kind, uint64_t budget, const plan_opts *o,
                        plan *out, plan_stats *st);

/* plan_peaks with options o: with o->host the floor no longer counts allocations read sparsely
 * (they can stay on the host). Same errors. */
plan_err plan_peaks_opts(const plan_model *m, const plan_opts *o, uint64_t *native,
                         uint64_t *floor);

/* plan_lower_bound over the plans o allows (with o->host, also those keeping allocations on the
 * host, whose reads count as stall). Same errors. */
plan_err plan_lower_bound_opts(const plan_model *m, uint64_t budget, const plan_opts *o,
                               double *lb_us);

/* One point of the memory-time curve. */
typedef struct plan_proposal {
    uint64_t budget_bytes;
    plan_stats stats;
    double lower_bound_us;
} plan_proposal;

/* n budgets evenly spaced from the native peak down to the floor (both included; n == 1: the
 * native peak), each planned with kind, into out[0..n). PLAN_ERR_INVALID (n == 0), and the
 * errors of plan_make. */
plan_err plan_proposals(const plan_model *m, plan_kind kind, size_t n, plan_proposal *out);

/* plan_proposals with options o: budgets from the native peak down to plan_peaks_opts's floor,
 * each planned with plan_make_opts and bounded with plan_lower_bound_opts. Same errors. */
plan_err plan_proposals_opts(const plan_model *m, plan_kind kind, size_t n, const plan_opts *o,
                             plan_proposal *out);

/* ---- Model generators ----------------------------------------------------------------------- */

/* Builds a synthetic model into the initialised empty model m from a spec "KIND[:KEY=VALUE,...]":
 *   transformer  layers, fwd (forward ops per layer), acts (activations kept per layer), hidden
 *                (activation bytes), weights (bytes per layer), optim (optimizer-state copies of
 *                the weights), us (forward op time)
 *   unet         levels, convs (per level), act (bytes at the top level), weights, us
 *   optim        params (parameter tensors), layers, weights, optim, us
 *   random       ops, allocs, maxbytes, cyclic (percent), touches (per allocation), us
 * every kind also takes seed, h2d, d2h (GB/s), duplex (0|1), remap (us of the mover per move).
 * Sizes accept units.
 * Deterministic for a given spec. PLAN_ERR_PARSE with a message, PLAN_ERR_NOMEM,
 * PLAN_ERR_LIMIT. Details in planner/MODEL-FORMAT.md. */
plan_err plan_generate(plan_model *m, const char *spec, char *msg, size_t cap);

/* ---- The host link's fluid rule (plan_link.c) ----------------------------------------------- */

/* A duplex link whose directions slow each other (model keyword link_both): a copy's bytes
 * progress at its direction's both-busy rate while the other direction is moving bytes, and at
 * its full rate otherwise. Copies are placed one at a time; a copy is slowed by the other
 * direction's copies placed before it, and one placed earlier keeps its times. The planner's
 * simulator places its copies with it, and so does the simulated device
 * (tests/simgpu/simgpu_link.c, in submission order), so that the two agree. */
enum { PLAN_LINK_H2D = 0, PLAN_LINK_D2H = 1 };
typedef struct plan_link_seg { /* a busy interval of one direction, in microseconds */
    double start, end;
} plan_link_seg;
typedef struct plan_link_dir { /* sorted, disjoint: each direction's engine serves in order */
    plan_link_seg *seg;
    size_t head, n, cap; /* live intervals: [head, n) */
} plan_link_dir;
typedef struct plan_link {
    double full[2], both[2]; /* bytes per microsecond, by PLAN_LINK_* */
    plan_link_dir dir[2];
} plan_link;

/* Starts an empty link (no busy intervals) with hw's full rates (h2d_gbps, d2h_gbps) and
 * both-busy rates (both_h2d_gbps, both_d2h_gbps); hw is only read, and duplex and remap_us are
 * not used. plan_link_free releases it. */
void plan_link_init(plan_link *l, const plan_hw *hw);

/* Frees the busy intervals of l. Accepts a link started by plan_link_init, or a zeroed one. */
void plan_link_free(plan_link *l);

/* Places a copy of bytes in direction dir (PLAN_LINK_*) from start (microseconds), after every
 * copy placed before it: *flow_us is the time its bytes take under the fluid rule, and its busy
 * interval is recorded. Copies of one direction must be placed in order of start.
 * PLAN_ERR_NOMEM: *flow_us is still set, the interval is not recorded. */
plan_err plan_link_place(plan_link *l, int dir, double start, uint64_t bytes, double *flow_us);

#endif
