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

/* The line that carries the plan's host placement out under libshim (host_resident), or nothing
   when the plan keeps nothing on the host. */
static void libshim_line(const plan_model *m, const plan *p, bool json)
{
    uint64_t sizes[LIBSHIM_SIZES];
    size_t n;
    bool more;
    size_t matches = host_sizes(m, p, sizes, &n, &more);
    if (json) {
        printf(", \"host_resident_sizes\": [");
        for (size_t k = 0; k < n; k++)
            printf("%s%llu", k ? ", " : "", (unsigned long long)sizes[k]);
        printf("], \"host_resident_size_matches\": %zu", matches);
        return;
    }
    if (!n)
        return;
    printf("libshim: host_resident = \"");
    for (size_t k = 0; k < n; k++)
        printf("%s%llu", k ? "," : "", (unsigned long long)sizes[k]);
    printf("\" (or SHIM_HOST_RESIDENT) keeps allocations of these sizes on the host: %zu in this "
           "model%s%s\n",
           matches, matches > p->nhost ? ", more than the plan keeps there" : "",
           more ? "; more sizes than libshim's 16 (the rest move or stay on the device)" : "");
}

void shimplan_place_print(const plan_model *m, const plan *p, const plan_stats *st, uint64_t peak,
                          bool json)
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
        libshim_line(m, p, json);
        return;
    }
    printf("placement: device-resident %.2f GiB; moved on a schedule %zu allocations, %.2f GiB "
           "per step; host-resident %zu allocations, %.2f GiB (%.1f%% of the peak), %.2f GiB "
           "read through the link per step\n",
           gib(r.device_bytes), r.moved, gib(r.moved_bytes), r.host, gib(r.host_bytes), share,
           gib(r.read_bytes));
    printf("device_resident_bytes: %llu\nmoved_allocs: %zu\nmoved_bytes_per_step: %llu\n"
           "host_resident_allocs: %zu\nhost_resident_bytes: %llu\nhost_read_bytes_per_step: "
           "%llu\nhost_read_us: %.3f\n",
           (unsigned long long)r.device_bytes, r.moved, (unsigned long long)r.moved_bytes, r.host,
           (unsigned long long)r.host_bytes, (unsigned long long)r.read_bytes, r.read_us);
    libshim_line(m, p, json);
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
