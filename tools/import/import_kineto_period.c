/* import_kineto_period.c — the training step of a Kineto trace recorded without
 * ProfilerStep#N annotations, found from the repeating pattern of its kernels' names, in launch
 * order (the program's own order; GPU start order may interleave streams differently each
 * step), as libshim finds the step in a process from its launches.
 *
 * The pattern: for each period P, the longest suffix of the sequence in which every kernel
 * names the one P before it. A training loop makes the whole trace after its first step or two
 * periodic with the step's length L, and with 2L, 3L, ... as well, which reach back no further;
 * the smallest P whose periodic suffix holds two whole periods and reaches back furthest is the
 * step. Its phase: the launch after the host's longest pause, summed over the occurrences
 * (where a loop reads its loss, loads its batch, zeroes its gradients). */
#include "import_kineto.h"

#include <stdlib.h>

/* Work bound of the search: a long sequence of one repeated kernel makes every period walk
 * the whole trace. */
#define PERIOD_WORK (1ull << 28)

typedef struct launch {
    double at; /* CPU time of the launch call (the kernel's own start without one) */
    uint64_t name;
} launch;

static int cmp_launch(const void *a, const void *b)
{
    const launch *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* Start of the longest suffix of k[0..n) in which k[i].name == k[i - p].name. */
static size_t periodic_from(const launch *k, size_t n, size_t p, uint64_t *work)
{
    size_t i = n - p;
    while (i > 0 && k[i - 1].name == k[i - 1 + p].name)
        i--;
    *work += n - p - i + 1;
    return i;
}

/* The device's kernels in launch order, into a new array (NULL when memory runs out). */
static launch *launches(const ik_trace *t, const import_key *calls, int64_t device, size_t *n)
{
    launch *k = malloc(t->nkern * sizeof(*k) + 1);
    if (!k)
        return NULL;
    *n = 0;
    for (size_t i = 0; i < t->nkern; i++) {
        const ik_kernel *kn = &t->kern[i];
        if (kn->device != device)
            continue;
        import_key q = {kn->corr, 0}, *c = NULL;
        if (kn->corr >= 0)
            c = bsearch(&q, calls, t->ncall, sizeof(*calls), import_key_cmp);
        k[(*n)++] = (launch){c ? t->call[c->idx].ts : kn->ts, kn->name};
    }
    qsort(k, *n, sizeof(*k), cmp_launch);
    return k;
}

int ik_find_period(const ik_trace *t, const import_key *calls, const import_opts *o, ik_step *s)
{
    size_t n = 0;
    launch *k = launches(t, calls, s->device, &n);
    if (!k)
        return -1;
    size_t best_p = 0, best_s = n;
    uint64_t work = 0;
    for (size_t p = 1; 2 * p <= n && work < PERIOD_WORK; p++) {
        size_t from = periodic_from(k, n, p, &work);
        if (n - from >= 2 * p && from < best_s)
            best_p = p, best_s = from;
    }
    if (!best_p) {
        free(k);
        return 0;
    }
    size_t p = best_p, from = best_s;
    double *pause = calloc(p, sizeof(*pause));
    if (!pause) {
        free(k);
        return -1;
    }
    for (size_t i = from + 1; i < n; i++)
        pause[(i - from) % p] += k[i].at - k[i - 1].at;
    size_t phase = 0;
    for (size_t j = 1; j < p; j++)
        phase = pause[j] > pause[phase] ? j : phase;
    /* The last whole occurrence that at least one launch follows. */
    size_t first = from + phase;
    while (first + 2 * p < n)
        first += p;
    int found = first + p < n;
    if (found) {
        s->start = k[first].at, s->end = k[first + p].at;
        import_note(
            o, t->path,
            "no ProfilerStep#N annotations: a step of %zu kernels found from their repeating "
            "pattern (%zu occurrences from launch %zu on); the model is the last whole one another "
            "follows (launches %zu to %zu), starting after the host's longest pause in the pattern",
            p, (n - from) / p, from, first, first + p - 1);
    }
    free(pause);
    free(k);
    return found;
}
