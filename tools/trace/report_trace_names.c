/* report_trace_names.c — names a person can recognise for the allocations of a trace, from what
 * libshim sees of each: its size, its role in the training step (from its lifetime against the
 * steps), and the kernels of the first and the last launch that touched it. Every report that
 * lists allocations (allocs, summary's top allocations, moves, the HTML tables, memviz's frames)
 * takes its names from here. */
#include "report_trace.h"

#include "base_order.h"

#include <stdio.h>
#include <string.h>

/* Whether a was made, and freed, before the first step began (the warm-up). */
static int warmup_only(const report_alloc *a, const report_stats *s)
{
    uint64_t first = s->steps[0].t_start;
    return a->t_alloc < first && a->freed && a->t_free < first;
}

/* Contract in report_trace.h. */
report_alloc_role report_alloc_role_of(const report_alloc *a, const report_stats *s)
{
    if (!report_alloc_on_device(a->kind))
        return REPORT_ROLE_HOST;
    if (a->step >= 0) /* made in a step: gone by its end, or kept for later steps */
        return a->freed && a->free_step == a->step ? REPORT_ROLE_TEMP : REPORT_ROLE_KEPT;
    if (s->nsteps == 0 || a->t_alloc >= s->steps[0].t_start) /* no steps, or after them */
        return a->freed ? REPORT_ROLE_TEMP : REPORT_ROLE_STATE;
    return warmup_only(a, s) ? REPORT_ROLE_WARMUP : REPORT_ROLE_STATE;
}

/* Contract in report_trace.h. */
const char *report_alloc_role_name(report_alloc_role r)
{
    static const char *const names[] = {"weights/state", "kept across steps", "activation/temp",
                                        "warm-up temp", "pinned host"};
    return (unsigned)r < sizeof names / sizeof names[0] ? names[r] : "?";
}

/* Writes bytes as "64.0 MiB" (KiB, MiB or GiB, whichever reads best). */
static int size_words(char *buf, size_t n, uint64_t bytes)
{
    if (bytes >= (1ull << 30))
        return snprintf(buf, n, "%.2f GiB", (double)bytes / (double)(1ull << 30));
    if (bytes >= (1ull << 20))
        return snprintf(buf, n, "%.1f MiB", (double)bytes / (double)(1ull << 20));
    if (bytes >= 1024)
        return snprintf(buf, n, "%.1f KiB", (double)bytes / 1024.0);
    return snprintf(buf, n, "%llu B", (unsigned long long)bytes);
}

/* A kernel's name, cut to REPORT_KERNEL_SHORT bytes with "..." (C++ names run long). */
#define REPORT_KERNEL_SHORT 40
static void kernel_short(char *buf, size_t n, const char *name)
{
    size_t len = strlen(name);
    if (len <= REPORT_KERNEL_SHORT)
        snprintf(buf, n, "%s", name);
    else
        snprintf(buf, n, "%.*s...", REPORT_KERNEL_SHORT - 3, name);
}

/* Contract in report_trace.h. */
const char *report_alloc_name(const report_alloc *a, const report_stats *s, char *buf, size_t n)
{
    char size[32], first[REPORT_KERNEL_SHORT + 1], last[REPORT_KERNEL_SHORT + 1];
    size_words(size, sizeof size, a->bytes);
    const char *role = report_alloc_role_name(report_alloc_role_of(a, s));
    if (a->first_kernel == NULL) {
        snprintf(buf, n, "%s %s (no kernel used it)", size, role);
        return buf;
    }
    kernel_short(first, sizeof first, a->first_kernel);
    kernel_short(last, sizeof last, a->last_kernel);
    if (strcmp(a->first_kernel, a->last_kernel) == 0)
        snprintf(buf, n, "%s %s (%s)", size, role, first);
    else
        snprintf(buf, n, "%s %s (%s .. %s)", size, role, first, last);
    return buf;
}

/* Contract in report_trace.h. */
const report_alloc *report_alloc_find(const report_stats *s, uint64_t id)
{
    /* allocations are in the order they were made, ids grow with it in libshim's traces: a
       binary search first, a walk when the ids are out of order (another writer) */
    size_t lo = 0;
    BASE_BSEARCH(lo, s->nallocs, mid, s->allocs[mid].id < id);
    if (lo < s->nallocs && s->allocs[lo].id == id)
        return &s->allocs[lo];
    for (size_t i = 0; i < s->nallocs; i++)
        if (s->allocs[i].id == id)
            return &s->allocs[i];
    return NULL;
}
