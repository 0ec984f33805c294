/* conf_expect.h — typed expectations the conf/ unit tests share (cmocka; include after
 * <cmocka.h>): a fresh configuration, and a setting's text and source as shim-report config
 * prints them. */
#ifndef CONF_EXPECT_H
#define CONF_EXPECT_H

#include "conf.h"

#include <string.h>

/* *cfg holds the built-in defaults; the test fails on any diagnostic. */
static inline void init(conf_config *cfg)
{
    conf_diags d = {0};
    assert_int_equal(conf_config_init(cfg, &d), 0);
    assert_int_equal(d.count, 0);
}

/* Option id of cfg formats as want. */
static inline void expect_text(const conf_config *cfg, conf_option_id id, const char *want)
{
    char buf[512];
    conf_setting_format(cfg, id, buf, sizeof buf);
    assert_string_equal(buf, want);
}

/* Option id of cfg came from want ("default", "SHIM_X", "file:line"). */
static inline void expect_source(const conf_config *cfg, conf_option_id id, const char *want)
{
    char buf[256];
    conf_setting_source(cfg, id, buf, sizeof buf);
    assert_string_equal(buf, want);
}

/* A conf_config_describe callback: appends line and a newline to the char[4096] buffer ctx. */
static inline void collect(void *ctx, const char *line)
{
    char *buf = ctx;
    strncat(buf, line, 4000 - strlen(buf));
    strncat(buf, "\n", 4000 - strlen(buf));
}

#endif
