/* shim_hook_table.c — the hooks by id, generated from SHIM_HOOKS: what door 2 (dlsym by name)
 * and door 3 (cuGetProcAddress by the exact real pointer) answer with. */
#include "shim_hooks.h"

#include <string.h>

static const char *const hook_names[SHIM_HOOK_COUNT] = {
#define SHIM_HOOK_NAME(sym, params, args) #sym,
    SHIM_HOOKS(SHIM_HOOK_NAME)
#undef SHIM_HOOK_NAME
};

static void *const hook_fns[SHIM_HOOK_COUNT] = {
#define SHIM_HOOK_PTR(sym, params, args) (void *)&sym,
    SHIM_HOOKS(SHIM_HOOK_PTR)
#undef SHIM_HOOK_PTR
};

void *shim_hook_for_real(void *fn)
{
    if (!fn)
        return NULL;
    /* shim.real holds the hooked functions first, in hook id order (core/shim_api.h). */
    void **slots = (void **)&shim.real;
    for (int i = 0; i < SHIM_HOOK_COUNT; i++)
        if (slots[i] == fn)
            return hook_fns[i];
    return NULL;
}

void *shim_hook_by_name(const char *name)
{
    if (name[0] != 'c' || name[1] != 'u')
        return NULL;
    for (int i = 0; i < SHIM_HOOK_COUNT; i++)
        if (strcmp(hook_names[i], name) == 0)
            return hook_fns[i];
    return NULL;
}
