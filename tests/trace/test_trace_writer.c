/* test_trace_writer.c — the trace writer end to end: every record kind from several threads read
 * back exactly by the reader, residency records at their limits, file creation (mode 0600,
 * O_EXCL, %p/%r/%%), start/stop rules, drops counted when the writer falls behind, fork, and
 * the size limit (detail, then step summaries read back exactly) and write errors (a file size
 * limit in a child). */
#include "report_trace.h"
#include "shim_trace.h"
#include "shim_trace_format.h"
#include "shim_trace_internal.h"
#include "trace_bytes.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 6
#define ROUNDS  400
#define KINDS   17 /* record kinds each round writes */

static char dir[64];

/* The forked child pid ran to its end with status 0 (the test fails otherwise). */
static void child_exited_ok(pid_t pid)
{
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void path_in_dir(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", dir, name);
}

static void start_or_fail(const char *path)
{
    char err[256] = "";
    struct shim_trace_info info = {(int)getpid(), 0, "test_trace_writer", "a = 1\n", 0, 0, NULL};
    if (shim_trace_start(path, &info, err, sizeof err) != 0)
        fail_msg("start %s: %s", path, err);
}

static size_t count_kind(const report_trace *t, uint16_t kind)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += t->recs[i].kind == kind;
    return n;
}

/* ---- every kind from several threads ---- */

/* Values of thread k, round i: distinct across threads and rounds. */
#define V(k, i, f) (((uint64_t)(k) << 40) | ((uint64_t)(i) << 8) | (f))

static void *record_all(void *arg)
{
    uint64_t k = (uint64_t)(uintptr_t)arg;
    char text[64];
    for (uint64_t i = 0; i < ROUNDS; i++) {
        uint64_t ids[5] = {V(k, i, 10), V(k, i, 11), V(k, i, 12), V(k, i, 13), V(k, i, 14)};
        snprintf(text, sizeof text, "kernel_%llu_%llu", (unsigned long long)k,
                 (unsigned long long)i);
        shim_trace_func_name(V(k, i, 1), text);
        shim_trace_alloc(V(k, i, 2), V(k, i, 3), V(k, i, 4), PLAN_MEM_ASYNC, V(k, i, 5));
        shim_trace_launch(V(k, i, 6), V(k, i, 1), V(k, i, 5), ids, (uint32_t)(i % 6));
        shim_trace_kernel_time(V(k, i, 6), (double)i + 0.25);
        shim_trace_copy(SHIM_COPY_D2D, V(k, i, 2), V(k, i, 7), V(k, i, 4), V(k, i, 5));
        shim_trace_sync(SHIM_SYNC_STREAM, V(k, i, 5));
        shim_trace_step(V(k, i, 8), V(k, i, 6));
        shim_trace_graph_launch(V(k, i, 9), V(k, i, 5));
        shim_trace_free(V(k, i, 2), V(k, i, 5));
        shim_trace_note(text);
        shim_trace_budget(V(k, i, 16), V(k, i, 17), V(k, i, 18), (uint32_t)(k + i) % 7);
        shim_trace_move(i % 2 ? SHIM_MOVE_TO_DEVICE : SHIM_MOVE_TO_HOST, V(k, i, 19), V(k, i, 20),
                        V(k, i, 21), V(k, i, 22), (enum shim_move_reason)(1 + i % 4),
                        (uint32_t)(k + i) % 5);
        shim_trace_stall(V(k, i, 23), V(k, i, 24), (enum shim_move_reason)(1 + (i + 1) % 4),
                         (uint32_t)(k + i) % 3);
        struct shim_trace_transition tr = {V(k, i, 25),           V(k, i, 26),
                                           V(k, i, 27),           V(k, i, 28),
                                           V(k, i, 29),           V(k, i, 30),
                                           (uint8_t)(i % 5),      (uint8_t)((i + 1) % 5),
                                           (uint8_t)(1 + i % 6),  (uint8_t)(1 + i % 7),
                                           (uint32_t)(k + i) % 11};
        shim_trace_transition(&tr);
        shim_trace_slab(V(k, i, 31), V(k, i, 32), V(k, i, 33), (uint32_t)(k + i) % 13);
        struct shim_trace_plan plan = {
            V(k, i, 34),       V(k, i, 35), V(k, i, 36), V(k, i, 37),      V(k, i, 38),
            V(k, i, 39),       V(k, i, 40), V(k, i, 41), (double)i + 0.5,  (double)i + 0.25,
            -(double)i,        (double)k,   V(k, i, 42), V(k, i, 43),      (uint32_t)(k * 1000 + i),
            (uint32_t)(i + 7), i % 2 == 0,  V(k, i, 44), (double)k + 0.125};
        shim_trace_plan(&plan);
        struct shim_trace_plan_step ps = {V(k, i, 50), V(k, i, 51), V(k, i, 52), V(k, i, 53),
                                          V(k, i, 54), V(k, i, 55), V(k, i, 56), V(k, i, 57),
                                          V(k, i, 58), V(k, i, 59)};
        shim_trace_plan_step(&ps);
    }
    return NULL;
}

