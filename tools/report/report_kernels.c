/* report_kernels.c — `shim-report kernels`: every kernel by name with its launches and measured
 * time, as a text table (one kernel per line) or JSON. */
#include "report.h"

#define USAGE "kernels [--json] TRACE"
#define U(x)  ((unsigned long long)(x))

static double mean(const report_kernel *k)
{
    return k->timed ? k->total_us / (double)k->timed : 0.0;
}

/* Contract in report.h. */
void report_kernel_json_fields(FILE *out, const report_kernel *k)
{
    fprintf(out, "\"name\": ");
    report_json_string(out, k->name);
    fprintf(out, ", \"launches\": %llu, \"timed_launches\": %llu, \"total_us\": ", U(k->launches),
            U(k->timed));
    report_json_double(out, k->total_us);
}

static void print_json(FILE *out, const report_stats *s)
{
    fprintf(out, "{\"kernels\": [");
    for (size_t i = 0; i < s->nkernels; i++) {
        const report_kernel *k = &s->kernels[i];
        fprintf(out, "%s\n  {", i ? "," : "");
        report_kernel_json_fields(out, k);
        fprintf(out, ", \"mean_us\": ");
        report_json_double(out, mean(k));
        fprintf(out, ", \"min_us\": ");
        report_json_double(out, k->min_us);
        fprintf(out, ", \"max_us\": ");
        report_json_double(out, k->max_us);
        fputc('}', out);
    }
    fprintf(out, "\n]}\n");
}

/* Contract in report.h. */
void report_kernels_print(FILE *out, const report_stats *s, int json)
{
    if (json) {
        print_json(out, s);
        return;
    }
    fprintf(out, "%14s %9s %9s %12s %12s %12s  %s\n", "total_us", "launches", "timed", "mean_us",
            "min_us", "max_us", "name");
    for (size_t i = 0; i < s->nkernels; i++) {
        const report_kernel *k = &s->kernels[i];
        fprintf(out, "%14.3f %9llu %9llu %12.3f %12.3f %12.3f  ", k->total_us, U(k->launches),
                U(k->timed), mean(k), k->min_us, k->max_us);
        report_text_string(out, k->name);
        fputc('\n', out);
    }
}

static int kernels(const report_trace *t, const report_stats *s, const report_opts *o)
{
    (void)t;
    report_kernels_print(stdout, s, o->json);
    return 0;
}

/* `kernels [--json] TRACE`. Exit status as in report.h. */
int report_kernels_main(int argc, char **argv, char **envp)
{
    (void)envp;
    return report_run_one(argc, argv, USAGE, 1, 0, kernels);
}
