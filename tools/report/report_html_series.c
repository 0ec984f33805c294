/* report_html_series.c — a memory chart's data: the program's bytes on one device over time (the
 * alloc/free walk of report_stats_compute, report_stats.held) split by residency state with the
 * transition records of that device's manager (format 1.2 on: each unit's state is its last
 * transition's `to`, its size the bytes of its last evict or restore; 1.8 names their device),
 * downsampled to a few samples per pixel column. */
#include "report_html.h"

#include "base_array.h"
#include "shim_trace.h"
#include "shim_trace_format.h"

#include <stdlib.h>
#include <string.h>

typedef struct unit {
    uint64_t bytes;
    uint8_t state;
} unit;

/* The walk: the current state and the bucket being filled. */
typedef struct walk {
    html_series *h;
    size_t cap;
    report_map ids; /* unit id -> index in units */
    unit *units;
    size_t nunits, ucap;
    uint64_t total, host, moving;
    /* the bucket's candidates, by arrival (seq); have == 0: the bucket is empty */
    size_t bucket;
    int have;
    html_point lo, hi, dev, last;
    uint64_t lo_seq, hi_seq, dev_seq, last_seq, seq;
} walk;

static uint64_t sub_sat(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

/* Adds (sign > 0) or takes from w's totals the bytes unit u has off the device in its state. */
static void count(walk *w, const unit *u, int sign)
{
    uint64_t *x = u->state == SHIM_RS_HOST                                        ? &w->host
                  : u->state == SHIM_RS_EVICTING || u->state == SHIM_RS_RESTORING ? &w->moving
                                                                                  : NULL;
    if (x != NULL)
        *x = sign > 0 ? add_sat(*x, u->bytes) : sub_sat(*x, u->bytes);
}

static int on_transition(walk *w, const report_rec *r)
{
    uint64_t k;
    if (!report_map_get(&w->ids, r->a, &k)) {
        if (base_array_grow((void **)&w->units, &w->ucap, w->nunits + 1, sizeof *w->units) != 0 ||
            report_map_put(&w->ids, r->a, w->nunits) != 0)
            return -1;
        k = w->nunits++;
        w->units[k] = (unit){0, SHIM_RS_NONE};
    }
    unit *u = &w->units[k];
    count(w, u, -1);
    if (r->b > 0)
        u->bytes = r->b; /* an evict's or restore's copy: the unit's size */
    u->state = r->sub4;
    count(w, u, +1);
    return 0;
}

static int emit(walk *w, const html_point *pt)
{
    html_series *h = w->h;
    if (base_array_grow((void **)&h->pts, &w->cap, h->n + 1, sizeof *h->pts) != 0)
        return -1;
    h->pts[h->n++] = *pt;
    return 0;
}

/* The bucket's candidates, each once, in arrival order. */
static int flush(walk *w)
{
    if (!w->have)
        return 0;
    w->have = 0;
    const html_point *pts[4] = {&w->lo, &w->hi, &w->dev, &w->last};
    uint64_t seqs[4] = {w->lo_seq, w->hi_seq, w->dev_seq, w->last_seq};
    for (int i = 1; i < 4; i++) /* four: insertion sort by seq */
        for (int j = i; j > 0 && seqs[j] < seqs[j - 1]; j--) {
            uint64_t ts = seqs[j];
            seqs[j] = seqs[j - 1];
            seqs[j - 1] = ts;
            const html_point *tp = pts[j];
            pts[j] = pts[j - 1];
            pts[j - 1] = tp;
        }
    for (int i = 0; i < 4; i++)
        if ((i == 0 || seqs[i] != seqs[i - 1]) && emit(w, pts[i]) != 0)
            return -1;
    return 0;
}

static size_t bucket_of(const html_series *h, uint64_t t)
{
    if (t <= h->t_lo)
        return 0;
    double f = (double)(t - h->t_lo) / (double)(h->t_hi - h->t_lo) * (double)h->buckets;
    return f >= (double)(h->buckets - 1) ? h->buckets - 1 : (size_t)f;
}

/* A change point at time t: into its bucket's candidates. */
static int sample(walk *w, uint64_t t)
{
    uint64_t off = add_sat(w->host, w->moving);
    html_point pt = {t, w->total, sub_sat(w->total, off), w->host, w->moving};
    size_t b = bucket_of(w->h, t);
    if (w->have && b != w->bucket && flush(w) != 0)
        return -1;
    uint64_t seq = w->seq++;
    w->h->changes++;
    if (!w->have) {
        w->have = 1;
        w->bucket = b;
        w->lo = w->hi = w->dev = pt;
        w->lo_seq = w->hi_seq = w->dev_seq = seq;
    }
    if (pt.total < w->lo.total)
        w->lo = pt, w->lo_seq = seq;
    if (pt.total > w->hi.total)
        w->hi = pt, w->hi_seq = seq;
    if (pt.device > w->dev.device)
        w->dev = pt, w->dev_seq = seq;
    w->last = pt;
    w->last_seq = seq;
    return 0;
}

/* Contract in report_html.h. */
int html_series_compute(html_series *out, const report_trace *t, const report_stats *s,
                        size_t buckets, uint32_t device)
{
    memset(out, 0, sizeof *out);
    out->device = device;
    out->buckets = buckets ? buckets : 1;
    out->t_lo = t->n && t->recs[0].t_ns < t->start_ns ? t->recs[0].t_ns : t->start_ns;
    out->t_hi = t->n && t->recs[t->n - 1].t_ns > out->t_lo ? t->recs[t->n - 1].t_ns : out->t_lo + 1;
    walk w = {.h = out};
    size_t k = 0;
    int rc = sample(&w, out->t_lo); /* nothing held before the first record */
    for (size_t i = 0; rc == 0 && i < t->n; i++) {
        const report_rec *r = &t->recs[i];
        int changed = 0;
        for (; k < s->nheld && s->held[k].rec == i; k++)
            if (s->held[k].device == device) {
                w.total = s->held[k].bytes;
                changed = 1;
            }
        if (r->kind == SHIM_TRACE_TRANSITION &&
            report_record_device(t, r, s->primary_device) == device) {
            rc = on_transition(&w, r);
            changed = 1;
        }
        if (rc == 0 && changed)
            rc = sample(&w, r->t_ns);
    }
    if (rc == 0)
        rc = flush(&w);
    report_map_free(&w.ids);
    free(w.units);
    if (rc != 0)
        html_series_free(out);
    return rc;
}

/* Contract in report_html.h. */
void html_series_free(html_series *h)
{
    free(h->pts);
    memset(h, 0, sizeof *h);
}