/* Checks record r as thread k's round i wrote it; returns the round. */
static uint64_t check_record(const report_trace *t, const report_rec *r, uint64_t *k_out)
{
    const report_plan *plan = r->kind == SHIM_TRACE_PLAN ? &t->plans[r->a] : NULL;
    const report_plan_step *ps = r->kind == SHIM_TRACE_PLAN_STEP ? &t->plan_steps[r->a] : NULL;
    uint64_t key = r->kind == SHIM_TRACE_SYNC    ? r->d
                   : r->kind == SHIM_TRACE_STALL ? r->c
                   : r->kind == SHIM_TRACE_NOTE  ? 0
                   : plan                        ? plan->first_seq
                   : ps                          ? ps->step
                                                 : r->a;
    if (r->kind == SHIM_TRACE_NOTE) {
        unsigned long long kk, ii;
        assert_int_equal(sscanf(t->text + r->text, "kernel_%llu_%llu", &kk, &ii), 2);
        *k_out = kk;
        return ii;
    }
    uint64_t k = key >> 40, i = (key >> 8) & 0xffffffff;
    *k_out = k;
    switch (r->kind) {
    case SHIM_TRACE_FUNC_NAME: {
        char want[64];
        snprintf(want, sizeof want, "kernel_%llu_%llu", (unsigned long long)k,
                 (unsigned long long)i);
        assert_string_equal(t->text + r->text, want);
        break;
    }
    case SHIM_TRACE_ALLOC:
        assert_int_equal(r->b, V(k, i, 3));
        assert_int_equal(r->c, V(k, i, 4));
        assert_int_equal(r->d, V(k, i, 5));
        assert_int_equal(r->sub, PLAN_MEM_ASYNC);
        break;
    case SHIM_TRACE_LAUNCH:
        assert_int_equal(r->b, V(k, i, 1));
        assert_int_equal(r->d, V(k, i, 5));
        assert_int_equal(r->c, i % 6);
        assert_int_equal(r->n_ids, i % 6);
        for (uint32_t j = 0; j < r->n_ids; j++)
            assert_int_equal(t->ids[r->ids + j], V(k, i, 10 + j));
        break;
    case SHIM_TRACE_KERNEL_TIME:
        assert_true(r->usec == (double)i + 0.25);
        break;
    case SHIM_TRACE_COPY:
        assert_int_equal(r->b, V(k, i, 7));
        assert_int_equal(r->c, V(k, i, 4));
        assert_int_equal(r->d, V(k, i, 5));
        assert_int_equal(r->sub, SHIM_COPY_D2D);
        break;
    case SHIM_TRACE_SYNC:
        assert_int_equal(r->sub, SHIM_SYNC_STREAM);
        break;
    case SHIM_TRACE_STEP:
        assert_int_equal(r->b, V(k, i, 6));
        break;
    case SHIM_TRACE_GRAPH_LAUNCH:
    case SHIM_TRACE_FREE:
        assert_int_equal(r->d, V(k, i, 5));
        break;
    case SHIM_TRACE_BUDGET:
        assert_int_equal(r->a, V(k, i, 16));
        assert_int_equal(r->b, V(k, i, 17));
        assert_int_equal(r->c, V(k, i, 18));
        assert_int_equal(r->d, (k + i) % 7);
        break;
    case SHIM_TRACE_MOVE:
        assert_int_equal(r->a, V(k, i, 19));
        assert_int_equal(r->b, V(k, i, 20));
        assert_int_equal(r->c, V(k, i, 21));
        assert_int_equal(r->d, V(k, i, 22));
        assert_int_equal(r->e, (k + i) % 5);
        assert_int_equal(r->sub, i % 2 ? SHIM_MOVE_TO_DEVICE : SHIM_MOVE_TO_HOST);
        assert_int_equal(r->sub2, 1 + i % 4);
        break;
    case SHIM_TRACE_STALL:
        assert_int_equal(r->c, V(k, i, 23));
        assert_int_equal(r->d, V(k, i, 24));
        assert_int_equal(r->e, (k + i) % 3);
        assert_int_equal(r->sub2, 1 + (i + 1) % 4);
        break;
    case SHIM_TRACE_TRANSITION:
        assert_int_equal(r->a, V(k, i, 25));
        assert_int_equal(r->b, V(k, i, 26));
        assert_int_equal(r->d, V(k, i, 27)); /* stream */
        assert_int_equal(r->c, V(k, i, 28)); /* seq */
        assert_int_equal(r->e, V(k, i, 29));
        assert_int_equal(r->f, V(k, i, 30));
        assert_int_equal(r->sub3, i % 5);
        assert_int_equal(r->sub4, (i + 1) % 5);
        assert_int_equal(r->sub, 1 + i % 6);
        assert_int_equal(r->sub2, 1 + i % 7);
        assert_int_equal(r->device, (k + i) % 11);
        break;
    case SHIM_TRACE_SLAB:
        assert_int_equal(r->a, V(k, i, 31));
        assert_int_equal(r->b, V(k, i, 32));
        assert_int_equal(r->c, V(k, i, 33));
        assert_int_equal(r->device, (k + i) % 13);
        break;
    case SHIM_TRACE_PLAN: {
        const uint64_t got[] = {
            plan->model_step,   plan->model_first_seq,      plan->step_len,
            plan->budget_bytes, plan->predicted_peak_bytes, plan->native_peak_bytes,
            plan->floor_bytes};
        for (uint64_t f = 0; f < 7; f++)
            assert_int_equal(got[f], V(k, i, 35 + f));
        assert_true(plan->native_us == (double)i + 0.5 && plan->predicted_us == (double)i + 0.25);
        assert_true(plan->stall_us == -(double)i && plan->bound_us == (double)k);
        assert_int_equal(plan->bytes_to_host, V(k, i, 42));
        assert_int_equal(plan->bytes_to_device, V(k, i, 43));
        assert_int_equal(plan->evictions, k * 1000 + i);
        assert_int_equal(plan->prefetches, i + 7);
        assert_int_equal(plan->feasible, i % 2 == 0);
        assert_int_equal(plan->t_ns, r->t_ns);
        break;
    }
    case SHIM_TRACE_PLAN_STEP: {
        const uint64_t got[] = {ps->first_seq,     ps->evictions,       ps->prefetches,
                                ps->missing,       ps->departures,      ps->reactive_evictions,
                                ps->bytes_to_host, ps->bytes_to_device, ps->stall_ns};
        for (uint64_t f = 0; f < 9; f++)
            assert_int_equal(got[f], V(k, i, 51 + f));
        break;
    }
    default:
        fail_msg("unexpected record kind %u", r->kind);
    }
    return i;
}

