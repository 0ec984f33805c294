/* shim_hooks.h — the hooks room's seam: the intercepted driver entry points (one hook per
 * symbol of SHIM_HOOKS in core/shim_api.h, one file per API family), the table that finds a
 * hook by name or by the real function it replaces, and the helpers every hook uses.
 *
 * The hooks are the top of the shim's dependency order (hooks -> plan -> resid -> core ->
 * trace): a hook may call any room below it, and nothing below calls a hook. They are the only
 * exported functions of libshim.so besides dlsym (shim/shim.map). */
#ifndef SHIM_HOOKS_H
#define SHIM_HOOKS_H

#include "shim_plan.h"
#include "shim_resid.h"

/* Prototypes of every hook (identical to <cuda.h>'s where it declares them; <cuda.h> declares
   the per-thread variants only in per-thread mode), exported although the shim is built with
   -fvisibility=hidden. */
#pragma GCC visibility push(default)
#define SHIM_HOOK_DECL(sym, params, args) CUresult CUDAAPI sym params;
SHIM_HOOKS(SHIM_HOOK_DECL)
#undef SHIM_HOOK_DECL
#pragma GCC visibility pop

/* shim_hook_free_later.c — frees that would wait for libshim's own copies */
/* Keeps the program's cuMemFree of p (a driver allocation of bytes, unregistered, counted in the
   budget) for later when a move of residency's may still run and the free would wait for it:
   waits for the program's own queued work as cuMemFree does, and returns true (the free is
   done, for the program). False when it is not kept: the caller frees at once. */
bool shim_free_later(CUdeviceptr p, uint64_t bytes);
/* Makes the kept frees when no move of residency's is in flight, or at once with now (they then
   wait for the moves); each only if its address still holds the allocation kept. */
void shim_free_later_flush(bool now);

/* shim_hook_table.c — the dispatch both doors use */
/* The hook whose real function is fn (as shim.real holds it), or NULL. */
void *shim_hook_for_real(void *fn);
/* The hook named name, or NULL. */
void *shim_hook_by_name(const char *name);

/* Returns from the hook with an error when the real function is not available
   (the driver could not be opened, or it lacks this entry point). A driver may lack any entry
   point: outside residency's driver seam, every shim.real.X call is either in X's own hook after
   SHIM_NEED_REAL(X), or checked for NULL where it is made (shim_params.c, shim_timing.c,
   shim_ledger.c, shim_proc.c); the residency manager runs only when SHIM_RESID_NEEDS are all
   there. */
#define SHIM_NEED_REAL(sym)                                                                        \
    do {                                                                                           \
        if (atomic_load_explicit(&shim.state, memory_order_acquire) != SHIM_READY &&               \
            !shim_real_ready())                                                                    \
            return CUDA_ERROR_NOT_INITIALIZED;                                                     \
        if (!shim.real.sym)                                                                        \
            return CUDA_ERROR_NOT_FOUND;                                                           \
    } while (0)

/* Defines hook sym (parameters params, the call's arguments args, as SHIM_HOOKS lists them) as
   one that only observes: it forwards the call to the real function and then, when that returned
   CUDA_SUCCESS and the shim records, runs the statement `after` (which may read the
   parameters). The hook's name stays greppable at its definition: SHIM_HOOK_AFTER(cuX, ...). */
#define SHIM_HOOK_AFTER(sym, params, args, after)                                                  \
    CUresult CUDAAPI sym params                                                                    \
    {                                                                                              \
        SHIM_NEED_REAL(sym);                                                                       \
        CUresult rc = shim.real.sym args;                                                          \
        if (rc == CUDA_SUCCESS && shim_active()) {                                                 \
            after;                                                                                 \
        }                                                                                          \
        return rc;                                                                                 \
    }

#endif
