/* report_config.c — `shim-report config`: effective configuration with provenance, or errors. */
#include "report.h"

#include "conf.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void put_line(void *ctx, const char *line)
{
    fprintf((FILE *)ctx, "%s\n", line);
}

/* Contract in report.h. */
void report_config_help(FILE *out)
{
    fprintf(out, "usage: shim-report config [--file F] [--reference]\n"
                 "  --file F      read F instead of the file named by SHIM_CONFIG\n"
                 "  --reference   print the option reference (Markdown) instead (alone)\n");
}

/* "shim-report: config: WHAT" and the usage on stderr; 2. */
static int config_usage(const char *what, const char *arg)
{
    fprintf(stderr, "shim-report: config: ");
    fprintf(stderr, what, arg);
    fputc('\n', stderr);
    report_config_help(stderr);
    return 2;
}

/* Contract in report.h. SHIM_* variables of envp apply on top of the file, as in the shim. */
int report_config_main(int argc, char **argv, char **envp)
{
    static const struct option longs[] = {{"file", required_argument, NULL, 'f'},
                                          {"reference", no_argument, NULL, 'r'},
                                          {NULL, 0, NULL, 0}};
    const char *file = NULL;
    optind = 0; /* getopt_long from the start of this argv (glibc) */
    opterr = 0; /* a usage error prints the usage */
    for (int c; (c = getopt_long(argc, argv, ":", longs, NULL)) != -1;) {
        if (c == 'f')
            file = optarg;
        else if (c == 'r' && argc == 2) { /* --reference goes alone */
            conf_reference_markdown(put_line, stdout);
            return 0;
        } else if (c == 'r')
            return config_usage("%s goes alone", "--reference");
        else
            return config_usage(c == ':' ? "%s needs a value" : "unknown option '%s'",
                                argv[optind - 1]);
    }
    if (optind < argc)
        return config_usage("unexpected argument '%s' (config takes no trace)", argv[optind]);
    conf_config cfg;
    conf_diags diags = {0};
    int rc = conf_config_load(&cfg, envp, file, &diags);
    for (size_t i = 0; i < diags.count; i++)
        fprintf(stderr, "%s\n", diags.items[i].text);
    if (diags.dropped > 0)
        fprintf(stderr, "shim-report: %zu more diagnostics not shown\n", diags.dropped);
    if (rc == 0)
        conf_config_describe(&cfg, put_line, stdout);
    else
        fprintf(stderr, "shim-report: the configuration has %zu error%s\n", diags.errors,
                diags.errors == 1 ? "" : "s");
    conf_config_free(&cfg);
    conf_diags_free(&diags);
    return rc == 0 ? 0 : 1;
}