static void every_kind_from_threads(void **state)
{
    (void)state;
    char path[128];
    path_in_dir(path, sizeof path, "threads.trace");
    start_or_fail(path);
    assert_int_equal(shim_trace_active(), 1);
    pthread_t th[THREADS];
    for (uintptr_t k = 0; k < THREADS; k++)
        assert_int_equal(pthread_create(&th[k], NULL, record_all, (void *)k), 0);
    for (int k = 0; k < THREADS; k++)
        pthread_join(th[k], NULL);
    shim_trace_stop();
    assert_int_equal(shim_trace_active(), 0);

    report_trace t;
    load_or_fail(&t, path);
    assert_true(t.complete);
    assert_false(t.truncated);
    assert_int_equal(t.dropped, 0);
    assert_int_equal(t.n, (size_t)THREADS * ROUNDS * KINDS);
    assert_int_equal(t.major, 1);
    assert_int_equal(t.minor, SHIM_TRACE_MINOR);
    assert_int_equal(t.nplans, (size_t)THREADS * ROUNDS);
    assert_int_equal(t.nplan_steps, (size_t)THREADS * ROUNDS);
    assert_int_equal(t.end_records, t.n);
    assert_string_equal(t.command, "test_trace_writer");
    assert_string_equal(t.config, "a = 1\n");
    assert_int_equal(t.pid, getpid());
    /* seen[k][i] has one bit per kind: every record arrives once, with its thread's tid */
    static uint32_t seen[THREADS][ROUNDS];
    uint32_t tid_of[THREADS] = {0};
    memset(seen, 0, sizeof seen);
    for (size_t n = 0; n < t.n; n++) {
        const report_rec *r = &t.recs[n];
        uint64_t k, i = check_record(&t, r, &k);
        assert_in_range(k, 0, THREADS - 1);
        assert_in_range(i, 0, ROUNDS - 1);
        assert_false(seen[k][i] & (1u << r->kind));
        seen[k][i] |= 1u << r->kind;
        if (tid_of[k] == 0)
            tid_of[k] = r->tid;
        assert_int_equal(r->tid, tid_of[k]);
        assert_true(r->t_ns >= t.start_ns);
    }
    for (int k = 0; k < THREADS; k++) {
        for (int j = 0; j < k; j++)
            assert_int_not_equal(tid_of[j], tid_of[k]);
        for (int i = 0; i < ROUNDS; i++)
            assert_int_equal(seen[k][i], 0x7f7fe); /* kinds 1..10 and 12..18 */
    }
    report_trace_free(&t);
}

/* ---- long names and long id lists are cut, and say so ---- */

static void long_fields_are_cut(void **state)
{
    (void)state;
    char path[128];
    path_in_dir(path, sizeof path, "long.trace");
    size_t len = SHIM_TRACE_TEXT_MAX + 100;
    char *name = malloc(len + 1);
    uint64_t *ids = malloc(sizeof *ids * (SHIM_TRACE_IDS_MAX + 10));
    assert_non_null(name);
    assert_non_null(ids);
    memset(name, 'n', len);
    name[len] = '\0';
    for (uint64_t i = 0; i < SHIM_TRACE_IDS_MAX + 10; i++)
        ids[i] = i + 1;
    start_or_fail(path);
    shim_trace_func_name(7, name);
    shim_trace_launch(0, 7, 0, ids, SHIM_TRACE_IDS_MAX + 10);
    shim_trace_launch(1, 7, 0, NULL, 3);
    shim_trace_note("");
    shim_trace_note(NULL);
    shim_trace_stop();
    report_trace t;
    load_or_fail(&t, path);
    assert_int_equal(t.n, 5);
    assert_int_equal(strlen(t.text + t.recs[0].text), SHIM_TRACE_TEXT_MAX);
    assert_int_equal(t.recs[1].c, SHIM_TRACE_IDS_MAX + 10);
    assert_int_equal(t.recs[1].n_ids, SHIM_TRACE_IDS_MAX);
    assert_int_equal(t.ids[t.recs[1].ids + SHIM_TRACE_IDS_MAX - 1], SHIM_TRACE_IDS_MAX);
    assert_int_equal(t.recs[2].c, 3);
    assert_int_equal(t.recs[2].n_ids, 0);
    assert_string_equal(t.text + t.recs[3].text, "");
    report_trace_free(&t);
    free(name);
    free(ids);
}

/* ---- residency records at their limits, and what the statistics make of them ---- */

