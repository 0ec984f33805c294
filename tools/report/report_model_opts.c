/* report_model_opts.c — the arguments of `shim-report model` and `shim-report plan`: the planner's
 * options as shim-plan reads them (tools/planopt/planopt.h), and the report's own. */
#include "report_model.h"

#include <stdlib.h>
#include <string.h>

#define MODEL_SETS (PLANOPT_LINK | PLANOPT_STEP)
#define PLAN_SETS  (PLANOPT_PLAN | PLANOPT_LINK | PLANOPT_STEP)

static void synopsis(FILE *out, int for_plan)
{
    if (for_plan) {
        fputs("usage: shim-report plan TRACE [--json]\n", out);
        planopt_synopsis(out, PLAN_SETS, 24);
        fputs("                        (--budget or --proposals is required)\n", out);
    } else {
        fputs("usage: shim-report model TRACE [-o FILE]\n", out);
        planopt_synopsis(out, MODEL_SETS, 25);
    }
}

/* Contract in report.h. */
void report_model_help(FILE *out, int for_plan)
{
    synopsis(out, for_plan);
    fputs(for_plan ? "Plans a recorded step for a budget: predicted step time, stall, bytes moved "
                     "each way, peak,\nthe lower bound for that budget, and every link figure "
                     "with where it came from.\n"
                   : "The iteration model of a recorded step, for shim-plan "
                     "(planner/MODEL-FORMAT.md).\n",
          out);
    fputs("--step N:\n  the step of the trace to model, by its number in the trace (default: "
          "the last step\n  with kernel times)\n",
          out);
    if (for_plan)
        fputs("--json:\n  the result as one JSON object\n", out);
    else
        fputs("-o FILE:\n  write the model to FILE (default: standard output)\n", out);
    planopt_help(out, for_plan ? PLAN_SETS : MODEL_SETS);
}

/* "shim-report: WHAT" and the synopsis on stderr; 2. */
static int usage(int for_plan, const char *what)
{
    fprintf(stderr, "shim-report: %s\n", what);
    synopsis(stderr, for_plan);
    fprintf(stderr, "(shim-report %s --help says more)\n", for_plan ? "plan" : "model");
    return 2;
}

/* Contract in report_model.h. */
void report_model_opts_init(report_model_opts *o)
{
    *o = (report_model_opts){0};
    planopt_init(&o->p);
}

/* Contract in report_model.h. */
int report_model_opts_parse(report_model_opts *o, int argc, char **argv, int for_plan)
{
    report_model_opts_init(o);
    struct option longs[16] = {{"json", no_argument, NULL, 'j'}};
    size_t n = planopt_longs(for_plan ? PLAN_SETS : MODEL_SETS, longs, 1, 16);
    char err[CONF_ERR_LEN];
    if (!n)
        return usage(for_plan, "internal error: the option table is too small");
    optind = 0; /* getopt_long from the start of this argv (glibc) */
    opterr = 0; /* the messages are the report's own */
    int c, at = 0;
    while ((c = getopt_long(argc, argv, ":o:", longs, &at)) != -1) {
        if (c == ':' || c == '?' || (c == 'j' && !for_plan) || (c == 'o' && for_plan)) {
            planopt_getopt_error(c == ':' ? c : '?', c == 'o' ? "-o" : argv[optind - 1], err,
                                 sizeof err);
            return usage(for_plan, err);
        }
        if (c == 'j')
            o->json = 1;
        else if (c == 'o')
            o->output = optarg;
        else if (planopt_take(&o->p, c, optarg, err, sizeof err))
            return usage(for_plan, err);
    }
    if (optind < argc)
        o->trace = argv[optind++];
    if (optind < argc) {
        snprintf(err, sizeof err, "unexpected argument '%s' (one trace only)", argv[optind]);
        return usage(for_plan, err);
    }
    if (!o->trace)
        return usage(for_plan, "no trace given: TRACE, a trace libshim wrote");
    if (for_plan && planopt_require_budget(&o->p, err, sizeof err))
        return usage(for_plan, err);
    return 0;
}
