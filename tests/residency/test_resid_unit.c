/* test_resid_unit.c — the residency manager's state machine, policy seam, slabs and failure
 * handling, against a fake driver seam (fake_driver.c): no simulator, no threads, every
 * outcome exact. The entry points find device 0's manager (the test has no real driver), so
 * the tests that go through them share it and check differences; a test of internals alone
 * makes a manager of its own (resid_ctx_init). */
#include "fake_driver.h"
#include "shim_resid_front.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#define MiB    ((uint64_t)1 << 20)
#define STREAM ((CUstream)(uintptr_t)0x5000)

/* The manager under test: device 0's, which the entry points find (the test has no real driver,
   so its current device is 0); made afresh by main before it starts on the fake driver. */
static struct resid_ctx *r;

static uint64_t id_of(CUdeviceptr p)
{
    return shim_registry_find(p);
}

/* Launch indices advance as a program's launches would, so recency orders victims. */
static void tick(void)
{
    atomic_fetch_add(&shim.launch_seq, 1);
}

static CUdeviceptr alloc_on(uint64_t bytes, CUstream stream, bool async)
{
    tick();
    CUdeviceptr p = 0;
    CUresult rc = CUDA_ERROR_UNKNOWN;
    assert_int_equal(shim_resid_alloc(&p, bytes, stream, false, async, &rc), SHIM_RESID_DONE);
    assert_int_equal(rc, CUDA_SUCCESS);
    return p;
}

static CUdeviceptr alloc(uint64_t bytes)
{
    return alloc_on(bytes, STREAM, false);
}

static void release(CUdeviceptr p, bool async)
{
    struct shim_alloc a;
    assert_true(shim_registry_remove(p, &a));
    assert_int_equal(shim_resid_free(a.id, STREAM, false, async), CUDA_SUCCESS);
}

/* What a kernel on the device would do: touch the unit, then read or write through it. */
static void touch(CUdeviceptr p)
{
    uint64_t ids[1] = {id_of(p)};
    tick();
    CUresult refuse = CUDA_SUCCESS;
    assert_true(shim_resid_enter(ids, 1, STREAM, false, true, &refuse));
    assert_int_equal(refuse, CUDA_SUCCESS);
    assert_int_not_equal(ids[0], id_of(p)); /* a handle while pinned */
    shim_resid_leave(ids, 1);
    assert_int_equal(ids[0], id_of(p));
}

static void fill(CUdeviceptr p, uint64_t bytes, uint8_t seed)
{
    for (uint64_t off = 0; off < bytes; off += 4096)
        *fake_bytes(p + off) = (uint8_t)(seed + off / 4096);
}

static bool holds(CUdeviceptr p, uint64_t bytes, uint8_t seed)
{
    for (uint64_t off = 0; off < bytes; off += 4096) {
        uint8_t *b = fake_bytes(p + off);
        if (!b || *b != (uint8_t)(seed + off / 4096))
            return false;
    }
    return true;
}

static struct resid_unit *unit_of(CUdeviceptr p)
{
    pthread_mutex_lock(&r->lock);
    struct resid_unit *u = resid_find(r, id_of(p));
    pthread_mutex_unlock(&r->lock);
    return u;
}

/* Starts the eviction of the unit holding p (its slab for a small allocation), as budget
   pressure would. */
static void evict_by_hand(CUdeviceptr p)
{
    struct resid_cause why = {SHIM_REASON_BUDGET, NULL, 1, UINT64_MAX};
    pthread_mutex_lock(&r->lock);
    struct resid_unit *u = resid_find(r, id_of(p));
    struct resid_member *m = u ? NULL : resid_member_find(r, id_of(p));
    assert_int_equal(resid_evict(r, u ? u : m->unit, &why), 0);
    pthread_mutex_unlock(&r->lock);
}

static void budget_chunks(uint64_t n)
{
    r->budget = n * FAKE_GRAN;
    r->slack = 0;
}

/* Lets every move in flight finish (events complete at once unless held). */
static void settle(void)
{
    pthread_mutex_lock(&r->lock);
    while (r->queue)
        resid_move_poll(r, r->queue, true);
    pthread_mutex_unlock(&r->lock);
}

static int setup(void **state)
{
    (void)state;
    fake_fail(NULL, 0, false, CUDA_SUCCESS);
    fake_hold_events(false);
    shim.min_managed_bytes = 4096;
    budget_chunks(64);
    pthread_mutex_lock(&r->lock); /* pooled chunks of earlier tests do not count */
    resid_trim_device(r, UINT64_MAX);
    pthread_mutex_unlock(&r->lock);
    return 0;
}

/* A new allocation of bytes filled from seed, evicted by hand and settled on the host. */
static CUdeviceptr alloc_on_host(uint64_t bytes, uint8_t seed)
{
    CUdeviceptr a = alloc(bytes);
    fill(a, bytes, seed);
    evict_by_hand(a);
    settle();
    assert_true(fake_on_host(a));
    return a;
}

/* ---- moves ---- */

static void test_evict_and_restore_keep_data(void **state)
{
    (void)state;
    budget_chunks(4);
    uint64_t ev = r->transitions[SHIM_RS_EVICTING][SHIM_RS_HOST];
    uint64_t re = r->transitions[SHIM_RS_RESTORING][SHIM_RS_DEVICE];
    CUdeviceptr a = alloc(3 * MiB);
    fill(a, 3 * MiB, 1);
    touch(a);
    CUdeviceptr b = alloc(3 * MiB), c = alloc(3 * MiB); /* a is the least recently used */
    settle();
    assert_int_equal(unit_of(a)->state, SHIM_RS_HOST);
    assert_true(fake_on_host(a));
    assert_true(holds(a, 3 * MiB, 1)); /* read through the host mapping */
    assert_int_equal(r->transitions[SHIM_RS_EVICTING][SHIM_RS_HOST], ev + 1);
    assert_true(r->dev_bytes <= r->budget);
    touch(a); /* back to the device, evicting b */
    settle();
    assert_int_equal(unit_of(a)->state, SHIM_RS_DEVICE);
    assert_false(fake_on_host(a));
    assert_true(holds(a, 3 * MiB, 1));
    assert_int_equal(r->transitions[SHIM_RS_RESTORING][SHIM_RS_DEVICE], re + 1);
    assert_int_equal(unit_of(b)->state, SHIM_RS_HOST);
    assert_true(r->dev_bytes <= r->budget);
    release(a, false);
    release(b, false);
    release(c, false);
}

/* A pattern in every byte of [p, p + bytes), different byte to byte and seed to seed (the
   fake's chunks are whole pages, so each page's bytes lie together). */
static uint8_t byte_at(uint64_t off, uint8_t seed)
{
    return (uint8_t)(seed + off * 7 + off / 4096);
}

static void fill_every_byte(CUdeviceptr p, uint64_t bytes, uint8_t seed)
{
    for (uint64_t page = 0; page < bytes; page += 4096) {
        uint8_t *b = fake_bytes(p + page);
        assert_non_null(b);
        for (uint64_t off = page; off < bytes && off < page + 4096; off++)
            b[off - page] = byte_at(off, seed);
    }
}

/* The offset of the first byte of [p, p + bytes) that does not hold the pattern, or bytes. */
static uint64_t first_wrong_byte(CUdeviceptr p, uint64_t bytes, uint8_t seed)
{
    for (uint64_t page = 0; page < bytes; page += 4096) {
        uint8_t *b = fake_bytes(p + page);
        for (uint64_t off = page; off < bytes && off < page + 4096; off++)
            if (!b || b[off - page] != byte_at(off, seed))
                return off;
    }
    return bytes;
}

