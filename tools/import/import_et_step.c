/* import_et_step.c — which ProfilerStep#N of an execution trace alone is the step: --step N, or
 * the last complete one, judged by the operations each holds. A profiler stopped while its last
 * step was starting leaves that step's annotation with little or nothing under it (one node,
 * ProfilerStep#N alone); the steps before it are whole (another step follows each), and a
 * training loop repeats its work, so a last step that holds fewer operations than any step before
 * it was cut short, and the one before it is taken instead (and said). */
#include "import_et.h"

#include <stdlib.h>
#include <string.h>

typedef struct window {
    long long num;
    int64_t lo, hi;
    size_t nodes, ops;
} window;

static int by_lo(const void *a, const void *b)
{
    const window *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int by_num(const void *a, const void *b)
{
    const window *x = a, *y = b;
    return x->num < y->num ? -1 : x->num > y->num;
}

/* The rf_id a node is ordered by. */
static int64_t key(const ie_node *n)
{
    return n->rf >= 0 ? n->rf : n->id;
}

/* The step annotations of e into a new array *out (by window start), each with its window: its
 * own rf_id to the last in its subtree. The count, or -1 when memory runs out. */
static long windows(const ie_trace *e, window **out)
{
    size_t n = 0;
    *out = malloc(e->nnode * sizeof **out + 1);
    if (!*out)
        return -1;
    for (size_t i = 0; i < e->nnode; i++) {
        const char *h = e->node[i].name;
        char *end;
        if (strncmp(h, "ProfilerStep#", 13) || h[13] < '0' || h[13] > '9')
            continue;
        long long k = strtoll(h + 13, &end, 10);
        if (*end)
            continue;
        (*out)[n++] = (window){k, key(&e->node[i]), e->node[i].sub_end, 0, 0};
    }
    qsort(*out, n, sizeof **out, by_lo);
    return (long)n;
}

/* bsearch's order of a node's key (an int64_t) against a window: before it, in it, after it. */
static int key_in(const void *k, const void *win)
{
    int64_t v = *(const int64_t *)k;
    const window *w = win;
    return v < w->lo ? -1 : v > w->hi;
}

/* Counts into each window the nodes and the operations (is_op) whose rf_id lies in it (windows,
   sorted by start, do not overlap in a trace; where they do, the one bsearch finds counts it). */
static void count(const ie_trace *e, const unsigned char *is_op, window *w, size_t nw)
{
    for (size_t i = 0; i < e->nnode; i++) {
        int64_t k = key(&e->node[i]);
        window *in = bsearch(&k, w, nw, sizeof *w, key_in);
        if (in) {
            in->nodes++;
            in->ops += is_op[i] != 0;
        }
    }
}

/* The default step of w[0..n) sorted by number: the last, unless it holds fewer operations than
   the least of the steps before it that hold any; then the last before it that holds any. */
static const window *last_complete(const window *w, size_t n)
{
    size_t least = SIZE_MAX;
    for (size_t i = 0; i + 1 < n; i++)
        if (w[i].ops && w[i].ops < least)
            least = w[i].ops;
    if (w[n - 1].ops && (least == SIZE_MAX || w[n - 1].ops >= least))
        return &w[n - 1];
    for (size_t i = n - 1; i-- > 0;)
        if (w[i].ops)
            return &w[i];
    return &w[n - 1]; /* no step holds an operation: the last, which the caller refuses */
}

/* Contract in import_et.h. */
int ie_step_pick(const ie_trace *e, const import_opts *o, const unsigned char *is_op,
                 ie_step_window *s, char *msg, size_t cap)
{
    window *w;
    long nw = windows(e, &w);
    if (nw < 0) {
        snprintf(msg, cap, "%s: error: out of memory", e->path);
        return -1;
    }
    *s = (ie_step_window){.num = -1};
    if (nw == 0) {
        free(w);
        if (o->step < 0)
            return 0;
        snprintf(msg, cap, "%s: error: --step %lld: the trace has no ProfilerStep#N annotation",
                 e->path, (long long)o->step);
        return -1;
    }
    count(e, is_op, w, (size_t)nw);
    qsort(w, (size_t)nw, sizeof *w, by_num);
    const window *pick = NULL, *last = &w[nw - 1];
    for (long i = 0; o->step >= 0 && i < nw; i++)
        if (w[i].num == o->step)
            pick = &w[i];
    if (o->step >= 0 && !pick) {
        snprintf(msg, cap, "%s: error: no ProfilerStep#%lld in the trace (it has #%lld to #%lld)",
                 e->path, (long long)o->step, w[0].num, last->num);
        free(w);
        return -1;
    }
    if (!pick)
        pick = last_complete(w, (size_t)nw);
    if (pick != last && o->step < 0)
        import_note(o, e->path,
                    "ProfilerStep#%lld, the last step, holds %zu operations (%zu nodes), fewer "
                    "than any step before it: the profiler stopped it short; ProfilerStep#%lld, "
                    "the last complete step, is the model (--step N picks another)",
                    last->num, last->ops, last->nodes, pick->num);
    import_note(o, e->path,
                "ProfilerStep#%lld (%zu nodes, %zu operations; steps #%lld to #%lld in the trace)",
                pick->num, pick->nodes, pick->ops, w[0].num, last->num);
    *s = (ie_step_window){.num = pick->num, .lo = pick->lo, .hi = pick->hi, .ops = pick->ops};
    free(w);
    return 1;
}
