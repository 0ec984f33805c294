/* shim_trace_writer.c — the trace session: start, stop, fork, and the one writer thread. */
#include "shim_path.h"
#include "shim_trace_internal.h"
#include "base_time.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct shim_trace_state shim_trace_g = {
    .ctl_lock = PTHREAD_MUTEX_INITIALIZER,
    .wake_lock = PTHREAD_MUTEX_INITIALIZER,
    .reg_lock = PTHREAD_MUTEX_INITIALIZER,
    .drain_lock = PTHREAD_MUTEX_INITIALIZER,
    .fd = -1,
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_ok;

/* The condition waits on CLOCK_MONOTONIC so that wall-clock jumps do not stall the writer. */
static void init_once_fn(void)
{
    pthread_condattr_t attr;
    init_ok = pthread_condattr_init(&attr) == 0 &&
              pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0 &&
              pthread_cond_init(&shim_trace_g.wake, &attr) == 0;
    pthread_condattr_destroy(&attr);
    shim_trace_crc32_init(shim_trace_g.crc_table);
}

/* ---- the chunk being filled (writer thread only) ---- */

/* The first failed write: the chunk's records are lost, the file is cut back to its last whole
   chunk (a partial one would hide everything after it from a reader), recording stops, and
   the log says it once. */
static void write_failed(int e)
{
    struct shim_trace_state *g = &shim_trace_g;
    struct shim_trace_bound *b = &g->bound;
    g->write_error = e ? e : EIO;
    atomic_store_explicit(&g->active, 0, memory_order_relaxed);
    b->lost_error += b->out_records;
    g->records -= b->out_records;
    b->out_records = 0;
    g->out_len = 0;
    shim_trace_cut_back();
    char msg[PATH_MAX + 200];
    snprintf(msg, sizeof msg,
             "trace: writing '%s' failed (%s): recording stops after %llu bytes; %llu records "
             "lost so far",
             g->path, strerror(g->write_error), (unsigned long long)b->file_bytes,
             (unsigned long long)b->lost_error);
    shim_trace_bound_say(1, msg);
}

/* Contract in shim_trace_internal.h. */
int shim_trace_out_flush(void)
{
    struct shim_trace_state *g = &shim_trace_g;
    if (g->write_error)
        return -1;
    if (g->out_len == 0)
        return 0;
    if (shim_trace_write_chunk(g->fd, SHIM_TRACE_CHUNK_RECORDS, g->out, g->out_len) != 0) {
        write_failed(errno);
        return -1;
    }
    g->chunks++;
    g->out_len = 0;
    g->bound.out_records = 0;
    return 0;
}

/* Contract in shim_trace_internal.h. */
int shim_trace_out_append(const void *rec, uint32_t size)
{
    struct shim_trace_state *g = &shim_trace_g;
    struct shim_trace_bound *b = &g->bound;
    if (g->out_len + size > SHIM_TRACE_OUT_BYTES)
        shim_trace_out_flush();
    if (g->write_error) {
        b->lost_error++;
        return 0;
    }
    if (b->max_bytes != 0 &&
        b->file_bytes + SHIM_TRACE_CHUNK_HEADER + g->out_len + size > b->hard) {
        b->lost_limit++;
        return 0;
    }
    memcpy(g->out + g->out_len, rec, size);
    g->out_len += size;
    g->records++;
    b->out_records++;
    return 0;
}

/* Contract in shim_trace_internal.h. */
int shim_trace_out_dropped(uint32_t tid, uint64_t records, uint64_t total)
{
    uint8_t rec[SHIM_TRACE_RECORD_HEADER + sizeof(struct shim_trace_body_ids)];
    uint16_t hdr[2] = {SHIM_TRACE_DROPPED, sizeof rec};
    uint64_t now = shim_trace_now_ns();
    struct shim_trace_body_ids body = {records, total};
    memcpy(rec, hdr, 4);
    memcpy(rec + 4, &tid, 4);
    memcpy(rec + 8, &now, 8);
    memcpy(rec + SHIM_TRACE_RECORD_HEADER, &body, sizeof body);
    shim_trace_g.dropped += records;
    return shim_trace_out_append(rec, sizeof rec);
}

/* ---- the writer thread ---- */