/* Evicted to the host and restored, a unit keeps every byte, the first and the last included,
   for sizes that end a chunk, end inside one, and span one to three chunks. */
static void test_moves_keep_every_byte(void **state)
{
    (void)state;
    const uint64_t sizes[] = {2 * MiB, 3 * MiB + 1, 5 * MiB - 4097, 6 * MiB};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        uint64_t n = sizes[i];
        uint8_t seed = (uint8_t)(11 * i + 5);
        CUdeviceptr p = alloc(n);
        assert_int_equal(unit_of(p)->size, n);
        fill_every_byte(p, n, seed);
        evict_by_hand(p);
        settle();
        assert_true(fake_on_host(p));
        assert_int_equal(first_wrong_byte(p, n, seed), n); /* copied out whole */
        touch(p);
        settle();
        assert_false(fake_on_host(p));
        assert_int_equal(first_wrong_byte(p, n, seed), n); /* copied back whole */
        release(p, false);
    }
}

/* A move's copy waits, on its own stream, for the work of the streams that touched the unit
   (resid_fence): with events held not done, the eviction's stream waits on a pending one. */
static void test_move_waits_for_the_streams_that_touched(void **state)
{
    (void)state;
    CUdeviceptr p = alloc(2 * MiB);
    touch(p);
    fake_hold_events(true);
    uint64_t waits = fake.waits_on_pending;
    evict_by_hand(p);
    assert_true(fake.waits_on_pending > waits);
    fake_hold_events(false);
    settle();
    assert_true(fake_on_host(p));
    release(p, false);
}

/* A restore whose host mapping no queued work uses is remapped at once (ORDERED): the touch
   does not wait on the host, its stream waits for the copy, and the host chunks the copy reads
   stay out of the pool until it ends. A unit touched through its host mapping since it was
   evicted is remapped only once its copy is known done. */
static void test_restore_is_ordered_on_the_device(void **state)
{
    (void)state;
    budget_chunks(4);
    CUdeviceptr a = alloc_on_host(3 * MiB, 7);
    uint64_t ordered = r->transitions[SHIM_RS_RESTORING][SHIM_RS_DEVICE];
    uint64_t syncs = fake.event_syncs, waits = fake.waits_on_pending;
    fake_hold_events(true);
    touch(a);
    struct resid_unit *u = unit_of(a);
    assert_int_equal(u->state, SHIM_RS_DEVICE); /* remapped already... */
    assert_non_null(u->move);                   /* ...with its copy in flight */
    assert_false(fake_on_host(a));
    assert_int_equal(fake.event_syncs, syncs);          /* the host did not wait */
    assert_int_equal(fake.waits_on_pending, waits + 1); /* the stream did */
    assert_int_equal(r->transitions[SHIM_RS_RESTORING][SHIM_RS_DEVICE], ordered + 1);
    uint64_t host_free = r->nfree_host;
    touch(a); /* a second user waits too, while the copy is not known done */
    assert_int_equal(fake.waits_on_pending, waits + 2);
    assert_int_equal(r->nfree_host, host_free); /* the source is held */
    fake_hold_events(false);
    settle();
    assert_null(u->move);
    assert_int_equal(r->nfree_host, host_free + 2); /* given back after the copy */
    assert_true(holds(a, 3 * MiB, 7));

    /* Touched on the host (zero-copy) while evicted: that work may still read the host
       mapping, so the range changes only once the copy is known done. */
    evict_by_hand(a);
    settle();
    pthread_mutex_lock(&r->lock);
    u->streams[u->nstreams++] = STREAM; /* what a launch reading it on the host notes */
    struct resid_cause why = {SHIM_REASON_DEMAND, NULL, 0, UINT64_MAX};
    assert_int_equal(resid_restore(r, u, &why), 0);
    assert_int_equal(u->state, SHIM_RS_RESTORING);
    pthread_mutex_unlock(&r->lock);
    settle();
    assert_int_equal(u->state, SHIM_RS_DEVICE);
    assert_true(holds(a, 3 * MiB, 7));
    release(a, false);
}

/* Picks the unit with the highest address: not what least recently used would pick. */
static uint64_t by_address(const struct resid_unit *u, uint64_t now, uint64_t *next)
{
    (void)now;
    *next = UINT64_MAX;
    return u->va;
}
static void no_touch(struct resid_unit *u, uint64_t now)
{
    (void)u, (void)now;
}

static void test_policy_seam_chooses_victim(void **state)
{
    (void)state;
    budget_chunks(4);
    CUdeviceptr a = alloc(3 * MiB), b = alloc(3 * MiB);
    CUdeviceptr newer = a > b ? a : b, older = a > b ? b : a;
    touch(newer); /* least recently used would now evict `older` */
    static const struct resid_policy highest = {"highest-address", no_touch, by_address};
    const struct resid_policy *saved = r->policy;
    r->policy = &highest;
    CUdeviceptr c = alloc(3 * MiB);
    settle();
    r->policy = saved;
    assert_int_equal(unit_of(newer)->state, SHIM_RS_HOST);
    assert_int_equal(unit_of(older)->state, SHIM_RS_DEVICE);
    release(a, false);
    release(b, false);
    release(c, false);
}

static void test_failed_remap_rolls_back(void **state)
{
    (void)state;
    budget_chunks(4);
    uint64_t errors = r->transitions[SHIM_RS_EVICTING][SHIM_RS_DEVICE];
    CUdeviceptr a = alloc(3 * MiB);
    fill(a, 3 * MiB, 9);
    CUdeviceptr b = alloc(3 * MiB);
    fake_fail("unmap", 1, false, CUDA_ERROR_UNKNOWN); /* the eviction's remap fails once */
    CUdeviceptr c = alloc(3 * MiB);                   /* evicts a; the retry evicts b */
    settle();
    assert_int_equal(fake.injected > 0, 1);
    assert_true(r->transitions[SHIM_RS_EVICTING][SHIM_RS_DEVICE] > errors); /* ERROR taken */
    assert_true(holds(a, 3 * MiB, 9));
    assert_true(r->dev_bytes <= r->budget);
    release(a, false);
    release(b, false);
    release(c, false);
}

/* A move whose remap fails both ways (the driver refuses every map from then on) leaves its
   range unmapped: an operation on it is refused with the driver's error rather than run on
   nothing; once the driver maps again, the next touch maps the range again, data intact. */
static void test_half_failed_move_maps_again_at_next_touch(void **state)
{
    (void)state;
    budget_chunks(8);
    CUdeviceptr a = alloc(3 * MiB);
    fill(a, 3 * MiB, 21);
    fake_fail("map", 1, true, CUDA_ERROR_UNKNOWN); /* the new mapping, then the old one */
    evict_by_hand(a);
    settle();
    assert_true(unit_of(a)->stuck);
    uint64_t ids[1] = {id_of(a)};
    CUresult refuse = CUDA_SUCCESS;
    assert_true(shim_resid_enter(ids, 1, STREAM, false, true, &refuse));
    assert_int_equal(refuse, CUDA_ERROR_UNKNOWN);
    shim_resid_leave(ids, 1);
    fake_fail(NULL, 0, false, CUDA_SUCCESS);
    touch(a);
    assert_false(unit_of(a)->stuck);
    assert_true(holds(a, 3 * MiB, 21));
    release(a, false);
}

