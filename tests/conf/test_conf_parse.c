/* test_conf_parse.c — unit tests of the TOML parser: positions, errors, limits, value details. */
#include "conf.h"

#include <locale.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static conf_doc *parse(const char *text)
{
    conf_diags d = {0};
    conf_doc *doc = conf_parse(text, strlen(text), "t.toml", &d);
    if (doc == NULL)
        fail_msg("parse failed: %s", d.count ? d.items[0].text : "(no diagnostic)");
    assert_int_equal(d.count, 0);
    conf_diags_free(&d);
    return doc;
}

/* The text must fail with exactly this one diagnostic. */
static void expect_error(const char *text, size_t len, const char *want)
{
    conf_diags d = {0};
    conf_doc *doc = conf_parse(text, len, "t.toml", &d);
    assert_null(doc);
    assert_int_equal(d.count, 1);
    assert_int_equal(d.errors, 1);
    assert_string_equal(d.items[0].text, want);
    conf_diags_free(&d);
}

#define EXPECT_ERROR(text, want) expect_error(text, sizeof(text) - 1, want)

static const conf_value *get(const conf_value *t, const char *key)
{
    const conf_value *v = conf_table_get(t, key, strlen(key));
    if (v == NULL)
        fail_msg("no key '%s'", key);
    return v;
}

static void positions_of_values_and_keys(void **state)
{
    (void)state;
    conf_doc *doc = parse("a = 1\n[t]\n  b = \"x\"\n  c.d = [1,\n   2]\n");
    const conf_value *root = conf_doc_root(doc), *t = get(root, "t");
    assert_int_equal(conf_value_line(get(root, "a")), 1);
    assert_int_equal(conf_value_col(get(root, "a")), 5);
    assert_int_equal(conf_value_line(get(t, "b")), 3);
    assert_int_equal(conf_value_col(get(t, "b")), 7);
    const conf_value *arr = get(get(t, "c"), "d");
    assert_int_equal(conf_value_line(conf_array_at(arr, 1)), 5);
    assert_int_equal(conf_value_col(conf_array_at(arr, 1)), 4);
    conf_key k;
    conf_table_entry(t, 0, &k);
    assert_int_equal(k.line, 3);
    assert_int_equal(k.col, 3);
    assert_string_equal(k.name, "b");
    conf_doc_free(doc);
}

static void columns_count_code_points(void **state)
{
    (void)state;
    EXPECT_ERROR("a = \"\xc3\xa9\xc3\xa9\" x\n",
                 "t.toml:1:10: error: expected the end of the line after a value");
    EXPECT_ERROR("\xef\xbb\xbf"
                 "a = 1 x",
                 "t.toml:1:7: error: expected the end of the line after a value");
}

static void invalid_utf8_is_located(void **state)
{
    (void)state;
    EXPECT_ERROR("a = 1\nb = \"\xff\"\n", "t.toml:2:6: error: invalid UTF-8 byte 0xFF");
    EXPECT_ERROR("# \xed\xa0\x80 surrogate\n", "t.toml:1:3: error: invalid UTF-8 byte 0xED");
    EXPECT_ERROR("a = 'x' # \xc0\xaf\n", "t.toml:1:11: error: invalid UTF-8 byte 0xC0");
}

static void syntax_errors_are_precise(void **state)
{
    (void)state;
    EXPECT_ERROR("a = \"x\nb = 1\n", "t.toml:1:5: error: unterminated string");
    EXPECT_ERROR("a = \"\"\"x\n", "t.toml:1:5: error: unterminated multi-line string");
    EXPECT_ERROR("a = [1, 2\n", "t.toml:1:5: error: unterminated array");
    EXPECT_ERROR("a = {b = 1\n", "t.toml:1:11: error: an inline table must be on one line");
    EXPECT_ERROR("a = {b = 1,}\n", "t.toml:1:12: error: expected a key");
    EXPECT_ERROR("a 1\n", "t.toml:1:3: error: expected '=' after a key");
    EXPECT_ERROR("a =\n", "t.toml:1:4: error: expected a value");
    EXPECT_ERROR("[a\n", "t.toml:1:3: error: expected ']' to close the header");
    EXPECT_ERROR("[[a]\n", "t.toml:1:4: error: expected ']]' to close the header");
    EXPECT_ERROR("a = \"\\q\"\n", "t.toml:1:6: error: invalid escape sequence '\\q'");
    EXPECT_ERROR("a = \"\\uD800\"\n", "t.toml:1:6: error: \\uD800 is not a Unicode scalar value");
    EXPECT_ERROR("a = \"\\u12\"\n", "t.toml:1:6: error: \\u needs exactly 4 hexadecimal digits");
    EXPECT_ERROR("a = 'x\ty\x01'\n", "t.toml:1:9: error: control character U+0001 must be escaped");
    EXPECT_ERROR("a = 1 # \x7f\n", "t.toml:1:9: error: control character U+007F in a comment");
    EXPECT_ERROR("a = 1\rb = 2\n", "t.toml:1:6: error: carriage return without a line feed");
    EXPECT_ERROR("a = 01\n", "t.toml:1:5: error: leading zeros are not allowed");
    EXPECT_ERROR("a = 1__0\n", "t.toml:1:6: error: '_' must be between two digits");
    EXPECT_ERROR("a = 1.\n", "t.toml:1:7: error: expected a digit");
    EXPECT_ERROR("a = 1e400\n", "t.toml:1:5: error: float out of range");
    EXPECT_ERROR("a = 1979-02-29\n", "t.toml:1:13: error: day 29 is out of range for 1979-02");
    EXPECT_ERROR("a = 12:60:00\n", "t.toml:1:5: error: time 12:60:00 is out of range");
    EXPECT_ERROR("a = 07:32:00Z\n", "t.toml:1:13: error: a local time cannot have an offset");
    EXPECT_ERROR("a = 1979-05-27T07:32\n", "t.toml:1:16: error: invalid time: expected HH:MM:SS");
}

