/* report.h — the report room's seam (tools/report/): shim-report and its subcommands.
 *
 * report_main.c dispatches to one file per subcommand (report_NAME.c, one table in main); each
 * *_main gets its own arguments and returns the process exit status, each *_print writes the
 * output of a loaded trace. The subcommands read traces only through the trace reader
 * (report_trace.h, tools/trace/); `model` and `plan` use the planner (plan_build.h) and read its
 * options as shim-plan does (tools/planopt/planopt.h), `config` the configuration (conf.h).
 * Nothing in tools/trace/, tools/import/ or tools/run/ includes this header: the dependencies run
 * report -> trace -> util, and report -> planopt.
 *
 * Who may include it: the report's files, the trace tests and the fuzz target. Internal headers
 * of this room: report_html.h (the html subcommand's files), report_pickle.h (memviz's writer),
 * report_model.h (the step model of `model` and `plan`, and their options).
 */
#ifndef REPORT_H
#define REPORT_H

#include "report_trace.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A subcommand gets its own arguments (argv[0] is its name) and the environment.
   Returns the process exit status: 0 success, 1 the input has errors, 2 bad usage. */
typedef int (*report_fn)(int argc, char **argv, char **envp);

typedef struct report_command {
    const char *name;
    report_fn run;
    const char *usage;       /* arguments after the name, "" when none */
    const char *help;        /* one line */
    void (*more)(FILE *out); /* the whole help for `NAME --help`; NULL: usage and help */
} report_command;

/* `config [--file F] [--reference]`: the effective configuration and the source of each
   value; with errors, every diagnostic on stderr and exit status 1. */
int report_config_main(int argc, char **argv, char **envp);
/* The help of `config`, as --help prints it. */
void report_config_help(FILE *out);

/* ---- report_verdict.c: the answer every report opens with ---- */

/* Did the job fit, and what did it cost: the figures libshim's exit line prints, computed by the
   same code from the trace's records (shim_trace_figures.h, report_figures_make). */
typedef struct report_verdict {
    const char *answer; /* "fitted", "did not fit", "no budget", or "unknown" (a trace older
                           than 1.9, or cut before its END chunk: no resident peak) */
    int fitted;         /* 1, 0, or -1 when not known (no budget, no resident peak) */
    struct shim_figures f;
    struct shim_fig_derived d;
    const char *device_name; /* the END chunk's, "" when not recorded */
} report_verdict;
/* Fills v from a loaded trace; cannot fail. */
void report_verdict_make(const report_trace *t, const report_stats *s, report_verdict *v);
/* The verdict as text, one fact per line as summary has them: "verdict: ...", "step: ...", then
   "steady_state: ..." and "warm_up: ..." when there are such words, "moves: ..." when the
   transitions were recorded, then resident_peak_bytes. */
void report_verdict_text(FILE *out, const report_verdict *v);
/* The verdict as JSON keys: "verdict": {answer, fitted, resident_peak_bytes,
   allocated_peak_bytes, budget_bytes, step_ms, native_step_ms, slowdown, bound_ms,
   bound_slowdown, step_source, device_name, simulated_device, steps, steady_steps,
   steady_from_step, bytes_moved_per_step, stall_ms_per_step, wall_ms_per_step, warmup_steps,
   warmup_bytes_moved, warmup_stall_ms, words}, "moves": {...} (report_verdict_moves_json),
   "resident_peak_bytes": N or null, each followed by ", " (unknown figures are null). */
void report_verdict_json(FILE *out, const report_verdict *v);
/* The moves' taxonomy as a JSON object (no key before it, no comma after): {"started",
   "to_host", "to_device", "by_reason": {name: N, ..., "other": N}, "by_outcome": {"done",
   "cancelled", "error", "freed", "unfinished"}}; null when the transitions were not recorded. */
void report_verdict_moves_json(FILE *out, const report_verdict *v);
/* The words of the verdict (shim_fig_verdict_words, HTML-safe). */
void report_verdict_sentence(FILE *out, const report_verdict *v);

/* ---- report_out.c: what the subcommands share: options, loading, names, escaping ---- */

/* Length of the valid multi-byte UTF-8 sequence at s (2..4), or 0 when s does not start one
   (ASCII included; overlong forms, surrogates and code points past U+10FFFF are not valid). */
