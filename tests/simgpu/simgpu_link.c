/* simgpu_link.c — the host link's rates when both copy directions are busy at once.
 *
 * Measured fact this models (NVIDIA/nvbandwidth issue #53,
 * https://github.com/NVIDIA/nvbandwidth/issues/53, A100-SXM4-80GB on PCIe 4.0, CUDA 12.6):
 * each direction copies at about 25 GB/s alone, but when both run at once host-to-device falls
 * to about 11 GB/s while device-to-host holds about 25 GB/s (issue #11 of the same repository
 * reports 12-13 and 24 GB/s on another A100). Why the split is asymmetric is not known, so the
 * two both-busy rates are settings: SIMGPU_LINK_BOTH_GBPS=H2D,D2H (11,25 reproduces #53).
 *
 * Fluid rule: a copy's bytes progress at its direction's both-busy rate while the other
 * direction is busy and at its full rate (SIMGPU_H2D_GBPS / SIMGPU_D2H_GBPS) otherwise; the
 * rate changes where the other direction's copies start or stop.
 *
 * Determinism: the simulator gives a command its virtual times when a worker runs it, and
 * those times are then final (the host may already have seen it complete). So copies of both
 * directions are placed on the link one at a time in submission order (one ticket for the
 * link, served in order, as each engine serves its own), and a copy is slowed by the busy
 * intervals of the other direction's copies placed before it. A copy submitted later does not
 * move one already placed: where it overlaps an earlier copy of the other direction, that
 * earlier copy keeps its full rate. This is optimistic for the earlier copy (by at most its
 * overlapped time times 1 - both/full); the planner (planner/plan_link.c) applies the same rule
 * in the order it issues copies, so that the two agree. */
#include "simgpu_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* Index of a copy engine in the link's per-direction arrays. */
static int dir_of(int engine)
{
    return engine == ENG_H2D ? 0 : 1;
}

static double full_gbps(int dir)
{
    return dir == 0 ? sim.h2d_gbps : sim.d2h_gbps;
}

static int parse_rate(const char *s, char **end, double full, double *out)
{
    errno = 0;
    double v = strtod(s, end);
    if (*end == s || errno || !(v > 0) || v > full)
        return -1;
    *out = v;
    return 0;
}

int sim_link_configure(const char *spec)
{
    char *end;
    double h, d;
    if (parse_rate(spec, &end, sim.h2d_gbps, &h) != 0 || *end != ',' ||
        parse_rate(end + 1, &end, sim.d2h_gbps, &d) != 0 || *end) {
        sim_diag("ignoring SIMGPU_LINK_BOTH_GBPS=%s (want H2D,D2H in GB/s, each above 0 and at "
                 "most that direction's full rate, %g,%g)",
                 spec, sim.h2d_gbps, sim.d2h_gbps);
        return -1;
    }
    if (sim.link_shared) {
        sim_diag("ignoring SIMGPU_LINK_BOTH_GBPS=%s: SIMGPU_LINK_SHARED=1 already serves both "
                 "directions one at a time",
                 spec);
        return -1;
    }
    sim.link.both_gbps[0] = h;
    sim.link.both_gbps[1] = d;
    sim.link.on = true;
    return 0;
}

bool sim_link_ordered(int engine)
{
    return sim.link.on && (engine == ENG_H2D || engine == ENG_D2H);
}

/* Drops the intervals of direction dir that end at or before t: the copies that consult them
   (the other direction's) start at or after t from now on, as each engine is served in order. */
static void prune(int dir, double t)
{
    struct sim_link_dir *l = &sim.link.dir[dir];
    size_t k = 0;
    while (k < l->n && l->seg[k].end <= t)
        k++;
    for (size_t i = k; i < l->n; i++)
        l->seg[i - k] = l->seg[i];
    l->n -= k;
}

/* Records [start, end) as busy for direction dir. When the list cannot grow, the oldest
   interval is dropped: later copies of the other direction then run faster over it than the
   rule says (diagnosed once), never corrupting data. */
static void record(int dir, double start, double end)
{
    struct sim_link_dir *l = &sim.link.dir[dir];
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        struct sim_link_seg *v = realloc(l->seg, cap * sizeof *v);
        if (!v) {
            static bool told;
            if (!told)
                sim_diag("link: out of memory for busy intervals; the fluid rule is approximate");
            told = true;
            prune(dir, l->seg[0].end);
        } else {
            l->seg = v;
            l->cap = cap;
        }
    }
    if (l->n < l->cap)
        l->seg[l->n++] = (struct sim_link_seg){start, end};
}

double sim_link_place(int engine, double start, uint64_t bytes)
{
    int dir = dir_of(engine), other = 1 - dir;
    prune(other, start);
    const struct sim_link_dir *o = &sim.link.dir[other];
    /* rates in bytes per virtual microsecond (1 GB/s = 1e3 bytes/us) */
    double full = full_gbps(dir) * 1e3, both = sim.link.both_gbps[dir] * 1e3;
    double t = start, left = (double)bytes;
    size_t i = 0;
    while (left > 0) {
        bool busy = i < o->n && o->seg[i].start <= t;
        double rate = busy ? both : full;
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
    record(dir, start, t);
    return t - start;
}
