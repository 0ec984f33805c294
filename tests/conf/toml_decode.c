/* toml_decode.c — toml-test decoder: TOML on stdin, tagged JSON on stdout, exit 1 if invalid. */
#include "conf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put_json_string(const char *s, size_t n)
{
    putchar('"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20 || c == 0x7F)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static void put_tagged(const char *type, const char *text)
{
    printf("{\"type\":\"%s\",\"value\":", type);
    put_json_string(text, strlen(text));
    putchar('}');
}

static void put_value(const conf_value *v);

static void put_table(const conf_value *t)
{
    putchar('{');
    for (size_t i = 0; i < conf_table_size(t); i++) {
        conf_key k;
        const conf_value *v = conf_table_entry(t, i, &k);
        if (i > 0)
            putchar(',');
        put_json_string(k.name, k.len);
        putchar(':');
        put_value(v);
    }
    putchar('}');
}

static void put_array(const conf_value *a)
{
    putchar('[');
    for (size_t i = 0; i < conf_array_size(a); i++) {
        if (i > 0)
            putchar(',');
        put_value(conf_array_at(a, i));
    }
    putchar(']');
}

static void put_float(double d)
{
    char buf[64];
    if (isnan(d))
        snprintf(buf, sizeof buf, "nan");
    else if (isinf(d))
        snprintf(buf, sizeof buf, "%sinf", d < 0 ? "-" : "");
    else
        snprintf(buf, sizeof buf, "%.17g", d);
    put_tagged("float", buf);
}

/* Recursion is bounded by the parser's CONF_MAX_DEPTH. */
static void put_value(const conf_value *v)
{
    static const char *const dt_types[] = {"datetime", "datetime-local", "date-local",
                                           "time-local"};
    char buf[64];
    size_t n;
    const char *s;
    switch (conf_value_type(v)) {
    case CONF_TABLE:
        put_table(v);
        return;
    case CONF_ARRAY:
        put_array(v);
        return;
    case CONF_STRING:
        s = conf_string(v, &n);
        printf("{\"type\":\"string\",\"value\":");
        put_json_string(s, n);
        putchar('}');
        return;
    case CONF_INTEGER:
        snprintf(buf, sizeof buf, "%lld", (long long)conf_integer(v));
        put_tagged("integer", buf);
        return;
    case CONF_FLOAT:
        put_float(conf_float(v));
        return;
    case CONF_BOOL:
        put_tagged("bool", conf_bool(v) ? "true" : "false");
        return;
    default:
        conf_datetime_format(v, buf, sizeof buf);
        put_tagged(dt_types[conf_value_type(v) - CONF_DATETIME], buf);
    }
}

static char *read_all(FILE *f, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        char *bigger = realloc(buf, cap * 2);
        if (bigger == NULL)
            free(buf);
        buf = bigger;
        cap *= 2;
    }
    *len = n;
    return buf;
}

int main(void)
{
    size_t len;
    char *text = read_all(stdin, &len);
    if (text == NULL || ferror(stdin)) {
        fprintf(stderr, "toml-decode: cannot read standard input\n");
        return 2;
    }
    conf_diags d = {0};
    conf_doc *doc = conf_parse(text, len, "<stdin>", &d);
    for (size_t i = 0; i < d.count; i++)
        fprintf(stderr, "%s\n", d.items[i].text);
    int rc = doc == NULL ? 1 : 0;
    if (doc != NULL) {
        put_table(conf_doc_root(doc));
        putchar('\n');
    }
    conf_doc_free(doc);
    conf_diags_free(&d);
    free(text);
    return rc;
}
