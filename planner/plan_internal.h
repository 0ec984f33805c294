/* planner/plan_internal.h — what the planner's files share: the analysed model (idle gaps,
 * nominal timeline, memory profile), the simulator with its detailed trace, and the helpers of
 * each planner. Grouped by the file that defines them. Not installed; tests may include it. */
#ifndef PLAN_INTERNAL_H
#define PLAN_INTERNAL_H

#include "plan.h"

#include <stdbool.h>

#define PLAN_MIN(a, b) ((a) < (b) ? (a) : (b))
#define PLAN_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Relative tolerance used when comparing times of two simulations. */
#define PLAN_EPS 1e-9

/* ---- plan_ctx.c: the analysed model --------------------------------------------------------- */

typedef enum plan_gap_kind {
    PLAN_GAP_INTERIOR, /* between two touches in the step */
    PLAN_GAP_WRAP,     /* from the last touch of a cyclic allocation to its first of next step */
    PLAN_GAP_TAIL,     /* from the last touch to the death: dies on host, no copy back */
} plan_gap_kind;

/* An idle gap: the allocation is not touched by operations a+1 .. last (positions; last may be
 * >= n for a wrapping gap). b: the next touch (last + 1), or PLAN_NO_OP for a tail gap. */
typedef struct plan_gap {
    uint32_t alloc;
    int32_t a;
    int32_t b;
    int32_t last;
    plan_gap_kind kind;
} plan_gap;

typedef struct plan_ctx {
    const plan_model *m;
    size_t n;       /* operations */
    double *start;  /* nominal (stall-free) start of op p, p in [0, n]; start[n] = compute: the
                       earliest op p can start after its step's start (its idle time and the
                       durations and idle times before it; plan_op.idle_us) */
    double compute; /* the native step: the sum of durations and idle times */
    double idle_total; /* the sum of idle times (0: the device sets the pace) */
    plan_gap *gaps; /* sorted by (alloc, a) */
    size_t ngaps;
    uint32_t *gap0;         /* gaps of allocation x: [gap0[x], gap0[x + 1]) */
    uint64_t *birth_bytes;  /* born at the start of op p */
    uint64_t *death_bytes;  /* dying at the end of op p */
    uint64_t cyclic_bytes;  /* birth and death PLAN_NO_OP */
    uint64_t head_bytes;    /* birth PLAN_NO_OP, death in the step */
    uint64_t outlive_bytes; /* born in the step, death PLAN_NO_OP */
    uint64_t *live;         /* bytes live during op p without a plan */
    uint64_t *floor;        /* bytes that no plan can move off the device during op p */
    uint64_t native_peak;   /* max live */
    uint64_t floor_peak;    /* max floor */
    double d2h_us_per_byte;
    double h2d_us_per_byte;
    double moved_share; /* the least moved / bytes of any allocation (plan_alloc): a byte freed
                           costs at least this share of a byte of copy (plan_bound.c) */
} plan_ctx;

/* Checks m and analyses it into c. PLAN_ERR_INVALID (message), PLAN_ERR_NOMEM. */
plan_err plan_ctx_init(plan_ctx *c, const plan_model *m, char *msg, size_t cap);

/* Frees what plan_ctx_init allocated. Accepts a zeroed context. */
void plan_ctx_free(plan_ctx *c);

/* Time a copy of bytes takes on the link at its direction's full rate (a remap is not link time:
 * the mover's, plan_mover.c). */
double plan_ctx_d2h_us(const plan_ctx *c, uint64_t bytes);
double plan_ctx_h2d_us(const plan_ctx *c, uint64_t bytes);

/* Time from the start of a move's copy until the move is done, with the engine and the mover
 * idle: an eviction's remap (hw.remap_us) follows its copy, so the device bytes are free after
 * both; a restore's remap may run beside its copy (libshim remaps its range when it issues it),
 * so the data is usable after the longer of the two. */
double plan_ctx_evict_us(const plan_ctx *c, uint64_t bytes);
double plan_ctx_restore_us(const plan_ctx *c, uint64_t bytes);

/* Nominal time of position q (may be >= n: next step) at an operation's start / end. */
double plan_ctx_start_at(const plan_ctx *c, int64_t q);
double plan_ctx_end_at(const plan_ctx *c, int64_t q);

/* Gap of alloc containing the eviction point evict_after (a <= evict_after, before the next
 * touch, before the death for a tail gap), or SIZE_MAX. */
size_t plan_ctx_find_gap(const plan_ctx *c, uint32_t alloc, int32_t evict_after);

