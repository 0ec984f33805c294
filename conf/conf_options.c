/* conf_options.c — the option table generated from CONF_OPTIONS, and lookups by name. */
#include "conf_internal.h"

#include <string.h>

static const conf_option options[CONF_OPTION_COUNT] = {
#define CONF_X_ROW(id, name_, type_, def_, min_, max_, forms_, choices_, unit_, help_)             \
    [CONF_##id] = {.name = name_,                                                                  \
                   .type = CONF_OPT_##type_,                                                       \
                   .def = def_,                                                                    \
                   .min = min_,                                                                    \
                   .max = max_,                                                                    \
                   .forms = forms_,                                                                \
                   .choices = choices_,                                                            \
                   .unit = unit_,                                                                  \
                   .help = help_},
    CONF_OPTIONS(CONF_X_ROW)
#undef CONF_X_ROW
};

/* Contract in conf.h: never fails; NULL for an id out of range. */
const conf_option *conf_option_get(conf_option_id id)
{
    return (unsigned)id < CONF_OPTION_COUNT ? &options[id] : NULL;
}

/* Contract in conf.h: never fails; -1 when no option has that name. */
int conf_option_find(const char *name, size_t len)
{
    for (int i = 0; i < CONF_OPTION_COUNT; i++)
        if (strlen(options[i].name) == len && memcmp(options[i].name, name, len) == 0)
            return i;
    return -1;
}

/* Contract in conf.h: never fails; output truncated to n bytes, the full length returned. */
size_t conf_option_env_name(conf_option_id id, char *buf, size_t n)
{
    size_t used = 0;
    if (n > 0)
        buf[0] = '\0';
    if (conf_option_get(id) == NULL)
        return 0;
    conf_appendf(buf, n, &used, "SHIM_");
    for (const char *s = options[id].name; *s != '\0'; s++)
        conf_appendf(buf, n, &used, "%c",
                     *s == '.'                ? '_'
                     : *s >= 'a' && *s <= 'z' ? *s - 'a' + 'A'
                                              : *s);
    return used;
}

/* Contract in conf.h: never fails; -1 when no option has that variable. */
int conf_option_find_env(const char *var, size_t len)
{
    char env[128];
    for (int i = 0; i < CONF_OPTION_COUNT; i++) {
        size_t n = conf_option_env_name((conf_option_id)i, env, sizeof env);
        if (n == len && memcmp(env, var, len) == 0)
            return i;
    }
    return -1;
}

/* Choice i of a "a|b|c" list: its start and length; false when there is no such choice. */
static bool choice_at(const char *choices, int i, const char **start, size_t *len)
{
    const char *s = choices;
    for (; i > 0 && s != NULL; i--)
        s = (s = strchr(s, '|')) != NULL ? s + 1 : NULL;
    if (s == NULL || *s == '\0')
        return false;
    const char *end = strchr(s, '|');
    *start = s;
    *len = end != NULL ? (size_t)(end - s) : strlen(s);
    return true;
}

/* Contract in conf_internal.h: never fails. */
int conf_option_choice_count(const conf_option *o)
{
    const char *s;
    size_t n;
    int count = 0;
    while (choice_at(o->choices, count, &s, &n))
        count++;
    return count;
}

/* Contract in conf_internal.h: never fails; -1 when text names no choice. */
int conf_option_choice_index(const conf_option *o, const char *text, size_t len)
{
    const char *s;
    size_t n;
    for (int i = 0; choice_at(o->choices, i, &s, &n); i++)
        if (n == len && memcmp(s, text, len) == 0)
            return i;
    return -1;
}

/* Contract in conf.h: never fails; 0 when there is no such choice. */
size_t conf_option_choice(conf_option_id id, int i, char *buf, size_t n)
{
    const char *s;
    size_t len, used = 0;
    if (n > 0)
        buf[0] = '\0';
    if (conf_option_get(id) == NULL || i < 0 || !choice_at(options[id].choices, i, &s, &len))
        return 0;
    conf_appendf(buf, n, &used, "%.*s", (int)len, s);
    return used;
}

/* Edit distance between a and b, capped: anything above 3 is reported as 3. */
static size_t distance(const char *a, size_t na, const char *b, size_t nb)
{
    size_t row[64], prev;
    if (nb >= 64 || (na > nb ? na - nb : nb - na) > 2)
        return 3;
    for (size_t j = 0; j <= nb; j++)
        row[j] = j;
    for (size_t i = 1; i <= na; i++) {
        prev = row[0];
        row[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t sub = prev + (a[i - 1] != b[j - 1]);
            size_t del = row[j] + 1, ins = row[j - 1] + 1;
            prev = row[j];
            row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
    }
    return row[nb] < 3 ? row[nb] : 3;
}

/* Keeps candidate c[0..n) in best when it is closer to name than anything seen so far. */
static void consider(const char *name, size_t len, const char *c, size_t n, size_t *best_d,
                     char *buf, size_t size, size_t *used)
{
    size_t d = distance(name, len, c, n);
    if (d >= *best_d)
        return;
    *best_d = d;
    *used = 0;
    conf_appendf(buf, size, used, "%.*s", (int)n, c);
}

/* Contract in conf.h: never fails; 0 when nothing is close. */
size_t conf_option_suggest(const char *name, size_t len, bool env, char *buf, size_t n)
{
    size_t best_d = 3, used = 0;
    char cand[128];
    if (n > 0)
        buf[0] = '\0';
    for (int i = 0; i < CONF_OPTION_COUNT; i++) {
        const char *o = options[i].name, *dot = strrchr(o, '.');
        if (env) {
            size_t k = conf_option_env_name((conf_option_id)i, cand, sizeof cand);
            consider(name, len, cand, k, &best_d, buf, n, &used);
            continue;
        }
        consider(name, len, o, strlen(o), &best_d, buf, n, &used);
        if (dot != NULL)
            consider(name, len, o, (size_t)(dot - o), &best_d, buf, n, &used);
    }
    return used;
}

/* Contract in conf.h: never fails. */
bool conf_option_is_group(const char *name, size_t len)
{
    for (int i = 0; i < CONF_OPTION_COUNT; i++)
        if (strncmp(options[i].name, name, len) == 0 && options[i].name[len] == '.')
            return true;
    return false;
}
