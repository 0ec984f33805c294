/* tools/import/shimplan_print.h — what shim-plan prints of a plan: the answer line, how the model
 * is held, the link and where each figure came from, the figures, the entries and proposals, in
 * text or as one JSON object (shimplan_print.c). */
#ifndef SHIMPLAN_PRINT_H
#define SHIMPLAN_PRINT_H

#include "plan.h"
#include "plan_build.h"
#include "planopt.h"

#include <stdbool.h>

/* A plan of one model and what it was made from. */
typedef struct shimplan_result {
    const char *model;
    const char *times; /* where the operations' times come from, for an imported model; NULL */
    const plan_hw *hw; /* the link planned with, and where each figure came from */
    const planopt_sources *src;
    plan_kind kind;
    uint64_t native, floor;
    uint64_t held;                /* the native peak of the model as libshim holds it */
    const plan_hold_rules *rules; /* NULL: planned as given (--as-given) */
    plan_hold_info hold;
    size_t nops, nallocs;
    const plan_model *planned; /* the model planned */
    bool host;                 /* host placement allowed: the placement lines are printed */
    planopt_run run;           /* the plan for the budget, the proposals */
} shimplan_result;

/* Prints r on standard output as text (entries: one line per plan entry too). Cannot fail. */
void shimplan_print_text(const shimplan_result *r, bool entries);

/* Prints r on standard output as one JSON object (entries: the plan's entries too). Cannot
 * fail. */
void shimplan_print_json(const shimplan_result *r, bool entries);

#endif
