/* simgpu_handles.c — sets of live handles (open addressing on the pointer), so a stale or
 * foreign handle is answered with an error instead of being dereferenced. Lock held. */
#include "simgpu_internal.h"

#include <stdlib.h>

#define TOMBSTONE ((uintptr_t)1)

static size_t slot_of(uintptr_t p, size_t cap)
{
    uint64_t h = (uint64_t)p * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17) & (cap - 1);
}

static int rehash(struct sim_handles *s, size_t cap)
{
    uintptr_t *old = s->v;
    size_t oldcap = s->cap;
    s->v = calloc(cap, sizeof *s->v);
    if (!s->v) {
        s->v = old;
        return -1;
    }
    s->cap = cap;
    s->used = s->n;
    for (size_t i = 0; i < oldcap; i++) {
        if (old[i] > TOMBSTONE) {
            size_t j = slot_of(old[i], cap);
            while (s->v[j])
                j = (j + 1) & (cap - 1);
            s->v[j] = old[i];
        }
    }
    free(old);
    return 0;
}

int sim_handles_add(struct sim_handles *s, const void *p)
{
    if ((s->used + 1) * 2 > s->cap && rehash(s, s->cap ? 2 * s->cap : 64) != 0)
        return -1;
    size_t j = slot_of((uintptr_t)p, s->cap);
    while (s->v[j] > TOMBSTONE)
        j = (j + 1) & (s->cap - 1);
    if (!s->v[j])
        s->used++;
    s->v[j] = (uintptr_t)p;
    s->n++;
    return 0;
}

static size_t find(const struct sim_handles *s, const void *p)
{
    if (!s->cap || (uintptr_t)p <= TOMBSTONE)
        return SIZE_MAX;
    for (size_t j = slot_of((uintptr_t)p, s->cap);; j = (j + 1) & (s->cap - 1)) {
        if (!s->v[j])
            return SIZE_MAX;
        if (s->v[j] == (uintptr_t)p)
            return j;
    }
}

bool sim_handles_has(const struct sim_handles *s, const void *p)
{
    return find(s, p) != SIZE_MAX;
}

void sim_handles_del(struct sim_handles *s, const void *p)
{
    size_t j = find(s, p);
    if (j != SIZE_MAX) {
        s->v[j] = TOMBSTONE;
        s->n--;
    }
}