/* Contract in shim_trace_internal.h. Rare (once per half ring): a brief lock is fine. */
void shim_trace_writer_kick(void)
{
    pthread_mutex_lock(&shim_trace_g.wake_lock);
    shim_trace_g.kicked = 1;
    pthread_cond_signal(&shim_trace_g.wake);
    pthread_mutex_unlock(&shim_trace_g.wake_lock);
}

/* Contract in shim_trace_internal.h. Returns once no drain is under way. */
void shim_trace_writer_hold(int hold)
{
    atomic_store(&shim_trace_g.hold, hold);
    pthread_mutex_lock(&shim_trace_g.drain_lock);
    pthread_mutex_unlock(&shim_trace_g.drain_lock);
}

/* Sleeps until kicked, asked to stop, or one poll period passed. Returns whether to stop. */
static int writer_wait(void)
{
    struct shim_trace_state *g = &shim_trace_g;
    struct timespec until = base_deadline_after(CLOCK_MONOTONIC, (uint64_t)g->poll_ms * 1000000u);
    pthread_mutex_lock(&g->wake_lock);
    int rc = 0;
    while (!g->stop_requested && !g->kicked && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&g->wake, &g->wake_lock, &until);
    int stop = g->stop_requested;
    g->kicked = 0;
    pthread_mutex_unlock(&g->wake_lock);
    return stop;
}

/* Drains every period; on stop, drains once more and writes the END chunk. */
static void *writer_main(void *arg)
{
    (void)arg;
    for (;;) {
        int stop = writer_wait();
        pthread_mutex_lock(&shim_trace_g.drain_lock);
        if (stop || !atomic_load(&shim_trace_g.hold)) {
            shim_trace_ring_drain_all();
            shim_trace_bound_pass_end();
            shim_trace_out_flush();
        }
        pthread_mutex_unlock(&shim_trace_g.drain_lock);
        if (stop)
            break;
    }
    shim_trace_bound_finish(); /* the open summary, a note of what was lost, the END chunk */
    return NULL;
}

/* The writer thread takes no signals: they stay with the program's own threads. */
static int spawn_writer(void)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&shim_trace_g.thread, NULL, writer_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0)
        pthread_setname_np(shim_trace_g.thread, "shim-trace");
    return rc;
}

/* ---- the session ---- */

static int fail(char *err, size_t errlen, const char *fmt, const char *arg, int errnum)
{
    if (errlen > 0) {
        int n = snprintf(err, errlen, fmt, arg);
        if (errnum && n >= 0 && (size_t)n < errlen)
            snprintf(err + n, errlen - (size_t)n, ": %s", strerror(errnum));
    }
    return -1;
}

static int create_file(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        int e = errno;
        struct stat st;
        if (e == EEXIST && lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
            return fail(err, errlen,
                        "trace: '%s' exists and is not a regular file (a FIFO, a device, a "
                        "socket, a folder or a link: a trace is only ever a new file)",
                        path, 0);
        if (e == EEXIST)
            return fail(err, errlen, "trace: '%s' already exists (a trace is never overwritten)",
                        path, 0);
        return fail(err, errlen, "trace: cannot create '%s'", path, e);
    }
    if (fchmod(fd, 0600) != 0) { /* the umask may have taken the owner's bits */
        int e = errno;
        close(fd);
        unlink(path);
        return fail(err, errlen, "trace: cannot set mode 0600 on '%s'", path, e);
    }
    return fd;
}

/* Opens the file and writes its head; on failure nothing is left behind. */
static int open_session(const char *path, const struct shim_trace_info *info, char *err,
                        size_t errlen)
{
    struct shim_trace_state *g = &shim_trace_g;
    if (g->out == NULL && (g->out = malloc(SHIM_TRACE_OUT_BYTES)) == NULL)
        return fail(err, errlen, "trace: %s", "out of memory", 0);
    int fd = create_file(path, err, errlen);
    if (fd < 0)
        return -1;
    shim_trace_bound_start(info->max_bytes, info->log);
    if (shim_trace_write_head(fd, info, shim_trace_now_ns()) != 0) {
        int e = errno;
        close(fd);
        unlink(path);
        return fail(err, errlen, "trace: cannot write '%s'", path, e);
    }
    g->fd = fd;
    snprintf(g->path, sizeof g->path, "%s", path);
    g->out_len = 0;
    g->records = g->dropped = g->chunks = 0;
    g->write_error = 0;
    g->stop_requested = 0;
    g->kicked = 0;
    g->poll_ms = info->flush_ms ? info->flush_ms : SHIM_TRACE_POLL_MS;
    return 0;
}

