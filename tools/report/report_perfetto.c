/* report_perfetto.c — `shim-report perfetto`: Chrome trace JSON in torch.profiler's layout for
 * Perfetto (ui.perfetto.dev) and chrome://tracing.
 *
 * Each trace given is one rank: a host process (its pid, named after its command's program and
 * the whole arguments that fit, its rank and pid)
 * and one process per GPU that holds allocations ("GPU D (rank R)"), whose pid lies above Linux's
 * pid range (4194304 + 256 * the trace's position + the device), so that the processes of several
 * ranks never share a pid. Each GPU process has its own device memory counter (allocation records
 * name their device since format 1.6) and its residency moves (move records name their device
 * since 1.7). Launches and copies name no device: a stream's track goes on the process of the
 * device whose allocations its first launch or copy touching device memory touched (a stream
 * belongs to one device, and its kernels work on that device's memory), else on the primary
 * device's (the one libshim serves: summary's device). A host pid
 * that an earlier trace already has (ranks in containers on several machines), or that is not a
 * Linux pid, becomes 4194304 + 256 * the position + 255. Processes are ordered as the traces were
 * given (process_sort_index). With several traces, times are aligned on their wall-clock starts
 * (INFO start_realtime_ns). One track per stream (tid = the stream's order of appearance, named
 * after its handle), kernels as complete events where a kernel_time record gives their duration
 * (the start is estimated: the launch time, or the end of the stream's previous kernel if later),
 * untimed kernels and copies as instants, device memory as a counter track; the host process has
 * one track per thread with the steps ("ProfilerStep#N"), synchronisations, graph launches and
 * notes. Residency moves are complete events on two tracks of their device's GPU process
 * ("residency: to host", "residency: to device"), and the stalls they caused on a "residency:
 * stalls" track of the host process (args: the device whose manager stalled it); a slice that
 * overlaps the previous one of its track goes on a further lane ("... #2"; as many lanes as
 * moves overlap), since Perfetto needs the slices of a track nested. Timestamps are microseconds
 * since the trace (with several, the earliest) started, kept in whole nanoseconds and written
 * with exactly three decimals, so that a slice ending where the next starts never overlaps it.
 * tests/trace/chrome_trace_check.py checks the output against the trace event format.
 */
#include "report.h"

#include "base_order.h"
#include "util_file.h"

#include "shim_trace.h"
#include "shim_trace_format.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define USAGE "perfetto [-o FILE] TRACE..."
#define U(x)  ((unsigned long long)(x))
/* Linux pids and thread ids stay below 4194304 (PID_MAX_LIMIT): GPU processes and the host
   process's stall lanes use ids from there on. */
#define PID_LIMIT  4194304
#define STALL_TID  4194304u
#define MAX_TRACES 256 /* pids of trace i: PID_LIMIT + 256 * i + (0..255) */

typedef struct pctx {
    FILE *out;
    const report_trace *t;
    const report_stats *s;
    int host_pid, gpu_pid, rank_index; /* gpu_pid: the primary device's process */
    int gpu_base;                      /* device D's process is gpu_base + D */
    int64_t offset_ns;     /* added to every time: where this trace starts among the others */
    int *first;            /* no event written yet (shared by the traces) */
    report_map names;      /* func_id -> text offset */
    report_map times;      /* launch seq -> kernel_time record index */
    report_map streams;    /* stream handle -> track */
    report_map stream_dev; /* stream handle -> device slot, from the allocations it touched */
    int64_t *stream_end;   /* per track: where its last timed kernel ended (at()'s ns) */
    size_t ntracks;
} pctx;

/* Every time is kept in whole nanoseconds since the (earliest) trace's start and written as
   microseconds with exactly three decimals, so nothing is rounded: a slice that ends where the
   next begins is written so, and end_i <= start_i+1 holds in the file as it does here. */
static int64_t at(const pctx *p, uint64_t ns)
{
    const uint64_t s = p->t->start_ns;
    return p->offset_ns + (ns >= s ? (int64_t)(ns - s) : -(int64_t)(s - ns));
}

/* ns as microseconds, exactly: "-12.345". */
static void json_us(FILE *out, int64_t ns)
{
    uint64_t a = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
    fprintf(out, "%s%llu.%03llu", ns < 0 ? "-" : "", U(a / 1000), U(a % 1000));
}

