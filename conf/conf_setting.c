/* conf_setting.c — converts a TOML value or environment text into one option's checked value. */
#include "conf_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR_LEN CONF_ERR_LEN

/* Reports a conversion error: file errors carry the position and the option's name. */
static int report(conf_diags *d, const conf_source *src, const conf_option *o, const char *msg)
{
    if (src->origin == CONF_FROM_FILE)
        conf_diag_add(d, CONF_ERROR, src->name, src->line, src->col, "%s: %s", o->name, msg);
    else if (src->origin == CONF_FROM_ENV)
        conf_diag_add(d, CONF_ERROR, src->name, 0, 0, "%s", msg);
    else
        conf_diag_add(d, CONF_ERROR, "built-in default", 0, 0, "%s: %s", o->name, msg);
    return -1;
}

static void choice_list(const conf_option *o, char *buf, size_t n)
{
    size_t used = 0;
    for (const char *s = o->choices; *s != '\0'; s++)
        conf_appendf(buf, n, &used, *s == '|' ? ", " : "%c", *s);
}

static int parse_bool(const char *t, size_t len, bool *out)
{
    static const char *const words[] = {"false", "0", "no", "off", "true", "1", "yes", "on"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strlen(words[i]) == len && conf_ascii_ieq(words[i], t, len)) {
            *out = i >= 4;
            return 0;
        }
    return -1;
}

static int parse_int(const char *t, size_t len, int64_t *out)
{
    if (len == 0)
        return -1;
    size_t i = t[0] == '-' || t[0] == '+' ? 1 : 0;
    uint64_t v = 0, limit = t[0] == '-' ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    if (i == len)
        return -1;
    for (; i < len; i++) {
        if (t[i] < '0' || t[i] > '9' || v > (limit - (uint64_t)(t[i] - '0')) / 10)
            return -1;
        v = v * 10 + (uint64_t)(t[i] - '0');
    }
    *out = t[0] == '-' ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

/* "all", "none" (or nothing), or names of choices separated by commas, spaces ignored. */
static int parse_flags(const conf_option *o, const char *t, size_t len, uint32_t *out, char *err)
{
    *out = 0;
    if (len == 0 || (len == 4 && memcmp(t, "none", 4) == 0))
        return 0;
    if (len == 3 && memcmp(t, "all", 3) == 0) {
        int count = conf_option_choice_count(o);
        *out = count >= 32 ? UINT32_MAX : (1u << count) - 1;
        return 0;
    }
    for (size_t i = 0, end; i <= len; i = end + 1) {
        for (end = i; end < len && t[end] != ',';)
            end++;
        size_t a = i, b = end;
        while (a < b && t[a] == ' ')
            a++;
        while (b > a && t[b - 1] == ' ')
            b--;
        int c = conf_option_choice_index(o, t + a, b - a);
        if (c < 0) {
            char list[200], shown[41];
            choice_list(o, list, sizeof list);
            conf_excerpt(t + a, b - a, shown, sizeof shown);
            snprintf(err, ERR_LEN, "unknown value \"%s\" (expected all, none, or some of: %s)",
                     shown, list);
            return -1;
        }
        *out |= 1u << c;
    }
    return 0;
}

static int check_string(const char *t, size_t len, char *err)
{
    if (len > CONF_MAX_STRING) {
        snprintf(err, ERR_LEN, "string longer than %d bytes", CONF_MAX_STRING);
        return -1;
    }
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)t[i] < 0x20 || t[i] == 0x7F) {
            snprintf(err, ERR_LEN, "control character U+%04X in a path or name", t[i]);
            return -1;
        }
    if (conf_utf8_check(t, len) != len) {
        snprintf(err, ERR_LEN, "not valid UTF-8");
        return -1;
    }
    return 0;
}

/* What a DURATION option with a word wants: any bad value gets this one message. */
static int duration_want(const conf_option *o, char *err)
{
    char hi[48];
    conf_duration_format(o->max, hi, sizeof hi);
    snprintf(err, ERR_LEN, "want \"%s\" or a duration of at most %s such as \"10us\"", o->choices,
             hi);
    return -1;
}

