/* shimrun.h — the run room's seam (tools/run/): shim-run, the launcher; what its two files
 * share. shimrun.c runs the command (options, environment, signals); shimrun_traces.c finds the
 * traces the run wrote and hands them to shim-report, as a program (the one beside shim-run),
 * never by linking the report. The room depends on conf/ alone; only its two files include this
 * header. */
#ifndef SHIMRUN_H
#define SHIMRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Where errors and notes go: "shim-run: " and the message, on stderr. */
void shimrun_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- shimrun.c ---- */

/* Runs argv (argv[0] a path) with the environment env, stdout on stderr when stdout_to_stderr,
   passing the forwarded signals to it while it runs. Returns its wait status, or -1 when it
   could not be started (after a note). */
int shimrun_tool(char *const *argv, char *const *env, bool stdout_to_stderr);

/* ---- shimrun_traces.c: trace path patterns, as libshim expands them (trace.path: %p the
   process id, %r the rank, %% a percent sign; shim_path_expand in shim/trace/shim_path.c) ---- */

/* The pattern shim-run gives libshim when the configuration names none:
   shim-YYYYMMDD-HHMMSS-PID-r%r-p%p.trace (this run's start and shim-run's pid: the run's id) in
   the folder dir (its '%' written as "%%"). Returns a malloc'd string, or NULL when memory ran
   out. */
char *shimrun_default_pattern(const char *dir);

/* The files of one folder whose names match a pattern's last component, sorted by name. */
typedef struct shimrun_traces {
    char *dir;    /* the pattern's folder, '%%' read as '%' */
    char *base;   /* the pattern's last component */
    char **names; /* matching file names */
    size_t n;
} shimrun_traces;

/* Lists the files matching the absolute pattern into *t. 0; -1 with a note when the folder
   cannot be read; 1 with a note when the pattern's folder holds %p or %r, which shim-run cannot
   list (t is empty after either). */
int shimrun_traces_list(shimrun_traces *t, const char *pattern);

/* Keeps in after only the names that are not in before: the traces this run wrote (libshim
   creates a trace exclusively, so a file that was there before is not one). */
void shimrun_traces_new(shimrun_traces *after, const shimrun_traces *before);

/* Frees the names a list holds; t is then empty. */
void shimrun_traces_free(shimrun_traces *t);

/* Whether name matches the pattern component base (%p: digits; %r: digits, maybe after '-'). */
bool shimrun_pattern_match(const char *base, const char *name);

/* After the run: the traces' list and `shim-report summary` of them on stderr (unless quiet),
   and with report (not NULL) `shim-report html TRACE... -o report`, or a note when that
   shim-report has no html command. report_tool: the shim-report to run; env: its
   environment. Never changes the run's exit status. */
void shimrun_traces_report(const shimrun_traces *t, const char *report_tool, char *const *env,
                           const char *report, bool quiet);

#endif
