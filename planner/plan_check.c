/* planner/plan_check.c — validates a plan against a model: every entry inside one idle gap,
 * positions in order, one entry per gap. The simulator refuses anything this refuses. */
#include "plan_internal.h"

#include <stdlib.h>

/* Checks the positions of entry e against its gap g. */
static bool entry_ok(const plan_gap *g, const plan_entry *e, char *msg, size_t cap, size_t i)
{
    if (g->kind == PLAN_GAP_TAIL) {
        if (e->need != PLAN_NO_OP || e->prefetch_at != PLAN_NO_OP) {
            plan_msg(msg, cap, "entry %zu: allocation %u dies at %d on host: no prefetch or need",
                     i, e->alloc, g->last);
            return false;
        }
        if (e->wait_at != PLAN_NO_OP && (e->wait_at <= e->evict_after || e->wait_at > g->last)) {
            plan_msg(msg, cap, "entry %zu: wait_at %d outside (%d, %d]", i, e->wait_at,
                     e->evict_after, g->last);
            return false;
        }
        return true;
    }
    if (e->need != g->b) {
        plan_msg(msg, cap, "entry %zu: need %d is not the next touch %d of allocation %u", i,
                 e->need, g->b, e->alloc);
        return false;
    }
    if (e->prefetch_at <= e->evict_after || e->prefetch_at > g->b) {
        plan_msg(msg, cap, "entry %zu: prefetch_at %d outside (%d, %d]", i, e->prefetch_at,
                 e->evict_after, g->b);
        return false;
    }
    if (e->wait_at != PLAN_NO_OP && (e->wait_at <= e->evict_after || e->wait_at > g->b)) {
        plan_msg(msg, cap, "entry %zu: wait_at %d outside (%d, %d]", i, e->wait_at, e->evict_after,
                 g->b);
        return false;
    }
    return true;
}

/* The host-resident list of p: each allocation in range, listed once, read sparsely; marks them
   in on_host (c->m->nallocs items, zeroed). */
static plan_err host_ok(const plan_ctx *c, const plan *p, uint8_t *on_host, char *msg, size_t cap)
{
    for (size_t i = 0; i < p->nhost; i++) {
        uint32_t x = p->host[i];
        if (x >= c->m->nallocs || on_host[x]) {
            plan_msg(msg, cap, "host %zu: allocation %u %s", i, x,
                     x >= c->m->nallocs ? "out of range" : "listed twice");
            return PLAN_ERR_INVALID;
        }
        if (!plan_alloc_sparse(c->m, x)) {
            plan_msg(msg, cap,
                     "host %zu: allocation %u is not read sparsely (no touch reads less than "
                     "its whole): it cannot stay on the host",
                     i, x);
            return PLAN_ERR_INVALID;
        }
        on_host[x] = 1;
    }
    return PLAN_OK;
}

plan_err plan_check_ctx(const plan_ctx *c, const plan *p, uint32_t *gap_of, char *msg, size_t cap)
{
    uint8_t *used = calloc(c->ngaps ? c->ngaps : 1, 1);
    uint8_t *on_host = calloc(c->m->nallocs + 1, 1);
    if (!used || !on_host) {
        free(used);
        free(on_host);
        return PLAN_ERR_NOMEM;
    }
    plan_err err = host_ok(c, p, on_host, msg, cap);
    for (size_t i = 0; i < p->n && !err; i++) {
        const plan_entry *e = &p->entries[i];
        size_t g = plan_ctx_find_gap(c, e->alloc, e->evict_after);
        if (e->alloc < c->m->nallocs && on_host[e->alloc]) {
            plan_msg(msg, cap, "entry %zu: allocation %u stays on the host: it has no entries", i,
                     e->alloc);
            err = PLAN_ERR_INVALID;
        } else if (g == SIZE_MAX) {
            plan_msg(msg, cap, "entry %zu: evict_after %d is not in an idle gap of allocation %u",
                     i, e->evict_after, e->alloc);
            err = PLAN_ERR_INVALID;
        } else if (used[g]) {
            plan_msg(msg, cap, "entry %zu: second entry for the gap of allocation %u after %d", i,
                     e->alloc, c->gaps[g].a);
            err = PLAN_ERR_INVALID;
        } else if (!entry_ok(&c->gaps[g], e, msg, cap, i)) {
            err = PLAN_ERR_INVALID;
        } else {
            used[g] = 1;
            if (gap_of)
                gap_of[i] = (uint32_t)g;
        }
    }
    free(used);
    free(on_host);
    return err;
}

plan_err plan_check(const plan_model *m, const plan *p, char *msg, size_t cap)
{
    plan_ctx c;
    plan_err e = plan_ctx_init(&c, m, msg, cap);
    if (e)
        return e;
    e = plan_check_ctx(&c, p, NULL, msg, cap);
    plan_ctx_free(&c);
    return e;
}
