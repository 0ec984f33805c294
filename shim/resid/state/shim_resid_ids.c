/* shim_resid_ids.c — the manager's tables by id (units, and the small allocations living in
 * slabs), and the set of ids kept on the host for good, which the plan room reads without the
 * residency lock. */
#include "shim_resid_state.h"

#include <stdlib.h>

static size_t slot_of(uint64_t id, size_t cap)
{
    return (size_t)(id * 0x9E3779B97F4A7C15ull >> 32) & (cap - 1);
}

/* The two tables by id (units, members) share one shape: a power-of-two array of chains linked
   through hnext. The functions below are written out for each (the shape is small). */

/* Rehashes the chains of old[0..cap) into a new array of ncap chains, or NULL (old untouched). */
static struct resid_unit **units_rehash(struct resid_unit **old, size_t cap, size_t ncap)
{
    struct resid_unit **t = calloc(ncap, sizeof *t);
    if (!t)
        return NULL;
    for (size_t i = 0; i < cap; i++) {
        for (struct resid_unit *x = old[i], *next; x; x = next) {
            next = x->hnext;
            x->hnext = t[slot_of(x->id, ncap)];
            t[slot_of(x->id, ncap)] = x;
        }
    }
    return t;
}

static struct resid_member **members_rehash(struct resid_member **old, size_t cap, size_t ncap)
{
    struct resid_member **t = calloc(ncap, sizeof *t);
    if (!t)
        return NULL;
    for (size_t i = 0; i < cap; i++) {
        for (struct resid_member *x = old[i], *next; x; x = next) {
            next = x->hnext;
            x->hnext = t[slot_of(x->id, ncap)];
            t[slot_of(x->id, ncap)] = x;
        }
    }
    return t;
}

struct resid_unit *resid_find(struct resid_ctx *r, uint64_t id)
{
    if (!r->units_cap)
        return NULL;
    struct resid_unit *x = r->units[slot_of(id, r->units_cap)];
    while (x && x->id != id)
        x = x->hnext;
    return x;
}

int resid_insert(struct resid_ctx *r, struct resid_unit *u)
{
    if (r->nunits + 1 > r->units_cap) {
        size_t ncap = r->units_cap ? 2 * r->units_cap : 1024;
        struct resid_unit **t = units_rehash(r->units, r->units_cap, ncap);
        if (!t)
            return -1;
        free(r->units);
        r->units = t;
        r->units_cap = ncap;
    }
    size_t s = slot_of(u->id, r->units_cap);
    u->hnext = r->units[s];
    r->units[s] = u;
    r->nunits++;
    return 0;
}

void resid_erase(struct resid_ctx *r, struct resid_unit *u)
{
    if (!r->units_cap)
        return;
    struct resid_unit **p = &r->units[slot_of(u->id, r->units_cap)];
    while (*p && *p != u)
        p = &(*p)->hnext;
    if (*p) {
        *p = u->hnext;
        r->nunits--;
    }
}

struct resid_member *resid_member_find(struct resid_ctx *r, uint64_t id)
{
    if (!r->members_cap)
        return NULL;
    struct resid_member *x = r->members[slot_of(id, r->members_cap)];
    while (x && x->id != id)
        x = x->hnext;
    return x;
}

int resid_member_insert(struct resid_ctx *r, struct resid_member *m)
{
    if (r->nmembers + 1 > r->members_cap) {
        size_t ncap = r->members_cap ? 2 * r->members_cap : 1024;
        struct resid_member **t = members_rehash(r->members, r->members_cap, ncap);
        if (!t)
            return -1;
        free(r->members);
        r->members = t;
        r->members_cap = ncap;
    }
    size_t s = slot_of(m->id, r->members_cap);
    m->hnext = r->members[s];
    r->members[s] = m;
    r->nmembers++;
    return 0;
}

void resid_member_erase(struct resid_ctx *r, struct resid_member *m)
{
    if (!r->members_cap)
        return;
    struct resid_member **p = &r->members[slot_of(m->id, r->members_cap)];
    while (*p && *p != m)
        p = &(*p)->hnext;
    if (*p) {
        *p = m->hnext;
        r->nmembers--;
    }
}

void resid_each(struct resid_ctx *r, void (*fn)(struct resid_ctx *, struct resid_unit *, void *),
                void *arg)
{
    for (size_t i = 0; i < r->units_cap; i++)
        for (struct resid_unit *u = r->units[i], *next; u; u = next) {
            next = u->hnext; /* fn may take u out */
            fn(r, u, arg);
        }
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
