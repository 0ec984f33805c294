/* planner/plan_pin.c — a model with the allocations a plan may not move touched throughout
 * their lives (plan.h, plan_model_pin), and a model as libshim holds it (plan_build.h,
 * plan_model_hold): libshim's rules applied to an imported or generated model. */
#include "plan_internal.h"

#include <stdlib.h>

/* m into out with allocation i of bytes[i] whose moves copy moved[i] (NULL: m's own), pinned
   unless movable[i]; a movable allocation keeps its touches' read bytes, a pinned one reads the
   whole at every operation of its life (it cannot stay on the host either). */
static plan_err pin_into(const plan_model *m, const bool *movable, const uint64_t *bytes,
                         const uint64_t *moved, plan_model *out)
{
    out->hw = m->hw;
    int32_t *all = malloc(m->nops * sizeof *all + 1);
    plan_err e = all ? PLAN_OK : PLAN_ERR_NOMEM;
    for (size_t i = 0; i < m->nops && !e; i++) {
        all[i] = (int32_t)i;
        e = plan_model_add_op(out, m->ops[i].dur_us, m->ops[i].stream);
        if (!e)
            out->ops[out->nops - 1].idle_us = m->ops[i].idle_us;
    }
    for (size_t i = 0; i < m->nallocs && !e; i++) {
        const plan_alloc *a = &m->allocs[i];
        uint64_t b = bytes ? bytes[i] : a->bytes;
        if (movable[i]) {
            const uint64_t *reads = m->touch_reads ? m->touch_reads + a->touch_first : NULL;
            e = plan_model_add_alloc_reads(out, b, a->birth, a->death, m->touches + a->touch_first,
                                           reads, a->ntouch);
            if (!e)
                e = plan_model_set_moved(out, out->nallocs - 1, moved ? moved[i] : a->moved);
            continue;
        }
        int32_t lo = a->birth == PLAN_NO_OP ? 0 : a->birth;
        int32_t hi = a->death == PLAN_NO_OP ? (int32_t)m->nops - 1 : a->death;
        e = plan_model_add_alloc(out, b, a->birth, a->death, all + lo,
                                 hi >= lo ? (size_t)(hi - lo + 1) : 0);
    }
    for (size_t i = 0; i < m->ncopies && !e; i++)
        e = plan_model_add_copy(out, m->copies[i].after, m->copies[i].to_device,
                                m->copies[i].bytes);
    free(all);
    return e;
}

/* Contract in plan.h. */
plan_err plan_model_pin(const plan_model *m, const bool *movable, plan_model *out)
{
    return pin_into(m, movable, NULL, NULL, out);
}

static bool power_of_two(uint64_t v)
{
    return v && !(v & (v - 1));
}

/* Counts allocation i of kind, held bytes and movability into info. */
static void count(plan_hold_info *info, plan_mem_kind kind, bool movable, uint64_t held)
{
    if (kind != PLAN_MEM_MANAGED) {
        info->unmanaged++;
        info->unmanaged_bytes += held;
    } else if (movable) {
        info->units++;
        info->unit_bytes += held;
    } else {
        info->members++;
        info->member_bytes += held;
    }
}

/* The slabs' chunks of m, whose allocations member[] marks with blocks[], as pinned allocations
   of a granule each, after the others in out. */
static plan_err add_slabs(const plan_model *m, const bool *member, const uint32_t *blocks,
                          uint64_t granule, plan_model *out, plan_hold_info *info)
{
    plan_slab_life *life = NULL;
    size_t n = 0;
    int32_t *all = malloc(m->nops * sizeof *all + 1);
    plan_err e = all ? plan_slab_lives(m, member, blocks, granule, &life, &n, &info->slab_chunks)
                     : PLAN_ERR_NOMEM;
    for (size_t i = 0; i < m->nops && !e; i++)
        all[i] = (int32_t)i;
    for (size_t i = 0; i < n && !e; i++) {
        int32_t lo = life[i].birth == PLAN_NO_OP ? 0 : life[i].birth;
        int32_t hi = life[i].death == PLAN_NO_OP ? (int32_t)m->nops - 1 : life[i].death;
        e = plan_model_add_alloc(out, granule, life[i].birth, life[i].death, all + lo,
                                 hi >= lo ? (size_t)(hi - lo + 1) : 0);
    }
    info->slab_lives = n;
    free(life);
    free(all);
    return e;
}

