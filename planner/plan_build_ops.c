/* planner/plan_build_ops.c — the operations of a step: each launch with its measured time, or a
 * time filled in from the same function's other launches, its stream, and the idle time measured
 * before it (none when none was). */
#include "plan_internal.h"

#include "base_order.h"

#include <stdlib.h>

/* Something found by launch index: a launch (at: its index) or a kernel time (v). */
typedef struct seq_key {
    uint64_t seq, func;
    size_t at;
    double v;
} seq_key;

static int by_seq(const void *pa, const void *pb)
{
    const seq_key *a = pa, *b = pb;
    return BASE_CMP_THEN(a->seq, b->seq, BASE_CMP(a->at, b->at));
}

static int by_func(const void *pa, const void *pb)
{
    const seq_key *a = pa, *b = pb;
    return BASE_CMP_THEN(a->func, b->func, BASE_CMP(a->v, b->v));
}

/* The first of n keys sorted by seq with this seq, or NULL. */
static const seq_key *find_seq(const seq_key *k, size_t n, uint64_t seq)
{
    size_t lo = 0;
    BASE_BSEARCH(lo, n, mid, k[mid].seq < seq);
    return lo < n && k[lo].seq == seq ? &k[lo] : NULL;
}

/* The median of v[0..n) (sorted; n > 0): the middle value, or the mean of the two middle ones. */
static double median(const seq_key *v, size_t n)
{
    return n % 2 ? v[n / 2].v : (v[n / 2 - 1].v + v[n / 2].v) / 2;
}

/* The tables of one computation: launches and times by seq, times by function. */
typedef struct tables {
    seq_key *launch; /* by seq */
    seq_key *time;   /* by seq (func 0) */
    seq_key *func;   /* the timed launches, by function then time */
    seq_key *idle;   /* idle times by seq (the first given of a seq first; < 0: disturbed) */
    size_t nlaunch, ntime, nfunc, nidle;
    double all_median; /* of every time; 0 when there is none */
} tables;

static void tables_free(tables *t)
{
    free(t->launch);
    free(t->time);
    free(t->func);
    free(t->idle);
}

static plan_err tables_init(tables *t, const plan_builder *b)
{
    *t = (tables){0};
    t->launch = malloc((b->nlaunches + 1) * sizeof(*t->launch));
    t->time = malloc((b->ntimes + 1) * sizeof(*t->time));
    t->func = malloc((b->ntimes + 1) * sizeof(*t->func));
    t->idle = malloc((b->nidles + 1) * sizeof(*t->idle));
    if (!t->launch || !t->time || !t->func || !t->idle) {
        tables_free(t);
        return PLAN_ERR_NOMEM;
    }
    for (size_t i = 0; i < b->nlaunches; i++)
        t->launch[i] = (seq_key){.seq = b->launches[i].seq, .func = b->launches[i].func, .at = i};
    t->nlaunch = b->nlaunches;
    qsort(t->launch, t->nlaunch, sizeof(*t->launch), by_seq);
    for (size_t i = 0; i < b->ntimes; i++) {
        const plan_bpair *tm = &b->times[i];
        const seq_key *l = find_seq(t->launch, t->nlaunch, tm->seq);
        t->time[i] = (seq_key){.seq = tm->seq, .at = i, .v = tm->usec};
        if (l)
            t->func[t->nfunc++] =
                (seq_key){.seq = tm->seq, .func = l->func, .at = i, .v = tm->usec};
    }
    t->ntime = b->ntimes;
    qsort(t->time, t->ntime, sizeof(*t->time), by_func); /* func all 0: by time */
    t->all_median = t->ntime ? median(t->time, t->ntime) : 0;
    qsort(t->time, t->ntime, sizeof(*t->time), by_seq);
    qsort(t->func, t->nfunc, sizeof(*t->func), by_func);
    for (size_t i = 0; i < b->nidles; i++)
        t->idle[i] = (seq_key){.seq = b->idles[i].seq, .at = i, .v = b->idles[i].usec};
    t->nidle = b->nidles;
    qsort(t->idle, t->nidle, sizeof(*t->idle), by_seq);
    return PLAN_OK;
}

/* The median time of func's timed launches, or the median of all times when it has none. */
static double func_median(const tables *t, uint64_t func)
{
    size_t lo = 0;
    BASE_BSEARCH(lo, t->nfunc, mid, t->func[mid].func < func);
    size_t end = lo;
    while (end < t->nfunc && t->func[end].func == func)
        end++;
    return end > lo ? median(t->func + lo, end - lo) : t->all_median;
}

/* The number of stream among the step's streams so far, added when new. */
static uint32_t stream_number(uint64_t *seen, size_t *nseen, uint64_t stream)
{
    for (size_t i = 0; i < *nseen; i++)
        if (seen[i] == stream)
            return (uint32_t)i;
    seen[*nseen] = stream;
    return (uint32_t)(*nseen)++;
}