static void test_single_failures_never_reach_the_program(void **state)
{
    (void)state;
    static const char *const entries[] = {"create",  "map",        "set_access",  "copy",
                                          "record",  "query",      "event_sync",  "unmap",
                                          "reserve", "wait_event", "event_create"};
    for (size_t e = 0; e < sizeof entries / sizeof entries[0]; e++) {
        for (unsigned long n = 1; n <= 4; n++) {
            budget_chunks(4);
            CUdeviceptr a = alloc(3 * MiB);
            fill(a, 3 * MiB, (uint8_t)(e + n));
            CUdeviceptr b = alloc(3 * MiB);
            fake_fail(entries[e], n, false, CUDA_ERROR_UNKNOWN);
            CUdeviceptr c = alloc(3 * MiB); /* evictions under one failed call */
            touch(a);                       /* and a restore */
            settle();
            fake_fail(NULL, 0, false, CUDA_SUCCESS);
            assert_true(holds(a, 3 * MiB, (uint8_t)(e + n)));
            assert_true(r->dev_bytes <= r->budget);
            release(a, false);
            release(b, false);
            release(c, false);
        }
    }
    assert_int_equal(r->sticky, 0);
}

static void test_cancel_keeps_device_copy(void **state)
{
    (void)state;
    budget_chunks(4);
    uint64_t cancels = r->transitions[SHIM_RS_EVICTING][SHIM_RS_DEVICE];
    CUdeviceptr a = alloc(3 * MiB);
    fill(a, 3 * MiB, 3);
    CUdeviceptr b = alloc(2 * MiB + 4096);
    fake_hold_events(true);
    /* Room for c needs a's eviction over; with its copy held, make it by hand. */
    pthread_mutex_lock(&r->lock);
    struct resid_cause why = {SHIM_REASON_BUDGET, NULL, 1, UINT64_MAX};
    assert_int_equal(resid_evict(r, resid_find(r, id_of(a)), &why), 0);
    assert_int_equal(resid_find(r, id_of(a))->state, SHIM_RS_EVICTING);
    pthread_mutex_unlock(&r->lock);
    touch(a); /* cancels */
    assert_int_equal(unit_of(a)->state, SHIM_RS_DEVICE);
    assert_int_equal(r->transitions[SHIM_RS_EVICTING][SHIM_RS_DEVICE], cancels + 1);
    assert_false(fake_on_host(a));
    fake_hold_events(false);
    settle();
    assert_int_equal(unit_of(a)->state, SHIM_RS_DEVICE); /* the cancelled copy changes nothing */
    assert_true(holds(a, 3 * MiB, 3));
    release(a, false);
    release(b, false);
}

/* A cancelled eviction's copy still reads the unit's device chunks after the cancel. If the
   unit is freed meanwhile, its chunks must neither be given back to the driver nor written by
   their next owner before that copy ends. */
static void test_cancelled_copy_fences_freed_chunks(void **state)
{
    (void)state;
    budget_chunks(4);
    CUdeviceptr a = alloc(3 * MiB);
    fill(a, 3 * MiB, 9);
    CUdeviceptr b = alloc(2 * MiB + 4096);
    fake_hold_events(true);
    evict_by_hand(a);
    touch(a); /* cancels: the copy is still running */
    assert_int_equal(unit_of(a)->state, SHIM_RS_DEVICE);
    /* An asynchronous free whose event cannot be recorded waits for the program's stream
       only: that says nothing about the shim's copy. */
    fake_fail("record", 1, false, CUDA_ERROR_UNKNOWN);
    release(a, true);
    fake_fail(NULL, 0, false, CUDA_SUCCESS);
    uint64_t chunks = fake.device_chunks;
    pthread_mutex_lock(&r->lock);
    resid_trim_device(r, UINT64_MAX); /* the copy's source chunks stay */
    pthread_mutex_unlock(&r->lock);
    assert_int_equal(fake.device_chunks, chunks);
    CUdeviceptr c = alloc(3 * MiB); /* a's chunks again */
    assert_int_equal(fake.device_chunks, chunks);
    struct resid_unit *u = unit_of(c);
    assert_non_null(u->ready);
    assert_int_equal(r->drv->query(u->ready->event), CUDA_ERROR_NOT_READY);
    uint64_t waits = fake.waits_on_pending;
    touch(c); /* its first use waits for the copy in stream order */
    assert_int_equal(fake.waits_on_pending, waits + 1);
    fake_hold_events(false);
    settle();
    release(b, false);
    release(c, false);
}

/* An operation that reads an evicted unit through its host mapping (no room could be made)
   is submitted after it lets the lock go. Until then no fence covers it: had another
   operation restored the unit meanwhile, the restore's remap would unmap the range under it
   (simgpu reported the unmap hazard with 64 threads). Such a restore is refused, and the
   second operation reads through the host too; once the first is submitted, a touch restores
   the unit. A hold waits (bounded) and then fails cleanly rather than remap under it. */
static void test_no_restore_under_a_host_read_in_progress(void **state)
{
    (void)state;
    budget_chunks(4);
    CUdeviceptr a = alloc_on_host(3 * MiB, 21);
    CUdeviceptr b = alloc(3 * MiB), c = alloc(3 * MiB); /* the whole budget */
    struct resid_unit *ub = unit_of(b), *uc = unit_of(c);
    atomic_fetch_add(&ub->pins, 1); /* other threads' operations in progress use them */
    atomic_fetch_add(&uc->pins, 1);
    uint64_t first[1] = {id_of(a)};
    CUresult refuse = CUDA_SUCCESS;
    tick();
    assert_true(shim_resid_enter(first, 1, STREAM, false, true, &refuse));
    assert_int_equal(refuse, CUDA_SUCCESS);
    assert_true(fake_on_host(a)); /* read through the host link: not yet submitted */
    assert_int_equal(unit_of(a)->host_readers, 1);
    atomic_fetch_sub(&ub->pins, 1); /* room can be made now */
    atomic_fetch_sub(&uc->pins, 1);
    uint64_t restores = r->transitions[SHIM_RS_HOST][SHIM_RS_RESTORING];
    uint64_t second[1] = {id_of(a)};
    tick();
    assert_true(shim_resid_enter(second, 1, (CUstream)(uintptr_t)0x6000, false, true, &refuse));
    assert_int_equal(refuse, CUDA_SUCCESS);
    assert_int_equal(r->transitions[SHIM_RS_HOST][SHIM_RS_RESTORING], restores);
    assert_int_equal(unit_of(a)->state, SHIM_RS_HOST);
    assert_true(fake_on_host(a));
    assert_int_equal(unit_of(a)->host_readers, 2);
    shim_resid_leave(second, 1);
    assert_int_equal(second[0], id_of(a));
    struct shim_hold h;
    CUresult rc = CUDA_SUCCESS;
    assert_true(shim_resid_hold(a, SHIM_PIN_IPC, &h, &rc));
    assert_int_not_equal(rc, CUDA_SUCCESS);
    assert_false(h.active);
    assert_true(fake_on_host(a));
    shim_resid_leave(first, 1); /* submitted: its stream is in the next fence */
    assert_int_equal(first[0], id_of(a));
    assert_int_equal(unit_of(a)->host_readers, 0);
    touch(a);
    settle();
    assert_int_equal(r->transitions[SHIM_RS_HOST][SHIM_RS_RESTORING], restores + 1);
    assert_false(fake_on_host(a));
    assert_true(holds(a, 3 * MiB, 21));
    release(a, false);
    release(b, false);
    release(c, false);
}

/* A search for room first completes the moves already done, and only then waits for the
   oldest one: waiting for a copy back still running at the head of the queue while an
   eviction behind it is done would make the cost depend on whether the mover thread had
   polled that eviction yet (a 1.1% spread between identical steps in segments mode). */
