/* report_ranks.c — several traces as the ranks of one job: their order (by the rank each header
 * records, then pid, then the order given), their labels, each rank's steps by number and median
 * step time, and the step numbers of all of them. `summary TRACE...` (report_summary_ranks.c)
 * and `html TRACE...` (report_html_ranks.c) show the same ranks from this one place. */
#include "report.h"

#include "base_order.h"

#include <stdlib.h>
#include <string.h>

static int by_rank(const void *pa, const void *pb)
{
    const report_rank *a = pa, *b = pb;
    return BASE_CMP_THEN(a->t->rank, b->t->rank,
                         BASE_CMP_THEN(a->t->pid, b->t->pid, BASE_CMP(a->given, b->given)));
}

static int by_number(const void *pa, const void *pb)
{
    const report_step *a = *(const report_step *const *)pa, *b = *(const report_step *const *)pb;
    return a->step < b->step ? -1 : a->step > b->step;
}

static int by_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

static int by_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

/* Contract in report.h. */
double report_ranks_step_ms(const report_step *st)
{
    if (st == NULL || st->t_end < st->t_start)
        return -1;
    return (double)(st->t_end - st->t_start) / 1e6;
}

/* The median of the steps' wall times in ms (-1 without a step with a window) in *out; -1 when
   memory ran out. */
static int median_step_ms(const report_stats *s, double *out)
{
    double *v = malloc((s->nsteps + 1) * sizeof *v);
    if (v == NULL)
        return -1;
    size_t m = 0;
    for (size_t i = 0; i < s->nsteps; i++) {
        double ms = report_ranks_step_ms(&s->steps[i]);
        if (ms >= 0)
            v[m++] = ms;
    }
    qsort(v, m, sizeof *v, by_double);
    *out = m == 0 ? -1 : m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
    free(v);
    return 0;
}

/* Labels "rank R", or "rank R pid P" for every rank when two traces share a rank (a job whose
   processes did not set RANK). */
static void label_ranks(report_rank *r, size_t n)
{
    int shared = 0;
    for (size_t i = 1; i < n; i++)
        shared |= r[i].t->rank == r[i - 1].t->rank;
    for (size_t i = 0; i < n; i++) {
        if (shared)
            snprintf(r[i].label, sizeof r[i].label, "rank %d pid %d", r[i].t->rank, r[i].t->pid);
        else
            snprintf(r[i].label, sizeof r[i].label, "rank %d", r[i].t->rank);
    }
}

/* The step numbers of every rank, sorted, each once; -1 when memory ran out. */
static int union_steps(report_ranks *rk)
{
    size_t total = 0;
    for (size_t i = 0; i < rk->n; i++)
        total += rk->r[i].s->nsteps;
    uint64_t *v = malloc((total + 1) * sizeof *v);
    if (v == NULL)
        return -1;
    size_t m = 0;
    for (size_t i = 0; i < rk->n; i++)
        for (size_t k = 0; k < rk->r[i].s->nsteps; k++)
            v[m++] = rk->r[i].s->steps[k].step;
    qsort(v, m, sizeof *v, by_u64);
    size_t u = 0;
    for (size_t k = 0; k < m; k++)
        if (u == 0 || v[u - 1] != v[k])
            v[u++] = v[k];
    rk->steps = v;
    rk->nsteps = u;
    return 0;
}

/* Contract in report.h. */
int report_ranks_make(report_ranks *rk, const report_trace *t, const report_stats *s, size_t n)
{
    memset(rk, 0, sizeof *rk);
    rk->r = calloc(n + 1, sizeof *rk->r);
    if (rk->r == NULL)
        return -1;
    rk->n = n;
    for (size_t i = 0; i < n; i++) {
        report_rank *r = &rk->r[i];
        *r = (report_rank){.t = &t[i], .s = &s[i], .given = i};
        r->by_step = malloc((s[i].nsteps + 1) * sizeof *r->by_step);
        if (r->by_step == NULL || median_step_ms(&s[i], &r->median_step_ms) != 0) {
            report_ranks_free(rk);
            return -1;
        }
        for (size_t k = 0; k < s[i].nsteps; k++)
            r->by_step[k] = &s[i].steps[k];
        qsort(r->by_step, s[i].nsteps, sizeof *r->by_step, by_number);
    }
    qsort(rk->r, n, sizeof *rk->r, by_rank);
    label_ranks(rk->r, n);
    if (union_steps(rk) != 0) {
        report_ranks_free(rk);
        return -1;
    }
    return 0;
}

/* Contract in report.h. */
const report_step *report_ranks_step(const report_rank *r, uint64_t step)
{
    report_step key = {.step = step};
    const report_step *k = &key;
    const report_step **hit = bsearch(&k, r->by_step, r->s->nsteps, sizeof *r->by_step, by_number);
    return hit ? *hit : NULL;
}

/* Contract in report.h. */
void report_ranks_free(report_ranks *rk)
{
    for (size_t i = 0; rk->r && i < rk->n; i++)
        free(rk->r[i].by_step);
    free(rk->r);
    free(rk->steps);
    memset(rk, 0, sizeof *rk);
}
