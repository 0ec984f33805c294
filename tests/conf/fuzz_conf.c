/* fuzz_conf.c — libFuzzer target: the TOML parser, the option loader, units, and round trips. */
#include "conf.h"
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

typedef struct text {
    char *buf;
    size_t len, cap;
} text;

static void collect(void *ctx, const char *line)
{
    text *t = ctx;
    size_t n = strlen(line);
    if (t->len + n + 2 > t->cap) {
        t->cap = (t->len + n + 2) * 2;
        t->buf = realloc(t->buf, t->cap);
        CHECK(t->buf != NULL);
    }
    memcpy(t->buf + t->len, line, n);
    t->len += n;
    t->buf[t->len++] = '\n';
    t->buf[t->len] = '\0';
}

/* Visits every value, exercising the accessors; depth is bounded by the parser. */
static size_t visit(const conf_value *v, int depth)
{
    char buf[64];
    size_t n = 1;
    CHECK(depth <= CONF_MAX_DEPTH);
    for (size_t i = 0; i < conf_table_size(v); i++)
        n += visit(conf_table_entry(v, i, NULL), depth + 1);
    for (size_t i = 0; i < conf_array_size(v); i++)
        n += visit(conf_array_at(v, i), depth + 1);
    if (conf_value_type(v) >= CONF_DATETIME)
        CHECK(conf_datetime_format(v, buf, sizeof buf) < sizeof buf);
    CHECK(conf_value_line(v) >= 1 && conf_value_col(v) >= 1);
    return n;
}

static void parse_alone(const char *s, size_t size)
{
    conf_diags d = {0};
    conf_doc *doc = conf_parse_limited(s, size, "fuzz.toml", (size_t)8 << 20, &d);
    CHECK((doc == NULL) == (d.errors == 1) && d.count <= 1);
    if (doc != NULL)
        visit(conf_doc_root(doc), 0);
    for (size_t i = 0; i < d.count; i++)
        CHECK(strncmp(d.items[i].text, "fuzz.toml:", 10) == 0);
    conf_doc_free(doc);
    conf_diags_free(&d);
}

/* Every size and duration that parses formats to text that parses back to the same value. */
static void units(const char *s, size_t size)
{
    char err[256], buf[64];
    conf_size z, z2;
    int64_t ns, ns2;
    size_t n = size < 40 ? size : 40;
    if (conf_size_parse(s, n, &z, err, sizeof err) == 0) {
        size_t k = conf_size_format(&z, buf, sizeof buf);
        CHECK(conf_size_parse(buf, k, &z2, err, sizeof err) == 0);
        CHECK(z.kind == z2.kind && z.bytes == z2.bytes && z.ppm == z2.ppm);
        conf_size_resolve(&z, UINT64_MAX, 1);
    }
    if (conf_duration_parse(s, n, &ns, err, sizeof err) == 0) {
        size_t k = conf_duration_format(ns, buf, sizeof buf);
        CHECK(conf_duration_parse(buf, k, &ns2, err, sizeof err) == 0 && ns == ns2);
    }
}

/* A configuration that loads prints as TOML that loads back to the same configuration. */
static void round_trip(const conf_config *cfg)
{
    text a = {0}, b = {0};
    conf_config_describe(cfg, collect, &a);
    conf_config again;
    conf_diags d = {0};
    CHECK(conf_config_init(&again, &d) == 0);
    CHECK(conf_config_apply_text(&again, a.buf, a.len, "out.toml", &d) == 0);
    for (int i = 0; i < CONF_OPTION_COUNT; i++) {
        char x[9000], y[9000];
        conf_setting_format(cfg, (conf_option_id)i, x, sizeof x);
        conf_setting_format(&again, (conf_option_id)i, y, sizeof y);
        CHECK(strcmp(x, y) == 0);
    }
    conf_config_describe(&again, collect, &b);
    conf_config_free(&again);
    conf_diags_free(&d);
    free(a.buf);
    free(b.buf);
}

/* The loader: a first line "SHIM_X=value" is an environment entry, the rest a file. */
static void load(const char *s, size_t size)
{
    conf_config cfg;
    conf_diags d = {0};
    char *env[2] = {NULL, NULL};
    const char *nl = memchr(s, '\n', size);
    if (size > 5 && memcmp(s, "SHIM_", 5) == 0 && nl != NULL) {
        env[0] = strndup(s, (size_t)(nl - s));
        CHECK(env[0] != NULL);
        size -= (size_t)(nl + 1 - s);
        s = nl + 1;
    }
    CHECK(conf_config_init(&cfg, &d) == 0);
    int rc = conf_config_apply_text(&cfg, s, size, "fuzz.toml", &d);
    rc |= conf_config_apply_env(&cfg, env, &d);
    CHECK((rc == 0) == (d.errors == 0));
    if (rc == 0)
        round_trip(&cfg);
    conf_config_free(&cfg);
    conf_diags_free(&d);
    free(env[0]);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    const char *s = (const char *)data;
    parse_alone(s, size);
    units(s, size);
    load(s, size);
    return 0;
}