/* Starts an event object: the separator, then {"ph": ph, "name": name, "pid", "tid", "ts". */
static void ev(pctx *p, const char *ph, const char *name, int pid, uint64_t tid, int64_t ts_ns)
{
    fprintf(p->out, "%s\n{\"ph\": \"%s\", \"name\": ", *p->first ? "" : ",", ph);
    *p->first = 0;
    report_json_string(p->out, name);
    fprintf(p->out, ", \"pid\": %d, \"tid\": %llu, \"ts\": ", pid, U(tid));
    json_us(p->out, ts_ns);
}

/* The "dur" of a slice from start to end (0 when end is not later). */
static void dur(pctx *p, int64_t start, int64_t end)
{
    fprintf(p->out, ", \"dur\": ");
    json_us(p->out, end > start ? end - start : 0);
}

static void meta(pctx *p, const char *what, int pid, uint64_t tid, const char *name)
{
    ev(p, "M", what, pid, tid, 0);
    fprintf(p->out, ", \"args\": {\"name\": ");
    report_json_string(p->out, name);
    fprintf(p->out, "}}");
}

/* A new track of GPU process pid, named; -1 when memory ran out. */
static long new_track(pctx *p, int pid, const char *name)
{
    int64_t *end = realloc(p->stream_end, (p->ntracks + 1) * sizeof *end);
    if (end == NULL)
        return -1;
    p->stream_end = end;
    end[p->ntracks] = INT64_MIN;
    meta(p, "thread_name", pid, p->ntracks, name);
    return (long)p->ntracks++;
}

/* The GPU process of a stream: its device's (index_records), else the primary device's. */
static int stream_pid(const pctx *p, uint64_t stream)
{
    uint64_t d;
    return report_map_get(&p->stream_dev, stream, &d) ? p->gpu_base + (int)d : p->gpu_pid;
}

/* The track of a stream, made (with its name) on first use; -1 when memory ran out. */
static long track_of(pctx *p, uint64_t stream)
{
    uint64_t tr;
    if (report_map_get(&p->streams, stream, &tr))
        return (long)tr;
    if (report_map_put(&p->streams, stream, p->ntracks) != 0)
        return -1;
    char name[64];
    snprintf(name, sizeof name, "stream 0x%llx%s", U(stream),
             stream == 0   ? " (legacy default)"
             : stream == 2 ? " (per-thread default)"
                           : "");
    return new_track(p, stream_pid(p, stream), name);
}

static const char *kernel_name(pctx *p, uint64_t func_id, char *buf, size_t len)
{
    uint64_t off;
    if (report_map_get(&p->names, func_id, &off))
        return p->t->text + off;
    snprintf(buf, len, "func#%llu", U(func_id));
    return buf;
}

static int kernel_event(pctx *p, const report_rec *r)
{
    long tr = track_of(p, r->d);
    if (tr < 0)
        return -1;
    char buf[32];
    const char *name = kernel_name(p, r->b, buf, sizeof buf);
    uint64_t ki;
    int64_t start = at(p, r->t_ns);
    if (report_map_get(&p->times, r->a, &ki)) {
        double usec = p->t->recs[ki].usec; /* rounded to a whole ns, once: start + it = end */
        int64_t len = usec == usec && usec >= 0 && usec < 1e12 ? (int64_t)(usec * 1e3 + 0.5) : 0;
        if (p->stream_end[tr] > start)
            start = p->stream_end[tr];
        p->stream_end[tr] = start + len;
        ev(p, "X", name, stream_pid(p, r->d), (uint64_t)tr, start);
        dur(p, start, start + len);
    } else {
        ev(p, "i", name, stream_pid(p, r->d), (uint64_t)tr, start);
        fprintf(p->out, ", \"s\": \"t\"");
    }
    fprintf(p->out,
            ", \"cat\": \"kernel\", \"args\": {\"seq\": %llu, \"stream\": \"0x%llx\", "
            "\"allocations_touched\": %llu, \"launch_tid\": %u}}",
            U(r->a), U(r->d), U(r->c), r->tid);
    return 0;
}

