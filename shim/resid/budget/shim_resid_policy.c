/* shim_resid_policy.c — the reactive eviction policy: when a unit will next be used, learned
 * from the previous training step.
 *
 * Once the step detector knows the step's length S (in launches), a launch at
 * index L repeats the launch at L - S. A unit that has lived for a whole step
 * (weights, optimizer state, long-lived buffers) is therefore next used S
 * launches after its oldest touch in the last S launches, and not at all if the
 * last step did not touch it. Younger units (activations, gradients) get
 * "unknown", and the score falls back to least recently used for them — which
 * for activations born in the forward pass and used again in the backward pass
 * is the same order. The unit keeps its latest RESID_TOUCH_LOG touches in a
 * ring (no allocation on the launch path); a unit touched more often than that
 * per step is predicted later than it is used, which orders victims worse but
 * never changes what they hold. All functions run under r->lock. */
#include "shim_resid_budget.h"

static void touch(struct resid_unit *u, uint64_t now)
{
    uint32_t last = (u->ntouches + RESID_TOUCH_LOG - 1) % RESID_TOUCH_LOG;
    if (u->ntouches && u->touches[last] == now)
        return;
    u->touches[u->ntouches % RESID_TOUCH_LOG] = now;
    u->ntouches++;
}

#define NEXT_UNKNOWN UINT64_MAX
#define NEXT_NEVER   (UINT64_MAX - 1)

/* The launch index of u's next use after now, NEXT_NEVER, or NEXT_UNKNOWN. */
static uint64_t next_use(const struct resid_unit *u, uint64_t now)
{
    uint64_t S = shim_steps_step_len(&shim.steps);
    if (!S || now < S || u->birth + S > now)
        return NEXT_UNKNOWN;
    uint32_t kept = u->ntouches < RESID_TOUCH_LOG ? u->ntouches : RESID_TOUCH_LOG;
    for (uint32_t k = 0; k < kept; k++) { /* oldest kept first */
        uint64_t t = u->touches[(u->ntouches - kept + k) % RESID_TOUCH_LOG];
        if (t > now - S)
            return t + S;
    }
    return NEXT_NEVER; /* the last step did not use it */
}

static uint64_t score(const struct resid_unit *u, uint64_t now, uint64_t *next)
{
    uint64_t n = next_use(u, now);
    *next = n;             /* UINT64_MAX unknown, UINT64_MAX - 1 not used in the last step */
    if (n == NEXT_UNKNOWN) /* least recently used */
        return now - (u->last_use < now ? u->last_use : now);
    return n == NEXT_NEVER ? UINT64_MAX / 2 : n - now;
}

const struct resid_policy resid_policy_reactive = {"reactive", touch, score};
