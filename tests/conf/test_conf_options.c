/* test_conf_options.c — unit tests of the option table, layering, provenance, environment
   overrides, and the must-show diagnostics (one precise FILE:LINE:COL line each). */
#include "conf.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "conf_expect.h"

/* Applying text must give exactly this one diagnostic line. */
static void expect_one_error(const char *text, const char *want)
{
    conf_config cfg;
    conf_diags d = {0};
    init(&cfg);
    assert_int_equal(conf_config_apply_text(&cfg, text, strlen(text), "job.toml", &d), -1);
    assert_int_equal(d.count, 1);
    assert_int_equal(d.errors, 1);
    assert_string_equal(d.items[0].text, want);
    conf_config_free(&cfg);
    conf_diags_free(&d);
}

static void table_is_consistent(void **state)
{
    (void)state;
    char env[128], other[128];
    for (int i = 0; i < CONF_OPTION_COUNT; i++) {
        const conf_option *o = conf_option_get(i);
        assert_non_null(o);
        assert_true(strlen(o->name) > 0 && strlen(o->help) > 0);
        assert_int_equal(conf_option_find(o->name, strlen(o->name)), i);
        conf_option_env_name(i, env, sizeof env);
        assert_string_not_equal(env, "SHIM_CONFIG");
        assert_int_equal(conf_option_find_env(env, strlen(env)), i);
        for (int j = 0; j < i; j++) {
            conf_option_env_name(j, other, sizeof other);
            assert_string_not_equal(env, other);
        }
    }
    assert_null(conf_option_get(CONF_OPTION_COUNT));
    assert_int_equal(conf_option_find("budgetx", 7), -1);
}

static void env_names_follow_the_rule(void **state)
{
    (void)state;
    char env[128];
    conf_option_env_name(CONF_MODE, env, sizeof env);
    assert_string_equal(env, "SHIM_MODE");
    conf_option_env_name(CONF_HOST_BUDGET, env, sizeof env);
    assert_string_equal(env, "SHIM_HOST_BUDGET");
    conf_option_env_name(CONF_TRACE_FLUSH_INTERVAL, env, sizeof env);
    assert_string_equal(env, "SHIM_TRACE_FLUSH_INTERVAL");
}

static void choices_match_constants(void **state)
{
    (void)state;
    char buf[32];
    conf_option_choice(CONF_MODE, CONF_MODE_RECORD, buf, sizeof buf);
    assert_string_equal(buf, "record");
    conf_option_choice(CONF_MODE, CONF_MODE_AUTO, buf, sizeof buf);
    assert_string_equal(buf, "auto");
    conf_option_choice(CONF_LOG_LEVEL, CONF_LEVEL_DEBUG, buf, sizeof buf);
    assert_string_equal(buf, "debug");
    conf_option_choice(CONF_TRACE_RECORD, __builtin_ctz(CONF_RECORD_MOVES), buf, sizeof buf);
    assert_string_equal(buf, "moves");
    conf_option_choice(CONF_TRACE_RECORD, __builtin_ctz(CONF_RECORD_KERNELS), buf, sizeof buf);
    assert_string_equal(buf, "kernels");
    assert_int_equal(conf_option_choice(CONF_MODE, 3, buf, sizeof buf), 0);
}

static void defaults(void **state)
{
    (void)state;
    conf_config cfg;
    init(&cfg);
    assert_int_equal(conf_get_choice(&cfg, CONF_MODE), CONF_MODE_AUTO);
    assert_int_equal(conf_get_size(&cfg, CONF_BUDGET).kind, CONF_SIZE_AUTO);
    assert_int_equal(conf_get_size(&cfg, CONF_HOST_BUDGET).kind, CONF_SIZE_AUTO);
    assert_int_equal(conf_get_size(&cfg, CONF_MIN_MANAGED_BYTES).bytes, 64 << 10);
    assert_true(conf_get_bool(&cfg, CONF_PYTORCH_ASYNC_BACKEND));
    assert_string_equal(conf_get_string(&cfg, CONF_TRACE_PATH), "shim-%p.trace");
    assert_int_equal(conf_get_flags(&cfg, CONF_TRACE_RECORD), 0x3f);
    assert_int_equal(conf_get_duration_ns(&cfg, CONF_TRACE_FLUSH_INTERVAL), 100 * CONF_MS);
    assert_int_equal(conf_get_size(&cfg, CONF_TRACE_MAX_BYTES).kind, CONF_SIZE_BYTES);
    assert_int_equal(conf_get_size(&cfg, CONF_TRACE_MAX_BYTES).bytes, CONF_GIB);
    assert_int_equal(conf_get_int(&cfg, CONF_PROFILE_ITERATIONS), 3);
    assert_int_equal(conf_get_choice(&cfg, CONF_LOG_LEVEL), CONF_LEVEL_INFO);
    assert_string_equal(conf_get_string(&cfg, CONF_LOG_FILE), "");
    for (int i = 0; i < CONF_OPTION_COUNT; i++)
        expect_source(&cfg, i, "default");
    /* reads of the wrong type give nothing */
    assert_int_equal(conf_get_int(&cfg, CONF_BUDGET), 0);
    assert_null(conf_get_string(&cfg, CONF_MODE));
    conf_config_free(&cfg);
}

