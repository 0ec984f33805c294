/* report_allocs.c — `shim-report allocs`: every allocation in the order it was made, with its
 * size, kind, device (format 1.6; 0 in older traces), lifetime, the launches that touched it and
 * its name (report_trace_names.c), as text (one per line) or JSON. */
#include "report.h"

#define USAGE "allocs [--json] TRACE"
#define U(x)  ((unsigned long long)(x))

static double ms(const report_trace *t, uint64_t ns)
{
    return ns >= t->start_ns ? (double)(ns - t->start_ns) / 1e6 : -(double)(t->start_ns - ns) / 1e6;
}

static void json_string_or_null(FILE *out, const char *s)
{
    if (s)
        report_json_string(out, s);
    else
        fprintf(out, "null");
}

static void print_json(FILE *out, const report_trace *t, const report_stats *s)
{
    fprintf(out, "{\"allocations\": [");
    for (size_t i = 0; i < s->nallocs; i++) {
        const report_alloc *a = &s->allocs[i];
        fprintf(out,
                "%s\n  {\"alloc_id\": %llu, \"bytes\": %llu, \"kind\": \"%s\", "
                "\"device\": %u, \"addr\": \"0x%llx\", \"stream\": \"0x%llx\", \"step\": %lld, "
                "\"tid\": %u, \"born_ms\": ",
                i ? "," : "", U(a->id), U(a->bytes), report_alloc_kind_name(a->kind), a->device,
                U(a->addr), U(a->stream), (long long)a->step, a->tid);
        report_json_double(out, ms(t, a->t_alloc));
        fprintf(out, ", \"freed_ms\": ");
        if (a->freed)
            report_json_double(out, ms(t, a->t_free));
        else
            fprintf(out, "null");
        char name[REPORT_ALLOC_NAME_MAX];
        fprintf(out, ", \"touches\": %llu, \"role\": \"%s\", \"first_kernel\": ", U(a->touches),
                report_alloc_role_name(report_alloc_role_of(a, s)));
        json_string_or_null(out, a->first_kernel);
        fprintf(out, ", \"last_kernel\": ");
        json_string_or_null(out, a->last_kernel);
        fprintf(out, ", \"name\": ");
        report_json_string(out, report_alloc_name(a, s, name, sizeof name));
        fputc('}', out);
    }
    fprintf(out, "\n]}\n");
}

/* Contract in report.h. */
void report_allocs_print(FILE *out, const report_trace *t, const report_stats *s, int json)
{
    if (json) {
        print_json(out, t, s);
        return;
    }
    fprintf(out, "%12s %14s %8s %6s %18s %18s %6s %12s %12s %8s  %s\n", "alloc_id", "bytes", "kind",
            "device", "addr", "stream", "step", "born_ms", "freed_ms", "touches", "name");
    for (size_t i = 0; i < s->nallocs; i++) {
        const report_alloc *a = &s->allocs[i];
        char addr[24], stream[24];
        snprintf(addr, sizeof addr, "0x%llx", U(a->addr));
        snprintf(stream, sizeof stream, "0x%llx", U(a->stream));
        fprintf(out, "%12llu %14llu %8s %6u %18s %18s %6lld %12.3f ", U(a->id), U(a->bytes),
                report_alloc_kind_name(a->kind), a->device, addr, stream, (long long)a->step,
                ms(t, a->t_alloc));
        if (a->freed)
            fprintf(out, "%12.3f", ms(t, a->t_free));
        else
            fprintf(out, "%12s", "-");
        char name[REPORT_ALLOC_NAME_MAX];
        fprintf(out, " %8llu  ", U(a->touches));
        report_text_string(out, report_alloc_name(a, s, name, sizeof name));
        fputc('\n', out);
    }
}

static int allocs(const report_trace *t, const report_stats *s, const report_opts *o)
{
    report_allocs_print(stdout, t, s, o->json);
    return 0;
}

/* `allocs [--json] TRACE`. Exit status as in report.h. */
int report_allocs_main(int argc, char **argv, char **envp)
{
    (void)envp;
    return report_run_one(argc, argv, USAGE, 1, 0, allocs);
}
