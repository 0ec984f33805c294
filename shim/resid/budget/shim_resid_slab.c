/* shim_resid_slab.c — small managed allocations packed into slabs.
 *
 * The device maps memory in chunks of its granularity (2 MiB), so a small
 * allocation given a chunk of its own wastes most of it, and a budget made of
 * such chunks holds few tensors: a model whose tensors are mostly small ran out
 * of memory long before its peak. Allocations of at most half a chunk live in
 * slabs instead: one chunk-sized range, mapped onto one chunk, cut into 512-byte
 * blocks (the alignment cudaMalloc promises is 256 bytes). A slab is a unit: it
 * is evicted and restored whole, onto one host chunk. Its range is in the
 * address table with a map from blocks to members, so the launch scan finds
 * each member by its own id (as the trace records it) and the residency
 * manager finds the member's slab: a touch of any member fences and restores
 * the slab. New members go into the newest slab on
 * the device with room: allocations made together tend to die together. */
#include "shim_resid_budget.h"

#include <stdlib.h>

#define SLAB_KEEP_EMPTY                                                                            \
    PLAN_RULES_SLAB_KEEP_EMPTY /* empty slabs kept mapped at most (a chunk each) */

/* First run of `want` free blocks in s, or -1: the planner's rule, which its model of the slabs
   follows too (plan_rules_slab_find). */
static int64_t find_run(const struct resid_slab *s, uint32_t want)
{
    return plan_rules_slab_find(s->used, s->nblocks, want);
}

static void set_blocks(struct resid_slab *s, uint32_t first, uint32_t n, bool used)
{
    for (uint32_t b = first; b < first + n; b++) {
        if (used)
            s->used[b / 64] |= 1ull << (b % 64);
        else
            s->used[b / 64] &= ~(1ull << (b % 64));
    }
    s->taken = used ? s->taken + n : s->taken - n;
}

/* Whether slab u can take a new member now. */
static bool open_for_members(const struct resid_unit *u)
{
    return u->state == SHIM_RS_DEVICE && !u->move && !resid_unmovable(u) && !u->stuck;
}

static void link_slab(struct resid_ctx *r, struct resid_unit *u)
{
    u->slab->prev = NULL;
    u->slab->next = r->slabs;
    if (r->slabs)
        r->slabs->slab->prev = u;
    r->slabs = u;
}

static void unlink_slab(struct resid_ctx *r, struct resid_unit *u)
{
    struct resid_slab *s = u->slab;
    if (s->prev)
        s->prev->slab->next = s->next;
    else
        r->slabs = s->next;
    if (s->next)
        s->next->slab->prev = s->prev;
}

/* A new slab record with its range reserved; NULL when out of memory or the reservation failed. */
static struct resid_unit *slab_record(struct resid_ctx *r)
{
    struct resid_unit *u = resid_unit_reserve(r, r->gran);
    struct resid_slab *s = u ? calloc(1, sizeof *s) : NULL;
    uint32_t blocks = (uint32_t)(r->gran / RESID_SLAB_BLOCK);
    if (s && !(s->used = calloc((blocks + 63) / 64, sizeof *s->used))) {
        free(s);
        s = NULL;
    }
    if (!s) {
        if (u) {
            r->drv->address_free(u->va, u->mapped);
            resid_unit_free(r, u);
        }
        return NULL;
    }
    s->nblocks = blocks;
    u->slab = s;
    u->id = shim_new_id() | SHIM_MANAGED_ID_TAG;
    return u;
}

/* Makes a slab on the device, or in host memory if the budget stays held by work in progress
   (resid_may_place_on_host: it then takes no other member until restored); lock held. 0, 1 (out
   of memory), or -1 (a driver call failed). */