/* Contract in plan_internal.h. */
bool plan_build_has_time(const plan_builder *b, uint64_t first, uint64_t end)
{
    for (size_t i = 0; i < b->ntimes; i++)
        if (b->times[i].seq >= first && b->times[i].seq < end)
            return true;
    return false;
}

/* Contract in plan_internal.h. */
size_t plan_build_launches_in(const plan_builder *b, uint64_t first, uint64_t end)
{
    size_t n = 0;
    for (size_t i = 0; i < b->nlaunches; i++)
        n += b->launches[i].seq >= first && b->launches[i].seq < end;
    return n;
}

enum { OP_TIMED = 1, OP_IDLE = 2 }; /* what was measured of an operation */

/* One operation: its launch (SIZE_MAX: no launch event), duration and stream; what was measured
   of it into *got. */
static void one_op(const plan_builder *b, const tables *t, uint64_t seq, plan_op *op,
                   size_t *launch_of, uint64_t *seen, size_t *nseen, plan_build_info *info,
                   uint8_t *got)
{
    const seq_key *l = find_seq(t->launch, t->nlaunch, seq);
    const seq_key *tm = find_seq(t->time, t->ntime, seq);
    *launch_of = l ? l->at : SIZE_MAX;
    uint64_t stream = l ? b->launches[l->at].stream : 0;
    op->stream = stream_number(seen, nseen, stream);
    const seq_key *idle = find_seq(t->idle, t->nidle, seq);
    op->idle_us = idle && idle->v >= 0 ? idle->v : 0;
    *got = idle ? OP_IDLE : 0;
    if (tm) {
        op->dur_us = tm->v;
        info->timed++;
        *got |= OP_TIMED;
        return;
    }
    op->dur_us = l ? func_median(t, l->func) : t->all_median;
    info->filled++;
    info->unrecorded += !l;
}

/* Whether an idle time of launches [first, end) was disturbed (plan_build_kernel_disturbed). */
static bool step_disturbed(const tables *t, uint64_t first, uint64_t end)
{
    for (size_t i = 0; i < t->nidle; i++)
        if (t->idle[i].seq >= first && t->idle[i].seq < end && t->idle[i].v < 0)
            return true;
    return false;
}

/* ops[0..n) as the step runs without timing (plan_build_timing_cost): the measured step replayed
   on one stream, each operation from the later of the previous one's end and the moment the host
   would have submitted it untimed, which is known where the device waited for the host (idle time
   measured before it): its opening record's time in the measured step, less 2 record_us for each
   timed launch before it in the step. A launch the device waited for loses the record_us its time
   holds. The idle time is what the replay leaves before each operation. */
static void untime(plan_op *ops, const uint8_t *got, size_t n, double record_us)
{
    double measured = 0, end = 0; /* the previous operation's end: measured, and untimed */
    size_t timed = 0;
    for (size_t q = 0; q < n; q++) {
        double opened = measured + ops[q].idle_us, dur = ops[q].dur_us;
        bool waited = (got[q] & OP_IDLE) && ops[q].idle_us > 0;
        double start = end;
        if (waited) {
            start = PLAN_MAX(end, opened - 2 * record_us * (double)timed);
            if (got[q] & OP_TIMED)
                dur = PLAN_MAX(0.0, dur - record_us);
        }
        measured = opened + ops[q].dur_us;
        ops[q].idle_us = start - end;
        ops[q].dur_us = dur;
        end = start + dur;
        timed += (got[q] & OP_TIMED) != 0;
    }
}

/* Contract in plan_internal.h. */
plan_err plan_build_ops(const plan_builder *b, uint64_t step, uint64_t first, uint64_t end,
                        plan_op *ops, size_t *launch_of, plan_build_info *info, char *msg,
                        size_t cap)
{
    if (!plan_build_has_time(b, first, end)) {
        plan_msg(msg, cap,
                 "step %llu (launches %llu..%llu) has no kernel time: kernels are timed only in "
                 "the profiled steps that follow the step's detection",
                 (unsigned long long)step, (unsigned long long)first,
                 (unsigned long long)(end - 1));
        return PLAN_ERR_INVALID;
    }
    tables t;
    uint64_t *seen = malloc((end - first) * sizeof(*seen));
    uint8_t *got = malloc(end - first);
    if (!seen || !got || tables_init(&t, b)) {
        free(seen);
        free(got);
        return PLAN_ERR_NOMEM;
    }
    size_t nseen = 0;
    for (uint64_t s = first; s < end; s++)
        one_op(b, &t, s, &ops[s - first], &launch_of[s - first], seen, &nseen, info,
               &got[s - first]);
    if (step_disturbed(&t, first, end)) /* the recorder's own work stood in the step's gaps */
        for (uint64_t s = first; s < end; s++)
            ops[s - first].idle_us = 0, got[s - first] = (uint8_t)(got[s - first] & ~OP_IDLE);
    if (b->record_us > 0)
        untime(ops, got, (size_t)(end - first), b->record_us);
    free(seen);
    free(got);
    tables_free(&t);
    return PLAN_OK;
}