/* The entry of gap g with the given prefetch and wait positions. */
plan_entry plan_ctx_entry(const plan_ctx *c, size_t g, int32_t prefetch_at, int32_t wait_at);

/* plan_link.c — the both-busy link rates (link_both) */
/* Whether hw's link_both rates are absent, or each in (0, its full rate] with duplex; on false,
   the reason in msg. */
bool plan_link_check(const plan_hw *hw, char *msg, size_t cap);
/* Whether hw's copies follow the fluid rule (link_both present on a duplex link). */
bool plan_link_on(const plan_hw *hw);
/* The link object (plan_link_init, plan_link_place, ...) is public: planner/plan.h. */

/* ---- plan_mover.c: the host's mover, which remaps each move's range ------------------------ */

/* The mover's busy intervals (remaps), sorted and disjoint; live: [head, n). Zeroed: idle. */
typedef struct plan_mover {
    plan_link_seg *seg;
    size_t head, n, cap;
} plan_mover;

/* An idle mover. Cannot fail. */
void plan_mover_init(plan_mover *mv);

/* Frees the intervals of mv and makes it idle. Accepts an initialised or zeroed mover. */
void plan_mover_free(plan_mover *mv);

/* Forgets the intervals ending at or before t: the caller places no remap that can start before
 * t from now on. Cannot fail. */
void plan_mover_prune(plan_mover *mv, double t);

/* How far past t the mover is busy (0 when idle from t on). */
double plan_mover_backlog(const plan_mover *mv, double t);

/* Places a remap of us microseconds (0: takes no time and occupies nothing) that can start at
 * ready: *start is the earliest t >= ready with [t, t + us) idle, and the interval is recorded.
 * PLAN_ERR_NOMEM: *start is still set, the interval is not recorded. */
plan_err plan_mover_place(plan_mover *mv, double ready, double us, double *start);

/* ---- plan_check.c: plan validation ---------------------------------------------------------- */

/* Checks p against c and writes the gap of each entry into gap_of[0..p->n) (may be NULL).
 * PLAN_ERR_INVALID with a message, PLAN_ERR_NOMEM. */
plan_err plan_check_ctx(const plan_ctx *c, const plan *p, uint32_t *gap_of, char *msg, size_t cap);

/* ---- plan_sim.c: the simulator -----------------------------------------------------------------
 */

/* Per operation of the reported step: actual start and end, and the most device bytes held in
 * its window [end of the previous operation, its end). */
typedef struct plan_sim_op {
    double start, end;
    uint64_t level;
} plan_sim_op;

/* Per entry, the last instance seen in the reported step (times are absolute; unset: -1). */
typedef struct plan_sim_ent {
    double evict_start, evict_done;
    double restore_start, restore_done;
} plan_sim_ent;

/* Optional detail of the reported step. ops[n] and ents[plan->n] are caller-allocated. */
typedef struct plan_trace {
    plan_sim_op *ops;
    plan_sim_ent *ents;
    double step_start;
} plan_trace;

/* plan_simulate on an analysed model, optionally filling tr. Same errors. */
plan_err plan_sim_run(const plan_ctx *c, const plan *p, uint64_t budget, plan_stats *st,
                      plan_trace *tr);

/* Orders two simulated outcomes: negative when a is better than b. Feasible beats infeasible;
 * among infeasible the smaller peak wins; then the smaller stall (relative tolerance), then fewer
 * bytes moved, then the smaller peak. */
int plan_stats_cmp(const plan_stats *a, const plan_stats *b);

/* ---- plan_seg.c: range add / range max over operations ------------------------------------- */

/* Positions lo..hi of a gap (hi may be >= n: next step); empty when lo > hi. */
typedef struct plan_span {
    int64_t lo, hi;
} plan_span;

typedef struct plan_seg {
    size_t size, n;
    int64_t *mx, *lz;
} plan_seg;

/* Tree over v[0..n). PLAN_ERR_NOMEM. */
plan_err plan_seg_init(plan_seg *s, const uint64_t *v, size_t n);
void plan_seg_free(plan_seg *s);

/* Adds v over the (circular) span; the maximum over a span (INT64_MIN / 2 when empty), overall. */
void plan_seg_add(plan_seg *s, plan_span sp, int64_t v);
int64_t plan_seg_max(const plan_seg *s, plan_span sp);
int64_t plan_seg_top(const plan_seg *s);

/* First and last positions of sp (on sp's own axis) whose value exceeds v; empty if none. */
plan_span plan_seg_above(const plan_seg *s, plan_span sp, int64_t v);

/* ---- plan_cover.c: which operations a gap keeps free ------------------------------------------
 */