static int copy_event(pctx *p, const report_rec *r)
{
    long tr = track_of(p, r->d);
    if (tr < 0)
        return -1;
    char name[32];
    snprintf(name, sizeof name, "Memcpy %s", report_copy_dir_name(r->sub));
    ev(p, "i", r->sub == SHIM_COPY_MEMSET ? "Memset" : name, stream_pid(p, r->d), (uint64_t)tr,
       at(p, r->t_ns));
    fprintf(p->out,
            ", \"s\": \"t\", \"cat\": \"gpu_memcpy\", \"args\": {\"bytes\": %llu, "
            "\"dst_id\": %llu, \"src_id\": %llu}}",
            U(r->c), U(r->a), U(r->b));
    return 0;
}

/* A slice from start_ns to end_ns (0 us long when end_ns is not later), left open as ev(). */
static void slice(pctx *p, const char *name, int pid, uint64_t tid, uint64_t start_ns,
                  uint64_t end_ns)
{
    ev(p, "X", name, pid, tid, at(p, start_ns));
    dur(p, at(p, start_ns), at(p, end_ns));
}

/* The residency track a record goes to: 0 the host's stalls, 1 + 2 * D + (dir - 1) device D's
   moves of direction dir, RESIDENCY_TRACKS: not shown. */
#define RESIDENCY_TRACKS (1 + 2 * REPORT_MAX_DEVICES)
static unsigned residency_track(const pctx *p, const report_rec *r)
{
    if (r->kind == SHIM_TRACE_STALL)
        return 0;
    if (r->kind == SHIM_TRACE_MOVE &&
        (r->sub == SHIM_MOVE_TO_HOST || r->sub == SHIM_MOVE_TO_DEVICE))
        return 1 + 2 * report_record_device(p->t, r, p->s->primary_device) + (r->sub - 1);
    return RESIDENCY_TRACKS;
}

/* A move or stall, and its track. */
typedef struct placed {
    const report_rec *r;
    unsigned track;
} placed;

static int by_track_start(const void *pa, const void *pb)
{
    const placed *a = pa, *b = pb;
    return BASE_CMP_THEN(a->track, b->track,
                         BASE_CMP_THEN(a->r->c, b->r->c, BASE_CMP(a->r->order, b->r->order)));
}

/* The lanes of one residency track: where each one's last slice ends, and its tid; as many as
   the most moves that overlap there (Perfetto draws the slices of one lane nested, so no two
   overlapping moves may share one). */
typedef struct lanes {
    uint64_t *end;
    uint64_t *tid;
    size_t n;
} lanes;

/* Room for lane l->n; -1 when memory ran out. */
static int lanes_grow(lanes *l)
{
    uint64_t *end = realloc(l->end, (l->n + 1) * sizeof *end);
    if (end != NULL)
        l->end = end;
    uint64_t *tid = end ? realloc(l->tid, (l->n + 1) * sizeof *tid) : NULL;
    if (tid != NULL)
        l->tid = tid;
    return tid != NULL ? 0 : -1;
}

/* The tid of the first lane of track `track` free at r's start (made and named when needed);
   -1 when memory ran out. */
static long lane_of(pctx *p, lanes *l, unsigned track, const report_rec *r)
{
    size_t i = 0;
    while (i < l->n && l->end[i] > r->c)
        i++;
    if (i == l->n) {
        char name[48];
        if (lanes_grow(l) != 0)
            return -1;
        snprintf(name, sizeof name, i ? "residency: %s #%zu" : "residency: %s",
                 track ? report_move_dir_name(SHIM_MOVE_TO_HOST + (track - 1) % 2) : "stalls",
                 i + 1);
        l->end[i] = 0;
        if (track == 0) {
            l->tid[i] = STALL_TID + i;
            meta(p, "thread_name", p->host_pid, l->tid[i], name);
        } else {
            long tr = new_track(p, p->gpu_base + (int)((track - 1) / 2), name);
            if (tr < 0)
                return -1;
            l->tid[i] = (uint64_t)tr;
        }
        l->n++;
    }
    if (r->d > l->end[i])
        l->end[i] = r->d;
    return (long)l->tid[i];
}

