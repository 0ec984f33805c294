/* replay_sched.c — what replay does at each operation of a model: the allocations each op touches,
 * makes and frees, its stream, and the cross-stream waits that make the program race-free.
 *
 * Lifetimes, as planner/MODEL-FORMAT.md defines them and plan_simulate counts device bytes:
 *   - an allocation born at op B is made just before op B is launched, and one dying at op D is
 *     freed just after op D is launched; every step makes and frees them again;
 *   - birth -1 (exists before the step; not cyclic): made before op 0 of every step, as the
 *     planner adds such births at op 0; death -1 (outlives the step; not cyclic): freed after
 *     the step's last op, as the planner removes such deaths there. The model does not pair the
 *     allocation that outlives one step with the one that exists before the next, so their
 *     contents are not carried over: like every allocation made in the step, the first op that
 *     touches it in the step writes it without reading it (a producer writes a fresh tensor);
 *   - cyclic (both -1): made once before the first step with seeded contents, freed after the
 *     last step; every touch reads and writes it;
 *   - with --carry, the step's k-th allocation of a size that outlives it and its k-th one of that
 *     size that exists before it (in model order) are one allocation across the boundary, as a
 *     training step's gradients are (made in the backward pass, freed by the next step's
 *     zero_grad): it is not freed at the step's end, and it is the next step's allocation that
 *     exists before it (not made again). Its contents are still not read across: the first
 *     touch in a step writes it.
 *
 * Streams (with --streams): model stream 0 is the legacy default stream; every other id gets a
 * stream created non-blocking, as PyTorch creates its side streams (c10/cuda/CUDAStream.cpp:
 * `kDefaultFlags = cudaStreamNonBlocking`), so no implicit legacy-stream ordering hides a
 * missing wait. Rule: every touch reads and writes, so an op waits (an event recorded after the
 * producer, cudaStreamWaitEvent) for the previous op of the step that touched the same
 * allocation when that op ran on another stream; ops of one stream are ordered by the stream. An
 * async allocation is made on the stream of its first touch in the step (where PyTorch's
 * allocator would make it: the producer's current stream) and freed on the stream of its last
 * touch, which is ordered after every earlier touch by the rule above. Steps are ordered as a
 * whole: every side stream waits for an event recorded on the legacy stream when the step
 * starts, and at its end the legacy stream waits for every side stream and the host
 * synchronises it (replay_run.c), so no wait crosses a step boundary. */
#include "replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool replay_sched_cyclic(const struct replay_sched *s, uint32_t a)
{
    const plan_alloc *x = &s->m->allocs[a];

    return x->birth == PLAN_NO_OP && x->death == PLAN_NO_OP;
}

static int oom(const char *what)
{
    fprintf(stderr, "replay: out of memory for the schedule's %s\n", what);
    return -1;
}

/* Prefix sums of counts[0..nops) into l->first and room for the items. */
static int list_alloc(struct replay_list *l, size_t nops, const uint32_t *counts, const char *what)
{
    size_t total = 0;

    l->first = malloc((nops + 1) * sizeof *l->first);
    for (size_t q = 0; l->first && q < nops; q++) {
        l->first[q] = (uint32_t)total;
        total += counts[q];
    }
    if (!l->first)
        return oom(what);
    l->first[nops] = (uint32_t)total;
    l->items = malloc((total ? total : 1) * sizeof *l->items);
    return l->items ? 0 : oom(what);
}

static int map_streams(struct replay_sched *s, bool streams)
{
    s->nstreams = 1; /* index 0: the legacy stream, model stream 0 */
    for (size_t q = 0; q < s->nops; q++) {
        uint32_t id = streams ? s->m->ops[q].stream : 0;
        size_t i = 0;
        while (i < s->nstreams && s->stream_ids[i] != id)
            i++;
        if (i == s->nstreams) {
            if (s->nstreams == REPLAY_MAX_STREAMS) {
                fprintf(stderr, "replay: the model uses more than %d streams\n",
                        REPLAY_MAX_STREAMS);
                return -1;
            }
            s->stream_ids[s->nstreams++] = id;
        }
        s->op_stream[q] = (uint32_t)i;
    }
    return 0;
}

/* The op before which allocation a is made, and the op after which it is freed. */
static uint32_t birth_op(const plan_alloc *x)
{
    return x->birth == PLAN_NO_OP ? 0 : (uint32_t)x->birth;
}

