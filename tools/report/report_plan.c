/* report_plan.c — `shim-report plan`: what-if planning of a recorded step. The step's model
 * (report_model.c) is planned for a budget with one of the planner's planners and simulated:
 * predicted step time, stall, bytes moved each way, peak, the lower bound on the stall for that
 * budget, and the native step time; --proposals N adds the memory-time curve. */
#include "report.h"

#include "conf.h"
#include "plan_build.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define U(x) ((unsigned long long)(x))

typedef struct result {
    plan_build_info info;
    plan_kind kind;
    int has_budget;
    uint64_t budget, native, floor;
    double native_us;
    plan p;
    plan_stats st;
    double lb;
    plan_proposal *props;
    size_t nprops;
} result;

/* A bound in microseconds: "inf" in text, null in JSON, for a budget below the floor. */
static void put_us(FILE *out, double v, int json)
{
    if (isinf(v))
        fputs(json ? "null" : "inf", out);
    else
        fprintf(out, "%.3f", v);
}

static double gib(uint64_t b)
{
    return (double)b / (1024.0 * 1024.0 * 1024.0);
}

static void placement_text(FILE *out, const plan_model *m, const result *r)
{
    plan_placement c;
    plan_placement_count(m, &r->p, &c); /* out of memory: zeros */
    fprintf(out,
            "placement: device-resident %.2f GiB; moved on a schedule %zu allocations, %.2f GiB "
            "per step; host-resident %zu allocations, %.2f GiB (kept by libshim's host_resident: "
            "not in the model, their reads in the measured kernel times)\n",
            gib(c.device_bytes), c.moved, gib(r->st.bytes_to_host + r->st.bytes_to_device),
            r->info.placed, gib(r->info.placed_bytes));
    fprintf(out,
            "device_resident_bytes: %llu\nmoved_allocs: %zu\nhost_resident_allocs: %zu\n"
            "host_resident_bytes: %llu\n",
            U(c.device_bytes), c.moved, r->info.placed, U(r->info.placed_bytes));
}

static void print_text(FILE *out, const report_trace *t, const plan_model *m, const result *r)
{
    const plan_build_info *i = &r->info;
    fputs("trace: ", out);
    report_text_string(out, t->name);
    fprintf(out, "\nstep: %llu (launches %llu..%llu)\n", U(i->step), U(i->first_seq),
            U(i->end_seq - 1));
    fprintf(out, "operations: %zu (%zu timed, %zu filled)\nallocations: %zu (%zu cyclic)\n", i->ops,
            i->timed, i->filled, i->allocs, i->cyclic);
    fprintf(out, "link: h2d %.3f GB/s, d2h %.3f GB/s, duplex %d, remap %.3f us\n", m->hw.h2d_gbps,
            m->hw.d2h_gbps, m->hw.duplex, m->hw.remap_us);
    if (m->hw.both_h2d_gbps > 0)
        fprintf(out, "link_both: h2d %.3f GB/s, d2h %.3f GB/s\n", m->hw.both_h2d_gbps,
                m->hw.both_d2h_gbps);
    fprintf(out, "native_peak_bytes: %llu\nfloor_bytes: %llu\nnative_step_us: %.3f\nplanner: %s\n",
            U(r->native), U(r->floor), r->native_us, plan_kind_name(r->kind));
    if (r->has_budget) {
        fprintf(out, "budget_bytes: %llu\nfeasible: %s\npeak_bytes: %llu\n", U(r->budget),
                r->st.feasible ? "yes" : "no", U(r->st.peak_bytes));
        fprintf(out, "step_us: %.3f\nstall_us: %.3f\nbytes_to_host: %llu\nbytes_to_device: %llu\n",
                r->st.step_us, r->st.stall_us, U(r->st.bytes_to_host), U(r->st.bytes_to_device));
        fputs("lower_bound_us: ", out);
        put_us(out, r->lb, 0);
        fprintf(out, "\nentries: %zu\n", r->p.n);
        placement_text(out, m, r);
    }
    if (r->nprops)
        fprintf(out, "proposals: budget_bytes peak_bytes step_us stall_us lower_bound_us "
                     "feasible\n");
    for (size_t k = 0; k < r->nprops; k++) {
        const plan_proposal *pp = &r->props[k];
        fprintf(out, "proposal %llu %llu %.3f %.3f ", U(pp->budget_bytes), U(pp->stats.peak_bytes),
                pp->stats.step_us, pp->stats.stall_us);
        put_us(out, pp->lower_bound_us, 0);
        fprintf(out, " %s\n", pp->stats.feasible ? "yes" : "no");
    }
}

static void json_stats(FILE *out, const plan_stats *st)
{
    fprintf(out, "\"feasible\": %s, \"peak_bytes\": %llu, \"step_us\": ",
            st->feasible ? "true" : "false", U(st->peak_bytes));
    report_json_double(out, st->step_us);
    fputs(", \"stall_us\": ", out);
    report_json_double(out, st->stall_us);
    fprintf(out, ", \"bytes_to_host\": %llu, \"bytes_to_device\": %llu", U(st->bytes_to_host),
            U(st->bytes_to_device));
}

