/* report_html_cells.h — the columns of the page's tables (report_html_tables.c): each table's
 * columns are one list of html_col, each column's header (th data-key, data-type, title) and how
 * its cell is written (a kind, and the field it shows or a getter), from which both the header
 * row and every row's cells are written, so that a cell cannot stand under another column's
 * header. A number cell carries its value as summary --json writes it in data-value (12, 3.250,
 * true, null) and a readable form as text; a text cell, the text escaped. */
#ifndef REPORT_HTML_CELLS_H
#define REPORT_HTML_CELLS_H

#include "report_html.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* How a cell is written, and so which type its field has. */
typedef enum html_kind {
    HTML_COUNT,     /* uint64_t, as it is */
    HTML_BYTES,     /* uint64_t bytes, readable, the exact count in its title */
    HTML_NS,        /* uint64_t nanoseconds, written as HTML_US of them */
    HTML_US,        /* double microseconds, a duration, the value in its title */
    HTML_US_FINITE, /* HTML_US, null when not finite */
    HTML_MS,        /* double milliseconds, as the text summary's columns show them */
    HTML_BOOL,      /* uint64_t, true when not 0 */
    HTML_INT,       /* int, as it is */
    HTML_TEXT,      /* const char *, escaped; the column's data-type is "text", any other "num" */
} html_kind;

/* One cell's value: u for the unsigned kinds, i for HTML_INT, d for the times, s for HTML_TEXT. */
typedef struct html_cell {
    int null; /* no value: data-value null, "-" */
    uint64_t u;
    long long i;
    double d;
    const char *s;
} html_cell;

/* One row as its cells see it: the parts its columns read (part[0] the row's own struct; a NULL
   part: the cells of the columns that read it are null), its index in what the table walks, the
   page (NULL in the ranks table) and room for a getter's text. */
typedef struct html_row {
    const void *part[3];
    size_t i;
    const html_page *p;
    char name[REPORT_ALLOC_NAME_MAX];
} html_row;

/* A column: its header and its cell, the field at off in part[part] (kind says its type), or
   what get makes of that part (a computed cell). Written with the HTML_C_* macros below. */
typedef struct html_col {
    const char *key, *label, *title; /* title: NULL for none */
    int extra;                       /* data-extra: summary --json lacks the key */
    html_kind kind;
    size_t off;
    int part;
    html_cell (*get)(html_row *r, const void *part);
} html_col;

/* A column's cell, after its key, label, title and extra: member m of the part's struct type,
   checked at compile time to have the type its kind reads; .part = N after it for another part
   than part[0]. */
#define HTML_FIELD(type, m, t) _Generic(((type *)0)->m, t : offsetof(type, m))
#define HTML_C_COUNT(type, m)  .kind = HTML_COUNT, .off = HTML_FIELD(type, m, uint64_t)
#define HTML_C_BYTES(type, m)  .kind = HTML_BYTES, .off = HTML_FIELD(type, m, uint64_t)
#define HTML_C_NS(type, m)     .kind = HTML_NS, .off = HTML_FIELD(type, m, uint64_t)
#define HTML_C_US(type, m)     .kind = HTML_US, .off = HTML_FIELD(type, m, double)
#define HTML_C_FINITE(type, m) .kind = HTML_US_FINITE, .off = HTML_FIELD(type, m, double)
#define HTML_C_BOOL(type, m)   .kind = HTML_BOOL, .off = HTML_FIELD(type, m, uint64_t)
#define HTML_C_INT(type, m)    .kind = HTML_INT, .off = HTML_FIELD(type, m, int)
#define HTML_C_TEXT(type, m)   .kind = HTML_TEXT, .off = HTML_FIELD(type, m, const char *)
/* A computed cell of kind k: what getter fn makes of the part. */
#define HTML_C_GET(k, fn) .kind = k, .get = fn

#define HTML_NCOLS(a) (sizeof(a) / sizeof(a)[0])

/* Opens table pfx then id (data-rows rows) and writes its header row, a th per column of cols;
   the rows follow, then html_cols_close. */
void html_cols_open(FILE *out, const char *pfx, const char *id, size_t rows, const html_col *cols,
                    size_t ncols);
/* Closes what html_cols_open opened. */
void html_cols_close(FILE *out);
/* Row r's cells, a td per column of cols in their order (the row's <tr> and </tr> are the
   table's, which may give it attributes). */
void html_cols_row(FILE *out, const html_col *cols, size_t ncols, html_row *r);
/* A getter: the row's index (r->i). */
html_cell html_cell_index(html_row *r, const void *part);

#endif
