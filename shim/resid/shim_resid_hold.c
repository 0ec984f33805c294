/* shim_resid_hold.c — managed allocations that must never move again, and the range a pointer
 * query reports for a managed pointer.
 *
 * An allocation whose memory or address range the program hands to someone libshim cannot
 * follow (another process through IPC or a shareable handle, the program itself through a
 * retained physical handle, a raw range user such as NCCL's buffer registration) must stay
 * where it is for the rest of its life: a move would remap its range onto other physical
 * memory behind that user's back. Such a unit is brought to the device first (waiting for any
 * copy in flight, on the host: the user is not ordered after libshim's streams), then held:
 * no policy, plan or search for room picks it again (resid_unmovable). A hold is taken before
 * the real call and undone if the call fails, so that an export the driver refused leaves the
 * allocation movable. A small allocation's slab is held as a whole (its chunk is what moves). */
#include "shim_resid_front.h"

#include <time.h>

/* The unit holding managed allocation id and, for a small one, its member (lock held). */
static struct resid_unit *unit_of(struct resid_ctx *r, uint64_t id, struct resid_member **member)
{
    *member = NULL;
    if (!(id & SHIM_MANAGED_ID_TAG))
        return NULL;
    struct resid_unit *u = resid_find(r, id);
    if (u)
        return u;
    *member = resid_member_find(r, id);
    return *member ? (*member)->unit : NULL;
}

/* The program's view of allocation id in unit u: its range and its bytes. */
static void range_of(struct resid_ctx *r, const struct resid_unit *u, const struct resid_member *m,
                     uint64_t id, struct shim_managed_range *out)
{
    out->id = id;
    out->device = r->device;
    if (m) {
        out->base = u->va + (uint64_t)m->first * RESID_SLAB_BLOCK;
        out->size = (uint64_t)m->blocks * RESID_SLAB_BLOCK;
    } else { /* the reservation, as RANGE_SIZE reports for a VMM range (cuda.h) */
        out->base = u->va;
        out->size = u->mapped;
    }
}

/* A managed allocation found by an address, with its manager locked. */
struct found {
    struct resid_ctx *r;
    struct resid_unit *u;
    struct resid_member *m; /* its member, for a small allocation */
    uint64_t id;            /* the allocation's id */
};

/* Finds the managed allocation holding p and locks its manager: true with *f filled, or false
   (nothing locked) when p is not managed. */
static bool lock_found(CUdeviceptr p, struct found *f)
{
    f->id = shim_registry_find(p);
    if (!(f->id & SHIM_MANAGED_ID_TAG) || !(f->r = resid_for_id(f->id)))
        return false;
    pthread_mutex_lock(&f->r->lock);
    if ((f->u = unit_of(f->r, f->id, &f->m)))
        return true;
    pthread_mutex_unlock(&f->r->lock);
    return false;
}

bool shim_resid_range(CUdeviceptr p, struct shim_managed_range *range)
{
    struct found f;
    if (!lock_found(p, &f))
        return false;
    range_of(f.r, f.u, f.m, f.id, range);
    pthread_mutex_unlock(&f.r->lock);
    return true;
}

/* Waits on the host until the copies that made u's data, or still read it, are done (lock
   held; dropped meanwhile: u is pinned by the caller). */
static void wait_copies(struct resid_ctx *r, struct resid_unit *u)
{
    struct resid_fence *f[2] = {resid_fence_ref(u->ready), resid_fence_ref(u->reading)};
    pthread_mutex_unlock(&r->lock);
    for (int i = 0; i < 2; i++)
        if (f[i] && r->drv->event_sync(f[i]->event) != CUDA_SUCCESS)
            SHIM_LOG_ONCE(SHIM_LOG_WARN, "pin: waiting for a copy of a pinned range failed");
    pthread_mutex_lock(&r->lock);
    for (int i = 0; i < 2; i++)
        resid_fence_drop(r, f[i]);
}

#define READER_PAUSE_NS     20000     /* first pause for an operation reading through the host */
#define READER_PAUSE_MAX_NS 2000000   /* up to this */
#define READER_WAIT_MAX_NS  200000000 /* in all, at most */

/* Waits, bounded, while operations in progress on other threads read u through its host
   mapping (lock held; dropped meanwhile: u is pinned by the caller, so it stays on the host):
   they are between their residency check and their submission, which nothing here delays,
   and u cannot be restored before they are submitted (resid_restore). */
static void wait_host_readers(struct resid_ctx *r, struct resid_unit *u)
{
    uint64_t waited = 0;
    for (uint64_t ns = READER_PAUSE_NS;
         u->state == SHIM_RS_HOST && atomic_load_explicit(&u->host_readers, memory_order_acquire) &&
                 waited<READER_WAIT_MAX_NS; ns = ns * 2> READER_PAUSE_MAX_NS
             ? READER_PAUSE_MAX_NS
             : ns * 2) {
        pthread_mutex_unlock(&r->lock);
        nanosleep(&(struct timespec){0, (long)ns}, NULL);
        pthread_mutex_lock(&r->lock);
        waited += ns;
    }
}

/* Brings u to the device (lock held, u pinned): within the budget if room can be made, above
   it otherwise (a held unit must be on the device, whatever the budget). 0, or -1. */
