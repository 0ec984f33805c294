/* shim_hook_free_later.c — a program's cuMemFree that would wait for libshim's own copies.
 *
 * cuMemFree synchronises the allocation's context before it returns: it waits for all the work
 * queued there, on every stream (the simulated device does the same, tests/simgpu/
 * simgpu_alloc.c; PyTorch's caching allocator notes that cudaFree synchronises where cuMemUnmap
 * and cuMemRelease do not, c10/cuda/CUDACachingAllocator.cpp). Under libshim that work includes
 * residency's moves: a program that frees a small driver allocation (below min_managed_bytes)
 * while an eviction burst runs waits for the whole burst, which no plan counts. On the HTA
 * trace at its floor that was 26 ms at one free, 48 ms a step in all (RESULTS-real.md, run 6).
 *
 * So while a move may still run, such a free is kept for later: what the program sees is what
 * cuMemFree promises, its own queued work done (shim_streams_sync_program: each of its streams,
 * or the context when libshim cannot name them all), and the memory is freed once no move is in
 * flight (at the next allocation or free), when too much is kept (KEEP_MAX, KEEP_BYTES: then the
 * wait is paid once), and at exit. The address cannot be handed out again before that, since the
 * driver still holds it. A context destroyed or reset meanwhile takes the memory with it and
 * may give the address to a new allocation: each kept free remembers the allocation's buffer id
 * (CU_POINTER_ATTRIBUTE_BUFFER_ID, unique per allocation in the process) and is made only if
 * the address still has it. Anything that fails leaves the free to the driver at once, as
 * without libshim. */
#include "shim_hooks.h"

#include <pthread.h>

#define KEEP_MAX   4096                 /* frees kept at most */
#define KEEP_BYTES ((uint64_t)64 << 20) /* and their bytes (each below min_managed_bytes) */

struct kept {
    CUdeviceptr ptr;
    unsigned long long buffer; /* CU_POINTER_ATTRIBUTE_BUFFER_ID when kept */
    uint64_t bytes;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct kept kept[KEEP_MAX];
static size_t nkept;
static uint64_t kept_bytes;
static _Atomic size_t pending; /* nkept, read without the lock */

/* The buffer id of the allocation at p; false if the driver cannot tell. */
static bool buffer_id(CUdeviceptr p, unsigned long long *id)
{
    return shim.real.cuPointerGetAttribute &&
           shim.real.cuPointerGetAttribute(id, CU_POINTER_ATTRIBUTE_BUFFER_ID, p) == CUDA_SUCCESS;
}

bool shim_free_later(CUdeviceptr p, uint64_t bytes)
{
    unsigned long long id;
    if (!shim_active() || bytes >= shim.min_managed_bytes || !shim_resid_copies_pending() ||
        !buffer_id(p, &id))
        return false;
    pthread_mutex_lock(&lock);
    bool room = nkept < KEEP_MAX && kept_bytes + bytes <= KEEP_BYTES;
    pthread_mutex_unlock(&lock);
    /* What cuMemFree promises the program: its queued work is done when the call returns. */
    if (!room || shim_streams_sync_program() != CUDA_SUCCESS)
        return false;
    pthread_mutex_lock(&lock);
    room = nkept < KEEP_MAX && kept_bytes + bytes <= KEEP_BYTES;
    if (room) {
        kept[nkept++] = (struct kept){p, id, bytes};
        kept_bytes += bytes;
        atomic_store(&pending, nkept);
    }
    pthread_mutex_unlock(&lock);
    return room;
}

void shim_free_later_flush(bool now)
{
    if (!atomic_load(&pending) || (!now && shim_resid_copies_pending()))
        return;
    static struct kept batch[KEEP_MAX];
    static pthread_mutex_t flushing = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&flushing); /* one flush at a time: batch is shared */
    pthread_mutex_lock(&lock);
    size_t n = nkept;
    for (size_t i = 0; i < n; i++)
        batch[i] = kept[i];
    nkept = 0;
    kept_bytes = 0;
    atomic_store(&pending, 0);
    pthread_mutex_unlock(&lock);
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned long long id;
        /* gone with its context (destroyed or reset): the address may be another's now */
        bool same = buffer_id(batch[i].ptr, &id) && id == batch[i].buffer;
        if (same && shim.real.cuMemFree_v2(batch[i].ptr) != CUDA_SUCCESS)
            failed++;
        shim_resid_unmanaged_add(batch[i].bytes, false);
    }
    pthread_mutex_unlock(&flushing);
    if (failed)
        SHIM_LOG_ONCE(SHIM_LOG_WARN,
                      "%zu frees of the program's small allocations, kept until libshim's copies "
                      "ended, failed in the driver: their memory stays allocated",
                      failed);
}
