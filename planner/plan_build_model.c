/* planner/plan_build_model.c — plan_build_model: the step chosen, its operations
 * (plan_build_ops.c), the allocations live during it with their bytes and lifetimes
 * (plan_build_mem.c) turned into births and deaths, the launches and copies that touch them, and
 * the link. The rules are in planner/MODEL-FORMAT.md ("Models built from a trace"). */
#include "plan_internal.h"

#include "base_array.h"
#include "base_order.h"

#include <stdlib.h>
#include <string.h>

static int by_first_seq(const void *pa, const void *pb)
{
    const plan_bstep *a = pa, *b = pb;
    return BASE_CMP_THEN(a->first_seq, b->first_seq,
                         BASE_CMP_THEN(a->step, b->step, BASE_CMP(a->mark_end, b->mark_end)));
}

/* The steps by first launch, a step marked twice kept once (its first mark). */
static plan_bstep *sorted_steps(const plan_builder *b, size_t *n)
{
    plan_bstep *s = malloc((b->nsteps + 1) * sizeof(*s));
    if (!s)
        return NULL;
    if (b->nsteps)
        memcpy(s, b->steps, b->nsteps * sizeof(*s));
    qsort(s, b->nsteps, sizeof(*s), by_first_seq);
    size_t k = 0;
    for (size_t i = 0; i < b->nsteps; i++)
        if (k == 0 || s[k - 1].first_seq != s[i].first_seq || s[k - 1].step != s[i].step)
            s[k++] = s[i];
    *n = k;
    return s;
}

/* One past the last launch of step i of s[0..n): where the next step begins, and no later than
 * the launches handed over before its mark. */
static uint64_t step_end(const plan_bstep *s, size_t n, size_t i)
{
    uint64_t end = s[i].mark_end;
    if (i + 1 < n && s[i + 1].first_seq > s[i].first_seq && s[i + 1].first_seq < end)
        end = s[i + 1].first_seq;
    return end;
}

/* The last of the steps s[0..n) (n > 0) that holds a kernel time, else the last one: each time
 * is looked up among the steps by its launch index. */
static size_t last_timed(const plan_builder *b, const plan_bstep *s, size_t n)
{
    size_t best = SIZE_MAX;
    for (size_t t = 0; t < b->ntimes; t++) {
        uint64_t seq = b->times[t].seq;
        size_t lo = 0; /* the first step beginning after seq */
        BASE_BSEARCH(lo, n, mid, s[mid].first_seq <= seq);
        if (lo > 0 && seq < step_end(s, n, lo - 1) && (best == SIZE_MAX || lo - 1 > best))
            best = lo - 1;
    }
    return best == SIZE_MAX ? n - 1 : best;
}

/* The index in s[0..n) of the step asked for, or SIZE_MAX with a message. */
static size_t pick_step(const plan_builder *b, const plan_bstep *s, size_t n, int64_t step,
                        char *msg, size_t cap)
{
    if (n == 0) {
        plan_msg(msg, cap, "no training step was detected (no step marks)");
        return SIZE_MAX;
    }
    if (step == -1)
        return last_timed(b, s, n);
    for (size_t i = 0; step >= 0 && i < n; i++)
        if (s[i].step == (uint64_t)step)
            return i;
    uint64_t lo = s[0].step, hi = s[0].step;
    for (size_t i = 1; i < n; i++) {
        lo = PLAN_MIN(lo, s[i].step);
        hi = PLAN_MAX(hi, s[i].step);
    }
    plan_msg(msg, cap, "no step %lld: the steps recorded are %llu..%llu", (long long)step,
             (unsigned long long)lo, (unsigned long long)hi);
    return SIZE_MAX;
}

/* A device allocation found by id: its lifetime and its number in the model (SIZE_MAX: none). */
typedef struct id_key {
    uint64_t id, alloc_seq, free_seq;
    size_t model;
} id_key;

static int by_id(const void *pa, const void *pb)
{
    const id_key *a = pa, *b = pb;
    return BASE_CMP_THEN(a->id, b->id, BASE_CMP(a->alloc_seq, b->alloc_seq));
}

/* What the touches are resolved against. */
typedef struct touches {
    id_key *keys; /* every device allocation, by id */
    size_t nkeys;
    uint64_t *pairs; /* model allocation << 32 | operation */
    size_t n, cap;
} touches;

