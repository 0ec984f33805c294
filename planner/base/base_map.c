/* base_map.c — the map of base_map.h: linear probing, at most half full, backward-shift
 * deletion, and an iteration that survives the erase of the entry it visits. */
#include "base_map.h"

#include <stdlib.h>

static size_t home(const base_map *m, uint64_t key)
{
    return (size_t)(base_map_hash(key) >> m->shift);
}

/* The slot holding key, or the empty slot where it would go (m->cap > 0, key != 0). */
static size_t slot_of(const base_map *m, uint64_t key)
{
    size_t mask = m->cap - 1, i = home(m, key);
    while (m->slot[i].key != 0 && m->slot[i].key != key)
        i = (i + 1) & mask;
    return i;
}

/* Moves m's entries into a new table of cap slots (a power of two holding them at most half
   full): 0, or -1 with m untouched. */
static int rehash(base_map *m, size_t cap)
{
    base_map_slot *t = calloc(cap, sizeof *t);
    if (t == NULL)
        return -1;
    unsigned bits = 0;
    while (((size_t)1 << bits) < cap)
        bits++;
    base_map old = *m;
    m->slot = t;
    m->cap = cap;
    m->shift = 64 - bits;
    for (size_t i = 0; i < old.cap; i++)
        if (old.slot[i].key != 0)
            m->slot[slot_of(m, old.slot[i].key)] = old.slot[i];
    free(old.slot);
    return 0;
}

/* Contract in base_map.h. */
void base_map_init(base_map *m)
{
    *m = (base_map)BASE_MAP_INIT;
}

/* Contract in base_map.h. */
void base_map_free(base_map *m)
{
    free(m->slot);
    base_map_init(m);
}

/* Contract in base_map.h. */
size_t base_map_count(const base_map *m)
{
    return m->n + m->has_zero;
}

/* Contract in base_map.h. */
bool base_map_find(const base_map *m, uint64_t key, uint64_t *val)
{
    bool held;
    uint64_t v = 0;
    if (key == 0) {
        held = m->has_zero;
        v = m->zero_val;
    } else if (m->cap == 0) {
        held = false;
    } else {
        size_t i = slot_of(m, key);
        held = m->slot[i].key == key;
        v = m->slot[i].val;
    }
    if (held && val != NULL)
        *val = v;
    return held;
}

/* Contract in base_map.h. */
int base_map_reserve(base_map *m, size_t n)
{
    size_t cap = m->cap ? m->cap : BASE_MAP_FIRST;
    while (cap / 2 < n) {
        if (cap > SIZE_MAX / 2 / sizeof *m->slot)
            return -1;
        cap *= 2;
    }
    return cap == m->cap ? 0 : rehash(m, cap);
}

/* Contract in base_map.h. */
int base_map_put(base_map *m, uint64_t key, uint64_t val)
{
    if (key == 0) {
        m->has_zero = true;
        m->zero_val = val;
        return 0;
    }
    if (m->cap != 0) {
        size_t i = slot_of(m, key);
        if (m->slot[i].key == key) {
            m->slot[i].val = val;
            return 0;
        }
    }
    if (base_map_reserve(m, m->n + 1) != 0)
        return -1;
    size_t i = slot_of(m, key);
    m->slot[i] = (base_map_slot){key, val};
    m->n++;
    return 0;
}

/* Contract in base_map.h. */
bool base_map_erase(base_map *m, uint64_t key, uint64_t *val)
{
    if (key == 0) {
        if (!m->has_zero)
            return false;
        if (val != NULL)
            *val = m->zero_val;
        m->has_zero = false;
        m->zero_val = 0;
        return true;
    }
    if (m->cap == 0)
        return false;
    size_t mask = m->cap - 1, i = slot_of(m, key);
    if (m->slot[i].key != key)
        return false;
    if (val != NULL)
        *val = m->slot[i].val;
    /* The hole at i takes the first entry after it that may stand there (its home lies
       cyclically in [home, hole]); that entry's slot becomes the hole, until an empty slot. */
    for (size_t j = (i + 1) & mask; m->slot[j].key != 0; j = (j + 1) & mask) {
        size_t h = home(m, m->slot[j].key);
        if (((j - h) & mask) >= ((j - i) & mask)) {
            m->slot[i] = m->slot[j];
            i = j;
        }
    }
    m->slot[i] = (base_map_slot){0, 0};
    m->n--;
    return true;
}

/* Contract in base_map.h. The walk starts after an empty slot and goes once round the table:
   no run of entries crosses its start, so an erase (which moves entries back only within their
   run, into the hole) moves an entry not yet visited into the slot being visited or a later
   one, never into one already passed. The slot visited is looked at again after an erase. */
int base_map_each(base_map *m, int (*fn)(uint64_t key, uint64_t val, void *arg), void *arg)
{
    if (m->has_zero) {
        int r = fn(0, m->zero_val, arg);
        if (r != 0)
            return r;
    }
    if (m->n == 0)
        return 0;
    size_t mask = m->cap - 1, start = 0;
    while (m->slot[start].key != 0) /* there is one: the table is at most half full */
        start++;
    for (size_t step = 1; step <= mask; step++) {
        size_t i = (start + step) & mask;
        for (uint64_t k; (k = m->slot[i].key) != 0;) {
            int r = fn(k, m->slot[i].val, arg);
            if (r != 0)
                return r;
            if (m->slot[i].key == k)
                break;
        }
    }
    return 0;
}