/* Contract in shim_trace.h. */
int shim_trace_start(const char *pattern, const struct shim_trace_info *info, char *err,
                     size_t errlen)
{
    struct shim_trace_state *g = &shim_trace_g;
    struct shim_trace_info none = {(int)getpid(), 0, NULL, NULL, 0, 0, NULL};
    char path[PATH_MAX];
    pthread_once(&init_once, init_once_fn);
    if (!init_ok)
        return fail(err, errlen, "trace: %s", "cannot initialise the writer's condition", 0);
    if (info == NULL)
        info = &none;
    if (shim_path_expand("trace.path", pattern, info->pid, info->rank, path, sizeof path, err,
                         errlen))
        return -1;
    pthread_mutex_lock(&g->ctl_lock);
    if (g->running && g->owner_pid != getpid()) { /* a fork child that did not forget */
        pthread_mutex_unlock(&g->ctl_lock);
        shim_trace_forget_after_fork();
        pthread_mutex_lock(&g->ctl_lock);
    }
    int rc = -1;
    if (g->running)
        fail(err, errlen, "trace: already started; '%s' not opened", path, 0);
    else if (open_session(path, info, err, errlen) == 0) {
        shim_trace_ring_reset_all();
        shim_trace_ring_set_draining(1);
        int e = spawn_writer();
        if (e == 0) {
            g->running = 1;
            g->owner_pid = getpid();
            atomic_store(&g->active, 1);
            rc = 0;
        } else {
            shim_trace_ring_set_draining(0);
            close(g->fd);
            g->fd = -1;
            unlink(path);
            fail(err, errlen, "trace: cannot start the writer thread for '%s'", path, e);
        }
    }
    pthread_mutex_unlock(&g->ctl_lock);
    return rc;
}

/* Contract in shim_trace.h. Records that race with stop may or may not be written; every
   record made before stop was called is. */
void shim_trace_stop(void)
{
    struct shim_trace_state *g = &shim_trace_g;
    pthread_mutex_lock(&g->ctl_lock);
    if (g->running && g->owner_pid != getpid()) { /* a fork child that did not forget */
        pthread_mutex_unlock(&g->ctl_lock);
        shim_trace_forget_after_fork();
        return;
    }
    if (g->running) {
        atomic_store(&g->active, 0);
        pthread_mutex_lock(&g->wake_lock);
        g->stop_requested = 1;
        pthread_cond_signal(&g->wake);
        pthread_mutex_unlock(&g->wake_lock);
        pthread_join(g->thread, NULL);
        shim_trace_ring_set_draining(0);
        close(g->fd);
        g->fd = -1;
        g->running = 0;
    }
    pthread_mutex_unlock(&g->ctl_lock);
}

/* Contract in shim_trace.h. Only this thread exists: the locks may have been held by threads
   of the parent, so they are made anew; the writer thread is not joined (it is not here);
   the child's copy of the descriptor is closed, which leaves the parent's file as it is. */
void shim_trace_forget_after_fork(void)
{
    struct shim_trace_state *g = &shim_trace_g;
    atomic_store(&g->active, 0);
    shim_trace_live_after_fork();
    pthread_mutex_init(&g->ctl_lock, NULL);
    pthread_mutex_init(&g->wake_lock, NULL);
    pthread_mutex_init(&g->reg_lock, NULL);
    pthread_mutex_init(&g->drain_lock, NULL);
    if (init_ok) {
        pthread_condattr_t attr;
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&g->wake, &attr);
        pthread_condattr_destroy(&attr);
    }
    if (g->running && g->fd >= 0)
        close(g->fd);
    g->fd = -1;
    g->running = 0;
    g->out_len = 0;
    g->stop_requested = 0;
    g->kicked = 0;
    g->draining = 0;
    shim_trace_ring_after_fork();
}

/* Contract in shim_trace.h. */
int shim_trace_active(void)
{
    return atomic_load_explicit(&shim_trace_g.active, memory_order_relaxed);
}
