/* shim_trace_figures.h — the figures every surface prints, computed in one place: libshim's exit
 * line and shim-report's summary (text and JSON), HTML page and moves.
 *
 * Why here, and why a file both link: the shim cannot link the tools' trace reader, and the
 * reader must not link libshim. What both already share is the trace: the writer's records are
 * what the reader reads. So the arithmetic lives below both, in the trace writer's room, libc
 * only and stateless (shim_trace_figures.c): libshim feeds it the records as its record functions
 * write them (shim_trace_live.c), the reader feeds it the same records from the file
 * (tools/trace/report_trace_figures.c), and both print its words. The same records give the same
 * figures and the same sentences; a surface that differs is fed something else.
 *
 * The figures (shim_fig_derive):
 *   - the verdict: fitted or not, the resident peak against the budget, the allocations' peak;
 *   - the step time against native: the last plan's estimate (its model, from the kernel times
 *     measured on the device: the same clock on both sides) with its lower bound; without a plan,
 *     the steps' wall time when it is a step time (not on the simulated device, whose wall time
 *     is the simulator's own, shim_fig_simulated);
 *   - per step, the steady state: the steps under a plan (a plan_step record each), their means of
 *     bytes moved, stall (each step's capped at its wall time: a stall never exceeds the time it is
 *     part of) and wall time, and over how many steps;
 *   - the warm-up apart: what the run moved and stalled outside those steps;
 *   - one taxonomy of moves: why each started (its reason) and how it ended (its outcome).
 */
#ifndef SHIM_TRACE_FIGURES_H
#define SHIM_TRACE_FIGURES_H

#include "shim_trace_format.h"

#include <stddef.h>
#include <stdint.h>

/* ---- move records, counted (the writer's step_summary and the reader's totals alike) ---- */

/* Counts one move record of direction dir (enum shim_move_dir), reason (enum shim_move_reason)
   and bytes into c (struct shim_trace_move_counts, shim_trace_format.h), saturating. Returns 0, or
   -1 (nothing counted) for a direction the format does not define. */
int shim_trace_count_move(struct shim_trace_move_counts *c, uint32_t dir, uint32_t reason,
                          uint64_t bytes);

/* Adds the counts of more to c, saturating. */
void shim_trace_move_counts_add(struct shim_trace_move_counts *c,
                                const struct shim_trace_move_counts *more);

/* ---- the moves' taxonomy: reason and outcome, from the transitions (format 1.2) ---- */

/* How a move ended: the transition of its unit that left EVICTING or RESTORING. */
enum shim_fig_outcome {
    SHIM_FIG_DONE = 0,      /* COPY_DONE or ORDERED: the copy completed, the range was remapped */
    SHIM_FIG_CANCELLED = 1, /* CANCEL: a touch cancelled the eviction (its bytes were copied) */
    SHIM_FIG_ERROR = 2,     /* ERROR: a driver call failed, the step was undone */
    SHIM_FIG_FREED = 3,     /* FREE: the program freed the unit while it moved */
};
#define SHIM_FIG_OUTCOMES 4
#define SHIM_FIG_REASONS  8 /* by_reason[0]: reasons the format does not define */

/* Moves started (an EVICT or RESTORE transition each) by reason and by direction, and moves
   ended by outcome. A move started and not ended (the run or the trace stopped first) is
   unfinished: shim_fig_moves_unfinished. superseded: moves another start of the same unit
   ended, its own end lost; a reader that pairs transitions (tools/trace) finds them in a
   damaged trace, the states of a transition never give one. */
struct shim_fig_moves {
    uint64_t by_reason[SHIM_FIG_REASONS];
    uint64_t to_host, to_device;
    uint64_t by_outcome[SHIM_FIG_OUTCOMES];
    uint64_t superseded;
};

/* Counts one transition (from: enum shim_resid_state, event: enum shim_resid_event, reason: enum
   shim_move_reason) into m: a start, an end, or nothing. */
void shim_fig_moves_transition(struct shim_fig_moves *m, uint32_t from, uint32_t event,
                               uint32_t reason);

/* Moves started in all, and those of them not ended (superseded ones apart). */
uint64_t shim_fig_moves_started(const struct shim_fig_moves *m);
uint64_t shim_fig_moves_unfinished(const struct shim_fig_moves *m);

/* "done", "cancelled", "error", "freed" for enum shim_fig_outcome; "superseded" for
   SHIM_FIG_OUTCOMES, "unfinished" for SHIM_FIG_OUTCOMES + 1; "?" past it. */
const char *shim_fig_outcome_name(uint32_t outcome);

/* ---- steps: step marks, plans and plan steps, fed in time order ---- */

