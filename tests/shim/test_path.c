/* test_path.c — the one path-pattern expander (shim/trace/shim_path.c: trace.path and log.file) and
 * the strict rank parser behind %r: expansions, every error naming the option and the pattern,
 * a path one byte too long refused rather than cut, and ranks that are not numbers. */
#include "shim_path.h"

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static void expands(void **state)
{
    (void)state;
    char out[64], err[256];
    assert_int_equal(
        shim_path_expand("log.file", "t-%p-%r.%%x", 123, 7, out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, "t-123-7.%x");
    assert_int_equal(shim_path_expand("trace.path", "%p%p", 5, 0, out, sizeof out, err, sizeof err),
                     0);
    assert_string_equal(out, "55");
    assert_int_equal(
        shim_path_expand("trace.path", "plain", 5, 0, out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, "plain");
    assert_int_equal(
        shim_path_expand("log.file", "r%r", 5, 2147483647, out, sizeof out, err, sizeof err), 0);
    assert_string_equal(out, "r2147483647");
}

/* err is "OPTION \"PATTERN\": REASON" and out is empty. */
static void expect_error(const char *option, const char *pattern, size_t outlen, const char *why)
{
    char out[PATH_MAX], err[256], head[128];
    memset(out, 'x', sizeof out);
    assert_int_equal(shim_path_expand(option, pattern, 4242, 3, out, outlen, err, sizeof err), -1);
    if (outlen > 0)
        assert_int_equal(out[0], '\0');
    snprintf(head, sizeof head, "%s \"", option);
    if (strncmp(err, head, strlen(head)) != 0 || strstr(err, why) == NULL)
        fail_msg("%s: got \"%s\", want it to start with %s and hold \"%s\"", pattern, err, head,
                 why);
}

static void errors_name_option_and_pattern(void **state)
{
    (void)state;
    expect_error("log.file", "a%q", 64, "\"a%q\": unknown '%q'");
    expect_error("trace.path", "a%", 64, "\"a%\": a % at the end");
    expect_error("trace.path", "", 64, "empty path pattern");
    expect_error("log.file", "a%\n", 64, "byte 0x0a");
    /* 4 pids of 4 digits: 16 bytes do not fit in 15 */
    expect_error("log.file", "%p%p%p%p", 16, "\"%p%p%p%p\": expands to more than 15 bytes");
}

/* A pattern exactly as long as the room: it fits; one byte more: an error, never a cut path. */
static void never_truncates(void **state)
{
    (void)state;
    static char pattern[PATH_MAX + 1], out[PATH_MAX], err[256];
    memset(pattern, 'a', PATH_MAX - 1);
    pattern[PATH_MAX - 1] = '\0';
    assert_int_equal(shim_path_expand("log.file", pattern, 1, 0, out, sizeof out, err, sizeof err),
                     0);
    assert_int_equal(strlen(out), PATH_MAX - 1);
    pattern[PATH_MAX - 1] = 'a';
    pattern[PATH_MAX] = '\0';
    assert_int_equal(shim_path_expand("log.file", pattern, 1, 0, out, sizeof out, err, sizeof err),
                     -1);
    assert_string_equal(out, "");
    assert_non_null(strstr(err, "expands to more than 4095 bytes"));
    assert_non_null(strstr(err, "log.file \"aaaa"));
    assert_non_null(strstr(err, "...\"")); /* a long pattern is shown cut, with "..." */
    /* the last expansion is what does not fit: %p after 4090 bytes */
    memset(pattern, 'b', PATH_MAX - 6);
    memcpy(pattern + PATH_MAX - 6, "%p", 3);
    assert_int_equal(
        shim_path_expand("trace.path", pattern, 12345, 0, out, sizeof out, err, sizeof err), 0);
    assert_int_equal(
        shim_path_expand("trace.path", pattern, 123456, 0, out, sizeof out, err, sizeof err), -1);
}

static void ranks(void **state)
{
    (void)state;
    int r = -1;
    assert_int_equal(shim_path_rank(NULL, &r), SHIM_RANK_UNSET);
    assert_int_equal(r, 0);
    assert_int_equal(shim_path_rank("0", &r), SHIM_RANK_SET);
    assert_int_equal(r, 0);
    assert_int_equal(shim_path_rank("17", &r), SHIM_RANK_SET);
    assert_int_equal(r, 17);
    assert_int_equal(shim_path_rank("2147483647", &r), SHIM_RANK_SET);
    assert_int_equal(r, 2147483647);
    static const char *const bad[] = {"",    "abc", "3x", "x3",         "-1",
                                      "+1",  " 1",  "1 ", "2147483648", "99999999999999999999",
                                      "1.0", "0x1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = -1;
        if (shim_path_rank(bad[i], &r) != SHIM_RANK_BAD || r != 0)
            fail_msg("RANK=\"%s\" accepted (rank %d)", bad[i], r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(expands),
        cmocka_unit_test(errors_name_option_and_pattern),
        cmocka_unit_test(never_truncates),
        cmocka_unit_test(ranks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
