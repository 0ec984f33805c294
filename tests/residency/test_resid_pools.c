/* test_resid_pools.c — the pools room of the residency manager alone (shim/resid/pools/ and the
 * rooms below it, with the fake driver): chunks created within the budget and pooled by size,
 * other sizes released for room, host chunks within the host budget, a range mapped and
 * unmapped, the fences a new owner of chunks waits for, and freed ranges kept as spares. No
 * search for room, no move: those are the rooms above. */
#include "fake_driver.h"
#include "shim_resid_pools.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

/* A fresh manager on the fake driver with a budget of budget granules (not started: the pools
   need only the driver, the granularity and the budgets). */
static void fresh(struct resid_ctx *r, uint64_t budget)
{
    resid_ctx_init(r, NULL);
    r->drv = &fake_driver;
    r->gran = FAKE_GRAN;
    r->budget = budget * FAKE_GRAN;
    r->host_budget = 64 * FAKE_GRAN;
    r->can_evict = true;
}

/* Device chunks of n granules for t (one chunk of exactly n when the budget allows). */
static struct resid_chunk *device_chunk(struct resid_ctx *r, uint32_t n)
{
    struct resid_chunk *out[8] = {NULL};
    struct resid_gather t = {out, n, 0, 0};
    if (!resid_pool_create_device(r, &t))
        return NULL;
    assert_int_equal(t.k, 1);
    assert_int_equal(t.g, n);
    return out[0];
}

/* A chunk goes back to its pool and is taken again by its size, not by another; when the budget
   needs room for a size the pool lacks, idle chunks of other sizes go back to the driver. */
static void test_pool_by_size(void **state)
{
    (void)state;
    struct resid_ctx mine, *r = &mine;
    fresh(r, 4);
    uint64_t handles = fake.device_chunks;
    struct resid_chunk *c = device_chunk(r, 3);
    assert_non_null(c);
    assert_int_equal(c->grans, 3);
    assert_int_equal(fake.device_chunks, handles + 1); /* one handle for three granules */
    assert_int_equal(r->dev_bytes, 3 * FAKE_GRAN);
    resid_give_back(r, &c, 1);
    assert_null(c); /* the slot is cleared */
    assert_int_equal(r->nfree_dev, 3);
    assert_null(resid_pool_pop(r, false, 2, false)); /* no chunk of two */
    struct resid_chunk *again = resid_pool_pop(r, false, 3, false);
    assert_non_null(again);
    assert_int_equal(r->nfree_dev, 0);
    resid_give_back(r, &again, 1);
    /* Two more granules do not fit beside the pooled three: the three go back to the driver. */
    struct resid_chunk *two = device_chunk(r, 2);
    assert_non_null(two);
    assert_int_equal(fake.device_chunks, handles + 1);
    assert_int_equal(r->nfree_dev, 0);
    assert_int_equal(r->dev_bytes, 2 * FAKE_GRAN);
    /* Past the budget nothing is made. */
    struct resid_chunk *out[4] = {NULL};
    struct resid_gather t = {out, 3, 0, 0};
    assert_false(resid_pool_create_device(r, &t));
    assert_int_equal(t.k, 0);
    resid_give_back(r, &two, 1);
    assert_int_equal(resid_trim_device(r, UINT64_MAX), 2 * FAKE_GRAN);
    assert_int_equal(fake.device_chunks, handles);
    assert_int_equal(r->dev_bytes, 0);
    fake_ctx_forget(r);
}

/* Host chunks come within the host budget; past it nothing is taken and the search is told. */
static void test_host_chunks_within_the_host_budget(void **state)
{
    (void)state;
    struct resid_ctx mine, *r = &mine;
    fresh(r, 4);
    r->host_budget = 3 * FAKE_GRAN;
    struct resid_chunk *out[4] = {NULL};
    assert_int_equal(resid_take_host(r, out, 2), 0);
    assert_true(out[0]->host);
    assert_int_equal(r->host_bytes, 2 * FAKE_GRAN);
    struct resid_chunk *more[4] = {NULL};
    assert_int_equal(resid_take_host(r, more, 2), -1);
    assert_null(more[0]);
    assert_true(r->oom.host_full);
    /* The one granule it could make stays pooled (counted in the host budget), for later. */
    assert_int_equal(r->host_bytes, 3 * FAKE_GRAN);
    assert_int_equal(r->nfree_host, 1);
    resid_give_back(r, out, 4);
    assert_int_equal(r->nfree_host, 3);
    assert_int_equal(resid_take_host(r, more, 2), 0); /* the pooled two, no new handle */
    assert_int_equal(more[0]->grans, 2);
    assert_int_equal(r->host_bytes, 3 * FAKE_GRAN);
    resid_give_back(r, more, 4);
    fake_ctx_forget(r);
}

/* A range maps its chunks (the bytes behind its address are theirs) and unmaps them, the chunks
   going back to the pool. */