/* Copy-engine schedules of a set of chosen gaps: evictions first come first served in order of
 * last touch, as early as possible; copies back in order of need, as late as possible. Two turns
 * around the step so that copies spilling over the step boundary are counted. evict_done and
 * restore_start count each move's remap with the mover idle (plan_ctx_evict_us,
 * plan_ctx_restore_us). */
typedef struct plan_engines {
    size_t nd, nh;
    uint32_t *d_gap;                    /* evictions, in issue order */
    double *d_end;                      /* their copies' end (the engine is free again) */
    uint32_t *h_gap;                    /* copies back, latest need first */
    double *h_start;                    /* their start */
    double *h_need;                     /* their need time */
    double *evict_done, *restore_start; /* per gap, for the chosen ones */
} plan_engines;

/* Schedules the gaps with sel[g] != 0. PLAN_ERR_NOMEM. */
plan_err plan_engines_build(plan_engines *en, const plan_ctx *c, const uint8_t *sel);
void plan_engines_free(plan_engines *en);

/* Operations gap g keeps entirely free: for a chosen gap from the schedules, for another one as
 * if it were added to them. Without engines (NULL): copies unhindered (nominal). */
plan_span plan_cover(const plan_ctx *c, const plan_engines *en, size_t g);

/* ---- plan_reactive.c ------------------------------------------------------------------------ */

/* The reactive plan for budget. PLAN_ERR_NOMEM. */
plan_err plan_reactive(const plan_ctx *c, uint64_t budget, plan *out);

/* ---- plan_sched.c: the scheduled planner (plan_select.c chooses, plan_place.c places,
   plan_improve.c and plan_repair.c refine) ---- */

/* The scheduled plan for budget. PLAN_ERR_NOMEM. */
plan_err plan_scheduled(const plan_ctx *c, uint64_t budget, plan *out);

/* ---- plan_select.c ---- */

/* Chooses gaps to evict (sel[g] = 1) so that the estimated level (live bytes plus extra[q], when
 * extra is not NULL) fits budget. A gap whose copies cannot be hidden is chosen to keep a span of
 * operations free whatever the stall: force[g] (its positions), empty (lo > hi) for the others.
 * PLAN_ERR_NOMEM. */
plan_err plan_select(const plan_ctx *c, uint64_t budget, const uint64_t *extra, uint8_t *sel,
                     plan_span *force);

/* ---- plan_place.c ---- */

/* Entry of gap g whose copy back is placed as late as the link allows on the nominal timeline,
 * issued no earlier than position kmin. */
plan_entry plan_place_one(const plan_ctx *c, size_t g, int32_t kmin);

/* Builds the plan of the selected gaps: evictions right after the last touch, prefetches as late
 * as the host-to-device engine allows; a gap forced over force[g] (may be NULL) waits for its
 * eviction before the span and is copied back after it. PLAN_ERR_NOMEM. */
plan_err plan_place(const plan_ctx *c, const uint8_t *sel, const plan_span *force, plan *out);

/* The canonical plan of the smallest peak: every gap evicted after its last touch, the next
 * operation waiting for the copy, the copy back issued by the touch that needs it.
 * PLAN_ERR_NOMEM. */
plan_err plan_maximal(const plan_ctx *c, plan *out);

/* ---- plan_improve.c ---- */

/* Improves p in place by simulation-judged moves within the canonical plan space, up to a work
 * budget that scales with the model. *st is p's outcome on entry and on return. PLAN_ERR_NOMEM. */
plan_err plan_improve(const plan_ctx *c, uint64_t budget, plan *p, plan_stats *st);

/* ---- plan_repair.c ---- */

/* Repairs an infeasible p toward the budget (waits, later prefetches, more gaps), keeping the
 * best outcome seen. PLAN_ERR_NOMEM. */
plan_err plan_repair(const plan_ctx *c, uint64_t budget, plan *p, plan_stats *st);

/* ---- plan_exact.c -----------------------------------------------------------------------------
 */

/* Limits of the exact planner: gaps, simulated plans, and simulated plans times model size. */
#define PLAN_EXACT_MAX_GAPS  40
#define PLAN_EXACT_MAX_NODES 4000000u
#define PLAN_EXACT_WORK      1e8

/* The best canonical plan (see plan_exact.c) for budget. PLAN_ERR_LIMIT when the model has more
 * than PLAN_EXACT_MAX_GAPS gaps or the search exceeds its limits, PLAN_ERR_NOMEM. */
plan_err plan_exact(const plan_ctx *c, uint64_t budget, plan *out);

/* ---- plan_bound.c -----------------------------------------------------------------------------
 */

