/* conf_arena.c — bump allocator that owns every value of a document and bounds its memory. */
#include "conf_internal.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK_MIN ((size_t)16 << 10)
#define ALIGN     ((size_t)16)

struct conf_chunk {
    conf_chunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

static size_t round_up(size_t n)
{
    return (n + ALIGN - 1) & ~(ALIGN - 1);
}

static conf_chunk *chunk_new(conf_arena *a, size_t need)
{
    size_t size = need > CHUNK_MIN ? need : CHUNK_MIN;
    size_t total = sizeof(conf_chunk) + size;
    if (total < size || a->total + total > a->limit || a->total + total < a->total)
        return NULL;
    conf_chunk *c = malloc(total);
    if (c == NULL)
        return NULL;
    c->size = size;
    c->used = 0;
    c->next = a->head;
    a->head = c;
    a->total += total;
    return c;
}

/* Contract in conf_internal.h: NULL when the limit or malloc says no. */
void *conf_arena_alloc(conf_arena *a, size_t n)
{
    if (n > SIZE_MAX / 2)
        return NULL;
    n = round_up(n ? n : 1);
    conf_chunk *c = a->head;
    if (c == NULL || c->size - c->used < n) {
        c = chunk_new(a, n);
        if (c == NULL)
            return NULL;
    }
    void *p = c->data + c->used;
    c->used += n;
    return p;
}

/* Contract in conf_internal.h: NULL as conf_arena_alloc; old stays valid either way. */
void *conf_arena_grow(conf_arena *a, const void *old, size_t old_n, size_t new_n)
{
    void *p = conf_arena_alloc(a, new_n);
    if (p != NULL && old_n > 0)
        memcpy(p, old, old_n < new_n ? old_n : new_n);
    return p;
}

/* Contract in conf_internal.h: never fails. */
void conf_arena_release(conf_arena *a)
{
    conf_chunk *c = a->head;
    while (c != NULL) {
        conf_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
    a->total = 0;
}
