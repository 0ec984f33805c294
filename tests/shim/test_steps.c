/* test_steps.c — step detection (shim/core/shim_steps.c) fed the launches and host
 * synchronisations of real training loops: a step of several segments between synchronisations
 * (gradient accumulation, a loss read every k micro-batches), a program whose first launch is its
 * step, a step that changes length, and jobs whose step is never found. Each case feeds a fresh
 * detector of its own (struct shim_steps, numbering its launches from 0) and checks what the step
 * listener heard. */
#include "shim_core.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MAX_HEARD 256

/* What the listener heard: every closed step in order, with the launch index the detector had
   reached when it closed (the launches fed so far), and the detector's answers at the end. */
struct heard {
    int steady, unsteady, nsteps;
    uint64_t step[MAX_HEARD], first[MAX_HEARD], at[MAX_HEARD];
    int profiled_left[MAX_HEARD];
    uint64_t length, closed;
    bool profiling;
};

static struct heard heard;
static struct heard *const h = &heard;

/* The case's detector and the launch counter it reads. */
static struct shim_steps *det;
static _Atomic uint64_t launches;

static void on_steady(void)
{
    h->steady++;
}

static void on_unsteady(void)
{
    h->unsteady++;
}

static void on_step_closed(uint64_t step, uint64_t first_seq, int profiled_left)
{
    if (h->nsteps >= MAX_HEARD)
        return;
    h->step[h->nsteps] = step;
    h->first[h->nsteps] = first_seq;
    h->at[h->nsteps] = atomic_load(&launches);
    h->profiled_left[h->nsteps++] = profiled_left;
}

static const struct shim_step_listener listener = {
    .steady = on_steady, .step_closed = on_step_closed, .unsteady = on_unsteady};

/* One launch of function fid, as the launch hook feeds it. */
static void launch(uint64_t fid)
{
    shim_steps_launch(det, atomic_fetch_add(&launches, 1), fid);
}

/* The host waits for the device (a loss read, a synchronous copy). */
static void host_sync(void)
{
    shim_steps_host_sync(det);
}

/* A segment named by a letter: 3 + (c - 'A') launches of functions of its own, then a
   synchronisation. */
static uint64_t seg_len(char c)
{
    return 3 + (uint64_t)(c - 'A');
}

static void segment(char c)
{
    for (uint64_t i = 0; i < seg_len(c); i++)
        launch((uint64_t)c * 100 + i);
    host_sync();
}

/* The segments named by pattern, times over. */
static void segments(const char *pattern, int times)
{
    for (int t = 0; t < times; t++)
        for (const char *c = pattern; *c; c++)
            segment(*c);
}

static uint64_t pattern_len(const char *pattern)
{
    uint64_t n = 0;
    for (const char *c = pattern; *c; c++)
        n += seg_len(*c);
    return n;
}

/* Runs job on a fresh detector (profiling 2 steps: main) and returns what the listener heard. */
static const struct heard *run(void (*job)(void))
{
    memset(h, 0, sizeof *h);
    struct shim_steps s;
    atomic_store(&launches, 0);
    shim_steps_init(&s, &launches);
    det = &s;
    job();
    h->length = shim_steps_step_len(&s);
    h->closed = shim_steps_closed(&s);
    h->profiling = shim_steps_profiling(&s);
    det = NULL;
    shim_steps_fini(&s);
    return h;
}

/* Steps are numbered 0, 1, 2, ... in the order they close, whatever happened between. */
static void assert_numbered(const struct heard *got)
{
    for (int i = 0; i < got->nsteps; i++)
        assert_int_equal(got->step[i], i);
    assert_int_equal(got->closed, got->nsteps);
}

/* ---- a program whose first launch is its step ---- */

static void job_first_launch(void)
{
    segments("A", 5);
}

/* No warm-up: the first segment is step 0, found when the second repeats it; both are written
   then, and every later segment closes one step. */
