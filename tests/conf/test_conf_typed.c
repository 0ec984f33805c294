/* test_conf_typed.c — unit tests of the option types beyond one scalar: size lists (budgets),
   speed pairs (link_both_gbps), a duration or a word (link_remap); their bounds, and the warning
   a bad value of these lenient options gives (located, and the option at its default). */
#include "conf.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "conf_expect.h"

/* SHIM_<var>=value alone: applies without a diagnostic, and formats as want. */
static void env_good(conf_config *cfg, const char *entry, conf_option_id id, const char *want)
{
    char *envp[] = {(char *)entry, NULL};
    conf_diags d = {0};
    init(cfg);
    assert_int_equal(conf_config_apply_env(cfg, envp, &d), 0);
    if (d.count != 0)
        fail_msg("%s: unexpected diagnostic %s", entry, d.items[0].text);
    expect_text(cfg, id, want);
    conf_diags_free(&d);
}

/* SHIM_<var>=value alone: exactly one warning, no error, and the option back at its default. */
static void env_bad(const char *entry, conf_option_id id, const char *want_diag)
{
    char *envp[] = {(char *)entry, NULL};
    conf_config cfg, dflt;
    conf_diags d = {0};
    char a[512], b[512];
    init(&cfg);
    init(&dflt);
    assert_int_equal(conf_config_apply_env(&cfg, envp, &d), 0);
    assert_int_equal(d.count, 1);
    assert_int_equal(d.errors, 0);
    assert_int_equal(d.items[0].severity, CONF_WARNING);
    if (want_diag != NULL)
        assert_string_equal(d.items[0].text, want_diag);
    conf_setting_format(&cfg, id, a, sizeof a);
    conf_setting_format(&dflt, id, b, sizeof b);
    assert_string_equal(a, b);
    expect_source(&cfg, id, "default");
    conf_config_free(&cfg);
    conf_config_free(&dflt);
    conf_diags_free(&d);
}

/* A file holding text: exactly this one warning (FILE:LINE:COL), at line:col, and no error. */
static void file_bad(const char *text, int line, int col, const char *want_diag)
{
    conf_config cfg;
    conf_diags d = {0};
    init(&cfg);
    assert_int_equal(conf_config_apply_text(&cfg, text, strlen(text), "job.toml", &d), 0);
    assert_int_equal(d.count, 1);
    assert_int_equal(d.errors, 0);
    assert_int_equal(d.items[0].severity, CONF_WARNING);
    assert_int_equal(d.items[0].line, line);
    assert_int_equal(d.items[0].col, col);
    assert_string_equal(d.items[0].text, want_diag);
    conf_config_free(&cfg);
    conf_diags_free(&d);
}

static void table_rows(void **state)
{
    (void)state;
    const conf_option *b = conf_option_get(CONF_BUDGETS), *l = conf_option_get(CONF_LINK_BOTH_GBPS),
                      *r = conf_option_get(CONF_LINK_REMAP);
    assert_int_equal(b->type, CONF_OPT_SIZES);
    assert_int_equal(b->min, CONF_MIB);
    assert_int_equal(b->max, CONF_PIB);
    assert_int_equal(b->forms, CONF_FORM_AUTO | CONF_FORM_PERCENT | CONF_LENIENT);
    assert_int_equal(l->type, CONF_OPT_SPEEDS);
    assert_int_equal(l->min, 1);
    assert_int_equal(l->max, 1000000 * (int64_t)1000000000);
    assert_int_equal(r->type, CONF_OPT_DURATION);
    assert_int_equal(r->max, 1000000000 * CONF_SEC);
    assert_string_equal(r->choices, "measured");
    assert_int_equal(conf_option_get(CONF_BUDGET)->forms & CONF_LENIENT, 0);
}

