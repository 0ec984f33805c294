/* shimrun.c — shim-run: runs a command under libshim and summarises the traces it wrote.
 *
 *   shim-run [--budget SIZE] [--config FILE] [--trace PATTERN|DIR] [--report FILE] [--quiet]
 *            [--] COMMAND [ARGS...]
 *
 * libshim.so and shim-report are the ones in shim-run's own folder (the build puts all three
 * in build/). The command (searched in PATH) runs with LD_PRELOAD (libshim first, after any
 * sanitizer runtime at the head of the list), SHIM_CONFIG, SHIM_BUDGET and SHIM_TRACE_PATH
 * set; SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to shim-run are passed on to
 * it. Then the traces the run wrote are summarised together on stderr (shimrun_traces.c).
 *
 * Exit status: the command's, 128+N when signal N ended it (as a shell reports it); 2 bad
 * usage or configuration; 125 shim-run could not start the command (no libshim.so beside it,
 * fork failed); 126 the command cannot be executed, 127 it was not found. */
#include "shimrun.h"

#include "conf.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { EXIT_USAGE = 2, EXIT_LAUNCHER = 125, EXIT_CANNOT_EXEC = 126, EXIT_NOT_FOUND = 127 };

typedef struct options {
    const char *budget, *config, *trace, *report;
    bool quiet;
    char **command;
} options;

/* The environment of the command: owned "NAME=value" strings, NULL-terminated. */
typedef struct env {
    char **vars;
    size_t n;
} env;

/* The signals passed on, and the process they go to (0: none) — the command, then shim-report. */
static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
#define FORWARDED (sizeof forwarded / sizeof forwarded[0])
static volatile sig_atomic_t target;
static bool handled[FORWARDED]; /* false: ignored when shim-run started, and left so */

/* One line "shim-run: ..." on stderr. */
static void vnote(const char *fmt, va_list ap)
{
    fputs("shim-run: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

/* Contract in shimrun.h. */
void shimrun_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vnote(fmt, ap);
    va_end(ap);
}

static int usage(FILE *f, int status)
{
    fputs("usage: shim-run [--budget SIZE] [--config FILE] [--trace PATTERN|DIR] [--report FILE]\n"
          "                [--quiet] [--] COMMAND [ARGS...]\n"
          "Runs COMMAND under libshim (the libshim.so beside shim-run), then summarises the\n"
          "traces it wrote (one column per rank) with shim-report summary, on stderr.\n"
          "  --budget SIZE      device memory budget (SHIM_BUDGET): 20GiB, 75%, auto\n"
          "  --config FILE      libshim's configuration file (SHIM_CONFIG)\n"
          "  --trace PATTERN    trace path (SHIM_TRACE_PATH; %p process id, %r rank); a folder:\n"
          "                     the default name in it (DIR/: made if missing); default,\n"
          "                     unless the configuration sets trace.path:\n"
          "                     shim-DATE-TIME-PID-r%r-p%p.trace here\n"
          "  --report FILE      also write the HTML report of the traces (shim-report html)\n"
          "  --quiet            no summary\n"
          "Exit status: COMMAND's (128+N when signal N ended it); 2 bad usage or configuration;\n"
          "125 COMMAND could not be started; 126 not executable; 127 not found.\n",
          f);
    return status;
}

static int bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vnote(fmt, ap);
    va_end(ap);
    return usage(stderr, EXIT_USAGE);
}

/* Parses argv into o with getopt_long: options up to the first argument that is not one (or
   "--"), "--opt V" or "--opt=V". 0; -1 after --help; EXIT_USAGE after a usage error. */