/* What a SPEEDS option wants: any bad value gets this one message. MIN and MAX are whole bytes
   per second, so [MIN, MAX] is (MIN - 1, MAX]: "(0, 1000000]" GB/s for MIN 1. */
static int speeds_want(const conf_option *o, char *err)
{
    char lo[32], hi[32];
    conf_speed_format((uint64_t)o->min - 1, lo, sizeof lo);
    conf_speed_format((uint64_t)o->max, hi, sizeof hi);
    snprintf(err, ERR_LEN, "want %s in GB/s, each in (%s, %s], or empty", o->unit, lo, hi);
    return -1;
}

static int parse_duration(const conf_option *o, const char *t, size_t len, int64_t *ns, char *err)
{
    bool word = o->choices[0] != '\0';
    if (word && conf_option_choice_index(o, t, len) == 0) {
        *ns = CONF_DURATION_WORD;
        return 0;
    }
    if (conf_duration_parse(t, len, ns, err, ERR_LEN) == 0)
        return 0;
    return word ? duration_want(o, err) : -1;
}

/* Text (environment syntax) to a candidate value; strings are borrowed, not copied. */
static int parse_text(const conf_option *o, const char *t, size_t len, conf_setting *c, char *err)
{
    char list[200], shown[41];
    conf_excerpt(t, len, shown, sizeof shown);
    switch (o->type) {
    case CONF_OPT_BOOL:
        if (parse_bool(t, len, &c->v.b) == 0)
            return 0;
        snprintf(err, ERR_LEN, "invalid boolean \"%s\" (expected true or false)", shown);
        return -1;
    case CONF_OPT_INT:
        if (parse_int(t, len, &c->v.i) == 0)
            return 0;
        snprintf(err, ERR_LEN, "invalid integer \"%s\"", shown);
        return -1;
    case CONF_OPT_SIZE:
        return conf_size_parse(t, len, &c->v.size, err, ERR_LEN);
    case CONF_OPT_DURATION:
        return parse_duration(o, t, len, &c->v.ns, err);
    case CONF_OPT_STRING:
        c->v.s = (char *)t;
        return check_string(t, len, err);
    case CONF_OPT_ENUM:
        if ((c->v.choice = conf_option_choice_index(o, t, len)) >= 0)
            return 0;
        choice_list(o, list, sizeof list);
        snprintf(err, ERR_LEN, "invalid value \"%s\" (expected one of: %s)", shown, list);
        return -1;
    case CONF_OPT_FLAGS:
        return parse_flags(o, t, len, &c->v.flags, err);
    case CONF_OPT_SIZES:
        return conf_sizes_parse(t, len, &c->v.sizes, err, ERR_LEN);
    case CONF_OPT_SPEEDS:
        return conf_speeds_parse(t, len, &c->v.speeds) == 0 ? 0 : speeds_want(o, err);
    }
    return -1;
}

/* What the file should have held, for "expected X, not Y" messages. */
static void expected(const conf_option *o, char *buf, size_t n)
{
    static const char *const what[] = {
        [CONF_OPT_BOOL] = "a boolean (true or false)",
        [CONF_OPT_INT] = "an integer",
        [CONF_OPT_SIZE] = "a size (a string such as \"40GiB\", or an integer number of bytes)",
        [CONF_OPT_DURATION] = "a duration (a string such as \"50ms\")",
        [CONF_OPT_STRING] = "a string",
        [CONF_OPT_ENUM] = "one of",
        [CONF_OPT_FLAGS] = "an array of strings from",
        [CONF_OPT_SIZES] = "a list of sizes (a string such as \"20GiB,,75%\")",
        [CONF_OPT_SPEEDS] = "two speeds in GB/s (a string such as \"11,25\")",
    };
    size_t used = 0;
    conf_appendf(buf, n, &used, "%s", what[o->type]);
    if (o->type == CONF_OPT_ENUM || o->type == CONF_OPT_FLAGS) {
        conf_appendf(buf, n, &used, " ");
        choice_list(o, buf + used, n - used);
        used = strlen(buf);
        conf_appendf(buf, n, &used, o->type == CONF_OPT_ENUM ? " (a string)" : "");
    }
}

