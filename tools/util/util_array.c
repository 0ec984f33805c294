/* util_array.c — the growable array of tools/ (util_array.h): capacity doubling, overflow checked.
 */
#include "util_array.h"

#include <stdint.h>
#include <stdlib.h>

/* Contract in util_array.h. */
int util_array_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t want = *cap ? *cap : 64;
    while (want < need) {
        if (want > SIZE_MAX / 2)
            return -1;
        want *= 2;
    }
    if (elem != 0 && want > SIZE_MAX / elem)
        return -1;
    void *p = realloc(*arr, want * elem);
    if (p == NULL)
        return -1;
    *arr = p;
    *cap = want;
    return 0;
}