static void test_map_and_unmap_a_range(void **state)
{
    (void)state;
    struct resid_ctx mine, *r = &mine;
    fresh(r, 4);
    CUdeviceptr va = 0;
    assert_int_equal(r->drv->reserve(&va, 2 * FAKE_GRAN, FAKE_GRAN), CUDA_SUCCESS);
    struct resid_chunk *c[2] = {device_chunk(r, 2), NULL};
    assert_int_equal(resid_map(r, va, c, 2), 0);
    uint8_t *b = fake_bytes(va + FAKE_GRAN);
    assert_non_null(b);
    b[0] = 0x5a;
    assert_int_equal(fake_bytes(c[0]->addr + FAKE_GRAN)[0], 0x5a); /* the chunk's own bytes */
    assert_true(resid_unmap_range(r, va, 2 * FAKE_GRAN, c, 2));
    assert_null(fake_bytes(va));
    assert_null(c[0]);
    assert_int_equal(r->nfree_dev, 2);
    resid_trim_device(r, UINT64_MAX);
    fake_ctx_forget(r);
}

/* A chunk given two evictions' fences keeps the later (resid_chunk_fence); chunks taken by a
   new owner (resid_take_fences) make it wait for the latest of their fences, wherever that
   chunk lies among them, and keep no fence themselves. */
static void take_fences_in_order(struct resid_ctx *r, bool latest_first)
{
    struct resid_chunk c[3] = {{0}};
    struct resid_fence *early = resid_fence_new(r, resid_event_get(r));
    struct resid_fence *late = resid_fence_new(r, resid_event_get(r));
    assert_non_null(early);
    assert_non_null(late);
    assert_true(late->seq > early->seq);
    resid_chunk_fence(r, &c[0], latest_first ? late : early);
    resid_chunk_fence(r, &c[2], latest_first ? early : late);
    resid_chunk_fence(r, &c[1], latest_first ? late : early); /* a chunk keeps the later */
    resid_chunk_fence(r, &c[1], latest_first ? early : late);
    assert_ptr_equal(c[1].fence, late);
    struct resid_fence *got =
        resid_take_fences(r, (struct resid_chunk *[]){&c[0], &c[1], &c[2]}, 3);
    assert_ptr_equal(got, late);
    assert_int_equal(late->refs, 2); /* ours and the one returned; the chunks' are dropped */
    assert_int_equal(early->refs, 1);
    for (int i = 0; i < 3; i++)
        assert_null(c[i].fence);
    resid_fence_drop(r, got);
    resid_fence_drop(r, late);
    resid_fence_drop(r, early);
}

static void test_taken_chunks_wait_for_their_latest_fence(void **state)
{
    (void)state;
    struct resid_ctx mine;
    fresh(&mine, 4);
    take_fences_in_order(&mine, false);
    take_fences_in_order(&mine, true);
    fake_ctx_forget(&mine);
}

/* A unit freed whole on the device is kept mapped as a spare, and the next unit of its chunk
   count takes its range without a driver call. */
static void test_spare_range_reused_without_vmm_calls(void **state)
{
    (void)state;
    struct resid_ctx mine, *r = &mine;
    fresh(r, 8);
    struct resid_unit *u = resid_unit_reserve(r, 2 * FAKE_GRAN);
    assert_non_null(u);
    u->backing[0] = device_chunk(r, 2);
    assert_int_equal(resid_map(r, u->va, u->backing, u->n), 0);
    assert_int_equal(resid_fsm(r, u, SHIM_EV_CREATE, NULL), 0);
    CUdeviceptr va = u->va;
    assert_true(resid_spare_keep(r, u));
    assert_null(u->backing);
    assert_int_equal(r->nspares, 1);
    assert_int_equal(r->nspare_chunks, 2);
    resid_unit_free(r, u);
    uint64_t maps = fake.maps, reserves = fake.reserves;
    struct resid_unit *v = resid_unit_new(r, 2 * FAKE_GRAN - 1), *w = resid_unit_new(r, FAKE_GRAN);
    bool reused = true;
    assert_false(resid_spare_take(r, w, NULL, false, &reused)); /* another chunk count */
    assert_false(reused);
    assert_true(resid_spare_take(r, v, NULL, false, &reused));
    assert_int_equal(v->va, va);
    assert_non_null(v->backing[0]);
    assert_int_equal(fake.maps, maps); /* no driver call */
    assert_int_equal(fake.reserves, reserves);
    assert_int_equal(r->nspares, 0);
    assert_int_equal(resid_spare_drop(r, 1), 0); /* none left */
    assert_true(resid_unmap_range(r, v->va, v->mapped, v->backing, v->n));
    resid_unit_free(r, v);
    resid_unit_free(r, w);
    resid_trim_device(r, UINT64_MAX);
    fake_ctx_forget(r);
}

int main(void)
{
    fake_reset();
    shim.record = 0;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_by_size),
        cmocka_unit_test(test_host_chunks_within_the_host_budget),
        cmocka_unit_test(test_map_and_unmap_a_range),
        cmocka_unit_test(test_taken_chunks_wait_for_their_latest_fence),
        cmocka_unit_test(test_spare_range_reused_without_vmm_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
