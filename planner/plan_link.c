/* planner/plan_link.c — the host link's both-busy rates (model keyword link_both): the fluid rule.
 *
 * Measured on a PCIe Gen4 A100 (NVIDIA/nvbandwidth issue #53,
 * https://github.com/NVIDIA/nvbandwidth/issues/53): each direction copies at about 25 GB/s alone,
 * but with both at once host-to-device falls to about 11 GB/s while device-to-host holds about
 * 25 GB/s. link_both gives the two both-busy rates. A copy's bytes progress at its direction's
 * both-busy rate while the other direction is moving bytes and at its full rate otherwise.
 *
 * Copies are placed one at a time in the order the simulator issues them, and a copy is slowed
 * by the other direction's copies placed before it; one placed earlier keeps its times. The
 * simulated device places its copies with this same code (plan_link_place, from
 * tests/simgpu/simgpu_link.c, in submission order, where a command's times are final once it has
 * run), so the planner predicts what it measures. The remap after a copy (REMAP_US) does not move
 * bytes: it is the host's mover's time (plan_mover.c), not a busy interval of the link. */
#include "plan_internal.h"

#include "base_array.h"

#include <math.h>
#include <stdlib.h>

bool plan_link_check(const plan_hw *hw, char *msg, size_t cap)
{
    double h = hw->both_h2d_gbps, d = hw->both_d2h_gbps;
    if (h == 0 && d == 0)
        return true;
    if (!(h > 0 && h <= hw->h2d_gbps) || !(d > 0 && d <= hw->d2h_gbps)) {
        plan_msg(msg, cap,
                 "link_both rates must be in (0, full rate]: H2D_GBPS in (0, %g], D2H_GBPS in "
                 "(0, %g]",
                 hw->h2d_gbps, hw->d2h_gbps);
        return false;
    }
    if (!hw->duplex) {
        plan_msg(msg, cap, "link_both needs DUPLEX 1 (a shared link copies one way at a time)");
        return false;
    }
    return true;
}

bool plan_link_on(const plan_hw *hw)
{
    return hw->duplex && hw->both_h2d_gbps > 0 && hw->both_d2h_gbps > 0;
}

void plan_link_init(plan_link *l, const plan_hw *hw)
{
    *l = (plan_link){.full = {hw->h2d_gbps * 1e3, hw->d2h_gbps * 1e3},
                     .both = {hw->both_h2d_gbps * 1e3, hw->both_d2h_gbps * 1e3}};
}

void plan_link_free(plan_link *l)
{
    free(l->dir[0].seg);
    free(l->dir[1].seg);
}

/* Drops the busy intervals of direction dir ending at or before t: the copies that consult them
   (the other direction's) start at t or later from now on, each engine serving in order. */
static void prune(plan_link *l, int dir, double t)
{
    plan_link_dir *x = &l->dir[dir];
    while (x->head < x->n && x->seg[x->head].end <= t)
        x->head++;
    if (x->head > 0 && x->head * 2 >= x->n) {
        for (size_t i = x->head; i < x->n; i++)
            x->seg[i - x->head] = x->seg[i];
        x->n -= x->head;
        x->head = 0;
    }
}

static plan_err record(plan_link *l, int dir, double start, double end)
{
    plan_link_dir *x = &l->dir[dir];
    if (base_array_grow((void **)&x->seg, &x->cap, x->n + 1, sizeof(*x->seg)))
        return PLAN_ERR_NOMEM;
    x->seg[x->n++] = (plan_link_seg){start, end};
    return PLAN_OK;
}

plan_err plan_link_place(plan_link *l, int dir, double start, uint64_t bytes, double *flow_us)
{
    int other = 1 - dir;
    prune(l, other, start);
    const plan_link_dir *o = &l->dir[other];
    double t = start, left = (double)bytes;
    size_t i = o->head;
    while (left > 0) {
        bool busy = i < o->n && o->seg[i].start <= t;
        double rate = busy ? l->both[dir] : l->full[dir];
        double until = busy ? o->seg[i].end : i < o->n ? o->seg[i].start : INFINITY;
        if ((until - t) * rate >= left) {
            t += left / rate;
            break;
        }
        left -= (until - t) * rate;
        t = until;
        if (busy)
            i++;
    }
    *flow_us = t - start;
    return record(l, dir, start, t);
}
