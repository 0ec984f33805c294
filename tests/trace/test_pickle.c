/* test_pickle.c — the pickle writer of shim-report memviz (tools/report/report_pickle.h), byte by
 * byte: integers at every boundary of BININT and LONG1 (the bytes Python's pickle.dumps(v,
 * protocol=2) writes for LONG1), floats, None and booleans, strings with invalid UTF-8, tuples,
 * nested containers, elements in batches of 1000, and the errors (a container left open, one too
 * many ends, a key in a list). */
#include "report_pickle.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a writer wrote into a memory stream. */
typedef struct buf {
    char *data;
    size_t len;
    FILE *f;
    pk p;
} buf;

static void open_buf(buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->f = open_memstream(&b->data, &b->len);
    assert_non_null(b->f);
    pk_start(&b->p, b->f);
}

/* Finishes the pickle; its pk_finish status. */
static int close_buf(buf *b)
{
    int rc = pk_finish(&b->p);
    assert_int_equal(fclose(b->f), 0);
    return rc;
}

/* The pickle of one value written by fn must be PROTO 2, the bytes want (n of them), STOP. */
static void expect(void (*fn)(pk *), const char *want, size_t n)
{
    buf b;
    open_buf(&b);
    fn(&b.p);
    assert_int_equal(close_buf(&b), 0);
    assert_int_equal(b.len, n + 3);
    assert_memory_equal(b.data, "\x80\x02", 2);
    assert_memory_equal(b.data + 2, want, n);
    assert_int_equal(b.data[b.len - 1], '.');
    free(b.data);
}

#define EXPECT(fn, bytes) expect(fn, bytes, sizeof bytes - 1)

static void int_0(pk *p)
{
    pk_int(p, 0);
}
static void int_m1(pk *p)
{
    pk_int(p, -1);
}
static void int_max32(pk *p)
{
    pk_int(p, 2147483647);
}
static void int_min32(pk *p)
{
    pk_int(p, -2147483648LL);
}
static void int_2p31(pk *p)
{
    pk_int(p, 2147483648LL);
}
static void int_below32(pk *p)
{
    pk_int(p, -2147483649LL);
}
static void int_addr(pk *p)
{
    pk_uint(p, 0x7f1000000000ull);
}
static void int_max64(pk *p)
{
    pk_int(p, INT64_MAX);
}
static void int_min64(pk *p)
{
    pk_int(p, INT64_MIN);
}
static void uint_2p63(pk *p)
{
    pk_uint(p, 1ull << 63);
}
static void uint_max(pk *p)
{
    pk_uint(p, UINT64_MAX);
}

static void integers(void **state)
{
    (void)state;
    EXPECT(int_0, "J\x00\x00\x00\x00");
    EXPECT(int_m1, "J\xff\xff\xff\xff");
    EXPECT(int_max32, "J\xff\xff\xff\x7f");
    EXPECT(int_min32, "J\x00\x00\x00\x80");
    EXPECT(int_2p31, "\x8a\x05\x00\x00\x00\x80\x00");
    EXPECT(int_below32, "\x8a\x05\xff\xff\xff\x7f\xff");
    EXPECT(int_addr, "\x8a\x06\x00\x00\x00\x00\x10\x7f");
    EXPECT(int_max64, "\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f");
    EXPECT(int_min64, "\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80");
    EXPECT(uint_2p63, "\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00");
    EXPECT(uint_max, "\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x00");
}

static void float_15(pk *p)
{
    pk_float(p, 1.5);
}
static void none(pk *p)
{
    pk_none(p);
}
static void yes(pk *p)
{
    pk_bool(p, 1);
}
static void no(pk *p)
{
    pk_bool(p, 0);
}
static void pair(pk *p)
{
    pk_int(p, 0);
    pk_int(p, 7);
    pk_tuple2(p);
}

