/* shim_resid_fsm.c — the residency state machine: the one table of transitions and the one
 * function that changes a unit's state, counting and tracing every change with its cause.
 *
 * A reader checks the table; every other file asks resid_fsm() for a change and does the
 * work the "action" column names (shim_resid_move.c, shim_resid_mover.c, shim_resid_alloc.c,
 * shim_resid_slab.c). Rules the table encodes:
 *   - data is never in two places that may both be written: a unit is remapped only after
 *     the copy that made the destination is known complete (COPY_DONE), or, for a restore
 *     whose host mapping no queued work uses, at once with every later user ordered after
 *     the copy on the device (ORDERED; its source is held, unwritten, until the copy ends);
 *   - a failure at any step leaves the range mapped where the valid data is (ERROR goes
 *     back to the state the move started from);
 *   - a unit is freed only when no move is in flight. */
#include "shim_resid_state.h"

struct resid_transition {
    enum shim_resid_state from;
    enum shim_resid_event event;
    enum shim_resid_state to;
    const char *action;
};

static const struct resid_transition table[] = {
    {SHIM_RS_NONE, SHIM_EV_CREATE, SHIM_RS_DEVICE, "range mapped onto device chunks"},
    {SHIM_RS_NONE, SHIM_EV_CREATE_HOST, SHIM_RS_HOST,
     "range mapped onto host chunks (the budget held by work in progress): read through the "
     "link until a restore brings it to the device"},
    {SHIM_RS_DEVICE, SHIM_EV_EVICT, SHIM_RS_EVICTING,
     "fence every stream that touched it; copy to host chunks on the D2H stream"},
    {SHIM_RS_EVICTING, SHIM_EV_COPY_DONE, SHIM_RS_HOST,
     "remap onto the host chunks; device chunks to the pool behind the copy's fence"},
    {SHIM_RS_EVICTING, SHIM_EV_CANCEL, SHIM_RS_DEVICE,
     "the toucher's stream waits for the copy; the host chunks come back when it is done"},
    {SHIM_RS_EVICTING, SHIM_EV_ERROR, SHIM_RS_DEVICE,
     "copy or remap failed: the range still maps the device chunks, which hold the data"},
    {SHIM_RS_HOST, SHIM_EV_RESTORE, SHIM_RS_RESTORING,
     "fence every stream that touched it; copy to device chunks on the H2D stream"},
    {SHIM_RS_RESTORING, SHIM_EV_COPY_DONE, SHIM_RS_DEVICE,
     "remap onto the device chunks; the next user waits for the copy's fence"},
    {SHIM_RS_RESTORING, SHIM_EV_ERROR, SHIM_RS_HOST,
     "copy or remap failed: the range still maps the host chunks, which hold the data"},
    {SHIM_RS_RESTORING, SHIM_EV_ORDERED, SHIM_RS_DEVICE,
     "no queued work touched it on the host: remap onto the device chunks at once; every "
     "user waits for the copy in stream order; the host chunks come back when it is done"},
    {SHIM_RS_DEVICE, SHIM_EV_FREE, SHIM_RS_NONE, "unmap, release the range, chunks to the pool"},
    {SHIM_RS_HOST, SHIM_EV_FREE, SHIM_RS_NONE, "unmap, release the range, chunks to the pool"},
};

int resid_fsm_next(enum shim_resid_state from, enum shim_resid_event ev)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].from == from && table[i].event == ev)
            return (int)table[i].to;
    return -1;
}

const char *resid_state_name(enum shim_resid_state s)
{
    static const char *const names[] = {"none", "device", "evicting", "host", "restoring"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

const char *resid_event_name(enum shim_resid_event ev)
{
    static const char *const names[] = {"?",     "evict", "restore", "copy-done", "cancel",
                                        "error", "free",  "create",  "ordered",   "create-host"};
    return (unsigned)ev < sizeof names / sizeof names[0] ? names[ev] : "?";
}

/* The bytes a transition's copy moves. */
static uint64_t moved_bytes(const struct resid_unit *u, enum shim_resid_event ev)
{
    return ev == SHIM_EV_EVICT || ev == SHIM_EV_RESTORE || ev == SHIM_EV_CREATE_HOST ? u->size : 0;
}

static void trace(struct resid_ctx *r, const struct resid_unit *u, enum shim_resid_state from,
                  enum shim_resid_event ev, const struct resid_cause *cause)
{
    if (!(shim.record & CONF_RECORD_MOVES) || ev == SHIM_EV_CREATE)
        return;
    struct shim_trace_transition t = {
        .unit_id = u->id,
        .bytes = moved_bytes(u, ev),
        .stream = cause ? (uint64_t)(uintptr_t)cause->stream : 0,
        .seq = atomic_load_explicit(&shim.launch_seq, memory_order_relaxed),
        .score = cause ? cause->score : 0,
        .next_use = cause ? cause->next_use : UINT64_MAX,
        .from = (uint8_t)from,
        .to = (uint8_t)u->state,
        .event = (uint8_t)ev,
        .reason = (uint8_t)(cause ? cause->reason : 0),
        .device = (uint32_t)r->device,
    };
    shim_trace_transition(&t);
}

int resid_fsm(struct resid_ctx *r, struct resid_unit *u, enum shim_resid_event ev,
              const struct resid_cause *cause)
{
    enum shim_resid_state from = u->state;
    int to = resid_fsm_next(from, ev);
    if (to < 0) {
        shim_log(SHIM_LOG_ERROR, "residency: no transition from %s on %s (unit %llx): ignored",
                 resid_state_name(from), resid_event_name(ev), (unsigned long long)u->id);
        return -1;
    }
    u->state = (enum shim_resid_state)to;
    r->transitions[from][to]++;
    if (ev == SHIM_EV_ERROR)
        r->errors++;
    if (ev == SHIM_EV_CANCEL)
        r->cancelled++;
    if (ev == SHIM_EV_COPY_DONE || ev == SHIM_EV_ORDERED)
        (*(to == SHIM_RS_HOST ? &r->evictions : &r->restores))++;
    if (ev == SHIM_EV_EVICT || ev == SHIM_EV_RESTORE)
        *(ev == SHIM_EV_EVICT ? &r->bytes_out : &r->bytes_in) += moved_bytes(u, ev);
    trace(r, u, from, ev, cause);
    shim_log(SHIM_LOG_DEBUG, "residency: unit %llx %s -> %s on %s (reason %d)",
             (unsigned long long)u->id, resid_state_name(from),
             resid_state_name((enum shim_resid_state)to), resid_event_name(ev),
             cause ? (int)cause->reason : 0);
    return 0;
}