static void residency_event(pctx *p, const report_rec *r, unsigned track, uint64_t tid)
{
    uint32_t device = report_record_device(p->t, r, p->s->primary_device);
    if (track == 0) {
        slice(p, "stall", p->host_pid, tid, r->c, r->d);
        fprintf(p->out,
                ", \"cat\": \"residency\", \"args\": {\"reason\": \"%s\", \"stalled_tid\": %u, "
                "\"device\": %u}}",
                report_move_reason_name(r->sub2), r->tid, device);
        return;
    }
    const char *name = r->sub == SHIM_MOVE_TO_DEVICE      ? "restore"
                       : r->sub2 == SHIM_REASON_CANCELLED ? "cancelled eviction"
                                                          : "evict";
    slice(p, name, p->gpu_base + (int)((track - 1) / 2), tid, r->c, r->d);
    fprintf(p->out,
            ", \"cat\": \"residency\", \"args\": {\"alloc_id\": %llu, \"bytes\": %llu, "
            "\"reason\": \"%s\", \"device\": %u}}",
            U(r->a), U(r->b), report_move_reason_name(r->sub2), device);
}

/* Moves (on their device's GPU process) and stalls (on the host's) as slices by start time,
   each on the first lane of its track it fits. */
static int residency_events(pctx *p)
{
    placed *v = malloc((p->t->n + 1) * sizeof *v);
    lanes *l = calloc(RESIDENCY_TRACKS, sizeof *l);
    int rc = v != NULL && l != NULL ? 0 : -1;
    size_t n = 0;
    for (size_t i = 0; rc == 0 && i < p->t->n; i++) {
        unsigned track = residency_track(p, &p->t->recs[i]);
        if (track < RESIDENCY_TRACKS)
            v[n++] = (placed){&p->t->recs[i], track};
    }
    if (n > 1)
        qsort(v, n, sizeof *v, by_track_start);
    for (size_t i = 0; i < n && rc == 0; i++) {
        long tid = lane_of(p, &l[v[i].track], v[i].track, v[i].r);
        if (tid < 0)
            rc = -1;
        else
            residency_event(p, v[i].r, v[i].track, (uint64_t)tid);
    }
    for (size_t k = 0; l != NULL && k < RESIDENCY_TRACKS; k++) {
        free(l[k].end);
        free(l[k].tid);
    }
    free(v);
    free(l);
    return rc;
}

static void host_event(pctx *p, const report_rec *r)
{
    char name[96];
    if (r->kind == SHIM_TRACE_SYNC)
        snprintf(name, sizeof name, "sync %s 0x%llx", report_sync_kind_name(r->sub), U(r->d));
    else if (r->kind == SHIM_TRACE_GRAPH_LAUNCH)
        snprintf(name, sizeof name, "graph launch %llu", U(r->a));
    else if (r->kind == SHIM_TRACE_DROPPED)
        snprintf(name, sizeof name, "dropped %llu records", U(r->a));
    ev(p, "i", r->kind == SHIM_TRACE_NOTE ? p->t->text + r->text : name, p->host_pid, r->tid,
       at(p, r->t_ns));
    fprintf(p->out, ", \"s\": \"t\", \"cat\": \"shim\"}");
}

static void step_events(pctx *p, const report_map *launch_of)
{
    const report_stats *s = p->s;
    for (size_t i = 0; i < s->nsteps; i++) {
        const report_step *st = &s->steps[i];
        uint64_t end = i + 1 < s->nsteps ? s->steps[i + 1].t_start : s->last_ns, li;
        uint32_t tid = report_map_get(launch_of, st->first_seq, &li) ? p->t->recs[li].tid : 0;
        char name[40];
        snprintf(name, sizeof name, "ProfilerStep#%llu", U(st->step));
        ev(p, "X", name, p->host_pid, tid, at(p, st->t_start));
        dur(p, at(p, st->t_start), at(p, end));
        fprintf(p->out,
                ", \"cat\": \"user_annotation\", \"args\": {\"first_seq\": %llu, "
                "\"launches\": %llu}}",
                U(st->first_seq), U(st->launches));
    }
}

typedef struct change {
    uint64_t t_ns, bytes;
    int up;
} change;

static int by_change_time(const void *pa, const void *pb)
{
    const change *a = pa, *b = pb;
    return a->t_ns < b->t_ns ? -1 : a->t_ns > b->t_ns;
}

