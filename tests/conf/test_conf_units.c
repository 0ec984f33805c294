/* test_conf_units.c — unit tests of the size and duration parsers, formatters and resolution,
 * and of the one size grammar (conf_bytes.h) that conf_size_parse reads bytes with. */
#include "conf.h"
#include "conf_bytes.h"
#include "size_cases.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

static conf_size size_of(const char *text)
{
    conf_size s = {.kind = CONF_SIZE_AUTO, .bytes = 777, .ppm = 777};
    char err[256] = "";
    int rc = conf_size_parse(text, strlen(text), &s, err, sizeof err);
    if (rc != 0)
        fail_msg("\"%s\" did not parse: %s", text, err);
    return s;
}

static void expect_bytes(const char *text, uint64_t bytes)
{
    conf_size s = size_of(text);
    assert_int_equal(s.kind, CONF_SIZE_BYTES);
    assert_int_equal(s.bytes, bytes);
}

static void sizes_with_units(void **state)
{
    (void)state;
    expect_bytes("40GiB", 40ull << 30);
    expect_bytes("512MiB", 512ull << 20);
    expect_bytes("1KiB", 1024);
    expect_bytes("3TiB", 3ull << 40);
    expect_bytes("1PiB", 1ull << 50);
    expect_bytes("7B", 7);
    expect_bytes("1.5GiB", 1610612736);
    expect_bytes("0.1KiB", 102); /* rounded down */
    expect_bytes("10 gib", 10ull << 30);
    expect_bytes("1KB", 1000);
    expect_bytes("2.5MB", 2500000);
    expect_bytes("4GB", 4000000000ull);
    expect_bytes("15TB", 15000000000000ull);
    expect_bytes("16383PiB", 16383ull << 50);
    /* K, M, G, T, P alone or with i are the binary units, as in the planner's model format */
    expect_bytes("40G", 40ull << 30);
    expect_bytes("40g", 40ull << 30);
    expect_bytes("40Gi", 40ull << 30);
    expect_bytes("2K", 2048);
    expect_bytes("1.5M", 3ull << 19);
    expect_bytes("3T", 3ull << 40);
    expect_bytes("1P", 1ull << 50);
    expect_bytes("1PB", 1000000000000000ull);
}

static void sizes_plain_bytes(void **state)
{
    (void)state;
    expect_bytes("0", 0);
    expect_bytes("4096", 4096);
    expect_bytes("18446744073709551615", UINT64_MAX);
}

static void sizes_percent_and_auto(void **state)
{
    (void)state;
    conf_size s = size_of("60%");
    assert_int_equal(s.kind, CONF_SIZE_PERCENT);
    assert_int_equal(s.ppm, 600000);
    assert_int_equal(size_of("12.5%").ppm, 125000);
    assert_int_equal(size_of("0.0001%").ppm, 1);
    assert_int_equal(size_of("100 %").ppm, 1000000);
    assert_int_equal(size_of("auto").kind, CONF_SIZE_AUTO);
    assert_int_equal(size_of("AUTO").kind, CONF_SIZE_AUTO);
}

static void expect_size_error(const char *text, const char *message)
{
    conf_size s;
    char err[256] = "";
    assert_int_equal(conf_size_parse(text, strlen(text), &s, err, sizeof err), -1);
    if (message != NULL)
        assert_string_equal(err, message);
    else
        assert_true(strncmp(err, "invalid size", 12) == 0);
}

static void size_errors(void **state)
{
    (void)state;
    expect_size_error("40XB", "invalid size \"40XB\": expected a number of bytes, alone or with a "
                              "unit (B; K, Ki, KiB, M, Mi, MiB, G, Gi, GiB, T, Ti, TiB, P, Pi, "
                              "PiB: powers of 1024; KB, MB, GB, TB, PB: powers of 1000), a "
                              "percentage, or auto");
    expect_size_error("", NULL);
    expect_size_error("GiB", NULL);
    expect_size_error("-1GiB", NULL);
    expect_size_error("1.5", NULL); /* a byte count is whole */
    expect_size_error("1.GiB", NULL);
    expect_size_error(".5GiB", NULL);
    expect_size_error("1GiBs", NULL);
    expect_size_error(" 1GiB", NULL);
    expect_size_error("1e3", NULL);
    expect_size_error("+1GiB", NULL);
    expect_size_error("1GiB ", NULL);
    expect_size_error("18446744073709551616", NULL);
    expect_size_error("16384PiB", "invalid size \"16384PiB\": more than 2^64 bytes");
    expect_size_error("1.00001%", "invalid size \"1.00001%\": at most 4 decimals in a percentage");
    expect_size_error("1.1234567891GiB", NULL);
    expect_size_error("5000000%", "invalid size \"5000000%\": percentage too large");
    expect_size_error("1\x01GiB", NULL);
}

