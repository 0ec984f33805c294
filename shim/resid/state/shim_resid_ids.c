/* shim_resid_ids.c — the manager's tables by id (units, and the small allocations living in
 * slabs), and the set of ids kept on the host for good, which the plan room reads without the
 * residency lock. */
#include "shim_resid_state.h"

#include <stdlib.h>

/* Both tables map an id to its record (base_map: ids count up from 1 and carry the managed tag,
   which its hash spreads evenly). */

struct resid_unit *resid_find(struct resid_ctx *r, uint64_t id)
{
    return base_map_find_ptr(&r->units, id);
}

int resid_insert(struct resid_ctx *r, struct resid_unit *u)
{
    return base_map_put_ptr(&r->units, u->id, u);
}

void resid_erase(struct resid_ctx *r, struct resid_unit *u)
{
    if (resid_find(r, u->id) == u)
        base_map_erase(&r->units, u->id, NULL);
}

struct resid_member *resid_member_find(struct resid_ctx *r, uint64_t id)
{
    return base_map_find_ptr(&r->members, id);
}

int resid_member_insert(struct resid_ctx *r, struct resid_member *m)
{
    return base_map_put_ptr(&r->members, m->id, m);
}

void resid_member_erase(struct resid_ctx *r, struct resid_member *m)
{
    if (resid_member_find(r, m->id) == m)
        base_map_erase(&r->members, m->id, NULL);
}

/* resid_each's callback and its manager, for base_map_each. */
struct each {
    struct resid_ctx *r;
    void (*fn)(struct resid_ctx *, struct resid_unit *, void *);
    void *arg;
};

static int each_unit(uint64_t id, uint64_t val, void *arg)
{
    (void)id;
    struct each *e = arg;
    e->fn(e->r, (struct resid_unit *)(uintptr_t)val, e->arg); /* may take the unit out */
    return 0;
}

void resid_each(struct resid_ctx *r, void (*fn)(struct resid_ctx *, struct resid_unit *, void *),
                void *arg)
{
    struct each e = {r, fn, arg};
    base_map_each(&r->units, each_unit, &e);
}

/* The ids of the units kept on the host (host_resident) are also in a small lock-free set, so
   that the plan room can leave them out of a step model without the residency lock (it holds its
   own lock, which ranks after the residency lock). */
/* At most this many allocations kept on the host are known to the lock-free set; more are
   still kept on the host, but a step model may count them as device memory (said once). */
#define PLACED_MAX 256

static _Atomic uint64_t placed_ids[PLACED_MAX];
static _Atomic uint32_t placed_top; /* slots ever used: the set's scan stops there */

void resid_placed_note(uint64_t id)
{
    for (uint32_t i = 0; i < PLACED_MAX; i++) {
        uint64_t free_slot = 0;
        if (atomic_compare_exchange_strong(&placed_ids[i], &free_slot, id)) {
            uint32_t top = atomic_load(&placed_top);
            while (top < i + 1 && !atomic_compare_exchange_weak(&placed_top, &top, i + 1))
                ;
            return;
        }
    }
    SHIM_LOG_ONCE(SHIM_LOG_WARN,
                  "host_resident: more than %d allocations kept on the host at "
                  "once; the in-process plan may count the others as device memory",
                  PLACED_MAX);
}

void resid_placed_forget(uint64_t id)
{
    uint32_t top = atomic_load(&placed_top);
    for (uint32_t i = 0; i < top; i++) {
        uint64_t want = id;
        if (atomic_compare_exchange_strong(&placed_ids[i], &want, 0))
            return;
    }
}

bool resid_placed_has(uint64_t id)
{
    uint32_t top = atomic_load_explicit(&placed_top, memory_order_acquire);
    for (uint32_t i = 0; i < top && id; i++)
        if (atomic_load_explicit(&placed_ids[i], memory_order_relaxed) == id)
            return true;
    return false;
}
