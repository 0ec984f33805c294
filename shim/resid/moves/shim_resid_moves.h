/* shim_resid_moves.h — the moves room of the residency manager (shim/resid/moves/): copies
 * between device and host chunks, and the remaps that follow them.
 *
 * It promises that a move copies on the shim's own stream after a fence (events recorded after
 * the last submitted touches on every stream that touched the unit) and is completed — remapped —
 * only once its copy is known done, so no range is ever unmapped under work that may still touch
 * it; that every failure before a move starts is undone and every failure after it leaves the
 * range mapped where the valid data is (the ERROR transition); and that no wait is unbounded: a
 * thread that needs a move over waits for its copy and completes it itself, and a copy that
 * cannot be waited for RESID_MAX_ERRORS times is given up. The mover thread completes moves and
 * remaps restores ahead of their copies off the program's threads, as an accelerator, never a
 * dependency. A move never makes room: its chunks are gathered by the caller (a restore's device
 * chunks by the budget room, above). Every function runs with r->lock held (some drop it while
 * they wait or remap, as each says). Uses the pools room, the state room and the driver seam. */
#ifndef SHIM_RESID_MOVES_H
#define SHIM_RESID_MOVES_H

#include "shim_resid_pools.h"

/* shim_resid_move.c — moves */
/* Records events after the touches of u on its streams and makes stream wait for them;
   0, or -1 (nothing waited). */
int resid_fence(struct resid_ctx *r, struct resid_unit *u, CUstream stream);
/* A new move of u in direction dir for cause, with slots for u's chunks; NULL when out of
   memory. */
struct resid_move *resid_move_new(struct resid_unit *u, enum shim_move_dir dir,
                                  const struct resid_cause *cause);
/* Frees move m (not queued; no waiter holds it). */
void resid_move_free(struct resid_ctx *r, struct resid_move *m);
/* Starts evicting u (DEVICE, not pinned); 0, or -1 with u unchanged. */
int resid_evict(struct resid_ctx *r, struct resid_unit *u, const struct resid_cause *cause);
/* Starts restoring u (HOST, and no operation in progress reads it through its host mapping)
   into the device chunks m holds (m from resid_move_new, its chunks gathered; it is this
   function's from now on): 0 started (or u was moved meanwhile by someone else and is no longer
   on the host), -1 not started with u unchanged (it stays readable on the host). */
int resid_restore_start(struct resid_ctx *r, struct resid_unit *u, struct resid_move *m);
/* Cancels u's eviction for a touch on stream (for the trace): u's users, the touch's
   stream first, wait for the copy until it is known done (u->reading), and its chunks'
   next owner too (their fences). */
void resid_cancel_eviction(struct resid_ctx *r, struct resid_unit *u, CUstream stream);
/* Waits (lock dropped meanwhile) until u's move in flight is over, completing it or giving
   it up; bounded: at most RESID_MAX_ERRORS failed waits. Counts the stall. */
void resid_wait_move(struct resid_ctx *r, struct resid_unit *u, enum shim_move_reason reason);
/* Counts (and traces) a stall of the program's thread that began at t0. */
void resid_stalled(struct resid_ctx *r, uint64_t t0, enum shim_move_reason reason);
/* Waits (bounded, lock dropped meanwhile) while u's move is being remapped by another thread;
   true if no remap is in progress on return. */
bool resid_wait_remap(struct resid_ctx *r, struct resid_unit *u);
/* Remaps restoring u's range onto its device chunks before its copy ends, if its move wants
   that (m->want_order) and no one did it yet; the lock is dropped during the driver calls. */
void resid_order_restore(struct resid_ctx *r, struct resid_move *m);
/* Maps u's range again onto its backing if a failed move left it unmapped (u->stuck); true if
   the range is usable on return. If the driver still refuses, says once (an error) that
   operations on the range fail with the driver's error: no memory can appear at the
   program's address without a mapping, and reading nothing is worse than failing. */
bool resid_unstick(struct resid_ctx *r, struct resid_unit *u);
/* Waits until the oldest move in flight is over (room may come); false if none. */
bool resid_wait_oldest(struct resid_ctx *r);
/* Completes m if its copy is known done, gives it up after repeated errors; true if m is
   over (it may then be freed). wait: block (lock dropped) until its copy is done. */
bool resid_move_poll(struct resid_ctx *r, struct resid_move *m, bool wait);
/* The FREE transition of u (DEVICE or HOST, no move in flight) for cause: unmaps its range
   and frees it, returning its chunks (the range is no longer used by any work), or keeps them
   mapped as a spare. */
void resid_release(struct resid_ctx *r, struct resid_unit *u, const struct resid_cause *cause);
/* The median host time in microseconds of r's first remaps of a unit's range (up to
   RESID_REMAP_SAMPLES timed), or -1 when none was timed yet. */
double resid_remap_median(struct resid_ctx *r);

/* shim_resid_mover.c — the mover thread */
/* Completes every queued move whose copy is known done (no wait); how many. */
int resid_complete_done(struct resid_ctx *r);
/* Queues m for the mover (starting the thread on first use). */
void resid_mover_queue(struct resid_ctx *r, struct resid_move *m);
/* Takes m off the mover queue (it is over). */
void resid_mover_unqueue(struct resid_ctx *r, struct resid_move *m);
/* Whether the calling thread is a manager's mover. */
bool resid_on_mover(void);
/* Whether a move of r's (a copy on its own streams) may still run. */
bool resid_copies_pending(struct resid_ctx *r);
/* Lets r's moves in flight complete (at most about a second; without a mover, this thread
   completes them), then ends its mover (at most about a second more); no new one starts. */
void resid_mover_stop(struct resid_ctx *r);

#endif