static void test_first_launch_is_the_step(void **state)
{
    (void)state;
    const struct heard *got = run(job_first_launch);
    uint64_t a = seg_len('A');
    assert_int_equal(got->steady, 1);
    assert_int_equal(got->unsteady, 0);
    assert_int_equal(got->nsteps, 5);
    assert_numbered(got);
    for (int i = 0; i < 5; i++)
        assert_int_equal(got->first[i], i * a);
    assert_int_equal(got->at[0], 2 * a); /* found at the end of the second step, not later */
    assert_int_equal(got->at[1], 2 * a);
    assert_int_equal(got->at[4], 5 * a);
    assert_int_equal(got->length, a);
    /* two profiled steps after the detection, then none */
    assert_int_equal(got->profiled_left[2], 1);
    assert_int_equal(got->profiled_left[3], 0);
    assert_false(got->profiling);
}

/* ---- steps of several segments ---- */

static void job_two_segments(void)
{
    segments("AB", 6);
}

/* Gradient accumulation over two micro-batches with the loss read after each: two different
   segments per step, found after two steps, from launch 0. */
static void test_step_of_two_segments(void **state)
{
    (void)state;
    const struct heard *got = run(job_two_segments);
    uint64_t step = pattern_len("AB");
    assert_int_equal(got->steady, 1);
    assert_int_equal(got->unsteady, 0);
    assert_int_equal(got->nsteps, 6);
    assert_numbered(got);
    for (int i = 0; i < 6; i++)
        assert_int_equal(got->first[i], i * step);
    assert_int_equal(got->at[0], 2 * step);
    assert_int_equal(got->at[5], 6 * step);
    assert_int_equal(got->length, step);
}

static void job_eight_segments(void)
{
    segments("ABCDEFGH", 3);
}

/* The longest step found: eight segments between synchronisations. */
static void test_step_of_eight_segments(void **state)
{
    (void)state;
    const struct heard *got = run(job_eight_segments);
    uint64_t step = pattern_len("ABCDEFGH");
    assert_int_equal(got->steady, 1);
    assert_int_equal(got->nsteps, 3);
    assert_numbered(got);
    for (int i = 0; i < 3; i++)
        assert_int_equal(got->first[i], i * step);
    assert_int_equal(got->at[0], 2 * step);
    assert_int_equal(got->length, step);
}

/* A micro-batch: forward and backward over four layers. */
static void micro_batch(void)
{
    for (uint64_t l = 0; l < 4; l++)
        launch(1000 + l);
    for (uint64_t l = 4; l-- > 0;)
        launch(2000 + l);
}

static void optimizer(void)
{
    for (uint64_t l = 0; l < 4; l++)
        launch(3000 + l);
}

enum { MB_LAUNCHES = 8, OPT_LAUNCHES = 4 };

/* Four micro-batches per optimizer step, the loss read every second micro-batch: the optimizer
   runs after a read, so after a first [mb mb] the segments are [mb mb] [opt mb mb], repeated. */
static void job_loss_every_second_micro_batch(void)
{
    for (int s = 0; s < 8; s++) {
        for (int mb = 0; mb < 4; mb++) {
            micro_batch();
            if (mb % 2 == 1)
                host_sync();
        }
        optimizer();
    }
}

/* The first two segments are equal ([mb mb] twice) and look like a step of one segment until
   the optimizer's segment breaks it; the step of two segments is found at the fifth segment
   and kept to the end. Of the two steps compared then, the first (from the second segment)
   began inside step 1, already written: only the second is (steps never go back). Six steps
   after the first two, back to back, each beginning with [mb mb]. */