/* Bytes held on device d, as a counter track of its GPU process. */
static int memory_counter_of(pctx *p, uint32_t d)
{
    const report_stats *s = p->s;
    change *c = malloc((2 * s->nallocs + 1) * sizeof *c);
    if (c == NULL)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < s->nallocs; i++) {
        const report_alloc *a = &s->allocs[i];
        if (!report_alloc_on_device(a->kind) || report_device_slot(a->device) != d)
            continue;
        c[n++] = (change){a->t_alloc, a->bytes, 1};
        if (a->freed)
            c[n++] = (change){a->t_free, a->bytes, 0};
    }
    qsort(c, n, sizeof *c, by_change_time);
    uint64_t held = 0;
    for (size_t i = 0; i < n; i++) {
        if (c[i].up)
            held = held + c[i].bytes < held ? UINT64_MAX : held + c[i].bytes;
        else
            held -= c[i].bytes < held ? c[i].bytes : held;
        ev(p, "C", "device memory", p->gpu_base + (int)d, 0, at(p, c[i].t_ns));
        fprintf(p->out, ", \"args\": {\"allocated_bytes\": %llu}}", U(held));
    }
    free(c);
    return 0;
}

/* Every shown device's memory counter. */
static int memory_counter(pctx *p)
{
    for (uint32_t d = 0; d < REPORT_MAX_DEVICES; d++)
        if (report_device_shown(p->s, d) && memory_counter_of(p, d) != 0)
            return -1;
    return 0;
}

/* The host process's name: the command's program (its file name, without the folder), then
   as many of its arguments, whole, as fit in PROC_WORDS bytes ("..." for the rest), then the
   rank and pid: "python3 FILE.py --lr 0.1 ... (rank 0, pid 4242)". No argument is cut.
   malloc'd; NULL when memory ran out. */
#define PROC_WORDS 40
static char *process_name(const char *cmd, int rank, int pid)
{
    size_t i = cmd ? strspn(cmd, " ") : 0, len = cmd ? strcspn(cmd + i, " ") : 0;
    const char *prog = len ? cmd + i : "host";
    size_t plen = len ? len : 4;
    for (size_t k = 0; k < len; k++)
        if (cmd[i + k] == '/' && k + 1 < len) {
            prog = cmd + i + k + 1;
            plen = len - k - 1;
        }
    size_t used = plen, rest = i + len;
    for (;;) { /* [rest, rest + w): the next argument; taken when it fits */
        size_t at = rest + (cmd ? strspn(cmd + rest, " ") : 0);
        size_t w = cmd ? strcspn(cmd + at, " ") : 0;
        if (w == 0 || used + 1 + w > PROC_WORDS)
            break;
        used += 1 + w;
        rest = at + w;
    }
    bool more = cmd && cmd[rest + strspn(cmd + rest, " ")] != '\0';
    size_t args = cmd ? rest - (i + len) : 0;
    char *name;
    if (asprintf(&name, "%.*s%.*s%s (rank %d, pid %d)", (int)plen, prog, (int)args,
                 cmd ? cmd + i + len : "", more ? " ..." : "", rank, pid) < 0)
        return NULL;
    return name;
}

/* Names and order of the processes, and names of every host thread that recorded something. */
static int names(pctx *p)
{
    char name[96], gpu[40];
    char *host = process_name(p->t->command, p->t->rank, p->t->pid);
    if (host == NULL)
        return -1;
    meta(p, "process_name", p->host_pid, 0, host);
    free(host);
    ev(p, "M", "process_sort_index", p->host_pid, 0, 0);
    fprintf(p->out, ", \"args\": {\"sort_index\": %d}}", 256 * p->rank_index);
    for (uint32_t d = 0; d < REPORT_MAX_DEVICES; d++) {
        if (!report_device_shown(p->s, d))
            continue;
        int pid = p->gpu_base + (int)d;
        snprintf(gpu, sizeof gpu, "GPU %u (rank %d)", d, p->t->rank);
        meta(p, "process_name", pid, 0, gpu);
        ev(p, "M", "process_labels", pid, 0, 0);
        fprintf(p->out, ", \"args\": {\"labels\": \"GPU %u\"}}", d);
        ev(p, "M", "process_sort_index", pid, 0, 0);
        fprintf(p->out, ", \"args\": {\"sort_index\": %d}}", 256 * p->rank_index + 1 + (int)d);
    }
    report_map seen = {0};
    for (size_t i = 0; i < p->t->n; i++) {
        uint64_t tid = p->t->recs[i].tid, dummy;
        if (report_map_get(&seen, tid, &dummy))
            continue;
        if (report_map_put(&seen, tid, 0) != 0) {
            report_map_free(&seen);
            return -1;
        }
        snprintf(name, sizeof name, "thread %llu", U(tid));
        meta(p, "thread_name", p->host_pid, tid, name);
    }
    report_map_free(&seen);
    return 0;
}

