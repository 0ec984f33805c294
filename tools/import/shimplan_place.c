/* tools/import/shimplan_place.c — shim-plan's lines and JSON fields of the three placements
 * (shimplan_place.h). Printed only when host placement is allowed, so that the output of a run
 * without it stays what it was, line for line. */
#include "shimplan_place.h"

#include <stdio.h>
#include <stdlib.h>

static double gib(uint64_t b)
{
    return (double)b / (1024.0 * 1024.0 * 1024.0);
}

/* The figures of one plan. */
typedef struct placed {
    uint64_t device_bytes; /* allocations neither moved nor on the host */
    size_t moved;          /* allocations with at least one entry */
    uint64_t moved_bytes;  /* copied per step, both ways */
    size_t host;
    uint64_t host_bytes, read_bytes;
    double read_us;
} placed;

static placed count(const plan_model *m, const plan *p, const plan_stats *st)
{
    plan_placement c;
    plan_placement_count(m, p, &c); /* out of memory: zeros, as before */
    return (placed){.device_bytes = c.device_bytes,
                    .moved = c.moved,
                    .moved_bytes = st->bytes_to_host + st->bytes_to_device,
                    .host = st->nhost,
                    .host_bytes = st->host_bytes,
                    .read_bytes = st->bytes_read,
                    .read_us = st->read_us};
}

/* libshim's host_resident holds at most this many sizes (conf/conf.h, CONF_MAX_SIZES). */
#define LIBSHIM_SIZES 16

/* The distinct sizes (each allocation's own bytes, as the program asks for it: plan_alloc's
   moved) of p's host-resident allocations into sizes[0..*n) (at most LIBSHIM_SIZES; *more set when
   there are others), and how many of m's allocations have one of them: libshim keeps every
   allocation of a listed size on the host, which may be more than the plan keeps there. */
static size_t host_sizes(const plan_model *m, const plan *p, uint64_t *sizes, size_t *n, bool *more)
{
    *n = 0;
    *more = false;
    for (size_t i = 0; i < p->nhost; i++) {
        uint64_t s = m->allocs[p->host[i]].moved;
        size_t k = 0;
        while (k < *n && sizes[k] != s)
            k++;
        if (k == *n && *n < LIBSHIM_SIZES)
            sizes[(*n)++] = s;
        else if (k == *n)
            *more = true;
    }
    size_t matches = 0;
    for (size_t x = 0; x < m->nallocs; x++)
        for (size_t k = 0; k < *n; k++)
            if (m->allocs[x].moved == sizes[k]) {
                matches++;
                break;
            }
    return matches;
}

/* p carried out as host_resident carries it out: every allocation of one of sizes[0..n) on the
   host (those the plan moves lose their entries), simulated for budget into *st. PLAN_OK, or
   the simulator's error (PLAN_ERR_INVALID: one of them is read whole, which no host placement
   of the planner's holds). */
static plan_err as_sized(const plan_model *m, const plan *p, const uint64_t *sizes, size_t n,
                         uint64_t budget, plan_stats *st)
{
    bool *on = calloc(m->nallocs + 1, sizeof *on);
    plan q;
    plan_init(&q);
    plan_err e = on ? PLAN_OK : PLAN_ERR_NOMEM;
    for (size_t x = 0; !e && x < m->nallocs; x++)
        for (size_t k = 0; k < n && !on[x]; k++)
            on[x] = m->allocs[x].moved == sizes[k];
    for (size_t x = 0; !e && x < m->nallocs; x++)
        if (on[x])
            e = plan_push_host(&q, (uint32_t)x);
    for (size_t i = 0; !e && i < p->n; i++)
        if (!on[p->entries[i].alloc])
            e = plan_push(&q, p->entries[i]);
    if (!e)
        e = plan_simulate(m, &q, budget, st);
    plan_free(&q);
    free(on);
    return e;
}

/* The line that carries the plan's host placement out under libshim (host_resident), or nothing
   when the plan keeps nothing on the host; where the sizes match more allocations than the plan
   keeps there, what the step is when libshim keeps them all (as_sized): what a run with that
   setting is to be compared with. */