static void scalars(void **state)
{
    (void)state;
    EXPECT(float_15, "G\x3f\xf8\x00\x00\x00\x00\x00\x00"); /* big-endian */
    EXPECT(none, "N");
    EXPECT(yes, "\x88");
    EXPECT(no, "\x89");
    EXPECT(pair, "J\x00\x00\x00\x00J\x07\x00\x00\x00\x86");
}

static void str_plain(pk *p)
{
    pk_str(p, "h\xc3\xa9");
}
static void str_empty(pk *p)
{
    pk_str(p, "");
}
/* a lone continuation byte, a cut sequence, an overlong '/', a surrogate: each bad byte one
   U+FFFD, what follows kept */
static void str_bad(pk *p)
{
    pk_str(p, "a\x80"
              "b\xe2\x82"
              "c\xc0\xaf\xed\xa0\x80");
}

static void strings(void **state)
{
    (void)state;
    EXPECT(str_plain, "X\x03\x00\x00\x00h\xc3\xa9");
    EXPECT(str_empty, "X\x00\x00\x00\x00");
    EXPECT(str_bad, "X\x1b\x00\x00\x00"
                    "a\xef\xbf\xbd"
                    "b\xef\xbf\xbd\xef\xbf\xbd"
                    "c\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
}

static void empty_list(pk *p)
{
    pk_list(p);
    pk_end(p);
}
static void dict_of_list(pk *p)
{
    pk_dict(p);
    pk_key(p, "k");
    pk_list(p);
    pk_item(p);
    pk_int(p, 1);
    pk_item(p);
    pk_none(p);
    pk_end(p);
    pk_key_bool(p, "b", 1);
    pk_end(p);
}

static void containers(void **state)
{
    (void)state;
    EXPECT(empty_list, "]"); /* no MARK for an empty container */
    EXPECT(dict_of_list, "}(X\x01\x00\x00\x00k](J\x01\x00\x00\x00NeX\x01\x00\x00\x00"
                         "b\x88u");
}

/* 2500 elements: MARK, 1000, APPENDS, MARK, 1000, APPENDS, MARK, 500, APPENDS. */
static void batches(void **state)
{
    (void)state;
    buf b;
    open_buf(&b);
    pk_list(&b.p);
    for (int i = 0; i < 2500; i++) {
        pk_item(&b.p);
        pk_none(&b.p);
    }
    pk_end(&b.p);
    assert_int_equal(close_buf(&b), 0);
    assert_int_equal(b.len, 2 + 1 + 3 * 2 + 2500 + 1);
    size_t at = 3;
    for (int batch = 0; batch < 3; batch++) {
        int n = batch < 2 ? 1000 : 500;
        assert_int_equal(b.data[at], '(');
        for (int i = 1; i <= n; i++)
            assert_int_equal(b.data[at + i], 'N');
        assert_int_equal(b.data[at + n + 1], 'e');
        at += n + 2;
    }
    free(b.data);
}

static void errors(void **state)
{
    (void)state;
    buf b;
    open_buf(&b); /* a container left open */
    pk_dict(&b.p);
    assert_int_equal(close_buf(&b), -1);
    free(b.data);
    open_buf(&b); /* an end without a container */
    pk_end(&b.p);
    assert_int_equal(close_buf(&b), -1);
    free(b.data);
    open_buf(&b); /* a key in a list */
    pk_list(&b.p);
    pk_key(&b.p, "k");
    pk_int(&b.p, 1);
    pk_end(&b.p);
    assert_int_equal(close_buf(&b), -1);
    free(b.data);
    open_buf(&b); /* nesting deeper than PK_MAX_DEPTH */
    for (int i = 0; i <= PK_MAX_DEPTH; i++) {
        if (i)
            pk_item(&b.p);
        pk_list(&b.p);
    }
    for (int i = 0; i < PK_MAX_DEPTH; i++)
        pk_end(&b.p);
    assert_int_equal(close_buf(&b), -1);
    free(b.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(integers),   cmocka_unit_test(scalars), cmocka_unit_test(strings),
        cmocka_unit_test(containers), cmocka_unit_test(batches), cmocka_unit_test(errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
