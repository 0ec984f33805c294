/* shim_resid_op.c — what the calling thread's operation in progress holds: between its residency
 * check and its submission (shim_resid_enter .. shim_resid_leave) its ids hold handles of the
 * units it pinned, and a search for room on this thread must not wait for those pins: it would
 * wait for itself. */
#include "shim_resid_state.h"

/* The operation the calling thread is making resident (its ids hold handles meanwhile). */
static __thread const uint64_t *my_ids;
static __thread uint32_t my_n;

void resid_op_set(const uint64_t *ids, uint32_t n)
{
    my_ids = ids;
    my_n = n;
}

int resid_pinned_here(const struct resid_unit *u)
{
    int n = 0;
    for (uint32_t i = 0; i < my_n; i++)
        n += (my_ids[i] & RESID_HANDLE_PINNED) && resid_unit_of_handle(my_ids[i]) == u;
    return n;
}

bool resid_in_operation(void)
{
    return my_n > 0;
}