/* plan_lower_bound on an analysed model. PLAN_ERR_NOMEM. */
plan_err plan_bound_ctx(const plan_ctx *c, uint64_t budget, double *lb_us);

/* The per-operation part of the bound (claims 1-4 of plan_bound.c) over every operation, for the
 * plans that keep the gaps with skip[g] != 0 resident (+infinity when they cannot hold the
 * budget). Used to cut the exact search. PLAN_ERR_NOMEM. */
plan_err plan_bound_fixed(const plan_ctx *c, uint64_t budget, const uint8_t *skip, double *lb_us);

/* ---- plan_host.c: host-resident allocations (plan.host) ---------------------------------------
 */

/* The model the rest of a plan runs on when the allocations with on_host[x] stay on the host:
 * theirs removed, each operation's duration raised by the reads of theirs it touches
 * (plan_host_read_us). idx[x] is allocation x's number in *out, UINT32_MAX for one on the host;
 * *read_us and *bytes_read total the reads per step (out must be initialised and empty).
 * PLAN_ERR_NOMEM, PLAN_ERR_LIMIT. */
plan_err plan_host_model(const plan_model *m, const uint8_t *on_host, plan_model *out,
                         uint32_t *idx, double *read_us, uint64_t *bytes_read);

/* Simulates p, which keeps p->host on the host (already checked against c), on the model of the
 * rest and fills *st as plan_simulate does (plan_stats: the reads counted as stall).
 * PLAN_ERR_NOMEM. */
plan_err plan_host_sim(const plan_ctx *c, const plan *p, uint64_t budget, plan_stats *st);

/* Plans, on analysed c, the allocations other than those with on_host[x] with kind for budget,
 * into out (entries numbered as in c's model, out->host the others) and *st. PLAN_ERR_NOMEM,
 * PLAN_ERR_LIMIT. */
plan_err plan_host_plan(const plan_ctx *c, plan_kind kind, uint64_t budget, const uint8_t *on_host,
                        plan *out, plan_stats *st);

/* ---- plan_host_pick.c: the host placement chosen, its floor and bound ------------------------ */

/* plan_make_opts, plan_peaks_opts's floor and plan_lower_bound_opts on an analysed model (o may
 * be NULL: today's figures). Same errors. */
plan_err plan_make_ctx_opts(const plan_ctx *c, plan_kind kind, uint64_t budget, const plan_opts *o,
                            plan *out, plan_stats *st);
plan_err plan_floor_ctx_opts(const plan_ctx *c, const plan_opts *o, uint64_t *floor);
plan_err plan_bound_ctx_opts(const plan_ctx *c, uint64_t budget, const plan_opts *o, double *lb_us);

/* ---- plan_make.c ------------------------------------------------------------------------------
 */

/* plan_make on an analysed model; out must be initialised. Same errors. */
plan_err plan_make_ctx(const plan_ctx *c, plan_kind kind, uint64_t budget, plan *out,
                       plan_stats *st);

/* ---- plan_parse.c -----------------------------------------------------------------------------
 */

/* Parses a finite decimal number (digits, optional fraction and exponent, optional leading
 * sign) covering all of s[0..len); locale-independent. false on anything else. */
bool plan_parse_double(const char *s, size_t len, double *out);

/* Parses an optionally signed decimal integer covering s[0..len). false on overflow. */
bool plan_parse_i64(const char *s, size_t len, int64_t *out);

/* plan_parse_size on s[0..len). */
plan_err plan_parse_size_n(const char *s, size_t len, uint64_t *out);

/* ---- plan_build.c: the step model builder's events (plan_build.h) ---------------------------- */

#include "plan_build.h"

/* One event of each kind, as handed over. order numbers allocations and frees together in the
 * order they came, which decides what a free ends and which range a stream-ordered allocation
 * takes again. */
typedef struct plan_bmem {
    uint64_t id, bytes, addr, stream, seq, order;
    uint32_t kind;
    bool placed; /* kept on the host by libshim (plan_build_on_host) */
} plan_bmem;

typedef struct plan_bfree {
    uint64_t id, stream, seq, order;
} plan_bfree;

typedef struct plan_blaunch {
    uint64_t seq, func, stream;
    size_t id_first, nids; /* in plan_builder.ids */
} plan_blaunch;

typedef struct plan_bpair { /* a copy's touch (seq, id) or a kernel time (seq, usec) */
    uint64_t seq, id;
    double usec;
} plan_bpair;

typedef struct plan_bxfer { /* a copy of the program's between host and device */
    uint64_t seq, bytes;
    int to_device;
} plan_bxfer;

