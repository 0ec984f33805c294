/* simgpu_extent.c — first-fit allocator of aligned extents with coalescing (device VA, physical
 * file). */
#include "simgpu_internal.h"

#include <stdlib.h>
#include <string.h>

void sim_extents_init(struct sim_extents *x, uint64_t base, uint64_t len)
{
    x->n = 0;
    x->cap = 64;
    x->v = calloc(x->cap, sizeof *x->v);
    if (x->v && len) {
        x->v[0] = (struct sim_extent){base, len};
        x->n = 1;
    }
}

static int reserve_slot(struct sim_extents *x)
{
    struct sim_extent *v = sim_grow(x->v, &x->cap, x->n + 1, sizeof *v, 64);
    if (!v)
        return -1;
    x->v = v;
    return 0;
}

/* Takes [off, off+len) out of extent i, which contains it. */
static int carve(struct sim_extents *x, size_t i, uint64_t off, uint64_t len)
{
    struct sim_extent e = x->v[i];
    uint64_t head = off - e.off, tail = e.off + e.len - (off + len);
    if (head && tail) {
        if (reserve_slot(x) != 0)
            return -1;
        memmove(&x->v[i + 2], &x->v[i + 1], (x->n - i - 1) * sizeof *x->v);
        x->n++;
        x->v[i] = (struct sim_extent){e.off, head};
        x->v[i + 1] = (struct sim_extent){off + len, tail};
    } else if (head) {
        x->v[i].len = head;
    } else if (tail) {
        x->v[i] = (struct sim_extent){off + len, tail};
    } else {
        memmove(&x->v[i], &x->v[i + 1], (x->n - i - 1) * sizeof *x->v);
        x->n--;
    }
    return 0;
}

int sim_extents_alloc(struct sim_extents *x, uint64_t len, uint64_t align, uint64_t hint,
                      uint64_t *off)
{
    if (len == 0 || align == 0 || (align & (align - 1)))
        return -1;
    for (size_t i = 0; hint && i < x->n; i++) {
        struct sim_extent e = x->v[i];
        if (hint % align == 0 && hint >= e.off && hint - e.off <= e.len &&
            len <= e.len - (hint - e.off)) {
            if (carve(x, i, hint, len) != 0)
                return -1;
            *off = hint;
            return 0;
        }
    }
    for (size_t i = 0; i < x->n; i++) {
        struct sim_extent e = x->v[i];
        uint64_t start = (e.off + align - 1) & ~(align - 1);
        if (start < e.off || start - e.off > e.len || len > e.len - (start - e.off))
            continue;
        if (carve(x, i, start, len) != 0)
            return -1;
        *off = start;
        return 0;
    }
    return -1;
}

int sim_extents_free(struct sim_extents *x, uint64_t off, uint64_t len)
{
    size_t i = 0;
    while (i < x->n && x->v[i].off < off)
        i++;
    bool join_prev = i > 0 && x->v[i - 1].off + x->v[i - 1].len == off;
    bool join_next = i < x->n && off + len == x->v[i].off;
    if (join_prev && join_next) {
        x->v[i - 1].len += len + x->v[i].len;
        memmove(&x->v[i], &x->v[i + 1], (x->n - i - 1) * sizeof *x->v);
        x->n--;
    } else if (join_prev) {
        x->v[i - 1].len += len;
    } else if (join_next) {
        x->v[i].off = off;
        x->v[i].len += len;
    } else {
        if (reserve_slot(x) != 0)
            return -1;
        memmove(&x->v[i + 1], &x->v[i], (x->n - i) * sizeof *x->v);
        x->v[i] = (struct sim_extent){off, len};
        x->n++;
    }
    return 0;
}
