/* shim_resid_restore.c — what needs device room the budget may not have: a unit brought back to
 * the device, and a new one made in host memory when the budget stays held by work in progress. */
#include "shim_resid_budget.h"

int resid_restore(struct resid_ctx *r, struct resid_unit *u, const struct resid_cause *cause)
{
    if (r->sticky || u->state != SHIM_RS_HOST || u->move || resid_read_through_host(u))
        return -1;
    struct resid_move *m = resid_move_new(u, SHIM_MOVE_TO_DEVICE, cause);
    if (!m)
        return -1;
    if (resid_take_device(r, m->chunks, u->n, NULL, false, NULL) != 0) {
        resid_move_free(r, m);
        return -1;
    }
    return resid_restore_start(r, u, m);
}

bool resid_may_place_on_host(const struct resid_ctx *r, uint64_t bytes)
{
    return r->can_evict && !r->unmapped && !r->sticky && !r->stepped_aside &&
           !r->oom.driver_failed && (r->oom.pinned || r->oom.moving) &&
           resid_managed_need(r, bytes) + r->slack <= r->budget;
}

int resid_back_on_host(struct resid_ctx *r, struct resid_unit *u)
{
    if (resid_take_host(r, u->backing, u->n) != 0)
        return 1;
    if (resid_map(r, u->va, u->backing, u->n) != 0) {
        resid_give_back(r, u->backing, u->n);
        return -1;
    }
    r->host_births++;
    SHIM_LOG_ONCE(SHIM_LOG_INFO,
                  "an allocation found the budget held by submissions or moves in progress for "
                  "a second: it is made in host memory, read through the link until it can come "
                  "to the device (counted as 'made on the host' at exit)");
    return 0;
}
