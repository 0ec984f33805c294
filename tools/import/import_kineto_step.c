/* import_kineto_step.c — picks the training step and the GPU of a Kineto trace and lists
 * that step's kernels in GPU order with the CPU launch call of each (joined by correlation id):
 * the operations of the imported model. */
#include "import_kineto.h"

#include "base_order.h"
#include "plan_build.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The GPU with the most kernels: a trace of one rank may show a few kernels of another. */
static int64_t main_device(const ik_trace *t)
{
    int64_t dev[64];
    size_t cnt[64], nd = 0, best = 0;
    for (size_t i = 0; i < t->nkern; i++) {
        size_t j = 0;
        while (j < nd && dev[j] != t->kern[i].device)
            j++;
        if (j == nd && nd == 64)
            continue; /* more GPUs than any machine has: the first 64 compete */
        if (j == nd)
            dev[nd] = t->kern[i].device, cnt[nd++] = 0;
        if (++cnt[j] > cnt[best])
            best = j;
    }
    return nd ? dev[best] : 0;
}

/* The step: --step N, else the last step that another step follows (its launches are all in
 * the trace, and the profiler's stop cannot have cut its GPU work short), else the only one. */
static int pick_step(const ik_trace *t, const import_key *calls, const import_opts *o, ik_step *s,
                     char *msg, size_t cap)
{
    s->start = -INFINITY, s->end = INFINITY;
    if (!t->nstep) {
        if (o->step >= 0) {
            snprintf(msg, cap, "%s: error: --step %lld: the trace has no ProfilerStep#N annotation",
                     t->path, (long long)o->step);
            return -1;
        }
        int found = ik_find_period(t, calls, o, s);
        if (found < 0)
            snprintf(msg, cap, "%s: error: out of memory", t->path);
        if (!found)
            import_note(o, t->path,
                        "no ProfilerStep#N annotations, and no repeating pattern of kernels: the "
                        "model is the whole trace as one step");
        return found < 0 ? -1 : 0;
    }
    const ik_span *pick = NULL, *first = &t->step[0], *last = &t->step[0];
    for (size_t i = 0; i < t->nstep; i++) {
        const ik_span *p = &t->step[i];
        first = p->ts < first->ts ? p : first;
        last = p->ts > last->ts ? p : last;
        if (o->step >= 0 && p->num == o->step)
            pick = p;
    }
    if (o->step < 0) {
        for (size_t i = 0; i < t->nstep; i++)
            if (&t->step[i] != last && (!pick || t->step[i].ts > pick->ts))
                pick = &t->step[i];
        pick = pick ? pick : last;
    }
    if (!pick) {
        snprintf(msg, cap,
                 "%s: error: --step %lld: no ProfilerStep#%lld (the trace has #%lld to #%lld)",
                 t->path, (long long)o->step, (long long)o->step, (long long)first->num,
                 (long long)last->num);
        return -1;
    }
    s->start = pick->ts, s->end = pick->end;
    import_note(o, t->path, "%s (steps #%lld to #%lld in the trace; --step N picks one)",
                pick->name, (long long)first->num, (long long)last->num);
    return 0;
}

typedef struct op_order {
    double ts, launch;
    size_t kern;
} op_order;

static int cmp_op(const void *a, const void *b)
{
    const op_order *x = a, *y = b;
    return BASE_CMP_THEN(x->ts, y->ts,
                         BASE_CMP_THEN(x->launch, y->launch, BASE_CMP(x->kern, y->kern)));
}

/* Kernels of the device launched in the window, sorted by GPU start. */
static int collect(const ik_trace *t, ik_step *s, import_key *calls, op_order *ord)
{
    for (size_t i = 0; i < t->nkern; i++) {
        const ik_kernel *k = &t->kern[i];
        if (k->device != s->device)
            continue;
        import_key q = {k->corr, 0}, *c = NULL;
        if (k->corr >= 0)
            c = bsearch(&q, calls, t->ncall, sizeof(*calls), import_key_cmp);
        double launch = c ? t->call[c->idx].ts : k->ts;
        if (launch < s->start || launch >= s->end)
            continue;
        ord[s->n++] = (op_order){k->ts, launch, i};
    }
    qsort(ord, s->n, sizeof(*ord), cmp_op);
    if (!(s->kern = malloc(s->n * sizeof(size_t) + 1)) ||
        !(s->launch = malloc(s->n * sizeof(double) + 1)) ||
        !(s->tid = malloc(s->n * sizeof(int64_t) + 1)) ||
        !(s->ext = malloc(s->n * sizeof(int64_t) + 1)))
        return -1;
    for (size_t i = 0; i < s->n; i++) {
        const ik_kernel *k = &t->kern[ord[i].kern];
        import_key q = {k->corr, 0}, *c = NULL;
        if (k->corr >= 0)
            c = bsearch(&q, calls, t->ncall, sizeof(*calls), import_key_cmp);
        s->kern[i] = ord[i].kern;
        s->launch[i] = ord[i].launch;
        s->tid[i] = c ? t->call[c->idx].tid : -1;
        s->ext[i] = c && t->call[c->idx].ext >= 0 ? t->call[c->idx].ext : k->ext;
    }
    return 0;
}

int ik_step_select(const ik_trace *t, const import_opts *o, ik_step *s, char *msg, size_t cap)
{
    *s = (ik_step){.device = main_device(t)};
    import_key *calls = malloc(t->ncall * sizeof(*calls) + 1);
    op_order *ord = malloc(t->nkern * sizeof(*ord) + 1);
    int rc = -1;
    if (calls && ord) {
        for (size_t i = 0; i < t->ncall; i++)
            calls[i] = (import_key){t->call[i].corr, i};
        qsort(calls, t->ncall, sizeof(*calls), import_key_cmp);
        rc = pick_step(t, calls, o, s, msg, cap);
        rc = rc ? -2 : collect(t, s, calls, ord);
    }
    free(calls);
    free(ord);
    if (rc == -2)
        return -1;
    if (rc)
        snprintf(msg, cap, "%s: error: out of memory", t->path);
    else if (!s->n) {
        snprintf(msg, cap, "%s: error: no GPU kernels (cat \"kernel\") in the step", t->path);
        rc = -1;
    }
    return rc;
}

void ik_step_free(ik_step *s)
{
    free(s->kern);
    free(s->launch);
    free(s->tid);
    free(s->ext);
    *s = (ik_step){0};
}

int ik_step_ops(const ik_trace *t, const ik_step *s, plan_model *m, char *msg, size_t cap)
{
    import_default_hw(m);
    /* Streams numbered from 0 in the order the step first uses them, as the step model builder
     * numbers libshim's. */
    int64_t seen[256];
    size_t nseen = 0;
    for (size_t i = 0; i < s->n; i++) {
        const ik_kernel *k = &t->kern[s->kern[i]];
        size_t st = 0;
        while (st < nseen && seen[st] != k->stream)
            st++;
        if (st == nseen && nseen < 256)
            seen[nseen++] = k->stream;
        if (plan_model_add_op(m, k->dur, (uint32_t)st)) {
            snprintf(msg, cap, "%s: error: too many operations for a model", t->path);
            return -1;
        }
    }
    return 0;
}