int report_utf8_len(const unsigned char *s);

/* Writes s as a JSON string (quoted, escaped; invalid UTF-8 becomes U+FFFD). */
void report_json_string(FILE *out, const char *s);

/* Writes s for a text line: control bytes become '?'. */
void report_text_string(FILE *out, const char *s);

/* A double as JSON (finite; NaN and infinities become 0). */
void report_json_double(FILE *out, double v);

/* The options common to the trace subcommands. */
typedef struct report_opts {
    const char *trace, *output;
    int json;
    long top;
    const char **traces; /* report_opts_parse_many: every trace path, in order (trace: the first) */
    size_t ntraces;
} report_opts;
/* Parses the options common to the trace subcommands: --json (allow_json), --top N, -o FILE
   (allow_output), and exactly one trace path, into o. Returns 0, or 2 after printing usage to
   stderr. */
int report_opts_parse(report_opts *o, int argc, char **argv, const char *usage, int allow_json,
                      int allow_output);

/* The same with one or more trace paths, in o->traces (free it with report_opts_free). Returns
   0, 2 after printing usage to stderr, or 1 when memory ran out (o then owns nothing). */
int report_opts_parse_many(report_opts *o, int argc, char **argv, const char *usage, int allow_json,
                           int allow_output);

/* Frees what report_opts_parse_many made. */
void report_opts_free(report_opts *o);

/* Loads o->trace, printing an error or the truncation note on stderr. 0, or 1 on error. */
int report_open(report_trace *t, report_stats *s, const report_opts *o);

/* Loads each of o->traces in turn (report_open: an error or truncation note on stderr) into
   t[k], s[k] (arrays of o->ntraces); *n counts those loaded. 0, or 1 when one could not be
   read (the others are loaded all the same). */
int report_open_all(const report_opts *o, report_trace *t, report_stats *s, size_t *n);
/* Frees the n traces and statistics report_open_all loaded, and the arrays t and s. */
void report_close_all(report_trace *t, report_stats *s, size_t n);

/* Allocates the arrays of o->ntraces traces and statistics and loads each trace into them
   (report_open_all); *n counts those loaded. 0, or 1 when memory ran out (said on stderr, *n 0)
   or a trace could not be read (the others are loaded all the same). Free with
   report_close_all(*t, *s, *n) in either case. */
int report_open_many(const report_opts *o, report_trace **t, report_stats **s, size_t *n);

/* What a subcommand of one trace does with it once loaded (report_run_one): returns the exit
   status, 0 or 1. */
typedef int (*report_one_fn)(const report_trace *t, const report_stats *s, const report_opts *o);

/* A subcommand of one trace, whole: parses the options (report_opts_parse with usage,
   allow_json, allow_output), loads the trace (report_open), runs fn on it and frees it. Returns
   the exit status: 2 bad usage, 1 the trace cannot be read, else fn's. */
int report_run_one(int argc, char **argv, const char *usage, int allow_json, int allow_output,
                   report_one_fn fn);

/* Short names of the format's enums, "?" for a value the format does not define:
   "plain", "async", ...: plan_mem_kind. */
const char *report_alloc_kind_name(uint32_t kind);
/* "HtoD", "DtoH", ...: enum shim_copy_dir. */
const char *report_copy_dir_name(uint32_t dir);
/* "context", "stream", ...: enum shim_sync_kind. */
const char *report_sync_kind_name(uint32_t kind);
/* "to host", "to device": enum shim_move_dir. */
const char *report_move_dir_name(uint32_t dir);
/* "budget", "demand", ...: enum shim_move_reason. */
const char *report_move_reason_name(uint32_t reason);
/* "none", "device", "evicting", ...: enum shim_resid_state. */
const char *report_resid_state_name(uint32_t state);
/* "evict", "restore", "copy_done", ...: enum shim_resid_event. */
const char *report_resid_event_name(uint32_t event);

/* ---- the subcommands (report_summary.c, report_kernels.c, report_allocs.c, report_moves.c,
   report_perfetto.c, report_memviz.c; report_summary_plan.c is part of summary): *_main as
   report_fn above; *_print writes the output for a loaded trace ---- */

