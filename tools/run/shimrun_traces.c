/* shimrun_traces.c — shim-run's traces: the default path pattern, the files of a run
 * (those matching the pattern that were not there before it), and shim-report on them. */
#include "shimrun.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Contract in shimrun.h. */
char *shimrun_default_pattern(const char *dir)
{
    size_t len = strlen(dir), n = 0;
    char *out = malloc(2 * len + 80);
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        if (dir[i] == '%')
            out[n++] = '%';
        out[n++] = dir[i];
    }
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    n += strftime(out + n, 40, "/shim-%Y%m%d-%H%M%S", &tm);
    snprintf(out + n, 40, "-%d-r%%r-p%%p.trace", (int)getpid());
    return out;
}

/* Contract in shimrun.h. */
bool shimrun_pattern_match(const char *base, const char *name)
{
    if (*base == '\0')
        return *name == '\0';
    if (base[0] == '%' && (base[1] == 'p' || base[1] == 'r')) {
        const char *s = name + (base[1] == 'r' && *name == '-');
        /* digits, as many as let the rest match */
        for (; isdigit((unsigned char)*s); s++)
            if (shimrun_pattern_match(base + 2, s + 1))
                return true;
        return false;
    }
    if (base[0] == '%' && base[1] == '%')
        return *name == '%' && shimrun_pattern_match(base + 2, name + 1);
    return *base == *name && shimrun_pattern_match(base + 1, name + 1);
}

/* The folder of an absolute pattern (its first len bytes) with "%%" read as '%'; NULL when
   memory ran out, or with *listable false when it holds another directive, which only the
   process writing a trace can expand. */
static char *pattern_dir(const char *pattern, size_t len, bool *listable)
{
    char *dir = malloc(len + 2);
    if (dir == NULL)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (pattern[i] == '%' && pattern[i + 1] != '%') {
            *listable = false;
            free(dir);
            return NULL;
        }
        dir[n++] = pattern[i];
        i += pattern[i] == '%';
    }
    if (n == 0)
        dir[n++] = '/';
    dir[n] = '\0';
    return dir;
}

static int by_name(const void *pa, const void *pb)
{
    return strcmp(*(char *const *)pa, *(char *const *)pb);
}

/* Appends a copy of name to t->names (room: t->cap). 0, or -1 when memory ran out. */
static int add_name(shimrun_traces *t, size_t *cap, const char *name)
{
    if (t->n == *cap) {
        size_t c = *cap ? 2 * *cap : 16;
        char **v = realloc(t->names, c * sizeof *v);
        if (v == NULL)
            return -1;
        t->names = v;
        *cap = c;
    }
    t->names[t->n] = strdup(name);
    return t->names[t->n++] ? 0 : -1;
}

/* Contract in shimrun.h. */
int shimrun_traces_list(shimrun_traces *t, const char *pattern)
{
    *t = (shimrun_traces){0};
    const char *slash = strrchr(pattern, '/');
    bool listable = true;
    t->dir = slash ? pattern_dir(pattern, (size_t)(slash - pattern), &listable) : NULL;
    t->base = slash ? strdup(slash + 1) : NULL;
    DIR *d = t->dir && t->base ? opendir(t->dir) : NULL;
    if (d == NULL) {
        if (!listable)
            shimrun_note("trace path %s: %%p or %%r in its folder: the traces cannot be listed "
                         "(no summary)",
                         pattern);
        else if (t->dir && t->base)
            shimrun_note("trace folder %s: %m", t->dir);
        else
            shimrun_note("out of memory");
        shimrun_traces_free(t);
        return listable ? -1 : 1;
    }
    size_t cap = 0;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;)
        if (shimrun_pattern_match(t->base, e->d_name))
            rc = add_name(t, &cap, e->d_name);
    closedir(d);
    if (rc != 0) {
        shimrun_note("out of memory");
        shimrun_traces_free(t);
        return -1;
    }
    if (t->n > 1)
        qsort(t->names, t->n, sizeof *t->names, by_name);
    return 0;
}

/* Contract in shimrun.h. */
void shimrun_traces_new(shimrun_traces *after, const shimrun_traces *before)
{
    size_t kept = 0;
    for (size_t i = 0; i < after->n; i++) {
        char *name = after->names[i];
        if (bsearch(&name, before->names, before->n, sizeof name, by_name))
            free(name);
        else
            after->names[kept++] = name;
    }
    after->n = kept;
}

/* Contract in shimrun.h. */
void shimrun_traces_free(shimrun_traces *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->names[i]);
    free(t->names);
    free(t->dir);
    free(t->base);
    *t = (shimrun_traces){0};
}