static void test_loss_read_every_second_micro_batch(void **state)
{
    (void)state;
    const struct heard *got = run(job_loss_every_second_micro_batch);
    uint64_t pair = 2 * MB_LAUNCHES, step = 4 * MB_LAUNCHES + OPT_LAUNCHES;
    assert_int_equal(got->steady, 2);
    assert_int_equal(got->unsteady, 1);
    assert_numbered(got);
    assert_int_equal(got->length, step);
    assert_int_equal(got->nsteps, 8);
    assert_int_equal(got->first[1], pair);
    for (int i = 2; i < 8; i++) /* step i begins with segment 2i, at pair + (i - 1) * step */
        assert_int_equal(got->first[i], pair + (uint64_t)(i - 1) * step);
    assert_int_equal(got->at[2], pair + 2 * step); /* written when found, at the fifth read */
    assert_int_equal(got->at[7], pair + 7 * step); /* closed at the last read */
}

static void job_accumulate_four(void)
{
    segments("AAAB", 6);
}

/* Accumulation over four micro-batches with the loss read after each: three equal segments,
   then one with the optimizer. The equal neighbours look like a step of one segment until the
   optimizer's segment breaks it (twice); the step of four is found at the ninth segment and
   then kept. Both steps compared then began inside steps already written (the one-segment
   steps of the equal neighbours): neither is written again (steps never go back), and the
   segments since the last one written stay in it. The last three steps closed are whole steps
   of four segments, back to back, after the six one-segment steps. */
static void test_accumulation_with_equal_micro_batches(void **state)
{
    (void)state;
    const struct heard *got = run(job_accumulate_four);
    uint64_t a = seg_len('A'), step = pattern_len("AAAB");
    assert_numbered(got);
    assert_int_equal(got->length, step);
    assert_int_equal(got->steady, 3);
    assert_int_equal(got->unsteady, 2);
    assert_int_equal(got->nsteps, 9);
    const uint64_t one[6] = {0,    a,        2 * a,
                             step, step + a, step + 2 * a}; /* the A's of cycles 0, 1 */
    for (int i = 0; i < 6; i++)
        assert_int_equal(got->first[i], one[i]);
    for (int i = 6; i < 9; i++) /* steps 6..8 begin at the second A of cycles 2..4 */
        assert_int_equal(got->first[i], (uint64_t)(i - 4) * step + a);
    assert_int_equal(got->at[8], 5 * step + a); /* closed at the end of cycle 5's first A */
}

/* ---- a step that changes length ---- */

static void job_changes_length(void)
{
    segments("A", 5);
    segments("C", 5);
}

/* Five steps of one kind, then five longer ones (a new phase): steady state is lost at the
   first longer segment and found again at the second; step numbers carry on. */
static void test_step_changes_length(void **state)
{
    (void)state;
    const struct heard *got = run(job_changes_length);
    uint64_t a = seg_len('A'), c = seg_len('C');
    assert_int_equal(got->steady, 2);
    assert_int_equal(got->unsteady, 1);
    assert_int_equal(got->nsteps, 10);
    assert_numbered(got);
    const uint64_t want[10] = {0,     a,         2 * a,         3 * a,         4 * a,
                               5 * a, 5 * a + c, 5 * a + 2 * c, 5 * a + 3 * c, 5 * a + 4 * c};
    for (int i = 0; i < 10; i++)
        assert_int_equal(got->first[i], want[i]);
    assert_int_equal(got->at[5], 5 * a + 2 * c); /* found again after two of the new steps */
    assert_int_equal(got->length, c);
}

static void job_step_grows_a_segment(void)
{
    segments("A", 3);
    segments("BA", 4); /* the step becomes B A: found again with a step before it */
}

/* A A A, then B A repeated: the new step of two segments is found when B A has repeated once
   (A B A B is in the history too). Steps never go back: the first step compared at the new
   detection (from the third A, already written as a step of its own) is not written again; every
   step starts after the one before it. */
