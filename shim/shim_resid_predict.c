/* shim_resid_predict.c — when a managed allocation will next be used, learned from the previous
 * training step.
 *
 * Once the step detector knows the step's length S (in launches), a launch at
 * index L repeats the launch at L - S. An allocation that has lived for a
 * whole step (weights, optimizer state, long-lived buffers) is therefore next
 * used S launches after its oldest touch in the last S launches, and not at
 * all if the last step did not touch it. Younger allocations (activations,
 * gradients) get "unknown", and the victim search falls back to least
 * recently used for them — which for activations born in the forward pass
 * and used again in the backward pass is the same order. All functions run
 * under resid.lock. */
#include "shim_resid.h"

#include <stdlib.h>
#include <string.h>

#define LOG_MAX 4096 /* touches kept per allocation */

void resid_note_touch(struct resid_alloc *a, uint64_t now)
{
    if (a->ntouches && a->touches[a->ntouches - 1] == now)
        return;
    if (a->ntouches == a->touch_cap) {
        if (a->touch_cap >= LOG_MAX) { /* keep the newer half */
            memmove(a->touches, a->touches + LOG_MAX / 2, LOG_MAX / 2 * sizeof *a->touches);
            a->ntouches = LOG_MAX / 2;
        } else {
            uint32_t cap = a->touch_cap ? 2 * a->touch_cap : 8;
            uint64_t *v = realloc(a->touches, cap * sizeof *v);
            if (!v)
                return;
            a->touches = v;
            a->touch_cap = cap;
        }
    }
    a->touches[a->ntouches++] = now;
}

#define NEXT_UNKNOWN UINT64_MAX
#define NEXT_NEVER   (UINT64_MAX - 1)

/* The launch index of a's next use after now, NEXT_NEVER, or NEXT_UNKNOWN. */
static uint64_t next_use(const struct resid_alloc *a, uint64_t now)
{
    uint64_t S = shim_steps_length();
    if (!S || now < S || a->birth + S > now)
        return NEXT_UNKNOWN;
    for (uint32_t i = 0; i < a->ntouches; i++)
        if (a->touches[i] > now - S)
            return a->touches[i] + S;
    return NEXT_NEVER; /* the last step did not use it */
}

uint64_t resid_evict_score(const struct resid_alloc *a, uint64_t now)
{
    uint64_t next = next_use(a, now);
    if (next == NEXT_UNKNOWN)
        return now - (a->last_use < now ? a->last_use : now); /* least recently used */
    return next == NEXT_NEVER ? UINT64_MAX / 2 : next - now;
}
