/* planner/plan_write.c — writes a model in the text format that plan_model_parse reads back
 * identically. Numbers are written in the "C" locale, in the shortest of %.15g / %.17g that
 * reads back to the same double. */
#include "plan_internal.h"

#include "base_array.h"

#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct wbuf {
    char *s;
    size_t len, cap;
    bool failed;
} wbuf;

static void put(wbuf *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(wbuf *w, const char *fmt, ...)
{
    if (w->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(w->s + w->len, w->cap - w->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            w->failed = true;
            return;
        }
        if ((size_t)n < w->cap - w->len) {
            w->len += (size_t)n;
            return;
        }
        if (base_array_grow((void **)&w->s, &w->cap, w->len + (size_t)n + 1, 1)) {
            w->failed = true;
            return;
        }
    }
}

/* Shortest of %.15g and %.17g that reads back exactly (the caller runs in the "C" locale). */
static void put_num(wbuf *w, double v)
{
    char b[40];
    snprintf(b, sizeof(b), "%.15g", v);
    double back;
    if (!plan_parse_double(b, strlen(b), &back) || back != v)
        snprintf(b, sizeof(b), "%.17g", v);
    put(w, "%s", b);
}

static void put_model(wbuf *w, const plan_model *m)
{
    put(w, "# libshim iteration model: %zu operations, %zu allocations\n", m->nops, m->nallocs);
    put(w, "hw ");
    put_num(w, m->hw.h2d_gbps);
    put(w, " ");
    put_num(w, m->hw.d2h_gbps);
    put(w, " %d ", m->hw.duplex ? 1 : 0);
    put_num(w, m->hw.remap_us);
    put(w, "\n");
    if (m->hw.both_h2d_gbps > 0) {
        put(w, "link_both ");
        put_num(w, m->hw.both_h2d_gbps);
        put(w, " ");
        put_num(w, m->hw.both_d2h_gbps);
        put(w, "\n");
    }
    for (size_t i = 0; i < m->nops && !w->failed; i++) {
        put(w, "op ");
        put_num(w, m->ops[i].dur_us);
        if (m->ops[i].stream)
            put(w, " %u", (unsigned)m->ops[i].stream);
        put(w, "\n");
        if (m->ops[i].idle_us > 0) {
            put(w, "idle %zu ", i);
            put_num(w, m->ops[i].idle_us);
            put(w, "\n");
        }
    }
    for (size_t i = 0; i < m->nallocs && !w->failed; i++) {
        const plan_alloc *a = &m->allocs[i];
        put(w, "alloc %llu", (unsigned long long)a->bytes);
        if (a->moved != a->bytes)
            put(w, "/%llu", (unsigned long long)a->moved);
        put(w, " %d %d", a->birth, a->death);
        for (uint32_t k = 0; k < a->ntouch; k++) {
            put(w, " %d", m->touches[a->touch_first + k]);
            if (m->touch_reads && m->touch_reads[a->touch_first + k])
                put(w, "@%llu", (unsigned long long)m->touch_reads[a->touch_first + k]);
        }
        put(w, "\n");
    }
    for (size_t i = 0; i < m->ncopies && !w->failed; i++)
        put(w, "copy %d %s %llu\n", m->copies[i].after, m->copies[i].to_device ? "h2d" : "d2h",
            (unsigned long long)m->copies[i].bytes);
}

plan_err plan_model_write(const plan_model *m, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    wbuf w = {.cap = 4096};
    w.s = malloc(w.cap);
    if (!w.s)
        return PLAN_ERR_NOMEM;
    w.s[0] = '\0';
    locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (!c) {
        free(w.s);
        return PLAN_ERR_NOMEM;
    }
    locale_t old = uselocale(c);
    put_model(&w, m);
    uselocale(old);
    freelocale(c);
    if (w.failed) {
        free(w.s);
        return PLAN_ERR_NOMEM;
    }
    *out = w.s;
    *len = w.len;
    return PLAN_OK;
}