static void file_layer_remembers_lines(void **state)
{
    (void)state;
    const char *text = "# job\nmode = \"record\"\nbudget = \"40GiB\"\n\n[trace]\n"
                       "record = [\"allocs\", \"moves\"]\npath = \"\"\n[log]\nlevel = \"debug\"\n";
    conf_config cfg;
    conf_diags d = {0};
    init(&cfg);
    assert_int_equal(conf_config_apply_text(&cfg, text, strlen(text), "job.toml", &d), 0);
    assert_int_equal(d.count, 0);
    assert_int_equal(conf_get_choice(&cfg, CONF_MODE), CONF_MODE_RECORD);
    assert_int_equal(conf_get_size(&cfg, CONF_BUDGET).bytes, 40ull << 30);
    assert_int_equal(conf_get_flags(&cfg, CONF_TRACE_RECORD),
                     CONF_RECORD_ALLOCS | CONF_RECORD_MOVES);
    expect_source(&cfg, CONF_MODE, "job.toml:2");
    expect_source(&cfg, CONF_BUDGET, "job.toml:3");
    expect_source(&cfg, CONF_TRACE_RECORD, "job.toml:6");
    expect_source(&cfg, CONF_TRACE_PATH, "job.toml:7");
    expect_source(&cfg, CONF_LOG_LEVEL, "job.toml:9");
    expect_source(&cfg, CONF_HOST_BUDGET, "default");
    expect_text(&cfg, CONF_TRACE_PATH, "\"\"");
    assert_int_equal(cfg.set[CONF_BUDGET].col, 10);
    conf_config_free(&cfg);
}

static void dotted_and_inline_forms_are_equivalent(void **state)
{
    (void)state;
    const char *text = "trace.path = \"a\"\nlog = { level = \"info\", file = \"x.log\" }\n";
    conf_config cfg;
    conf_diags d = {0};
    init(&cfg);
    assert_int_equal(conf_config_apply_text(&cfg, text, strlen(text), "job.toml", &d), 0);
    assert_string_equal(conf_get_string(&cfg, CONF_TRACE_PATH), "a");
    assert_int_equal(conf_get_choice(&cfg, CONF_LOG_LEVEL), CONF_LEVEL_INFO);
    assert_string_equal(conf_get_string(&cfg, CONF_LOG_FILE), "x.log");
    conf_config_free(&cfg);
}

static void environment_overrides_file(void **state)
{
    (void)state;
    char path[] = "/tmp/test_conf_options_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text = "budget = \"40GiB\"\nhost_budget = \"8GiB\"\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    char config[128];
    snprintf(config, sizeof config, "SHIM_CONFIG=%s", path);
    char *envp[] = {"PATH=/bin",
                    config,
                    "SHIM_BUDGET=60%",
                    "SHIM_PYTORCH_ASYNC_BACKEND=off",
                    "SHIM_TRACE_RECORD=launches, kernels",
                    "SHIM_TRACE_FLUSH_INTERVAL=2s",
                    "SHIM_TRACE_MAX_BYTES=1.5GiB",
                    NULL};
    conf_config cfg;
    conf_diags d = {0};
    assert_int_equal(conf_config_load(&cfg, envp, NULL, &d), 0);
    assert_int_equal(d.count, 0);
    assert_int_equal(conf_get_size(&cfg, CONF_BUDGET).ppm, 600000);
    expect_source(&cfg, CONF_BUDGET, "SHIM_BUDGET");
    char want[160];
    snprintf(want, sizeof want, "%s:2", path);
    expect_source(&cfg, CONF_HOST_BUDGET, want);
    assert_false(conf_get_bool(&cfg, CONF_PYTORCH_ASYNC_BACKEND));
    assert_int_equal(conf_get_flags(&cfg, CONF_TRACE_RECORD),
                     CONF_RECORD_LAUNCHES | CONF_RECORD_KERNELS);
    assert_int_equal(conf_get_duration_ns(&cfg, CONF_TRACE_FLUSH_INTERVAL), 2 * CONF_SEC);
    assert_int_equal(conf_get_size(&cfg, CONF_TRACE_MAX_BYTES).bytes, 3 * CONF_GIB / 2);
    expect_source(&cfg, CONF_TRACE_MAX_BYTES, "SHIM_TRACE_MAX_BYTES");
    conf_config_free(&cfg);
    unlink(path);
}