/* m into out with allocation i of bytes[i] whose moves copy moved[i], pinned unless movable[i];
   a member (member[i]: bytes[i] is its blocks) holds 1 byte and its slab's chunk a granule
   (add_slabs). bytes and moved are overwritten for members. */
static plan_err hold_into(const plan_model *m, const bool *movable, const bool *member,
                          uint64_t *bytes, uint64_t *moved, uint64_t granule, plan_model *out,
                          plan_hold_info *info)
{
    uint32_t *blocks = malloc(m->nallocs * sizeof *blocks + 1);
    if (!blocks)
        return PLAN_ERR_NOMEM;
    for (size_t i = 0; i < m->nallocs; i++) {
        uint64_t b = (bytes[i] + PLAN_RULES_SLAB_BLOCK - 1) / PLAN_RULES_SLAB_BLOCK;
        blocks[i] = member[i] ? (uint32_t)(b < UINT32_MAX ? b : UINT32_MAX) : 0;
        if (member[i]) /* its slab's chunk holds its bytes; the model format's least here */
            bytes[i] = moved[i] = 1;
    }
    plan_err e = pin_into(m, movable, bytes, moved, out);
    if (!e)
        e = add_slabs(m, member, blocks, granule, out, info);
    free(blocks);
    return e;
}

/* Contract in plan_build.h. */
plan_err plan_model_pin_slabs(const plan_model *m, const bool *movable, const bool *member,
                              uint64_t granule, plan_model *out, plan_hold_info *info)
{
    if (!power_of_two(granule) || granule < PLAN_RULES_SLAB_BLOCK)
        return PLAN_ERR_INVALID;
    plan_hold_info none;
    info = info ? info : &none;
    *info = (plan_hold_info){0};
    uint64_t *bytes = malloc(2 * m->nallocs * sizeof *bytes + 1), *moved = bytes + m->nallocs;
    if (!bytes)
        return PLAN_ERR_NOMEM;
    for (size_t i = 0; i < m->nallocs; i++) {
        bytes[i] = m->allocs[i].bytes;
        moved[i] = m->allocs[i].moved;
        info->members += member[i];
        info->member_bytes += member[i] ? bytes[i] : 0;
    }
    plan_err e = hold_into(m, movable, member, bytes, moved, granule, out, info);
    free(bytes);
    return e;
}

/* Contract in plan_build.h. */
plan_err plan_model_hold(const plan_model *m, const plan_hold_rules *r, plan_model *out,
                         plan_hold_info *info)
{
    if (!power_of_two(r->granule) || !power_of_two(r->page) || r->page > r->granule ||
        r->granule < PLAN_RULES_SLAB_BLOCK)
        return PLAN_ERR_INVALID;
    plan_hold_info none;
    info = info ? info : &none;
    *info = (plan_hold_info){0};
    bool *movable = malloc(2 * m->nallocs * sizeof *movable + 1), *member = movable + m->nallocs;
    uint64_t *bytes = malloc(2 * m->nallocs * sizeof *bytes + 1), *moved = bytes + m->nallocs;
    plan_err e = movable && bytes ? PLAN_OK : PLAN_ERR_NOMEM;
    for (size_t i = 0; i < m->nallocs && !e; i++) {
        uint64_t asked = m->allocs[i].bytes;
        plan_mem_kind kind = plan_rules_kind(asked, r->min_managed);
        movable[i] = plan_rules_movable(kind, asked, r->slab_max);
        member[i] = kind == PLAN_MEM_MANAGED && !movable[i];
        bytes[i] = plan_rules_held_bytes(kind, asked, r);
        /* libshim copies the allocation's own bytes, not the granules that hold it */
        moved[i] = m->allocs[i].moved < bytes[i] ? m->allocs[i].moved : bytes[i];
        count(info, kind, movable[i], bytes[i]);
    }
    if (!e)
        e = hold_into(m, movable, member, bytes, moved, r->granule, out, info);
    free(movable);
    free(bytes);
    return e;
}
