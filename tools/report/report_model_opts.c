/* report_model_opts.c — the arguments of `shim-report model` and `shim-report plan`. */
#include "report.h"

#include "plan.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define REMAP_HELP                                                                                 \
    "--remap US: the host time libshim's mover spends remapping each move's range (not link\n"     \
    "  time: the mover runs beside the copies)\n"
#define MODEL_USAGE                                                                                \
    "usage: shim-report model TRACE [--step N] [-o FILE] [--h2d GBPS] [--d2h GBPS]\n"              \
    "                         [--duplex 0|1] [--remap US] [--link-both H2D,D2H]\n" REMAP_HELP
#define PLAN_USAGE                                                                                 \
    "usage: shim-report plan TRACE --budget SIZE [--planner none|reactive|scheduled|exact]\n"      \
    "                        [--proposals N] [--step N] [--h2d GBPS] [--d2h GBPS]\n"               \
    "                        [--duplex 0|1] [--remap US] [--link-both H2D,D2H] [--json]\n"         \
    "SIZE: bytes, a size with a unit (512MiB, 40GiB, 1.5GB) or a share of the native peak "        \
    "(75%)\n" REMAP_HELP

static int usage(int for_plan, const char *fmt, const char *what)
{
    fputs("shim-report: ", stderr);
    fprintf(stderr, fmt, what);
    fputc('\n', stderr);
    fputs(for_plan ? PLAN_USAGE : MODEL_USAGE, stderr);
    return 2;
}

/* A number covering all of s, in [lo, hi]. */
static int number(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* A whole number covering all of s, in [0, hi]. */
static int count(const char *s, unsigned long long hi, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || s[0] == '+' || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* "H,D": two numbers in [1e-6, 1e6] separated by one comma. 0 or -1. */
static int rate_pair(const char *s, double *h, double *d)
{
    const char *comma = strchr(s, ',');
    char first[64];
    if (!comma || (size_t)(comma - s) >= sizeof first)
        return -1;
    memcpy(first, s, (size_t)(comma - s));
    first[comma - s] = 0;
    return number(first, 1e-6, 1e6, h) || number(comma + 1, 1e-6, 1e6, d) ? -1 : 0;
}

/* One option that takes value v. 0, 1 when a is not one of them, or 2 (usage printed). */
static int link_option(report_model_opts *o, const char *a, const char *v, int for_plan)
{
    double d;
    if (!strcmp(a, "--h2d") || !strcmp(a, "--d2h")) {
        if (number(v, 1e-6, 1e6, &d))
            return usage(for_plan, "%s takes a bandwidth in GB/s in [1e-6, 1e6]", a);
        *(a[2] == 'h' ? &o->h2d : &o->d2h) = d;
    } else if (!strcmp(a, "--remap")) {
        if (number(v, 0, 1e9, &o->remap))
            return usage(for_plan, "%s takes a time in microseconds in [0, 1e9]", a);
    } else if (!strcmp(a, "--link-both")) {
        if (rate_pair(v, &o->both_h2d, &o->both_d2h))
            return usage(for_plan,
                         "%s takes H2D,D2H: the rates in GB/s in [1e-6, 1e6] of each direction "
                         "while the other copies too",
                         a);
    } else if (!strcmp(a, "--duplex")) {
        if (strcmp(v, "0") && strcmp(v, "1"))
            return usage(for_plan, "%s takes 0 or 1", a);
        o->duplex = v[0] - '0';
    } else {
        return 1;
    }
    return 0;
}

/* The options of `plan` only. 0, 1 when a is not one of them, or 2 (usage printed). */
static int plan_option(report_model_opts *o, const char *a, const char *v)
{
    unsigned long long n;
    plan_kind kind;
    if (!strcmp(a, "--budget")) {
        o->budget = v;
    } else if (!strcmp(a, "--planner")) {
        if (plan_kind_parse(v, &kind))
            return usage(1, "unknown planner '%s'", v);
        o->kind = (int)kind;
    } else if (!strcmp(a, "--proposals")) {
        if (count(v, 100000, &n) || n == 0)
            return usage(1, "%s takes a count in [1, 100000]", a);
        o->proposals = (size_t)n;
    } else {
        return 1;
    }
    return 0;
}

/* An option with a value. 0, or 2 (usage printed). */
static int value_option(report_model_opts *o, const char *a, const char *v, int for_plan)
{
    unsigned long long n;
    int rc = link_option(o, a, v, for_plan);
    if (rc != 1)
        return rc;
    if (for_plan && (rc = plan_option(o, a, v)) != 1)
        return rc;
    if (!strcmp(a, "--step")) {
        if (count(v, INT32_MAX, &n))
            return usage(for_plan, "--step takes a step number, got '%s'", v);
        o->step = (long long)n;
    } else if (!for_plan && !strcmp(a, "-o")) {
        o->output = v;
    } else {
        return usage(for_plan, "unknown option '%s'", a);
    }
    return 0;
}

/* Contract in report.h. */
int report_model_opts_parse(report_model_opts *o, int argc, char **argv, int for_plan)
{
    *o = (report_model_opts){.step = -1,
                             .h2d = -1,
                             .d2h = -1,
                             .remap = -1,
                             .duplex = -1,
                             .both_h2d = -1,
                             .both_d2h = -1,
                             .kind = PLAN_KIND_SCHEDULED};
    static const struct option longs[] = {{"step", required_argument, NULL, 0},
                                          {"h2d", required_argument, NULL, 0},
                                          {"d2h", required_argument, NULL, 0},
                                          {"duplex", required_argument, NULL, 0},
                                          {"remap", required_argument, NULL, 0},
                                          {"link-both", required_argument, NULL, 0},
                                          {"budget", required_argument, NULL, 0},
                                          {"planner", required_argument, NULL, 0},
                                          {"proposals", required_argument, NULL, 0},
                                          {"json", no_argument, NULL, 'j'},
                                          {NULL, 0, NULL, 0}};
    optind = 0; /* getopt_long from the start of this argv (glibc) */
    opterr = 0; /* the messages are the report's own */
    int c, at = 0;
    while ((c = getopt_long(argc, argv, ":o:", longs, &at)) != -1) {
        char name[32] = "-o";
        if (c == 0)
            snprintf(name, sizeof name, "--%s", longs[at].name);
        if (c == ':')
            return usage(for_plan, "%s needs a value", argv[optind - 1]);
        if (c == '?' || (c == 'j' && !for_plan))
            return usage(for_plan, "unknown option '%s'", argv[optind - 1]);
        int rc = c == 'j' ? (o->json = 1, 0) : value_option(o, name, optarg, for_plan);
        if (rc)
            return rc;
    }
    if (optind < argc)
        o->trace = argv[optind++];
    if (optind < argc)
        return usage(for_plan, "unexpected argument '%s' (one trace only)", argv[optind]);
    if (!o->trace)
        return usage(for_plan, "%s", "no trace given");
    if (for_plan && !o->budget && !o->proposals)
        return usage(for_plan, "%s", "--budget or --proposals is required");
    return 0;
}
