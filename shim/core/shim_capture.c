/* shim_capture.c — which streams are being captured into graphs (no timing events there).
 *
 * A capture is rare and short-lived: a small table under a mutex, with an atomic
 * count so that the launch path only looks when some capture is active. The
 * per-thread default stream of every thread shares one key (documented limit). */
#include "shim_core.h"

#define MAX_CAPTURES 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t capturing[MAX_CAPTURES]; /* protected by lock */
static _Atomic int count;

void shim_capture_begin(CUstream stream, bool per_thread)
{
    uint64_t id = shim_stream_id(stream, per_thread);
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_CAPTURES; i++) {
        if (!capturing[i]) {
            capturing[i] = id + 1;
            atomic_fetch_add(&count, 1);
            break;
        }
    }
    pthread_mutex_unlock(&lock);
}

void shim_capture_end(CUstream stream, bool per_thread)
{
    uint64_t id = shim_stream_id(stream, per_thread);
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_CAPTURES; i++) {
        if (capturing[i] == id + 1) {
            capturing[i] = 0;
            atomic_fetch_sub(&count, 1);
            break;
        }
    }
    pthread_mutex_unlock(&lock);
}

bool shim_capture_active(CUstream stream, bool per_thread)
{
    if (atomic_load_explicit(&count, memory_order_relaxed) == 0)
        return false;
    uint64_t id = shim_stream_id(stream, per_thread);
    bool found = false;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_CAPTURES && !found; i++)
        found = capturing[i] == id + 1;
    pthread_mutex_unlock(&lock);
    return found;
}
