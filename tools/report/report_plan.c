/* report_plan.c — `shim-report plan`: what-if planning of a recorded step. The step's model
 * (report_model.c) is planned for a budget with one of the planner's planners and simulated:
 * predicted step time, stall, bytes moved each way, peak, the lower bound on the stall for that
 * budget, and the native step time; --proposals N adds the memory-time curve. */
#include "report_model.h"

#include "conf.h"
#include "plan_build.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define U(x) ((unsigned long long)(x))

typedef struct result {
    plan_build_info info;
    planopt_sources src; /* where each link figure came from */
    plan_kind kind;
    uint64_t native, floor;
    double native_us;
    planopt_run run; /* the plan for the budget (run.planned), the proposals */
} result;

static double gib(uint64_t b)
{
    return (double)b / (1024.0 * 1024.0 * 1024.0);
}

static void placement_text(FILE *out, const plan_model *m, const result *r)
{
    plan_placement c;
    plan_placement_count(m, &r->run.p, &c); /* out of memory: zeros */
    fprintf(out,
            "placement: device-resident %.2f GiB summed over the allocations never moved "
            "(peak_bytes: what is live at once); moved on a schedule %zu allocations, %.2f GiB "
            "per step; host-resident %zu allocations, %.2f GiB (kept by libshim's host_resident: "
            "not in the model, their reads in the measured kernel times)\n",
            gib(c.device_bytes), c.moved, gib(r->run.st.bytes_to_host + r->run.st.bytes_to_device),
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
    planopt_link_text(out, "", &m->hw, &r->src);
    fprintf(out, "native_peak_bytes: %llu\nfloor_bytes: %llu\nnative_step_us: %.3f\nplanner: %s\n",
            U(r->native), U(r->floor), r->native_us, plan_kind_name(r->kind));
    const planopt_run *run = &r->run;
    if (run->planned) {
        fprintf(out, "budget_bytes: %llu\nfeasible: %s\npeak_bytes: %llu\n", U(run->budget),
                run->st.feasible ? "yes" : "no", U(run->st.peak_bytes));
        fprintf(out, "step_us: %.3f\nstall_us: %.3f\nbytes_to_host: %llu\nbytes_to_device: %llu\n",
                run->st.step_us, run->st.stall_us, U(run->st.bytes_to_host),
                U(run->st.bytes_to_device));
        fputs("lower_bound_us: ", out);
        planopt_put_us(out, run->lb, false);
        fprintf(out, "\nentries: %zu\n", run->p.n);
        placement_text(out, m, r);
    }
    planopt_proposals_text(out, run);
}

static void print_json(FILE *out, const report_trace *t, const plan_model *m, const result *r)
{
    const plan_build_info *i = &r->info;
    fputs("{\"trace\": ", out);
    report_json_string(out, t->name);
    fprintf(out,
            ", \"step\": %llu, \"first_seq\": %llu, \"end_seq\": %llu, \"operations\": %zu, "
            "\"timed\": %zu, \"filled\": %zu, \"allocations\": %zu, \"cyclic\": %zu",
            U(i->step), U(i->first_seq), U(i->end_seq), i->ops, i->timed, i->filled, i->allocs,
            i->cyclic);
    planopt_link_json(out, &m->hw, &r->src);
    fprintf(out, ", \"native_peak_bytes\": %llu, \"floor_bytes\": %llu, \"native_step_us\": ",
            U(r->native), U(r->floor));
    report_json_double(out, r->native_us);
    fprintf(out, ", \"planner\": \"%s\"", plan_kind_name(r->kind));
    const planopt_run *run = &r->run;
    if (run->planned) {
        plan_proposal at = {
            .budget_bytes = run->budget, .stats = run->st, .lower_bound_us = run->lb};
        fputs(", ", out);
        planopt_proposal_json(out, &at);
        plan_placement c;
        plan_placement_count(m, &run->p, &c); /* out of memory: zeros */
        fprintf(out,
                ", \"entries\": %zu, \"device_resident_bytes\": %llu, \"moved_allocs\": %zu, "
                "\"host_resident_allocs\": %zu, \"host_resident_bytes\": %llu",
                run->p.n, U(c.device_bytes), c.moved, r->info.placed, U(r->info.placed_bytes));
    }
    fputs(", \"proposals\": [", out);
    for (size_t k = 0; k < run->nprops; k++) {
        fputs(k ? ", {" : "{", out);
        planopt_proposal_json(out, &run->props[k]);
        fputc('}', out);
    }
    fputs("]}\n", out);
}

/* The planner's runs: native figures, the plan for the budget, the proposals. */
static plan_err run(const plan_model *m, const report_model_opts *o, result *r)
{
    plan_stats native;
    plan none;
    plan_init(&none);
    plan_err e = plan_peaks(m, &r->native, &r->floor);
    if (!e)
        e = plan_make(m, PLAN_KIND_NONE, r->native, &none, &native);
    plan_free(&none);
    r->native_us = native.step_us;
    if (!e)
        e = planopt_plan(&o->p, m, NULL, r->native, false, &r->run);
    return e;
}

/* Plans the model of t and prints the result. 0, or 1 after a message. */
static int plan_trace(const report_trace *t, const report_model_opts *o)
{
    plan_model m;
    plan_model_init(&m);
    result r = {.kind = o->p.kind};
    int rc = report_model_open(t, o, &m, &r.info, &r.src);
    if (rc == 0) {
        plan_err e = run(&m, o, &r);
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
    planopt_run_free(&r.run);
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
    char err[CONF_ERR_LEN];
    report_trace t;
    if (report_trace_load(&t, o.trace, err, sizeof err) != 0) {
        fprintf(stderr, "shim-report: %s\n", err);
        return 1;
    }
    if (t.truncated)
        fprintf(stderr, "shim-report: %s: %s\n", o.trace, t.note);
    int rc = plan_trace(&t, &o);
    report_trace_free(&t);
    return rc;
}