static void test_room_from_done_moves_before_waiting(void **state)
{
    (void)state;
    budget_chunks(4);
    CUdeviceptr x = alloc(3 * MiB), y = alloc(3 * MiB);
    fill(x, 3 * MiB, 31);
    evict_by_hand(x);
    evict_by_hand(y);
    settle(); /* x and y on the host, the device empty */
    CUdeviceptr z = alloc(3 * MiB);
    fill(z, 3 * MiB, 33);
    fake_hold_events(true);
    pthread_mutex_lock(&r->lock);
    struct resid_cause why = {SHIM_REASON_PREFETCH, NULL, 0, UINT64_MAX};
    assert_int_equal(resid_restore(r, resid_find(r, id_of(x)), &why), 0); /* its copy is held */
    pthread_mutex_unlock(&r->lock);
    fake_hold_keep();
    evict_by_hand(z); /* done at once, not yet completed: nobody polled it */
    assert_int_equal(unit_of(z)->state, SHIM_RS_EVICTING);
    uint64_t syncs = fake.event_syncs;
    CUdeviceptr w = alloc(3 * MiB); /* room: z's chunks, once its eviction is completed */
    assert_int_equal(unit_of(z)->state, SHIM_RS_HOST);
    assert_non_null(unit_of(x)->move); /* its copy back was not waited for */
    assert_int_equal(fake.event_syncs, syncs);
    fake_hold_events(false);
    settle();
    assert_true(holds(x, 3 * MiB, 31));
    touch(z);
    settle();
    assert_true(holds(z, 3 * MiB, 33));
    release(w, false);
    release(x, false);
    release(y, false);
    release(z, false);
}

static void test_wait_is_bounded(void **state)
{
    (void)state;
    budget_chunks(4);
    CUdeviceptr a = alloc(3 * MiB);
    fill(a, 3 * MiB, 5);
    fake_hold_events(true); /* the copy never shows as done... */
    pthread_mutex_lock(&r->lock);
    struct resid_unit *u = resid_find(r, id_of(a));
    struct resid_cause why = {SHIM_REASON_BUDGET, NULL, 1, UINT64_MAX};
    assert_int_equal(resid_evict(r, u, &why), 0);
    fake_fail("event_sync", 1, true, CUDA_ERROR_UNKNOWN); /* ...and cannot be waited for */
    uint64_t syncs = fake.event_syncs;
    resid_wait_move(r, u, SHIM_REASON_DEMAND);
    assert_null(u->move);
    assert_int_equal(u->state, SHIM_RS_DEVICE); /* given up: the device copy is the data */
    assert_int_equal(fake.event_syncs, syncs);
    pthread_mutex_unlock(&r->lock);
    assert_true(r->aside_bytes > 0); /* its destination may still be written: not reused */
    fake_fail(NULL, 0, false, CUDA_SUCCESS);
    uint64_t waits = fake.waits_on_pending;
    touch(a); /* the given-up copy may still read a: a write waits for it in stream order */
    assert_int_equal(fake.waits_on_pending, waits + 1);
    fake_hold_events(false);
    assert_true(holds(a, 3 * MiB, 5));
    release(a, false);
}

static void test_sticky_error_reaches_the_program(void **state)
{
    (void)state;
    budget_chunks(4);
    CUdeviceptr a = alloc(3 * MiB), b = alloc(3 * MiB);
    fake_hold_events(true);
    fake_fail("query", 1, true, CUDA_ERROR_ILLEGAL_ADDRESS);
    fake_fail("event_sync", 1, true, CUDA_ERROR_ILLEGAL_ADDRESS);
    CUdeviceptr c = 0;
    CUresult rc = CUDA_SUCCESS;
    assert_int_equal(shim_resid_alloc(&c, 3 * MiB, STREAM, false, false, &rc), SHIM_RESID_DONE);
    assert_int_equal(rc, CUDA_ERROR_ILLEGAL_ADDRESS);
    assert_int_equal(r->sticky, CUDA_ERROR_ILLEGAL_ADDRESS);
    fake_fail(NULL, 0, false, CUDA_SUCCESS);
    fake_hold_events(false);
    r->sticky = CUDA_SUCCESS; /* the other tests go on with a healthy device */
    settle();
    release(a, false);
    release(b, false);
}

/* ---- slabs ---- */

static void test_small_allocations_share_slabs(void **state)
{
    (void)state;
    enum { N = 100 };
    CUdeviceptr p[N];
    for (int i = 0; i < N; i++) {
        p[i] = alloc(16 * 1024);
        fill(p[i], 16 * 1024, (uint8_t)i);
    }
    for (int i = 1; i < N; i++) /* 100 x 16 KiB fit one 2 MiB slab */
        assert_true(p[i] / FAKE_GRAN == p[0] / FAKE_GRAN);
    for (int i = 0; i < N; i++) {
        assert_true(p[i] % 512 == 0);
        assert_true(holds(p[i], 16 * 1024, (uint8_t)i)); /* no two overlap */
        if (i > 0) /* launches find each allocation by its own id... */
            assert_int_not_equal(id_of(p[i]), id_of(p[i - 1]));
        assert_int_equal(id_of(p[i] + 16 * 1024 - 1), id_of(p[i]));
        pthread_mutex_lock(&r->lock); /* ...and residency finds its slab */
        struct resid_member *m = resid_member_find(r, id_of(p[i]));
        assert_non_null(m);
        assert_ptr_equal(m->unit, resid_member_find(r, id_of(p[0]))->unit);
        pthread_mutex_unlock(&r->lock);
    }
    for (int i = 0; i < N; i++)
        release(p[i], false);
}

/* A slab moves as one unit: when one member's touch cancels the slab's eviction, the copy
   still reads the whole slab, so the other members' users (other threads' streams) must wait
   for it too, until it is known done. */
static void test_cancelled_slab_copy_fences_every_member(void **state)
{
    (void)state;
    CUdeviceptr p = alloc(16 * 1024), q = alloc(16 * 1024);
    assert_true(p / FAKE_GRAN == q / FAKE_GRAN);
    fake_hold_events(true);
    pthread_mutex_lock(&r->lock);
    struct resid_unit *slab = resid_member_find(r, id_of(p))->unit;
    pthread_mutex_unlock(&r->lock);
    evict_by_hand(p);
    uint64_t waits = fake.waits_on_pending;
    touch(p); /* cancels */
    assert_int_equal(slab->state, SHIM_RS_DEVICE);
    assert_int_equal(fake.waits_on_pending, waits + 1);
    touch(q); /* another member: the copy may still read it */
    assert_int_equal(fake.waits_on_pending, waits + 2);
    fake_hold_events(false);
    touch(q); /* known done now: no wait, and the fence is gone */
    assert_int_equal(fake.waits_on_pending, waits + 2);
    assert_null(slab->reading);
    settle();
    release(p, false);
    release(q, false);
}

static void test_small_allocations_fit_a_tight_budget(void **state)
{
    (void)state;
    enum { N = 400 }; /* 6.25 MiB of 16 KiB allocations under a 4 MiB budget */
    budget_chunks(2);
    uint64_t ev = r->transitions[SHIM_RS_EVICTING][SHIM_RS_HOST];
    static CUdeviceptr p[N];
    for (int i = 0; i < N; i++) {
        p[i] = alloc(16 * 1024);
        fill(p[i], 16 * 1024, (uint8_t)(i * 7));
    }
    settle();
    assert_true(r->transitions[SHIM_RS_EVICTING][SHIM_RS_HOST] >= ev + 2);
    assert_true(r->dev_bytes <= r->budget);
    for (int i = 0; i < N; i += 37) { /* touched again: restored, bytes intact */
        touch(p[i]);
        settle();
        assert_false(fake_on_host(p[i]));
        assert_true(holds(p[i], 16 * 1024, (uint8_t)(i * 7)));
    }
    for (int i = 0; i < N; i++)
        assert_true(holds(p[i], 16 * 1024, (uint8_t)(i * 7)));
    uint64_t units = resid_nunits(r);
    for (int i = 0; i < N; i++)
        release(p[i], i % 2 == 0);
    pthread_mutex_lock(&r->lock);
    while (resid_reap(r, true))
        ;
    pthread_mutex_unlock(&r->lock);
    assert_true(resid_nunits(r) < units); /* empty slabs went */
    assert_int_equal(base_map_count(&r->members), 0);
}

