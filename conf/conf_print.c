/* conf_print.c — the effective configuration as commented TOML, and the README's reference. */
#include "conf_internal.h"

#include <string.h>

#define VALUE_MAX (2 * CONF_MAX_STRING + 64)
#define ALIGN_AT  44

/* Contract in conf.h: never fails; over-long sources are truncated. */
void conf_config_describe(const conf_config *cfg, conf_line_fn fn, void *ctx)
{
    char line[VALUE_MAX + 640], source[512];
    size_t used = 0;
    conf_appendf(line, sizeof line, &used, "# layers: built-in defaults < %s%s < environment",
                 cfg->file ? cfg->file : "no file", cfg->file ? "" : " (SHIM_CONFIG not set)");
    fn(ctx, line);
    for (int i = 0; i < CONF_OPTION_COUNT; i++) {
        used = 0;
        conf_appendf(line, sizeof line, &used, "%s = ", conf_option_get(i)->name);
        used += conf_setting_format(cfg, (conf_option_id)i, line + used, sizeof line - used);
        used = used < sizeof line ? used : sizeof line - 1;
        while (used < ALIGN_AT && used + 1 < sizeof line)
            line[used++] = ' ';
        conf_setting_source(cfg, (conf_option_id)i, source, sizeof source);
        conf_appendf(line, sizeof line, &used, " # %s", source);
        fn(ctx, line);
    }
}

static const char *type_word(const conf_option *o)
{
    static const char *const words[] = {
        [CONF_OPT_BOOL] = "boolean",  [CONF_OPT_INT] = "integer",
        [CONF_OPT_SIZE] = "size",     [CONF_OPT_DURATION] = "duration",
        [CONF_OPT_STRING] = "string", [CONF_OPT_ENUM] = "choice",
        [CONF_OPT_FLAGS] = "list",    [CONF_OPT_SIZES] = "sizes",
        [CONF_OPT_SPEEDS] = "speeds",
    };
    return words[o->type];
}

/* The default as TOML: quoted unless a boolean, an integer or a plain byte count. */
static void append_default(char *buf, size_t n, size_t *used, const conf_option *o)
{
    bool bare = o->type == CONF_OPT_BOOL || o->type == CONF_OPT_INT ||
                (o->type == CONF_OPT_SIZE && strspn(o->def, "0123456789") == strlen(o->def));
    conf_appendf(buf, n, used, "`");
    if (bare)
        conf_appendf(buf, n, used, "%s", o->def);
    else
        conf_append_quoted(buf, n, used, o->def, strlen(o->def));
    conf_appendf(buf, n, used, "`");
}

static void append_choices(char *buf, size_t n, size_t *used, const conf_option *o)
{
    conf_appendf(buf, n, used, "`");
    for (const char *s = o->choices; *s != '\0'; s++)
        conf_appendf(buf, n, used, *s == '|' ? "`, `" : "%c", *s);
    conf_appendf(buf, n, used, "`");
}

static void append_size_range(char *buf, size_t n, size_t *used, const conf_option *o)
{
    char lo[48], hi[48];
    conf_size min = {.kind = CONF_SIZE_BYTES, .bytes = (uint64_t)o->min};
    conf_size max = {.kind = CONF_SIZE_BYTES, .bytes = (uint64_t)o->max};
    conf_size_format(&min, lo, sizeof lo);
    conf_size_format(&max, hi, sizeof hi);
    conf_appendf(buf, n, used, "%s to %s", lo, hi);
    if (o->forms & CONF_FORM_PERCENT)
        conf_appendf(buf, n, used, ", a percentage");
    if (o->forms & CONF_FORM_AUTO)
        conf_appendf(buf, n, used, ", `auto`");
}

static void append_speeds_range(char *buf, size_t n, size_t *used, const conf_option *o)
{
    char lo[32], hi[32];
    conf_speed_format((uint64_t)o->min - 1, lo, sizeof lo);
    conf_speed_format((uint64_t)o->max, hi, sizeof hi);
    conf_appendf(buf, n, used, "`%s`: two speeds in GB/s, each in (%s, %s]; or empty", o->unit, lo,
                 hi);
}

static void append_range(char *buf, size_t n, size_t *used, const conf_option *o)
{
    char lo[48], hi[48];
    if (o->type == CONF_OPT_SIZES) {
        conf_appendf(buf, n, used, "up to %d comma-separated entries, each empty or ",
                     CONF_MAX_SIZES);
        append_size_range(buf, n, used, o);
    } else if (o->type == CONF_OPT_SPEEDS)
        append_speeds_range(buf, n, used, o);
    else if (o->type == CONF_OPT_BOOL)
        conf_appendf(buf, n, used, "`true`, `false`");
    else if (o->type == CONF_OPT_INT)
        conf_appendf(buf, n, used, "%lld to %lld %s", (long long)o->min, (long long)o->max,
                     o->unit);
    else if (o->type == CONF_OPT_SIZE)
        append_size_range(buf, n, used, o);
    else if (o->type == CONF_OPT_DURATION) {
        conf_duration_format(o->min, lo, sizeof lo);
        conf_duration_format(o->max, hi, sizeof hi);
        conf_appendf(buf, n, used, "%s to %s", lo, hi);
        if (*o->choices)
            conf_appendf(buf, n, used, ", or `%s`", o->choices);
    } else if (o->type == CONF_OPT_STRING)
        conf_appendf(buf, n, used, "a %s", o->unit);
    else {
        if (o->type == CONF_OPT_FLAGS)
            conf_appendf(buf, n, used, "`all`, `none`, or some of ");
        append_choices(buf, n, used, o);
    }
}

