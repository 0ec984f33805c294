/* conf_internal.h — types and cross-file functions of conf/, grouped by the file defining them. */
#ifndef CONF_INTERNAL_H
#define CONF_INTERNAL_H

#include "conf.h"

#include <locale.h>
#include <stdarg.h>

/* ---- conf_arena.c: bump allocation for one document, bounded in total -------------------- */

typedef struct conf_chunk conf_chunk;

typedef struct conf_arena {
    conf_chunk *head;
    size_t total; /* bytes obtained from malloc, chunk headers included */
    size_t limit; /* total never exceeds it */
} conf_arena;

/* Returns n bytes aligned for any type, or NULL when the limit or malloc says no. */
void *conf_arena_alloc(conf_arena *a, size_t n);
/* Copies the first old_n bytes of old into a new block of new_n bytes; NULL as alloc. */
void *conf_arena_grow(conf_arena *a, const void *old, size_t old_n, size_t new_n);
/* Releases every chunk. Never fails. */
void conf_arena_release(conf_arena *a);

/* ---- conf_diag.c ------------------------------------------------------------------------- */

/* Appends "NAME:LINE:COL: error: MESSAGE" (without ":LINE:COL" when line is 0). Never fails:
   a diagnostic that cannot be stored is counted in d->dropped. */
void conf_diag_add(conf_diags *d, conf_severity sev, const char *name, int line, int col,
                   const char *fmt, ...) __attribute__((format(printf, 6, 7)));
void conf_diag_vadd(conf_diags *d, conf_severity sev, const char *name, int line, int col,
                    const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));

/* ---- conf_value.c: the document tree ----------------------------------------------------- */

/* Table flags: how a table came to exist, which decides how it may be extended. */
#define CONF_T_IMPLICIT 1u /* created as a prefix of a [header] */
#define CONF_T_DEFINED  2u /* defined by [header] or [[header]] */
#define CONF_T_DOTTED   4u /* created (or extended) by a dotted key */
#define CONF_T_INLINE   8u /* an inline table: closed once written */
/* Array flag. */
#define CONF_A_TABLES 16u /* an array of tables ([[header]]); static arrays are closed */

typedef struct conf_entry {
    conf_key key;
    conf_value *value;
} conf_entry;

struct conf_value {
    conf_type type;
    unsigned flags;
    int depth; /* root table 0, its values 1, ... at most CONF_MAX_DEPTH */
    int line, col;
    union {
        struct {
            char *ptr;
            size_t len;
        } str;
        int64_t i;
        double f;
        bool b;
        conf_datetime dt;
        struct {
            conf_value **items;
            size_t count, cap;
        } arr;
        struct {
            conf_entry *items;
            size_t count, cap;
            uint32_t *index; /* open addressing, entry index + 1; NULL while small */
            size_t index_cap;
        } tab;
    } u;
};

struct conf_doc {
    conf_arena arena;
    conf_value *root;
};

/* A zeroed value of the given type in the document's arena; NULL when out of memory. */
conf_value *conf_value_new(conf_doc *doc, conf_type type, int depth, int line, int col);
/* The value stored under this key, or NULL. */
conf_value *conf_table_find(const conf_value *t, const char *name, size_t len);
/* Adds key (not present yet; its name must live in the arena) to t. -1 when out of memory. */
int conf_table_put(conf_doc *doc, conf_value *t, const conf_key *key, conf_value *v);
/* Appends v to the array a. -1 when out of memory. */
int conf_array_push(conf_doc *doc, conf_value *a, conf_value *v);

/* ---- conf_utf8.c ------------------------------------------------------------------------- */

/* Offset of the first byte that is not well-formed UTF-8 (overlong forms, surrogates and code
   points above U+10FFFF are not), or len when all of it is. */
size_t conf_utf8_check(const char *s, size_t len);
/* Writes the UTF-8 form of a Unicode scalar value (4 bytes at most); returns its length. */
size_t conf_utf8_encode(uint32_t cp, char *out);
/* Line and column (1-based, columns count code points) of byte offset off in s. */
void conf_utf8_position(const char *s, size_t off, int *line, int *col);

/* ---- conf_scan.c: the parser's cursor ---------------------------------------------------- */

typedef struct conf_parser {
    const char *src;
    size_t len, pos;
    int line, col; /* of src[pos] */
    const char *name;
    conf_doc *doc;
    conf_diags *diags;
    bool failed;
    char *scratch; /* decoding buffer for strings */
    size_t scratch_len, scratch_cap;
    locale_t c_locale; /* for strtod_l; created on the first float */
} conf_parser;

/* Byte at pos + k, or -1 past the end. */
int conf_peek(const conf_parser *p, size_t k);
/* Moves n bytes forward, keeping line and column. */
void conf_advance(conf_parser *p, size_t n);
/* True when a raw byte is a control character TOML forbids outside escapes (tab is allowed). */
bool conf_is_control(int c);
/* Length of the newline at the cursor: 1 (LF), 2 (CRLF) or 0. */
int conf_newline_len(const conf_parser *p);
/* Skips spaces and tabs. */
void conf_skip_ws(conf_parser *p);
/* Skips whitespace, newlines and comments (inside arrays). -1 on a bad comment. */
int conf_skip_blank(conf_parser *p);
/* Skips whitespace and an optional comment, then requires a newline or the end, consumed.
   what names the thing just parsed for the error message. */