static void test_oversized_allocation_is_out_of_memory(void **state)
{
    (void)state;
    budget_chunks(2);
    CUdeviceptr p = 0;
    CUresult rc = CUDA_SUCCESS;
    assert_int_equal(shim_resid_alloc(&p, 5 * MiB, STREAM, false, false, &rc), SHIM_RESID_DONE);
    assert_int_equal(rc, CUDA_ERROR_OUT_OF_MEMORY);
    assert_true(r->dev_bytes <= r->budget);
}

/* ---- stepping aside, and waiting for what is transient ---- */

/* A budget short because libshim's own failures set chunks aside (a copy whose end could not be
   known: its chunks are never reused, yet still counted): an allocation that then finds no room
   steps aside to the driver rather than return out of memory, which would be libshim's doing
   (the fault loop saw it with cuEventSynchronize failing for good). Two granules of the
   four-granule budget are taken as set aside; one larger than the whole budget is still out of
   memory (the budget's answer, whatever was set aside). */
static void test_budget_short_by_set_aside_chunks_steps_aside(void **state)
{
    (void)state;
    budget_chunks(2);
    pthread_mutex_lock(&r->lock);
    uint64_t aside = r->aside_bytes;
    r->dev_bytes += 2 * MiB, r->aside_bytes += 2 * MiB;
    pthread_mutex_unlock(&r->lock);
    CUdeviceptr p = 0;
    CUresult rc = CUDA_ERROR_UNKNOWN, big_rc = CUDA_SUCCESS;
    enum shim_resid_verdict v = shim_resid_alloc(&p, 3 * MiB, STREAM, false, false, &rc);
    enum shim_resid_verdict big = shim_resid_alloc(&p, 5 * MiB, STREAM, false, false, &big_rc);
    pthread_mutex_lock(&r->lock);
    r->dev_bytes -= 2 * MiB, r->aside_bytes = aside;
    r->aside_streak = 0;
    pthread_mutex_unlock(&r->lock);
    assert_int_equal(v, SHIM_RESID_ASIDE);
    assert_false(r->stepped_aside);
    assert_int_equal(big, SHIM_RESID_DONE);
    assert_int_equal(big_rc, CUDA_ERROR_OUT_OF_MEMORY);
}

/* The case: one failed reservation of libshim's own (here the arena's, the second
   reserve of a one-granule allocation after the unit's range) is a transient failure: tried
   again, never out of memory (which it was: the failed arena left the search nothing to try). */
static void test_single_failed_reservation_is_tried_again(void **state)
{
    (void)state;
    CUdeviceptr p = 0;
    CUresult rc = CUDA_ERROR_UNKNOWN;
    uint64_t injected = fake.injected;
    r->nslots = 0; /* the arena is used up: a chunk of one granule needs a new one */
    fake_fail("reserve", 2, false, CUDA_ERROR_OUT_OF_MEMORY);
    tick();
    assert_int_equal(shim_resid_alloc(&p, 2 * MiB, STREAM, false, false, &rc), SHIM_RESID_DONE);
    fake_fail(NULL, 0, false, CUDA_SUCCESS);
    assert_int_equal(fake.injected, injected + 1);
    assert_int_equal(rc, CUDA_SUCCESS);
    assert_int_equal(r->outside_allocs, 0);
    release(p, false);
}

/* A call libshim depends on that keeps failing: the allocation goes to the driver (ASIDE), the
   second in a row steps aside for good (even once the call works again), and an evicted
   allocation made before keeps its data, read where it is. */
static void test_persistent_failure_steps_aside(void **state)
{
    (void)state;
    CUdeviceptr a = alloc_on_host(4 * MiB, 21);
    CUdeviceptr p = 0;
    CUresult rc = CUDA_ERROR_UNKNOWN;
    fake_fail("map", 1, true, CUDA_ERROR_UNKNOWN);
    tick();
    assert_int_equal(shim_resid_alloc(&p, 8 * MiB, STREAM, false, false, &rc), SHIM_RESID_ASIDE);
    assert_false(r->stepped_aside); /* one allocation may be bad luck */
    assert_int_equal(shim_resid_alloc(&p, 8 * MiB, STREAM, false, false, &rc), SHIM_RESID_ASIDE);
    assert_true(r->stepped_aside);
    fake_fail(NULL, 0, false, CUDA_SUCCESS);
    assert_int_equal(shim_resid_alloc(&p, 8 * MiB, STREAM, false, false, &rc), SHIM_RESID_ASIDE);
    assert_int_equal(shim_resid_unmanaged_room(4 * MiB, &rc), SHIM_RESID_ASIDE);
    assert_true(holds(a, 4 * MiB, 21)); /* on the host, mapped: the program reads it there */
    r->stepped_aside = false;           /* the other tests go on with a working driver */
    r->aside_streak = 0;
    release(a, false);
}

/* The real seam counts libshim's failed driver calls on every thread: an allocation's search
   that waited for an eviction whose remap failed on the mover's thread must see the failure
   (and step aside rather than report out of memory: the fault loop's sticky cuMemUnmap in
   threads_sim). Fails with a count per thread. */
static CUresult unmap_fails(CUdeviceptr va, size_t size)
{
    (void)va;
    (void)size;
    return CUDA_ERROR_UNKNOWN;
}

static void *fail_one_unmap(void *arg)
{
    (void)arg;
    resid_driver_real()->unmap(0, 0);
    return NULL;
}

static void test_failures_on_other_threads_are_counted(void **state)
{
    (void)state;
    shim_fn_cuMemUnmap saved = shim.real.cuMemUnmap;
    shim.real.cuMemUnmap = unmap_fails;
    uint64_t before = resid_driver_failures();
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fail_one_unmap, NULL), 0);
    pthread_join(t, NULL);
    shim.real.cuMemUnmap = saved;
    assert_int_equal(resid_driver_failures(), before + 1);
    CUresult rc = CUDA_SUCCESS;
    assert_string_equal(resid_driver_failed_call(&rc), "cuMemUnmap");
    assert_int_equal(rc, CUDA_ERROR_UNKNOWN);
}

/* An allocation that finds the whole budget pinned by another thread's submission in progress
   waits for it, however long it takes within the bound (30 s), rather than report out of
   memory: the holder lets go only once the allocation has paused longer than the 2 s the
   search used to wait in all, so the test does not depend on the machine's speed. */
struct pin_holder {
    CUdeviceptr p;
    _Atomic bool pinned, done, released; /* released: it let go (after the long pause) */
};

static void *hold_pin(void *arg)
{
    struct pin_holder *h = arg;
    uint64_t ids[1] = {id_of(h->p)};
    CUresult refuse = CUDA_SUCCESS;
    shim_resid_enter(ids, 1, STREAM, false, false, &refuse);
    atomic_store(&h->pinned, true);
    for (int i = 0; i < 20000 && !atomic_load(&h->done); i++) {
        pthread_mutex_lock(&r->lock);
        uint64_t paused = r->oom.paused_ns;
        pthread_mutex_unlock(&r->lock);
        if (paused > 2500000000ull)
            break;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    atomic_store(&h->released, true);
    shim_resid_leave(ids, 1);
    return NULL;
}

/* Starts a thread that pins h->p (hold_pin) and returns once the pin is held. */
static pthread_t pin_elsewhere(struct pin_holder *h)
{
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, hold_pin, h), 0);
    while (!atomic_load(&h->pinned))
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    return t;
}