/* The model allocation of id live at launch seq: SIZE_MAX when id is no device allocation the
 * builder knows, SIZE_MAX - 1 when it is one but not live then. */
static size_t resolve(const touches *t, uint64_t id, uint64_t seq)
{
    size_t lo = 0;
    BASE_BSEARCH(lo, t->nkeys, mid, t->keys[mid].id < id);
    size_t found = SIZE_MAX;
    for (; lo < t->nkeys && t->keys[lo].id == id; lo++) {
        const id_key *k = &t->keys[lo];
        if (k->alloc_seq <= seq && seq < k->free_seq && k->model != SIZE_MAX)
            return k->model;
        found = SIZE_MAX - 1;
    }
    return found;
}

static plan_err add_touch(touches *t, uint64_t id, uint64_t seq, uint64_t first, size_t *stray)
{
    size_t a = resolve(t, id, seq);
    if (a >= SIZE_MAX - 1) {
        if (stray)
            *stray += a == SIZE_MAX - 1;
        return PLAN_OK;
    }
    if (t->n >= PLAN_MAX_TOUCHES)
        return PLAN_ERR_LIMIT;
    if (base_array_grow((void **)&t->pairs, &t->cap, t->n + 1, sizeof(*t->pairs)))
        return PLAN_ERR_NOMEM;
    t->pairs[t->n++] = (uint64_t)a << 32 | (seq - first);
    return PLAN_OK;
}

static int by_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

/* The touches of the step's launches and copies, sorted by allocation then operation. */
static plan_err collect_touches(const plan_builder *b, touches *t, uint64_t first, uint64_t end,
                                const size_t *launch_of, plan_build_info *info)
{
    plan_err e = PLAN_OK;
    for (uint64_t s = first; s < end && !e; s++) {
        if (launch_of[s - first] == SIZE_MAX)
            continue;
        const plan_blaunch *l = &b->launches[launch_of[s - first]];
        for (size_t i = 0; i < l->nids && !e; i++)
            if (b->ids[l->id_first + i])
                e = add_touch(t, b->ids[l->id_first + i], s, first, &info->stray_touches);
    }
    for (size_t i = 0; i < b->ncopies && !e; i++)
        if (b->copies[i].seq >= first && b->copies[i].seq < end)
            e = add_touch(t, b->copies[i].id, b->copies[i].seq, first, NULL);
    if (!e)
        qsort(t->pairs, t->n, sizeof(*t->pairs), by_u64);
    return e;
}

/* Whether life l holds device memory during some launch of [first, end). */
static bool live_in(const plan_blife *l, uint64_t first, uint64_t end)
{
    return l->alloc_seq < l->free_seq && l->alloc_seq < end && l->free_seq > first;
}

/* Numbers the allocations live in the step (model[i], SIZE_MAX for the others) and counts the
 * step's allocations that live during none of its launches, and those libshim kept on the host
 * that live during some (not in the model). */
static size_t number_lives(const plan_blife *life, size_t n, uint64_t first, uint64_t end,
                           size_t *model, plan_build_info *info)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool live = live_in(&life[i], first, end);
        if (life[i].placed) {
            model[i] = SIZE_MAX;
            info->placed += live;
            info->placed_bytes += live ? life[i].placed : 0;
            continue;
        }
        model[i] = live ? k++ : SIZE_MAX;
        info->skipped += life[i].alloc_seq == life[i].free_seq && life[i].alloc_seq >= first &&
                         life[i].alloc_seq < end;
    }
    return k;
}