static uint32_t death_op(const plan_alloc *x, size_t nops)
{
    return x->death == PLAN_NO_OP ? (uint32_t)(nops - 1) : (uint32_t)x->death;
}

/* The bytes touch k (of allocation x) reads when it reads fewer than x holds, else 0. */
static uint64_t partial_read(const plan_model *m, const plan_alloc *x, size_t k)
{
    uint64_t r = m->touch_reads ? m->touch_reads[k] : 0;
    return r < x->bytes ? r : 0;
}

static int build_touches(struct replay_sched *s, uint32_t *counts)
{
    const plan_model *m = s->m;

    memset(counts, 0, s->nops * sizeof *counts);
    for (size_t t = 0; t < m->ntouches; t++)
        counts[m->touches[t]]++;
    if (list_alloc(&s->touch, s->nops, counts, "touches") != 0 ||
        !(s->fresh = calloc(m->ntouches ? m->ntouches : 1, 1)) ||
        !(s->read = calloc(m->ntouches ? m->ntouches : 1, sizeof *s->read)))
        return oom("touches");
    for (size_t q = 0; q < s->nops; q++) {
        counts[q] = s->touch.first[q]; /* fill cursor */
        uint32_t n = s->touch.first[q + 1] - s->touch.first[q];
        if (n > s->max_touch)
            s->max_touch = n;
    }
    for (uint32_t a = 0; a < m->nallocs; a++) {
        const plan_alloc *x = &m->allocs[a];
        for (uint32_t k = 0; k < x->ntouch; k++) {
            uint32_t item = counts[m->touches[x->touch_first + k]]++;
            s->touch.items[item] = a;
            s->fresh[item] = k == 0 && !replay_sched_cyclic(s, a);
            s->read[item] = replay_sched_cyclic(s, a) ? partial_read(m, x, x->touch_first + k) : 0;
        }
    }
    return 0;
}

/* Births or deaths of non-cyclic allocations, by op. */
static int build_lifetimes(struct replay_sched *s, uint32_t *counts, bool deaths)
{
    const plan_model *m = s->m;
    struct replay_list *l = deaths ? &s->deaths : &s->births;

    memset(counts, 0, s->nops * sizeof *counts);
    for (uint32_t a = 0; a < m->nallocs; a++)
        if (!replay_sched_cyclic(s, a))
            counts[deaths ? death_op(&m->allocs[a], s->nops) : birth_op(&m->allocs[a])]++;
    if (list_alloc(l, s->nops, counts, deaths ? "deaths" : "births") != 0)
        return -1;
    for (size_t q = 0; q < s->nops; q++)
        counts[q] = l->first[q];
    for (uint32_t a = 0; a < m->nallocs; a++)
        if (!replay_sched_cyclic(s, a))
            l->items[counts[deaths ? death_op(&m->allocs[a], s->nops)
                                   : birth_op(&m->allocs[a])]++] = a;
    return 0;
}

static void alloc_streams(struct replay_sched *s)
{
    const plan_model *m = s->m;

    for (uint32_t a = 0; a < m->nallocs; a++) {
        const plan_alloc *x = &m->allocs[a];
        if (replay_sched_cyclic(s, a)) {
            s->alloc_stream[a] = s->free_stream[a] = 0;
            s->ncyclic++;
        } else if (x->ntouch) {
            s->alloc_stream[a] = s->op_stream[m->touches[x->touch_first]];
            s->free_stream[a] = s->op_stream[m->touches[x->touch_first + x->ntouch - 1]];
        } else {
            s->alloc_stream[a] = s->free_stream[a] = s->op_stream[birth_op(x)];
        }
    }
}

/* The waits of the stream rule, in op order; waited[T * nstreams + S] is the latest op of
   stream S that stream T already waits for in this step (later waits for earlier ops of S are
   implied). */