/* The TOML types each option type accepts, besides a string parsed as text. */
static bool accepts(const conf_option *o, conf_type t)
{
    switch (o->type) {
    case CONF_OPT_BOOL:
        return t == CONF_BOOL;
    case CONF_OPT_INT:
        return t == CONF_INTEGER;
    case CONF_OPT_SIZE:
        return t == CONF_INTEGER || t == CONF_STRING;
    case CONF_OPT_FLAGS:
        return t == CONF_ARRAY || t == CONF_STRING;
    default:
        return t == CONF_STRING;
    }
}

/* Each array element is one item of the flags text syntax. */
static int flags_from_array(const conf_option *o, const conf_value *a, conf_setting *c, char *err)
{
    c->v.flags = 0;
    for (size_t i = 0; i < conf_array_size(a); i++) {
        const conf_value *e = conf_array_at(a, i);
        size_t len;
        const char *s = conf_string(e, &len);
        uint32_t f;
        if (s == NULL || memchr(s, ',', len) != NULL) {
            snprintf(err, ERR_LEN, "each element must be one string without commas");
            return -1;
        }
        if (parse_flags(o, s, len, &f, err) < 0)
            return -1;
        c->v.flags |= f;
    }
    return 0;
}

/* A TOML value to a candidate value. */
static int convert_value(const conf_option *o, const conf_value *v, conf_setting *c, char *err)
{
    conf_type t = conf_value_type(v);
    if (!accepts(o, t)) {
        char want[200];
        const char *got = conf_type_name(t);
        expected(o, want, sizeof want);
        snprintf(err, ERR_LEN, "expected %s, not %s %s", want, strchr("aeiou", got[0]) ? "an" : "a",
                 got);
        return -1;
    }
    if (t == CONF_BOOL)
        c->v.b = conf_bool(v);
    else if (t == CONF_INTEGER && o->type == CONF_OPT_INT)
        c->v.i = conf_integer(v);
    else if (t == CONF_INTEGER && conf_integer(v) < 0) {
        snprintf(err, ERR_LEN, "a size cannot be negative");
        return -1;
    } else if (t == CONF_INTEGER)
        c->v.size = (conf_size){.kind = CONF_SIZE_BYTES, .bytes = (uint64_t)conf_integer(v)};
    else if (t == CONF_ARRAY)
        return flags_from_array(o, v, c, err);
    else {
        size_t len;
        const char *s = conf_string(v, &len);
        return parse_text(o, s, len, c, err);
    }
    return 0;
}

static int out_of_range(char *err, const char *value, const char *min, const char *max)
{
    snprintf(err, ERR_LEN, "%s is out of range (%s to %s)", value, min, max);
    return -1;
}

/* "V is out of range (MIN to MAX)", with conf_size_unit_hint's question when V is a bare
   number below the minimum (75 for 75% or 75GiB). */
static int size_out_of_range(const conf_option *o, const conf_size *z, const char *v, char *err)
{
    char lo[48], hi[48], hint[160];
    conf_size min = {.kind = CONF_SIZE_BYTES, .bytes = (uint64_t)o->min};
    conf_size max = {.kind = CONF_SIZE_BYTES, .bytes = (uint64_t)o->max};
    conf_size_format(&min, lo, sizeof lo);
    conf_size_format(&max, hi, sizeof hi);
    if (z->bytes > min.bytes ||
        conf_size_unit_hint(v, strlen(v), o->forms & CONF_FORM_PERCENT, hint, sizeof hint) == 0)
        return out_of_range(err, v, lo, hi);
    snprintf(err, ERR_LEN, "%s is out of range (%s to %s); %s", v, lo, hi, hint);
    return -1;
}