static void defaults(void **state)
{
    (void)state;
    conf_config cfg;
    init(&cfg);
    assert_int_equal(conf_get_sizes(&cfg, CONF_BUDGETS).given, 0);
    assert_int_equal(conf_get_speeds(&cfg, CONF_LINK_BOTH_GBPS).bytes_per_s[0], 0);
    assert_int_equal(conf_get_speeds(&cfg, CONF_LINK_BOTH_GBPS).bytes_per_s[1], 0);
    assert_int_equal(conf_get_duration_ns(&cfg, CONF_LINK_REMAP), CONF_DURATION_WORD);
    expect_text(&cfg, CONF_BUDGETS, "\"\"");
    expect_text(&cfg, CONF_LINK_BOTH_GBPS, "\"\"");
    expect_text(&cfg, CONF_LINK_REMAP, "\"measured\"");
    /* reads of the wrong type give nothing */
    assert_int_equal(conf_get_sizes(&cfg, CONF_BUDGET).given, 0);
    assert_int_equal(conf_get_speeds(&cfg, CONF_MODE).bytes_per_s[1], 0);
    assert_null(conf_get_string(&cfg, CONF_BUDGETS));
    conf_config_free(&cfg);
}

static void size_list_values(void **state)
{
    (void)state;
    conf_config cfg;
    env_good(&cfg, "SHIM_BUDGETS= 20GiB ,, 75% ,auto", CONF_BUDGETS, "\"20GiB,,75%,auto\"");
    conf_sizes s = conf_get_sizes(&cfg, CONF_BUDGETS);
    assert_int_equal(s.given, 0xd);
    assert_int_equal(s.at[0].kind, CONF_SIZE_BYTES);
    assert_int_equal(s.at[0].bytes, 20 * CONF_GIB);
    assert_int_equal(s.at[2].kind, CONF_SIZE_PERCENT);
    assert_int_equal(s.at[2].ppm, 750000);
    assert_int_equal(s.at[3].kind, CONF_SIZE_AUTO);
    expect_source(&cfg, CONF_BUDGETS, "SHIM_BUDGETS");
    conf_config_free(&cfg);
    env_good(&cfg, "SHIM_BUDGETS=,", CONF_BUDGETS, "\"\""); /* two empty entries: none given */
    assert_int_equal(conf_get_sizes(&cfg, CONF_BUDGETS).given, 0);
    conf_config_free(&cfg);
    env_good(&cfg, "SHIM_BUDGETS=,,1GB", CONF_BUDGETS, "\",,1000000000\"");
    assert_int_equal(conf_get_sizes(&cfg, CONF_BUDGETS).given, 0x4);
    conf_config_free(&cfg);
}

static void size_list_bounds(void **state)
{
    (void)state;
    conf_config cfg;
    /* each entry: 1MiB to 1PiB, a share above 0% and at most 100%, 16 entries at most */
    env_good(&cfg, "SHIM_BUDGETS=1MiB,1PiB,0.0001%,100%", CONF_BUDGETS,
             "\"1MiB,1PiB,0.0001%,100%\"");
    assert_int_equal(conf_get_sizes(&cfg, CONF_BUDGETS).at[2].ppm, 1);
    conf_config_free(&cfg);
    env_good(&cfg, "SHIM_BUDGETS=1G,,,,,,,,,,,,,,,2G", CONF_BUDGETS, "\"1GiB,,,,,,,,,,,,,,,2GiB\"");
    assert_int_equal(conf_get_sizes(&cfg, CONF_BUDGETS).given, 0x8001);
    conf_config_free(&cfg);
    env_bad("SHIM_BUDGETS=1048575", CONF_BUDGETS,
            "SHIM_BUDGETS: warning: budgets = \"1048575\": entry 1 (\"1048575\"): 1048575 is out "
            "of range (1MiB to 1PiB); ignored: budgets = \"\" (the default) applies");
    env_bad("SHIM_BUDGETS=1GiB,1125899906842625", CONF_BUDGETS,
            "SHIM_BUDGETS: warning: budgets = \"1GiB,1125899906842625\": entry 2 "
            "(\"1125899906842625\"): 1125899906842625 is out of range (1MiB to 1PiB); ignored: "
            "budgets = \"\" (the default) applies");
    env_bad("SHIM_BUDGETS=1GiB,0%", CONF_BUDGETS,
            "SHIM_BUDGETS: warning: budgets = \"1GiB,0%\": entry 2 (\"0%\"): 0% is out of range "
            "(a share of the device above 0% and at most 100%); ignored: budgets = \"\" (the "
            "default) applies");
    env_bad("SHIM_BUDGETS=100.0001%", CONF_BUDGETS, NULL);
    env_bad("SHIM_BUDGETS=1G,,,,,,,,,,,,,,,,2G", CONF_BUDGETS,
            "SHIM_BUDGETS: warning: budgets = \"1G,,,,,,,,,,,,,,,,2G\": entry 17 (\"2G\"): more "
            "than 16 entries; ignored: budgets = \"\" (the default) applies");
}

