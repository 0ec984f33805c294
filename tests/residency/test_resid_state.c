/* test_resid_state.c — the state room of the residency manager alone (shim/resid/state/ and the
 * driver seam below it, with the fake driver): the tables by id, the state machine's table, the
 * pooled events and fences, the set of ids kept on the host, and what the calling thread's
 * operation holds. Every manager here is made fresh and never started. */
#include "fake_driver.h"
#include "shim_resid_state.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

/* A fresh manager on the fake driver, not started (no device facts, no streams). */
static void fresh(struct resid_ctx *r)
{
    resid_ctx_init(r, NULL);
    r->drv = &fake_driver;
    r->gran = FAKE_GRAN;
}

/* For resid_each: counts u and takes it out of the table. */
static void erase_each(struct resid_ctx *r, struct resid_unit *u, void *arg)
{
    ++*(size_t *)arg;
    resid_erase(r, u);
}

/* A manager of its own, never started: the tables by id grow past their first size and keep
   every entry findable; erasing leaves the others. */
static void test_tables_on_a_fresh_manager(void **state)
{
    (void)state;
    struct resid_ctx mine;
    resid_ctx_init(&mine, NULL);
    mine.gran = FAKE_GRAN;
    enum { N = 3000 }; /* past the first 1024 slots twice */
    static struct resid_unit units[N];
    static struct resid_member members[N];
    for (uint64_t i = 0; i < N; i++) {
        units[i].id = SHIM_MANAGED_ID_TAG | (i + 1);
        members[i].id = SHIM_MANAGED_ID_TAG | (N + i + 1);
        assert_int_equal(resid_insert(&mine, &units[i]), 0);
        assert_int_equal(resid_member_insert(&mine, &members[i]), 0);
    }
    assert_int_equal(resid_nunits(&mine), N);
    assert_int_equal(base_map_count(&mine.members), N);
    for (uint64_t i = 0; i < N; i++) {
        assert_ptr_equal(resid_find(&mine, units[i].id), &units[i]);
        assert_ptr_equal(resid_member_find(&mine, members[i].id), &members[i]);
        assert_null(resid_find(&mine, members[i].id)); /* the tables are apart */
    }
    for (uint64_t i = 0; i < N; i += 2) {
        resid_erase(&mine, &units[i]);
        resid_member_erase(&mine, &members[i]);
    }
    assert_int_equal(resid_nunits(&mine), N / 2);
    assert_int_equal(base_map_count(&mine.members), N / 2);
    for (uint64_t i = 0; i < N; i++) {
        assert_ptr_equal(resid_find(&mine, units[i].id), i % 2 ? &units[i] : NULL);
        assert_ptr_equal(resid_member_find(&mine, members[i].id), i % 2 ? &members[i] : NULL);
    }
    /* A walk that takes every unit out as it goes still meets each one once. */
    size_t met = 0;
    resid_each(&mine, erase_each, &met);
    assert_int_equal(met, N / 2);
    assert_int_equal(resid_nunits(&mine), 0);
    base_map_free(&mine.units);
    base_map_free(&mine.members);
    assert_null(resid_primary()); /* nothing started */
}

static void test_fsm_table(void **state)
{
    (void)state;
    /* The transitions shim_resid_state.h draws (and create_host, made on the host when the budget
       is held by work in progress), written out independently of the table. */
    static const struct {
        enum shim_resid_state from;
        enum shim_resid_event ev;
        int to;
    } want[] = {
        {SHIM_RS_NONE, SHIM_EV_CREATE, SHIM_RS_DEVICE},
        {SHIM_RS_DEVICE, SHIM_EV_EVICT, SHIM_RS_EVICTING},
        {SHIM_RS_EVICTING, SHIM_EV_COPY_DONE, SHIM_RS_HOST},
        {SHIM_RS_EVICTING, SHIM_EV_CANCEL, SHIM_RS_DEVICE},
        {SHIM_RS_EVICTING, SHIM_EV_ERROR, SHIM_RS_DEVICE},
        {SHIM_RS_HOST, SHIM_EV_RESTORE, SHIM_RS_RESTORING},
        {SHIM_RS_RESTORING, SHIM_EV_COPY_DONE, SHIM_RS_DEVICE},
        {SHIM_RS_RESTORING, SHIM_EV_ERROR, SHIM_RS_HOST},
        {SHIM_RS_RESTORING, SHIM_EV_ORDERED, SHIM_RS_DEVICE},
        {SHIM_RS_DEVICE, SHIM_EV_FREE, SHIM_RS_NONE},
        {SHIM_RS_HOST, SHIM_EV_FREE, SHIM_RS_NONE},
        {SHIM_RS_NONE, SHIM_EV_CREATE_HOST, SHIM_RS_HOST},
    };
    int allowed = 0;
    for (int s = SHIM_RS_NONE; s <= SHIM_RS_RESTORING; s++) {
        for (int e = SHIM_EV_EVICT; e <= SHIM_EV_CREATE_HOST; e++) {
            int expect = -1;
            for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
                if (want[i].from == (enum shim_resid_state)s &&
                    want[i].ev == (enum shim_resid_event)e)
                    expect = want[i].to;
            allowed += expect >= 0;
            assert_int_equal(resid_fsm_next((enum shim_resid_state)s, (enum shim_resid_event)e),
                             expect);
        }
    }
    assert_int_equal(allowed, 12);
    /* A unit moving may not be freed, and a refused event changes nothing. */
    struct resid_ctx mine, *r = &mine;
    resid_ctx_init(r, NULL);
    struct resid_unit u = {.id = 7, .state = SHIM_RS_EVICTING};
    uint64_t before = r->transitions[SHIM_RS_EVICTING][SHIM_RS_NONE];
    assert_int_equal(resid_fsm(r, &u, SHIM_EV_FREE, NULL), -1);
    assert_int_equal(u.state, SHIM_RS_EVICTING);
    assert_int_equal(r->transitions[SHIM_RS_EVICTING][SHIM_RS_NONE], before);
    assert_int_equal(resid_fsm(r, &u, SHIM_EV_CANCEL, NULL), 0);
    assert_int_equal(u.state, SHIM_RS_DEVICE);
    assert_int_equal(r->transitions[SHIM_RS_EVICTING][SHIM_RS_DEVICE], 1);
}

