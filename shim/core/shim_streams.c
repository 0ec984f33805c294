/* shim_streams.c — the program's own streams, so that libshim can wait for the program's work
 * without waiting for its own copies.
 *
 * A managed allocation is freed by libshim, not by cuMemFree, yet the program must see what
 * cuMemFree does: it returns once no queued work can use the range, and in practice it waits for
 * the whole device (PyTorch's caching allocator exists partly for this: its comments and the
 * CUDA semantics notes call cudaFree synchronising; the simulated device does the same in
 * cuMemFree_v2). A context synchronisation would do it, but it also waits for the residency
 * manager's copy streams: every free would wait for whatever eviction or prefetch of another
 * allocation is in flight, which native code never waits for (measured on train_sim in exact
 * mode at 75% of the peak: 51.0 ms per step against a plan of 33.4 ms).
 *
 * So the program's streams are known by their creation (cuStreamCreate and
 * cuStreamCreateWithPriority pass through here; libshim creates its own through the real
 * functions, so they are never listed), and "the program is idle" means: the legacy stream,
 * the calling thread's per-thread stream when that thread used one, and every listed stream
 * have finished. Where that cannot be told, it falls back to the context synchronisation, the
 * safe superset: the per-thread stream of another thread (it has no name that reaches it), a
 * destroyed stream (cuStreamDestroy returns before its work ends; after the next full wait that
 * work is known done), more streams than the table holds, or a stream the driver refuses. */
#include "shim_core.h"

#define MAX_PROGRAM_STREAMS 512

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static CUstream listed[MAX_PROGRAM_STREAMS]; /* created and not destroyed (under lock) */
static int nlisted;                          /* under lock */
static bool overflow;                        /* a creation did not fit (under lock, for good) */
static _Atomic bool retired;                 /* a destroyed stream's work may still run */
static _Atomic uint64_t per_thread_user;     /* the one thread using its per-thread stream */
static _Atomic bool per_thread_many;         /* more than one thread did */
static _Atomic uint64_t thread_count;
static __thread uint64_t thread_no; /* 0 until this thread used its per-thread stream */

void shim_streams_created(CUstream s)
{
    pthread_rwlock_wrlock(&lock);
    if (nlisted < MAX_PROGRAM_STREAMS)
        listed[nlisted++] = s;
    else
        overflow = true;
    pthread_rwlock_unlock(&lock);
}

void shim_streams_destroyed(CUstream s)
{
    pthread_rwlock_wrlock(&lock);
    for (int i = 0; i < nlisted; i++) {
        if (listed[i] == s) {
            listed[i] = listed[--nlisted];
            break;
        }
    }
    atomic_store(&retired, true);
    pthread_rwlock_unlock(&lock);
}

void shim_streams_note_per_thread(void)
{
    if (thread_no)
        return;
    thread_no = atomic_fetch_add(&thread_count, 1) + 1;
    uint64_t none = 0;
    if (!atomic_compare_exchange_strong(&per_thread_user, &none, thread_no))
        atomic_store(&per_thread_many, true);
}

/* Synchronises s; CUDA_SUCCESS, or the driver's error. A stream being captured runs nothing
   (and a synchronisation would invalidate its capture): it is skipped. */
static CUresult sync_one(CUstream s, bool per_thread)
{
    if (shim_capture_active(s, per_thread))
        return CUDA_SUCCESS;
    return shim.real.cuStreamSynchronize(s);
}

/* Waits for the legacy stream, this thread's per-thread stream and the listed streams (read lock
   held); false if one of them could not be waited for (*rc holds the error). */
static bool sync_listed(CUresult *rc)
{
    *rc = sync_one(NULL, false);
    if (*rc == CUDA_SUCCESS && thread_no)
        *rc = sync_one(CU_STREAM_PER_THREAD, true);
    for (int i = 0; *rc == CUDA_SUCCESS && i < nlisted; i++)
        *rc = sync_one(listed[i], false);
    return *rc == CUDA_SUCCESS;
}

CUresult shim_streams_sync_program(void)
{
    if (!shim.real.cuCtxSynchronize)
        return CUDA_ERROR_NOT_SUPPORTED;
    CUresult rc = CUDA_SUCCESS;
    bool named =
        shim.real.cuStreamSynchronize && !atomic_load(&retired) && !atomic_load(&per_thread_many);
    uint64_t user = atomic_load(&per_thread_user);
    named = named && (!user || user == thread_no);
    if (named) {
        pthread_rwlock_rdlock(&lock);
        named = !overflow && sync_listed(&rc);
        pthread_rwlock_unlock(&lock);
        if (named)
            return CUDA_SUCCESS;
    }
    /* The safe superset: a sticky error is seen here again, as the caller expects. */
    bool was_retired = atomic_exchange(&retired, false);
    rc = shim.real.cuCtxSynchronize();
    if (rc != CUDA_SUCCESS && was_retired)
        atomic_store(&retired, true);
    return rc;
}
