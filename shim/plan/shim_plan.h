/* shim_plan.h — the in-process planner: what libshim records of a detected training step
 * (shim_plan_study.c), the plan made from it on a background thread (shim_plan_make.c), and the
 * tables the residency manager executes from the next step boundary (shim_resid_plan.c).
 *
 * The pipeline, once the step detector has found the step (auto mode, planner = "scheduled"):
 *   1. the profiled steps' allocations, frees, launches (with the allocations they touch),
 *      copies and kernel times feed a step model builder (planner/plan_build.h), the same one
 *      `shim-report model` uses on a trace;
 *   2. when the step after the last profiled one closes, a background thread builds the model,
 *      pins what libshim cannot move, plans it for the budget (planner/plan.h, scheduled) and
 *      compiles the plan into per-launch actions;
 *   3. the residency manager applies them from the next step boundary: each launch position
 *      first issues the evictions planned after the previous launch, then the prefetches
 *      planned at it. The reactive policy stays the safety net, and every departure from the
 *      model is counted (and logged once). The trace gets the installed plan's prediction
 *      and, per step under it, what was done (plan and plan_step records).
 * Nothing here runs on the launch path but a relaxed load, unless a study or a plan is on. */
#ifndef SHIM_PLAN_H
#define SHIM_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "shim_resid.h"

/* shim_plan_study.c — studying a step for the planner. All calls are cheap no-ops unless a
   study is on (shim_step_studying); the event calls may come from any thread. The core
   and residency rooms below reach the study only through the step listener it registers. */
/* Registers the study as the core's step listener (shim_step_listen); called once before the
   shim is READY (shim_main.c). */
void shim_plan_listen(void);
/* An allocation the program made (kind: plan_mem_kind), the ordinal-th at its index. */
void shim_plan_study_alloc(uint64_t id, uint64_t addr, uint64_t bytes, int kind, uint64_t stream,
                           uint32_t ordinal);
/* The end of allocation id (on stream for stream-ordered frees, else 0). */
void shim_plan_study_free(uint64_t id, uint64_t stream);
/* Launch seq of func on stream, touching ids[0..n). */
void shim_plan_study_launch(uint64_t seq, uint64_t func, uint64_t stream, const uint64_t *ids,
                            uint32_t n);
/* A copy or memset touching dst and src (0: untracked memory); a copy between host and device
   (dir SHIM_COPY_H2D or SHIM_COPY_D2H) of bytes also goes into the model as the program's own
   use of the link. */
void shim_plan_study_copy(uint64_t dst, uint64_t src, enum shim_copy_dir dir, uint64_t bytes);
/* The measured duration of launch seq. */
void shim_plan_study_kernel_time(uint64_t seq, double usec);
/* Launch seq's stream stood idle usec before it (< 0: libshim's own work stood in it); one of the
   timing's event records costs the host record_us (the step listener's kernel_idle). */
void shim_plan_study_kernel_idle(uint64_t seq, double usec, double record_us);
/* One of the residency manager's copies (to_device: a restore) of bytes took usec on its copy
   stream (timed with events: the copy alone, not its wait for the program). The link of the
   models built from now on is each direction's bytes over its time. */
void shim_plan_study_link(bool to_device, uint64_t bytes, double usec);

/* From the step detector (shim_steps.c, through the step listener), under its lock. */
/* The step was detected and its profiled steps begin: a new study starts. */
void shim_plan_steady(void);
/* Step `step` beginning at first_seq has closed; profiled_left: profiled steps still to come. */
void shim_plan_step_closed(uint64_t step, uint64_t first_seq, int profiled_left);
/* The step pattern broke: the study is dropped and the plan withdrawn, quietly (the break
   may be the run's last segment). */
void shim_plan_unsteady(void);
/* The break at launch was followed by more work: says that the plan was withdrawn, if one was. */
void shim_plan_changed(uint64_t launch);

/* shim_plan_make.c — the background planning of one study. */
/* Stops the planner (process exit): waits briefly for a plan being made. */
void shim_plan_stop(void);
/* At a step boundary (step detector's lock held, no other): installs the plan made during the
   step that just closed, waiting for it (at most a few seconds) if it is still being made; it
   applies from `step`, the step beginning now, and says so in one info line with its predicted
   slowdown against the step's native time. */
void shim_plan_collect(uint64_t step);
struct plan_builder;
struct shim_plan_known_alloc;
/* Plans the last profiled step recorded in b (taking ownership of b and keys[0..n)) on a
   background thread, and installs the plan into residency when it is ready. Returns whether
   the thread started (if not, b and keys are freed). */
bool shim_plan_make_async(struct plan_builder *b, struct shim_plan_known_alloc *keys, uint64_t n);

/* What the study knows of one allocation of the study, for keys. */
struct shim_plan_known_alloc {
    uint64_t id, seq; /* seq: the next launch index when it was made */
    uint32_t ordinal; /* allocations made before it at that seq */
    bool movable;
    bool before; /* live when the study started: found by its id in later steps */
    bool member; /* a slab member: managed, too small for a unit of its own */
};

#endif