/* Adds the live allocations, in the order they were made, with their touches t->pairs. */
static plan_err add_allocs(plan_model *m, const plan_blife *life, size_t n, const size_t *model,
                           const touches *t, uint64_t first, uint64_t end, plan_build_info *info,
                           uint64_t *ids)
{
    int32_t *ops = malloc((t->n + 1) * sizeof(*ops));
    if (!ops)
        return PLAN_ERR_NOMEM;
    plan_err e = PLAN_OK;
    size_t p = 0;
    for (size_t i = 0; i < n && !e; i++) {
        if (model[i] == SIZE_MAX)
            continue;
        size_t k = 0;
        for (; p < t->n && (t->pairs[p] >> 32) == model[i]; p++)
            ops[k++] = (int32_t)(t->pairs[p] & 0xffffffffu);
        const plan_blife *l = &life[i];
        int32_t birth = l->alloc_seq < first ? PLAN_NO_OP : (int32_t)(l->alloc_seq - first);
        int32_t death = l->free_seq > end ? PLAN_NO_OP : (int32_t)(l->free_seq - 1 - first);
        if (l->bytes > PLAN_MAX_BYTES)
            e = PLAN_ERR_LIMIT;
        else
            e = plan_model_add_alloc(m, l->bytes, birth, death, ops, k);
        if (!e && l->moved && l->moved < l->bytes) /* libshim copies a unit's own bytes */
            e = plan_model_set_moved(m, m->nallocs - 1, l->moved);
        if (!e && ids)
            ids[m->nallocs - 1] = l->id;
        info->cyclic += birth == PLAN_NO_OP && death == PLAN_NO_OP;
    }
    free(ops);
    info->allocs = m->nallocs;
    return e;
}

/* The allocations of [first, end) with their touches into m. */
static plan_err build_allocs(const plan_builder *b, plan_model *m, uint64_t first, uint64_t end,
                             const size_t *launch_of, plan_build_info *info, uint64_t **ids)
{
    plan_blife *life = NULL;
    size_t n = 0;
    plan_err e = plan_build_lives(b, &life, &n);
    if (e)
        return e;
    size_t *model = malloc((n + 1) * sizeof(*model));
    touches t = {.keys = malloc((n + 1) * sizeof(*t.keys)), .nkeys = n};
    if (!model || !t.keys)
        e = PLAN_ERR_NOMEM;
    if (!e && number_lives(life, n, first, end, model, info) > PLAN_MAX_ALLOCS)
        e = PLAN_ERR_LIMIT;
    t.nkeys = 0; /* an allocation kept on the host is no device allocation: its touches are not
                    stray */
    for (size_t i = 0; i < n && !e; i++)
        if (!life[i].placed)
            t.keys[t.nkeys++] = (id_key){life[i].id, life[i].alloc_seq, life[i].free_seq, model[i]};
    if (!e) {
        qsort(t.keys, t.nkeys, sizeof(*t.keys), by_id);
        e = collect_touches(b, &t, first, end, launch_of, info);
    }
    if (!e && ids && !(*ids = malloc((n + 1) * sizeof(**ids))))
        e = PLAN_ERR_NOMEM;
    if (!e)
        e = add_allocs(m, life, n, model, &t, first, end, info, ids ? *ids : NULL);
    free(t.keys);
    free(t.pairs);
    free(model);
    free(life);
    return e;
}

/* Measured bandwidth of one direction in GB/s, within the model's range. */
static double measured_gbps(const plan_builder *b, int to_device)
{
    double gbps = b->moved_bytes[to_device] / b->moved_us[to_device] / 1e3;
    return PLAN_MIN(PLAN_MAX(gbps, 1e-6), 1e6);
}

/* The both-busy rates given, capped at the model's full rates (a rate given above the measured
   one would have bytes move faster with both directions busy); none on a shared link. */
static void both_of(const plan_builder *b, plan_hw *hw)
{
    hw->both_h2d_gbps = hw->both_d2h_gbps = 0;
    if (!hw->duplex || b->link_both[0] <= 0)
        return;
    hw->both_h2d_gbps = PLAN_MIN(b->link_both[0], hw->h2d_gbps);
    hw->both_d2h_gbps = PLAN_MIN(b->link_both[1], hw->d2h_gbps);
}

static plan_hw link_of(const plan_builder *b, plan_build_info *info)
{
    plan_hw hw = b->link;
    if (!b->link_given) {
        if ((info->measured_d2h = b->moved_us[0] > 0))
            hw.d2h_gbps = measured_gbps(b, 0);
        if ((info->measured_h2d = b->moved_us[1] > 0))
            hw.h2d_gbps = measured_gbps(b, 1);
    }
    both_of(b, &hw);
    return hw;
}

