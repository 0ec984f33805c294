/* report_memviz.c — `shim-report memviz`: the allocation history of a trace as the pickled
 * snapshot that torch.cuda.memory._dump_snapshot writes, for pytorch.org/memory_viz.
 *
 * The snapshot is a dict: "device_traces", one list per device of trace entries {action, addr,
 * size, stream, time_us, frames}, in time order; "segments", the segments live at the end of the
 * trace, each with the blocks that tile it; and "libshim", where the snapshot came from and what
 * was left out (docs/report.md, "Memory snapshots for memory_viz", says what maps to what).
 *
 * Every device allocation of the trace (plain, async, VMM mapping, managed) is a segment of its
 * own holding one block, except the managed allocations that lie wholly in a live slab: a slab
 * (its `slab` record) is one segment from that record to its `free` transition (or the last
 * member's free after it), and its members are blocks in it. An allocation gives segment_alloc then
 * alloc; its free gives free_requested, free_completed and, for a segment of its own, segment_free.
 * Records are walked in time order with summary's rules (report_trace_stats.c): an alloc of an id
 * already live ends the old allocation first, a free of no live allocation is skipped; so the
 * running sum of alloc sizes peaks at summary's peak_device_bytes. Pinned host memory, zero-byte
 * allocations and residency moves are left out. Device memory is keyed by device (trace format
 * 1.6 names it; older records read as device 0): one trace list per device up to the highest
 * one used, each segment with its device; a slab is its record's device's (format 1.8; in older
 * traces the primary device's, report_trace.h).
 */
#include "report.h"
#include "util_file.h"
#include "report_pickle.h"

#include "base_array.h"
#include "base_order.h"
#include "shim_trace.h"
#include "shim_trace_format.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define USAGE      "memviz [-o FILE] TRACE"
#define NO_SLAB    SIZE_MAX
#define LARGE_SIZE 1048576 /* PyTorch: segments of blocks above 1 MiB are "large" */

/* One alloc record. shown: on the device and not empty, so in the snapshot. */
typedef struct mv_alloc {
    uint64_t addr, bytes, stream;
    size_t slab; /* the slab it lies in, NO_SLAB: a segment of its own */
    int live, shown;
} mv_alloc;

/* One slab record (the first of its id). */
typedef struct mv_slab {
    uint64_t id, addr, bytes;
    size_t members; /* shown allocations live in it */
    int live;       /* its segment exists */
    int closing;    /* freed while members were live: its segment goes with the last one */
} mv_slab;

typedef struct mv {
    const report_trace *t;
    const report_stats *s; /* the allocations' names (report_alloc_name); NULL: no frames */
    pk *p;
    mv_alloc *allocs;
    size_t nallocs, acap;
    mv_slab *slabs;
    size_t nslabs, scap;
    size_t *open; /* live slabs by address */
    size_t nopen, ocap;
    report_map id; /* alloc_id -> index in allocs of its latest record */
    report_map slab_id;
    uint32_t device;  /* the device this walk shows (a slot) */
    uint32_t primary; /* the trace's primary device: older traces' slabs are its */
    uint64_t alloc_events, free_events, host_left_out, zero_left_out, unmatched_frees;
} mv;

/* Microseconds of the Unix epoch (PyTorch's time_us) when the trace gives its wall-clock start,
   else since the trace started. */
static int64_t time_us(const report_trace *t, uint64_t t_ns)
{
    int64_t since = (int64_t)(t_ns - t->start_ns); /* two's complement: negative when earlier */
    return ((int64_t)t->start_realtime_ns + since) / 1000;
}

/* Closes a trace entry or a block (a dict pk_item_dict opened) with its last key, "frames":
   for an allocation a (NULL: none), one frame that names it (report_alloc_name; filename
   "libshim", line 0), which memory_viz shows where PyTorch shows the Python stack. The i-th
   alloc record is the stats' i-th allocation (both keep every record). */
static void end_with_frames(pk *p, const mv *m, const mv_alloc *a)
{
    pk_key(p, "frames");
    pk_list(p);
    size_t i = a ? (size_t)(a - m->allocs) : SIZE_MAX;
    if (m->s != NULL && i < m->s->nallocs) {
        char name[REPORT_ALLOC_NAME_MAX];
        pk_item_dict(p);
        pk_key_str(p, "filename", "libshim");
        pk_key_int(p, "line", 0);
        pk_key_str(p, "name", report_alloc_name(&m->s->allocs[i], m->s, name, sizeof name));
        pk_end(p);
    }
    pk_end(p); /* frames */
    pk_end(p); /* the entry or block */
}

