/* report.h — shim-report's subcommands: one file each (tools/report_NAME.c), one table in main. */
#ifndef REPORT_H
#define REPORT_H

/* A subcommand gets its own arguments (argv[0] is its name) and the environment.
   Returns the process exit status: 0 success, 1 the input has errors, 2 bad usage. */
typedef int (*report_fn)(int argc, char **argv, char **envp);

typedef struct report_command {
    const char *name;
    report_fn run;
    const char *usage; /* arguments after the name, "" when none */
    const char *help;  /* one line */
} report_command;

/* `config [--file F] [--reference]`: the effective configuration and the source of each
   value; with errors, every diagnostic on stderr and exit status 1. */
int report_config_main(int argc, char **argv, char **envp);

#endif
