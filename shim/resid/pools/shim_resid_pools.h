/* shim_resid_pools.h — the pools room of the residency manager (shim/resid/pools/): physical
 * memory, and ranges mapped onto it.
 *
 * It promises chunks (one physical handle each, device or host) taken from pools kept by size or
 * created within the budget and the host budget, given back, set aside for good when a copy's end
 * cannot be known, and released to the driver when their room is wanted; the mapping of a range
 * onto chunks and its unmapping; ranges of freed units kept mapped as spares for the next
 * allocation of their size; and where evicted memory lives (host-located VMM or pinned buffers).
 * It never waits for the device and never evicts: making room when the budget is spent is the
 * budget room's, above (budget/shim_resid_search.c). Every function runs with r->lock held but
 * resid_map_calls, which touches no manager state. Uses the state room and the driver seam. */
#ifndef SHIM_RESID_POOLS_H
#define SHIM_RESID_POOLS_H

#include "shim_resid_state.h"

/* What a take has gathered: chunks in out[0..k), covering g of the n granules wanted. */
struct resid_gather {
    struct resid_chunk **out;
    uint32_t n, k, g;
};

/* Adds chunk c to t (t has a slot for it: k < n). */
static inline void resid_gather_add(struct resid_gather *t, struct resid_chunk *c)
{
    t->out[t->k++] = c;
    t->g += c->grans;
}

/* shim_resid_chunks.c — chunks, their pools and mappings */
/* Maps the chunks of c[0..n) (up to the first NULL slot, in order from va) and enables access
   over them in one call; 0, or -1 with nothing mapped (*rc: the failed call's error). Touches
   no manager state, so it runs without the lock (a remap by the mover); the caller notes a
   failure. */
int resid_map_calls(const struct resid_driver *drv, uint64_t gran, CUdevice dev, CUdeviceptr va,
                    struct resid_chunk *const *c, uint32_t n, CUresult *rc);
/* resid_map_calls with the lock held: a failure is noted (resid_driver_failed, oom). */
int resid_map(struct resid_ctx *r, CUdeviceptr va, struct resid_chunk **c, uint32_t n);
/* Returns chunks to their pool (device or host by the chunk); NULL entries are skipped. */
void resid_give_back(struct resid_ctx *r, struct resid_chunk **c, uint32_t n);
/* Sets chunks aside for good: a copy that may still write them has an unknown end. */
void resid_set_aside(struct resid_ctx *r, struct resid_chunk **c, uint32_t n);
/* Takes a free chunk out of its pool: one of exactly `grans` granules, or with `smaller` the
   largest one below that when there is none; NULL if none. */
struct resid_chunk *resid_pool_pop(struct resid_ctx *r, bool host, uint32_t grans, bool smaller);
/* The latest eviction fence among chunks c[0..n) (a new reference, or NULL); the chunks'
   own fences are dropped: whoever writes them waits for the returned fence first. */
struct resid_fence *resid_take_fences(struct resid_ctx *r, struct resid_chunk **c, uint32_t n);
/* Releases free device chunks (spare ranges first, when the pool is short) to the driver until
   `bytes` were released; returns how many. A chunk a copy may still read stays pooled. */
uint64_t resid_trim_device(struct resid_ctx *r, uint64_t bytes);
/* Creates a device chunk for the rest of t within the budget: one of exactly that size, after
   releasing pooled chunks of other sizes if the budget needs their room (a move then remaps one
   handle for good, where pieces would cost a remap each at every move); one granule at a time
   only if the driver refuses the large one. False when the budget or the driver allows nothing
   more. */
bool resid_pool_create_device(struct resid_ctx *r, struct resid_gather *t);
/* Takes host chunks covering n granules within the host budget: a pooled one of that size, a new
   one, then pieces; 0, or -1 (nothing taken; r->oom.host_full when the host budget is spent). */
int resid_take_host(struct resid_ctx *r, struct resid_chunk **out, uint32_t n);
/* Unmaps the range at va (mapped bytes, mapping chunks c[0..n)), tried twice, then frees the
   range and returns the chunks to their pool; if it stays mapped, the range stays reserved and
   the chunks are set aside for good (logged once). True if unmapped. */
bool resid_unmap_range(struct resid_ctx *r, CUdeviceptr va, uint64_t mapped, struct resid_chunk **c,
                       uint32_t n);

/* shim_resid_spare.c — freed ranges kept mapped */
struct resid_spare;
/* Keeps u's range and chunks mapped as a spare if u is whole on the device with nothing in
   flight (called on its release, before the FREE transition): true if kept (u->backing is then
   NULL: the caller frees u without unmapping). */
bool resid_spare_keep(struct resid_ctx *r, struct resid_unit *u);
/* Gives new unit u (u->n set, no range) a mapped range of u->n chunks: a spare, or with ordered
   the range of a free still pending on `stream` (*reused is set then: u's users on other
   streams must fence on stream). False if none; u unchanged. The chunks keep their fences. */
bool resid_spare_take(struct resid_ctx *r, struct resid_unit *u, CUstream stream, bool ordered,
                      bool *reused);
/* Unmaps spares, oldest first, until at least `chunks` chunks went back to the pool (or none
   is left); returns how many went back. */
uint32_t resid_spare_drop(struct resid_ctx *r, uint32_t chunks);

/* shim_resid_host.c — where evicted memory lives */
/* Sets r->host_location, r->unmapped and r->can_evict for r->device: host-located
   VMM from the attributes 141/145 when the driver answers them, else from a probe allocation
   (HOST_NUMA at the node of attribute 134, then HOST) released at once; without either, the
   pinned fallback if unmapped_eviction. Logs which path decided. Needs r->drv, r->device
   and r->gran; at start, before r->on. Never fails. */
void resid_host_detect(struct resid_ctx *r);

#endif