static void residency_records_exact(void **state)
{
    (void)state;
    char path[128];
    path_in_dir(path, sizeof path, "residency.trace");
    start_or_fail(path);
    shim_trace_budget(0, UINT64_MAX, 1, 0);
    shim_trace_move(SHIM_MOVE_TO_HOST, 5, UINT64_MAX, 100, 50, SHIM_REASON_CANCELLED, 0);
    shim_trace_move(SHIM_MOVE_TO_HOST, 6, 3, 10, 20, SHIM_REASON_BUDGET, 0);
    shim_trace_move((enum shim_move_dir)9, 7, 1000, 10, 20, (enum shim_move_reason)77, 0);
    shim_trace_move(SHIM_MOVE_TO_DEVICE, 8, 4, 30, 31, SHIM_REASON_PREFETCH, 0);
    shim_trace_stall(UINT64_MAX - 1, UINT64_MAX, SHIM_REASON_DEMAND, 0);
    shim_trace_stall(500, 400, SHIM_REASON_BUDGET, 0); /* ends before it starts: no time */
    shim_trace_stop();
    report_trace t;
    load_or_fail(&t, path);
    assert_int_equal(t.n, 7);
    assert_int_equal(t.skipped_records, 0);
    const report_rec *r = t.recs;
    assert_int_equal(r[0].kind, SHIM_TRACE_BUDGET);
    assert_int_equal(r[0].a, 0);
    assert_int_equal(r[0].b, UINT64_MAX);
    assert_int_equal(r[0].c, 1);
    assert_int_equal(r[1].kind, SHIM_TRACE_MOVE);
    assert_int_equal(r[1].a, 5);
    assert_int_equal(r[1].b, UINT64_MAX);
    assert_int_equal(r[1].c, 100);
    assert_int_equal(r[1].d, 50);
    assert_int_equal(r[1].sub, SHIM_MOVE_TO_HOST);
    assert_int_equal(r[1].sub2, SHIM_REASON_CANCELLED);
    assert_int_equal(r[3].sub, 9); /* values the enums lack travel as they are */
    assert_int_equal(r[3].sub2, 77);
    assert_int_equal(r[5].kind, SHIM_TRACE_STALL);
    assert_int_equal(r[5].c, UINT64_MAX - 1);
    assert_int_equal(r[5].d, UINT64_MAX);
    assert_int_equal(r[5].sub2, SHIM_REASON_DEMAND);
    report_stats s;
    assert_int_equal(report_stats_compute(&s, &t), 0);
    assert_int_equal(s.budgets, 1);
    assert_int_equal(s.budget_bytes, 0);
    assert_int_equal(s.host_budget_bytes, UINT64_MAX);
    assert_int_equal(s.device_total, 1);
    assert_int_equal(s.residency.moves.evictions, 1);
    assert_int_equal(s.residency.moves.cancelled_evictions, 1);
    assert_int_equal(s.residency.moves.cancelled_bytes, UINT64_MAX);
    assert_int_equal(s.residency.moves.bytes_to_host, UINT64_MAX); /* saturated, not wrapped */
    assert_int_equal(s.residency.moves.restores, 1);
    assert_int_equal(s.residency.moves.bytes_to_device, 4);
    assert_int_equal(s.odd_moves, 1);
    assert_int_equal(s.residency.stalls, 2);
    assert_int_equal(s.residency.stall_ns, 1);
    report_stats_free(&s);
    report_trace_free(&t);
}

/* ---- the file ---- */

static void mode_0600_and_exclusive(void **state)
{
    (void)state;
    char path[128], err[256] = "";
    path_in_dir(path, sizeof path, "excl.trace");
    mode_t old = umask(0277); /* would leave the owner read-only without the writer's fchmod */
    start_or_fail(path);
    umask(old);
    struct shim_trace_info info = {1, 0, NULL, NULL, 0, 0, NULL};
    assert_int_equal(shim_trace_start(path, &info, err, sizeof err), -1);
    assert_non_null(strstr(err, "already started"));
    shim_trace_stop();
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    off_t size = st.st_size;
    err[0] = '\0';
    assert_int_equal(shim_trace_start(path, &info, err, sizeof err), -1);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "already exists"));
    assert_int_equal(shim_trace_active(), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, size); /* untouched */
    char missing[160];
    path_in_dir(missing, sizeof missing, "no/such/dir/x.trace");
    assert_int_equal(shim_trace_start(missing, &info, err, sizeof err), -1);
    assert_non_null(strstr(err, "No such file or directory"));
}

static void pattern_expansion(void **state)
{
    (void)state;
    /* the expander itself is tested in tests/shim/test_path.c; here, through start: the file
       has the pid and rank of the info, and a bad pattern is refused naming trace.path */
    char err[256];
    assert_int_equal(shim_trace_start("a%q", NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "trace.path \"a%q\": unknown '%q'"));
    char pattern[128], path[128];
    path_in_dir(pattern, sizeof pattern, "pat-%p-r%r-%%.trace");
    struct shim_trace_info info = {4321, 12, NULL, NULL, 0, 0, NULL};
    assert_int_equal(shim_trace_start(pattern, &info, err, sizeof err), 0);
    shim_trace_stop();
    path_in_dir(path, sizeof path, "pat-4321-r12-%.trace");
    assert_int_equal(access(path, F_OK), 0);
    report_trace t;
    load_or_fail(&t, path);
    assert_int_equal(t.pid, 4321);
    assert_int_equal(t.rank, 12);
    assert_int_equal(t.n, 0);
    assert_true(t.complete);
    report_trace_free(&t);
}

/* Records outside a session are ignored; stop is idempotent; a new session starts clean. */
static void sessions(void **state)
{
    (void)state;
    char a[128], b[128];
    path_in_dir(a, sizeof a, "s1.trace");
    path_in_dir(b, sizeof b, "s2.trace");
    shim_trace_stop(); /* nothing to stop */
    shim_trace_free(1, 0);
    start_or_fail(a);
    shim_trace_free(2, 0);
    shim_trace_stop();
    shim_trace_stop();
    shim_trace_free(3, 0);
    start_or_fail(b);
    shim_trace_free(4, 0);
    shim_trace_stop();
    report_trace t;
    load_or_fail(&t, a);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.recs[0].a, 2);
    report_trace_free(&t);
    load_or_fail(&t, b);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.recs[0].a, 4);
    report_trace_free(&t);
}

/* ---- drops: the writer is held back, so the ring fills ---- */

