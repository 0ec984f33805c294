/* tools/import/shimplan_print.c — shim-plan's output of a plan, in text and as JSON
 * (shimplan_print.h): the answer first, then what was assumed (how libshim holds the model, where
 * its times and link figures come from), then the figures. */
#include "shimplan_print.h"

#include "conf.h"
#include "shimplan_place.h"

#include <math.h>
#include <stdio.h>

static double gib(uint64_t b)
{
    return (double)b / (1024.0 * 1024.0 * 1024.0);
}

/* The answer in one line, before the figures: fits or not, at what cost. */
static void print_answer(const shimplan_result *r)
{
    double share = r->held ? 100.0 * (double)r->run.budget / (double)r->held : 0;
    if (!r->run.st.feasible) {
        printf("answer: cannot fit in %.2f GiB (%.0f%% of its peak): the least this job can run "
               "in is %.2f GiB (%.1f%% of its %.2f GiB peak)\n",
               gib(r->run.budget), share, gib(r->floor),
               r->held ? 100.0 * (double)r->floor / (double)r->held : 0, gib(r->held));
        return;
    }
    char host[160] = "";
    if (r->run.st.nhost)
        snprintf(host, sizeof host,
                 ", %zu allocation%s (%.2f GiB) kept on the host and read in place (%.2f MiB a "
                 "step)",
                 r->run.st.nhost, r->run.st.nhost == 1 ? "" : "s", gib(r->run.st.host_bytes),
                 (double)r->run.st.bytes_read / (1024.0 * 1024.0));
    printf("answer: fits in %.2f GiB (%.0f%% of its %.2f GiB peak) at %.2fx native "
           "(%.3f ms against %.3f ms), %.2f GiB to the host and %.2f GiB back per step%s; the "
           "least it can run in is %.2f GiB (%.1f%%)%s\n",
           gib(r->run.budget), share, gib(r->held),
           r->run.st.compute_us > 0 ? r->run.st.step_us / r->run.st.compute_us : 1.0,
           r->run.st.step_us / 1e3, r->run.st.compute_us / 1e3, gib(r->run.st.bytes_to_host),
           gib(r->run.st.bytes_to_device), host, gib(r->floor),
           r->held ? 100.0 * (double)r->floor / (double)r->held : 0,
           r->times ? " (times estimated: see 'times')" : "");
}

/* A size as libshim's options write it (64KiB, 1MiB, or bytes). */
static const char *size_text(uint64_t bytes, char *buf, size_t n)
{
    conf_size sz = {.kind = CONF_SIZE_BYTES, .bytes = bytes};
    conf_size_format(&sz, buf, n);
    return buf;
}

/* bytes for a person: GiB from 1 GiB on, MiB from 1 MiB, else KiB, two decimals. */
static const char *human(uint64_t bytes, char *buf, size_t n)
{
    double b = (double)bytes;
    const char *unit = b >= 0x1p30 ? "GiB" : b >= 0x1p20 ? "MiB" : "KiB";
    snprintf(buf, n, "%.2f %s", b / (b >= 0x1p30 ? 0x1p30 : b >= 0x1p20 ? 0x1p20 : 0x1p10), unit);
    return buf;
}

/* What the plan assumed of how libshim holds the model's memory, in one line. */
static void print_held(const shimplan_result *r)
{
    if (!r->rules) {
        printf("held: as given (--as-given): every allocation movable, its bytes unrounded\n");
        return;
    }
    char mm[32], sm[32], gr[32], un[32], me[32], ut[32], pk[32];
    const plan_hold_info *h = &r->hold;
    printf("held: as libshim holds it (min_managed_bytes %s, slab max %s, %s granules): %zu "
           "allocations left to the driver (%s, never moved), %zu in slabs (%s, packed into at "
           "most %zu slabs at once, a granule each, moved only with their slab), %zu units of "
           "their own (%s, movable); peak %s\n",
           size_text(r->rules->min_managed, mm, sizeof mm),
           size_text(r->rules->slab_max, sm, sizeof sm),
           size_text(r->rules->granule, gr, sizeof gr), h->unmanaged,
           human(h->unmanaged_bytes, un, sizeof un), h->members,
           human(h->member_bytes, me, sizeof me), h->slab_chunks, h->units,
           human(h->unit_bytes, ut, sizeof ut), human(r->held, pk, sizeof pk));
}

