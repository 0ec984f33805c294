/* planner/base/base_array.h — the base room's growable array: the one helper that makes room in
 * an array of the planner, the shim and the tools.
 *
 * An array is three things its owner keeps: a pointer (NULL when empty), a count and a capacity
 * (0 when empty). base_array_grow makes room; the owner stores elements and counts them, and
 * frees the pointer with free().
 *
 * Who may include it: every folder of the project (planner/, every room of shim/, every room of
 * tools/, conf/, the tests). It includes nothing of the project's and only libc; it is
 * header-only (static inline), so that no binary links anything more for it. It holds no state.
 *
 * Error contract (the base room's, same words everywhere): a function returning int returns 0 on
 * success; on failure it returns -1 and leaves every object it was passed as it was. */
#ifndef BASE_ARRAY_H
#define BASE_ARRAY_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* The capacity an empty array takes at its first growth. */
#define BASE_ARRAY_FIRST 64

/* Makes room for at least need elements of elem bytes in *arr, whose capacity is *cap: the
   capacity doubles (from BASE_ARRAY_FIRST) until it holds need. Returns 0 (*arr and *cap
   updated; the elements already there are kept), or -1 when memory runs out, the size would
   overflow or elem is 0 (*arr and *cap are then unchanged and *arr is still the caller's to
   free). */
static inline int base_array_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t want = *cap ? *cap : BASE_ARRAY_FIRST;
    while (want < need) {
        if (want > SIZE_MAX / 2)
            return -1;
        want *= 2;
    }
    if (elem == 0 || want > SIZE_MAX / elem)
        return -1;
    void *p = realloc(*arr, want * elem);
    if (p == NULL)
        return -1;
    *arr = p;
    *cap = want;
    return 0;
}

#endif