static void drops_are_counted(void **state)
{
    (void)state;
    char path[128];
    path_in_dir(path, sizeof path, "drops.trace");
    start_or_fail(path);
    shim_trace_writer_hold(1);
    const uint64_t sent = 3 * SHIM_TRACE_RING_BYTES / 32; /* free records are 32 bytes */
    for (uint64_t i = 0; i < sent; i++)
        shim_trace_free(i + 1, 0);
    shim_trace_writer_hold(0);
    shim_trace_stop();
    report_trace t;
    load_or_fail(&t, path);
    size_t frees = count_kind(&t, SHIM_TRACE_FREE);
    assert_true(frees <= SHIM_TRACE_RING_BYTES / 32);
    assert_true(frees >= SHIM_TRACE_RING_BYTES / 32 / 2);
    assert_int_equal(frees + t.dropped, sent);
    assert_int_equal(t.end_dropped, t.dropped);
    assert_int_equal(count_kind(&t, SHIM_TRACE_DROPPED), 1);
    for (size_t i = 0; i < t.n; i++) /* the records kept are the first ones, in order */
        if (t.recs[i].kind == SHIM_TRACE_FREE)
            assert_int_equal(t.recs[i].a, i + 1);
    report_trace_free(&t);
}

/* ---- fork: the child forgets, the parent's file is whole ---- */

static void fork_child_forgets(void **state)
{
    (void)state;
    char path[128];
    path_in_dir(path, sizeof path, "fork.trace");
    start_or_fail(path);
    shim_trace_free(1, 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        shim_trace_forget_after_fork();
        int bad = shim_trace_active() != 0;
        shim_trace_free(2, 0);
        shim_trace_stop();
#ifndef __SANITIZE_THREAD__ /* TSan does not support new threads after a threaded fork */
        /* the child may trace again, to its own file */
        char child[128], err[256];
        path_in_dir(child, sizeof child, "fork-child.trace");
        struct shim_trace_info info = {(int)getpid(), 1, NULL, NULL, 0, 0, NULL};
        bad |= shim_trace_start(child, &info, err, sizeof err) != 0;
        shim_trace_free(5, 0);
        shim_trace_stop();
#endif
        _exit(bad ? 3 : 0);
    }
    child_exited_ok(pid);
    shim_trace_free(3, 0);
    shim_trace_stop();
    report_trace t;
    load_or_fail(&t, path);
    assert_true(t.complete);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.recs[0].a, 1);
    assert_int_equal(t.recs[1].a, 3);
    report_trace_free(&t);
#ifndef __SANITIZE_THREAD__
    path_in_dir(path, sizeof path, "fork-child.trace");
    load_or_fail(&t, path);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.recs[0].a, 5);
    assert_int_equal(t.rank, 1);
    report_trace_free(&t);
#endif
}

/* ---- a signal handler that records while its thread is in the middle of a record ---- */

static volatile sig_atomic_t handled;
static _Atomic int pestering;

static void on_usr1(int sig)
{
    (void)sig;
    shim_trace_sync(SHIM_SYNC_EVENT, 5);
    handled++;
}

static void *pester(void *arg)
{
    pthread_t target = *(pthread_t *)arg;
    for (int i = 0; i < 400; i++) {
        pthread_kill(target, SIGUSR1);
        usleep(200);
    }
    atomic_store(&pestering, 0);
    return NULL;
}

/* Every record arrives whole or is counted as dropped; none is overwritten by the handler's. */
static void signal_handler_records(void **state)
{
    (void)state;
    char path[128];
    path_in_dir(path, sizeof path, "signal.trace");
    struct sigaction sa = {.sa_handler = on_usr1}, old;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
    start_or_fail(path);
    handled = 0;
    atomic_store(&pestering, 1);
    pthread_t self = pthread_self(), th;
    assert_int_equal(pthread_create(&th, NULL, pester, &self), 0);
    uint64_t sent = 0;
    while (atomic_load(&pestering)) {
        shim_trace_free(++sent, 0);
        if (sent % 64 == 0)
            usleep(10); /* lets the writer keep up most of the time */
    }
    pthread_join(th, NULL);
    shim_trace_stop();
    sigaction(SIGUSR1, &old, NULL);
    report_trace t;
    load_or_fail(&t, path);
    size_t frees = count_kind(&t, SHIM_TRACE_FREE), syncs = count_kind(&t, SHIM_TRACE_SYNC);
    assert_int_equal(frees + syncs + t.dropped, sent + (uint64_t)handled);
    assert_true(syncs > 0);
    uint64_t last = 0;
    for (size_t i = 0; i < t.n; i++) {
        const report_rec *r = &t.recs[i];
        if (r->kind == SHIM_TRACE_SYNC)
            assert_int_equal(r->d, 5);
        else if (r->kind == SHIM_TRACE_FREE) {
            assert_true(r->a > last && r->a <= sent);
            last = r->a;
        }
    }
    report_trace_free(&t);
}

/* A child that never calls forget: stop and start notice the new pid and forget first. */
static void fork_child_without_forget(void **state)
{
    (void)state;
    char path[128], child[128];
    path_in_dir(path, sizeof path, "fork2.trace");
    path_in_dir(child, sizeof child, "fork2-child.trace");
    start_or_fail(path);
    shim_trace_free(1, 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int bad = 0;
#ifndef __SANITIZE_THREAD__ /* TSan does not support new threads after a threaded fork */
        char err[256];
        struct shim_trace_info info = {(int)getpid(), 2, NULL, NULL, 0, 0, NULL};
        bad |= shim_trace_start(child, &info, err, sizeof err) != 0;
        shim_trace_free(6, 0);
#endif
        shim_trace_stop();
        bad |= shim_trace_active() != 0;
        _exit(bad ? 3 : 0);
    }
    child_exited_ok(pid);
    shim_trace_free(3, 0);
    shim_trace_stop();
    report_trace t;
    load_or_fail(&t, path);
    assert_true(t.complete);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.recs[1].a, 3);
    report_trace_free(&t);