static void size_list_malformed(void **state)
{
    (void)state;
    /* the message the shim logged before conf/ read budgets, with the variable in front */
    env_bad("SHIM_BUDGETS=1GiB,soon", CONF_BUDGETS,
            "SHIM_BUDGETS: warning: budgets = \"1GiB,soon\": entry 2 (\"soon\"): invalid size "
            "\"soon\": expected a number of bytes, alone or with a unit (B; K, Ki, KiB, M, Mi, "
            "MiB, G, Gi, GiB, T, Ti, TiB, P, Pi, PiB: powers of 1024; KB, MB, GB, TB, PB: powers "
            "of 1000), a percentage, or auto; ignored: budgets = \"\" (the default) applies");
    env_bad("SHIM_BUDGETS=1GiB;2GiB", CONF_BUDGETS, NULL);
    env_bad("SHIM_BUDGETS=-1GiB", CONF_BUDGETS, NULL);
    file_bad("\n  budgets = \"20GiB,  x\"\n", 2, 13,
             "job.toml:2:13: warning: budgets = \"20GiB,  x\": entry 2 (\"x\"): invalid size "
             "\"x\": expected a number of bytes, alone or with a unit (B; K, Ki, KiB, M, Mi, MiB, "
             "G, Gi, GiB, T, Ti, TiB, P, Pi, PiB: powers of 1024; KB, MB, GB, TB, PB: powers of "
             "1000), a percentage, or auto; ignored: budgets = \"\" (the default) applies");
    file_bad("budgets = 5\n", 1, 11,
             "job.toml:1:11: warning: budgets: expected a list of sizes (a string such as "
             "\"20GiB,,75%\"), not an integer; ignored: budgets = \"\" (the default) applies");
}

/* SHIM_LINK_BOTH_GBPS set by var is taken, shown as shown, and read as h2d and d2h bytes per
 * second. */
static void speeds_are(const char *var, const char *shown, uint64_t h2d, uint64_t d2h)
{
    conf_config cfg;
    env_good(&cfg, var, CONF_LINK_BOTH_GBPS, shown);
    conf_speeds s = conf_get_speeds(&cfg, CONF_LINK_BOTH_GBPS);
    assert_int_equal(s.bytes_per_s[0], h2d);
    assert_int_equal(s.bytes_per_s[1], d2h);
    conf_config_free(&cfg);
}

static void speed_pair_values(void **state)
{
    (void)state;
    speeds_are("SHIM_LINK_BOTH_GBPS=11.25, 25", "\"11.25,25\"", 11250000000, 25000000000);
    /* the bounds: above 0 (one byte per second) and at most 1e6 GB/s */
    speeds_are("SHIM_LINK_BOTH_GBPS=0.000000001,1000000", "\"0.000000001,1000000\"", 1,
               1000000000000000);
    conf_config cfg;
    env_good(&cfg, "SHIM_LINK_BOTH_GBPS=", CONF_LINK_BOTH_GBPS, "\"\"");
    conf_config_free(&cfg);
}