static void file_override_replaces_shim_config(void **state)
{
    (void)state;
    char *envp[] = {"SHIM_CONFIG=/nonexistent/never.toml", NULL};
    conf_config cfg;
    conf_diags d = {0};
    assert_int_equal(conf_config_load(&cfg, envp, "conf/shim.toml", &d), 0);
    assert_int_equal(d.count, 0);
    assert_string_equal(cfg.file, "conf/shim.toml");
    conf_config_free(&cfg);
    assert_int_equal(conf_config_load(&cfg, envp, NULL, &d), -1);
    assert_int_equal(d.count, 1);
    assert_string_equal(d.items[0].text, "/nonexistent/never.toml: error: cannot open the "
                                         "configuration file: No such file or directory");
    conf_config_free(&cfg);
    conf_diags_free(&d);
}

static void environment_diagnostics(void **state)
{
    (void)state;
    char *envp[] = {"SHIM_BUGDET=1GiB",          "SHIM_MODE=fast",  "SHIM_LOG_LEVEL=",
                    "SHIM_PROFILE_ITERATIONS=2", "NOT_SHIM_MODE=x", NULL};
    conf_config cfg;
    conf_diags d = {0};
    init(&cfg);
    assert_int_equal(conf_config_apply_env(&cfg, envp, &d), -1);
    assert_int_equal(d.count, 3);
    assert_int_equal(d.errors, 2);
    assert_int_equal(d.items[0].severity, CONF_WARNING);
    assert_string_equal(
        d.items[0].text,
        "SHIM_BUGDET: warning: unknown variable, ignored (did you mean SHIM_BUDGET?)");
    assert_string_equal(d.items[1].text, "SHIM_MODE: error: invalid value \"fast\" (expected one "
                                         "of: off, record, auto)");
    assert_string_equal(d.items[2].text, "SHIM_LOG_LEVEL: error: invalid value \"\" (expected one "
                                         "of: off, error, warn, info, debug)");
    /* The same without the severity, for a log line that says it (libshim's). */
    assert_string_equal(d.items[0].bare,
                        "SHIM_BUGDET: unknown variable, ignored (did you mean SHIM_BUDGET?)");
    assert_string_equal(d.items[1].bare,
                        "SHIM_MODE: invalid value \"fast\" (expected one of: off, record, auto)");
    assert_int_equal(conf_get_int(&cfg, CONF_PROFILE_ITERATIONS), 2); /* valid ones still apply */
    assert_int_equal(conf_get_choice(&cfg, CONF_MODE), CONF_MODE_AUTO);
    expect_source(&cfg, CONF_MODE, "default");
    conf_config_free(&cfg);
    conf_diags_free(&d);
}

static void environment_value_forms(void **state)
{
    (void)state;
    char *envp[] = {"SHIM_PYTORCH_ASYNC_BACKEND=YES", "SHIM_TRACE_RECORD=none",
                    "SHIM_MIN_MANAGED_BYTES=1048576", "SHIM_HOST_BUDGET=0", NULL};
    conf_config cfg;
    conf_diags d = {0};
    init(&cfg);
    assert_int_equal(conf_config_apply_env(&cfg, envp, &d), 0);
    assert_true(conf_get_bool(&cfg, CONF_PYTORCH_ASYNC_BACKEND));
    assert_int_equal(conf_get_flags(&cfg, CONF_TRACE_RECORD), 0);
    expect_text(&cfg, CONF_TRACE_RECORD, "[]");
    expect_text(&cfg, CONF_MIN_MANAGED_BYTES, "\"1MiB\"");
    expect_text(&cfg, CONF_HOST_BUDGET, "0");
    conf_config_free(&cfg);
}