/* The one size grammar: conf_bytes_parse on every case, and conf_size_parse reading bytes the
   same way (same count, or refused with an "invalid size" reason). */
static void bytes_grammar(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof size_cases / sizeof size_cases[0]; i++) {
        const struct size_case *c = &size_cases[i];
        uint64_t v = 12345;
        char err[512] = "", err2[512] = "";
        int rc = conf_bytes_parse(c->text, strlen(c->text), &v, err, sizeof err);
        if (rc != c->rc || (rc == CONF_BYTES_OK && v != c->bytes))
            fail_msg("conf_bytes_parse(\"%s\"): %d, %llu (%s); want %d, %llu", c->text, rc,
                     (unsigned long long)v, err, c->rc, (unsigned long long)c->bytes);
        if (rc != CONF_BYTES_OK && strncmp(err, "invalid size \"", 14) != 0)
            fail_msg("conf_bytes_parse(\"%s\"): reason \"%s\"", c->text, err);
        conf_size s = {0};
        int rc2 = conf_size_parse(c->text, strlen(c->text), &s, err2, sizeof err2);
        if ((rc2 == 0) != (rc == CONF_BYTES_OK) ||
            (rc2 == 0 && (s.kind != CONF_SIZE_BYTES || s.bytes != c->bytes)) ||
            (rc2 != 0 && strncmp(err2, "invalid size \"", 14) != 0))
            fail_msg("conf_size_parse(\"%s\") disagrees: %d (%s)", c->text, rc2, err2);
    }
    uint64_t v = 99;
    char err[256];
    assert_int_equal(conf_bytes_parse("1.5", 3, &v, err, sizeof err), CONF_BYTES_SYNTAX);
    assert_string_equal(err,
                        "invalid size \"1.5\": a byte count is whole (a fraction needs a unit)");
    assert_int_equal(v, 99); /* untouched on failure */
    assert_int_equal(conf_bytes_parse("16384PiB", 8, &v, NULL, 0), CONF_BYTES_RANGE);
    assert_int_equal(conf_bytes_parse("40X", 3, &v, err, sizeof err), CONF_BYTES_SYNTAX);
    assert_string_equal(err,
                        "invalid size \"40X\": expected a number of bytes, alone or with a unit "
                        "(" CONF_BYTES_UNITS ")");
    /* a size's text is cut at 64 bytes in the reason */
    char long_text[100];
    memset(long_text, '9', sizeof long_text);
    assert_int_equal(conf_bytes_parse(long_text, sizeof long_text, &v, err, sizeof err),
                     CONF_BYTES_SYNTAX);
    assert_non_null(strstr(err, "999...\": "));
}

static void size_error_excerpt_is_printable(void **state)
{
    (void)state;
    conf_size s;
    char err[256];
    assert_int_equal(conf_size_parse("a\nb", 3, &s, err, sizeof err), -1);
    assert_true(strncmp(err, "invalid size \"a?b\":", 19) == 0);
}

static void expect_format(conf_size s, const char *want)
{
    char buf[64];
    size_t n = conf_size_format(&s, buf, sizeof buf);
    assert_string_equal(buf, want);
    assert_int_equal(n, strlen(want));
}

static void size_format(void **state)
{
    (void)state;
    expect_format((conf_size){.kind = CONF_SIZE_BYTES, .bytes = 40ull << 30}, "40GiB");
    expect_format((conf_size){.kind = CONF_SIZE_BYTES, .bytes = 1536}, "1536");
    expect_format((conf_size){.kind = CONF_SIZE_BYTES, .bytes = 3072}, "3KiB");
    expect_format((conf_size){.kind = CONF_SIZE_BYTES, .bytes = 0}, "0");
    expect_format((conf_size){.kind = CONF_SIZE_BYTES, .bytes = 3ull << 50}, "3PiB");
    expect_format((conf_size){.kind = CONF_SIZE_PERCENT, .ppm = 600000}, "60%");
    expect_format((conf_size){.kind = CONF_SIZE_PERCENT, .ppm = 125000}, "12.5%");
    expect_format((conf_size){.kind = CONF_SIZE_PERCENT, .ppm = 1}, "0.0001%");
    expect_format((conf_size){.kind = CONF_SIZE_AUTO}, "auto");
}