#ifndef __SANITIZE_THREAD__
    load_or_fail(&t, child);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.recs[0].a, 6);
    assert_int_equal(t.rank, 2);
    report_trace_free(&t);
#endif
}

/* A thread still alive at stop: its records are flushed too. */
static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int recorded, released;

static void *record_then_wait(void *arg)
{
    (void)arg;
    shim_trace_sync(SHIM_SYNC_CTX, 99);
    pthread_mutex_lock(&gate);
    recorded = 1;
    pthread_cond_broadcast(&gate_cv);
    while (!released)
        pthread_cond_wait(&gate_cv, &gate);
    pthread_mutex_unlock(&gate);
    return NULL;
}

static void live_thread_flushed_at_stop(void **state)
{
    (void)state;
    char path[128];
    path_in_dir(path, sizeof path, "live.trace");
    start_or_fail(path);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, record_then_wait, NULL), 0);
    pthread_mutex_lock(&gate);
    while (!recorded)
        pthread_cond_wait(&gate_cv, &gate);
    pthread_mutex_unlock(&gate);
    shim_trace_stop();
    pthread_mutex_lock(&gate);
    released = 1;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate);
    pthread_join(th, NULL);
    report_trace t;
    load_or_fail(&t, path);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.recs[0].kind, SHIM_TRACE_SYNC);
    assert_int_equal(t.recs[0].d, 99);
    report_trace_free(&t);
}

static size_t count_rings(void)
{
    size_t n = 0;
    pthread_mutex_lock(&shim_trace_g.reg_lock);
    for (struct shim_trace_ring *r = shim_trace_g.rings; r != NULL; r = r->next)
        n++;
    pthread_mutex_unlock(&shim_trace_g.reg_lock);
    return n;
}

static void *record_one(void *arg)
{
    shim_trace_free((uint64_t)(uintptr_t)arg, 0);
    return NULL;
}

/* A thread's ring is freed after it exits: by the writer during a session, at stop, or by the
   thread itself when no session is running. */
static void rings_of_exited_threads_are_freed(void **state)
{
    (void)state;
    char path[128];
    path_in_dir(path, sizeof path, "rings.trace");
    size_t before = count_rings();
    start_or_fail(path);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, record_one, (void *)1), 0);
    pthread_join(th, NULL);
    shim_trace_stop();
    assert_int_equal(count_rings(), before);

    path_in_dir(path, sizeof path, "rings2.trace");
    start_or_fail(path);
    pthread_mutex_lock(&gate);
    recorded = released = 0;
    pthread_mutex_unlock(&gate);
    assert_int_equal(pthread_create(&th, NULL, record_then_wait, NULL), 0);
    pthread_mutex_lock(&gate);
    while (!recorded)
        pthread_cond_wait(&gate_cv, &gate);
    pthread_mutex_unlock(&gate);
    assert_int_equal(count_rings(), before + 1);
    shim_trace_stop();
    pthread_mutex_lock(&gate);
    released = 1;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate);
    pthread_join(th, NULL); /* exits with no session running */
    assert_int_equal(count_rings(), before);
    report_trace t;
    load_or_fail(&t, path);
    assert_int_equal(t.n, 1);
    report_trace_free(&t);
}

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/test_trace_writer.XXXXXX");
    return mkdtemp(dir) == NULL ? -1 : 0;
}

static int remove_dir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- the size limit (format 1.4): detail, then step summaries; write errors ---- */

#define MIB (1024ull * 1024)

static char said[8][256]; /* what the writer said through the log callback */
static int nsaid, said_level[8];

static void say(int level, const char *msg)
{
    if (nsaid < 8) {
        snprintf(said[nsaid], sizeof said[nsaid], "%s", msg);
        said_level[nsaid] = level;
    }
    nsaid++;
}

static void sleep_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

/* Returns once the writer has read everything this thread recorded: a test that records fast
   pauses there, so that nothing is dropped however loaded the machine (or slow the sanitizer). */
static void wait_drained(void)
{
    struct shim_trace_ring *r = shim_trace_tls_ring;
    while (r != NULL && atomic_load(&r->tail) != atomic_load(&r->head))
        sleep_us(200);
}

/* n steps as the detector marks them, after a 4 MiB weight and one warm-up launch: step i has
   a 2 MiB activation, three launches, a copy, the closing sync and its step record; an 8 MiB
   temporary when i % 4 == 1 (peak 14 MiB, else 6 MiB); a budget eviction and a prefetch of
   1 MiB when i is even; a stall of 1000 ns when i % 3 == 0. The weight is freed after the last
   step. Every 32 steps it waits for the writer to catch up (no record is dropped). */
