/* report_html_cells.c — a table's header row and its rows' cells, both from its one list of
 * columns (report_html_cells.h). */
#include "report_html_cells.h"

#include <math.h>

#define U(x) ((unsigned long long)(x))

/* Contract in report_html_cells.h. */
void html_cols_open(FILE *out, const char *pfx, const char *id, size_t rows, const html_col *cols,
                    size_t ncols)
{
    fprintf(out,
            "<div class=\"table-wrap\"><table class=\"sortable\" id=\"%s%s\" data-rows=\"%zu\">"
            "<thead><tr>",
            pfx, id, rows);
    for (size_t i = 0; i < ncols; i++) {
        int num = cols[i].kind != HTML_TEXT;
        fprintf(out, "<th data-key=\"%s\" data-type=\"%s\"%s%s", cols[i].key, num ? "num" : "text",
                num ? "" : " class=\"text\"", cols[i].extra ? " data-extra=\"1\"" : "");
        if (cols[i].title)
            fprintf(out, " title=\"%s\"", cols[i].title);
        fprintf(out, ">%s</th>", cols[i].label);
    }
    fprintf(out, "</tr></thead>\n<tbody>\n");
}

/* Contract in report_html_cells.h. */
void html_cols_close(FILE *out)
{
    fprintf(out, "</tbody></table></div>\n");
}

/* A time: in microseconds (us != 0), shown as a duration with the value in its title, or in
   milliseconds since the trace's start, shown as the text summary's columns show it. */
static void td_time(FILE *out, double v, int us)
{
    fprintf(out, "<td data-value=\"");
    html_double(out, v);
    if (us) {
        fprintf(out, "\" title=\"");
        html_double(out, v);
        fprintf(out, " us\">");
        html_duration_us(out, v);
    } else {
        fprintf(out, "\">");
        html_double(out, v);
    }
    fprintf(out, "</td>");
}

/* The cell of column c of value v. No default: a kind added to html_kind and not written here
   fails the build (-Wswitch). */
static void td(FILE *out, const html_col *c, html_cell v)
{
    if (v.null || (c->kind == HTML_US_FINITE && !isfinite(v.d))) {
        fprintf(out, "<td data-value=\"null\">-</td>");
        return;
    }
    switch (c->kind) {
    case HTML_COUNT:
        fprintf(out, "<td data-value=\"%llu\">%llu</td>", U(v.u), U(v.u));
        break;
    case HTML_BYTES:
        fprintf(out, "<td data-value=\"%llu\" title=\"%llu bytes\">", U(v.u), U(v.u));
        html_bytes(out, v.u);
        fprintf(out, "</td>");
        break;
    case HTML_NS:
        td_time(out, (double)v.u / 1e3, 1);
        break;
    case HTML_US:
    case HTML_US_FINITE:
        td_time(out, v.d, 1);
        break;
    case HTML_MS:
        td_time(out, v.d, 0);
        break;
    case HTML_BOOL:
        fprintf(out, "<td data-value=\"%s\">%s</td>", v.u ? "true" : "false", v.u ? "yes" : "no");
        break;
    case HTML_INT:
        fprintf(out, "<td data-value=\"%lld\">%lld</td>", v.i, v.i);
        break;
    case HTML_TEXT:
        fprintf(out, "<td class=\"text\">");
        html_text(out, v.s);
        fprintf(out, "</td>");
        break;
    }
}

/* The value of column c's field in part b (its type is the one HTML_FIELD checked for c's
   kind). */
static html_cell field(const html_col *c, const void *b)
{
    const char *at = (const char *)b + c->off;
    html_cell v = {0};
    switch (c->kind) {
    case HTML_US:
    case HTML_US_FINITE:
    case HTML_MS:
        v.d = *(const double *)at;
        break;
    case HTML_INT:
        v.i = *(const int *)at;
        break;
    case HTML_TEXT:
        v.s = *(const char *const *)at;
        break;
    case HTML_COUNT:
    case HTML_BYTES:
    case HTML_NS:
    case HTML_BOOL:
        v.u = *(const uint64_t *)at;
        break;
    }
    return v;
}

/* Contract in report_html_cells.h. */
void html_cols_row(FILE *out, const html_col *cols, size_t ncols, html_row *r)
{
    for (size_t i = 0; i < ncols; i++) {
        const html_col *c = &cols[i];
        const void *b = r->part[c->part];
        td(out, c, b == NULL ? (html_cell){.null = 1} : c->get ? c->get(r, b) : field(c, b));
    }
}

/* Contract in report_html_cells.h. */
html_cell html_cell_index(html_row *r, const void *part)
{
    (void)part;
    return (html_cell){.u = r->i};
}