static int slab_new(struct resid_ctx *r, struct resid_unit **out)
{
    struct resid_unit *u = slab_record(r);
    if (!u)
        return -1;
    int got = resid_take_device(r, u->backing, 1, NULL, false, NULL) != 0 ? 1
              : resid_map(r, u->va, u->backing, 1) != 0                   ? -1
                                                                          : 0;
    bool on_host = false;
    if (got == 1 && resid_may_place_on_host(r, r->gran)) { /* nothing failed (it checks) */
        got = resid_back_on_host(r, u);
        on_host = got == 0;
    }
    if (got == 0 && (resid_insert(r, u) != 0 ||
                     !(u->slab->map = shim_registry_add_slab(u->va, u->mapped, u->id)))) {
        resid_erase(r, u);
        r->drv->unmap(u->va, u->mapped);
        got = -1;
    }
    if (got != 0) {
        if (got == 1 && r->oom.driver_failed)
            got = -1;
        resid_give_back(r, u->backing, 1);
        r->drv->address_free(u->va, u->mapped);
        resid_unit_free(r, u);
        return got;
    }
    u->birth = u->last_use = atomic_load_explicit(&shim.launch_seq, memory_order_relaxed);
    u->ready = resid_take_fences(r, u->backing, 1);
    link_slab(r, u);
    if (shim.record & CONF_RECORD_MOVES) /* before its first transition (made on the host) */
        shim_trace_slab(u->id, u->va, u->mapped, (uint32_t)r->device);
    resid_fsm(r, u, on_host ? SHIM_EV_CREATE_HOST : SHIM_EV_CREATE, NULL);
    *out = u;
    return 0;
}

int resid_slab_alloc(struct resid_ctx *r, uint64_t bytes, CUdeviceptr *va,
                     struct resid_member **out)
{
    uint32_t want = (uint32_t)((bytes + RESID_SLAB_BLOCK - 1) / RESID_SLAB_BLOCK);
    struct resid_member *m = calloc(1, sizeof *m);
    if (!m)
        return -1;
    struct resid_unit *u = r->slabs;
    int64_t first = -1;
    for (; u; u = u->slab->next)
        if (open_for_members(u) && u->slab->nblocks - u->slab->taken >= want &&
            (first = find_run(u->slab, want)) >= 0)
            break;
    if (!u) {
        int got = slab_new(r, &u);
        if (got != 0) {
            free(m);
            return got;
        }
        first = 0;
    }
    set_blocks(u->slab, (uint32_t)first, want, true);
    if (u->slab->kept_empty) {
        u->slab->kept_empty = false;
        r->empty_slabs--;
    }
    u->slab->members++;
    *m = (struct resid_member){.unit = u, .first = (uint32_t)first, .blocks = want};
    *va = u->va + (uint64_t)first * RESID_SLAB_BLOCK;
    *out = m;
    return 0;
}

bool resid_slab_reclaim(struct resid_ctx *r, struct resid_unit *u)
{
    if (!u->slab || u->slab->members || u->pins || u->move ||
        (u->state != SHIM_RS_DEVICE && u->state != SHIM_RS_HOST))
        return false;
    if (u->slab->kept_empty) {
        u->slab->kept_empty = false;
        r->empty_slabs--;
    }
    unlink_slab(r, u);
    resid_erase(r, u);
    shim_registry_remove_slab(u->slab->map);
    resid_release(r, u, &(struct resid_cause){SHIM_REASON_FREED, NULL, 0, UINT64_MAX});
    return true;
}

bool resid_slab_release_empty(struct resid_ctx *r)
{
    if (!r->empty_slabs)
        return false;
    for (struct resid_unit *u = r->slabs; u; u = u->slab->next)
        if (u->slab->kept_empty && resid_slab_reclaim(r, u))
            return true;
    return false;
}

void resid_slab_free(struct resid_ctx *r, struct resid_member *m)
{
    struct resid_unit *u = m->unit;
    if (m->id) /* lookups inside its blocks answer the slab again */
        shim_registry_slab_set(u->slab->map, u->va + (uint64_t)m->first * RESID_SLAB_BLOCK,
                               (uint64_t)m->blocks * RESID_SLAB_BLOCK, 0);
    set_blocks(u->slab, m->first, m->blocks, false);
    u->slab->members--;
    free(m);
    /* A few empty slabs stay mapped on the device, as freed ranges do (shim_resid_spare.c:
       mapping a chunk anew costs the host more than the allocation it serves); a search for
       room releases them first (resid_slab_reclaim from the victim search). */
    if (!u->slab->members && !u->slab->kept_empty && r->empty_slabs < SLAB_KEEP_EMPTY &&
        open_for_members(u) && !u->pins) {
        u->slab->kept_empty = true;
        r->empty_slabs++;
        return;
    }
    resid_slab_reclaim(r, u);
}