static void test_allocation_waits_for_submissions_in_progress(void **state)
{
    (void)state;
    budget_chunks(2);
    uint64_t host_budget = r->host_budget;
    r->host_budget = r->host_bytes; /* no host memory to place it in: it must wait */
    CUdeviceptr a = alloc(4 * MiB);
    fill(a, 4 * MiB, 17);
    struct pin_holder h = {.p = a};
    pthread_t t = pin_elsewhere(&h);
    CUdeviceptr b = 0;
    CUresult rc = CUDA_ERROR_UNKNOWN;
    tick();
    enum shim_resid_verdict v = shim_resid_alloc(&b, 4 * MiB, STREAM, false, false, &rc);
    atomic_store(&h.done, true);
    pthread_join(t, NULL);
    assert_int_equal(v, SHIM_RESID_DONE);
    assert_int_equal(rc, CUDA_SUCCESS); /* not out of memory: the pin was transient */
    assert_int_equal(unit_of(b)->state, SHIM_RS_DEVICE); /* it waited for the device */
    settle();
    assert_true(holds(a, 4 * MiB, 17));
    assert_true(r->dev_bytes <= r->budget);
    release(a, false);
    release(b, false);
    r->host_budget = host_budget;
}

/* The same contention where host memory can hold it: the allocation waits about a second, then
   is made in host memory (read through the link) rather than keep waiting or fail; the budget
   holds throughout, and once the pin is gone the next touch brings it to the device with what
   was written through the host mapping. */
static void test_contended_allocation_is_made_on_the_host(void **state)
{
    (void)state;
    budget_chunks(2);
    uint64_t births = r->host_births;
    CUdeviceptr a = alloc(4 * MiB);
    fill(a, 4 * MiB, 23);
    struct pin_holder h = {.p = a};
    pthread_t t = pin_elsewhere(&h);
    CUdeviceptr b = 0;
    CUresult rc = CUDA_ERROR_UNKNOWN;
    tick();
    enum shim_resid_verdict v = shim_resid_alloc(&b, 4 * MiB, STREAM, false, false, &rc);
    bool held = !atomic_load(&h.released); /* placed while the pin was still held */
    assert_int_equal(v, SHIM_RESID_DONE);
    assert_int_equal(rc, CUDA_SUCCESS);
    assert_true(held);
    assert_int_equal(unit_of(b)->state, SHIM_RS_HOST);
    assert_int_equal(r->host_births, births + 1);
    assert_true(fake_on_host(b));
    assert_true(r->dev_bytes <= r->budget);
    fill(b, 4 * MiB, 29); /* written through the host mapping */
    atomic_store(&h.done, true);
    pthread_join(t, NULL);
    touch(b);
    settle();
    assert_int_equal(unit_of(b)->state, SHIM_RS_DEVICE);
    assert_true(holds(b, 4 * MiB, 29));
    assert_true(holds(a, 4 * MiB, 23));
    assert_true(r->dev_bytes <= r->budget);
    release(a, false);
    release(b, false);
}

/* ---- the reactive policy ---- */

static void test_reactive_policy_predicts_from_the_last_step(void **state)
{
    (void)state;
    /* Steps of ten launches, each closed by a host synchronisation (the loss read); the
       launch index goes on from where the other tests left it. */
    shim_steps_host_sync(&shim.steps);
    for (int step = 0; step < 4; step++) {
        for (uint64_t k = 0; k < 10; k++)
            shim_steps_launch(&shim.steps, atomic_fetch_add(&shim.launch_seq, 1), 100 + k);
        shim_steps_host_sync(&shim.steps);
    }
    assert_int_equal(shim_steps_step_len(&shim.steps), 10);
    /* The policy reads only differences of launch indices and the step length, so the
       units below use indices from 0 (now = 40, four steps in). */
    const struct resid_policy *p = &resid_policy_reactive;
    struct resid_unit weight = {0}, late = {0}, idle = {0}, young = {.birth = 38};
    for (uint64_t t = 2; t < 40; t += 10)
        p->touch(&weight, t); /* launch 2 of every step */
    for (uint64_t t = 5; t < 40; t += 10)
        p->touch(&late, t); /* launch 5 of every step */
    p->touch(&idle, 5);     /* not in the last step */
    young.last_use = 39;
    p->touch(&young, 39);
    uint64_t next = 0, now = 40;
    assert_int_equal(p->score(&weight, now, &next), 2); /* next used at launch 42 */
    assert_int_equal(next, 42);
    assert_int_equal(p->score(&late, now, &next), 5);
    assert_int_equal(next, 45);
    uint64_t never = p->score(&idle, now, &next);
    assert_int_equal(next, UINT64_MAX - 1); /* not used in the last step: the best victim */
    assert_true(never > p->score(&late, now, &next));
    assert_int_equal(p->score(&young, now, &next), 1); /* too young: least recently used */
    assert_int_equal(next, UINT64_MAX);
    /* A touch seen twice at one launch counts once; the ring keeps the latest ones. */
    p->touch(&weight, 42);
    p->touch(&weight, 42);
    assert_int_equal(weight.ntouches, 5);
    for (uint64_t t = 43; t < 43 + 2 * RESID_TOUCH_LOG; t++)
        p->touch(&weight, t);
    /* Touches at 43..106: the oldest one in the last step (97..106] is 98, next used at 108. */
    assert_int_equal(p->score(&weight, 43 + 2 * RESID_TOUCH_LOG, &next), 1);
    assert_int_equal(next, 108);
}

static uint64_t vmm_calls(void)
{
    return fake.reserves + fake.maps + fake.unmaps + fake.set_accesses;
}

/* A freed unit's range stays mapped: the next allocation of its size takes it without a VMM
   call (on a real driver, cuMemSetAccess and cuMemUnmap of 64 MiB cost the host ~1.5 ms), and
   cuMemGetInfo counts its chunks as free. Another size gets a range of its own. */
static void test_freed_range_is_reused_without_vmm_calls(void **state)
{
    (void)state;
    CUdeviceptr p = alloc(4 * MiB);
    size_t free_before = 1ull << 40, total = 1ull << 40;
    shim_resid_mem_info(&free_before, &total);
    release(p, false);
    size_t free_after = 1ull << 40;
    total = 1ull << 40;
    shim_resid_mem_info(&free_after, &total);
    assert_int_equal(free_after - free_before, 4 * MiB);
    uint64_t calls = vmm_calls();
    CUdeviceptr q = alloc(4 * MiB);
    assert_int_equal(q, p);
    assert_int_equal(vmm_calls(), calls);
    assert_int_equal(unit_of(q)->state, SHIM_RS_DEVICE);
    fill(q, 4 * MiB, 7);
    assert_true(holds(q, 4 * MiB, 7));
    CUdeviceptr other = alloc(6 * MiB);
    assert_int_not_equal(other, p);
    assert_true(vmm_calls() > calls);
    release(q, false);
    release(other, false);
}

