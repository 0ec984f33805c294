/* test_sim_link.c — the both-busy link rates (SIMGPU_LINK_BOTH_GBPS): exact virtual copy times.
 */
#include "simgpu_test.h"

#include <stdbool.h>

#define FULL_H2D 25.0 /* GB/s, set in main */
#define FULL_D2H 25.0
#define BOTH_H2D 11.0 /* while the other direction copies too */
#define BOTH_D2H 20.0

static size_t n = 25 * MIB;
static CUdeviceptr dev1, dev2;
static void *host1, *host2;
static CUstream up, down;

static void k_nop(void **p)
{
    (void)p;
}

/* Microseconds to move bytes at rate (GB/s = 1e3 bytes/us). */
static double at(double bytes, double gbps)
{
    return bytes / (gbps * 1e3);
}

/* Time a copy of bytes starting at 0 takes when the other direction is busy over [b0, b1) and
   it runs alone otherwise: the fluid rule worked out piece by piece. */
static double fluid(double bytes, double full, double both, double b0, double b1)
{
    if (bytes <= b0 * full * 1e3)
        return at(bytes, full);
    double left = bytes - b0 * full * 1e3;
    if (left <= (b1 - b0) * both * 1e3)
        return b0 + at(left, both);
    return b1 + at(left - (b1 - b0) * both * 1e3, full);
}

static int setup(void **state)
{
    (void)state;
    CK(cuMemAlloc(&dev1, n));
    CK(cuMemAlloc(&dev2, n));
    CK(cuMemHostAlloc(&host1, n, 0));
    CK(cuMemHostAlloc(&host2, n, 0));
    CK(cuStreamCreate(&up, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&down, CU_STREAM_NON_BLOCKING));
    return 0;
}

/* Queues a copy of bytes host to device on up (host1 to dev1), or device to host on down
   (dev2 to host2); returns an event recorded after it. */
static CUevent copy_on(CUstream s, size_t bytes)
{
    if (s == up)
        CK(cuMemcpyHtoDAsync(dev1, host1, bytes, up));
    else
        CK(cuMemcpyDtoHAsync(host2, dev2, bytes, down));
    CUevent end = sim_test_event();
    CK(cuEventRecord(end, s));
    return end;
}

SIM_TEST(test_each_direction_alone_runs_at_its_full_rate)
{
    (void)state;
    CUevent a = sim_test_event();
    CK(cuCtxSynchronize());
    CK(cuEventRecord(a, up));
    assert_us(sim_test_elapsed_us(a, copy_on(up, n)), at((double)n, FULL_H2D));
    CK(cuEventRecord(a, down));
    assert_us(sim_test_elapsed_us(a, copy_on(down, n)), at((double)n, FULL_D2H));
}

/* From a common start, half the bytes on stream first, then all of them on the other stream
   (the other direction): the first runs alone at its full rate; the second at the both-busy
   rate while the first lasts, then at its full rate (fluid). Returns the second's time. */
static double half_then_all(CUstream first)
{
    bool up_first = first == up;
    CUstream second = up_first ? down : up;
    double first_full = up_first ? FULL_H2D : FULL_D2H;
    double second_full = up_first ? FULL_D2H : FULL_H2D,
           second_both = up_first ? BOTH_D2H : BOTH_H2D;
    CK(cuCtxSynchronize());
    CUevent a = sim_test_fork(up, down);
    CUevent first_end = copy_on(first, n / 2);
    CUevent second_end = copy_on(second, n);
    double first_us = at((double)n / 2, first_full);
    assert_us(sim_test_elapsed_us(a, first_end), first_us);
    double second_us = fluid((double)n, second_full, second_both, 0, first_us);
    assert_us(sim_test_elapsed_us(a, second_end), second_us);
    return second_us;
}

/* A device-to-host copy of half the bytes is placed first; the host-to-device copy starting
   with it runs at the both-busy rate while it lasts, then at its full rate. */
SIM_TEST(test_overlapped_part_runs_at_the_both_busy_rate)
{
    (void)state;
    double h_us = half_then_all(down), d_us = at((double)n / 2, FULL_D2H);
    /* the figures are not those of a plain duplex link, nor of a shared one */
    assert_true(h_us > at((double)n, FULL_H2D) + 1);
    assert_true(h_us < at((double)n, FULL_H2D) + d_us - 1);
}

/* The other direction starts part-way: the rate drops when it starts and rises when it stops.
   The device-to-host copy waits behind a 200 us kernel and is submitted first. */
SIM_TEST(test_rate_changes_where_the_other_direction_starts_and_stops)
{
    (void)state;
    CUfunction k = simgpu_register("k200", k_nop, 0, NULL);
    simgpu_set_cost(k, 200.0);
    CK(cuCtxSynchronize());
    CUevent a = sim_test_fork(up, down);
    CK(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, down, NULL, NULL));
    CUevent d_end = copy_on(down, n / 4);
    CUevent h_end = copy_on(up, n);
    double d_us = at((double)n / 4, FULL_D2H);
    assert_us(sim_test_elapsed_us(a, d_end), 200.0 + d_us);
    assert_us(sim_test_elapsed_us(a, h_end),
              fluid((double)n, FULL_H2D, BOTH_H2D, 200.0, 200.0 + d_us));
}

/* The copy submitted second is slowed by the first; the first keeps its times (the rule that
   keeps virtual time deterministic, simgpu_link.c). */
SIM_TEST(test_the_later_copy_is_slowed_by_the_earlier_one)
{
    (void)state;
    half_then_all(up);
}

/* Copies of one direction still queue on their engine: two host-to-device copies on two
   streams run one after the other at the full rate. */
SIM_TEST(test_one_direction_still_queues)
{
    (void)state;
    CK(cuCtxSynchronize());
    CUevent a = sim_test_fork(up, down);
    CK(cuMemcpyHtoDAsync(dev1, host1, n, up));
    CK(cuMemcpyHtoDAsync(dev2, host2, n, down));
    assert_us(sim_test_join_us(a, up, down), 2 * at((double)n, FULL_H2D));
}

int main(void)
{
    setenv("SIMGPU_H2D_GBPS", "25", 1);
    setenv("SIMGPU_D2H_GBPS", "25", 1);
    setenv("SIMGPU_LINK_BOTH_GBPS", "11,20", 1);
    unsetenv("SIMGPU_LINK_SHARED");
    sim_test_ctx();
    return sim_test_run(setup);
}