static int parse_options(options *o, int argc, char **argv)
{
    static const struct option longs[] = {
        {"budget", required_argument, NULL, 'b'},
        {"config", required_argument, NULL, 'c'},
        {"trace", required_argument, NULL, 't'},
        {"report", required_argument, NULL, 'r'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (options){0};
    opterr = 0; /* the messages are shim-run's own */
    for (int c; (c = getopt_long(argc, argv, "+:h", longs, NULL)) != -1;) {
        if (c == 'h') {
            usage(stdout, 0);
            return -1;
        }
        if (c == ':')
            return bad_usage("%s needs a value", argv[optind - 1]);
        if (c == '?')
            return bad_usage("unknown option '%s'", argv[optind - 1]);
        const char **slot = c == 'b'   ? &o->budget
                            : c == 'c' ? &o->config
                            : c == 't' ? &o->trace
                                       : &o->report;
        if (c == 'q')
            o->quiet = true;
        else
            *slot = optarg;
    }
    if (argv[optind] == NULL)
        return bad_usage("no command to run");
    if (o->report && !o->report[0])
        return bad_usage("--report needs a file name");
    /* Named files that could only block or be refused after the run: said now (stat does not
       open, so a FIFO is not waited on; shim-report opens the report without waiting too). */
    struct stat st;
    if (o->report && stat(o->report, &st) == 0 && !S_ISREG(st.st_mode))
        return bad_usage("--report %s: not a regular file (%s)", o->report,
                         S_ISFIFO(st.st_mode) ? "a FIFO" : "a folder, device or socket");
    if (o->config && stat(o->config, &st) == 0 && !S_ISREG(st.st_mode))
        return bad_usage("--config %s: not a regular file (%s)", o->config,
                         S_ISFIFO(st.st_mode) ? "a FIFO" : "a folder, device or socket");
    if (o->trace && stat(o->trace, &st) == 0 && !S_ISDIR(st.st_mode))
        return bad_usage("--trace %s: exists and is not a folder (a trace is only ever a new "
                         "file)",
                         o->trace);
    char err[CONF_ERR_LEN];
    if (o->budget && conf_option_check_text(CONF_BUDGET, o->budget, err, sizeof err) != 0)
        return bad_usage("--budget '%s' (SHIM_BUDGET): %s", o->budget, err);
    o->command = argv + optind;
    return 0;
}

/* Sets NAME=value in e, replacing an earlier NAME. 0, or -1 when memory ran out. */
static int env_set(env *e, const char *name, const char *value)
{
    char *var;
    if (asprintf(&var, "%s=%s", name, value) < 0)
        return -1;
    size_t len = strlen(name) + 1;
    for (size_t i = 0; i < e->n; i++)
        if (strncmp(e->vars[i], var, len) == 0) {
            free(e->vars[i]);
            e->vars[i] = var;
            return 0;
        }
    char **v = realloc(e->vars, (e->n + 2) * sizeof *v);
    if (v == NULL) {
        free(var);
        return -1;
    }
    e->vars = v;
    e->vars[e->n++] = var;
    e->vars[e->n] = NULL;
    return 0;
}

static void env_free(env *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->vars[i]);
    free(e->vars);
    *e = (env){0};
}

/* A copy of shim-run's own environment; -1 when memory ran out. */
static int env_copy(env *e)
{
    *e = (env){calloc(1, sizeof(char *)), 0};
    int rc = e->vars ? 0 : -1;
    for (char **v = environ; rc == 0 && *v; v++) {
        char *eq = strchr(*v, '=');
        if (eq == NULL)
            continue;
        *eq = '\0';
        rc = env_set(e, *v, eq + 1);
        *eq = '=';
    }
    return rc;
}

/* Whether an LD_PRELOAD entry is a sanitizer's runtime, which must stay first in the list. */
static bool sanitizer_runtime(const char *entry, size_t len)
{
    static const char *const names[] = {"libasan", "libtsan",   "libubsan",
                                        "liblsan", "libhwasan", "libclang_rt."};
    const char *base = entry;
    for (size_t i = 0; i < len; i++)
        if (entry[i] == '/')
            base = entry + i + 1;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (strncmp(base, names[k], strlen(names[k])) == 0)
            return true;
    return false;
}

/* LD_PRELOAD for the command: lib, then the entries of cur (space or colon separated) except
   lib itself, sanitizer runtimes at the head of cur kept ahead of lib. malloc'd; NULL when
   memory ran out. */
static char *preload_list(const char *lib, const char *cur)
{
    size_t cap = strlen(lib) + (cur ? strlen(cur) : 0) + 3, n = 0; /* ':' each, NUL */
    char *out = malloc(cap);
    bool placed = false;
    for (const char *p = cur ? cur : ""; out;) {
        p += strspn(p, " :");
        size_t len = strcspn(p, " :");
        if (!placed && (len == 0 || !sanitizer_runtime(p, len))) {
            n += (size_t)sprintf(out + n, "%s%s", n ? ":" : "", lib);
            placed = true;
        }
        if (len == 0)
            break;
        if (len != strlen(lib) || strncmp(p, lib, len) != 0)
            n += (size_t)sprintf(out + n, "%s%.*s", n ? ":" : "", (int)len, p);
        p += len;
    }
    return out;
}

/* A trace pattern made absolute against the working directory, whose '%' are doubled so that
   libshim's expansion gives them back. malloc'd; NULL when memory ran out. */
static char *absolute_pattern(const char *pattern)
{
    if (pattern[0] == '/' || pattern[0] == '\0')
        return strdup(pattern);
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) == NULL)
        return NULL;
    char *out = malloc(2 * strlen(cwd) + strlen(pattern) + 2);
    size_t n = 0;
    for (const char *c = cwd; out && *c; c++) {
        if (*c == '%')
            out[n++] = '%';
        out[n++] = *c;
    }
    if (out)
        sprintf(out + n, "%s%s", strcmp(cwd, "/") ? "/" : "", pattern);
    return out;
}