static void event(mv *m, const char *action, uint64_t addr, uint64_t size, uint64_t stream,
                  uint64_t t_ns, const mv_alloc *a)
{
    pk *p = m->p;
    pk_item_dict(p);
    pk_key_str(p, "action", action);
    pk_key_uint(p, "addr", addr);
    pk_key_uint(p, "size", size);
    pk_key_uint(p, "stream", stream);
    pk_key_int(p, "time_us", time_us(m->t, t_ns));
    end_with_frames(p, m, a);
}

/* Index in m->open of the first live slab whose address is above addr. */
static size_t open_upper(const mv *m, uint64_t addr)
{
    size_t lo = 0;
    BASE_BSEARCH(lo, m->nopen, mid, m->slabs[m->open[mid]].addr <= addr);
    return lo;
}

/* The live slab that holds [addr, addr + bytes) whole, or NO_SLAB. */
static size_t slab_holding(const mv *m, uint64_t addr, uint64_t bytes)
{
    size_t i = open_upper(m, addr);
    if (i == 0)
        return NO_SLAB;
    size_t si = m->open[i - 1];
    uint64_t off = addr - m->slabs[si].addr;
    return off <= m->slabs[si].bytes && bytes <= m->slabs[si].bytes - off ? si : NO_SLAB;
}

static void slab_close(mv *m, size_t si, uint64_t t_ns)
{
    mv_slab *s = &m->slabs[si];
    size_t i = open_upper(m, s->addr);
    while (i > 0 && m->open[i - 1] != si) /* slabs at one address: find this one */
        i--;
    if (i > 0) {
        memmove(&m->open[i - 1], &m->open[i], (m->nopen - i) * sizeof *m->open);
        m->nopen--;
    }
    s->live = 0;
    event(m, "segment_free", s->addr, s->bytes, 0, t_ns, NULL);
}

static int on_slab(mv *m, const report_rec *r)
{
    uint64_t dummy;
    if (report_record_device(m->t, r, m->primary) != m->device || r->c == 0 ||
        report_map_get(&m->slab_id, r->a, &dummy))
        return 0; /* another device's, empty, or seen */
    if (base_array_grow((void **)&m->slabs, &m->scap, m->nslabs + 1, sizeof *m->slabs) != 0 ||
        base_array_grow((void **)&m->open, &m->ocap, m->nopen + 1, sizeof *m->open) != 0 ||
        report_map_put(&m->slab_id, r->a, m->nslabs) != 0)
        return -1;
    size_t si = m->nslabs++, at = open_upper(m, r->b);
    m->slabs[si] = (mv_slab){.id = r->a, .addr = r->b, .bytes = r->c, .live = 1};
    memmove(&m->open[at + 1], &m->open[at], (m->nopen - at) * sizeof *m->open);
    m->open[at] = si;
    m->nopen++;
    event(m, "segment_alloc", r->b, r->c, 0, r->t_ns, NULL);
    return 0;
}

/* A free transition of a live slab ends its segment, once its members are gone. */
static void on_transition(mv *m, const report_rec *r)
{
    uint64_t si;
    if (r->sub != SHIM_EV_FREE || !report_map_get(&m->slab_id, r->a, &si) || !m->slabs[si].live)
        return;
    if (m->slabs[si].members == 0)
        slab_close(m, si, r->t_ns);
    else
        m->slabs[si].closing = 1;
}

static void release(mv *m, mv_alloc *a, uint64_t t_ns)
{
    a->live = 0;
    if (!a->shown)
        return;
    m->free_events++;
    event(m, "free_requested", a->addr, a->bytes, a->stream, t_ns, a);
    event(m, "free_completed", a->addr, a->bytes, a->stream, t_ns, a);
    if (a->slab == NO_SLAB) {
        event(m, "segment_free", a->addr, a->bytes, a->stream, t_ns, NULL);
        return;
    }
    mv_slab *s = &m->slabs[a->slab];
    if (--s->members == 0 && s->closing)
        slab_close(m, a->slab, t_ns);
}