static void table_rules(void **state)
{
    (void)state;
    EXPECT_ERROR("a = 1\na = 2\n", "t.toml:2:1: error: 'a' is already defined as an integer");
    EXPECT_ERROR("[a]\n[a]\n", "t.toml:2:2: error: 'a' is already defined as a table");
    EXPECT_ERROR("[a]\nb.c = 1\n[a.b]\n",
                 "t.toml:3:4: error: 'b' is already defined as a table by dotted keys");
    EXPECT_ERROR("[a.b]\nx = 1\n[a]\nb.y = 2\n",
                 "t.toml:4:1: error: cannot add to table 'b' with a dotted key: it has a [header]");
    EXPECT_ERROR("a = {b = 1}\n[a.c]\n", "t.toml:2:2: error: cannot extend the inline table 'a'");
    EXPECT_ERROR("a = {b = 1}\na.c = 2\n",
                 "t.toml:2:1: error: cannot add keys to the inline table 'a'");
    EXPECT_ERROR("a = [1]\n[[a]]\n",
                 "t.toml:2:3: error: 'a' is already defined as an array, not an array of tables");
    EXPECT_ERROR("[[a]]\n[a]\n", "t.toml:2:2: error: 'a' is already defined as an array");
    EXPECT_ERROR("a = 1\n[a.b]\n", "t.toml:2:2: error: 'a' is already defined as an integer, not a "
                                   "table");
}

static void valid_table_forms(void **state)
{
    (void)state;
    conf_doc *doc = parse("[a.b.c]\nx = 1\n[a]\ny = 2\nb.d = 3\n"
                          "[[f]]\nn = 1\n[f.p]\nq = 1\n[[f]]\nn = 2\n"
                          "[g]\nh.i = 1\n[g.h.j]\nk = 1\n");
    const conf_value *root = conf_doc_root(doc);
    const conf_value *b = get(get(root, "a"), "b");
    assert_int_equal(conf_integer(get(b, "d")), 3);
    assert_int_equal(conf_integer(get(get(b, "c"), "x")), 1);
    const conf_value *f = get(root, "f");
    assert_int_equal(conf_array_size(f), 2);
    assert_int_equal(conf_integer(get(get(conf_array_at(f, 0), "p"), "q")), 1);
    assert_int_equal(conf_integer(get(conf_array_at(f, 1), "n")), 2);
    assert_int_equal(conf_integer(get(get(get(get(root, "g"), "h"), "j"), "k")), 1);
    conf_doc_free(doc);
}

static void integers_are_int64(void **state)
{
    (void)state;
    conf_doc *doc = parse("max = 9223372036854775807\nmin = -9223372036854775808\n"
                          "hex = 0x7FFF_FFFF_FFFF_FFFF\noct = 0o777\nbin = 0b1010\n");
    const conf_value *root = conf_doc_root(doc);
    assert_true(conf_integer(get(root, "max")) == INT64_MAX);
    assert_true(conf_integer(get(root, "min")) == INT64_MIN);
    assert_true(conf_integer(get(root, "hex")) == INT64_MAX);
    assert_int_equal(conf_integer(get(root, "oct")), 511);
    assert_int_equal(conf_integer(get(root, "bin")), 10);
    conf_doc_free(doc);
    EXPECT_ERROR("a = 9223372036854775808\n", "t.toml:1:5: error: integer does not fit in 64 bits");
    EXPECT_ERROR("a = -9223372036854775809\n",
                 "t.toml:1:5: error: integer does not fit in 64 bits");
    EXPECT_ERROR("a = 0x8000000000000000\n", "t.toml:1:5: error: integer does not fit in 64 bits");
}

