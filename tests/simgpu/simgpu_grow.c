/* simgpu_grow.c — the simulated driver's one growable array: room for more elements, by doubling.
 */
#include "simgpu_internal.h"

#include <stdlib.h>

void *sim_grow(void *v, size_t *cap, size_t need, size_t elem, size_t first)
{
    if (need <= *cap)
        return v;
    size_t c = *cap ? 2 * *cap : first;
    while (c < need)
        c *= 2;
    void *w = realloc(v, c * elem);
    if (w)
        *cap = c;
    return w;
}
