/* conf_diag.c — the list of diagnostics handed back to callers instead of printing. */
#include "conf_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *format_line(conf_severity sev, const char *name, int line, int col, const char *fmt,
                         va_list ap)
{
    char *msg;
    if (vasprintf(&msg, fmt, ap) < 0)
        return NULL;
    const char *kind = sev == CONF_ERROR ? "error" : "warning";
    char pos[48] = "";
    if (line > 0)
        snprintf(pos, sizeof pos, ":%d:%d", line, col);
    /* The line, then after its NUL the line without the severity (conf_diag's bare): one
       allocation, so that a diagnostic is stored whole or not at all. */
    char *text;
    if (asprintf(&text, "%s%s: %s: %s%c%s%s: %s", name, pos, kind, msg, '\0', name, pos, msg) < 0)
        text = NULL;
    free(msg);
    return text;
}

/* Room for CONF_MAX_DIAGS entries is taken at the first diagnostic: no growth logic. */
static bool reserve(conf_diags *d)
{
    if (d->count >= CONF_MAX_DIAGS)
        return false;
    if (d->items == NULL)
        d->items = calloc(CONF_MAX_DIAGS, sizeof *d->items);
    return d->items != NULL;
}

/* Contract in conf_internal.h: never fails; what cannot be stored is counted as dropped. */
void conf_diag_vadd(conf_diags *d, conf_severity sev, const char *name, int line, int col,
                    const char *fmt, va_list ap)
{
    if (sev == CONF_ERROR)
        d->errors++;
    char *text = reserve(d) ? format_line(sev, name ? name : "-", line, col, fmt, ap) : NULL;
    if (text == NULL) {
        d->dropped++;
        return;
    }
    d->items[d->count++] = (conf_diag){
        .severity = sev, .line = line, .col = col, .text = text, .bare = text + strlen(text) + 1};
}

/* Contract in conf_internal.h: never fails. */
void conf_diag_add(conf_diags *d, conf_severity sev, const char *name, int line, int col,
                   const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    conf_diag_vadd(d, sev, name, line, col, fmt, ap);
    va_end(ap);
}

/* Contract in conf.h: never fails. */
void conf_diags_free(conf_diags *d)
{
    for (size_t i = 0; i < d->count; i++)
        free(d->items[i].text);
    free(d->items);
    memset(d, 0, sizeof *d);
}