/* Must-show: each kind of mistake gives exactly one precise FILE:LINE:COL line. */
static void must_show_malformed_file(void **state)
{
    (void)state;
    expect_one_error("mode = \"auto\nbudget = \"1GiB\"\n",
                     "job.toml:1:8: error: unterminated string");
    expect_one_error("[trace\npath = \"x\"\n",
                     "job.toml:1:7: error: expected ']' to close the header");
}

static void must_show_unknown_key(void **state)
{
    (void)state;
    expect_one_error(
        "mode = \"auto\"\n[trace]\npth = \"x\"\n",
        "job.toml:3:1: error: unknown option 'trace.pth' (did you mean 'trace.path'?)");
    expect_one_error("  budgett = \"1GiB\"\n",
                     "job.toml:1:3: error: unknown option 'budgett' (did you mean 'budget'?)");
    expect_one_error("[tarce]\npath = \"x\"\n",
                     "job.toml:1:2: error: unknown table 'tarce' (did you mean 'trace'?)");
    expect_one_error("zzz = 1\n", "job.toml:1:1: error: unknown option 'zzz'");
    expect_one_error("\"trace.path\" = \"x\"\n", "job.toml:1:1: error: unknown option "
                                                 "'\"trace.path\"' (did you mean 'trace.path'?)");
}

static void must_show_wrong_type(void **state)
{
    (void)state;
    expect_one_error("budget = true\n",
                     "job.toml:1:10: error: budget: expected a size (a string such as \"40GiB\", "
                     "or an integer number of bytes), not a boolean");
    expect_one_error("[profile]\niterations = \"3\"\n",
                     "job.toml:2:14: error: profile.iterations: expected an integer, not a string");
    expect_one_error("pytorch = 1\n",
                     "job.toml:1:1: error: 'pytorch' is a table of options, not an integer");
    expect_one_error("trace.record = [\"allocs\", 2]\n",
                     "job.toml:1:16: error: trace.record: each element must be one string "
                     "without commas");
}

static void must_show_out_of_range_size(void **state)
{
    (void)state;
    expect_one_error("budget = \"512KiB\"\n",
                     "job.toml:1:10: error: budget: 512KiB is out of range (1MiB to 1PiB)");
    expect_one_error("\n\nbudget   =   \"150%\"\n",
                     "job.toml:3:14: error: budget: 150% is out of range (a share of the device "
                     "above 0% and at most 100%)");
    expect_one_error("host_budget = \"50%\"\n",
                     "job.toml:1:15: error: host_budget: a percentage is not accepted here");
    expect_one_error("min_managed_bytes = \"auto\"\n",
                     "job.toml:1:21: error: min_managed_bytes: auto is not accepted here");
    expect_one_error("min_managed_bytes = -1\n",
                     "job.toml:1:21: error: min_managed_bytes: a size cannot be negative");
    expect_one_error("budget = \"40 apples\"\n",
                     "job.toml:1:10: error: budget: invalid size \"40 apples\": expected a number "
                     "of bytes, alone or with a unit (B; K, Ki, KiB, M, Mi, MiB, G, Gi, GiB, T, "
                     "Ti, TiB, P, Pi, PiB: powers of 1024; KB, MB, GB, TB, PB: powers of 1000), a "
                     "percentage, or auto");
}

static void other_ranges(void **state)
{
    (void)state;
    expect_one_error("profile.iterations = 0\n",
                     "job.toml:1:22: error: profile.iterations: 0 is out of range (1 to 1000)");
    expect_one_error("trace.flush_interval = \"2min\"\n",
                     "job.toml:1:24: error: trace.flush_interval: 2min is out of range (1ms to "
                     "1min)");
    expect_one_error("trace.max_bytes = \"60%\"\n",
                     "job.toml:1:19: error: trace.max_bytes: a percentage is not accepted here");
    expect_one_error("trace.max_bytes = \"auto\"\n",
                     "job.toml:1:19: error: trace.max_bytes: auto is not accepted here");
    expect_one_error("log.level = \"loud\"\n", "job.toml:1:13: error: log.level: invalid value "
                                               "\"loud\" (expected one of: off, error, warn, info, "
                                               "debug)");
    expect_one_error("log.file = \"a\\nb\"\n",
                     "job.toml:1:12: error: log.file: control character U+000A in a path or name");
}