static void test_steps_never_start_before_a_closed_step(void **state)
{
    (void)state;
    const struct heard *got = run(job_step_grows_a_segment);
    uint64_t a = seg_len('A'), b = seg_len('B');
    assert_int_equal(got->steady, 2);
    assert_numbered(got);
    for (int i = 1; i < got->nsteps; i++)
        assert_true(got->first[i] > got->first[i - 1]);
    /* A, A, A at 0, a, 2a; then the steps of B A that start after the third A's step */
    assert_true(got->nsteps >= 5);
    assert_int_equal(got->first[0], 0);
    assert_int_equal(got->first[1], a);
    assert_int_equal(got->first[2], 2 * a);
    assert_true(got->first[3] >= 3 * a);
    assert_int_equal(got->length, a + b);
}

static void job_changes_functions(void)
{
    segments("A", 4);
    for (int s = 0; s < 4; s++) { /* as long as A's, other functions (another phase's kernels) */
        for (uint64_t i = 0; i < seg_len('A'); i++)
            launch(9000 + i);
        host_sync();
    }
}

/* A step of the same length but other functions is another step: steady state is lost and
   found again, with the same length. */
static void test_step_changes_functions_not_length(void **state)
{
    (void)state;
    const struct heard *got = run(job_changes_functions);
    uint64_t a = seg_len('A');
    assert_int_equal(got->steady, 2);
    assert_int_equal(got->unsteady, 1);
    assert_int_equal(got->nsteps, 8);
    assert_numbered(got);
    for (int i = 0; i < 8; i++)
        assert_int_equal(got->first[i], i * a);
    assert_int_equal(got->at[4], 6 * a); /* found again after two of the new steps */
    assert_int_equal(got->length, a);
}

/* ---- jobs whose step is never found ---- */

/* Every segment differs (a server answering requests of every size). */
static void job_no_repeat(void)
{
    for (uint64_t s = 0; s < 64; s++) {
        for (uint64_t i = 0; i < 3 + s % 7; i++)
            launch(s * 100 + i);
        host_sync();
    }
}

static void test_no_step_in_segments_that_never_repeat(void **state)
{
    (void)state;
    const struct heard *got = run(job_no_repeat);
    assert_int_equal(got->steady, 0);
    assert_int_equal(got->nsteps, 0);
    assert_int_equal(got->closed, 0);
    assert_int_equal(got->length, 0);
    assert_false(got->profiling);
}

static void job_nine_segments(void)
{
    segments("ABCDEFGHI", 3);
}

/* A step of nine segments is past the longest searched (eight): never found. */
static void test_no_step_longer_than_eight_segments(void **state)
{
    (void)state;
    const struct heard *got = run(job_nine_segments);
    assert_int_equal(got->steady, 0);
    assert_int_equal(got->nsteps, 0);
    assert_int_equal(got->length, 0);
}

static void job_no_sync(void)
{
    for (uint64_t i = 0; i < 30; i++)
        launch(7 + i % 3);
}

/* Launches without any host synchronisation form no segment: nothing to compare. */
static void test_no_step_without_synchronisations(void **state)
{
    (void)state;
    const struct heard *got = run(job_no_sync);
    assert_int_equal(got->steady, 0);
    assert_int_equal(got->nsteps, 0);
    assert_int_equal(got->length, 0);
}

int main(void)
{
    shim_log_open(0, NULL, 0);
    shim.profile_iterations = 2;
    shim_step_listen(&listener);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_launch_is_the_step),
        cmocka_unit_test(test_step_of_two_segments),
        cmocka_unit_test(test_step_of_eight_segments),
        cmocka_unit_test(test_loss_read_every_second_micro_batch),
        cmocka_unit_test(test_accumulation_with_equal_micro_batches),
        cmocka_unit_test(test_step_changes_length),
        cmocka_unit_test(test_step_changes_functions_not_length),
        cmocka_unit_test(test_steps_never_start_before_a_closed_step),
        cmocka_unit_test(test_no_step_in_segments_that_never_repeat),
        cmocka_unit_test(test_no_step_longer_than_eight_segments),
        cmocka_unit_test(test_no_step_without_synchronisations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