static void record_steps(uint64_t n)
{
    uint64_t seq = 0;
    shim_trace_alloc(1, 0x1000000, 4 * MIB, PLAN_MEM_PLAIN, 0);
    shim_trace_launch(seq++, 7, 0, NULL, 0);
    shim_trace_sync(SHIM_SYNC_CTX, 0);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t act = 1000 + i, first = seq, ids[2] = {1, act}, t = shim_trace_now_ns();
        shim_trace_alloc(act, 0x2000000, 2 * MIB, PLAN_MEM_ASYNC, 9);
        shim_trace_launch(seq++, 7, 9, ids, 2);
        if (i % 4 == 1) {
            shim_trace_alloc(1000000 + i, 0x4000000, 8 * MIB, PLAN_MEM_PLAIN, 0);
            shim_trace_free(1000000 + i, 0);
        }
        shim_trace_launch(seq++, 8, 9, &act, 1);
        if (i % 2 == 0) { /* moves and stalls start in the step (at t), whatever they last */
            shim_trace_move(SHIM_MOVE_TO_HOST, act, MIB, t, t + 500, SHIM_REASON_BUDGET, 0);
            shim_trace_move(SHIM_MOVE_TO_DEVICE, act, MIB, t + 1, t + 900, SHIM_REASON_PREFETCH, 0);
        }
        if (i % 3 == 0)
            shim_trace_stall(t + 2, t + 1002, SHIM_REASON_DEMAND, 0);
        shim_trace_launch(seq++, 7, 9, ids, 2);
        shim_trace_copy(SHIM_COPY_D2H, 0, act, 4096, 9);
        shim_trace_free(act, 9);
        shim_trace_sync(SHIM_SYNC_STREAM, 9);
        shim_trace_step(i, first);
        if (i % 32 == 31)
            wait_drained();
    }
    shim_trace_free(1, 0);
}

static void start_limited(const char *path, uint64_t max_bytes)
{
    char err[256] = "";
    struct shim_trace_info info = {(int)getpid(), 0, "test_trace_writer", NULL, 0, max_bytes, say};
    nsaid = 0;
    if (shim_trace_start(path, &info, err, sizeof err) != 0)
        fail_msg("start %s: %s", path, err);
}

static off_t file_size(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return st.st_size;
}

/* The summary of step i alone, as record_steps made it. */
static void check_one_step(const report_summary *m, uint64_t i)
{
    assert_int_equal(m->steps, 1);
    assert_int_equal(m->first_seq, 1 + 3 * i);
    assert_int_equal(m->launches, 3);
    assert_int_equal(m->allocations, i % 4 == 1 ? 2 : 1);
    assert_int_equal(m->frees, i % 4 == 1 ? 2 : 1);
    assert_int_equal(m->copies, 1);
    assert_int_equal(m->syncs, 1);
    assert_int_equal(m->peak_device_bytes, (i % 4 == 1 ? 14 : 6) * MIB);
    assert_int_equal(m->device_bytes, 4 * MIB);
    assert_int_equal(m->moves.evictions, i % 2 == 0);
    assert_int_equal(m->moves.restores, i % 2 == 0);
    assert_int_equal(m->moves.bytes_to_host, i % 2 == 0 ? MIB : 0);
    assert_int_equal(m->moves.bytes_to_device, i % 2 == 0 ? MIB : 0);
    assert_int_equal(m->moves_by_reason[SHIM_REASON_BUDGET], i % 2 == 0);
    assert_int_equal(m->moves_by_reason[SHIM_REASON_PREFETCH], i % 2 == 0);
    assert_int_equal(m->stalls, i % 3 == 0);
    assert_int_equal(m->stall_ns, i % 3 == 0 ? 1000 : 0);
    /* its step record, 3 launches, the allocations and frees, a copy, a sync, the moves,
       the stall */
    assert_int_equal(m->records,
                     1 + 3 + 2 * m->allocations + 1 + 1 + 2 * m->moves.evictions + m->stalls);
    assert_true(m->start_ns < m->end_ns);
}

/* A trace limited to 96 KiB: the first steps in detail, the rest as one summary per step (then
   2, 4, ... per record), every figure of every step as the detail would have given it, the
   file within its limit, the switch said once, the END keys. */
static void limit_summarises_later_steps(void **state)
{
    (void)state;
    char path[128];
    const uint64_t n = 3000, max = 96 << 10;
    path_in_dir(path, sizeof path, "limited.trace");
    start_limited(path, max);
    record_steps(n);
    shim_trace_stop();
    assert_true(file_size(path) <= (off_t)max);
    assert_int_equal(nsaid, 1);
    assert_int_equal(said_level[0], 3);
    assert_non_null(strstr(said[0], "nearing its limit of 98304 bytes after step "));

    report_trace t;
    load_or_fail(&t, path);
    assert_true(t.complete);
    assert_int_equal(t.dropped, 0);
    assert_int_equal(t.max_bytes, max);
    assert_int_equal(t.lost_limit, 0);
    assert_true(t.have_detail_end);
    size_t detail = count_kind(&t, SHIM_TRACE_STEP);
    assert_int_equal(t.detail_steps, detail);
    assert_int_equal(t.last_detail_step, detail - 1);
    assert_true(detail > 10 && detail < n / 2);
    assert_true(t.nsummaries > 10);
    /* in file order: step summaries covering detail..n-1 without a gap, then the teardown */
    uint64_t next = detail, singles = 0, covers = 1;
    for (size_t k = 0; k + 1 < t.nsummaries; k++) {
        const report_summary *m = &t.summaries[k];
        assert_int_equal(m->step, next);
        assert_true(m->steps == covers || m->steps == 2 * covers || k + 2 == t.nsummaries);
        covers = m->steps;
        if (m->steps == 1) {
            check_one_step(m, next);
            singles++;
        } else { /* a coarser summary adds its steps up */
            uint64_t launches = 0, peak = 0;
            for (uint64_t i = next; i < next + m->steps; i++) {
                launches += 3;
                peak = i % 4 == 1 ? 14 * MIB : peak ? peak : 6 * MIB;
            }
            assert_int_equal(m->launches, launches);
            assert_int_equal(m->peak_device_bytes, peak);
        }
        if (k > 0)
            assert_int_equal(m->start_ns, t.summaries[k - 1].end_ns);
        next += m->steps;
    }
    assert_int_equal(next, n);
    assert_true(singles > 10);
    const report_summary *last = &t.summaries[t.nsummaries - 1];
    assert_int_equal(last->steps, 0); /* the weight's free, after the last step */
    assert_int_equal(last->frees, 1);
    assert_int_equal(last->records, 1);
    assert_int_equal(last->device_bytes, 0);

    report_stats st;
    assert_int_equal(report_stats_compute(&st, &t), 0);
    assert_int_equal(st.iterations, n);
    assert_int_equal(st.launches, 1 + 3 * n);
    assert_int_equal(st.allocations, 1 + n + (n + 2) / 4);
    assert_int_equal(st.frees, st.allocations);
    assert_int_equal(st.copies, n);
    assert_int_equal(st.syncs, n + 1);
    assert_int_equal(st.peak_device_bytes, 14 * MIB);
    assert_int_equal(st.end_device_bytes, 0);
    assert_int_equal(st.residency.moves.evictions, (n + 1) / 2);
    assert_int_equal(st.residency.moves.restores, (n + 1) / 2);
    assert_int_equal(st.residency.stalls, (n + 2) / 3);
    assert_int_equal(st.residency.stall_ns, 1000 * ((n + 2) / 3));
    assert_int_equal(st.moves_by_reason[SHIM_REASON_BUDGET], (n + 1) / 2);
    assert_int_equal(st.launches_per_iteration, 3);
    assert_int_equal(st.summarised_steps, n - detail);
    assert_int_equal(st.first_summarised_step, detail);
    assert_int_equal(count_kind(&t, SHIM_TRACE_NOTE), 1);
    report_stats_free(&st);
    report_trace_free(&t);
}