int conf_end_of_line(conf_parser *p, const char *what);
/* Records the parse error at line:col (only the first one); returns -1. */
int conf_fail(conf_parser *p, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The out-of-memory error at the cursor; returns -1. */
int conf_fail_oom(conf_parser *p);
/* Appends n bytes to the scratch buffer. -1 when out of memory. */
int conf_scratch_put(conf_parser *p, const char *s, size_t n);

/* ---- conf_string.c: strings and keys ----------------------------------------------------- */

/* Parses any string at the cursor (multi-line ones only when allow_multiline) into a
   NUL-terminated copy in the arena. -1 on error. */
int conf_parse_string(conf_parser *p, bool allow_multiline, char **out, size_t *len);
/* Parses one simple key (bare or quoted) at the cursor into key. -1 on error. */
int conf_parse_simple_key(conf_parser *p, conf_key *key);

/* ---- conf_number.c ----------------------------------------------------------------------- */

/* Parses an integer or float at the cursor into v (type set). -1 on error. */
int conf_parse_number(conf_parser *p, conf_value *v);

/* ---- conf_datetime.c --------------------------------------------------------------------- */

/* True when the cursor starts a date (4 digits and '-') or a time (2 digits and ':'). */
bool conf_at_datetime(const conf_parser *p);
/* Parses one of the four date-time kinds at the cursor into v (type set). -1 on error. */
int conf_parse_datetime(conf_parser *p, conf_value *v);

/* ---- conf_parse.c ------------------------------------------------------------------------ */

/* Parses a value at the cursor; it will be stored at the given depth. -1 on error. */
int conf_parse_value(conf_parser *p, int depth, conf_value **out);

/* ---- conf_options.c ---------------------------------------------------------------------- */

/* Index of the choice named by text[0..len) for an ENUM or FLAGS option, or -1. */
int conf_option_choice_index(const conf_option *o, const char *text, size_t len);
/* Number of choices of an option (0 when it has none). */
int conf_option_choice_count(const conf_option *o);

/* ---- conf_lists.c: size lists and speed pairs --------------------------------------------- */

/* Parses up to CONF_MAX_SIZES comma-separated sizes (conf_size_parse's), spaces around each
   ignored; an empty entry is not given. Returns 0, or -1 with "entry N (\"TEXT\"): REASON" in
   err. Bounds are not checked. */
int conf_sizes_parse(const char *text, size_t len, conf_sizes *out, char *err, size_t errlen);
/* Parses "A,B" (decimal GB/s, up to 9 decimals, spaces around each ignored) or "" (both 0)
   into bytes per second. Returns 0, or -1. Bounds are not checked. */
int conf_speeds_parse(const char *text, size_t len, conf_speeds *out);
/* Canonical text: "20GiB,,75%" (empty entries up to the last given one) / "11.5" GB/s /
   "11,25" ("" when not set). NUL-terminated, truncated to n; the untruncated length returned. */
size_t conf_sizes_format(const conf_sizes *s, char *buf, size_t n);
size_t conf_speed_format(uint64_t bytes_per_s, char *buf, size_t n);
size_t conf_speeds_format(const conf_speeds *s, char *buf, size_t n);

/* ---- conf_setting.c: converting and storing one option's value --------------------------- */

/* Where a value comes from, for diagnostics and provenance. */
typedef struct conf_source {
    conf_origin origin;
    const char *name; /* file name or environment variable */
    int line, col;
} conf_source;

/* Sets option id from a TOML value (file layer). -1 with an error at the value; for a bad value
   of a CONF_LENIENT option, 0 with a warning there and the option at its built-in default. */
int conf_setting_from_value(conf_config *cfg, conf_option_id id, const conf_value *v,
                            const conf_source *src, conf_diags *diags);
/* Sets option id from text (defaults and environment). -1 with an error naming src; lenient
   options as conf_setting_from_value (never for a built-in default: that is an error). */
int conf_setting_from_text(conf_config *cfg, conf_option_id id, const char *text,
                           const conf_source *src, conf_diags *diags);

/* ---- conf_format.c: text helpers --------------------------------------------------------- */

/* snprintf that appends at *used within n bytes and keeps counting past the end. */
void conf_appendf(char *buf, size_t n, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Appends s[0..len) as a TOML basic string with quotes and escapes. */
void conf_append_quoted(char *buf, size_t n, size_t *used, const char *s, size_t len);
/* Copies at most size - 1 bytes of text into out (size > 0), NUL-terminated, each byte that is
   not printable ASCII shown as '?': user text quoted in a message. */
void conf_excerpt(const char *text, size_t len, char *out, size_t size);
/* True when a[0..len) and b[0..len) are equal ignoring ASCII case. */
bool conf_ascii_ieq(const char *a, const char *b, size_t len);

#endif
