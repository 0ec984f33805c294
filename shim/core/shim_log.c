/* shim_log.c — the shim's log: one line per message, no allocation, rate-limited, never re-entrant.
 *
 * Lines read "libshim[PID]: LEVEL: message", always one line (control characters in a message
 * become spaces or '?'). They go to standard error or to the configured file (log.file: the
 * pattern expanded by shim_path_expand, opened once and appended to). At most 100 messages per
 * second are written; the rest are counted and the count is reported with the next line that
 * gets through.
 *
 * The log file is opened so that it never writes into something else: a symbolic link as the
 * last component is refused (O_NOFOLLOW), and so is anything but a regular file owned by this
 * user (a FIFO is not waited on: O_NONBLOCK). A new file gets mode 0600; an existing one is
 * appended to, never truncated. When the file cannot be used, one error on standard error says
 * which path and why, and the log stays on standard error. */
#include "shim_core.h"
#include "shim_path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOG_PER_SECOND 100
/* Longest part of a path a message shows (a line is at most 1 KiB). */
#define PATH_SHOWN 400

static int log_fd = 2;
static int log_level = SHIM_LOG_WARN;
static _Atomic long window_start;
static _Atomic int window_count;
static _Atomic long suppressed;
static __thread int in_log;

static const char *const level_names[] = {"", "error", "warning", "info", "debug"};

/* Opens the expanded log path; the descriptor, or -1 with why written into err. */
static int open_log(const char *name, char *err, size_t errlen)
{
    int shown = (int)(strlen(name) > PATH_SHOWN ? PATH_SHOWN : strlen(name));
    const char *more = strlen(name) > PATH_SHOWN ? "..." : "";
    int fd = open(
        name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0600);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "log.file: cannot open '%.*s%s': %s", shown, name, more,
                 e == ELOOP ? "it is a symbolic link (not followed)" : strerror(e));
        return -1;
    }
    struct stat st;
    const char *why = NULL;
    char owner[64];
    if (fstat(fd, &st) != 0) {
        why = strerror(errno);
    } else if (!S_ISREG(st.st_mode)) {
        why = "not a regular file";
    } else if (st.st_uid != geteuid()) {
        snprintf(owner, sizeof owner, "it belongs to uid %u, not to this user",
                 (unsigned)st.st_uid);
        why = owner;
    }
    if (why != NULL) {
        snprintf(err, errlen, "log.file: cannot use '%.*s%s': %s", shown, name, more, why);
        close(fd);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

void shim_log_open(int level, const char *pattern, int rank)
{
    log_level = level; /* CONF_LEVEL_* uses the same numbering, 0 = off */
    if (level == 0 || pattern == NULL || pattern[0] == '\0')
        return;
    char name[PATH_MAX], err[PATH_SHOWN + 200];
    int fd = -1;
    if (shim_path_expand("log.file", pattern, (int)getpid(), rank, name, sizeof name, err,
                         sizeof err) == 0)
        fd = open_log(name, err, sizeof err);
    if (fd >= 0)
        log_fd = fd;
    else
        shim_log(SHIM_LOG_ERROR, "%s; logging to standard error", err);
}

static bool admit(void)
{
    long now = (long)time(NULL);
    long start = atomic_load(&window_start);
    if (now != start && atomic_compare_exchange_strong(&window_start, &start, now))
        atomic_store(&window_count, 0);
    if (atomic_fetch_add(&window_count, 1) < LOG_PER_SECOND)
        return true;
    atomic_fetch_add(&suppressed, 1);
    return false;
}

void shim_log(enum shim_log_level level, const char *fmt, ...)
{
    if ((int)level > log_level || in_log || !admit())
        return;
    in_log = 1;
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "libshim[%d]: %s: ", (int)getpid(), level_names[level]);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof buf)
        n += vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    va_end(ap);
    long lost = atomic_exchange(&suppressed, 0);
    if (lost && n > 0 && (size_t)n < sizeof buf)
        n += snprintf(buf + n, sizeof buf - (size_t)n, " (%ld earlier messages suppressed)", lost);
    if (n > 0) {
        if ((size_t)n >= sizeof buf - 1)
            n = (int)sizeof buf - 2;
        for (int i = 0; i < n; i++) /* one line, whatever the arguments held */
            if ((unsigned char)buf[i] < ' ' || buf[i] == 0x7f)
                buf[i] = buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t' ? ' ' : '?';
        buf[n++] = '\n';
        struct iovec line = {buf, (size_t)n};
        shim_trace_write_all(log_fd, &line, 1); /* a failed line is lost, never retried */
    }
    in_log = 0;
}