/* Spare ranges are free memory: a search for room unmaps one before it evicts anything. */
static void test_spares_give_room_before_anything_moves(void **state)
{
    (void)state;
    budget_chunks(4);
    CUdeviceptr a = alloc(4 * MiB), b = alloc(4 * MiB);
    fill(b, 4 * MiB, 3);
    release(a, false); /* a spare of two chunks: the budget is full */
    assert_int_equal(r->nspares, 1);
    uint64_t evictions = r->evictions, unmaps = fake.unmaps;
    CUdeviceptr c = alloc(2 * MiB); /* one chunk: no spare of its size */
    assert_int_equal(r->evictions, evictions);
    assert_int_equal(r->nspares, 0);
    assert_true(fake.unmaps > unmaps);
    assert_int_equal(unit_of(b)->state, SHIM_RS_DEVICE);
    assert_true(holds(b, 4 * MiB, 3));
    assert_true(r->dev_bytes <= r->budget);
    release(b, false);
    release(c, false);
}

/* A free still pending on a stream gives its range at once to an allocation on that stream
   (its work is queued after the free, as the driver's pool reuses memory), fenced on that
   stream; an allocation on another stream does not take it. */
static void test_pending_free_range_reused_in_stream_order(void **state)
{
    (void)state;
    const CUstream other = (CUstream)(uintptr_t)0x6000;
    fake_hold_events(true); /* the free's event stays not done */
    CUdeviceptr a = alloc_on(4 * MiB, STREAM, true);
    release(a, true);
    assert_non_null(r->pending);
    CUdeviceptr elsewhere = alloc_on(4 * MiB, other, true);
    assert_int_not_equal(elsewhere, a);
    uint64_t calls = vmm_calls();
    CUdeviceptr q = alloc_on(4 * MiB, STREAM, true);
    assert_int_equal(q, a);
    assert_int_equal(vmm_calls(), calls);
    struct resid_unit *u = unit_of(q);
    bool fenced = false;
    for (uint8_t i = 0; i < u->nstreams; i++)
        fenced |= u->streams[i] == STREAM;
    assert_true(fenced);
    fake_hold_events(false);
    release(q, false);
    release(elsewhere, false);
    pthread_mutex_lock(&r->lock);
    resid_reap(r, false);
    pthread_mutex_unlock(&r->lock);
}

/* Frees in stream order on a stream any thread can name are fenced together, one event per
   stream (an event per free costs the program's thread a record each, which the driver's pool
   never pays): none is recorded at the frees, one for each stream once room is wanted or the
   RESID_UNFENCED_MAX-th waits, and before a stream is destroyed; a stream whose record fails is waited for
   instead. */
static void test_stream_frees_fenced_together(void **state)
{
    (void)state;
    const CUstream other = (CUstream)(uintptr_t)0x6000;
    uint64_t records = fake.records;
    CUdeviceptr p[5];
    for (int i = 0; i < 5; i++)
        p[i] = alloc_on(2 * MiB, i < 3 ? STREAM : other, true);
    for (int i = 0; i < 5; i++) {
        struct shim_alloc a;
        assert_true(shim_registry_remove(p[i], &a));
        assert_int_equal(shim_resid_free(a.id, i < 3 ? STREAM : other, false, true), CUDA_SUCCESS);
    }
    assert_int_equal(fake.records, records); /* no record at the frees */
    assert_int_equal(r->unfenced, 5);
    pthread_mutex_lock(&r->lock);
    resid_reap_stream_gone(r, (CUstream)(uintptr_t)0x7000); /* none there: nothing fenced */
    assert_int_equal(r->unfenced, 5);
    resid_reap_stream_gone(r, other); /* all are fenced now: one record for each stream */
    pthread_mutex_unlock(&r->lock);
    assert_int_equal(fake.records, records + 2);
    assert_int_equal(r->unfenced, 0);
    pthread_mutex_lock(&r->lock);
    resid_reap(r, false); /* their fences are done: the frees complete */
    pthread_mutex_unlock(&r->lock);
    assert_null(r->pending);

    records = fake.records; /* the RESID_UNFENCED_MAX-th free waiting fences them, one record */
    for (int i = 0; i < RESID_UNFENCED_MAX; i++)
        release(alloc_on(2 * MiB, STREAM, true), true);
    assert_int_equal(fake.records, records + 1);
    assert_int_equal(r->unfenced, 0);

    /* a record that fails leaves the free unfenced; a wait for room waits for its stream */
    pthread_mutex_lock(&r->lock);
    resid_reap(r, false);
    pthread_mutex_unlock(&r->lock);
    release(alloc_on(2 * MiB, STREAM, true), true);
    fake_fail("record", 1, false, CUDA_ERROR_UNKNOWN);
    uint64_t syncs = fake.stream_syncs;
    pthread_mutex_lock(&r->lock);
    assert_false(resid_reap(r, false));
    assert_int_equal(r->unfenced, 1);
    assert_true(resid_reap(r, true)); /* the record now succeeds: fenced, then waited for */
    pthread_mutex_unlock(&r->lock);
    fake_fail(NULL, 0, false, CUDA_SUCCESS);
    assert_int_equal(r->unfenced, 0);
    assert_int_equal(fake.stream_syncs, syncs);
    release(alloc_on(2 * MiB, STREAM, true), true);
    fake_fail("record", 1, true, CUDA_ERROR_UNKNOWN); /* every record fails from now on */
    pthread_mutex_lock(&r->lock);
    assert_true(resid_reap(r, true)); /* unfenced for good: its stream is waited for */
    pthread_mutex_unlock(&r->lock);
    fake_fail(NULL, 0, false, CUDA_SUCCESS);
    assert_int_equal(fake.stream_syncs, syncs + 1);
    assert_null(r->pending);
    assert_int_equal(r->unfenced, 0);
}

/* A remap's host time is measured for the planner (link_remap = "measured"): with every map
   call taking 1 ms, the median of the remaps timed is at least the one map of a 4 MiB unit (one
   handle: the two maps of two 2 MiB chunks before each unit had a handle of its own). */
static void test_remap_host_time_is_measured(void **state)
{
    (void)state;
    CUdeviceptr p = alloc(4 * MiB);
    r->nremap_us = 0;
    assert_true(shim_resid_remap_us() < 0);
    fake_slow_map(1000000);
    evict_by_hand(p);
    settle();
    fake_slow_map(0);
    assert_int_equal(unit_of(p)->state, SHIM_RS_HOST);
    assert_true(shim_resid_remap_us() >= 1000);
    release(p, false);
}

/* A unit is one physical handle on each side: once the pools hold its size, moving a unit of
   32 granules out and back makes one map, one set-access and one unmap each way, one copy, and
   creates nothing (a chunk per granule made 32 maps per move). */
static void test_a_move_remaps_one_handle(void **state)
{
    (void)state;
    CUdeviceptr p = alloc(64 * MiB - 100);
    fill(p, 64 * MiB - 100, 7);
    evict_by_hand(p); /* the first trip creates the host chunk */
    settle();
    touch(p); /* back on demand */
    settle();
    uint64_t maps = fake.maps, sets = fake.set_accesses, unmaps = fake.unmaps;
    uint64_t copied = fake.bytes_copied, created = r->handles_created;
    evict_by_hand(p);
    settle();
    assert_true(fake_on_host(p));
    assert_int_equal(fake.maps - maps, 1);
    assert_int_equal(fake.set_accesses - sets, 1);
    assert_int_equal(fake.unmaps - unmaps, 1);
    touch(p);
    settle();
    assert_false(fake_on_host(p));
    assert_int_equal(fake.maps - maps, 2);
    assert_int_equal(fake.set_accesses - sets, 2);
    assert_int_equal(fake.unmaps - unmaps, 2);
    assert_int_equal(r->handles_created, created);
    assert_int_equal(fake.bytes_copied - copied, 2 * (64 * MiB - 100));
    assert_true(holds(p, 64 * MiB - 100, 7));
    release(p, false);
}

/* When the pool holds no chunk of a size and the budget has no room for one, idle chunks of
   other sizes are released to make it, so the unit still gets one handle. */