/* The default pattern in the folder path (NULL: the working directory). */
static char *default_pattern(const char *path)
{
    char *dir = realpath(path ? path : ".", NULL);
    char *pattern = dir ? shimrun_default_pattern(strcmp(dir, "/") ? dir : "") : NULL;
    free(dir);
    return pattern;
}

/* The trace pattern for the command, absolute ("" for none): --trace (a folder: the default
   name in it), else the configuration's trace.path when e's file or variables set it, else the
   default in the working directory. malloc'd; NULL when memory ran out. */
static char *trace_pattern(const options *o, const env *e)
{
    struct stat st;
    if (o->trace && o->trace[0] && stat(o->trace, &st) == 0 && S_ISDIR(st.st_mode))
        return default_pattern(o->trace);
    if (o->trace)
        return absolute_pattern(o->trace);
    conf_config cfg;
    conf_diags diags = {0};
    conf_config_load(&cfg, e->vars, NULL, &diags); /* errors: told after the final load */
    char *pattern = cfg.set[CONF_TRACE_PATH].origin != CONF_FROM_DEFAULT
                        ? absolute_pattern(conf_get_string(&cfg, CONF_TRACE_PATH))
                        : default_pattern(NULL);
    conf_config_free(&cfg);
    conf_diags_free(&diags);
    return pattern;
}

/* Checks the command's configuration as libshim will read it: 0 with what the run will use in
   plan ("mode M, budget B"), or EXIT_USAGE after the diagnostics when it has errors. */
static int check_config(const env *e, char *plan, size_t len)
{
    conf_config cfg;
    conf_diags diags = {0};
    int rc = conf_config_load(&cfg, e->vars, NULL, &diags);
    for (size_t i = 0; rc != 0 && i < diags.count; i++)
        shimrun_note("%s", diags.items[i].text);
    if (rc != 0)
        shimrun_note("the configuration has errors: nothing run");
    char budget[64], mode[16];
    conf_size size = conf_get_size(&cfg, CONF_BUDGET);
    conf_size_format(&size, budget, sizeof budget);
    conf_option_choice(CONF_MODE, conf_get_choice(&cfg, CONF_MODE), mode, sizeof mode);
    snprintf(plan, len, "mode %s, budget %s", mode, budget);
    conf_config_free(&cfg);
    conf_diags_free(&diags);
    return rc == 0 ? 0 : EXIT_USAGE;
}

/* The folder shim-run's executable is in (malloc'd), or NULL. */
static char *own_folder(void)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0)
        return NULL;
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (slash == NULL)
        return NULL;
    *slash = '\0';
    return strdup(buf);
}

/* Makes the folder path and its missing parents (mkdir -p), a note naming the part that
   failed. 0, or -1 after the note. */