static int check_size(const conf_option *o, const conf_size *z, char *err)
{
    char v[48];
    conf_size min = {.kind = CONF_SIZE_BYTES, .bytes = (uint64_t)o->min};
    conf_size max = {.kind = CONF_SIZE_BYTES, .bytes = (uint64_t)o->max};
    conf_size_format(z, v, sizeof v);
    if (z->kind == CONF_SIZE_AUTO && !(o->forms & CONF_FORM_AUTO))
        snprintf(err, ERR_LEN, "auto is not accepted here");
    else if (z->kind == CONF_SIZE_PERCENT && !(o->forms & CONF_FORM_PERCENT))
        snprintf(err, ERR_LEN, "a percentage is not accepted here");
    else if (z->kind == CONF_SIZE_PERCENT && (z->ppm == 0 || z->ppm > 1000000))
        snprintf(err, ERR_LEN,
                 "%s is out of range (a share of the device above 0%% and at most "
                 "100%%)",
                 v);
    else if (z->kind == CONF_SIZE_BYTES && (z->bytes < min.bytes || z->bytes > max.bytes))
        return size_out_of_range(o, z, v, err);
    else
        return 0;
    return -1;
}

/* Each entry given within the option's forms and bounds. */
static int check_sizes(const conf_option *o, const conf_sizes *s, char *err)
{
    char v[48], why[ERR_LEN];
    for (int k = 0; k < CONF_MAX_SIZES; k++)
        if ((s->given & (1u << k)) && check_size(o, &s->at[k], why) < 0) {
            conf_size_format(&s->at[k], v, sizeof v);
            int used = snprintf(err, ERR_LEN, "entry %d (\"%s\"): ", k + 1, v); /* < 80 */
            size_t len = strlen(why), room = ERR_LEN - 1 - (size_t)used;        /* len < 400 */
            memcpy(err + used, why, len < room ? len : room);
            err[used + (int)(len < room ? len : room)] = '\0';
            return -1;
        }
    return 0;
}

/* Both speeds in [MIN, MAX], or neither set. */
static int check_speeds(const conf_option *o, const conf_speeds *s, char *err)
{
    const uint64_t *v = s->bytes_per_s;
    if (v[0] == 0 && v[1] == 0)
        return 0;
    for (int k = 0; k < 2; k++)
        if (v[k] < (uint64_t)o->min || v[k] > (uint64_t)o->max)
            return speeds_want(o, err);
    return 0;
}

static int check_range(const conf_option *o, const conf_setting *c, char *err)
{
    char v[48], lo[48], hi[48];
    if (o->type == CONF_OPT_SIZE)
        return check_size(o, &c->v.size, err);
    if (o->type == CONF_OPT_SIZES)
        return check_sizes(o, &c->v.sizes, err);
    if (o->type == CONF_OPT_SPEEDS)
        return check_speeds(o, &c->v.speeds, err);
    if (o->type == CONF_OPT_DURATION && c->v.ns == CONF_DURATION_WORD && o->choices[0] != '\0')
        return 0;
    if (o->type == CONF_OPT_DURATION && o->choices[0] != '\0' &&
        (c->v.ns < o->min || c->v.ns > o->max))
        return duration_want(o, err);
    if (o->type == CONF_OPT_INT && (c->v.i < o->min || c->v.i > o->max)) {
        snprintf(v, sizeof v, "%lld", (long long)c->v.i);
        snprintf(lo, sizeof lo, "%lld", (long long)o->min);
        snprintf(hi, sizeof hi, "%lld", (long long)o->max);
        return out_of_range(err, v, lo, hi);
    }
    if (o->type == CONF_OPT_DURATION && (c->v.ns < o->min || c->v.ns > o->max)) {
        conf_duration_format(c->v.ns, v, sizeof v);
        conf_duration_format(o->min, lo, sizeof lo);
        conf_duration_format(o->max, hi, sizeof hi);
        return out_of_range(err, v, lo, hi);
    }
    return 0;
}

