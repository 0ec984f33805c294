/* report_out.c — what the subcommands share: options, loading, enum names, escaping. */
#include "report.h"

#include "conf.h"
#include "shim_trace.h"

#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Contract in report.h. */
const char *report_alloc_kind_name(uint32_t kind)
{
    return plan_mem_kind_name(kind); /* the table beside plan_mem_kind */
}

/* Contract in report.h. */
const char *report_copy_dir_name(uint32_t dir)
{
    static const char *names[] = {"?", "HtoD", "DtoH", "DtoD", "HtoH", "memset"};
    return dir < sizeof names / sizeof names[0] ? names[dir] : "?";
}

/* Contract in report.h. */
const char *report_sync_kind_name(uint32_t kind)
{
    static const char *names[] = {"?", "context", "stream", "event", "copy"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

/* Contract in report.h. */
const char *report_move_dir_name(uint32_t dir)
{
    static const char *names[] = {"?", "to host", "to device"};
    return dir < sizeof names / sizeof names[0] ? names[dir] : "?";
}

/* Contract in report.h. */
const char *report_move_reason_name(uint32_t reason)
{
    return shim_move_reason_name(reason); /* the table beside enum shim_move_reason */
}

/* Contract in report.h. */
const char *report_resid_state_name(uint32_t state)
{
    static const char *names[] = {"none", "device", "evicting", "host", "restoring"};
    return state < sizeof names / sizeof names[0] ? names[state] : "?";
}

/* Contract in report.h. */
const char *report_resid_event_name(uint32_t event)
{
    static const char *names[] = {"?",     "evict", "restore", "copy_done", "cancel",
                                  "error", "free",  "create",  "ordered",   "create_host"};
    return event < sizeof names / sizeof names[0] ? names[event] : "?";
}

/* Contract in report.h. */
int report_utf8_len(const unsigned char *s)
{
    int n = s[0] >= 0xf0 && s[0] <= 0xf4   ? 4
            : s[0] >= 0xe0 && s[0] <= 0xef ? 3
            : s[0] >= 0xc2 && s[0] <= 0xdf ? 2
                                           : 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((n == 3 && s[0] == 0xe0 && s[1] < 0xa0) || (n == 3 && s[0] == 0xed && s[1] >= 0xa0) ||
        (n == 4 && s[0] == 0xf0 && s[1] < 0x90) || (n == 4 && s[0] == 0xf4 && s[1] >= 0x90))
        return 0; /* overlong, surrogate, or past U+10FFFF */
    return n;
}

/* Contract in report.h. */
void report_json_string(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', out);
    while (*p) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p++);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p++);
        else if (*p < 0x80)
            fputc(*p++, out);
        else {
            int n = report_utf8_len(p);
            if (n == 0) {
                fputs("\\ufffd", out);
                p++;
            } else {
                fwrite(p, 1, (size_t)n, out);
                p += n;
            }
        }
    }
    fputc('"', out);
}

/* Contract in report.h. */
void report_text_string(FILE *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, out);
}

/* Contract in report.h. */
void report_json_double(FILE *out, double v)
{
    fprintf(out, "%.3f", isfinite(v) ? v : 0.0);
}

/* "shim-report: WHAT" (arg in it), then the usage, on stderr; 2. */
static int opts_usage(const char *usage, const char *what, const char *arg)
{
    fputs("shim-report: ", stderr);
    fprintf(stderr, what, arg);
    fprintf(stderr, "\nusage: shim-report %s\n", usage);
    return 2;
}

