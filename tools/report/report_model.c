/* report_model.c — `shim-report model`: the iteration model of one recorded step, in the text
 * model format (planner/MODEL-FORMAT.md), built by the planner's step model builder from the
 * trace's records in time order. */
#include "report_model.h"
#include "util_file.h"

#include "conf.h"
#include "plan_build.h"
#include "shim_trace.h"
#include "shim_trace_format.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* One record to the builder; *next is one past the largest launch seen so far: the launch index
   of allocations, frees and copies. timed: the trace has link_time records (1.9), the copies
   libshim timed on its own stream: the link is theirs, not the moves' wall-clock times (a move's
   start_ns to end_ns holds its wait for the engine, and the host's own delays in noticing it
   done, which on a loaded machine read as a link many times slower). */
static plan_err feed(plan_builder *b, const report_trace *t, const report_rec *r, uint64_t *next,
                     bool timed)
{
    switch (r->kind) {
    case SHIM_TRACE_ALLOC:
        return plan_build_alloc(b, r->a, r->c, (plan_mem_kind)r->sub, r->b, r->d, *next);
    case SHIM_TRACE_FREE:
        return plan_build_free_alloc(b, r->a, r->d, *next);
    case SHIM_TRACE_LAUNCH:
        if (r->a >= *next && r->a < UINT64_MAX)
            *next = r->a + 1;
        return plan_build_launch(b, r->a, r->b, r->d, t->ids + r->ids, r->n_ids);
    case SHIM_TRACE_KERNEL_TIME: /* a time that is not a duration is left out */
        return plan_build_kernel_time(b, r->a, r->usec) == PLAN_ERR_NOMEM ? PLAN_ERR_NOMEM
                                                                          : PLAN_OK;
    case SHIM_TRACE_KERNEL_IDLE: { /* as libshim's planner takes it; a bad figure is left out */
        double record_us;
        memcpy(&record_us, &r->b, sizeof record_us);
        plan_err e = r->usec < 0 ? plan_build_kernel_disturbed(b, r->a)
                                 : plan_build_kernel_idle(b, r->a, r->usec);
        if (e == PLAN_OK)
            plan_build_timing_cost(b, record_us);
        return e == PLAN_ERR_NOMEM ? PLAN_ERR_NOMEM : PLAN_OK;
    }
    case SHIM_TRACE_COPY: {
        plan_err e = plan_build_copy(b, *next, r->a, r->b);
        if (!e && (r->sub == SHIM_COPY_H2D || r->sub == SHIM_COPY_D2H))
            e = plan_build_transfer(b, *next, r->sub == SHIM_COPY_H2D, r->c);
        return e;
    }
    case SHIM_TRACE_STEP:
        return plan_build_step(b, r->a, r->b);
    case SHIM_TRACE_TRANSITION: /* kept on the host for good (host_resident): not in a model */
        if (r->sub == SHIM_EV_CREATE_HOST && r->sub2 == SHIM_REASON_PLACEMENT)
            plan_build_on_host(b, r->a);
        return PLAN_OK;
    case SHIM_TRACE_LINK_TIME:
        return plan_build_move(b, r->sub == SHIM_MOVE_TO_DEVICE, r->b, r->usec);
    case SHIM_TRACE_MOVE: /* a cancelled eviction's time is not a copy's */
        if (timed || r->sub2 == SHIM_REASON_CANCELLED || r->d <= r->c ||
            (r->sub != SHIM_MOVE_TO_HOST && r->sub != SHIM_MOVE_TO_DEVICE))
            return PLAN_OK;
        return plan_build_move(b, r->sub == SHIM_MOVE_TO_DEVICE, r->b, (double)(r->d - r->c) / 1e3);
    default:
        return PLAN_OK;
    }
}

typedef struct alloc_key {
    uint64_t id, bytes;
    uint32_t kind;
} alloc_key;