static void strings_decode(void **state)
{
    (void)state;
    conf_doc *doc = parse("a = \"x\\u00E9\\u0000y\"\nb = '''\nl1\r\nl2'''\n"
                          "c = \"\"\"\\\n   joined \\\n  words\"\"\"\nd = \"\"\"q\"\"\"\"\"\n");
    const conf_value *root = conf_doc_root(doc);
    size_t n;
    const char *s = conf_string(get(root, "a"), &n);
    assert_int_equal(n, 5);
    assert_memory_equal(s, "x\xc3\xa9\0y", 5);
    assert_string_equal(conf_string(get(root, "b"), NULL), "l1\nl2");
    assert_string_equal(conf_string(get(root, "c"), NULL), "joined words");
    assert_string_equal(conf_string(get(root, "d"), NULL), "q\"\"");
    conf_doc_free(doc);
}

static void datetimes_keep_their_kind(void **state)
{
    (void)state;
    conf_doc *doc = parse("a = 1979-05-27T00:32:00.999999999999-07:30\nb = 1979-05-27 07:32:00\n"
                          "c = 2000-02-29\nd = 23:59:60.5\ne = 1979-05-27t07:32:00z\n");
    const conf_value *root = conf_doc_root(doc);
    const char *keys[] = {"a", "b", "c", "d", "e"};
    const char *want[] = {"1979-05-27T00:32:00.999999999-07:30", "1979-05-27T07:32:00",
                          "2000-02-29", "23:59:60.5", "1979-05-27T07:32:00Z"};
    conf_type types[] = {CONF_DATETIME, CONF_DATETIME_LOCAL, CONF_DATE_LOCAL, CONF_TIME_LOCAL,
                         CONF_DATETIME};
    for (int i = 0; i < 5; i++) {
        char buf[64];
        const conf_value *v = get(root, keys[i]);
        assert_int_equal(conf_value_type(v), types[i]);
        conf_datetime_format(v, buf, sizeof buf);
        assert_string_equal(buf, want[i]);
    }
    assert_int_equal(conf_datetime_of(get(root, "a"))->offset_minutes, -450);
    assert_int_equal(conf_datetime_of(get(root, "a"))->nanosecond, 999999999);
    conf_doc_free(doc);
}

/* RFC 3339 (and so TOML) offsets are hours 00-23 and minutes 00-59, either sign; an offset
   out of range is an error at its sign. */
static void utc_offsets_are_bounded(void **state)
{
    (void)state;
    EXPECT_ERROR("a = 1979-05-27T07:32:00+24:00\n",
                 "t.toml:1:24: error: offset +24:00 is out of range");
    EXPECT_ERROR("a = 1979-05-27T07:32:00-24:00\n",
                 "t.toml:1:24: error: offset -24:00 is out of range");
    EXPECT_ERROR("a = 1979-05-27T07:32:00+23:60\n",
                 "t.toml:1:24: error: offset +23:60 is out of range");
    EXPECT_ERROR("x = 1\na = 1979-05-27 07:32:00.5-99:00\n",
                 "t.toml:2:26: error: offset -99:00 is out of range");
    conf_doc *doc = parse("a = 1979-05-27T07:32:00+23:59\nb = 1979-05-27T07:32:00-23:59\n"
                          "c = 1979-05-27T07:32:00-00:00\n");
    const conf_value *root = conf_doc_root(doc);
    assert_int_equal(conf_datetime_of(get(root, "a"))->offset_minutes, 23 * 60 + 59);
    assert_int_equal(conf_datetime_of(get(root, "b"))->offset_minutes, -(23 * 60 + 59));
    assert_int_equal(conf_datetime_of(get(root, "c"))->offset_minutes, 0);
    conf_doc_free(doc);
}

static void floats_ignore_the_locale(void **state)
{
    (void)state;
    const char *locales[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "C.UTF-8"};
    const char *set = NULL;
    for (size_t i = 0; i < 4 && set == NULL; i++)
        set = setlocale(LC_NUMERIC, locales[i]);
    conf_doc *doc = parse("f = 1.5\ng = -2_0.2_5e1\n");
    assert_true(conf_float(get(conf_doc_root(doc), "f")) == 1.5);
    assert_true(conf_float(get(conf_doc_root(doc), "g")) == -202.5);
    conf_doc_free(doc);
    setlocale(LC_NUMERIC, "C");
}

