/* shim_log.c — the shim's log: one line per message, no allocation, rate-limited, never re-entrant.
 *
 * Lines read "libshim[PID]: LEVEL: message". They go to standard error or to
 * the configured file (opened once, appended). At most 100 messages per second
 * are written; the rest are counted and the count is reported with the next
 * line that gets through. */
#include "shim_internal.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOG_PER_SECOND 100

static int log_fd = 2;
static int log_level = SHIM_LOG_WARN;
static _Atomic long window_start;
static _Atomic int window_count;
static _Atomic long suppressed;
static __thread int in_log;

static const char *const level_names[] = {"", "error", "warning", "info", "debug"};

void shim_log_open(int level, const char *path)
{
    log_level = level; /* CONF_LEVEL_* uses the same numbering, 0 = off */
    if (path && *path) {
        char name[4096];
        const char *p = path;
        size_t n = 0;
        for (; *p && n + 24 < sizeof name; p++) {
            if (p[0] == '%' && p[1] == 'p') {
                n += (size_t)snprintf(name + n, sizeof name - n, "%d", (int)getpid());
                p++;
            } else {
                name[n++] = *p;
            }
        }
        name[n] = '\0';
        int fd = open(name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (fd >= 0)
            log_fd = fd;
    }
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
        buf[n++] = '\n';
        ssize_t w = write(log_fd, buf, (size_t)n);
        (void)w;
    }
    in_log = 0;
}
