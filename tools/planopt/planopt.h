/* planopt.h — the planner room's seam (tools/planopt/): the planner's options on the tools'
 * command lines, one parser for shim-plan (tools/import/shimplan.c) and shim-report plan and
 * model (tools/report/report_model_opts.c), so that both take the same options, print the same
 * help and refuse a bad value in the same words.
 *
 * Who may include it: the report and the importers' program (tools/report/, tools/import/),
 * which stand side by side above it. It uses the planner (plan.h) and conf/ (sizes, budgets),
 * nothing else of ours.
 *
 * The options, in three sets a tool picks from:
 *   PLANOPT_PLAN  --budget SIZE, --planner K, --proposals N
 *   PLANOPT_LINK  --h2d GBPS, --d2h GBPS, --duplex 0|1, --link-both H2D,D2H, --remap US
 *   PLANOPT_STEP  --step N (what a step number means is the tool's: its help says it)
 * A tool appends their getopt_long entries to its own (planopt_longs); getopt_long then returns
 * PLANOPT_VAL + an option's index for each, which planopt_take reads.
 *
 * Error contract (same words everywhere): a function returning int returns 0 on success, or -1
 * with a NUL-terminated one-line message in err (truncated to errlen) that names the option and
 * the value refused; the caller prefixes its own name ("shim-plan: ") and exits 2. */
#ifndef PLANOPT_H
#define PLANOPT_H

#include "conf.h"
#include "plan.h"

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum planopt_set { PLANOPT_PLAN = 1, PLANOPT_LINK = 2, PLANOPT_STEP = 4 };

/* getopt_long's return for the first planner option; the others follow (planopt_is). Above
   every character an option letter can be. */
#define PLANOPT_VAL 0x1000

/* Link figures given on the command line; below zero (duplex: -1): not given. */
typedef struct planopt_link {
    double h2d, d2h, remap;
    int duplex;
    double both_h2d, both_d2h; /* --link-both H2D,D2H: the rates while both directions copy */
} planopt_link;

/* What the command line said of the planner. */
typedef struct planopt {
    const char *budget; /* --budget as written; NULL: not given */
    conf_size size;     /* ... as read: bytes, or a share of the native peak */
    plan_kind kind;     /* --planner; PLAN_KIND_SCHEDULED when not given */
    size_t proposals;   /* --proposals; 0: none */
    long long step;     /* --step; -1: not given */
    planopt_link link;
} planopt;

/* Where each figure of a model's link came from, for the person reading a plan: a phrase such as
   "measured from the trace's moves", "--remap" or "assumed: the step model builder's default". */
typedef struct planopt_sources {
    const char *h2d, *d2h, *duplex, *remap, *both;
} planopt_sources;

/* o with nothing given. Cannot fail. */
void planopt_init(planopt *o);

/* Appends the getopt_long entries of the options in sets (enum planopt_set, or'ed) to
   longs[n..cap) and ends the table with a zero entry. Returns the new count (not counting the
   zero entry), or 0 when cap is too small (a caller's fixed table: a programming error). */
size_t planopt_longs(unsigned sets, struct option *longs, size_t n, size_t cap);

/* Whether getopt_long's return c is one of the planner options. */
bool planopt_is(int c);

/* Reads the value v of planner option c (planopt_is) into o. A budget is read as
   conf_budget_parse reads it; a bare number below 100000 is refused with conf_size_unit_hint's
   question (75 bytes is never what a budget means: 75%? 75GiB?), as libshim's budget option is;
   512B is 512 bytes. 0, or -1 with "bad --budget: ..." and the like in err. */
int planopt_take(planopt *o, int c, const char *v, char *err, size_t errlen);

/* The message for getopt_long's ':' (an option without its value) or '?' (an option not known)
   with arg the argument as written (argv[optind - 1]): "--budget needs a value", "unknown option
   '--bugdet'". Never fails. */
void planopt_getopt_error(int c, const char *arg, char *err, size_t errlen);

/* 0 when o has --budget or --proposals, or -1 with "--budget or --proposals is required ..." in
   err: a plan needs one or the other. */
