/* shim_resid_budget.h — the budget room of the residency manager (shim/resid/budget/): making
 * room within the budget, and what needs room.
 *
 * It promises that device chunks are gathered within the budget, evicting what must go (the
 * policy's best victim first) only after cheaper room (free chunks, stream-ordered frees, spare
 * ranges, empty slabs, moves already done) is spent, with every wait bounded; that a restore, a
 * new slab and a new unit get their room this way; that frees made in stream order are released
 * once their event is done; and that out of memory is answered only when nothing can move. What
 * to evict is asked of r->policy (the reactive policy unless a test sets another). Every
 * function runs with r->lock held; a search may drop it while it waits. Uses the moves room and
 * the rooms below it. */
#ifndef SHIM_RESID_BUDGET_H
#define SHIM_RESID_BUDGET_H

#include "shim_resid_moves.h"

/* shim_resid_search.c — the search for room */
/* Whether the calling thread's searches for room (resid_take_device) are for a new managed
   allocation that may be placed on the host if no room comes (resid_back_on_host): they then
   wait for submissions and moves in progress for about a second, not the full bound. */
void resid_search_host_fallback(bool on);
/* Takes device chunks covering n granules into out[0..n) (as few as the pools and the budget
   allow: a free chunk of exactly n granules, else a new one of n, else pieces), making room
   within the budget (evicting units that are not pinned, waiting for moves in flight: the lock
   may be dropped meanwhile). With ordered, chunks freed in stream order on `stream` may be
   reused at once (*reused is set then). Returns 0, or -1 (nothing taken; r->oom says why). */
int resid_take_device(struct resid_ctx *r, struct resid_chunk **out, uint32_t n, CUstream stream,
                      bool ordered, bool *reused);
/* Makes room for bytes of unmanaged device memory; 0, or -1 when nothing can move. */
int resid_room_for_unmanaged(struct resid_ctx *r, uint64_t bytes);
/* Gives device memory back to the driver (the device is fuller than the budget says):
   pooled chunks, or evicts until some come free; true if some bytes were released. */
bool resid_shed(struct resid_ctx *r, uint64_t bytes);

/* shim_resid_reap.c — frees in stream order */
/* Stream-ordered frees that may wait unfenced, at most (one event then fences them all). */
#define RESID_UNFENCED_MAX 16
/* Queues the free of unit u or member m (one of them) in the order of stream; it completes once
   an event recorded there at or after the free is done. reusable: the stream is one the shim can
   name from any thread and order reuse on, so a new allocation on it may take the memory at once,
   and the event is recorded later, for many frees at once (shim_resid_reap.c); otherwise it is
   recorded now. False if it could not be queued (no memory, or the event not recorded). */
bool resid_pending_add(struct resid_ctx *r, struct resid_unit *u, struct resid_member *m,
                       CUstream stream, bool reusable);
/* Completes the oldest stream-ordered frees while their events are known done, stopping at the
   first that is not: one event query when nothing completed, so an allocation may call it
   however many frees are pending (a real driver's query costs about a microsecond). Returns how
   many completed. */
uint32_t resid_reap_oldest(struct resid_ctx *r);
/* Fences every stream-ordered free not fenced yet, then completes those whose fence is known
   done (wait: waits for the oldest; one whose stream could not be fenced waits for its stream). */
bool resid_reap(struct resid_ctx *r, bool wait);
/* Fences every stream-ordered free not fenced yet, then completes the oldest known done
   (resid_reap_oldest); whether any completed (lock held). */
bool resid_reap_fence(struct resid_ctx *r);
/* stream is about to be destroyed: frees on it not fenced yet are fenced now, while it can still
   be named (lock held). */
void resid_reap_stream_gone(struct resid_ctx *r, CUstream stream);

/* shim_resid_restore.c — what needs device room */
/* Starts restoring u (HOST, and no operation in progress reads it through its host mapping):
   its device chunks found within the budget, then the copy started; 0, or -1 with u unchanged
   (it stays readable on the host). */
int resid_restore(struct resid_ctx *r, struct resid_unit *u, const struct resid_cause *cause);
/* Whether a new managed allocation of bytes whose search for room failed may be made in host
   memory instead: the search found units in use by submissions in progress or moving (the
   budget is held for now, not full for good), host memory can be mapped where the program
   reads it (host VMM; not unmapped eviction), nothing failed or stepped aside, and the
   allocation alone fits the budget (it can come to the device later). */
bool resid_may_place_on_host(const struct resid_ctx *r, uint64_t bytes);
/* Backs new unit u's range with host chunks mapped at its address: 0, 1 (the host budget is
   spent), or -1 (a driver call failed; nothing taken). Counts it and says so once; the caller
   records the SHIM_EV_CREATE_HOST transition. */
int resid_back_on_host(struct resid_ctx *r, struct resid_unit *u);

/* shim_resid_slab.c — small allocations packed into slabs */
/* A small managed allocation of bytes in a slab: *va, and its member record (not yet in the
   table). 0, 1 (out of memory), or -1 (a driver call failed). May drop the lock. */
int resid_slab_alloc(struct resid_ctx *r, uint64_t bytes, CUdeviceptr *va,
                     struct resid_member **out);
/* Takes m out of its slab (its memory is no longer used); an empty slab is released when
   nothing moves it. */
void resid_slab_free(struct resid_ctx *r, struct resid_member *m);
/* Releases u if it is an empty slab that nothing holds; true if it did. */
bool resid_slab_reclaim(struct resid_ctx *r, struct resid_unit *u);
/* Releases one empty slab kept mapped (kept_empty) if there is one that can go; true if it
   did. A search for room calls it before waiting or evicting, and without host VMM (nothing
   can be evicted) it is the only way those chunks come back. */
bool resid_slab_release_empty(struct resid_ctx *r);

/* shim_resid_policy.c — what to evict */
/* The reactive policy: furthest next use learned from the previous step, least recently used
   when unknown. */
extern const struct resid_policy resid_policy_reactive;

#endif