/* Stores a checked candidate; strings are copied. -1 only when out of memory. */
static int commit(conf_config *cfg, conf_option_id id, conf_setting *c, const conf_source *src)
{
    conf_setting *s = &cfg->set[id];
    if (conf_option_get(id)->type == CONF_OPT_STRING) {
        char *copy = strdup(c->v.s);
        if (copy == NULL)
            return -1;
        free(s->v.s);
        c->v.s = copy;
    }
    *s = *c;
    s->origin = src->origin;
    s->line = src->line;
    s->col = src->col;
    return 0;
}

/* The value as written (text, NULL when the file gave another type than a string). */
typedef struct written {
    const char *text;
    size_t len;
} written;

/* A bad value of a CONF_LENIENT option: one warning naming the value, which is ignored, and the
   option takes its built-in default (a layer below keeps no say: the value the user meant is
   not known, and the default is what the warning promises). Returns 0. */
static int fall_back(conf_config *cfg, conf_option_id id, const written *w, const conf_source *src,
                     conf_diags *diags, const char *msg)
{
    const conf_option *o = conf_option_get(id);
    conf_source dflt = {.origin = CONF_FROM_DEFAULT};
    char shown[65] = "", def[256];
    if (conf_setting_from_text(cfg, id, o->def, &dflt, diags) < 0)
        return -1;
    conf_setting_format(cfg, id, def, sizeof def);
    if (w->text != NULL)
        conf_excerpt(w->text, w->len, shown, sizeof shown);
    conf_diag_add(diags, CONF_WARNING, src->name, src->line, src->col,
                  "%s%s%s%s: %s; ignored: %s = %s (the default) applies", o->name,
                  w->text ? " = \"" : "", shown, w->text ? "\"" : "", msg, o->name, def);
    return 0;
}

/* A value that cannot be used: an error, or for a lenient option a warning and the default. */
static int reject(conf_config *cfg, conf_option_id id, const written *w, const conf_source *src,
                  conf_diags *diags, const char *err)
{
    const conf_option *o = conf_option_get(id);
    if ((o->forms & CONF_LENIENT) && src->origin != CONF_FROM_DEFAULT)
        return fall_back(cfg, id, w, src, diags, err);
    return report(diags, src, o, err);
}

static int finish(conf_config *cfg, conf_option_id id, conf_setting *c, const written *w,
                  const conf_source *src, conf_diags *diags, char *err)
{
    const conf_option *o = conf_option_get(id);
    if (check_range(o, c, err) < 0)
        return reject(cfg, id, w, src, diags, err);
    if (commit(cfg, id, c, src) < 0)
        return report(diags, src, o, "out of memory");
    return 0;
}

/* Contract in conf_internal.h: 0, or -1 after appending one error located at the value (0
   after one warning for a lenient option). */
int conf_setting_from_value(conf_config *cfg, conf_option_id id, const conf_value *v,
                            const conf_source *src, conf_diags *diags)
{
    char err[ERR_LEN];
    conf_setting c = {0};
    written w = {NULL, 0};
    if (conf_value_type(v) == CONF_STRING)
        w.text = conf_string(v, &w.len);
    if (convert_value(conf_option_get(id), v, &c, err) < 0)
        return reject(cfg, id, &w, src, diags, err);
    return finish(cfg, id, &c, &w, src, diags, err);
}

/* Contract in conf_internal.h: 0, or -1 after appending one error naming the source (0 after
   one warning for a lenient option). */
int conf_setting_from_text(conf_config *cfg, conf_option_id id, const char *text,
                           const conf_source *src, conf_diags *diags)
{
    char err[ERR_LEN];
    conf_setting c = {0};
    written w = {text, strlen(text)};
    if (parse_text(conf_option_get(id), text, w.len, &c, err) < 0)
        return reject(cfg, id, &w, src, diags, err);
    return finish(cfg, id, &c, &w, src, diags, err);
}

/* Contract in conf.h. */
int conf_option_check_text(conf_option_id id, const char *text, char *err, size_t errlen)
{
    char why[ERR_LEN];
    conf_setting c = {0};
    const conf_option *o = conf_option_get(id);
    if (parse_text(o, text, strlen(text), &c, why) == 0 && check_range(o, &c, why) == 0)
        return 0;
    snprintf(err, errlen, "%s", why);
    return -1;
}