/* The device of the first allocation among ids[0..n) that is on a device (dev: allocation id
   -> device slot); -1 if none is. */
static long device_of_ids(const report_map *dev, const uint64_t *ids, size_t n)
{
    uint64_t d;
    for (size_t i = 0; i < n; i++)
        if (ids[i] != 0 && report_map_get(dev, ids[i], &d))
            return (long)d;
    return -1;
}

/* Each stream's device: that of the allocations its first launch or copy touching device memory
   touched. Records name no device for launches and copies, but a stream belongs to one device
   and its kernels work on that device's memory (peer access aside, which this takes for the
   stream's own). */
static int stream_devices(pctx *p)
{
    report_map dev = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < p->t->n; i++) {
        const report_rec *r = &p->t->recs[i];
        uint64_t dummy;
        long d = -1;
        if (r->kind == SHIM_TRACE_ALLOC && report_alloc_on_device(r->sub))
            rc = report_map_put(&dev, r->a, report_device_slot(r->sub2));
        else if (r->kind == SHIM_TRACE_LAUNCH)
            d = device_of_ids(&dev, p->t->ids + r->ids, r->n_ids);
        else if (r->kind == SHIM_TRACE_COPY)
            d = device_of_ids(&dev, (const uint64_t[]){r->a, r->b}, 2);
        if (d >= 0 && !report_map_get(&p->stream_dev, r->d, &dummy))
            rc = report_map_put(&p->stream_dev, r->d, (uint64_t)d);
    }
    report_map_free(&dev);
    return rc;
}

/* The lookups: kernel names, kernel times by launch, launches by seq (first one wins), each
   stream's device. */
static int index_records(pctx *p, report_map *launch_of)
{
    for (size_t i = 0; i < p->t->n; i++) {
        const report_rec *r = &p->t->recs[i];
        report_map *m = r->kind == SHIM_TRACE_FUNC_NAME     ? &p->names
                        : r->kind == SHIM_TRACE_KERNEL_TIME ? &p->times
                        : r->kind == SHIM_TRACE_LAUNCH      ? launch_of
                                                            : NULL;
        uint64_t v = r->kind == SHIM_TRACE_FUNC_NAME ? r->text : i, dummy;
        if (m != NULL && !report_map_get(m, r->a, &dummy) && report_map_put(m, r->a, v) != 0)
            return -1;
    }
    return stream_devices(p);
}