static void size_format_truncates(void **state)
{
    (void)state;
    char buf[4];
    conf_size s = {.kind = CONF_SIZE_BYTES, .bytes = 40ull << 30};
    assert_int_equal(conf_size_format(&s, buf, sizeof buf), 5);
    assert_string_equal(buf, "40G");
}

static void size_resolve(void **state)
{
    (void)state;
    uint64_t dev = 80ull << 30;
    conf_size pct = size_of("60%"), third = size_of("33.3333%"), auto_ = size_of("auto");
    conf_size bytes = size_of("2GiB");
    assert_int_equal(conf_size_resolve(&pct, dev, 5), 48ull << 30);
    assert_int_equal(conf_size_resolve(&third, 1000, 5), 333);
    assert_int_equal(conf_size_resolve(&third, 999999, 5), 333332);
    assert_int_equal(conf_size_resolve(&auto_, dev, 5), 5);
    assert_int_equal(conf_size_resolve(&bytes, dev, 5), 2ull << 30);
    conf_size full = size_of("100%");
    assert_int_equal(conf_size_resolve(&full, UINT64_MAX, 0), UINT64_MAX);
}

static int64_t duration_of(const char *text)
{
    int64_t ns = -1;
    char err[256] = "";
    if (conf_duration_parse(text, strlen(text), &ns, err, sizeof err) != 0)
        fail_msg("\"%s\" did not parse: %s", text, err);
    return ns;
}

static void durations(void **state)
{
    (void)state;
    assert_int_equal(duration_of("50ms"), 50 * CONF_MS);
    assert_int_equal(duration_of("2s"), 2 * CONF_SEC);
    assert_int_equal(duration_of("100us"), 100 * CONF_US);
    assert_int_equal(duration_of("7ns"), 7);
    assert_int_equal(duration_of("1.5s"), 1500 * CONF_MS);
    assert_int_equal(duration_of("3min"), 180 * CONF_SEC);
    assert_int_equal(duration_of("1h"), 3600 * CONF_SEC);
    assert_int_equal(duration_of("5 MS"), 5 * CONF_MS);
    assert_int_equal(duration_of("0.000000001s"), 1);
}

static void expect_duration_error(const char *text, const char *message)
{
    int64_t ns;
    char err[256] = "";
    assert_int_equal(conf_duration_parse(text, strlen(text), &ns, err, sizeof err), -1);
    if (message != NULL)
        assert_string_equal(err, message);
}

static void duration_errors(void **state)
{
    (void)state;
    expect_duration_error("50", "invalid duration \"50\": expected a number with a unit (ns, us, "
                                "ms, s, min, h)");
    expect_duration_error("ms", NULL);
    expect_duration_error("5mss", NULL);
    expect_duration_error("-5ms", NULL);
    expect_duration_error("10000000000h", "invalid duration \"10000000000h\": too long");
}

static void duration_format(void **state)
{
    (void)state;
    char buf[32];
    conf_duration_format(100 * CONF_MS, buf, sizeof buf);
    assert_string_equal(buf, "100ms");
    conf_duration_format(1500 * CONF_MS, buf, sizeof buf);
    assert_string_equal(buf, "1500ms");
    conf_duration_format(60 * CONF_SEC, buf, sizeof buf);
    assert_string_equal(buf, "1min");
    conf_duration_format(7200 * CONF_SEC, buf, sizeof buf);
    assert_string_equal(buf, "2h");
    conf_duration_format(0, buf, sizeof buf);
    assert_string_equal(buf, "0ns");
    conf_duration_format(1001, buf, sizeof buf);
    assert_string_equal(buf, "1001ns");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sizes_with_units),
        cmocka_unit_test(sizes_plain_bytes),
        cmocka_unit_test(sizes_percent_and_auto),
        cmocka_unit_test(size_errors),
        cmocka_unit_test(bytes_grammar),
        cmocka_unit_test(size_error_excerpt_is_printable),
        cmocka_unit_test(size_format),
        cmocka_unit_test(size_format_truncates),
        cmocka_unit_test(size_resolve),
        cmocka_unit_test(durations),
        cmocka_unit_test(duration_errors),
        cmocka_unit_test(duration_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