/* ---- report_summary.c ---- */

/* `summary [--json] [--top N] TRACE...`: as report_fn. */
int report_summary_main(int argc, char **argv, char **envp);
/* The summary of one trace: text, or (json) one JSON object and a newline; the tables of top
   allocations and kernels cut at top. Write errors are out's own. */
void report_summary_print(FILE *out, const report_trace *t, const report_stats *s, int json,
                          long top);
/* The summary's top allocations: every allocation by bytes (largest first, then the earliest
   made), of which the first *n (at most top) are the top ones. A sorted array of pointers to
   free, or NULL (and *n 0) when memory ran out. */
const report_alloc **report_top_allocs(const report_stats *s, size_t *n, long top);
/* The JSON object of report_summary_print alone, with no newline after it. */
void report_summary_json(FILE *out, const report_trace *t, const report_stats *s, long top);

/* ---- report_ranks.c: several traces as the ranks of one job (summary and html) ---- */

/* One trace among several. */
typedef struct report_rank {
    const report_trace *t;
    const report_stats *s;
    size_t given;                /* its index in the arrays given to report_ranks_make */
    char label[64];              /* "rank R", or "rank R pid P" for all when ranks repeat */
    const report_step **by_step; /* s->steps sorted by step number */
    double median_step_ms;       /* of the steps' wall times (their windows); -1: no step */
} report_rank;

typedef struct report_ranks {
    report_rank *r; /* ordered by the rank in each trace's header, then pid, then given order */
    size_t n;
    uint64_t *steps; /* the step numbers of every rank, sorted, each once */
    size_t nsteps;
} report_ranks;

/* The n traces t[i] (s[i]: report_stats_compute of it) as ranks, into rk (free it with
   report_ranks_free; t and s must outlive it). 0, or -1 when memory ran out (rk is then
   empty). */
int report_ranks_make(report_ranks *rk, const report_trace *t, const report_stats *s, size_t n);

/* Frees what report_ranks_make made; rk is then empty. */
void report_ranks_free(report_ranks *rk);

/* The step numbered `step` of rank r, or NULL when r has none. */
const report_step *report_ranks_step(const report_rank *r, uint64_t step);

/* The step's wall time (its window) in ms, or -1 for NULL or a window that ends before it
   starts. */
double report_ranks_step_ms(const report_step *st);

/* report_summary_ranks.c — the summary of n traces (the ranks of one job) side by side, one
   column per trace, ordered by the rank in each trace's header, then pid, then given order:
   the traces, totals, and per-step tables keyed by step number. json: {"ranks": [...],
   "traces": [...]}, each trace's object as report_summary_print writes it, in that order.
   0, or -1 when memory ran out (nothing is written then). */
int report_summary_ranks_print(FILE *out, const report_trace *t, const report_stats *s, size_t n,
                               int json, long top);

/* report_summary_plan.c — the plan section of the summary (format 1.3 on). _text: each plan
   and, per step with a plan_step record, what was done next to the plan in force (the latest
   plan recorded before it) and the step's wall time; nothing when the trace has neither record.
   _json: the "plans" and "plan_steps" keys (empty lists without them), each followed by ", ";
   the keys are listed in tools/trace/TRACE-FORMAT.md. */
void report_summary_plan_text(FILE *out, const report_trace *t, const report_stats *s);
/* The same as JSON keys (see _text). */
void report_summary_plan_json(FILE *out, const report_trace *t, const report_stats *s);

/* One plan_step record and what the summary sets it against. */
typedef struct report_plan_row {
    const report_plan_step *ps;
    size_t plan;               /* index in t->plans of the plan in force, SIZE_MAX: none */
    const report_step *step;   /* the step of the same number and first launch, or NULL */
    const report_step *before; /* the step numbered one less (detailed), or NULL */
} report_plan_row;

/* The summary's rows: one per plan_step record of t, in launch order (t->nplan_steps of them;
   free the array), or NULL (none, or memory ran out). */
report_plan_row *report_plan_rows(const report_trace *t, const report_stats *s);

/* The row's step's wall time in microseconds: from the mark of the step before to its own, as
   the steady state's figures take it (shim_fig_plan_step), or -1 without both marks. */
