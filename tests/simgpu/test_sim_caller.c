/* test_sim_caller.c — fault injection restricted to one caller (SIMGPU_FAIL_CALLER,
 * simgpu_fail_caller): calls from libtest_caller.so versus calls from this program. */
#include "simgpu_test.h"
#include "test_caller_lib.h"

#include <stdio.h>
#include <unistd.h>

#define LIB  "libtest_caller"  /* a substring of the library's path only */
#define PROG "test_sim_caller" /* a substring of this program's path only */

SIM_TEST(test_env_rule_fails_only_the_library_calls)
{
    (void)state;
    /* SIMGPU_FAIL=cuMemAlloc_v2:2,cuEventCreate:2:sticky, SIMGPU_FAIL_CALLER=LIB */
    uint64_t failures = sim_test_stats().injected_failures;
    CUdeviceptr p[5];
    CK(cuMemAlloc(&p[0], 4096)); /* the program's calls are not matched... */
    CK(cuMemAlloc(&p[1], 4096)); /* ...so its second call does not fail */
    CK(caller_lib_alloc(&p[2], 4096));
    assert_int_equal(caller_lib_alloc(&p[3], 4096),
                     CUDA_ERROR_OUT_OF_MEMORY); /* the library's 2nd */
    CK(cuMemAlloc(&p[3], 4096));
    CK(caller_lib_alloc(&p[4], 4096));
    assert_int_equal(simgpu_calls("cuMemAlloc_v2"), 6);
    assert_int_equal(simgpu_caller_calls("cuMemAlloc_v2"), 3);
    for (int i = 0; i < 5; i++)
        CK(cuMemFree(p[i]));
    CUevent e[4];
    CK(caller_lib_event_create(&e[0]));
    for (int i = 0; i < 3; i++) {
        assert_int_equal(caller_lib_event_create(&e[1]), CUDA_ERROR_UNKNOWN); /* sticky from 2nd */
        CK(cuEventCreate(&e[1 + i], 0));                                      /* the program's */
    }
    assert_int_equal(simgpu_caller_calls("cuEventCreate"), 4);
    assert_int_equal(sim_test_stats().injected_failures - failures, 4);
    for (int i = 0; i < 4; i++)
        CK(cuEventDestroy(e[i]));
}

SIM_TEST(test_api_restricts_to_the_program)
{
    (void)state;
    assert_int_equal(simgpu_fail("cuMemAlloc_v2", 0, 0), 0);
    assert_int_equal(simgpu_fail("cuEventCreate", 0, 0), 0);
    assert_int_equal(simgpu_fail_caller(PROG), 0);
    assert_int_equal(simgpu_caller_calls("cuMemAlloc_v2"), 0); /* restarted */
    assert_int_equal(simgpu_fail("cuMemAlloc_v2", 2, 0), 0);   /* the program's next 2nd call */
    unsigned long all = simgpu_calls("cuMemAlloc_v2");
    CUdeviceptr p[3];
    CK(cuMemAlloc(&p[0], 4096));
    CK(caller_lib_alloc(&p[1], 4096)); /* not matched, not counted against the rule */
    assert_int_equal(cuMemAlloc(&p[2], 4096), CUDA_ERROR_OUT_OF_MEMORY);
    CK(cuMemAlloc(&p[2], 4096));
    assert_int_equal(simgpu_caller_calls("cuMemAlloc_v2"), 3);
    assert_int_equal(simgpu_calls("cuMemAlloc_v2") - all, 4);
    for (int i = 0; i < 3; i++)
        CK(cuMemFree(p[i]));
}

SIM_TEST(test_unknown_caller_never_fails)
{
    (void)state;
    assert_int_equal(simgpu_fail_caller("no-such-object.so"), 0);
    assert_int_equal(simgpu_fail("cuMemAlloc_v2", 1, 1), 0);
    uint64_t failures = sim_test_stats().injected_failures;
    CUdeviceptr p, q;
    CK(cuMemAlloc(&p, 4096));
    CK(caller_lib_alloc(&q, 4096));
    assert_int_equal(sim_test_stats().injected_failures, failures);
    assert_int_equal(simgpu_caller_calls("cuMemAlloc_v2"), 0);
    CK(cuMemFree(p));
    CK(cuMemFree(q));
    /* without a restriction the same rule fails every caller */
    assert_int_equal(simgpu_fail_caller(NULL), 0);
    assert_int_equal(simgpu_fail("cuMemAlloc_v2", 1, 1), 0);
    assert_int_equal(cuMemAlloc(&p, 4096), CUDA_ERROR_OUT_OF_MEMORY);
    assert_int_equal(caller_lib_alloc(&q, 4096), CUDA_ERROR_OUT_OF_MEMORY);
    assert_int_equal(simgpu_fail("cuMemAlloc_v2", 0, 0), 0);
}

/* The "caller_calls" line of the statistics file. */
static void stats_caller_line(char *line, size_t size)
{
    char path[] = "/tmp/test_sim_caller.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(simgpu_write_stats(path), 0);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    line[0] = '\0';
    char buf[512];
    while (fgets(buf, sizeof buf, f))
        if (strstr(buf, "\"caller_calls\""))
            snprintf(line, size, "%s", buf);
    fclose(f);
    unlink(path);
}

SIM_TEST(test_stats_file_lists_matched_calls)
{
    (void)state;
    assert_int_equal(simgpu_fail_caller(LIB), 0);
    CUdeviceptr p, q;
    CUevent e1, e2;
    CK(caller_lib_alloc(&p, 4096));
    CK(caller_lib_event_create(&e1));
    CK(caller_lib_event_create(&e2));
    CK(cuMemAlloc(&q, 4096)); /* the program's: not listed */
    CK(cuEventDestroy(e1));   /* the program's: not listed */
    char line[512];
    stats_caller_line(line, sizeof line);
    assert_string_equal(line, "  \"caller_calls\": {\"cuMemAlloc_v2\": 1, \"cuEventCreate\": 2}\n");
    /* a substring too long is refused and changes nothing */
    char longer[300];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    assert_int_equal(simgpu_fail_caller(longer), -1);
    assert_int_equal(simgpu_caller_calls("cuEventCreate"), 2);
    assert_int_equal(simgpu_fail_caller(""), 0);
    stats_caller_line(line, sizeof line);
    assert_string_equal(line, "  \"caller_calls\": {}\n");
    CK(cuMemFree(p));
    CK(cuMemFree(q));
    CK(cuEventDestroy(e2));
}

int main(void)
{
    setenv("SIMGPU_FAIL", "cuMemAlloc_v2:2,cuEventCreate:2:sticky", 1);
    setenv("SIMGPU_FAIL_CALLER", LIB, 1);
    setenv("SIMGPU_QUIET", "1", 1);
    sim_test_ctx();
    return sim_test_run(NULL);
}