static int make_folder(const char *path)
{
    char *p = strdup(path);
    int rc = p ? 0 : -1;
    for (char *slash = p; rc == 0 && slash;) {
        slash = strchr(slash + 1, '/');
        if (slash)
            *slash = '\0';
        struct stat st;
        if (p[0] && mkdir(p, 0777) != 0 &&
            (errno != EEXIST || stat(p, &st) != 0 || !S_ISDIR(st.st_mode))) {
            shimrun_note("--trace %s: cannot make the folder %s: %s", path, p,
                         errno == EEXIST ? "not a folder" : strerror(errno));
            rc = -1;
        }
        if (slash)
            *slash = '/';
    }
    if (p == NULL)
        shimrun_note("out of memory");
    free(p);
    return rc;
}

/* The command's environment: shim-run's, with LD_PRELOAD, SHIM_CONFIG, SHIM_BUDGET and
   SHIM_TRACE_PATH; *pattern the trace pattern. 0; EXIT_USAGE or EXIT_LAUNCHER after a note. */
static int command_env(const options *o, const char *lib, env *e, char **pattern)
{
    *pattern = NULL;
    size_t tlen = o->trace ? strlen(o->trace) : 0;
    if (tlen && o->trace[tlen - 1] == '/' && make_folder(o->trace) != 0)
        return EXIT_USAGE; /* --trace DIR/: the folder the traces go in, made as mkdir -p */
    char *config = o->config ? realpath(o->config, NULL) : NULL;
    if (o->config && config == NULL) {
        shimrun_note("--config %s: %m", o->config);
        return EXIT_USAGE;
    }
    char *preload = preload_list(lib, getenv("LD_PRELOAD"));
    bool ok = preload && env_copy(e) == 0 && env_set(e, "LD_PRELOAD", preload) == 0 &&
              (!config || env_set(e, "SHIM_CONFIG", config) == 0) &&
              (!o->budget || env_set(e, "SHIM_BUDGET", o->budget) == 0) &&
              (*pattern = trace_pattern(o, e)) != NULL &&
              env_set(e, "SHIM_TRACE_PATH", *pattern) == 0;
    free(config);
    free(preload);
    if (!ok) {
        shimrun_note("out of memory");
        return EXIT_LAUNCHER;
    }
    return 0;
}

static void forward(int sig, siginfo_t *info, void *ctx)
{
    (void)ctx;
    pid_t pid = target;
    /* A key on the terminal (SI_KERNEL) signals the whole foreground group, the command too. */
    int saved = errno; /* kill may set it: the interrupted code must not see that */
    if (pid > 0 && !(info->si_code == SI_KERNEL && (sig == SIGINT || sig == SIGQUIT)))
        kill(pid, sig);
    errno = saved;
}

static void install_forwarding(void)
{
    struct sigaction sa = {.sa_sigaction = forward, .sa_flags = SA_SIGINFO | SA_RESTART};
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < FORWARDED; i++) {
        struct sigaction old;
        sigaction(forwarded[i], NULL, &old);
        handled[i] = old.sa_handler != SIG_IGN;
        if (handled[i])
            sigaction(forwarded[i], &sa, NULL);
    }
}

/* In a child: the default action for the forwarded signals, the mask shim-run started with. */
static void child_signals(const sigset_t *mask)
{
    for (size_t i = 0; i < FORWARDED; i++)
        if (handled[i])
            signal(forwarded[i], SIG_DFL);
    sigprocmask(SIG_SETMASK, mask, NULL);
}

