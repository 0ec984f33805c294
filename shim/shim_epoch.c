/* shim_epoch.c — epoch-based reclamation: readers never lock; retired memory is freed once no
 * reader can hold it.
 *
 * A reader publishes the global epoch it started in (0 when not reading). A
 * retired block is stamped with the epoch at retirement; the epoch then
 * advances, and the block is freed once every active reader started after it.
 * Per-thread slots are registered once per thread (a malloc, off the fast
 * path) and recycled when threads exit. */
#include "shim_internal.h"

#include <stdlib.h>

struct epoch_slot {
    _Atomic uint64_t local; /* epoch the thread's current read started in; 0: not reading */
    _Atomic int claimed;
    struct epoch_slot *next;
};

struct retired {
    void *p;
    uint64_t epoch;
};

static _Atomic uint64_t global_epoch = 1;
static struct epoch_slot *_Atomic slots;
static __thread struct epoch_slot *mine;
static pthread_key_t slot_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static pthread_mutex_t retire_lock = PTHREAD_MUTEX_INITIALIZER;
static struct retired *retired; /* protected by retire_lock */
static size_t nretired, retired_cap;

static void release_slot(void *p)
{
    struct epoch_slot *s = p;
    atomic_store(&s->local, 0);
    atomic_store(&s->claimed, 0);
}

static void make_key(void)
{
    pthread_key_create(&slot_key, release_slot);
}

static struct epoch_slot *claim_slot(void)
{
    pthread_once(&key_once, make_key);
    for (struct epoch_slot *s = atomic_load(&slots); s; s = s->next) {
        int free_slot = 0;
        if (atomic_compare_exchange_strong(&s->claimed, &free_slot, 1))
            return s;
    }
    struct epoch_slot *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    atomic_store(&s->claimed, 1);
    struct epoch_slot *head = atomic_load(&slots);
    do
        s->next = head;
    while (!atomic_compare_exchange_weak(&slots, &head, s));
    return s;
}

void shim_epoch_enter(void)
{
    if (!mine) {
        mine = claim_slot();
        if (!mine)
            return; /* then retire() never frees: safe, leaks instead */
        pthread_setspecific(slot_key, mine);
    }
    atomic_store(&mine->local, atomic_load(&global_epoch));
    atomic_thread_fence(memory_order_seq_cst);
}

void shim_epoch_exit(void)
{
    if (mine)
        atomic_store_explicit(&mine->local, 0, memory_order_release);
}

static uint64_t oldest_reader(void)
{
    uint64_t min = UINT64_MAX;
    for (struct epoch_slot *s = atomic_load(&slots); s; s = s->next) {
        uint64_t e = atomic_load(&s->local);
        if (e && e < min)
            min = e;
    }
    return min;
}

void shim_epoch_retire(void *p)
{
    pthread_mutex_lock(&retire_lock);
    if (nretired == retired_cap) {
        size_t cap = retired_cap ? 2 * retired_cap : 64;
        struct retired *v = realloc(retired, cap * sizeof *v);
        if (!v) {
            pthread_mutex_unlock(&retire_lock);
            return; /* leak rather than free too early */
        }
        retired = v;
        retired_cap = cap;
    }
    retired[nretired++] = (struct retired){p, atomic_fetch_add(&global_epoch, 1)};
    atomic_thread_fence(memory_order_seq_cst);
    uint64_t min = oldest_reader();
    size_t keep = 0;
    for (size_t i = 0; i < nretired; i++) {
        if (retired[i].epoch < min)
            free(retired[i].p);
        else
            retired[keep++] = retired[i];
    }
    nretired = keep;
    pthread_mutex_unlock(&retire_lock);
}