static int settle(struct resid_ctx *r, struct resid_unit *u)
{
    if (!resid_wait_remap(r, u))
        return -1;
    if (!resid_unstick(r, u))
        return -1;
    if (u->state == SHIM_RS_EVICTING && u->move)
        resid_cancel_eviction(r, u, NULL);
    wait_host_readers(r, u);
    struct resid_cause why = {SHIM_REASON_DEMAND, NULL, 0, UINT64_MAX};
    if (u->state == SHIM_RS_HOST && resid_restore(r, u, &why) != 0 && u->state == SHIM_RS_HOST) {
        r->over_budget = true;
        resid_restore(r, u, &why);
        r->over_budget = false;
    }
    if (u->state == SHIM_RS_RESTORING)
        resid_wait_move(r, u, SHIM_REASON_DEMAND);
    if (u->state != SHIM_RS_DEVICE || u->stuck)
        return -1;
    wait_copies(r, u);
    return u->state == SHIM_RS_DEVICE ? 0 : -1;
}

/* Takes a hold on u for h (lock held); CUDA_SUCCESS, or the error the program gets. */
static CUresult hold_unit(struct resid_ctx *r, struct resid_unit *u, struct resid_member *m,
                          uint64_t id, struct shim_hold *h)
{
    struct shim_managed_range range;
    range_of(r, u, m, id, &range);
    h->unit_id = u->id;
    h->alloc_id = m ? m->id : u->id;
    h->addr = range.base;
    h->bytes = m ? range.size : u->size;
    h->from = (uint32_t)u->state;
    atomic_fetch_add_explicit(&u->pins, 1, memory_order_relaxed);
    int ok = settle(r, u);
    if (ok == 0)
        u->held++;
    atomic_fetch_sub_explicit(&u->pins, 1, memory_order_release);
    if (ok != 0) {
        SHIM_LOG_ONCE(SHIM_LOG_ERROR, "pin: an exported or shared managed allocation could not "
                                      "be brought to the device: the call fails");
        return r->last_error ? r->last_error : CUDA_ERROR_OUT_OF_MEMORY;
    }
    h->active = true;
    return CUDA_SUCCESS;
}

bool shim_resid_hold(CUdeviceptr p, enum shim_pin_reason why, struct shim_hold *h, CUresult *rc)
{
    *h = (struct shim_hold){.reason = why};
    struct found f;
    if (!lock_found(p, &f))
        return false;
    *rc = hold_unit(f.r, f.u, f.m, f.id, h);
    pthread_mutex_unlock(&f.r->lock);
    return true;
}

struct by_handle {
    CUmemGenericAllocationHandle handle;
    struct resid_unit *found;
};

static void match_handle(struct resid_ctx *r, struct resid_unit *u, void *arg)
{
    (void)r;
    struct by_handle *b = arg;
    for (uint32_t i = 0; !b->found && i < u->n; i++)
        if (u->backing[i] && u->backing[i]->handle == b->handle)
            b->found = u;
}

bool shim_resid_hold_handle(CUmemGenericAllocationHandle handle, enum shim_pin_reason why,
                            struct shim_hold *h, CUresult *rc)
{
    *h = (struct shim_hold){.reason = why};
    struct resid_ctx *r;
    for (uint32_t k = 0; handle && (r = resid_started_at(k)) != NULL; k++) { /* each manager */
        pthread_mutex_lock(&r->lock);
        struct by_handle b = {handle, NULL};
        resid_each(r, match_handle, &b); /* rare: a linear search is fine */
        if (b.found) /* a slab's chunk: the slab itself stands for its members */
            *rc = hold_unit(r, b.found, NULL, b.found->id, h);
        pthread_mutex_unlock(&r->lock);
        if (b.found)
            return true;
    }
    return false;
}

static const char *reason_name(enum shim_pin_reason r)
{
    switch (r) {
    case SHIM_PIN_IPC:
        return "cuIpcGetMemHandle";
    case SHIM_PIN_EXPORT:
        return "cuMemExportToShareableHandle";
    case SHIM_PIN_RETAIN:
        return "cuMemRetainAllocationHandle";
    default:
        return "cuMemGetAddressRange";
    }
}

void shim_resid_hold_done(struct shim_hold *h, bool ok)
{
    if (!h->active)
        return;
    h->active = false;
    bool first = false;
    struct resid_ctx *r = resid_for_id(h->unit_id);
    if (!r) /* the program freed it meanwhile */
        return;
    pthread_mutex_lock(&r->lock);
    struct resid_unit *u = resid_find(r, h->unit_id); /* the program may have freed it meanwhile */
    if (u && !ok)
        u->held--;
    if (u && ok) {
        uint8_t bit = (uint8_t)(1u << h->reason);
        first = !(u->held_why & bit);
        if (!u->held_why) {
            r->held_units++;
            r->held_bytes += u->mapped;
        }
        u->held_why |= bit;
    }
    pthread_mutex_unlock(&r->lock);
    if (!first)
        return;
    if (shim.record & CONF_RECORD_MOVES)
        shim_trace_pin(h->alloc_id, h->unit_id, h->addr, h->bytes, h->reason, h->from);
    shim_log(SHIM_LOG_INFO,
             "pin: allocation %llx (%llu bytes at %llx) stays on the device for "
             "good: %s hands its memory to a user libshim cannot follow",
             (unsigned long long)h->alloc_id, (unsigned long long)h->bytes,
             (unsigned long long)h->addr, reason_name(h->reason));
}