static const char *const intro[] = {
    "Options come from the built-in defaults, then the TOML file named by `SHIM_CONFIG`, then",
    "`SHIM_*` environment variables; a later layer wins. A dotted name is a key in a TOML table",
    "(`trace.path` is `path` under `[trace]`); its variable is `SHIM_` and the name in upper case",
    "with dots as underscores. `conf/shim.toml` is a commented example with every option, and",
    "`shim-report config [--file F]` prints the effective values and where each came from. A",
    "configuration error (`FILE:LINE:COL: error: ...`) never stops the program: the shim logs",
    "every diagnostic and stays in pass-through. Where an option's accepted values say that a bad",
    "value warns, a bad value of that option is a warning instead (`FILE:LINE:COL: warning: ...`):",
    "the option takes its default, the rest of the configuration applies and the job runs on.",
    "",
    "Sizes are strings with a unit, `\"40GiB\"`, `\"40G\"` or `\"512MiB\"`, or an integer number",
    "of bytes. `K`, `M`, `G`, `T`, `P`, alone or with `i` or `iB` (`G`, `Gi`, `GiB`), are powers",
    "of 1024: `40G` is 40 GiB; `KB`, `MB`, `GB`, `TB`, `PB` are powers of 1000: `40GB` is 40 x",
    "10^9 bytes; `B` is a byte. Units are case-insensitive; up to 9 decimals, rounded down to a",
    "byte; no sign, no exponent. `shim-plan --budget`, `shim-report plan --budget` and the",
    "planner's model files read sizes the same way (`conf/conf_bytes.h`). Where noted a size may",
    "also be a share of the device, `\"60%\"` (above 0%, at most 100%), resolved once the device's",
    "size is known, or `\"auto\"`. Durations are strings such as `\"50ms\"` (ns, us, ms, s, min,",
    "h). In the environment, booleans are `true`/`false` (or `1`/`0`, `yes`/`no`, `on`/`off`) and",
    "lists are comma-separated.",
    "",
    "`%p` in `trace.path` and `log.file` is the process id, `%r` the rank: the `RANK` variable",
    "that torchrun and the other PyTorch launchers set, read strictly (decimal digits only);",
    "unset, it is 0; not a number, it is 0 and the log warns once, naming the value.",
    "(`LOCAL_RANK` is not used: it repeats on every node.) `%%` is a `%`; any other `%` sequence",
    "is an error. A path that would expand past 4095 bytes is an error naming the option, never a",
    "shorter path. The trace file is created exclusively (an existing file or link is never",
    "overwritten); the log file is appended to, and refused when it is a symbolic link, not a",
    "regular file or another user's file: libshim then says so once on standard error and logs",
    "there.",
    "",
    "At the default log level (`info`) a run logs a few lines of progress, each one line: when",
    "the training step is detected (launches per step, the step it starts at), when a plan is",
    "applied (its predicted step time against the step's native time, as a slowdown, the stall,",
    "the budget, moves per step), and at exit `exit: S steps, peak P MiB allocated on the device;",
    "residency: E evictions (C cancelled), R restores, X errors, H MiB to host, D MiB to device,",
    "T ms stalled, budget B MiB` (evictions and restores completed; bytes of the moves started;",
    "with the plan's counts when one was installed). `log.level = \"warn\"` keeps only problems.",
    "",
    "| option | environment | type | default | accepted values | description |",
    "|---|---|---|---|---|---|",
};

/* Contract in conf.h: never fails. */
void conf_reference_markdown(conf_line_fn fn, void *ctx)
{
    char line[1024], env[128];
    for (size_t i = 0; i < sizeof intro / sizeof intro[0]; i++)
        fn(ctx, intro[i]);
    for (int i = 0; i < CONF_OPTION_COUNT; i++) {
        const conf_option *o = conf_option_get(i);
        size_t used = 0;
        conf_option_env_name((conf_option_id)i, env, sizeof env);
        conf_appendf(line, sizeof line, &used, "| `%s` | `%s` | %s | ", o->name, env, type_word(o));
        append_default(line, sizeof line, &used, o);
        conf_appendf(line, sizeof line, &used, " | ");
        append_range(line, sizeof line, &used, o);
        if (o->forms & CONF_LENIENT)
            conf_appendf(line, sizeof line, &used, "; a bad value warns, the default applies");
        conf_appendf(line, sizeof line, &used, " | %s |", o->help);
        fn(ctx, line);
    }
}