static int on_alloc(mv *m, const report_rec *r)
{
    uint64_t old;
    if (report_map_get(&m->id, r->a, &old) && m->allocs[old].live)
        release(m, &m->allocs[old], r->t_ns); /* ids are never reused: the old one ended */
    if (base_array_grow((void **)&m->allocs, &m->acap, m->nallocs + 1, sizeof *m->allocs) != 0 ||
        report_map_put(&m->id, r->a, m->nallocs) != 0)
        return -1;
    mv_alloc *a = &m->allocs[m->nallocs++];
    *a = (mv_alloc){.addr = r->b, .bytes = r->c, .stream = r->d, .slab = NO_SLAB, .live = 1};
    if (!report_alloc_on_device(r->sub)) {
        m->host_left_out++;
        return 0;
    }
    if (report_device_slot(r->sub2) != m->device)
        return 0; /* another device's (ordinals past the last list are shown in it) */
    if (r->c == 0) {
        m->zero_left_out++;
        return 0;
    }
    a->shown = 1;
    a->slab = r->sub == PLAN_MEM_MANAGED ? slab_holding(m, r->b, r->c) : NO_SLAB;
    if (a->slab != NO_SLAB)
        m->slabs[a->slab].members++;
    else
        event(m, "segment_alloc", a->addr, a->bytes, a->stream, r->t_ns, NULL);
    m->alloc_events++;
    event(m, "alloc", a->addr, a->bytes, a->stream, r->t_ns, a);
    return 0;
}

static void on_free(mv *m, const report_rec *r)
{
    uint64_t i;
    if (!report_map_get(&m->id, r->a, &i) || !m->allocs[i].live) {
        m->unmatched_frees++;
        return;
    }
    release(m, &m->allocs[i], r->t_ns);
}

