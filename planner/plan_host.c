/* planner/plan_host.c — allocations that stay on the host for the whole step (plan.host): the
 * model the rest of the plan runs on, and how such a plan is simulated and planned.
 *
 * A host-resident allocation holds no device bytes at any time: it is made in host memory at its
 * birth and freed there at its death, and never copied. An operation that touches it reads what
 * the touch reads (plan_touch_read) through the link, which the simulated device charges as the
 * kernel's own time (tests/simgpu/simgpu_exec.c, run_kernel: the distinct 4 KiB pages of
 * host-located memory it touched, at the host-to-device rate) without placing those reads on the
 * link's copy engines. So the rest of the plan runs on the model without those allocations,
 * whose operations last longer by their reads; neither side charges contention between such
 * reads and the link's copies (a known gap: a real GPU shares the link). */
#include "plan_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HOST_PAGE 4096u

double plan_host_read_us(const plan_hw *hw, uint64_t bytes)
{
    uint64_t pages = bytes / HOST_PAGE + (bytes % HOST_PAGE != 0);
    return (double)pages * HOST_PAGE / (hw->h2d_gbps * 1e3);
}

/* Adds allocation a of m (its touches and their reads, its moved bytes) to out. */
static plan_err copy_alloc(const plan_model *m, const plan_alloc *a, plan_model *out)
{
    const uint64_t *reads = m->touch_reads ? m->touch_reads + a->touch_first : NULL;
    plan_err e = plan_model_add_alloc_reads(out, a->bytes, a->birth, a->death,
                                            m->touches + a->touch_first, reads, a->ntouch);
    return e ? e : plan_model_set_moved(out, out->nallocs - 1, a->moved);
}

plan_err plan_host_model(const plan_model *m, const uint8_t *on_host, plan_model *out,
                         uint32_t *idx, double *read_us, uint64_t *bytes_read)
{
    double *add = calloc(m->nops + 1, sizeof(*add));
    if (!add)
        return PLAN_ERR_NOMEM;
    *read_us = 0;
    *bytes_read = 0;
    out->hw = m->hw;
    plan_err e = PLAN_OK;
    for (size_t x = 0; x < m->nallocs && !e; x++) {
        const plan_alloc *a = &m->allocs[x];
        if (!on_host[x]) {
            idx[x] = (uint32_t)out->nallocs;
            e = copy_alloc(m, a, out);
            continue;
        }
        idx[x] = UINT32_MAX;
        for (uint32_t k = 0; k < a->ntouch; k++) {
            uint64_t b = plan_touch_read(m, a, a->touch_first + k);
            add[m->touches[a->touch_first + k]] += plan_host_read_us(&m->hw, b);
            *bytes_read += b;
        }
    }
    for (size_t q = 0; q < m->nops && !e; q++) {
        e = plan_model_add_op(out, m->ops[q].dur_us + add[q], m->ops[q].stream);
        if (!e)
            out->ops[out->nops - 1].idle_us = m->ops[q].idle_us;
        *read_us += add[q];
    }
    for (size_t i = 0; i < m->ncopies && !e; i++)
        e = plan_model_add_copy(out, m->copies[i].after, m->copies[i].to_device,
                                m->copies[i].bytes);
    free(add);
    return e;
}

/* st, simulated on rc (the rest's model), as the figures of the whole plan on c: the reads are
   stall, compute the model's own; and what the host holds and reads. */
static void host_stats(const plan_ctx *c, const plan_ctx *rc, const uint8_t *on_host,
                       uint64_t bytes_read, plan_stats *st)
{
    st->stall_us += rc->compute - c->compute;
    st->read_us = rc->compute - c->compute;
    st->compute_us = c->compute;
    st->bytes_read = bytes_read;
    st->host_bytes = 0;
    st->nhost = 0;
    for (size_t x = 0; x < c->m->nallocs; x++)
        if (on_host[x]) {
            st->host_bytes += c->m->allocs[x].bytes;
            st->nhost++;
        }
}

/* The rest's model of c when on_host stay on the host, analysed into rc; idx as plan_host_model. */
typedef struct rest {
    plan_model m;
    plan_ctx c;
    uint32_t *idx;
    double read_us;
    uint64_t bytes_read;
} rest;

static void rest_free(rest *r)
{
    plan_ctx_free(&r->c);
    plan_model_free(&r->m);
    free(r->idx);
}

static plan_err rest_init(rest *r, const plan_ctx *c, const uint8_t *on_host)
{
    memset(r, 0, sizeof(*r));
    plan_model_init(&r->m);
    r->idx = malloc((c->m->nallocs + 1) * sizeof(*r->idx));
    if (!r->idx)
        return PLAN_ERR_NOMEM;
    plan_err e = plan_host_model(c->m, on_host, &r->m, r->idx, &r->read_us, &r->bytes_read);
    return e ? e : plan_ctx_init(&r->c, &r->m, NULL, 0);
}

plan_err plan_host_sim(const plan_ctx *c, const plan *p, uint64_t budget, plan_stats *st)
{
    uint8_t *on_host = calloc(c->m->nallocs + 1, 1);
    if (!on_host)
        return PLAN_ERR_NOMEM;
    for (size_t i = 0; i < p->nhost; i++)
        on_host[p->host[i]] = 1;
    rest r;
    plan rp;
    plan_init(&rp);
    plan_err e = rest_init(&r, c, on_host);
    for (size_t i = 0; i < p->n && !e; i++) {
        plan_entry en = p->entries[i];
        en.alloc = r.idx[en.alloc];
        e = plan_push(&rp, en);
    }
    if (!e)
        e = plan_sim_run(&r.c, &rp, budget, st, NULL);
    if (!e)
        host_stats(c, &r.c, on_host, r.bytes_read, st);
    plan_free(&rp);
    rest_free(&r);
    free(on_host);
    return e;
}

plan_err plan_host_plan(const plan_ctx *c, plan_kind kind, uint64_t budget, const uint8_t *on_host,
                        plan *out, plan_stats *st)
{
    rest r;
    plan_err e = rest_init(&r, c, on_host);
    uint32_t *back = malloc((r.m.nallocs + 1) * sizeof(*back));
    if (!e && !back)
        e = PLAN_ERR_NOMEM;
    if (!e)
        e = plan_make_ctx(&r.c, kind, budget, out, st);
    for (size_t x = 0; x < c->m->nallocs && !e; x++) {
        if (r.idx[x] != UINT32_MAX)
            back[r.idx[x]] = (uint32_t)x;
        else
            e = plan_push_host(out, (uint32_t)x);
    }
    for (size_t i = 0; i < out->n && !e; i++)
        out->entries[i].alloc = back[out->entries[i].alloc];
    if (!e)
        host_stats(c, &r.c, on_host, r.bytes_read, st);
    free(back);
    rest_free(&r);
    return e;
}