static int build_waits(struct replay_sched *s, int32_t *last, int32_t *waited)
{
    size_t n = 0, cap = 1024;

    s->waits.first = malloc((s->nops + 1) * sizeof *s->waits.first);
    s->waits.items = malloc(cap * sizeof *s->waits.items);
    if (!s->waits.first || !s->waits.items)
        return oom("waits");
    for (uint32_t q = 0; q < s->nops; q++) {
        uint32_t t = s->op_stream[q];
        s->waits.first[q] = (uint32_t)n;
        for (uint32_t i = s->touch.first[q]; i < s->touch.first[q + 1]; i++) {
            uint32_t a = s->touch.items[i];
            int32_t p = last[a];
            last[a] = (int32_t)q;
            if (p < 0 || s->op_stream[p] == t || waited[t * s->nstreams + s->op_stream[p]] >= p)
                continue;
            waited[t * s->nstreams + s->op_stream[p]] = p;
            s->record_after[p] = 1;
            if (n == cap) {
                uint32_t *more = realloc(s->waits.items, 2 * cap * sizeof *more);
                if (!more)
                    return oom("waits");
                s->waits.items = more;
                cap *= 2;
            }
            s->waits.items[n++] = (uint32_t)p;
        }
    }
    s->waits.first[s->nops] = (uint32_t)n;
    return 0;
}

/* With carry: pairs the k-th allocation of each size that outlives the step with the k-th of
   that size that exists before it (replay_sched.carry_to). */
static int build_carry(struct replay_sched *s, bool carry)
{
    const plan_model *m = s->m;
    size_t na = m->nallocs ? m->nallocs : 1;

    if (!(s->carry_to = malloc(na * sizeof *s->carry_to)))
        return oom("carried allocations");
    memset(s->carry_to, 0xff, na * sizeof *s->carry_to);
    for (uint32_t a = 0; carry && a < m->nallocs; a++) {
        const plan_alloc *x = &m->allocs[a];
        if (x->birth == PLAN_NO_OP || x->death != PLAN_NO_OP)
            continue;
        /* the k-th outliving one of its size */
        uint32_t k = 0;
        for (uint32_t b = 0; b < a; b++)
            k += m->allocs[b].bytes == x->bytes && m->allocs[b].birth != PLAN_NO_OP &&
                 m->allocs[b].death == PLAN_NO_OP;
        for (uint32_t b = 0; b < m->nallocs; b++) {
            const plan_alloc *y = &m->allocs[b];
            if (y->bytes == x->bytes && y->birth == PLAN_NO_OP && y->death != PLAN_NO_OP &&
                k-- == 0) {
                s->carry_to[a] = (int32_t)b;
                break;
            }
        }
    }
    return 0;
}

int replay_sched_build(struct replay_sched *s, const plan_model *m, bool streams, bool carry)
{
    memset(s, 0, sizeof *s);
    s->m = m;
    s->nops = m->nops;
    s->nallocs = m->nallocs;
    size_t na = m->nallocs ? m->nallocs : 1;
    uint32_t *counts = malloc(s->nops * sizeof *counts);
    int32_t *last = malloc(na * sizeof *last), *waited = NULL;
    int rc = -1;

    s->op_stream = malloc(s->nops * sizeof *s->op_stream);
    s->record_after = calloc(s->nops, 1);
    s->alloc_stream = malloc(na * sizeof *s->alloc_stream);
    s->free_stream = malloc(na * sizeof *s->free_stream);
    if (!counts || !last || !s->op_stream || !s->record_after || !s->alloc_stream ||
        !s->free_stream)
        oom("tables");
    else if (map_streams(s, streams) == 0 && build_touches(s, counts) == 0 &&
             build_lifetimes(s, counts, false) == 0 && build_lifetimes(s, counts, true) == 0 &&
             !(waited = malloc(s->nstreams * s->nstreams * sizeof *waited)))
        oom("waits");
    else if (waited) {
        alloc_streams(s);
        memset(last, 0xff, na * sizeof *last); /* -1: not touched yet in the step */
        memset(waited, 0xff, s->nstreams * s->nstreams * sizeof *waited);
        rc = build_waits(s, last, waited);
    }
    if (rc == 0)
        rc = build_carry(s, carry);
    free(counts);
    free(last);
    free(waited);
    return rc;
}

void replay_sched_free(struct replay_sched *s)
{
    struct replay_list *lists[] = {&s->touch, &s->births, &s->deaths, &s->waits};

    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        free(lists[i]->first);
        free(lists[i]->items);
    }
    free(s->fresh);
    free(s->read);
    free(s->op_stream);
    free(s->record_after);
    free(s->alloc_stream);
    free(s->free_stream);
    free(s->carry_to);
    memset(s, 0, sizeof *s);
}