static void speed_pair_bad(void **state)
{
    (void)state;
    static const char *const bad[] = {"5,",     "0,5", "5,0",           "5,1000000.000000001",
                                      "5,40,1", "x,5", "-1,5",          "1e1,5",
                                      ",5",     " ",   "5,0.0000000001"};
    char entry[64];
    env_bad("SHIM_LINK_BOTH_GBPS=5", CONF_LINK_BOTH_GBPS,
            "SHIM_LINK_BOTH_GBPS: warning: link_both_gbps = \"5\": want H2D,D2H in GB/s, each in "
            "(0, 1000000], or empty; ignored: link_both_gbps = \"\" (the default) applies");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(entry, sizeof entry, "SHIM_LINK_BOTH_GBPS=%s", bad[i]);
        env_bad(entry, CONF_LINK_BOTH_GBPS, NULL);
    }
    file_bad("link_both_gbps = \"5,0\"\n", 1, 18,
             "job.toml:1:18: warning: link_both_gbps = \"5,0\": want H2D,D2H in GB/s, each in (0, "
             "1000000], or empty; ignored: link_both_gbps = \"\" (the default) applies");
}

/* SHIM_LINK_REMAP set by var is taken, shown as shown, and read as ns nanoseconds. */
static void remap_is(const char *var, const char *shown, int64_t ns)
{
    conf_config cfg;
    env_good(&cfg, var, CONF_LINK_REMAP, shown);
    assert_int_equal(conf_get_duration_ns(&cfg, CONF_LINK_REMAP), ns);
    conf_config_free(&cfg);
}

static void duration_or_word(void **state)
{
    (void)state;
    remap_is("SHIM_LINK_REMAP=10us", "\"10us\"", 10 * CONF_US);
    remap_is("SHIM_LINK_REMAP=0ns", "\"0ns\"", 0);
    remap_is("SHIM_LINK_REMAP=1000000000s", "\"1000000000s\"", 1000000000 * CONF_SEC);
    conf_config cfg;
    env_good(&cfg, "SHIM_LINK_REMAP=measured", CONF_LINK_REMAP, "\"measured\"");
    assert_int_equal(conf_get_duration_ns(&cfg, CONF_LINK_REMAP), CONF_DURATION_WORD);
    expect_source(&cfg, CONF_LINK_REMAP, "SHIM_LINK_REMAP");
    conf_config_free(&cfg);
    env_bad("SHIM_LINK_REMAP=soon", CONF_LINK_REMAP,
            "SHIM_LINK_REMAP: warning: link_remap = \"soon\": want \"measured\" or a duration of "
            "at most 1000000000s such as \"10us\"; ignored: link_remap = \"measured\" (the "
            "default) applies");
    env_bad("SHIM_LINK_REMAP=1000000000.000000001s", CONF_LINK_REMAP,
            "SHIM_LINK_REMAP: warning: link_remap = \"1000000000.000000001s\": want \"measured\" "
            "or a duration of at most 1000000000s such as \"10us\"; ignored: link_remap = "
            "\"measured\" (the default) applies");
    env_bad("SHIM_LINK_REMAP=Measured", CONF_LINK_REMAP, NULL);
    env_bad("SHIM_LINK_REMAP=", CONF_LINK_REMAP, NULL);
    file_bad("link_remap = 10\n", 1, 14,
             "job.toml:1:14: warning: link_remap: expected a duration (a string such as "
             "\"50ms\"), not an integer; ignored: link_remap = \"measured\" (the default) "
             "applies");
}

/* The word belongs to link_remap's row: another duration option takes no word. */
static void word_is_per_option(void **state)
{
    (void)state;
    const char *text = "trace.flush_interval = \"measured\"\n";
    conf_config cfg;
    conf_diags d = {0};
    init(&cfg);
    assert_int_equal(conf_config_apply_text(&cfg, text, strlen(text), "job.toml", &d), -1);
    assert_int_equal(d.errors, 1);
    assert_string_equal(d.items[0].text, "job.toml:1:24: error: trace.flush_interval: invalid "
                                         "duration \"measured\": expected a number with a unit "
                                         "(ns, us, ms, s, min, h)");
    conf_config_free(&cfg);
    conf_diags_free(&d);
}

