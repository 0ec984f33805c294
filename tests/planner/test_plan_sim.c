/* tests/planner/test_plan_sim.c — the simulator against hand-computed timelines.
 *
 * Each tests/planner/golden/NAME.sim is a model (hw/op/alloc lines) plus test lines: `entry ALLOC
 * EVICT_AFTER PREFETCH_AT WAIT_AT NEED` (the plan), `budget BYTES`, and `expect KEY VALUE...` with
 * KEY one of peak, step, stall, to_host, to_device, feasible, `expect op Q START END LEVEL`, or
 * `expect move I EVICT_START EVICT_DONE RESTORE_START RESTORE_DONE` (entry I's moves: when its
 * copy to host starts, when its bytes are free, when its copy back starts, when its data is
 * usable; -1: none). Times are from the start of the reported step. The hand computation is in
 * each file's comments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

#define GOLDEN_DIR "tests/planner/golden"

typedef struct golden {
    plan_model m;
    plan p;
    uint64_t budget;
    char *text; /* the file, test lines blanked out */
} golden;

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static bool starts(const char *line, const char *word)
{
    size_t n = strlen(word);
    return strncmp(line, word, n) == 0 && (line[n] == ' ' || line[n] == '\t');
}

/* Blanks the test lines (keeping line numbers) and reads entries and the budget. */
static void split(golden *g, char *text)
{
    plan_init(&g->p);
    g->budget = 0;
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (starts(line, "entry")) {
            long v[5];
            assert_int_equal(
                sscanf(line, "entry %ld %ld %ld %ld %ld", &v[0], &v[1], &v[2], &v[3], &v[4]), 5);
            plan_entry e = {(uint32_t)v[0], (int32_t)v[1], (int32_t)v[2], (int32_t)v[3],
                            (int32_t)v[4]};
            assert_int_equal(plan_push(&g->p, e), PLAN_OK);
        } else if (starts(line, "budget")) {
            assert_int_equal(sscanf(line, "budget %" SCNu64, &g->budget), 1);
        }
        if (starts(line, "entry") || starts(line, "budget") || starts(line, "expect"))
            line[0] = '#';
        line = nl ? nl + 1 : NULL;
    }
}

/* `expect move I ...`: entry I's move times in tr (4 values in v, from the step's start). */
static void check_move(const char *name, const char *line, const plan_trace *tr, size_t nents)
{
    unsigned long i;
    double v[4];
    assert_int_equal(
        sscanf(line, "expect move %lu %lf %lf %lf %lf", &i, &v[0], &v[1], &v[2], &v[3]), 5);
    assert_true(i < nents);
    const plan_sim_ent *e = &tr->ents[i];
    double got[4] = {e->evict_start, e->evict_done, e->restore_start, e->restore_done};
    for (int k = 0; k < 4; k++)
        if (got[k] != -1)
            got[k] -= tr->step_start;
    for (int k = 0; k < 4; k++)
        if (fabs(got[k] - v[k]) > 1e-9)
            fail_msg("%s: move %lu: got %g %g %g %g, want %g %g %g %g", name, i, got[0], got[1],
                     got[2], got[3], v[0], v[1], v[2], v[3]);
}

static void check_expect(const char *name, const char *line, const plan_stats *st,
                         const plan_trace *tr, size_t nops, size_t nents)
{
    char key[32];
    double v[4];
    int k = sscanf(line, "expect %31s %lf %lf %lf %lf", key, &v[0], &v[1], &v[2], &v[3]);
    assert_true(k >= 2);
    double got = NAN;
    if (strcmp(key, "move") == 0) {
        check_move(name, line, tr, nents);
        return;
    }
    if (strcmp(key, "op") == 0) {
        assert_int_equal(k, 5);
        size_t q = (size_t)v[0];
        assert_true(q < nops);
        double s = tr->ops[q].start - tr->step_start, e = tr->ops[q].end - tr->step_start;
        if (fabs(s - v[1]) > 1e-9 || fabs(e - v[2]) > 1e-9 || (double)tr->ops[q].level != v[3])
            fail_msg("%s: op %zu: got start %g end %g level %llu, want %g %g %g", name, q, s, e,
                     (unsigned long long)tr->ops[q].level, v[1], v[2], v[3]);
        return;
    }
    if (strcmp(key, "peak") == 0)
        got = (double)st->peak_bytes;
    else if (strcmp(key, "step") == 0)
        got = st->step_us;
    else if (strcmp(key, "stall") == 0)
        got = st->stall_us;
    else if (strcmp(key, "to_host") == 0)
        got = (double)st->bytes_to_host;
    else if (strcmp(key, "to_device") == 0)
        got = (double)st->bytes_to_device;
    else if (strcmp(key, "feasible") == 0)
        got = st->feasible;
    else
        fail_msg("%s: unknown expectation '%s'", name, key);
    if (fabs(got - v[0]) > 1e-9)
        fail_msg("%s: %s: got %.12g, want %.12g", name, key, got, v[0]);
}

static void run_golden(const char *dir, const char *name, unsigned *nexpect)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    size_t len;
    char *text = slurp(path, &len);
    char *orig = strdup(text);
    golden g;
    split(&g, text);
    plan_model_init(&g.m);
    char msg[256];
    if (plan_model_parse(text, len, path, &g.m, msg, sizeof(msg)) != PLAN_OK)
        fail_msg("%s", msg);
    plan_ctx c;
    assert_int_equal(plan_ctx_init(&c, &g.m, msg, sizeof(msg)), PLAN_OK);
    plan_sim_op *ops = calloc(g.m.nops, sizeof(*ops));
    plan_sim_ent *ents = calloc(g.p.n + 1, sizeof(*ents));
    plan_trace tr = {ops, ents, 0};
    plan_stats st;
    assert_int_equal(plan_sim_run(&c, &g.p, g.budget, &st, &tr), PLAN_OK);
    for (char *line = orig; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (starts(line, "expect")) {
            check_expect(name, line, &st, &tr, g.m.nops, g.p.n);
            ++*nexpect;
        }
        line = nl ? nl + 1 : NULL;
    }
    free(ops);
    free(ents);
    plan_ctx_free(&c);
    plan_free(&g.p);
    plan_model_free(&g.m);
    free(text);
    free(orig);
}

static void test_golden_timelines(void **state)
{
    (void)state;
    DIR *d = opendir(GOLDEN_DIR);
    assert_non_null(d);
    unsigned files = 0, expects = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (n > 4 && strcmp(de->d_name + n - 4, ".sim") == 0) {
            run_golden(GOLDEN_DIR, de->d_name, &expects);
            files++;
        }
    }
    closedir(d);
    printf("golden: %u files, %u expectations\n", files, expects);
    assert_true(files >= 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_timelines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