/* Contract in shimplan_print.h. */
void shimplan_print_text(const shimplan_result *r, bool entries)
{
    print_answer(r);
    printf("model: %s: %zu operations, %zu allocations\n", r->model, r->nops, r->nallocs);
    print_held(r);
    if (r->times)
        printf("times: %s\n", r->times);
    planopt_link_text(stdout, "", r->hw, r->src);
    printf("native_peak_bytes: %llu\nheld_peak_bytes: %llu\nfloor_bytes: %llu\n",
           (unsigned long long)r->native, (unsigned long long)r->held,
           (unsigned long long)r->floor);
    printf("planner: %s\nbudget_bytes: %llu\n", plan_kind_name(r->kind),
           (unsigned long long)r->run.budget);
    printf("feasible: %s\npeak_bytes: %llu\n", r->run.st.feasible ? "yes" : "no",
           (unsigned long long)r->run.st.peak_bytes);
    /* An infeasible plan's times describe a step that cannot run: none are printed. */
    if (r->run.st.feasible)
        printf("step_us: %.3f\ncompute_us: %.3f\nstall_us: %.3f\n", r->run.st.step_us,
               r->run.st.compute_us, r->run.st.stall_us);
    printf("bytes_to_host: %llu\nbytes_to_device: %llu\nlower_bound_us: ",
           (unsigned long long)r->run.st.bytes_to_host,
           (unsigned long long)r->run.st.bytes_to_device);
    planopt_put_us(stdout, r->run.lb, false);
    printf("\nentries: %zu\n", r->run.p.n);
    if (r->host)
        shimplan_place_print(r->planned, &r->run.p, &r->run.st, r->held, r->run.budget, false);
    for (size_t i = 0; entries && i < r->run.p.n; i++) {
        const plan_entry *e = &r->run.p.entries[i];
        printf("entry %u %d %d %d %d\n", e->alloc, e->evict_after, e->prefetch_at, e->wait_at,
               e->need);
    }
    planopt_proposals_text(stdout, &r->run);
    if (r->run.nprops && r->host)
        shimplan_place_proposals_head();
    for (size_t i = 0; r->host && i < r->run.nprops; i++)
        shimplan_place_proposal(&r->run.props[i], false);
}

/* The "held" object: the rules assumed (null for --as-given) and what they made of the model. */
static void print_held_json(const shimplan_result *r)
{
    printf(", \"held_peak_bytes\": %llu, \"held\": ", (unsigned long long)r->held);
    if (!r->rules) {
        fputs("null", stdout);
        return;
    }
    const plan_hold_info *h = &r->hold;
    printf("{\"min_managed_bytes\": %llu, \"slab_max_bytes\": %llu, \"granule_bytes\": %llu, "
           "\"unmanaged\": %zu, \"unmanaged_bytes\": %llu, \"slab_members\": %zu, "
           "\"slab_member_bytes\": %llu, \"slabs_at_most\": %zu, \"units\": %zu, "
           "\"unit_bytes\": %llu}",
           (unsigned long long)r->rules->min_managed, (unsigned long long)r->rules->slab_max,
           (unsigned long long)r->rules->granule, h->unmanaged,
           (unsigned long long)h->unmanaged_bytes, h->members, (unsigned long long)h->member_bytes,
           h->slab_chunks, h->units, (unsigned long long)h->unit_bytes);
}

/* Contract in shimplan_print.h. */
void shimplan_print_json(const shimplan_result *r, bool entries)
{
    printf("{\"planner\": \"%s\", \"budget_bytes\": %llu, \"native_peak_bytes\": %llu, "
           "\"floor_bytes\": %llu, \"feasible\": %s, \"peak_bytes\": %llu",
           plan_kind_name(r->kind), (unsigned long long)r->run.budget,
           (unsigned long long)r->native, (unsigned long long)r->floor,
           r->run.st.feasible ? "true" : "false", (unsigned long long)r->run.st.peak_bytes);
    print_held_json(r);
    /* An infeasible plan's times describe a step that cannot run: null. */
    const char *k[] = {"step_us", "compute_us", "stall_us"};
    double v[] = {r->run.st.step_us, r->run.st.compute_us, r->run.st.stall_us};
    for (size_t i = 0; i < 3; i++) {
        printf(", \"%s\": ", k[i]);
        planopt_put_us(stdout, r->run.st.feasible ? v[i] : INFINITY, true);
    }
    printf(", \"bytes_to_host\": %llu, \"bytes_to_device\": %llu, \"times\": ",
           (unsigned long long)r->run.st.bytes_to_host,
           (unsigned long long)r->run.st.bytes_to_device);
    if (r->times)
        printf("\"%s\"", r->times);
    else
        fputs("null", stdout);
    planopt_link_json(stdout, r->hw, r->src);
    printf(", \"lower_bound_us\": ");
    planopt_put_us(stdout, r->run.lb, true);
    printf(", \"nentries\": %zu", r->run.p.n);
    if (r->host)
        shimplan_place_print(r->planned, &r->run.p, &r->run.st, r->held, r->run.budget, true);
    if (entries) {
        printf(", \"entries\": [");
        for (size_t i = 0; i < r->run.p.n; i++) {
            const plan_entry *e = &r->run.p.entries[i];
            printf("%s{\"alloc\": %u, \"evict_after\": %d, \"prefetch_at\": %d, \"wait_at\": %d, "
                   "\"need\": %d}",
                   i ? ", " : "", e->alloc, e->evict_after, e->prefetch_at, e->wait_at, e->need);
        }
        printf("]");
    }
    if (r->run.nprops) {
        printf(", \"proposals\": [");
        for (size_t i = 0; i < r->run.nprops; i++) {
            const plan_proposal *pp = &r->run.props[i];
            fputs(i ? ", {" : "{", stdout);
            planopt_proposal_json(stdout, pp);
            if (r->host)
                shimplan_place_proposal(pp, true);
            printf("}");
        }
        printf("]");
    }
    printf("}\n");
}