typedef struct plan_bstep {
    uint64_t step, first_seq;
    uint64_t mark_end; /* one past the largest launch handed over before the mark */
} plan_bstep;

struct plan_builder {
    plan_bmem *mems;
    size_t nmems, cap_mems;
    plan_bfree *frees;
    size_t nfrees, cap_frees;
    plan_blaunch *launches;
    size_t nlaunches, cap_launches;
    uint64_t *ids;
    size_t nids, cap_ids;
    plan_bpair *copies;
    size_t ncopies, cap_copies;
    plan_bxfer *xfers;
    size_t nxfers, cap_xfers;
    plan_bpair *times;
    size_t ntimes, cap_times;
    plan_bpair *idles; /* plan_build_kernel_idle: (seq, usec) */
    size_t nidles, cap_idles;
    double record_us; /* plan_build_timing_cost */
    plan_bstep *steps;
    size_t nsteps, cap_steps;
    uint64_t next_seq; /* one past the largest launch handed over */
    uint64_t order;    /* allocations and frees handed over */
    uint64_t granule, page;
    plan_hw link;
    int link_given;
    double link_both[2];                /* plan_build_link_both: H2D, D2H; 0, 0 when not given */
    double moved_bytes[2], moved_us[2]; /* [0] to host, [1] to device */
};

/* ---- plan_build_mem.c: device bytes and lifetimes of the allocations ------------------------ */

/* One device allocation: the bytes the device holds for it, from launch index alloc_seq to
 * free_seq (UINT64_MAX: never freed); live during launches alloc_seq .. free_seq - 1. A move of
 * a managed one copies its own bytes as asked (moved), others what they hold (0: bytes). */
typedef struct plan_blife {
    uint64_t id, bytes, moved, alloc_seq, free_seq, order;
    uint64_t placed; /* kept on the host by libshim: the bytes asked for (bytes is then 0) */
} plan_blife;

/* Device bytes of an allocation of bytes of this kind under b's rounding (0: not device memory).
 * Cannot fail. */
uint64_t plan_build_held(const plan_builder *b, uint32_t kind, uint64_t bytes);

/* Every device allocation of b with its bytes and lifetime, and every one libshim kept on the host
 * (placed, bytes 0), in the order allocations came, into a new array *out of *n (free() it).
 * PLAN_ERR_NOMEM. */
plan_err plan_build_lives(const plan_builder *b, plan_blife **out, size_t *n);

/* ---- plan_build_ops.c: the operations of a step ---------------------------------------------- */

/* Durations and streams of launches first .. end - 1 (first < end) into ops[0 .. end - first),
 * and the index in b->launches of each one's launch event into launch_of (SIZE_MAX: none): a
 * launch's own kernel time, else the median of its function's times over every step, else the
 * median of all times; streams numbered from 0 in order of first use in the step. Counts timed,
 * filled and unrecorded into info. PLAN_ERR_INVALID (message) when no launch of the step has a
 * time, PLAN_ERR_NOMEM. */
plan_err plan_build_ops(const plan_builder *b, uint64_t step, uint64_t first, uint64_t end,
                        plan_op *ops, size_t *launch_of, plan_build_info *info, char *msg,
                        size_t cap);

/* Launch events handed over for launches first .. end - 1 (a launch handed over twice counts
 * twice). */
size_t plan_build_launches_in(const plan_builder *b, uint64_t first, uint64_t end);

/* Whether any of launches first .. end - 1 has a kernel time. */
bool plan_build_has_time(const plan_builder *b, uint64_t first, uint64_t end);

/* ---- plan_slab.c: the chunks libshim's slabs hold in a model's step ---------------------------
 */

/* A span of operations during which one slab holds members: birth and death as an allocation's
 * (PLAN_NO_OP: from before the step, past its end). */
typedef struct plan_slab_life {
    int32_t birth, death;
} plan_slab_life;

/* The slab lives of m's step, whose allocations member[i] marks as slab members of blocks[i]
 * 512-byte blocks, in slabs of granule / 512 blocks packed as libshim packs them (plan_slab.c's
 * top comment: replay's order, the step run twice and the second recorded), into *out (a new
 * array of *n lives; free() it; NULL when none); *most: the most slabs holding members at one
 * operation. PLAN_ERR_NOMEM. */
plan_err plan_slab_lives(const plan_model *m, const bool *member, const uint32_t *blocks,
                         uint64_t granule, plan_slab_life **out, size_t *n, size_t *most);

/* ---- plan_model.c -----------------------------------------------------------------------------
 */

/* snprintf into msg[0..cap) when cap > 0. */
void plan_msg(char *msg, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