/* Below its limit a bounded trace is what an unbounded one is: no summary, nothing lost. */
static void under_the_limit_nothing_changes(void **state)
{
    (void)state;
    char path[128];
    path_in_dir(path, sizeof path, "roomy.trace");
    start_limited(path, 64 * MIB);
    record_steps(50);
    shim_trace_stop();
    assert_int_equal(nsaid, 0);
    report_trace t;
    load_or_fail(&t, path);
    assert_int_equal(t.nsummaries, 0);
    assert_int_equal(count_kind(&t, SHIM_TRACE_STEP), 50);
    assert_int_equal(count_kind(&t, SHIM_TRACE_NOTE), 0);
    assert_int_equal(t.max_bytes, 64 * MIB);
    assert_false(t.have_detail_end);
    report_trace_free(&t);
}

/* A limit smaller than the file's head: nothing but the head, a note and END; the records that
   did not fit are counted, the summaries among them by their steps. */
static void tiny_limit_counts_what_is_lost(void **state)
{
    (void)state;
    char path[128];
    path_in_dir(path, sizeof path, "tiny.trace");
    start_limited(path, 2048);
    record_steps(100);
    shim_trace_stop();
    report_trace t;
    load_or_fail(&t, path);
    assert_true(t.complete);
    assert_int_equal(t.nsummaries, 0);
    assert_true(t.lost_limit > 0);
    assert_int_equal(t.lost_steps, 100);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.recs[0].kind, SHIM_TRACE_NOTE);
    assert_non_null(strstr(t.text + t.recs[0].text, "records lost at the size limit of 2048"));
    report_trace_free(&t);
}

/* A file size limit (RLIMIT_FSIZE, SIGXFSZ ignored: writes fail with EFBIG), in a child: the
   error is said once, the file is cut back to its last whole chunk, ends with a note that
   counts the records lost and an END chunk that names the error, and stays within the limit. */
static void write_error_is_said_once_and_counted(void **state)
{
    (void)state;
    char path[128];
    const rlim_t limit = 48 << 10;
    path_in_dir(path, sizeof path, "efbig.trace");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit rl = {limit, limit};
        signal(SIGXFSZ, SIG_IGN);
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(10);
        start_limited(path, 0);
        record_steps(2000);
        shim_trace_stop();
        int ok = nsaid == 1 && said_level[0] == 1 &&
                 strstr(said[0], "failed (File too large): recording stops") != NULL;
        _exit(ok ? 0 : 11);
    }
    child_exited_ok(pid);
    assert_true(file_size(path) <= (off_t)limit);
    report_trace t;
    load_or_fail(&t, path);
    assert_true(t.complete);
    assert_string_equal(t.write_error, "File too large");
    assert_true(t.lost_error > 0);
    const report_rec *last = NULL;
    for (size_t i = 0; i < t.n; i++)
        if (t.recs[i].kind == SHIM_TRACE_NOTE)
            last = &t.recs[i];
    assert_non_null(last);
    char want[96];
    snprintf(want, sizeof want, "trace: %llu records lost (write error: File too large)",
             (unsigned long long)t.lost_error);
    assert_string_equal(t.text + last->text, want);
    assert_int_equal(t.end_records, t.n);
    report_trace_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_kind_from_threads),
        cmocka_unit_test(long_fields_are_cut),
        cmocka_unit_test(residency_records_exact),
        cmocka_unit_test(mode_0600_and_exclusive),
        cmocka_unit_test(pattern_expansion),
        cmocka_unit_test(sessions),
        cmocka_unit_test(drops_are_counted),
        cmocka_unit_test(fork_child_forgets),
        cmocka_unit_test(fork_child_without_forget),
        cmocka_unit_test(signal_handler_records),
        cmocka_unit_test(live_thread_flushed_at_stop),
        cmocka_unit_test(rings_of_exited_threads_are_freed),
        cmocka_unit_test(limit_summarises_later_steps),
        cmocka_unit_test(under_the_limit_nothing_changes),
        cmocka_unit_test(tiny_limit_counts_what_is_lost),
        cmocka_unit_test(write_error_is_said_once_and_counted),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