struct shim_fig_steps {
    uint64_t marks;                    /* step records */
    uint64_t mark_step[3], mark_ns[3]; /* the latest three: [0] the newest */
    uint64_t walled, wall_ns;          /* steps with a wall time (shim_fig_mark) and its sum */
    uint64_t steady, steady_first;     /* plan_step records, the first one's step */
    uint64_t steady_walled, steady_wall_ns;
    uint64_t steady_bytes, steady_stall_ns; /* stall_ns: each step's capped at its wall time */
    uint64_t steady_stall_raw_ns;           /* uncapped: what the warm-up's stall is less */
    int have_plan;                          /* the last plan record: */
    double plan_native_us, plan_predicted_us, plan_stall_us, plan_bound_us;
};

/* A step record: step `step` closed at t_ns. Its wall time (from the mark before) is known, and
   counted in walled, when the two marks before it are steps step - 1 and step - 2: the detector
   writes the first two steps it finds at once, so the first mark of a run has no wall of its own
   and the second's is the time between two records written together. After a change of the
   step, the two steps found again are counted with the time it took to find them: only the
   figures without a plan use these walls (a plan is withdrawn at a change, and its steps, the
   steady state, never include them). */
void shim_fig_mark(struct shim_fig_steps *f, uint64_t step, uint64_t t_ns);

/* A plan record: its prediction for one step, in its model's time (bound_us: a lower bound of
   the step time). The last one is the verdict's. */
void shim_fig_plan(struct shim_fig_steps *f, double native_us, double predicted_us, double stall_us,
                   double bound_us);

/* A plan_step record of step `step`, fed after that step's mark: one step of the steady state.
   Its wall time is from the mark of step - 1 to its own, when those are the latest two marks. */
void shim_fig_plan_step(struct shim_fig_steps *f, uint64_t step, uint64_t bytes_to_host,
                        uint64_t bytes_to_device, uint64_t stall_ns);

/* ---- the figures of a run, and their words ---- */

/* Whether a device of this name is the simulated device of tests/simgpu (it names itself
   "simgpu (simulated ...)"): its wall time is the simulator's own, not a step time. NULL or ""
   (not recorded): no. */
int shim_fig_simulated(const char *device_name);

/* What a surface knows of a run. */
struct shim_figures {
    int managed;            /* residency kept a budget */
    int have_resident_peak; /* resident_peak is known (managed) */
    uint64_t budget, resident_peak, alloc_peak;
    int devices_together; /* alloc_peak counts several devices */
    int simulated;        /* shim_fig_simulated of the device */
    /* the primary device's residency over the whole run: bytes of the moves started, stall */
    uint64_t bytes_to_host, bytes_to_device, stall_ns;
    int have_moves; /* the transitions were recorded: moves below is the run's */
    struct shim_fig_moves moves;
    struct shim_fig_steps steps;
};

/* What the figures come to. Times in ms; -1: not known. */
struct shim_fig_derived {
    const char *step_source; /* "plan estimate", "measured", "no budget" or "none" */
    int moved;               /* managed, and a move started */
    double step_ms, native_ms, slowdown;
    double bound_ms, bound_slowdown; /* the plan's lower bound of the step */
    uint64_t steady_steps, steady_from;
    double bytes_per_step, stall_ms_per_step, wall_ms_per_step; /* the steady state */
    uint64_t other_steps; /* the warm-up: the steps outside the steady state */
    double other_bytes, other_stall_ms;
    double wall_ms; /* without a plan: the mean wall time of the steps that have one */
};

/* Derives d from f; cannot fail. */
void shim_fig_derive(const struct shim_figures *f, struct shim_fig_derived *d);

/* The words, each one clause with no ending punctuation and no markup character (HTML-safe),
   written into buf (n bytes, cut to fit and terminated). Each returns buf. */
/* "fitted: resident peak R MiB within the B MiB budget (allocations peaked at A MiB, evicted
   ones counted)", "did not fit: ...", "unknown: ...", "no budget: ...". */
const char *shim_fig_verdict_words(char *buf, size_t n, const struct shim_figures *f);
/* "step S ms under the budget against N ms native, X.XXx, at least Y.YYx for any plan (the
   plan's estimate from measured kernel times)", or as the step time was found. */
const char *shim_fig_step_words(char *buf, size_t n, const struct shim_figures *f,
                                const struct shim_fig_derived *d);
/* "steady state under the plan (K steps from step F): V MiB moved and T ms stalled per step, of
   W ms of wall time per step (...)", or what stands for it without a plan. */
const char *shim_fig_steady_words(char *buf, size_t n, const struct shim_figures *f,
                                  const struct shim_fig_derived *d);
/* "warm-up apart (K other steps, and the time outside any step): V MiB moved, T ms stalled";
   "" without a steady state. */
const char *shim_fig_warmup_words(char *buf, size_t n, const struct shim_figures *f,
                                  const struct shim_fig_derived *d);
/* "M moves (H to the host, D to the device): by reason budget 4, ...; by outcome done 5, ..."
   (the reasons and outcomes that occurred, in the enums' order). */
const char *shim_fig_moves_words(char *buf, size_t n, const struct shim_fig_moves *m);

#endif
