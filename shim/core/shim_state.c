/* shim_state.c — the shim's one global context and its lifecycle: the driver is resolved at the
 * first hook call (SHIM_UNINIT -> SHIM_INITIALISING -> SHIM_READY, or SHIM_PASSTHROUGH /
 * SHIM_FAILED). What READY needs beyond the resolved driver (the trace, fork and exit handling)
 * is shim_main.c's, handed over by shim_state_configure before any hook runs. */
#include "shim_core.h"

struct shim_ctx shim = {.steps = SHIM_STEPS_INIT(&shim.launch_seq)};
__thread int shim_inside __attribute__((tls_model("initial-exec")));

static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;
static bool config_ok;
static void (*on_ready)(void);

void shim_state_configure(bool ok, void (*ready)(void))
{
    config_ok = ok;
    on_ready = ready;
}

static void resolve(void)
{
    atomic_store(&shim.state, SHIM_INITIALISING);
    if (shim_real_resolve() != 0) {
        atomic_store(&shim.state, SHIM_FAILED);
        return;
    }
    if (!config_ok || !on_ready || shim.mode == CONF_MODE_OFF) {
        atomic_store(&shim.state, SHIM_PASSTHROUGH);
        return;
    }
    on_ready();
    atomic_store_explicit(&shim.state, SHIM_READY, memory_order_release);
}

bool shim_active_slow(void)
{
    int s = atomic_load_explicit(&shim.state, memory_order_acquire);
    if (s == SHIM_UNINIT || s == SHIM_INITIALISING) {
        /* resolution calls dlopen: nothing of ours is re-entered from there */
        shim_inside++;
        pthread_once(&resolve_once, resolve);
        shim_inside--;
        s = atomic_load_explicit(&shim.state, memory_order_acquire);
    }
    return s == SHIM_READY && !shim_inside;
}

bool shim_real_ready(void)
{
    shim_active_slow();
    int s = atomic_load_explicit(&shim.state, memory_order_acquire);
    return s == SHIM_READY || s == SHIM_PASSTHROUGH;
}

uint64_t shim_new_id(void)
{
    return atomic_fetch_add_explicit(&shim.next_id, 1, memory_order_relaxed) + 1;
}
