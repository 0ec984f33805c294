/* report_model.h — the report room's internal header for `model` and `plan`: the step model
 * (planner/plan_build.h) of a trace (report_model.c), the options both read as shim-plan reads
 * them (report_model_opts.c, tools/planopt/planopt.h), what-if planning (report_plan.c).
 *
 * Who may include it: those three files, report_main.c and the trace reader's fuzz target. */
#ifndef REPORT_MODEL_H
#define REPORT_MODEL_H

#include "planopt.h"
#include "report.h"

struct plan_model;
struct plan_build_info;

/* Options of `model` and `plan`: the planner's (tools/planopt/planopt.h: --step, the link, and
   for `plan` --budget, --planner, --proposals) and the report's own. */
typedef struct report_model_opts {
    const char *trace, *output;
    int json;
    planopt p; /* p.step -1: the last step with kernel times */
} report_model_opts;

/* o with nothing given (planopt_init). Cannot fail. */
void report_model_opts_init(report_model_opts *o);

/* Parses the arguments of `model` (for_plan == 0: --step, -o, the link options) or of `plan`
   (also --budget, --planner, --proposals, --json; --budget or --proposals required). Returns 0,
   or 2 after printing what is wrong and the synopsis to stderr. */
int report_model_opts_parse(report_model_opts *o, int argc, char **argv, int for_plan);

/* Feeds the records of t, in time order, to a step model builder and builds the model of step
   o->p.step (-1: the last with kernel times) into the initialised empty m, described in info;
   link figures given in o replace the model's. Where each link figure came from goes into *src
   (may be NULL). 0, or 1 with a one-line message naming the trace in err (m is then empty). */
int report_model_build(const report_trace *t, const report_model_opts *o, struct plan_model *m,
                       struct plan_build_info *info, planopt_sources *src, char *err,
                       size_t errlen);

/* report_model_build, with its error, or the count of kernel times filled in, on stderr. */
int report_model_open(const report_trace *t, const report_model_opts *o, struct plan_model *m,
                      struct plan_build_info *info, planopt_sources *src);

#endif
