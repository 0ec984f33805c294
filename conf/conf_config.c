/* conf_config.c — a configuration's lifetime, typed reads, and each value's text and source. */
#include "conf_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Contract in conf.h: -1 only when out of memory. */
int conf_config_init(conf_config *cfg, conf_diags *diags)
{
    memset(cfg, 0, sizeof *cfg);
    conf_source src = {.origin = CONF_FROM_DEFAULT};
    int rc = 0;
    for (int i = 0; i < CONF_OPTION_COUNT; i++)
        if (conf_setting_from_text(cfg, (conf_option_id)i, conf_option_get(i)->def, &src, diags) <
            0)
            rc = -1;
    return rc;
}

/* Contract in conf.h: never fails. */
void conf_config_free(conf_config *cfg)
{
    for (int i = 0; i < CONF_OPTION_COUNT; i++)
        if (conf_option_get(i)->type == CONF_OPT_STRING) {
            free(cfg->set[i].v.s);
            cfg->set[i].v.s = NULL;
        }
    free(cfg->file);
    cfg->file = NULL;
}

/* The setting of id when the option has this type, else NULL. */
static const conf_setting *typed(const conf_config *cfg, conf_option_id id, conf_opt_type t)
{
    const conf_option *o = conf_option_get(id);
    return o != NULL && o->type == t ? &cfg->set[id] : NULL;
}

/* Contract in conf.h: never fails; false when id is not a BOOL option. */
bool conf_get_bool(const conf_config *cfg, conf_option_id id)
{
    const conf_setting *s = typed(cfg, id, CONF_OPT_BOOL);
    return s != NULL && s->v.b;
}

/* Contract in conf.h: never fails; 0 when id is not an INT option. */
int64_t conf_get_int(const conf_config *cfg, conf_option_id id)
{
    const conf_setting *s = typed(cfg, id, CONF_OPT_INT);
    return s != NULL ? s->v.i : 0;
}

/* Contract in conf.h: never fails; 0 bytes when id is not a SIZE option. */
conf_size conf_get_size(const conf_config *cfg, conf_option_id id)
{
    const conf_setting *s = typed(cfg, id, CONF_OPT_SIZE);
    return s != NULL ? s->v.size : (conf_size){.kind = CONF_SIZE_BYTES};
}

/* Contract in conf.h: never fails; 0 when id is not a DURATION option; CONF_DURATION_WORD for
   the option's word. */
int64_t conf_get_duration_ns(const conf_config *cfg, conf_option_id id)
{
    const conf_setting *s = typed(cfg, id, CONF_OPT_DURATION);
    return s != NULL ? s->v.ns : 0;
}

/* Contract in conf.h: never fails; NULL when id is not a STRING option. */
const char *conf_get_string(const conf_config *cfg, conf_option_id id)
{
    const conf_setting *s = typed(cfg, id, CONF_OPT_STRING);
    return s != NULL ? s->v.s : NULL;
}

/* Contract in conf.h: never fails; 0 when id is not an ENUM option. */
int conf_get_choice(const conf_config *cfg, conf_option_id id)
{
    const conf_setting *s = typed(cfg, id, CONF_OPT_ENUM);
    return s != NULL ? s->v.choice : 0;
}

/* Contract in conf.h: never fails; 0 when id is not a FLAGS option. */
uint32_t conf_get_flags(const conf_config *cfg, conf_option_id id)
{
    const conf_setting *s = typed(cfg, id, CONF_OPT_FLAGS);
    return s != NULL ? s->v.flags : 0;
}

/* Contract in conf.h: never fails; an empty list when id is not a SIZES option. */
conf_sizes conf_get_sizes(const conf_config *cfg, conf_option_id id)
{
    const conf_setting *s = typed(cfg, id, CONF_OPT_SIZES);
    return s != NULL ? s->v.sizes : (conf_sizes){0};
}