static int by_alloc_id(const void *a, const void *b)
{
    const alloc_key *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The largest managed allocation that shares a slab, as the trace's in-process plan recorded it
   (1.9), or 0 when no plan record says. */
static uint64_t slab_max_of(const report_trace *t)
{
    for (size_t i = 0; i < t->nplans; i++)
        if (t->plans[i].slab_max_bytes)
            return t->plans[i].slab_max_bytes;
    return 0;
}

/* The mover's remap cost the trace's in-process plan of step `step` was made with (1.12): that
   plan's, else the latest plan's, so that the model's remap cost is libshim's (its measured
   median when link_remap is "measured"); 0 when no plan record says (older traces). */
static double remap_of_plans(const report_trace *t, uint64_t step)
{
    double any = 0;
    for (size_t i = 0; i < t->nplans; i++) {
        if (t->plans[i].remap_us > 0 && t->plans[i].model_step == step)
            return t->plans[i].remap_us;
        if (t->plans[i].remap_us > 0)
            any = t->plans[i].remap_us;
    }
    return any;
}

/* m with what libshim could not move pinned, as its in-process planner pins it
   (plan_rules_movable over each allocation's kind and bytes in the trace), and the slab members'
   slabs counted whole as it counts them (plan_model_pin_slabs, granules of PLAN_RULES_GRANULE, the
   builder's): into *m, replacing it.
   Without the slab limit in the trace (no plan record, or one older than 1.9), m is kept as it
   is: every allocation movable. */
static plan_err pin_as_libshim(const report_trace *t, const uint64_t *ids, plan_model *m)
{
    uint64_t slab_max = slab_max_of(t);
    if (!slab_max)
        return PLAN_OK;
    size_t n = 0;
    alloc_key *k = malloc(t->n * sizeof *k + 1);
    bool *movable = malloc(2 * m->nallocs * sizeof *movable + 1), *member = movable + m->nallocs;
    plan_err e = k && movable ? PLAN_OK : PLAN_ERR_NOMEM;
    for (size_t i = 0; !e && i < t->n; i++)
        if (t->recs[i].kind == SHIM_TRACE_ALLOC)
            k[n++] = (alloc_key){t->recs[i].a, t->recs[i].c, t->recs[i].sub};
    if (!e) {
        qsort(k, n, sizeof *k, by_alloc_id);
        for (size_t i = 0; i < m->nallocs; i++) {
            alloc_key q = {.id = ids[i]}, *f = bsearch(&q, k, n, sizeof *k, by_alloc_id);
            movable[i] = f && plan_rules_movable((plan_mem_kind)f->kind, f->bytes, slab_max);
            member[i] = f && f->kind == PLAN_MEM_MANAGED && !movable[i];
        }
        plan_model pinned;
        plan_model_init(&pinned);
        e = plan_model_pin_slabs(m, movable, member, PLAN_RULES_GRANULE, &pinned, NULL);
        plan_model_free(m);
        *m = pinned;
    }
    free(k);
    free(movable);
    return e;
}

/* Where the model's link figures came from, before the command line's: the builder's defaults
   stand in for what the trace does not say (plan_build.h). */
static void trace_sources(const plan_build_info *info, bool timed, bool remap, planopt_sources *src)
{
    const char *measured = timed ? "measured: the copies libshim timed (link_time records)"
                                 : "measured: the trace's moves, by their wall-clock times";
    const char *assumed = "assumed: the step model builder's default";
    planopt_sources_all(src, assumed);
    if (info->measured_h2d)
        src->h2d = measured;
    if (info->measured_d2h)
        src->d2h = measured;
    if (remap)
        src->remap = "the trace's plan record: the remap libshim planned with";
}

/* Contract in report_model.h. */
int report_model_build(const report_trace *t, const report_model_opts *o, plan_model *m,
                       plan_build_info *info, planopt_sources *src, char *err, size_t errlen)
{
    plan_builder *b = plan_build_new();
    plan_err e = b ? PLAN_OK : PLAN_ERR_NOMEM;
    uint64_t next = 0, *ids = NULL;
    bool timed = false;
    for (size_t i = 0; i < t->n && !timed; i++)
        timed = t->recs[i].kind == SHIM_TRACE_LINK_TIME;
    for (size_t i = 0; i < t->n && !e; i++)
        e = feed(b, t, &t->recs[i], &next, timed);
    char msg[CONF_ERR_LEN] = "out of memory";
    if (!e)
        e = plan_build_model_ids(b, o->p.step, m, info, &ids, msg, sizeof msg);
    plan_build_free(b);
    if (!e && (e = pin_as_libshim(t, ids, m)) != PLAN_OK) {
        snprintf(msg, sizeof msg, "%s", plan_strerror(e));
        plan_model_free(m);
    }
    free(ids);
    if (e) {
        snprintf(err, errlen, "%s: %s", t->name, msg);
        return 1;
    }
    double remap = remap_of_plans(t, info ? info->step : UINT64_MAX);
    bool remap_known = remap > 0 && remap <= 1e9;
    if (remap_known)
        m->hw.remap_us = remap; /* --remap, below, still decides */
    planopt_sources own;
    if (!src)
        src = &own;
    if (info)
        trace_sources(info, timed, remap_known, src);
    else
        planopt_sources_all(src, "the trace");
    planopt_link_apply(&o->p.link, &m->hw, src);
    if (plan_model_check(m, NULL, msg, sizeof msg) != PLAN_OK) {
        snprintf(err, errlen, "%s: the link given: %s", t->name, msg);
        plan_model_free(m);
        return 1;
    }
    return 0;
}

/* Contract in report_model.h. */
int report_model_open(const report_trace *t, const report_model_opts *o, plan_model *m,
                      plan_build_info *info, planopt_sources *src)
{
    char err[PATH_MAX + CONF_ERR_LEN]; /* a path and its reason: never cut */
    if (report_model_build(t, o, m, info, src, err, sizeof err) != 0) {
        fprintf(stderr, "shim-report: %s\n", err);
        return 1;
    }
    if (info->filled)
        fprintf(stderr,
                "shim-report: %s: step %llu: %zu of %zu launches have no kernel time (%zu not "
                "recorded): filled with the median of their function's times\n",
                t->name, (unsigned long long)info->step, info->filled, info->ops, info->unrecorded);
    return 0;
}

/* The provenance of the model as comment lines ("# ..."). */
static void describe(FILE *out, const report_trace *t, const plan_build_info *info,
                     const plan_model *m, const planopt_sources *src)
{
    fprintf(out, "# shim-report model: ");
    report_text_string(out, t->name);
    fprintf(out, "%s\n", t->truncated ? " (truncated)" : "");
    fprintf(out, "# step %llu of steps %llu..%llu: launches %llu..%llu\n",
            (unsigned long long)info->step, (unsigned long long)info->first_step,
            (unsigned long long)info->last_step, (unsigned long long)info->first_seq,
            (unsigned long long)(info->end_seq - 1));
    fprintf(out, "# %zu operations: %zu timed, %zu filled (%zu not recorded)\n", info->ops,
            info->timed, info->filled, info->unrecorded);
    fprintf(out,
            "# %zu allocations: %zu cyclic; %zu of the step's left out (live during no launch); "
            "%zu touches of allocations not live at the launch left out\n",
            info->allocs, info->cyclic, info->skipped, info->stray_touches);
    if (m->nallocs > info->allocs)
        fprintf(out,
                "# and %zu slab chunks of 2 MiB, pinned, which hold the small allocations as "
                "libshim packs them: %zu alloc lines below\n",
                m->nallocs - info->allocs, m->nallocs);
    if (info->placed)
        fprintf(out,
                "# %zu allocations of the step (%llu bytes) kept on the host by libshim's "
                "host_resident left out: they hold no device memory, and their reads through "
                "the link are in the measured kernel times\n",
                info->placed, (unsigned long long)info->placed_bytes);
    planopt_link_text(out, "# ", &m->hw, src);
}

static int write_model(const report_model_opts *o, const report_trace *t, const plan_model *m,
                       const plan_build_info *info, const planopt_sources *src)
{
    char *text = NULL;
    size_t len = 0;
    if (plan_model_write(m, &text, &len)) {
        fprintf(stderr, "shim-report: %s: out of memory\n", o->trace);
        return 1;
    }
    char why[128] = "";
    FILE *f = o->output ? util_file_open(o->output, "w", why, sizeof why) : stdout;
    int ok = f != NULL;
    if (ok) {
        describe(f, t, info, m, src);
        ok = fwrite(text, 1, len, f) == len;
    }
    if (f && f != stdout)
        ok &= fclose(f) == 0;
    else if (f)
        ok &= fflush(f) == 0;
    free(text);
    if (!ok)
        fprintf(stderr, "shim-report: cannot write %s: %s\n", o->output ? o->output : "output",
                f ? strerror(errno) : why);
    return ok ? 0 : 1;
}

/* `model TRACE [--step N] [-o FILE] [link options]`. Exit status as in report.h. */
int report_model_main(int argc, char **argv, char **envp)
{
    (void)envp;
    report_model_opts o;
    if (report_model_opts_parse(&o, argc, argv, 0) != 0)
        return 2;
    report_trace t;
    char err[CONF_ERR_LEN];
    if (report_trace_load(&t, o.trace, err, sizeof err) != 0) {
        fprintf(stderr, "shim-report: %s\n", err);
        return 1;
    }
    if (t.truncated)
        fprintf(stderr, "shim-report: %s: %s\n", o.trace, t.note);
    plan_model m;
    plan_build_info info;
    planopt_sources src;
    plan_model_init(&m);
    int rc = report_model_open(&t, &o, &m, &info, &src);
    if (rc == 0)
        rc = write_model(&o, &t, &m, &info, &src);
    plan_model_free(&m);
    report_trace_free(&t);
    return rc;
}
