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
 * overlapped time times 1 - both/full).
 *
 * The rule itself is the planner's (plan_link_place, planner/plan_link.c): it places copies in the
 * order it issues them, this file in the order of the link tickets, so that both compute the same
 * times with one implementation. What stays here is the setting and the ticket order. */
#include "simgpu_internal.h"

#include <errno.h>
#include <stdlib.h>

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
    plan_link_init(&sim.link.model, &(plan_hw){.h2d_gbps = sim.h2d_gbps,
                                               .d2h_gbps = sim.d2h_gbps,
                                               .duplex = 1,
                                               .both_h2d_gbps = h,
                                               .both_d2h_gbps = d});
    sim.link.on = true;
    return 0;
}

bool sim_link_ordered(int engine)
{
    return sim.link.on && (engine == ENG_H2D || engine == ENG_D2H);
}

double sim_link_place(int engine, double start, uint64_t bytes)
{
    double flow_us;
    int dir = engine == ENG_H2D ? PLAN_LINK_H2D : PLAN_LINK_D2H;
    if (plan_link_place(&sim.link.model, dir, start, bytes, &flow_us) != PLAN_OK) {
        static bool told;
        if (!told)
            sim_diag("link: out of memory for busy intervals; the fluid rule is approximate");
        told = true;
    }
    return flow_us;
}