/* Contract in conf.h: never fails; no speeds (both 0) when id is not a SPEEDS option. */
conf_speeds conf_get_speeds(const conf_config *cfg, conf_option_id id)
{
    const conf_setting *s = typed(cfg, id, CONF_OPT_SPEEDS);
    return s != NULL ? s->v.speeds : (conf_speeds){{0, 0}};
}

static void append_choice(char *buf, size_t n, size_t *used, conf_option_id id, int i)
{
    char name[64];
    size_t len = conf_option_choice(id, i, name, sizeof name);
    conf_append_quoted(buf, n, used, name, len);
}

static void append_flags(char *buf, size_t n, size_t *used, conf_option_id id, uint32_t flags)
{
    conf_appendf(buf, n, used, "[");
    for (int i = 0, first = 1; i < 32; i++)
        if (flags & (1u << i)) {
            conf_appendf(buf, n, used, first ? "" : ", ");
            append_choice(buf, n, used, id, i);
            first = 0;
        }
    conf_appendf(buf, n, used, "]");
}

/* Contract in conf.h: never fails; output truncated to n bytes, the full length returned. */
size_t conf_setting_format(const conf_config *cfg, conf_option_id id, char *buf, size_t n)
{
    const conf_option *o = conf_option_get(id);
    size_t used = 0;
    char text[48], list[CONF_MAX_SIZES * 48];
    if (n > 0)
        buf[0] = '\0';
    if (o == NULL)
        return 0;
    const conf_setting *s = &cfg->set[id];
    switch (o->type) {
    case CONF_OPT_BOOL:
        conf_appendf(buf, n, &used, "%s", s->v.b ? "true" : "false");
        break;
    case CONF_OPT_INT:
        conf_appendf(buf, n, &used, "%lld", (long long)s->v.i);
        break;
    case CONF_OPT_SIZE:
        conf_size_format(&s->v.size, text, sizeof text);
        if (s->v.size.kind == CONF_SIZE_BYTES && strspn(text, "0123456789") == strlen(text))
            conf_appendf(buf, n, &used, "%s", text);
        else
            conf_append_quoted(buf, n, &used, text, strlen(text));
        break;
    case CONF_OPT_DURATION:
        if (s->v.ns == CONF_DURATION_WORD)
            snprintf(text, sizeof text, "%s", o->choices);
        else
            conf_duration_format(s->v.ns, text, sizeof text);
        conf_append_quoted(buf, n, &used, text, strlen(text));
        break;
    case CONF_OPT_SIZES:
        conf_sizes_format(&s->v.sizes, list, sizeof list);
        conf_append_quoted(buf, n, &used, list, strlen(list));
        break;
    case CONF_OPT_SPEEDS:
        conf_speeds_format(&s->v.speeds, list, sizeof list);
        conf_append_quoted(buf, n, &used, list, strlen(list));
        break;
    case CONF_OPT_STRING:
        conf_append_quoted(buf, n, &used, s->v.s ? s->v.s : "", s->v.s ? strlen(s->v.s) : 0);
        break;
    case CONF_OPT_ENUM:
        append_choice(buf, n, &used, id, s->v.choice);
        break;
    case CONF_OPT_FLAGS:
        append_flags(buf, n, &used, id, s->v.flags);
        break;
    }
    return used;
}

/* Contract in conf.h: never fails; output truncated to n bytes, the full length returned. */
size_t conf_setting_source(const conf_config *cfg, conf_option_id id, char *buf, size_t n)
{
    size_t used = 0;
    if (n > 0)
        buf[0] = '\0';
    if (conf_option_get(id) == NULL)
        return 0;
    const conf_setting *s = &cfg->set[id];
    if (s->origin == CONF_FROM_ENV)
        return conf_option_env_name(id, buf, n);
    if (s->origin == CONF_FROM_FILE)
        conf_appendf(buf, n, &used, "%s:%d", cfg->file ? cfg->file : "-", s->line);
    else
        conf_appendf(buf, n, &used, "default");
    return used;
}