/* Starts argv; its exec error (errno) or 0 in *exec_errno. The pid, or -1 after a note. */
static pid_t start(char *const *argv, char *const *envp, bool stdout_to_stderr, int *exec_errno)
{
    sigset_t block, old;
    sigemptyset(&block);
    for (size_t i = 0; i < FORWARDED; i++)
        sigaddset(&block, forwarded[i]);
    int fd[2];
    if (pipe2(fd, O_CLOEXEC) != 0) {
        shimrun_note("pipe: %m");
        return -1;
    }
    sigprocmask(SIG_BLOCK, &block, &old); /* a signal now is passed on once target is set */
    pid_t pid = fork();
    if (pid == 0) {
        child_signals(&old);
        close(fd[0]);
        if (stdout_to_stderr)
            dup2(2, 1);
        execvpe(argv[0], argv, envp);
        int e = errno;
        ssize_t w = write(fd[1], &e, sizeof e);
        _exit(w == (ssize_t)sizeof e && e == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC);
    }
    if (pid > 0)
        target = pid;
    else
        shimrun_note("fork: %m");
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(fd[1]);
    *exec_errno = 0;
    while (pid > 0 && read(fd[0], exec_errno, sizeof *exec_errno) < 0 && errno == EINTR)
        ;
    close(fd[0]);
    return pid;
}

/* Waits for pid; its wait status. */
static int wait_for(pid_t pid)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    target = 0;
    return status;
}

/* Contract in shimrun.h. */
int shimrun_tool(char *const *argv, char *const *envp, bool stdout_to_stderr)
{
    int exec_errno;
    pid_t pid = start(argv, envp, stdout_to_stderr, &exec_errno);
    if (pid < 0)
        return -1;
    int status = wait_for(pid);
    if (exec_errno) {
        shimrun_note("%s: %s", argv[0], strerror(exec_errno));
        return -1;
    }
    return status;
}

/* Runs the command; its exit status as a shell gives it. *ran: whether it started. */
static int run_command(char *const *argv, char *const *envp, bool *ran)
{
    int exec_errno;
    pid_t pid = start(argv, envp, false, &exec_errno);
    *ran = false;
    if (pid < 0)
        return EXIT_LAUNCHER;
    int status = wait_for(pid);
    if (exec_errno) {
        shimrun_note("%s: %s", argv[0], strerror(exec_errno));
        return exec_errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC;
    }
    *ran = true;
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

/* The run once the environment is ready: the traces listed before and after, the report.
   plan: what check_config said, told first unless quiet. */
static int run(const options *o, const env *e, const char *pattern, const char *folder,
               const char *plan)
{
    shimrun_traces before = {0}, after = {0};
    int listed = pattern[0] ? shimrun_traces_list(&before, pattern) : 1;
    if (listed < 0)
        return EXIT_USAGE; /* the folder for the traces is not there */
    if (!o->quiet)
        shimrun_note("%s, traces %s", plan, pattern[0] ? pattern : "none (trace.path is empty)");
    bool ran;
    install_forwarding();
    int status = run_command(o->command, e->vars, &ran);
    if (ran && listed == 0 && shimrun_traces_list(&after, pattern) == 0) {
        shimrun_traces_new(&after, &before);
        char *tool;
        if (asprintf(&tool, "%s/shim-report", folder) >= 0) {
            shimrun_traces_report(&after, tool, environ, o->report, o->quiet);
            free(tool);
        }
    } else if (ran && !pattern[0] && o->report)
        shimrun_note("--report %s: no trace (trace.path is empty): no report", o->report);
    shimrun_traces_free(&before);
    shimrun_traces_free(&after);
    return status;
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse_options(&o, argc, argv);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    char *folder = own_folder(), *lib = NULL;
    if (folder && asprintf(&lib, "%s/libshim.so", folder) < 0)
        lib = NULL;
    if (lib == NULL || access(lib, R_OK) != 0) {
        shimrun_note("no libshim.so beside shim-run (%s): build it (make)", lib ? lib : "?");
        free(folder);
        free(lib);
        return EXIT_LAUNCHER;
    }
    env e = {0};
    char *pattern = NULL;
    if (strpbrk(lib, " :")) {
        shimrun_note("%s: LD_PRELOAD cannot name a path with a space or a colon", lib);
        rc = EXIT_LAUNCHER;
    } else
        rc = command_env(&o, lib, &e, &pattern);
    char plan[128];
    if (rc == 0)
        rc = check_config(&e, plan, sizeof plan);
    if (rc == 0)
        rc = run(&o, &e, pattern, folder, plan);
    env_free(&e);
    free(pattern);
    free(lib);
    free(folder);
    return rc;
}
