/* test_sparse_roundtrip.c — an imported DLRM model with read bytes per touch (OP@BYTES: the
 * embedding tables' lookups, tools/import/import_et_lookup.c) survives the model format: import
 * dlrm-rank0 (ET + Kineto), write it, parse it back: the same operations, allocations, touches
 * and read bytes, and the same text written again. Skipped without the shared traces. */
#include "import.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static void trace_path(char *out, size_t cap, const char *file)
{
    const char *shared = getenv("SHARED");
    snprintf(out, cap, "%s/traces/%s", shared ? shared : "../shared", file);
}

static void assert_same_model(const plan_model *a, const plan_model *b)
{
    assert_int_equal(a->nops, b->nops);
    for (size_t i = 0; i < a->nops; i++)
        assert_true(a->ops[i].dur_us == b->ops[i].dur_us && a->ops[i].stream == b->ops[i].stream);
    assert_int_equal(a->nallocs, b->nallocs);
    assert_int_equal(a->ntouches, b->ntouches);
    for (size_t i = 0; i < a->nallocs; i++) {
        const plan_alloc *x = &a->allocs[i], *y = &b->allocs[i];
        assert_int_equal(x->bytes, y->bytes);
        assert_int_equal(x->birth, y->birth);
        assert_int_equal(x->death, y->death);
        assert_int_equal(x->ntouch, y->ntouch);
        for (uint32_t k = 0; k < x->ntouch; k++) {
            assert_int_equal(a->touches[x->touch_first + k], b->touches[y->touch_first + k]);
            assert_int_equal(plan_touch_read(a, x, x->touch_first + k),
                             plan_touch_read(b, y, y->touch_first + k));
        }
    }
}

static void test_dlrm_round_trip(void **state)
{
    (void)state;
    char et[512], kineto[512], msg[512];
    trace_path(et, sizeof et, "dlrm-rank0.et.json.gz");
    trace_path(kineto, sizeof kineto, "dlrm-rank0.kineto.json.gz");
    if (access(et, R_OK) || access(kineto, R_OK))
        skip();
    import_opts o = {.step = -1};
    plan_model m, back;
    plan_model_init(&m);
    plan_model_init(&back);
    assert_int_equal(import_et(et, kineto, &o, &m, msg, sizeof msg), 0);
    /* The two tables: 768 indices x 16 floats x 4 bytes read at the lookup and the update. */
    size_t sparse = 0;
    for (size_t i = 0; i < m.nallocs; i++)
        if (m.allocs[i].bytes == 2562598592u && plan_alloc_sparse(&m, i))
            sparse++,
                assert_int_equal(plan_touch_read(&m, &m.allocs[i], m.allocs[i].touch_first), 49152);
    assert_int_equal(sparse, 2);
    char *text = NULL, *again = NULL;
    size_t len = 0, len2 = 0;
    assert_int_equal(plan_model_write(&m, &text, &len), PLAN_OK);
    assert_int_equal(plan_model_parse(text, len, "dlrm.model", &back, msg, sizeof msg), PLAN_OK);
    assert_same_model(&m, &back);
    assert_int_equal(plan_model_write(&back, &again, &len2), PLAN_OK);
    assert_int_equal(len, len2);
    assert_memory_equal(text, again, len);
    free(text);
    free(again);
    plan_model_free(&m);
    plan_model_free(&back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dlrm_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
