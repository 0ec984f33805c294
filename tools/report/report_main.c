/* report_main.c — shim-report's entry point: dispatches to the subcommand named first. */
#include "report.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static void model_help(FILE *out)
{
    report_model_help(out, 0);
}

static void plan_help(FILE *out)
{
    report_model_help(out, 1);
}

/* Every subcommand, in the order `shim-report --help` lists them. */
static const report_command commands[] = {
    {"config", report_config_main, "[--file F] [--reference]",
     "effective configuration and the source of each value", report_config_help},
    {"summary", report_summary_main, "[--json] [--top N] TRACE...",
     "steps, launches, allocations, peak device bytes, top allocations and kernels; several "
     "traces (ranks): side by side",
     NULL},
    {"kernels", report_kernels_main, "[--json] TRACE", "every kernel: launches and measured time",
     NULL},
    {"allocs", report_allocs_main, "[--json] TRACE",
     "every allocation: size, kind, device, lifetime", NULL},
    {"moves", report_moves_main, "[--json] TRACE",
     "every residency move: unit, direction, bytes, reason, outcome, times", NULL},
    {"html", report_html_main, "[--top N] [-o FILE] TRACE...",
     "one self-contained HTML page: memory, steps, moves, plan, tables, configuration; several "
     "traces (ranks): side by side, then each",
     NULL},
    {"perfetto", report_perfetto_main, "[-o FILE] TRACE...",
     "Chrome trace JSON for Perfetto (torch.profiler's layout), one process per rank and GPU",
     NULL},
    {"memviz", report_memviz_main, "[-o FILE] TRACE",
     "allocation history as a pickled snapshot for pytorch.org/memory_viz", NULL},
    {"model", report_model_main, "[--step N] [-o FILE] TRACE",
     "the iteration model of a recorded step, for shim-plan (planner/MODEL-FORMAT.md)", model_help},
    {"plan", report_plan_main, "--budget SIZE [--planner K] [--proposals N] [--json] TRACE",
     "what-if: plan a recorded step for a budget; predicted step time, stall, bound", plan_help},
};

#define COMMAND_COUNT (sizeof commands / sizeof commands[0])

static int usage(FILE *out, int status)
{
    fprintf(out, "usage: shim-report COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < COMMAND_COUNT; i++)
        fprintf(out, "  %-8s %-28s %s\n", commands[i].name, commands[i].usage, commands[i].help);
    return status;
}

/* Whether args (a subcommand's, after its name) ask for its help: --help or -h before any "--". */
static int wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return 1;
    return 0;
}

/* `shim-report NAME --help`: its help on standard output; 0. */
static int command_help(const report_command *c)
{
    if (c->more)
        c->more(stdout);
    else
        printf("usage: shim-report %s %s\n%s\n", c->name, c->usage, c->help);
    return 0;
}

/* Exit status: the subcommand's (0 for its --help), or 2 for a missing or unknown
   subcommand. */
int main(int argc, char **argv, char **envp)
{
    /* Past a file size limit a write fails (EFBIG) and the command says so, rather than being
       ended by SIGXFSZ with half a file written. */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        fprintf(stderr, "shim-report: no command given: COMMAND, one of those below\n");
        return usage(stderr, 2);
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0)
        return usage(stdout, 0);
    for (size_t i = 0; i < COMMAND_COUNT; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return wants_help(argc - 1, argv + 1) ? command_help(&commands[i])
                                                  : commands[i].run(argc - 1, argv + 1, envp);
    fprintf(stderr, "shim-report: unknown command '%s'\n", argv[1]);
    return usage(stderr, 2);
}