static void print_json(FILE *out, const report_trace *t, const plan_model *m, const result *r)
{
    const plan_build_info *i = &r->info;
    fputs("{\"trace\": ", out);
    report_json_string(out, t->name);
    fprintf(out,
            ", \"step\": %llu, \"first_seq\": %llu, \"end_seq\": %llu, \"operations\": %zu, "
            "\"timed\": %zu, \"filled\": %zu, \"allocations\": %zu, \"cyclic\": %zu, ",
            U(i->step), U(i->first_seq), U(i->end_seq), i->ops, i->timed, i->filled, i->allocs,
            i->cyclic);
    fprintf(out, "\"h2d_gbps\": %.6g, \"d2h_gbps\": %.6g, \"duplex\": %d, \"remap_us\": %.6g, ",
            m->hw.h2d_gbps, m->hw.d2h_gbps, m->hw.duplex, m->hw.remap_us);
    if (m->hw.both_h2d_gbps > 0)
        fprintf(out, "\"both_h2d_gbps\": %.6g, \"both_d2h_gbps\": %.6g, ", m->hw.both_h2d_gbps,
                m->hw.both_d2h_gbps);
    fprintf(out, "\"native_peak_bytes\": %llu, \"floor_bytes\": %llu, \"native_step_us\": ",
            U(r->native), U(r->floor));
    report_json_double(out, r->native_us);
    fprintf(out, ", \"planner\": \"%s\"", plan_kind_name(r->kind));
    if (r->has_budget) {
        fprintf(out, ", \"budget_bytes\": %llu, ", U(r->budget));
        json_stats(out, &r->st);
        fputs(", \"lower_bound_us\": ", out);
        put_us(out, r->lb, 1);
        plan_placement c;
        plan_placement_count(m, &r->p, &c); /* out of memory: zeros */
        fprintf(out,
                ", \"entries\": %zu, \"device_resident_bytes\": %llu, \"moved_allocs\": %zu, "
                "\"host_resident_allocs\": %zu, \"host_resident_bytes\": %llu",
                r->p.n, U(c.device_bytes), c.moved, r->info.placed, U(r->info.placed_bytes));
    }
    fputs(", \"proposals\": [", out);
    for (size_t k = 0; k < r->nprops; k++) {
        fprintf(out, "%s{\"budget_bytes\": %llu, ", k ? ", " : "", U(r->props[k].budget_bytes));
        json_stats(out, &r->props[k].stats);
        fputs(", \"lower_bound_us\": ", out);
        put_us(out, r->props[k].lower_bound_us, 1);
        fputc('}', out);
    }
    fputs("]}\n", out);
}

/* The planner's runs: native figures, the plan for the budget, the proposals. */
static plan_err run(const plan_model *m, const report_model_opts *o, const conf_size *budget,
                    result *r)
{
    plan_stats native;
    plan none;
    plan_init(&none);
    plan_err e = plan_peaks(m, &r->native, &r->floor);
    if (!e)
        e = plan_make(m, PLAN_KIND_NONE, r->native, &none, &native);
    plan_free(&none);
    r->native_us = native.step_us;
    if (!e && r->has_budget) {
        r->budget = conf_size_resolve(budget, r->native, r->native);
        e = plan_make(m, r->kind, r->budget, &r->p, &r->st);
        if (!e)
            e = plan_lower_bound(m, r->budget, &r->lb);
    }
    if (!e && o->proposals) {
        r->props = calloc(o->proposals, sizeof(*r->props));
        e = r->props ? plan_proposals(m, r->kind, o->proposals, r->props) : PLAN_ERR_NOMEM;
        r->nprops = e ? 0 : o->proposals;
    }
    return e;
}

/* Plans the model of t and prints the result. 0, or 1 after a message. */
static int plan_trace(const report_trace *t, const report_model_opts *o, const conf_size *budget)
{
    plan_model m;
    plan_model_init(&m);
    result r = {.kind = (plan_kind)o->kind, .has_budget = o->budget != NULL};
    plan_init(&r.p);
    int rc = report_model_open(t, o, &m, &r.info);
    if (rc == 0) {
        plan_err e = run(&m, o, budget, &r);
        if (e == PLAN_ERR_LIMIT)
            fprintf(stderr, "shim-report: %s: step %llu is too large for the %s planner\n",
                    o->trace, U(r.info.step), plan_kind_name(r.kind));
        else if (e)
            fprintf(stderr, "shim-report: %s: %s\n", o->trace, plan_strerror(e));
        else if (o->json)
            print_json(stdout, t, &m, &r);
        else
            print_text(stdout, t, &m, &r);
        rc = e ? 1 : 0;
    }
    plan_free(&r.p);
    free(r.props);
    plan_model_free(&m);
    return rc;
}

/* `plan TRACE --budget SIZE [...]`. Exit status as in report.h. */
int report_plan_main(int argc, char **argv, char **envp)
{
    (void)envp;
    report_model_opts o;
    if (report_model_opts_parse(&o, argc, argv, 1) != 0)
        return 2;
    conf_size budget = {0};
    char err[CONF_ERR_LEN];
    if (o.budget && conf_budget_parse(o.budget, &budget, err, sizeof err) != 0) {
        fprintf(stderr, "shim-report: bad --budget: %s\n", err);
        return 2;
    }
    report_trace t;
    if (report_trace_load(&t, o.trace, err, sizeof err) != 0) {
        fprintf(stderr, "shim-report: %s\n", err);
        return 1;
    }
    if (t.truncated)
        fprintf(stderr, "shim-report: %s: %s\n", o.trace, t.note);
    int rc = plan_trace(&t, &o, &budget);
    report_trace_free(&t);
    return rc;
}