/* Contract in report.h. */
int report_opts_parse_many(report_opts *o, int argc, char **argv, const char *usage, int allow_json,
                           int allow_output)
{
    *o = (report_opts){.top = 10};
    o->traces = malloc((size_t)argc * sizeof *o->traces);
    if (o->traces == NULL) {
        fprintf(stderr, "shim-report: out of memory\n");
        return 1;
    }
    static const struct option longs[] = {{"json", no_argument, NULL, 'j'},
                                          {"top", required_argument, NULL, 't'},
                                          {NULL, 0, NULL, 0}};
    const char *bad = NULL, *arg = NULL;
    optind = 0; /* getopt_long from the start of this argv (glibc) */
    opterr = 0; /* a usage error prints the usage */
    for (int c; !bad && (c = getopt_long(argc, argv, ":o:", longs, NULL)) != -1;) {
        char *end;
        arg = argv[optind - 1];
        if (allow_json && c == 'j')
            o->json = 1;
        else if (allow_json && c == 't') {
            o->top = strtol(optarg, &end, 10);
            if (*end != '\0' || o->top < 0 || end == optarg)
                bad = "--top takes a count, not '%s'", arg = optarg;
        } else if (allow_output && c == 'o')
            o->output = optarg;
        else
            bad = c == ':' ? "%s needs a value" : "unknown option '%s'";
    }
    while (!bad && optind < argc)
        o->traces[o->ntraces++] = argv[optind++];
    if (!bad && o->ntraces == 0)
        bad = "%sno trace given: TRACE, a trace libshim wrote", arg = "";
    if (bad) {
        report_opts_free(o);
        return opts_usage(usage, bad, arg);
    }
    o->trace = o->traces[0];
    return 0;
}

/* Contract in report.h. */
void report_opts_free(report_opts *o)
{
    free(o->traces);
    o->traces = NULL;
    o->ntraces = 0;
}

/* Contract in report.h. */
int report_opts_parse(report_opts *o, int argc, char **argv, const char *usage, int allow_json,
                      int allow_output)
{
    int rc = report_opts_parse_many(o, argc, argv, usage, allow_json, allow_output);
    if (rc != 0)
        return rc == 1 ? 2 : rc;
    size_t n = o->ntraces;
    report_opts_free(o);
    return n == 1 ? 0 : opts_usage(usage, "one trace only, not %s", n == 2 ? "two" : "several");
}

/* Contract in report.h. */
int report_open(report_trace *t, report_stats *s, const report_opts *o)
{
    char err[PATH_MAX + CONF_ERR_LEN]; /* the trace's path and its reason: never cut */
    if (report_trace_load(t, o->trace, err, sizeof err) != 0) {
        fprintf(stderr, "shim-report: %s\n", err);
        return 1;
    }
    if (t->truncated)
        fprintf(stderr, "shim-report: %s: %s\n", o->trace, t->note);
    if (report_stats_compute(s, t) != 0) {
        fprintf(stderr, "shim-report: %s: out of memory\n", o->trace);
        report_trace_free(t);
        return 1;
    }
    return 0;
}

/* Contract in report.h. */
int report_open_many(const report_opts *o, report_trace **t, report_stats **s, size_t *n)
{
    *t = calloc(o->ntraces, sizeof **t);
    *s = calloc(o->ntraces, sizeof **s);
    *n = 0;
    if (*t == NULL || *s == NULL) {
        fprintf(stderr, "shim-report: out of memory\n");
        return 1;
    }
    return report_open_all(o, *t, *s, n);
}

/* Contract in report.h. */
int report_run_one(int argc, char **argv, const char *usage, int allow_json, int allow_output,
                   report_one_fn fn)
{
    report_opts o;
    report_trace t;
    report_stats s;
    if (report_opts_parse(&o, argc, argv, usage, allow_json, allow_output) != 0)
        return 2;
    if (report_open(&t, &s, &o) != 0)
        return 1;
    int rc = fn(&t, &s, &o);
    report_stats_free(&s);
    report_trace_free(&t);
    return rc;
}

/* Contract in report.h. */
void report_close_all(report_trace *t, report_stats *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        report_stats_free(&s[i]);
        report_trace_free(&t[i]);
    }
    free(t);
    free(s);
}

/* Contract in report.h. */
int report_open_all(const report_opts *o, report_trace *t, report_stats *s, size_t *n)
{
    int rc = 0;
    *n = 0;
    for (size_t i = 0; i < o->ntraces; i++) {
        report_opts one = *o;
        one.trace = o->traces[i];
        if (report_open(&t[*n], &s[*n], &one) != 0)
            rc = 1;
        else
            (*n)++;
    }
    return rc;
}
