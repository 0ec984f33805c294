/* tests/bench/plan_bench.c — planner benchmarks. Never fails on timing: prints tables measured
 * in one run, with ratios, for tests/bench/RESULTS-planner.md.
 *
 *   plan_bench [speed] [scaling] [quality]   (all three when no argument)
 *
 * speed: planning 100,000 operations and 50,000 allocations (a transformer-like model), each
 *        planner and the bound, against a one-second target.
 * scaling: 1,000 to 1,000,000 operations, same shape.
 * quality: transformer-like models at 75% and 50% of the native peak: stall of the scheduled
 *          and reactive plans against the lower bound, as a share of compute time. */
#include "plan_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int load(plan_model *m, plan_ctx *c, const char *spec)
{
    char msg[256];
    plan_model_init(m);
    if (plan_generate(m, spec, msg, sizeof(msg)) || plan_ctx_init(c, m, msg, sizeof(msg))) {
        fprintf(stderr, "plan_bench: %s: %s\n", spec, msg);
        return -1;
    }
    return 0;
}

/* Seconds to plan (with the final simulation plan_make does) and the outcome. */
static double time_plan(const plan_ctx *c, plan_kind k, uint64_t budget, plan_stats *st,
                        size_t *entries)
{
    plan p;
    plan_init(&p);
    double t0 = now();
    plan_err e = plan_make_ctx(c, k, budget, &p, st);
    double dt = now() - t0;
    *entries = p.n;
    plan_free(&p);
    return e ? NAN : dt;
}

static double time_bound(const plan_ctx *c, uint64_t budget, double *lb)
{
    double t0 = now();
    plan_err e = plan_bound_ctx(c, budget, lb);
    return e ? NAN : now() - t0;
}

static void speed(void)
{
    const char *spec = "transformer:layers=5264,fwd=9,acts=6";
    plan_model m;
    plan_ctx c;
    if (load(&m, &c, spec))
        return;
    printf("## speed: %s\n\n%zu operations, %zu allocations, %zu idle gaps; target 1 s\n\n", spec,
           m.nops, m.nallocs, c.ngaps);
    printf("| planner | budget | time (s) | time / target | feasible | stall / compute |\n");
    printf("|---|---|---|---|---|---|\n");
    for (int pct = 75; pct >= 50; pct -= 25) {
        uint64_t b = c.native_peak / 100 * (uint64_t)pct;
        for (int k = PLAN_KIND_NONE; k <= PLAN_KIND_SCHEDULED; k++) {
            plan_stats st;
            size_t ne;
            double t = time_plan(&c, (plan_kind)k, b, &st, &ne);
            printf("| %s | %d%% | %.3f | %.2f | %s | %.2f%% |\n", plan_kind_name((plan_kind)k), pct,
                   t, t / 1.0, st.feasible ? "yes" : "no", 100 * st.stall_us / st.compute_us);
        }
        double lb, t = time_bound(&c, b, &lb);
        printf("| lower bound | %d%% | %.3f | %.2f | - | %.2f%% |\n", pct, t, t,
               100 * lb / c.compute);
    }
    printf("\n");
    plan_ctx_free(&c);
    plan_model_free(&m);
}

static void scaling(void)
{
    static const int layers[] = {53, 526, 5264, 52632};
    double base = 0;
    printf("## scaling: transformer:layers=L,fwd=9,acts=6 at 75%% of the native peak\n\n");
    printf("| operations | allocations | gaps | reactive (s) | scheduled (s) | simulate (s) | "
           "bound (s) | scheduled us/op | scheduled time vs 1k |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < sizeof(layers) / sizeof(layers[0]); i++) {
        char spec[96];
        snprintf(spec, sizeof(spec), "transformer:layers=%d,fwd=9,acts=6", layers[i]);
        plan_model m;
        plan_ctx c;
        if (load(&m, &c, spec))
            return;
        uint64_t b = c.native_peak / 4 * 3;
        plan_stats st;
        size_t ne;
        double tr = time_plan(&c, PLAN_KIND_REACTIVE, b, &st, &ne);
        double ts = time_plan(&c, PLAN_KIND_SCHEDULED, b, &st, &ne);
        plan empty;
        plan_init(&empty);
        double t0 = now();
        plan_sim_run(&c, &empty, b, &st, NULL);
        double tsim = now() - t0, lb, tb = time_bound(&c, b, &lb);
        if (i == 0)
            base = ts;
        printf("| %zu | %zu | %zu | %.4f | %.4f | %.4f | %.4f | %.2f | %.1fx |\n", m.nops,
               m.nallocs, c.ngaps, tr, ts, tsim, tb, ts * 1e6 / (double)m.nops, ts / base);
        plan_ctx_free(&c);
        plan_model_free(&m);
    }
    printf("\n");
}

static void quality_row(const char *spec)
{
    plan_model m;
    plan_ctx c;
    if (load(&m, &c, spec))
        return;
    for (int pct = 75; pct >= 50; pct -= 25) {
        uint64_t b = c.native_peak / 100 * (uint64_t)pct;
        plan_stats ss, sr;
        size_t ns, nr;
        time_plan(&c, PLAN_KIND_SCHEDULED, b, &ss, &ns);
        time_plan(&c, PLAN_KIND_REACTIVE, b, &sr, &nr);
        double lb;
        plan_bound_ctx(&c, b, &lb);
        double cu = c.compute;
        printf("| %s | %d%% | %.2f%% | %.2f%% | %.2f%% | %.2f | %.1f | %.1f / %.1f |\n", spec, pct,
               100 * ss.stall_us / cu, 100 * sr.stall_us / cu, 100 * lb / cu,
               sr.stall_us > 0 ? ss.stall_us / sr.stall_us : 0.0,
               ss.stall_us > 0 && lb > 0 ? ss.stall_us / lb : (ss.stall_us == 0 ? 1.0 : INFINITY),
               (double)(ss.bytes_to_host + ss.bytes_to_device) / 1e9,
               (double)(sr.bytes_to_host + sr.bytes_to_device) / 1e9);
        if (!ss.feasible || !sr.feasible)
            printf("| (budget not held: scheduled %d, reactive %d) |\n", ss.feasible, sr.feasible);
    }
    plan_ctx_free(&c);
    plan_model_free(&m);
}

static void quality(void)
{
    static const char *const specs[] = {
        "transformer",
        "transformer:seed=2,jitter=40",
        "transformer:layers=48",
        "transformer:layers=12,fwd=6,acts=5,hidden=128MiB",
        "transformer:h2d=12,d2h=12",
        "transformer:duplex=0",
        "transformer:layers=48,h2d=12,d2h=12",
    };
    printf("## quality: stall as a share of compute time (scheduled, reactive, lower bound)\n\n");
    printf("| model | budget | scheduled | reactive | lower bound | scheduled / reactive | "
           "scheduled / bound | GB moved per step (sched / react) |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
        quality_row(specs[i]);
    printf("\n");
}

int main(int argc, char **argv)
{
    bool all = argc < 2;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "speed") && strcmp(argv[i], "scaling") && strcmp(argv[i], "quality")) {
            fprintf(stderr, "usage: plan_bench [speed] [scaling] [quality]\n");
            return 2;
        }
    for (int i = all ? 0 : 1; i < (all ? 1 : argc); i++) {
        if (all || !strcmp(argv[i], "speed"))
            speed();
        if (all || !strcmp(argv[i], "scaling"))
            scaling();
        if (all || !strcmp(argv[i], "quality"))
            quality();
    }
    return 0;
}