static void libshim_line(const plan_model *m, const plan *p, const plan_stats *st, uint64_t budget,
                         bool json)
{
    uint64_t sizes[LIBSHIM_SIZES];
    size_t n;
    bool more;
    size_t matches = host_sizes(m, p, sizes, &n, &more);
    plan_stats all = {0};
    plan_err e = matches > p->nhost ? as_sized(m, p, sizes, n, budget, &all) : PLAN_OK;
    bool extra = matches > p->nhost;
    if (json) {
        printf(", \"host_resident_sizes\": [");
        for (size_t k = 0; k < n; k++)
            printf("%s%llu", k ? ", " : "", (unsigned long long)sizes[k]);
        printf("], \"host_resident_size_matches\": %zu", matches);
        if (extra && !e)
            printf(", \"host_resident_as_sized\": {\"allocs\": %zu, \"feasible\": %s, "
                   "\"step_us\": %.3f, \"stall_us\": %.3f, \"host_read_bytes_per_step\": %llu}",
                   all.nhost, all.feasible ? "true" : "false", all.step_us, all.stall_us,
                   (unsigned long long)all.bytes_read);
        else if (extra)
            printf(", \"host_resident_as_sized\": null");
        return;
    }
    if (!n)
        return;
    printf("libshim: host_resident = \"");
    for (size_t k = 0; k < n; k++)
        printf("%s%llu", k ? "," : "", (unsigned long long)sizes[k]);
    printf("\" (or SHIM_HOST_RESIDENT) keeps allocations of these sizes on the host: %zu in this "
           "model%s%s\n",
           matches, extra ? ", more than the plan keeps there" : "",
           more ? "; more sizes than libshim's 16 (the rest move or stay on the device)" : "");
    if (extra && !e)
        printf("libshim: with all %zu on the host the step is %.3f us, %.3fx the plan's (%s): what "
               "a run with that setting does; keeping the plan's alone needs host_resident by "
               "allocation, not by size\n",
               all.nhost, all.step_us, st->step_us > 0 ? all.step_us / st->step_us : 1.0,
               all.feasible ? "feasible" : "not feasible");
    else if (extra)
        printf("libshim: with all %zu on the host the step cannot be predicted: %s\n", matches,
               e == PLAN_ERR_INVALID ? "one of them is read whole (only an allocation read "
                                       "sparsely stays on the host in a plan)"
                                     : plan_strerror(e));
}

void shimplan_place_print(const plan_model *m, const plan *p, const plan_stats *st, uint64_t peak,
                          uint64_t budget, bool json)
{
    placed r = count(m, p, st);
    double share = peak ? 100.0 * (double)r.host_bytes / (double)peak : 0;
    if (json) {
        printf(", \"host_placement\": true, \"device_resident_bytes\": %llu, \"moved_allocs\": "
               "%zu, \"moved_bytes_per_step\": %llu, \"host_resident_allocs\": %zu, "
               "\"host_resident_bytes\": %llu, \"host_resident_share\": %.3f, "
               "\"host_read_bytes_per_step\": %llu, \"host_read_us\": %.3f",
               (unsigned long long)r.device_bytes, r.moved, (unsigned long long)r.moved_bytes,
               r.host, (unsigned long long)r.host_bytes, share / 100.0,
               (unsigned long long)r.read_bytes, r.read_us);
        libshim_line(m, p, st, budget, json);
        return;
    }
    printf("placement: device-resident %.2f GiB summed over the allocations never moved "
           "(peak_bytes: what is live at once); moved on a schedule %zu allocations, %.2f GiB "
           "per step; host-resident %zu allocations, %.2f GiB (%.1f%% of the peak), %.2f GiB "
           "read through the link per step\n",
           gib(r.device_bytes), r.moved, gib(r.moved_bytes), r.host, gib(r.host_bytes), share,
           gib(r.read_bytes));
    printf("device_resident_bytes: %llu\nmoved_allocs: %zu\nmoved_bytes_per_step: %llu\n"
           "host_resident_allocs: %zu\nhost_resident_bytes: %llu\nhost_read_bytes_per_step: "
           "%llu\nhost_read_us: %.3f\n",
           (unsigned long long)r.device_bytes, r.moved, (unsigned long long)r.moved_bytes, r.host,
           (unsigned long long)r.host_bytes, (unsigned long long)r.read_bytes, r.read_us);
    libshim_line(m, p, st, budget, json);
}

void shimplan_place_proposals_head(void)
{
    printf("proposals_placement: budget_bytes host_resident_bytes host_resident_allocs "
           "moved_bytes_per_step host_read_bytes_per_step\n");
}

void shimplan_place_proposal(const plan_proposal *pp, bool json)
{
    const plan_stats *s = &pp->stats;
    unsigned long long moved = (unsigned long long)(s->bytes_to_host + s->bytes_to_device);
    if (json)
        printf(", \"host_resident_bytes\": %llu, \"host_resident_allocs\": %zu, "
               "\"moved_bytes_per_step\": %llu, \"host_read_bytes_per_step\": %llu",
               (unsigned long long)s->host_bytes, s->nhost, moved,
               (unsigned long long)s->bytes_read);
    else
        printf("proposal_placement %llu %llu %zu %llu %llu\n", (unsigned long long)pp->budget_bytes,
               (unsigned long long)s->host_bytes, s->nhost, moved,
               (unsigned long long)s->bytes_read);
}