/* Walks the records in time order, writing the events. */
static int walk(mv *m)
{
    for (size_t i = 0; i < m->t->n; i++) {
        const report_rec *r = &m->t->recs[i];
        int rc = 0;
        if (r->kind == SHIM_TRACE_ALLOC)
            rc = on_alloc(m, r);
        else if (r->kind == SHIM_TRACE_FREE)
            on_free(m, r);
        else if (r->kind == SHIM_TRACE_SLAB)
            rc = on_slab(m, r);
        else if (r->kind == SHIM_TRACE_TRANSITION)
            on_transition(m, r);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* ---- the segments live at the end ---- */

/* A live segment: an allocation of its own (slab NO_SLAB) or a slab. */
typedef struct seg {
    uint64_t addr;
    size_t alloc, slab;
} seg;

static int by_addr(const void *pa, const void *pb)
{
    const seg *a = pa, *b = pb;
    return BASE_CMP_THEN(a->addr, b->addr, BASE_CMP(a->alloc, b->alloc)); /* stable: record order */
}

static void block(pk *p, uint64_t addr, uint64_t size, uint64_t requested, const char *state,
                  const mv *m, const mv_alloc *a)
{
    pk_item_dict(p);
    pk_key_uint(p, "address", addr);
    pk_key_uint(p, "size", size);
    pk_key_uint(p, "requested_size", requested);
    pk_key_str(p, "state", state);
    end_with_frames(p, m, a);
}

/* The blocks of a slab: its live members (sorted by address, in members[0..n)) as
   active_allocated, the gaps as inactive. A member that overlaps the one before (a trace that
   lost a free) is left out of the blocks, which must tile the segment. Returns the bytes in
   allocated blocks. */
static uint64_t slab_blocks(pk *p, const mv *m, const mv_slab *s, const seg *members, size_t n)
{
    uint64_t at = s->addr, end = s->addr + s->bytes, held = 0;
    for (size_t i = 0; i < n; i++) {
        const mv_alloc *a = &m->allocs[members[i].alloc];
        if (a->addr < at)
            continue;
        if (p != NULL && a->addr > at)
            block(p, at, a->addr - at, 0, "inactive", m, NULL);
        if (p != NULL)
            block(p, a->addr, a->bytes, a->bytes, "active_allocated", m, a);
        at = a->addr + a->bytes;
        held += a->bytes;
    }
    if (p != NULL && at < end)
        block(p, at, end - at, 0, "inactive", m, NULL);
    return held;
}

static void segment(pk *p, uint32_t device, uint64_t addr, uint64_t size, uint64_t stream,
                    uint64_t held)
{
    pk_item_dict(p);
    pk_key_int(p, "device", device);
    pk_key_uint(p, "address", addr);
    pk_key_uint(p, "total_size", size);
    pk_key_uint(p, "allocated_size", held);
    pk_key_uint(p, "active_size", held);
    pk_key_uint(p, "requested_size", held);
    pk_key_uint(p, "stream", stream);
    pk_key_str(p, "segment_type", size > LARGE_SIZE ? "large" : "small");
    pk_key(p, "segment_pool_id");
    pk_int(p, 0);
    pk_int(p, 0);
    pk_tuple2(p);
    pk_key_bool(p, "is_expandable", 0);
    pk_key(p, "frames");
    pk_list(p);
    pk_end(p);
    pk_key(p, "blocks");
    pk_list(p);
}

/* Slab members first by slab, then by address. */
static int by_slab_addr(const void *pa, const void *pb)
{
    const seg *a = pa, *b = pb;
    return BASE_CMP_THEN(a->slab, b->slab, by_addr(pa, pb));
}

/* The items of the "segments" list for m's device: every live segment by address (none when
   memory ran out: -1). */
static int segments(pk *p, const mv *m)
{
    size_t nseg = 0, nmem = 0;
    seg *v = malloc((m->nallocs + m->nslabs + 1) * sizeof *v);
    seg *mem = malloc((m->nallocs + 1) * sizeof *mem);
    size_t *first = malloc((m->nslabs + 1) * sizeof *first); /* a slab's members in mem */
    if (v == NULL || mem == NULL || first == NULL) {
        free(v);
        free(mem);
        free(first);
        return -1;
    }
    for (size_t i = 0; i < m->nallocs; i++) {
        const mv_alloc *a = &m->allocs[i];
        if (!a->live || !a->shown)
            continue;
        if (a->slab == NO_SLAB)
            v[nseg++] = (seg){a->addr, i, NO_SLAB};
        else
            mem[nmem++] = (seg){a->addr, i, a->slab};
    }
    for (size_t i = 0; i < m->nslabs; i++)
        if (m->slabs[i].live)
            v[nseg++] = (seg){m->slabs[i].addr, SIZE_MAX, i};
    qsort(v, nseg, sizeof *v, by_addr);
    qsort(mem, nmem, sizeof *mem, by_slab_addr);
    for (size_t i = 0, k = 0; i < m->nslabs; i++) {
        first[i] = k;
        while (k < nmem && mem[k].slab == i)
            k++;
    }
    for (size_t i = 0; i < nseg; i++) {
        if (v[i].slab == NO_SLAB) {
            const mv_alloc *a = &m->allocs[v[i].alloc];
            segment(p, m->device, a->addr, a->bytes, a->stream, a->bytes);
            block(p, a->addr, a->bytes, a->bytes, "active_allocated", m, a);
        } else {
            const mv_slab *s = &m->slabs[v[i].slab];
            size_t n = m->slabs[v[i].slab].members, at = first[v[i].slab];
            segment(p, m->device, s->addr, s->bytes, 0, slab_blocks(NULL, m, s, mem + at, n));
            slab_blocks(p, m, s, mem + at, n);
        }
        pk_end(p); /* blocks */
        pk_end(p); /* the segment */
    }
    free(v);
    free(mem);
    free(first);
    return 0;
}

/* The "libshim" dict: the trace, and what the snapshot holds and leaves out. */
static void about(pk *p, const mv *m, uint32_t devices)
{
    const report_trace *t = m->t;
    char format[16];
    snprintf(format, sizeof format, "%u.%u", t->major, t->minor);
    pk_dict(p);
    pk_key_str(p, "trace", t->name ? t->name : "");
    pk_key_str(p, "format", format);
    pk_key_int(p, "pid", t->pid);
    pk_key_int(p, "rank", t->rank);
    pk_key(p, "command");
    if (t->command != NULL)
        pk_str(p, t->command);
    else
        pk_none(p);
    pk_key_bool(p, "truncated", t->truncated);
    pk_key_str(p, "time_us", t->start_realtime_ns ? "unix epoch" : "since the trace started");
    pk_key_uint(p, "allocations", m->alloc_events);
    pk_key_uint(p, "frees", m->free_events);
    pk_key_uint(p, "slabs", m->nslabs);
    pk_key_uint(p, "devices", devices);
    pk_key_uint(p, "pinned_host_allocations_left_out", m->host_left_out);
    pk_key_uint(p, "zero_byte_allocations_left_out", m->zero_left_out);
    pk_key_uint(p, "unmatched_frees", m->unmatched_frees);
    pk_end(p);
}

static void mv_free(mv *m)
{
    free(m->allocs);
    free(m->slabs);
    free(m->open);
    report_map_free(&m->id);
    report_map_free(&m->slab_id);
}

/* Contract in report.h. */
int report_memviz_print(FILE *out, const report_trace *t, const report_stats *s)
{
    pk p;
    uint32_t ndev = report_device_count(t), primary = report_primary_device(t);
    mv *m = calloc(ndev, sizeof *m);
    if (m == NULL)
        return -1;
    pk_start(&p, out);
    pk_dict(&p);
    pk_key(&p, "device_traces");
    pk_list(&p);
    int rc = 0;
    for (uint32_t d = 0; d < ndev; d++) { /* a walk per device: its list is written as it goes */
        m[d] = (mv){.t = t, .s = s, .p = &p, .device = d, .primary = primary};
        pk_item(&p);
        pk_list(&p);
        if (rc == 0)
            rc = walk(&m[d]);
        pk_end(&p); /* device d's trace */
    }
    pk_end(&p); /* device_traces */
    pk_key(&p, "segments");
    pk_list(&p); /* still a whole pickle when memory ran out */
    for (uint32_t d = 0; rc == 0 && d < ndev; d++)
        rc = segments(&p, &m[d]);
    pk_end(&p);
    /* What the walks counted: events per device, the rest once (every walk sees them all). */
    mv all = m[0];
    for (uint32_t d = 1; d < ndev; d++) {
        all.alloc_events += m[d].alloc_events;
        all.free_events += m[d].free_events;
        all.zero_left_out += m[d].zero_left_out;
        all.nslabs += m[d].nslabs;
    }
    pk_key(&p, "libshim");
    about(&p, &all, ndev);
    pk_end(&p);
    for (uint32_t d = 0; d < ndev; d++)
        mv_free(&m[d]);
    free(m);
    return pk_finish(&p) == 0 ? rc : -1;
}

/* Writes to path; on failure says why and removes what was written (a regular file only).
   0, or 1. */
static int write_file(const char *path, const report_trace *t, const report_stats *s)
{
    char why[128];
    FILE *out = util_file_open(path, "wb", why, sizeof why);
    if (out == NULL) {
        fprintf(stderr, "shim-report: cannot write %s: %s\n", path, why);
        return 1;
    }
    int rc = report_memviz_print(out, t, s), err = ferror(out) ? errno : 0;
    if (fclose(out) != 0 && err == 0)
        err = errno ? errno : EIO;
    if (rc == 0 && err == 0)
        return 0;
    if (rc != 0 && err == 0)
        fprintf(stderr, "shim-report: %s: out of memory\n", t->name);
    else
        fprintf(stderr, "shim-report: cannot write %s: %s\n", path, strerror(err ? err : EIO));
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
        unlink(path);
    return 1;
}

/* `memviz [-o FILE] TRACE`: the pickle in FILE, or on stdout when it is not a terminal. Exit
   status as in report.h. */
int report_memviz_main(int argc, char **argv, char **envp)
{
    (void)envp;
    report_opts o;
    report_trace t;
    report_stats s;
    if (report_opts_parse(&o, argc, argv, USAGE, 0, 1) != 0)
        return 2;
    if (o.output == NULL && isatty(STDOUT_FILENO)) {
        fprintf(stderr, "shim-report: memviz writes a binary pickle: give -o FILE (or redirect "
                        "standard output)\nusage: shim-report " USAGE "\n");
        return 2;
    }
    if (report_open(&t, &s, &o) != 0)
        return 1;
    int rc;
    if (o.output != NULL)
        rc = write_file(o.output, &t, &s);
    else {
        rc = report_memviz_print(stdout, &t, &s) != 0;
        if (rc != 0)
            fprintf(stderr, "shim-report: %s: out of memory\n", o.trace);
        else if (fflush(stdout) != 0 || ferror(stdout)) {
            fprintf(stderr, "shim-report: cannot write standard output: %s\n", strerror(errno));
            rc = 1;
        }
    }
    report_stats_free(&s);
    report_trace_free(&t);
    return rc;
}