/* The operations of [first, end) into m, and each one's launch into *launch_of (a new array). */
static plan_err build_ops(const plan_builder *b, plan_model *m, uint64_t step, uint64_t first,
                          uint64_t end, size_t **launch_of, plan_build_info *info, char *msg,
                          size_t cap)
{
    size_t n = (size_t)(end - first);
    m->ops = malloc(n * sizeof(*m->ops));
    *launch_of = malloc(n * sizeof(**launch_of));
    if (!m->ops || !*launch_of)
        return PLAN_ERR_NOMEM;
    m->cap_ops = n;
    plan_err e = plan_build_ops(b, step, first, end, m->ops, *launch_of, info, msg, cap);
    if (!e)
        m->nops = n;
    return e;
}

/* The step's model into the empty m; its step, launches and counts into info. */
static plan_err build_step(const plan_builder *b, const plan_bstep *st, uint64_t end, plan_model *m,
                           plan_build_info *info, uint64_t **ids, char *msg, size_t cap)
{
    uint64_t first = st->first_seq;
    info->step = st->step;
    info->first_seq = first;
    info->end_seq = end > first ? end : first;
    if (end <= first) {
        plan_msg(msg, cap, "step %llu has no launches", (unsigned long long)st->step);
        return PLAN_ERR_INVALID;
    }
    if (end - first > PLAN_MAX_OPS) {
        plan_msg(msg, cap, "step %llu has %llu launches, more than a model holds",
                 (unsigned long long)st->step, (unsigned long long)(end - first));
        return PLAN_ERR_LIMIT;
    }
    /* Launch indices without a launch are filled in, but a step most of whose launches are
       missing is no step: a stray index would otherwise stand for millions of operations. */
    size_t recorded = plan_build_launches_in(b, first, end);
    if (recorded < (end - first + 1) / 2) {
        plan_msg(msg, cap, "step %llu: only %zu of its %llu launches were recorded",
                 (unsigned long long)st->step, recorded, (unsigned long long)(end - first));
        return PLAN_ERR_INVALID;
    }
    info->ops = (size_t)(end - first);
    size_t *launch_of = NULL;
    plan_err e = build_ops(b, m, st->step, first, end, &launch_of, info, msg, cap);
    if (!e)
        e = build_allocs(b, m, first, end, launch_of, info, ids);
    free(launch_of);
    if (e == PLAN_ERR_NOMEM || e == PLAN_ERR_LIMIT)
        plan_msg(msg, cap, "step %llu: %s", (unsigned long long)st->step, plan_strerror(e));
    for (size_t k = 0; k < b->nxfers && !e; k++) /* in the order they happened */
        if (b->xfers[k].seq > first && b->xfers[k].seq <= end)
            e = plan_model_add_copy(m, (int32_t)(b->xfers[k].seq - first - 1),
                                    b->xfers[k].to_device, b->xfers[k].bytes);
    m->hw = link_of(b, info);
    return e ? e : plan_model_check(m, NULL, msg, cap);
}

plan_err plan_build_model(const plan_builder *b, int64_t step, plan_model *out,
                          plan_build_info *info, char *msg, size_t cap)
{
    return plan_build_model_ids(b, step, out, info, NULL, msg, cap);
}

plan_err plan_build_model_ids(const plan_builder *b, int64_t step, plan_model *out,
                              plan_build_info *info, uint64_t **ids, char *msg, size_t cap)
{
    if (ids)
        *ids = NULL;
    plan_build_info scratch;
    info = info ? info : &scratch;
    *info = (plan_build_info){0};
    plan_msg(msg, cap, "%s", "");
    if (step < -1) {
        plan_msg(msg, cap, "bad step %lld", (long long)step);
        return PLAN_ERR_INVALID;
    }
    size_t n = 0;
    plan_bstep *s = sorted_steps(b, &n);
    if (!s) {
        plan_msg(msg, cap, "out of memory");
        return PLAN_ERR_NOMEM;
    }
    info->steps = n;
    for (size_t i = 0; i < n; i++) {
        info->first_step = i ? PLAN_MIN(info->first_step, s[i].step) : s[i].step;
        info->last_step = i ? PLAN_MAX(info->last_step, s[i].step) : s[i].step;
    }
    size_t i = pick_step(b, s, n, step, msg, cap);
    plan_err e = i == SIZE_MAX ? PLAN_ERR_INVALID
                               : build_step(b, &s[i], step_end(s, n, i), out, info, ids, msg, cap);
    free(s);
    if (e) {
        if (ids) {
            free(*ids);
            *ids = NULL;
        }
        plan_model_free(out);
        info->allocs = info->cyclic = 0;
    }
    return e;
}