static char *nested(int depth, char open, const char *inner, char close)
{
    size_t n = strlen(inner);
    char *s = malloc((size_t)depth * 2 + n + 8);
    assert_non_null(s);
    memcpy(s, "a = ", 4);
    memset(s + 4, open, (size_t)depth);
    memcpy(s + 4 + depth, inner, n);
    memset(s + 4 + depth + n, close, (size_t)depth);
    s[4 + 2 * depth + n] = '\0';
    return s;
}

static void nesting_is_bounded(void **state)
{
    (void)state;
    char *ok = nested(CONF_MAX_DEPTH - 1, '[', "1", ']');
    conf_doc_free(parse(ok));
    free(ok);
    char *deep = nested(CONF_MAX_DEPTH, '[', "1", ']');
    char want[128];
    snprintf(want, sizeof want, "t.toml:1:%d: error: nesting deeper than %d levels",
             5 + CONF_MAX_DEPTH, CONF_MAX_DEPTH);
    expect_error(deep, strlen(deep), want);
    free(deep);
    char *hostile = nested(1000000, '[', "", ']');
    expect_error(hostile, strlen(hostile), want);
    free(hostile);
}

static void memory_is_bounded(void **state)
{
    (void)state;
    size_t cap = 20000 * 16, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (int i = 0; i < 20000; i++)
        len += (size_t)snprintf(text + len, cap - len, "k%d = [[]]\n", i);
    conf_diags d = {0};
    conf_doc *doc = conf_parse_limited(text, len, "t.toml", 512 << 10, &d);
    assert_null(doc);
    assert_int_equal(d.count, 1);
    assert_non_null(strstr(d.items[0].text, "error: out of memory (the document may use at most "
                                            "524288 bytes)"));
    conf_diags_free(&d);
    doc = conf_parse(text, len, "t.toml", &d);
    assert_non_null(doc);
    assert_int_equal(conf_table_size(conf_doc_root(doc)), 20000);
    assert_non_null(conf_table_get(conf_doc_root(doc), "k19999", 6));
    assert_null(conf_table_get(conf_doc_root(doc), "k20000", 6));
    conf_doc_free(doc);
    free(text);
}

static void large_tables_find_duplicates(void **state)
{
    (void)state;
    size_t cap = 3000 * 16, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (int i = 0; i < 3000; i++)
        len += (size_t)snprintf(text + len, cap - len, "k%d = %d\n", i, i);
    len += (size_t)snprintf(text + len, cap - len, "k1234 = 0\n");
    expect_error(text, len, "t.toml:3001:1: error: 'k1234' is already defined as an integer");
    free(text);
}

static void accessors_tolerate_wrong_types(void **state)
{
    (void)state;
    conf_doc *doc = parse("s = \"x\"\n");
    const conf_value *s = get(conf_doc_root(doc), "s");
    char buf[8] = "junk";
    assert_int_equal(conf_integer(s), 0);
    assert_false(conf_bool(s));
    assert_null(conf_datetime_of(s));
    assert_int_equal(conf_table_size(s), 0);
    assert_int_equal(conf_array_size(s), 0);
    assert_null(conf_array_at(s, 0));
    assert_int_equal(conf_datetime_format(s, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    assert_null(conf_string(conf_doc_root(doc), NULL));
    conf_doc_free(doc);
}

static void oversized_document_is_refused(void **state)
{
    (void)state;
    conf_diags d = {0};
    assert_null(conf_parse_limited("a = 1\n", 6, "t.toml", 4, &d));
    assert_int_equal(d.count, 1);
    assert_string_equal(d.items[0].text, "t.toml: error: document larger than 4 bytes");
    conf_diags_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(positions_of_values_and_keys),
        cmocka_unit_test(columns_count_code_points),
        cmocka_unit_test(invalid_utf8_is_located),
        cmocka_unit_test(syntax_errors_are_precise),
        cmocka_unit_test(table_rules),
        cmocka_unit_test(valid_table_forms),
        cmocka_unit_test(integers_are_int64),
        cmocka_unit_test(strings_decode),
        cmocka_unit_test(datetimes_keep_their_kind),
        cmocka_unit_test(utc_offsets_are_bounded),
        cmocka_unit_test(floats_ignore_the_locale),
        cmocka_unit_test(nesting_is_bounded),
        cmocka_unit_test(memory_is_bounded),
        cmocka_unit_test(large_tables_find_duplicates),
        cmocka_unit_test(accessors_tolerate_wrong_types),
        cmocka_unit_test(oversized_document_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