/* A bad value takes the built-in default, not the file's value under it; other options and the
   file's good values still apply, and nothing counts as an error. */
static void fallback_is_the_default(void **state)
{
    (void)state;
    const char *text = "budgets = \"2GiB\"\nlink_remap = \"1ms\"\nlink_both_gbps = \"11,25\"\n"
                       "mode = \"record\"\n";
    char *envp[] = {"SHIM_BUDGETS=2GiB,x", "SHIM_LINK_BOTH_GBPS=11", "SHIM_BUDGET=3GiB", NULL};
    conf_config cfg;
    conf_diags d = {0};
    init(&cfg);
    assert_int_equal(conf_config_apply_text(&cfg, text, strlen(text), "job.toml", &d), 0);
    assert_int_equal(conf_config_apply_env(&cfg, envp, &d), 0);
    assert_int_equal(d.count, 2);
    assert_int_equal(d.errors, 0);
    assert_int_equal(conf_get_sizes(&cfg, CONF_BUDGETS).given, 0);
    expect_source(&cfg, CONF_BUDGETS, "default");
    assert_int_equal(conf_get_speeds(&cfg, CONF_LINK_BOTH_GBPS).bytes_per_s[0], 0);
    assert_int_equal(conf_get_duration_ns(&cfg, CONF_LINK_REMAP), CONF_MS);
    expect_source(&cfg, CONF_LINK_REMAP, "job.toml:2");
    assert_int_equal(conf_get_size(&cfg, CONF_BUDGET).bytes, 3 * CONF_GIB);
    assert_int_equal(conf_get_choice(&cfg, CONF_MODE), CONF_MODE_RECORD);
    conf_config_free(&cfg);
    conf_diags_free(&d);
}

static void describe_loads_back(void **state)
{
    (void)state;
    char out[4096] = "";
    char *envp[] = {"SHIM_BUDGETS=0.5GiB,,12.5%", "SHIM_LINK_BOTH_GBPS=11.5,25.000000001",
                    "SHIM_LINK_REMAP=1.5ms", NULL};
    conf_config cfg, again;
    conf_diags d = {0};
    init(&cfg);
    assert_int_equal(conf_config_apply_env(&cfg, envp, &d), 0);
    conf_config_describe(&cfg, collect, out);
    assert_non_null(
        strstr(out, "\nbudgets = \"512MiB,,12.5%\"                    # SHIM_BUDGETS\n"));
    assert_non_null(strstr(out, "\nlink_both_gbps = \"11.5,25.000000001\"         # "
                                "SHIM_LINK_BOTH_GBPS\n"));
    assert_non_null(
        strstr(out, "\nlink_remap = \"1500us\"                        # SHIM_LINK_REMAP\n"));
    init(&again);
    assert_int_equal(conf_config_apply_text(&again, out, strlen(out), "out.toml", &d), 0);
    assert_int_equal(d.count, 0);
    for (int i = 0; i < CONF_OPTION_COUNT; i++) {
        char a[256], b[256];
        conf_setting_format(&cfg, i, a, sizeof a);
        conf_setting_format(&again, i, b, sizeof b);
        assert_string_equal(a, b);
    }
    conf_config_free(&cfg);
    conf_config_free(&again);
    conf_diags_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_rows),          cmocka_unit_test(defaults),
        cmocka_unit_test(size_list_values),    cmocka_unit_test(size_list_bounds),
        cmocka_unit_test(size_list_malformed), cmocka_unit_test(speed_pair_values),
        cmocka_unit_test(speed_pair_bad),      cmocka_unit_test(duration_or_word),
        cmocka_unit_test(word_is_per_option),  cmocka_unit_test(fallback_is_the_default),
        cmocka_unit_test(describe_loads_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