int planopt_require_budget(const planopt *o, char *err, size_t errlen);

/* The budget in bytes for a model whose native peak is peak: --budget's bytes, or its share of
   peak; peak when no budget was given. */
uint64_t planopt_budget_bytes(const planopt *o, uint64_t peak);

/* Writes the synopsis of the options in sets for a usage message ("[--planner
   none|reactive|scheduled|exact] [--proposals N] ..."), in lines of at most 80 columns that
   each begin with indent spaces (a tool's own synopsis is above them). */
void planopt_synopsis(FILE *out, unsigned sets, int indent);

/* Writes to out the help of the options in sets (not --step's: the tool says what its steps are),
   one option a paragraph. */
void planopt_help(FILE *out, unsigned sets);

/* The figures of l that were given replace hw's, and their source in src becomes the option's
   name ("--h2d", ...); src's other entries are left as the caller set them. The link may then
   break the model's rules (--link-both on a link that is not duplex): plan_model_check says. */
void planopt_link_apply(const planopt_link *l, plan_hw *hw, planopt_sources *src);

/* Sets every entry of src to what. Cannot fail. */
void planopt_sources_all(planopt_sources *src, const char *what);

/* Writes "link: h2d 25.000 GB/s, d2h 25.000 GB/s, duplex 1 (SOURCE); remap 10.000 us (SOURCE)"
   (figures of one source in a row name it once) and, when hw has both-busy rates, "link_both: h2d
   ... GB/s, d2h ... GB/s (SOURCE)", each a line after prefix ("", or "# " in a model file): every
   figure a plan assumed, with where it came from. */
void planopt_link_text(FILE *out, const char *prefix, const plan_hw *hw,
                       const planopt_sources *src);

/* Writes the JSON members (each after ", ") of the same: "h2d_gbps", "d2h_gbps", "duplex",
   "remap_us", "both_h2d_gbps" and "both_d2h_gbps" (only with both-busy rates) and "link_sources",
   an object of the sources by the same names (JSON strings). */
void planopt_link_json(FILE *out, const plan_hw *hw, const planopt_sources *src);

/* ---- planopt_run.c: the planning the options ask for, and its figures printed ---- */

/* A plan for the budget the options give, and the memory-time curve they ask for. */
typedef struct planopt_run {
    bool planned;         /* the fields below up to lb hold a plan */
    uint64_t budget;      /* the budget planned for, in bytes */
    plan p;               /* the plan for it */
    plan_stats st;        /* its simulated figures */
    double lb;            /* the lower bound on its stall, in us (infinite below the floor) */
    plan_proposal *props; /* --proposals N: N budgets from the native peak down; NULL without */
    size_t nprops;
} planopt_run;

/* Plans m, whose native peak is peak (a share of a budget is of it), as o asks, with the
   placements po allows (NULL: none): o->kind for o's budget when o has one, or for peak when
   at_peak; then o->proposals budgets from peak down to the floor. PLAN_OK, or the planner's error
   (PLAN_ERR_LIMIT: too large for o->kind); r is then to be freed all the same. */
plan_err planopt_plan(const planopt *o, const plan_model *m, const plan_opts *po, uint64_t peak,
                      bool at_peak, planopt_run *r);

/* Frees what planopt_plan made; r is then empty. */
void planopt_run_free(planopt_run *r);

/* A time in microseconds: "%.3f", or "inf" in text and null in JSON for one that is not finite
   (a bound below the floor). */
void planopt_put_us(FILE *out, double us, bool json);

/* The proposals of r in text: a header line and one "proposal BUDGET PEAK STEP STALL BOUND
   yes|no" line each; nothing without proposals. */
void planopt_proposals_text(FILE *out, const planopt_run *r);

/* The members of proposal pp as JSON, without braces: "budget_bytes", "feasible", "peak_bytes",
   "step_us", "stall_us", "bytes_to_host", "bytes_to_device", "lower_bound_us". */
void planopt_proposal_json(FILE *out, const plan_proposal *pp);

#endif