static void test_pool_gives_other_sizes_back_for_one_handle(void **state)
{
    (void)state;
    uint64_t budget = r->budget;
    r->budget = r->dev_bytes + 8 * MiB;
    CUdeviceptr a = alloc(8 * MiB);
    release(a, false); /* its 4-granule chunk idles in the pool, or as a spare range */
    uint64_t released = r->handles_released;
    CUdeviceptr b = alloc(6 * MiB); /* 3 granules: no room but the idle 4 */
    struct resid_unit *u = unit_of(b);
    assert_non_null(u->backing[0]);
    assert_int_equal(u->backing[0]->grans, 3);
    assert_null(u->backing[1]);
    assert_true(r->handles_released > released);
    release(b, false);
    r->budget = budget;
}

static enum shim_resid_state state_of(CUdeviceptr p)
{
    pthread_mutex_lock(&r->lock);
    enum shim_resid_state s = resid_find(r, id_of(p))->state;
    pthread_mutex_unlock(&r->lock);
    return s;
}

/* Whether p's unit is on the device, or the mover is inside a gated map call. */
static bool on_device(CUdeviceptr p)
{
    return state_of(p) == SHIM_RS_DEVICE;
}

static bool mover_in_map(CUdeviceptr p)
{
    (void)p;
    return fake_in_map > 0;
}

/* Waits (at most 10 s) until cond(p) holds; whether it did. */
static bool eventually(bool (*cond)(CUdeviceptr), CUdeviceptr p)
{
    for (int i = 0; i < 10000; i++) {
        if (cond(p))
            return true;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return cond(p);
}

/* A restore started on the program's thread (a planned prefetch) is remapped by the mover
   ahead of its copy: the program's thread makes no VMM call for it, and its users wait for the
   copy in stream order. */
static void test_restore_is_remapped_by_the_mover(void **state)
{
    (void)state;
    r->stopping = false; /* with a mover thread (the other tests run without) */
    CUdeviceptr p = alloc(8 * MiB);
    fill(p, 8 * MiB, 3);
    evict_by_hand(p);
    settle();
    fake_hold_events(true); /* the copy back does not end until released */
    uint64_t by_mover = r->remaps_by_mover, maps = fake.maps;
    struct resid_cause why = {SHIM_REASON_PREFETCH, NULL, 0, UINT64_MAX};
    pthread_mutex_lock(&r->lock);
    assert_int_equal(resid_restore(r, resid_find(r, id_of(p)), &why), 0);
    pthread_mutex_unlock(&r->lock);
    assert_true(eventually(on_device, p)); /* ordered: before its copy ended */
    pthread_mutex_lock(&r->lock);
    assert_int_equal(r->remaps_by_mover, by_mover + 1);
    pthread_mutex_unlock(&r->lock);
    assert_int_equal(fake.maps - maps, 1);
    fake_hold_events(false);
    settle();
    assert_true(holds(p, 8 * MiB, 3));
    release(p, false);
    shim_resid_stop(); /* the mover ends; moves complete when the test waits again */
}

/* The mover remaps with the residency lock dropped: while its map call is in progress, another
   thread can take the lock (a launch touching other units does not wait for the remap), and a
   touch of the moving unit afterwards finds it moved, its data whole. */
static void test_remap_runs_without_the_lock(void **state)
{
    (void)state;
    r->stopping = false; /* with a mover thread (the other tests run without) */
    CUdeviceptr p = alloc(8 * MiB), q = alloc(4 * MiB);
    fill(p, 8 * MiB, 9);
    evict_by_hand(p); /* a first trip pools a host chunk of its size */
    settle();
    touch(p);
    settle();
    fake_gate_map(true);
    evict_by_hand(p); /* the mover completes it: its remap waits at the gate */
    bool entered = eventually(mover_in_map, p);
    bool free_lock = pthread_mutex_trylock(&r->lock) == 0;
    if (free_lock)
        pthread_mutex_unlock(&r->lock);
    fake_gate_map(false);
    assert_true(entered);
    assert_true(free_lock);
    touch(q); /* another unit: never waits for p's move */
    settle();
    assert_true(fake_on_host(p));
    touch(p);
    settle();
    assert_false(fake_on_host(p));
    assert_true(holds(p, 8 * MiB, 9));
    release(p, false);
    release(q, false);
    shim_resid_stop();
}

int main(void)
{
    fake_reset();
    r = &resid_ctxs[0];
    resid_ctx_init(r, NULL);
    shim.mode = CONF_MODE_AUTO;
    shim.record = 0;
    r->stopping = true; /* no mover thread: moves complete when the test waits */
    if (!resid_start_with(r, &fake_driver))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_evict_and_restore_keep_data, setup),
        cmocka_unit_test_setup(test_moves_keep_every_byte, setup),
        cmocka_unit_test_setup(test_move_waits_for_the_streams_that_touched, setup),
        cmocka_unit_test_setup(test_restore_is_ordered_on_the_device, setup),
        cmocka_unit_test_setup(test_policy_seam_chooses_victim, setup),
        cmocka_unit_test_setup(test_failed_remap_rolls_back, setup),
        cmocka_unit_test_setup(test_half_failed_move_maps_again_at_next_touch, setup),
        cmocka_unit_test_setup(test_single_failures_never_reach_the_program, setup),
        cmocka_unit_test_setup(test_cancel_keeps_device_copy, setup),
        cmocka_unit_test_setup(test_cancelled_copy_fences_freed_chunks, setup),
        cmocka_unit_test_setup(test_no_restore_under_a_host_read_in_progress, setup),
        cmocka_unit_test_setup(test_room_from_done_moves_before_waiting, setup),
        cmocka_unit_test_setup(test_wait_is_bounded, setup),
        cmocka_unit_test_setup(test_sticky_error_reaches_the_program, setup),
        cmocka_unit_test_setup(test_small_allocations_share_slabs, setup),
        cmocka_unit_test_setup(test_cancelled_slab_copy_fences_every_member, setup),
        cmocka_unit_test_setup(test_small_allocations_fit_a_tight_budget, setup),
        cmocka_unit_test_setup(test_oversized_allocation_is_out_of_memory, setup),
        cmocka_unit_test_setup(test_budget_short_by_set_aside_chunks_steps_aside, setup),
        cmocka_unit_test_setup(test_single_failed_reservation_is_tried_again, setup),
        cmocka_unit_test_setup(test_persistent_failure_steps_aside, setup),
        cmocka_unit_test_setup(test_failures_on_other_threads_are_counted, setup),
        cmocka_unit_test_setup(test_allocation_waits_for_submissions_in_progress, setup),
        cmocka_unit_test_setup(test_contended_allocation_is_made_on_the_host, setup),
        cmocka_unit_test_setup(test_freed_range_is_reused_without_vmm_calls, setup),
        cmocka_unit_test_setup(test_spares_give_room_before_anything_moves, setup),
        cmocka_unit_test_setup(test_pending_free_range_reused_in_stream_order, setup),
        cmocka_unit_test_setup(test_stream_frees_fenced_together, setup),
        cmocka_unit_test_setup(test_remap_host_time_is_measured, setup),
        cmocka_unit_test_setup(test_a_move_remaps_one_handle, setup),
        cmocka_unit_test_setup(test_pool_gives_other_sizes_back_for_one_handle, setup),
        cmocka_unit_test_setup(test_restore_is_remapped_by_the_mover, setup),
        cmocka_unit_test_setup(test_remap_runs_without_the_lock, setup),
        /* last: it puts the step detector in steady state */
        cmocka_unit_test_setup(test_reactive_policy_predicts_from_the_last_step, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