/* Events come from the pool and go back to it; a fence holds its event until its last reference
   goes, and fences are numbered in the order they were made. */
static void test_fences_share_their_event(void **state)
{
    (void)state;
    struct resid_ctx mine, *r = &mine;
    fresh(r);
    CUevent e = resid_event_get(r);
    assert_non_null(e);
    struct resid_fence *f = resid_fence_new(r, e), *g = resid_fence_new(r, resid_event_get(r));
    assert_non_null(f);
    assert_non_null(g);
    assert_true(g->seq > f->seq);
    assert_ptr_equal(resid_fence_ref(f), f);
    assert_int_equal(f->refs, 2);
    resid_fence_drop(r, f);
    assert_int_equal(r->nevents, 0); /* still held */
    resid_fence_drop(r, f);
    assert_int_equal(r->nevents, 1);         /* its event went back */
    assert_ptr_equal(resid_event_get(r), e); /* and is handed out again */
    resid_event_put(r, e);
    resid_fence_drop(r, g);
    assert_int_equal(r->nevents, 2);
    resid_fence_ref(NULL); /* NULL is fine both ways */
    resid_fence_drop(r, NULL);
    /* A chunk keeps the later of two fences, whichever comes first. */
    struct resid_chunk c = {0};
    struct resid_fence *early = resid_fence_new(r, resid_event_get(r));
    struct resid_fence *late = resid_fence_new(r, resid_event_get(r));
    resid_chunk_fence(r, &c, late);
    resid_chunk_fence(r, &c, early);
    assert_ptr_equal(c.fence, late);
    assert_int_equal(early->refs, 1);
    resid_fence_drop(r, c.fence);
    resid_fence_drop(r, late);
    resid_fence_drop(r, early);
    fake_ctx_forget(r);
}

/* The set of ids kept on the host answers without a lock, forgets what it is told to, and
   never answers for id 0. */
static void test_placed_ids(void **state)
{
    (void)state;
    uint64_t a = SHIM_MANAGED_ID_TAG | 41, b = SHIM_MANAGED_ID_TAG | 42;
    assert_false(resid_placed_has(a));
    resid_placed_note(a);
    resid_placed_note(b);
    assert_true(resid_placed_has(a));
    assert_true(resid_placed_has(b));
    assert_false(resid_placed_has(0));
    resid_placed_forget(a);
    assert_false(resid_placed_has(a));
    assert_true(resid_placed_has(b));
    resid_placed_forget(a); /* absent: no-op */
    resid_placed_forget(b);
    assert_false(resid_placed_has(b));
}

/* A unit's record forgets its plan binding and its place among the ids kept on the host when it
   is freed. */
static void test_unit_free_forgets_it(void **state)
{
    (void)state;
    struct resid_ctx mine, *r = &mine;
    fresh(r);
    struct resid_unit *u = resid_unit_new(r, 3 * FAKE_GRAN - 1);
    assert_non_null(u);
    assert_int_equal(u->n, 3);
    assert_int_equal(u->mapped, 3 * FAKE_GRAN);
    assert_int_equal(u->plan_alloc, -1);
    u->id = SHIM_MANAGED_ID_TAG | 77;
    u->stays_on_host = true;
    resid_placed_note(u->id);
    assert_true(resid_placed_has(u->id));
    resid_unit_free(r, u);
    assert_false(resid_placed_has(SHIM_MANAGED_ID_TAG | 77));
    fake_ctx_forget(r);
}

/* The calling thread's operation: the pins it holds on a unit are counted from its handles, and
   only while it is in progress. */
static void test_operation_pins(void **state)
{
    (void)state;
    static struct resid_unit u, v;
    uint64_t ids[4] = {(uint64_t)(uintptr_t)&u | RESID_HANDLE_PINNED,
                       (uint64_t)(uintptr_t)&u | RESID_HANDLE_PINNED | RESID_HANDLE_HOST_READ,
                       (uint64_t)(uintptr_t)&v, /* not pinned: an id the operation left alone */
                       42};
    assert_ptr_equal(resid_unit_of_handle(ids[1]), &u);
    assert_false(resid_in_operation());
    resid_op_set(ids, 4);
    assert_true(resid_in_operation());
    assert_int_equal(resid_pinned_here(&u), 2);
    assert_int_equal(resid_pinned_here(&v), 0);
    resid_op_set(NULL, 0);
    assert_false(resid_in_operation());
    assert_int_equal(resid_pinned_here(&u), 0);
}

int main(void)
{
    fake_reset();
    shim.record = 0;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables_on_a_fresh_manager), cmocka_unit_test(test_fsm_table),
        cmocka_unit_test(test_fences_share_their_event),  cmocka_unit_test(test_placed_ids),
        cmocka_unit_test(test_unit_free_forgets_it),      cmocka_unit_test(test_operation_pins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
