/* test_sim_host.c — the host is not free: per-thread host clocks (simgpu_clock.c) with the
 * program's own work before each launch (SIMGPU_HOST_US_PER_LAUNCH=40), an interposer's work per
 * call (SIMGPU_HOST_CALLER=libtest_caller, SIMGPU_HOST_CALLER_US=3: libtest_caller.so stands for
 * the interposer), the driver's own call costs (each mark below, an event record, costs REC) and
 * the VMM cost (SIMGPU_VMM_HOST_COST=1). Run as is (SIMGPU_VMM_SERIAL=1, the
 * default) and by test_host_clock.sh without the driver-wide lock, under jitter, and twice with
 * a timeline each, which must be the same. Every figure is exact: virtual time depends only on
 * what each thread did and waited for. */
#include "simgpu_test.h"
#include "test_caller_lib.h"

#include <pthread.h>
#include <stdbool.h>

#define HOST_US   40.0 /* SIMGPU_HOST_US_PER_LAUNCH */
#define CALLER_US 3.0  /* SIMGPU_HOST_CALLER_US */
#define REC       4.5  /* what an event record costs its caller (simgpu_host.c) */

static bool serial; /* SIMGPU_VMM_SERIAL is not 0 */
static CUcontext main_ctx;
static CUfunction k0, k10, k100; /* kernels of 0, 10 and 100 us */

static void body0(void **p)
{
    (void)p;
}
static void body10(void **p)
{
    (void)p;
}
static void body100(void **p)
{
    (void)p;
}