double report_plan_row_wall_us(const report_plan_row *r);

/* ---- report_kernels.c ---- */

/* `kernels [--json] TRACE`: as report_fn. */
int report_kernels_main(int argc, char **argv, char **envp);
/* Every kernel of s: launches and measured times, as text or (json) a JSON object. */
void report_kernels_print(FILE *out, const report_stats *s, int json);
/* The fields every kernel's JSON object starts with: "name", "launches", "timed_launches",
   "total_us" (no brace before, no comma after). */
void report_kernel_json_fields(FILE *out, const report_kernel *k);

/* ---- report_allocs.c ---- */

/* `allocs [--json] TRACE`: as report_fn. */
int report_allocs_main(int argc, char **argv, char **envp);
/* Every allocation of s: size, kind, device, lifetime, as text or (json) a JSON object. */
void report_allocs_print(FILE *out, const report_trace *t, const report_stats *s, int json);

/* ---- report_moves.c ---- */

/* `moves [--json] TRACE`: as report_fn. */
int report_moves_main(int argc, char **argv, char **envp);
/* One row per move and a totals line, or (json) an object of moves, other transitions and
   totals: the keys are listed in tools/trace/TRACE-FORMAT.md. */
void report_moves_print(FILE *out, const report_trace *t, const report_moves *m, int json);
/* The "totals" object of `moves --json` (no key before it, no newline after). */
void report_moves_totals_json(FILE *out, const report_moves *m);

/* ---- report_perfetto.c ---- */

/* `perfetto [-o FILE] TRACE...`: as report_fn. */
int report_perfetto_main(int argc, char **argv, char **envp);
/* Chrome trace JSON (torch.profiler's layout) of n traces (1..256), each one rank: a host
   process and a GPU process each, times aligned on their wall-clock starts. 0, or -1 when memory
   ran out (or n is out of range). */
int report_perfetto_print_ranks(FILE *out, const report_trace *const *t,
                                const report_stats *const *s, size_t n);
/* The same for one trace. */
int report_perfetto_print(FILE *out, const report_trace *t, const report_stats *s);

/* ---- report_memviz.c ---- */

/* `memviz [-o FILE] TRACE`: as report_fn. */
int report_memviz_main(int argc, char **argv, char **envp);
/* The pickled memory snapshot of torch.cuda.memory._dump_snapshot (pytorch.org/memory_viz)
   of t's device allocations: the keys and what maps to what are in docs/report.md ("Memory
   snapshots for memory_viz"). s (report_stats_compute of t, or NULL) names each allocation in
   its entries' and blocks' frames (one frame, report_alloc_name; NULL: no frames). 0, or -1 when
   memory ran out (out's errors are its own). */
int report_memviz_print(FILE *out, const report_trace *t, const report_stats *s);

/* ---- report_html.c ---- */

/* One self-contained HTML page of the trace, its tables
   of the summary's top allocations and kernels cut at top. `html [--top N] [-o FILE] TRACE...`:
   as report_fn. */
int report_html_main(int argc, char **argv, char **envp);
/* The page of one trace (s its stats), its tables cut at top. 0, or -1 when memory ran out. */
int report_html_print(FILE *out, const report_trace *t, const report_stats *s, long top);
/* report_html_ranks.c: the page of n traces t[i] (s[i] their stats), the ranks of one job: the
   ranks side by side (summary TRACE...'s figures), then each rank's part as the page of one
   trace has it, one rank shown at a time. 0, or -1 when memory ran out. */
int report_html_print_ranks(FILE *out, const report_trace *t, const report_stats *s, size_t n,
                            long top);

/* ---- report_model.c ---- */
/* (report_model.h holds the rest of the model's functions.) */

/* `model [--step N] [-o FILE] TRACE`: as report_fn. */
int report_model_main(int argc, char **argv, char **envp);

/* ---- report_plan.c ---- */

/* `plan --budget SIZE ... TRACE`: as report_fn (report_model_opts_parse). */
int report_plan_main(int argc, char **argv, char **envp);

/* ---- report_model_opts.c ---- */

/* The help of `model` (for_plan == 0) or `plan`: the synopsis and every
   option, as --help prints it. */
void report_model_help(FILE *out, int for_plan);

#endif
