/* util_array.h — the util room's seam (tools/util/): the one growable-array helper of tools/.
 *
 * An array is three things its owner keeps: a pointer (NULL when empty), a count and a capacity
 * (0 when empty). util_array_grow makes room; the owner stores elements and counts them, and
 * frees the pointer with free(). Who may include it: every room of tools/ (trace, report,
 * import) and their tests. It includes nothing from tools/ and nothing else from the project.
 */
#ifndef UTIL_ARRAY_H
#define UTIL_ARRAY_H

#include <stddef.h>

/* Makes room for at least need elements of elem bytes in *arr, whose capacity is *cap: the
   capacity doubles (from 64) until it holds need. Returns 0 (*arr and *cap updated; elements
   already there are kept), or -1 when memory runs out or the size would overflow (*arr and *cap
   are then unchanged and *arr is still the caller's to free). */
int util_array_grow(void **arr, size_t *cap, size_t need, size_t elem);

#endif
