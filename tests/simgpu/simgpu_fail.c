/* simgpu_fail.c — fault injection (SIMGPU_FAIL, simgpu_fail), its restriction to one caller
 * (SIMGPU_FAIL_CALLER, simgpu_fail_caller) and call counting by entry name. */
#include "simgpu_internal.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

static const char *const entry_names[SIM_E_COUNT] = {
#define SIM_NAME(sym, base, ver, var) #sym,
    SIMGPU_ENTRIES(SIM_NAME)
#undef SIM_NAME
};

int sim_entry_index(const char *name)
{
    for (int i = 0; i < SIM_E_COUNT; i++)
        if (strcmp(entry_names[i], name) == 0)
            return i;
    return -1;
}

const char *sim_entry_name(int e)
{
    return entry_names[e];
}

CUresult sim_fail_error(int e)
{
    switch (e) {
    case SIM_E_cuMemAlloc_v2:
    case SIM_E_cuMemAllocAsync:
    case SIM_E_cuMemAllocAsync_ptsz:
    case SIM_E_cuMemCreate:
    case SIM_E_cuMemAllocHost_v2:
    case SIM_E_cuMemHostAlloc:
    case SIM_E_cuMemHostRegister_v2:
    case SIM_E_cuMemAddressReserve:
        return CUDA_ERROR_OUT_OF_MEMORY;
    default:
        return CUDA_ERROR_UNKNOWN;
    }
}

/* One rule "ENTRY:N[:sticky]". */
static int parse_rule(const char *rule)
{
    char name[128];
    const char *colon = strchr(rule, ':');
    if (!colon || (size_t)(colon - rule) >= sizeof name)
        return -1;
    memcpy(name, rule, (size_t)(colon - rule));
    name[colon - rule] = '\0';
    char *end;
    unsigned long n = strtoul(colon + 1, &end, 10);
    bool sticky = false;
    if (strcmp(end, ":sticky") == 0)
        sticky = true;
    else if (*end)
        return -1;
    int e = sim_entry_index(name);
    if (e < 0 || n == 0)
        return -1;
    sim.fail_at[e] = n;
    sim.fail_sticky[e] = sticky;
    return 0;
}

int sim_fail_parse(const char *spec)
{
    char *copy = strdup(spec);
    if (!copy)
        return -1;
    int rc = 0;
    char *save = NULL;
    for (char *r = strtok_r(copy, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
        if (parse_rule(r) != 0) {
            sim_diag("SIMGPU_FAIL: ignoring rule '%s' (want ENTRY:N or ENTRY:N:sticky with a "
                     "known entry point)",
                     r);
            rc = -1;
        }
    }
    free(copy);
    return rc;
}

int sim_fail_caller_set(const char *substring)
{
    size_t n = substring ? strlen(substring) : 0;
    if (n >= sizeof sim.fail_caller)
        return -1;
    memcpy(sim.fail_caller, n ? substring : "", n + 1);
    memset(sim.caller_calls, 0, sizeof sim.caller_calls);
    atomic_store(&sim.caller_filter, n > 0);
    return 0;
}

const char *sim_caller_path(const void *ret)
{
    Dl_info info;
    if (!ret || dladdr(ret, &info) == 0)
        return NULL;
    return info.dli_fname; /* the program itself: its argv[0] (glibc) */
}

int simgpu_fail_caller(const char *substring)
{
    sim_ensure_init(); /* so that the environment cannot override it later */
    pthread_mutex_lock(&sim.lock);
    int rc = sim_fail_caller_set(substring);
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

/* The count that counts (sim.calls or sim.caller_calls) holds for the entry point named entry;
   0 for a name that is none. */
static unsigned long count_of(const unsigned long *counts, const char *entry)
{
    int e = entry ? sim_entry_index(entry) : -1;
    if (e < 0)
        return 0;
    pthread_mutex_lock(&sim.lock);
    unsigned long n = counts[e];
    pthread_mutex_unlock(&sim.lock);
    return n;
}

unsigned long simgpu_caller_calls(const char *entry)
{
    return count_of(sim.caller_calls, entry);
}

int simgpu_fail(const char *entry, unsigned long nth, int sticky)
{
    int e = entry ? sim_entry_index(entry) : -1;
    if (e < 0)
        return -1;
    pthread_mutex_lock(&sim.lock);
    /* nth counts from the next call (the next matching one under a caller filter) */
    unsigned long now = sim.fail_caller[0] ? sim.caller_calls[e] : sim.calls[e];
    sim.fail_at[e] = nth ? now + nth : 0;
    sim.fail_sticky[e] = sticky != 0;
    pthread_mutex_unlock(&sim.lock);
    return 0;
}

unsigned long simgpu_calls(const char *entry)
{
    return count_of(sim.calls, entry);
}