/* Whether `tool --help` lists command (a line "  COMMAND ..."), read through a pipe. */
static bool tool_has_command(const char *tool, const char *command, char *const *env)
{
    int fd[2];
    if (pipe(fd) != 0)
        return false;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execve(tool, (char *const[]){(char *)tool, "--help", NULL}, env);
        _exit(127);
    }
    close(fd[1]);
    FILE *f = pid > 0 ? fdopen(fd[0], "r") : NULL;
    bool found = false;
    char line[512];
    size_t len = strlen(command);
    while (f && fgets(line, sizeof line, f))
        found |= strncmp(line, "  ", 2) == 0 && strncmp(line + 2, command, len) == 0 &&
                 line[2 + len] == ' ';
    if (f)
        fclose(f);
    else
        close(fd[0]);
    if (pid > 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    return found;
}

/* argv for `shim-report SUBCOMMAND` and the traces' paths, then extra (NULL-terminated); NULL
   when memory ran out. Free the paths from argv[2] to the first extra, then argv. */
static char **report_argv(const shimrun_traces *t, const char *tool, const char *sub,
                          char *const *extra, size_t nextra)
{
    char **argv = calloc(t->n + nextra + 3, sizeof *argv);
    if (argv == NULL)
        return NULL;
    argv[0] = (char *)tool;
    argv[1] = (char *)sub;
    for (size_t i = 0; i < t->n; i++) {
        bool root = strcmp(t->dir, "/") == 0;
        if (asprintf(&argv[2 + i], "%s/%s", root ? "" : t->dir, t->names[i]) < 0) {
            for (size_t k = 0; k < i; k++)
                free(argv[2 + k]);
            free(argv);
            return NULL;
        }
    }
    for (size_t i = 0; i < nextra; i++)
        argv[2 + t->n + i] = extra[i];
    return argv;
}

static void free_argv(char **argv, size_t npaths)
{
    for (size_t i = 0; argv && i < npaths; i++)
        free(argv[2 + i]);
    free(argv);
}

/* A wait status in words, for a note. */
static const char *status_words(int status, char *buf, size_t n)
{
    if (WIFSIGNALED(status))
        snprintf(buf, n, "was killed by signal %d", WTERMSIG(status));
    else
        snprintf(buf, n, "exited with status %d", WEXITSTATUS(status));
    return buf;
}

static void summary(const shimrun_traces *t, const char *tool, char *const *env)
{
    char **argv = report_argv(t, tool, "summary", NULL, 0);
    if (argv == NULL) {
        shimrun_note("out of memory");
        return;
    }
    shimrun_note("%zu trace%s of this run:", t->n, t->n == 1 ? "" : "s");
    for (size_t i = 0; i < t->n; i++)
        fprintf(stderr, "  %s\n", argv[2 + i]);
    fprintf(stderr, "\n");
    fflush(stderr);
    char words[64];
    int st = shimrun_tool(argv, env, true);
    if (st != -1 && st != 0)
        shimrun_note("shim-report summary %s", status_words(st, words, sizeof words));
    free_argv(argv, t->n);
}

static void html(const shimrun_traces *t, const char *tool, char *const *env, const char *report)
{
    if (!tool_has_command(tool, "html", env)) {
        shimrun_note("--report %s: %s has no html command: no report written (the traces are "
                     "kept)",
                     report, tool);
        return;
    }
    char **argv = report_argv(t, tool, "html", (char *const[]){"-o", (char *)report}, 2);
    if (argv == NULL) {
        shimrun_note("out of memory");
        return;
    }
    char words[64];
    int st = shimrun_tool(argv, env, false);
    if (st == 0)
        shimrun_note("report written to %s", report);
    else if (st != -1)
        shimrun_note("shim-report html %s: %s may be missing or incomplete",
                     status_words(st, words, sizeof words), report);
    free_argv(argv, t->n);
}

/* Contract in shimrun.h. */
void shimrun_traces_report(const shimrun_traces *t, const char *report_tool, char *const *env,
                           const char *report, bool quiet)
{
    if (t->n == 0) {
        shimrun_note("no trace was written (libshim writes one for a process that uses CUDA, "
                     "unless mode = \"off\")%s",
                     report ? ": no report" : "");
        return;
    }
    if (access(report_tool, X_OK) != 0) {
        shimrun_note("no shim-report beside shim-run (%s): no summary, no report", report_tool);
        return;
    }
    if (!quiet)
        summary(t, report_tool, env);
    if (report)
        html(t, report_tool, env, report);
}
