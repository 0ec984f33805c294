/* shim_resid_front.h — what the files of the residency manager's entry points (shim/resid/,
 * the room's front) share among themselves. The rooms above see only shim_resid.h.
 *
 * Every entry point (shim_resid_*, declared in shim_resid.h) is defined in this room: it finds
 * the manager it works on once (by the current device, by the allocation it is given, or the
 * primary one for the plan: state/shim_resid_ctx.c), takes its lock, and calls down into the
 * rooms below (budget/, moves/, pools/, state/, driver/), which work on the manager they are
 * given with its lock held. So a thread never holds two managers' locks, and nothing below this
 * room finds a manager of its own (the mover thread gets its manager as its argument). */
#ifndef SHIM_RESID_FRONT_H
#define SHIM_RESID_FRONT_H

#include "shim_resid.h"
#include "shim_resid_budget.h"

/* Whether stream is one the shim can order reuse on (not a per-thread default). */
static inline bool resid_nameable(CUstream s, bool per_thread)
{
    return !(per_thread && !s) && s != CU_STREAM_PER_THREAD;
}

/* shim_resid_start.c — a manager's start */
/* Starts residency against driver drv (tests pass a fake): device facts, budget, streams, the
   reactive policy unless r has one. Returns whether it is on. */
bool resid_start_with(struct resid_ctx *r, const struct resid_driver *drv);
/* The calling thread's current device's manager (resid_current), started on its first use
   against the real driver (tried once); NULL when there is none or it is not on. */
struct resid_ctx *resid_start_current(void);

/* shim_resid_verdict.c — what an allocation that found no room is told (lock held) */
/* Says once per cause why an allocation of bytes found no room: a managed one when asked is 0,
   else an unmanaged one of asked bytes (bytes as the driver rounds it). */
void resid_explain_oom(struct resid_ctx *r, uint64_t bytes, uint64_t asked);
/* Whether the search that just ended failed for the driver's sake (a failed call, a failed
   eviction, any call of libshim's own that failed on any thread since `before` failures: the
   mover's failed remap undoes the eviction this search waited for), not because the budget is
   full of what cannot move. */
bool resid_machinery_failed(const struct resid_ctx *r, uint64_t before);
/* Whether the budget lacks room for an allocation of bytes only as far as libshim's own failures
   set chunks aside (never reused, still counted): some chunks were set aside, and the allocation
   alone would fit in the budget. Out of memory then would be libshim's doing. */
bool resid_short_by_set_aside(const struct resid_ctx *r, uint64_t bytes);
/* An allocation of bytes goes to the driver outside the budget because residency's own calls
   failed: says so once with the cause, and steps aside for good when the failures persist (two
   allocations in a row; not for the driver's out of memory, which says the device is full, not
   that libshim's machinery is broken). before: libshim's failed calls (resid_driver_failures)
   when the search began. */
void resid_step_aside(struct resid_ctx *r, uint64_t bytes, uint64_t before);

/* shim_resid_plan.c — the in-process plan's executor (lock held) */
/* Applies the plan's actions due before launch index next (evictions after the last launch,
   prefetches at this one); nothing without an active plan. */
void resid_plan_advance(struct resid_ctx *r, uint64_t next);
/* Binds new unit u, made at launch index seq as the ordinal-th allocation there, to the plan's
   allocation with that key, if any. */
void resid_plan_bind(struct resid_ctx *r, struct resid_unit *u, uint64_t seq, uint32_t ordinal);
/* A touch of u, which the plan had moved out, came before its prefetch. */
void resid_plan_departed(struct resid_ctx *r, struct resid_unit *u);

/* shim_resid_place.c — allocations kept on the host for good (host_resident; lock held) */
/* The entry of host_resident that names an allocation of bytes (its index), or -1. */
int resid_placement_of(const struct resid_ctx *r, uint64_t bytes);
/* Backs new unit u's reserved range with host chunks mapped at its address, for good: 0
   (u->stays_on_host set, counted under entry), 1 (this device cannot map host memory for
   kernels, libshim stepped aside, or the host budget has no room: said once; the caller makes
   it on the device), or -1 (a driver call failed; nothing taken). */
int resid_place_on_host(struct resid_ctx *r, struct resid_unit *u, int entry);
/* After u (kept on the host by resid_place_on_host) has its id: notes the id for
   shim_resid_kept_on_host and records its SHIM_EV_CREATE_HOST transition, reason placement. */
void resid_placed_born(struct resid_ctx *r, struct resid_unit *u);

/* shim_resid_outside.c — allocations outside every budget */
/* Remembers addr, an allocation the driver made outside every budget, in the first manager's
   list (shim_resid_foreign_remove finds it at its free); nothing if none started. Takes its
   lock: call it with no manager's lock held. */
void resid_outside_remember(uint64_t addr);

#endif