static void launch(CUfunction k, CUstream s)
{
    CK(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
}

static CUstream new_stream(void)
{
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    return s;
}

/* An event recorded on s now. */
static CUevent mark(CUstream s)
{
    CUevent e = sim_test_event();
    CK(cuEventRecord(e, s));
    return e;
}

/* A kernel launched after host work starts no earlier than the host submitted it: 40 us of the
   program's work, then a 10 us kernel, ends 50 us after the mark made before the work. */
SIM_TEST(test_a_launch_starts_after_the_host_work_before_it)
{
    (void)state;
    CK(cuCtxSynchronize());
    double work = sim_test_stats().host_launch_us;
    CUevent a = mark(NULL);
    launch(k10, NULL);
    CUevent b = mark(NULL);
    assert_us(sim_test_elapsed_us(a, b), HOST_US + 10.0);
    assert_us(sim_test_stats().host_launch_us - work, HOST_US);
    assert_us(sim_test_stats().host_us_per_launch, HOST_US);
}

/* A host-bound sequence takes the host's time (50 launches of 40 us, the last kernel's 10 us
   after them); a device-bound one the device's (the first launch's 40 us, then 50 x 100 us). */
SIM_TEST(test_a_host_bound_sequence_takes_the_host_time)
{
    (void)state;
    CK(cuCtxSynchronize());
    CUevent a = mark(NULL);
    for (int i = 0; i < 50; i++)
        launch(k10, NULL);
    CUevent b = mark(NULL);
    assert_us(sim_test_elapsed_us(a, b), 50 * HOST_US + 10.0);
    a = mark(NULL);
    for (int i = 0; i < 50; i++)
        launch(k100, NULL);
    b = mark(NULL);
    assert_us(sim_test_elapsed_us(a, b), HOST_US + 50 * 100.0);
}

/* The program's own work charged by itself (simgpu_host_work) comes before the launch's 40 us:
   25 + 40 us of host, then the 10 us kernel; a negative figure is refused. */
SIM_TEST(test_the_programs_work_charged_by_itself)
{
    (void)state;
    CK(cuCtxSynchronize());
    double work = sim_test_stats().host_launch_us;
    CUevent a = mark(NULL);
    assert_int_equal(simgpu_host_work(25.0), 0);
    launch(k10, NULL);
    CUevent b = mark(NULL);
    assert_us(sim_test_elapsed_us(a, b), 25.0 + HOST_US + 10.0);
    assert_us(sim_test_stats().host_launch_us - work, 25.0 + HOST_US);
    assert_int_equal(simgpu_host_work(-1.0), -1);
}

/* The driver's own calls cost their caller: an asynchronous copy 5 us before it is submitted,
   then the closing mark REC. */
SIM_TEST(test_an_async_copy_costs_its_caller)
{
    (void)state;
    CUdeviceptr d;
    CK(cuMemAlloc(&d, 4096));
    uint32_t word = 7;
    CK(cuCtxSynchronize());
    CUevent a = mark(NULL);
    CK(cuMemcpyHtoDAsync(d, &word, sizeof word, NULL));
    CUevent b = mark(NULL);
    assert_true(sim_test_elapsed_us(a, b) > 5.0 + REC - 0.01);
    assert_true(sim_test_elapsed_us(a, b) < 5.0 + REC + 0.01);
    CK(cuMemFree(d));
}

/* What a helper thread's job (run by sim_test_on_thread, the context current) works on. */
struct helper {
    CUstream stream;
    CUevent start, end;
    CUdeviceptr va;
    CUmemGenericAllocationHandle h;
};

/* Ten launches of a 0 us kernel on the helper's stream between two marks: 400 us of its host. */
static void ten_launches(void *arg)
{
    struct helper *w = arg;
    w->start = mark(w->stream);
    for (int i = 0; i < 10; i++)
        launch(k0, w->stream);
    w->end = mark(w->stream);
}

/* From a synchronised start: a stream of this thread's (*mine) and one of the helper's, a mark
   on ours (returned), then the helper's ten launches, run to their end. */
static CUevent mark_then_ten_launches(CUstream *mine, struct helper *w)
{
    CK(cuCtxSynchronize());
    *mine = new_stream();
    *w = (struct helper){.stream = new_stream()};
    CUevent m0 = mark(*mine);
    sim_test_on_thread(main_ctx, ten_launches, w);
    return m0;
}

/* Two threads' host work runs side by side: each takes 400 us for its ten launches and REC for
   its closing mark (one shared clock would have made the second start where the first ended). */
SIM_TEST(test_two_threads_work_side_by_side)
{
    (void)state;
    CUstream mine;
    struct helper w;
    CUevent a = mark_then_ten_launches(&mine, &w);
    for (int i = 0; i < 10; i++)
        launch(k0, mine);
    CUevent b = mark(mine);
    assert_us(sim_test_elapsed_us(w.start, w.end), 10 * HOST_US + REC);
    assert_us(sim_test_elapsed_us(a, b), 10 * HOST_US + REC);
    assert_us(sim_test_elapsed_us(a, w.start), REC); /* it started at the world's time: ours */
}

/* A thread waiting on an event another thread recorded, whose clock is ahead, joins it: the
   helper recorded after 400 us of its work (and two marks); this thread's next mark is that much
   after its own before the wait, and a mark made after the helper ran but before the wait is
   not. */
SIM_TEST(test_a_wait_on_another_threads_event_joins_its_clock)
{
    (void)state;
    CUstream mine;
    struct helper w;
    CUevent m0 = mark_then_ten_launches(&mine, &w);
    CUevent before = mark(mine);
    CK(cuEventSynchronize(w.end));
    CUevent after = mark(mine);
    assert_us(sim_test_elapsed_us(m0, before), REC);
    assert_us(sim_test_elapsed_us(m0, after), 10 * HOST_US + 3 * REC);
    /* a stream synchronisation joins the same way */
    sim_test_on_thread(main_ctx, ten_launches, &w);
    m0 = mark(mine);
    CK(cuStreamSynchronize(w.stream));
    after = mark(mine);
    assert_us(sim_test_elapsed_us(m0, after), 10 * HOST_US + 2 * REC);
}

/* A query is answered at the world's time, and learning that the helper's event is done joins
   this thread to it; an event of work still ahead of every clock is not ready. */
SIM_TEST(test_a_query_answers_at_the_worlds_time)
{
    (void)state;
    CUstream mine;
    struct helper w;
    CUevent m0 = mark_then_ten_launches(&mine, &w);
    CK(cuEventQuery(w.end)); /* done 400 us ahead of this thread, not ahead of the world */
    CUevent after = mark(mine);
    assert_us(sim_test_elapsed_us(m0, after), 10 * HOST_US + 3 * REC);
    launch(k100, mine);
    CUevent later = mark(mine);
    assert_int_equal(cuEventQuery(later), CUDA_ERROR_NOT_READY);
    assert_us(sim_test_elapsed_us(after, later), HOST_US + 100.0);
}

/* The interposer's calls cost their caller 3 us each besides what the driver charges (five
   records); its polls cost nothing; the program's own calls only the driver's cost. */
SIM_TEST(test_the_interposers_calls_cost_its_caller)
{
    (void)state;
    CK(cuCtxSynchronize());
    struct simgpu_stats s0 = sim_test_stats();
    CUevent a = mark(NULL), x = sim_test_event();
    for (int i = 0; i < 5; i++)
        CK(caller_lib_event_record(x, NULL));
    for (int i = 0; i < 100; i++)
        CK(caller_lib_event_query(x));
    for (int i = 0; i < 5; i++)
        CK(cuEventRecord(x, NULL));
    CUevent b = mark(NULL);
    assert_us(sim_test_elapsed_us(a, b), 5 * CALLER_US + 11 * REC);
    struct simgpu_stats s1 = sim_test_stats();
    assert_int_equal(s1.host_caller_calls - s0.host_caller_calls, 5);
    assert_us(s1.host_caller_us - s0.host_caller_us, 5 * CALLER_US);
    assert_us(s1.host_driver_us - s0.host_driver_us, 12 * REC); /* the marks a and b too */
}

/* One 2 MiB handle reserved, created, mapped and made accessible: 22 + 12.78 + 1.84 + 36 us
   (simgpu_vmm_cost.c at SIMGPU_VMM_HOST_COST=1). */
#define BACK_ONE_US (22.0 + 409.0 / 32 + 59.0 / 32 + 36.0)
static void back_one(void *arg)
{
    struct helper *w = arg;
    static const CUmemAllocationProp on_device = {
        .type = CU_MEM_ALLOCATION_TYPE_PINNED,
        .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    static const CUmemAccessDesc rw = {.location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0},
                                       .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CK(cuMemAddressReserve(&w->va, 2 * MIB, 0, 0, 0));
    CK(cuMemCreate(&w->h, 2 * MIB, &on_device, 0));
    CK(cuMemMap(w->va, 2 * MIB, 0, w->h, 0));
    CK(cuMemSetAccess(w->va, 2 * MIB, &rw, 1));
}

/* Under the driver-wide lock a launch waits for the VMM calls another thread made: the program's
   40 us of work, then the lock until the helper's calls end; without the lock only its work. */
SIM_TEST(test_a_launch_waits_for_the_driver_lock)
{
    (void)state;
    CK(cuCtxSynchronize());
    double waited = sim_test_stats().vmm_serial_us;
    CUevent a = mark(NULL);
    struct helper w = {0};
    sim_test_on_thread(main_ctx, back_one, &w);
    launch(k0, NULL);
    CUevent b = mark(NULL);
    assert_us(sim_test_elapsed_us(a, b), (serial ? BACK_ONE_US : HOST_US) + REC);
    assert_us(sim_test_stats().vmm_serial_us - waited, serial ? BACK_ONE_US - HOST_US : 0.0);
    CK(cuMemUnmap(w.va, 2 * MIB));
    CK(cuMemRelease(w.h));
    CK(cuMemAddressFree(w.va, 2 * MIB));
}

/* The helper starts its clock, lets this thread run ahead (ten launches: 400 us), then makes its
   VMM calls at its own, earlier, time. */
static pthread_barrier_t turn;
static void behind_then_back_one(void *arg)
{
    struct helper *w = arg;
    w->start = mark(w->stream); /* starts the helper's clock at the world's time */
    pthread_barrier_wait(&turn);
    pthread_barrier_wait(&turn);
    back_one(w);
}

/* A hold of the driver-wide lock that starts in this thread's virtual past still stops it: its
   submissions after the hold's start needed the lock, whatever the real-time order of the calls;
   so its clock moves on by the hold's length. Without the lock nothing moves. */
SIM_TEST(test_a_hold_behind_a_thread_moves_it_on)
{
    (void)state;
    CK(cuCtxSynchronize());
    CUstream mine = new_stream();
    struct helper w = {.stream = new_stream()};
    assert_int_equal(pthread_barrier_init(&turn, NULL, 2), 0);
    struct sim_test_thread t;
    CUevent a = mark(mine);
    sim_test_start(&t, main_ctx, behind_then_back_one, &w);
    pthread_barrier_wait(&turn);
    for (int i = 0; i < 10; i++)
        launch(k0, mine);
    pthread_barrier_wait(&turn);
    sim_test_join(&t);
    pthread_barrier_destroy(&turn);
    CUevent b = mark(mine);
    assert_us(sim_test_elapsed_us(a, b), 10 * HOST_US + (serial ? BACK_ONE_US : 0.0) + REC);
    assert_us(sim_test_elapsed_us(a, w.start), REC);
    CK(cuMemUnmap(w.va, 2 * MIB));
    CK(cuMemRelease(w.h));
    CK(cuMemAddressFree(w.va, 2 * MIB));
}

int main(void)
{
    setenv("SIMGPU_HOST_US_PER_LAUNCH", "40", 1);
    setenv("SIMGPU_HOST_CALLER", "libtest_caller", 1);
    setenv("SIMGPU_HOST_CALLER_US", "3", 1);
    setenv("SIMGPU_VMM_HOST_COST", "1", 1);
    const char *s = getenv("SIMGPU_VMM_SERIAL");
    serial = !(s && strcmp(s, "0") == 0);
    sim_test_ctx();
    CK(cuCtxGetCurrent(&main_ctx));
    k0 = simgpu_register("k0", body0, 0, NULL);
    k10 = simgpu_register("k10", body10, 0, NULL);
    k100 = simgpu_register("k100", body100, 0, NULL);
    simgpu_set_cost(k0, 0.0);
    simgpu_set_cost(k10, 10.0);
    simgpu_set_cost(k100, 100.0);
    return sim_test_run(NULL);
}