static void every_error_is_reported_and_good_keys_apply(void **state)
{
    (void)state;
    const char *text = "budget = false\nmode = \"off\"\nbogus = 1\n[log]\nlevel = 7\n";
    conf_config cfg;
    conf_diags d = {0};
    init(&cfg);
    assert_int_equal(conf_config_apply_text(&cfg, text, strlen(text), "job.toml", &d), -1);
    assert_int_equal(d.count, 3);
    assert_int_equal(d.items[0].line, 1);
    assert_int_equal(d.items[1].line, 3);
    assert_int_equal(d.items[2].line, 5);
    assert_int_equal(conf_get_choice(&cfg, CONF_MODE), CONF_MODE_OFF);
    conf_config_free(&cfg);
    conf_diags_free(&d);
}

static void example_file_sets_every_option(void **state)
{
    (void)state;
    conf_config cfg, defaults_cfg;
    conf_diags d = {0};
    init(&cfg);
    init(&defaults_cfg);
    assert_int_equal(conf_config_apply_file(&cfg, "conf/shim.toml", &d), 0);
    assert_int_equal(d.count, 0);
    for (int i = 0; i < CONF_OPTION_COUNT; i++) {
        char a[256], b[256];
        assert_int_equal(cfg.set[i].origin, CONF_FROM_FILE);
        conf_setting_format(&cfg, i, a, sizeof a);
        conf_setting_format(&defaults_cfg, i, b, sizeof b);
        assert_string_equal(a, b); /* the example documents the defaults */
    }
    conf_config_free(&cfg);
    conf_config_free(&defaults_cfg);
}

static void describe_prints_toml_with_sources(void **state)
{
    (void)state;
    char out[4096] = "";
    char *envp[] = {"SHIM_LOG_LEVEL=info", NULL};
    const char *text = "budget = \"12.5%\"\n";
    conf_config cfg, again;
    conf_diags d = {0};
    init(&cfg);
    assert_int_equal(conf_config_apply_text(&cfg, text, strlen(text), "job.toml", &d), 0);
    assert_int_equal(conf_config_apply_env(&cfg, envp, &d), 0);
    conf_config_describe(&cfg, collect, out);
    assert_non_null(strstr(out, "# layers: built-in defaults < job.toml < environment\n"));
    assert_non_null(strstr(out, "\nbudget = \"12.5%\"                             # job.toml:1\n"));
    assert_non_null(
        strstr(out, "\nlog.level = \"info\"                           # SHIM_LOG_LEVEL\n"));
    assert_non_null(strstr(out, "\nmode = \"auto\"                                # default\n"));
    init(&again);
    assert_int_equal(conf_config_apply_text(&again, out, strlen(out), "out.toml", &d), 0);
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

static void diagnostics_are_capped(void **state)
{
    (void)state;
    size_t cap = 300 * 16, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (int i = 0; i < 300; i++)
        len += (size_t)snprintf(text + len, cap - len, "x%d = 1\n", i);
    conf_config cfg;
    conf_diags d = {0};
    init(&cfg);
    assert_int_equal(conf_config_apply_text(&cfg, text, len, "job.toml", &d), -1);
    assert_int_equal(d.count, CONF_MAX_DIAGS);
    assert_int_equal(d.errors, 300);
    assert_int_equal(d.dropped, 300 - CONF_MAX_DIAGS);
    conf_config_free(&cfg);
    conf_diags_free(&d);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_is_consistent),
        cmocka_unit_test(env_names_follow_the_rule),
        cmocka_unit_test(choices_match_constants),
        cmocka_unit_test(defaults),
        cmocka_unit_test(file_layer_remembers_lines),
        cmocka_unit_test(dotted_and_inline_forms_are_equivalent),
        cmocka_unit_test(environment_overrides_file),
        cmocka_unit_test(file_override_replaces_shim_config),
        cmocka_unit_test(environment_diagnostics),
        cmocka_unit_test(environment_value_forms),
        cmocka_unit_test(must_show_malformed_file),
        cmocka_unit_test(must_show_unknown_key),
        cmocka_unit_test(must_show_wrong_type),
        cmocka_unit_test(must_show_out_of_range_size),
        cmocka_unit_test(other_ranges),
        cmocka_unit_test(every_error_is_reported_and_good_keys_apply),
        cmocka_unit_test(example_file_sets_every_option),
        cmocka_unit_test(describe_prints_toml_with_sources),
        cmocka_unit_test(diagnostics_are_capped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