static int events(pctx *p)
{
    for (size_t i = 0; i < p->t->n; i++) {
        const report_rec *r = &p->t->recs[i];
        int rc = 0;
        if (r->kind == SHIM_TRACE_LAUNCH)
            rc = kernel_event(p, r);
        else if (r->kind == SHIM_TRACE_COPY)
            rc = copy_event(p, r);
        else if (r->kind == SHIM_TRACE_SYNC || r->kind == SHIM_TRACE_GRAPH_LAUNCH ||
                 r->kind == SHIM_TRACE_NOTE || r->kind == SHIM_TRACE_DROPPED)
            host_event(p, r);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* One trace's events (p is set up), then what p made freed. */
static int print_one(pctx *p)
{
    report_map launch_of = {0};
    int rc = index_records(p, &launch_of) == 0 && names(p) == 0 && events(p) == 0 &&
                     residency_events(p) == 0 && memory_counter(p) == 0
                 ? 0
                 : -1;
    if (rc == 0)
        step_events(p, &launch_of);
    report_map_free(&launch_of);
    report_map_free(&p->names);
    report_map_free(&p->times);
    report_map_free(&p->streams);
    report_map_free(&p->stream_dev);
    free(p->stream_end);
    return rc;
}

/* Contract in report.h. */
int report_perfetto_print_ranks(FILE *out, const report_trace *const *t,
                                const report_stats *const *s, size_t n)
{
    if (n == 0 || n > MAX_TRACES)
        return -1;
    /* the earliest wall-clock start, when every trace has one */
    size_t first_trace = 0;
    int aligned = 1;
    for (size_t i = 0; i < n; i++) {
        aligned &= t[i]->start_realtime_ns != 0;
        if (t[i]->start_realtime_ns < t[first_trace]->start_realtime_ns)
            first_trace = i;
    }
    if (!aligned)
        first_trace = 0;
    fprintf(out,
            "{\"schemaVersion\": 1, \"displayTimeUnit\": \"ms\", "
            "\"baseTimeNanoseconds\": %llu, \"traceEvents\": [",
            U(t[first_trace]->start_ns));
    int first = 1, rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        int own = PID_LIMIT + 256 * (int)i + 255, host_pid = t[i]->pid;
        if (host_pid <= 0 || host_pid >= PID_LIMIT)
            host_pid = own;
        for (size_t k = 0; k < i; k++)
            if (t[k]->pid == host_pid)
                host_pid = own;
        int gpu_base = PID_LIMIT + 256 * (int)i;
        pctx p = {.out = out,
                  .t = t[i],
                  .s = s[i],
                  .host_pid = host_pid,
                  .gpu_pid = gpu_base + (int)report_device_slot(s[i]->primary_device),
                  .gpu_base = gpu_base,
                  .rank_index = (int)i,
                  .first = &first};
        if (aligned)
            p.offset_ns = (int64_t)(t[i]->start_realtime_ns - t[first_trace]->start_realtime_ns);
        rc = print_one(&p);
    }
    fprintf(out, "\n]}\n");
    return rc;
}

/* Contract in report.h. */
int report_perfetto_print(FILE *out, const report_trace *t, const report_stats *s)
{
    return report_perfetto_print_ranks(out, &t, &s, 1);
}

/* `perfetto [-o FILE] TRACE...`: the JSON on stdout or in FILE. Exit status as in report.h. */
int report_perfetto_main(int argc, char **argv, char **envp)
{
    (void)envp;
    const char *output = NULL;
    report_opts o = {.top = 10};
    report_trace *t = calloc((size_t)argc, sizeof *t);
    report_stats *s = calloc((size_t)argc, sizeof *s);
    const report_trace **tp = calloc((size_t)argc, sizeof *tp);
    const report_stats **sp = calloc((size_t)argc, sizeof *sp);
    size_t n = 0;
    int rc = 0;
    if (t == NULL || s == NULL || tp == NULL || sp == NULL) {
        fprintf(stderr, "shim-report: out of memory\n");
        rc = 1;
    }
    optind = 0; /* getopt_long from the start of this argv (glibc) */
    opterr = 0; /* a usage error prints the usage */
    static const struct option no_longs[] = {{NULL, 0, NULL, 0}}; /* "--x" is one option */
    for (int c; rc == 0 && (c = getopt_long(argc, argv, ":o:", no_longs, NULL)) != -1;) {
        if (c == 'o' && output == NULL)
            output = optarg;
        else {
            fprintf(stderr,
                    c == 'o'   ? "shim-report: -o given twice\n"
                    : c == ':' ? "shim-report: %s needs a value\n"
                               : "shim-report: unknown option '%s'\n",
                    argv[optind - 1]);
            rc = 2;
        }
    }
    for (int i = optind; i < argc && rc == 0; i++) {
        if (n == MAX_TRACES) {
            fprintf(stderr, "shim-report: perfetto takes at most %d traces\n", MAX_TRACES);
            rc = 2;
        } else {
            o.trace = argv[i];
            if (report_open(&t[n], &s[n], &o) != 0)
                rc = 1;
            else {
                tp[n] = &t[n];
                sp[n] = &s[n];
                n++;
            }
        }
    }
    if (rc == 0 && n == 0) {
        fprintf(stderr, "shim-report: no trace given: TRACE, a trace libshim wrote\n");
        rc = 2;
    }
    if (rc == 2)
        fprintf(stderr, "usage: shim-report %s\n", USAGE);
    char why[128] = "";
    FILE *out = rc != 0 ? NULL : output ? util_file_open(output, "w", why, sizeof why) : stdout;
    if (rc == 0 && out == NULL) {
        fprintf(stderr, "shim-report: cannot write %s: %s\n", output, why);
        rc = 1;
    } else if (rc == 0 && report_perfetto_print_ranks(out, tp, sp, n) != 0) {
        fprintf(stderr, "shim-report: out of memory\n");
        rc = 1;
    }
    if (out != NULL && out != stdout && fclose(out) != 0) {
        fprintf(stderr, "shim-report: cannot write %s: %s\n", output, strerror(errno));
        rc = 1;
    }
    report_close_all(t, s, n);
    free(tp);
    free(sp);
    return rc;
}
