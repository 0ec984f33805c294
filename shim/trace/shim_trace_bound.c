/* shim_trace_bound.c — the trace's size limit: detail first, then one summary record per step.
 *
 * Everything here runs on the writer thread (or at stop, after it): the record path of the
 * program's threads is not touched. With a limit, the writer keeps the live allocations (id ->
 * bytes) from the start, so that it knows the device bytes held at any point. Once the file
 * passes three quarters of the limit, the next step record it reads is the last detailed one;
 * every record after that step record's time (for a move or a stall: its start_ns) is folded
 * into a step_summary record instead of being written: counts, peak device bytes, moves and
 * stalls of each step, as shim-report would have computed them from the detail. Records that
 * are few and carry meaning of their own (notes, budgets, plans, dropped counts) are still
 * written. A summary covers one step until even the summaries would pass the limit; then 2,
 * 4, ... steps each (level k of the summaries covers 1 << k steps). Past the limit nothing is
 * written but a last note and the END chunk, for which room is kept.
 *
 * The records of one drain pass (every ring read once) are folded in time order; a record
 * that comes a pass late goes into the summary being filled.
 */
#include "shim_trace_internal.h"

#include "base_array.h"
#include "base_order.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOMB      UINT64_MAX /* live-map value: freed before its alloc record was read */
#define END_ROOM  1024u      /* the END chunk (a dozen keys) */
#define NOTE_ROOM 512u       /* the last note's chunk */
#define SUMMARY_SIZE                                                                               \
    ((uint32_t)(SHIM_TRACE_RECORD_HEADER + sizeof(struct shim_trace_body_step_summary)))
#define SUMMARY_COST (SUMMARY_SIZE + SHIM_TRACE_CHUNK_HEADER) /* with a chunk of its own */
#define LEVELS       47 /* levels past the first share half the summaries' room */

_Static_assert(sizeof(struct shim_trace_body_step_summary) == 192 + 8 * SHIM_TRACE_SUMMARY_REASONS,
               "step_summary body: 24 u64, then the reasons");
_Static_assert(offsetof(struct shim_trace_body_step_summary, moves_by_reason) == 192,
               "moves_by_reason is the tail");
_Static_assert(SUMMARY_SIZE % 8 == 0, "records are 8-aligned");

/* ---- the live allocations: id -> live_value or TOMB (id 0 names none and is never held) ---- */

/* The value of id, or 0 when absent (a stored value is never 0: see live_value). */
static uint64_t map_get(const struct shim_trace_bound *b, uint64_t id)
{
    uint64_t v = 0;
    return id != 0 && base_map_find(&b->live, id, &v) ? v : 0;
}

static void map_put(struct shim_trace_bound *b, uint64_t id, uint64_t v)
{
    if (id == 0 || b->map_broken)
        return;
    if (base_map_put(&b->live, id, v) != 0)
        b->map_broken = 1;
}

static void map_del(struct shim_trace_bound *b, uint64_t id)
{
    if (id != 0)
        base_map_erase(&b->live, id, NULL);
}

/* Values: bytes << 2 | on device << 1 | 1, so that no live value is 0 or TOMB. */
static uint64_t live_value(uint64_t bytes, int device)
{
    uint64_t capped = bytes > (UINT64_MAX >> 3) ? (UINT64_MAX >> 3) : bytes;
    return capped << 2 | (uint64_t)(device != 0) << 1 | 1u;
}

static void hold(struct shim_trace_bound *b, uint64_t v, int sign)
{
    uint64_t bytes = v >> 2, *held = (v & 2u) ? &b->device : &b->host;
    if (sign > 0)
        *held = *held + bytes < *held ? UINT64_MAX : *held + bytes;
    else
        *held -= bytes < *held ? bytes : *held;
}

/* An allocation record read: the bytes it holds from now on. */
static void live_alloc(struct shim_trace_bound *b, uint64_t id, uint64_t bytes, uint32_t kind)
{
    uint64_t old = map_get(b, id);
    if (old == TOMB) { /* its free came first (another thread's ring was read first) */
        map_del(b, id);
        return;
    }
    if (old != 0) /* ids are never reused: the reader takes it as the end of the old one */
        hold(b, old, -1);
    uint64_t v = live_value(bytes, kind != PLAN_MEM_HOST);
    map_put(b, id, v);
    if (!b->map_broken)
        hold(b, v, +1);
}

static void live_free(struct shim_trace_bound *b, uint64_t id)
{
    uint64_t v = map_get(b, id);
    if (v == TOMB)
        return;
    if (v == 0) {
        map_put(b, id, TOMB);
        return;
    }
    hold(b, v, -1);
    map_del(b, id);
}

/* ---- the summary being filled ---- */

/* An empty summary of the window from start_ns, with the bytes held now. */
static void summary_open(struct shim_trace_body_step_summary *s, const struct shim_trace_bound *b,
                         uint64_t start_ns)
{
    memset(s, 0, sizeof *s);
    s->start_ns = start_ns;
    s->end_ns = start_ns;
    s->peak_device_bytes = b->device;
    s->device_bytes = b->device;
    s->peak_host_bytes = b->host;
}

static void bucket_open(struct shim_trace_bound *b, uint64_t start_ns)
{
    struct shim_trace_bucket *k = &b->bucket;
    summary_open(&k->s, b, start_ns);
    summary_open(&k->tail, b, start_ns);
    k->tail_events = 0;
    k->group = (uint64_t)1 << b->level;
}

static int put_record(uint16_t kind, uint64_t t, const void *body, uint32_t body_len)
{
    uint8_t rec[SHIM_TRACE_RECORD_HEADER + SHIM_TRACE_TEXT_MAX];
    uint16_t hdr[2] = {kind, (uint16_t)(SHIM_TRACE_RECORD_HEADER + body_len)};
    uint32_t tid = 0;
    memcpy(rec, hdr, 4);
    memcpy(rec + 4, &tid, 4);
    memcpy(rec + 8, &t, 8);
    memcpy(rec + SHIM_TRACE_RECORD_HEADER, body, body_len);
    return shim_trace_out_append(rec, SHIM_TRACE_RECORD_HEADER + body_len);
}

static uint64_t sat(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

/* Adds what tail holds to s: the counts add up, the peaks take the larger, the end (time and
   bytes held) is the tail's. */
static void merge(struct shim_trace_body_step_summary *s,
                  const struct shim_trace_body_step_summary *tail)
{
#define ADD(f) s->f = sat(s->f, tail->f)
#define MAX(f) s->f = tail->f > s->f ? tail->f : s->f
    ADD(records);
    ADD(launches);
    ADD(allocations);
    ADD(frees);
    ADD(copies);
    ADD(syncs);
    ADD(graph_launches);
    ADD(kernel_times);
    MAX(peak_device_bytes);
    MAX(peak_host_bytes);
    shim_trace_move_counts_add(&s->moves, &tail->moves);
    ADD(stalls);
    ADD(stall_ns);
    for (int i = 0; i < SHIM_TRACE_SUMMARY_REASONS; i++)
        ADD(moves_by_reason[i]);
#undef ADD
#undef MAX
    s->device_bytes = tail->device_bytes;
    s->end_ns = tail->end_ns;
}

/* Writes one summary record (its time: the window's end). */
static void summary_write(struct shim_trace_bound *b, const struct shim_trace_body_step_summary *s)
{
    uint64_t lost = b->lost_limit;
    put_record(SHIM_TRACE_STEP_SUMMARY, s->end_ns, s, sizeof *s);
    if (b->lost_limit != lost)
        b->lost_steps += s->steps;
    b->summaries++;
    b->summarised_steps += s->steps;
    b->summarised += s->records;
    if (s->steps > 0 && b->level_left > 0 && --b->level_left == 0 && b->level < 62) {
        b->level++;
        b->level_left = b->level_records;
    }
}

/* A move counts as the reader counts it (shim_trace_count_move: one arithmetic for both); the
   reader counts no move of another direction, and neither does its reason. */
static void add_move(struct shim_trace_body_step_summary *s, const struct shim_trace_event *e)
{
    if (shim_trace_count_move(&s->moves, e->b, e->sub, e->a) == 0)
        s->moves_by_reason[e->sub < SHIM_TRACE_SUMMARY_REASONS ? e->sub : 0]++;
}

/* A step record: what came since the last one joins the summary, which is written once it
   covers its group of steps; the next window starts at the step record. */
static void step_mark(struct shim_trace_bound *b, const struct shim_trace_event *e)
{
    struct shim_trace_bucket *k = &b->bucket;
    k->tail.end_ns = e->t;
    k->tail.device_bytes = b->device;
    merge(&k->s, &k->tail);
    if (k->s.steps++ == 0) {
        k->s.step = e->a;
        k->s.first_seq = e->b;
    }
    summary_open(&k->tail, b, e->t);
    k->tail_events = 0;
    if (k->s.steps >= k->group) {
        summary_write(b, &k->s);
        bucket_open(b, e->t);
    }
}

/* One folded record, in time order. */
static void fold(struct shim_trace_bound *b, const struct shim_trace_event *e)
{
    struct shim_trace_body_step_summary *s = &b->bucket.tail;
    s->records++;
    if (e->t > s->end_ns)
        s->end_ns = e->t;
    if (e->kind == SHIM_TRACE_STEP) {
        step_mark(b, e);
        return;
    }
    b->bucket.tail_events = 1;
    switch (e->kind) {
    case SHIM_TRACE_ALLOC:
        s->allocations++;
        live_alloc(b, e->a, e->b, e->sub);
        if (b->device > s->peak_device_bytes)
            s->peak_device_bytes = b->device;
        if (b->host > s->peak_host_bytes)
            s->peak_host_bytes = b->host;
        break;
    case SHIM_TRACE_FREE:
        s->frees++;
        live_free(b, e->a);
        break;
    case SHIM_TRACE_LAUNCH:
        s->launches++;
        break;
    case SHIM_TRACE_COPY:
        s->copies++;
        break;
    case SHIM_TRACE_SYNC:
        s->syncs++;
        break;
    case SHIM_TRACE_GRAPH_LAUNCH:
        s->graph_launches++;
        break;
    case SHIM_TRACE_KERNEL_TIME:
        s->kernel_times++;
        break;
    case SHIM_TRACE_MOVE:
        add_move(s, e);
        break;
    case SHIM_TRACE_STALL:
        s->stalls++;
        s->stall_ns = sat(s->stall_ns, e->a);
        break;
    default: /* transitions, slabs, names, plan steps: counted in records only */
        break;
    }
    s->device_bytes = b->device;
}

static int by_time(const void *pa, const void *pb)
{
    const struct shim_trace_event *a = pa, *b = pb;
    return BASE_CMP_THEN(a->t, b->t, BASE_CMP(a->order, b->order));
}

/* Contract in shim_trace_internal.h. */
void shim_trace_bound_pass_end(void)
{
    struct shim_trace_bound *b = &shim_trace_g.bound;
    if (b->nev == 0)
        return;
    if (b->nev > 1)
        qsort(b->ev, b->nev, sizeof *b->ev, by_time);
    for (size_t i = 0; i < b->nev; i++)
        fold(b, &b->ev[i]);
    b->nev = 0;
}

/* ---- routing ---- */

static uint64_t u64_at(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint32_t u32_at(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Kinds written even after the detail ended: few, and meaningful on their own (a pin, at most
   four per allocation, says why an allocation never moves again). */
static int kept(uint16_t kind)
{
    return kind == SHIM_TRACE_NOTE || kind == SHIM_TRACE_BUDGET || kind == SHIM_TRACE_PLAN ||
           kind == SHIM_TRACE_DROPPED || kind == SHIM_TRACE_PIN;
}

/* Contract in shim_trace_internal.h. */
void shim_trace_bound_say(int level, const char *msg)
{
    if (shim_trace_g.bound.log != NULL)
        shim_trace_g.bound.log(level, msg);
}

static void put_note(uint64_t t, const char *text)
{
    uint8_t body[256] = {0};
    size_t len = strnlen(text, sizeof body - 1);
    memcpy(body, text, len);
    put_record(SHIM_TRACE_NOTE, t, body, (uint32_t)((len + 8) & ~(size_t)7));
}

static uint64_t pending(void)
{
    uint32_t n = shim_trace_g.out_len;
    return n ? SHIM_TRACE_CHUNK_HEADER + (uint64_t)n : 0;
}

/* Ends the detail: records after t are folded from now on. Plans the summaries' levels on the
   room that is left. */
static void end_detail(struct shim_trace_bound *b, uint64_t t, int at_step)
{
    b->summarising = 1;
    b->switch_ns = t;
    uint64_t used = b->file_bytes + pending() + NOTE_ROOM / 2;
    uint64_t room = b->hard > used ? b->hard - used : 0, records = room / SUMMARY_COST;
    /* nine tenths of the room for summaries (a tenth for notes and the like): half of them for
       the first level (a summary per step), the other half shared by the LEVELS levels past
       it (at least one summary each: a tiny limit runs out of room sooner) */
    b->level_records = records * 9 / 20 / LEVELS ? records * 9 / 20 / LEVELS : 1;
    b->level = 0;
    b->level_left = records * 9 / 20 ? records * 9 / 20 : 1;
    bucket_open(b, t);
    char text[240];
    if (at_step)
        snprintf(text, sizeof text,
                 "trace: nearing its limit of %llu bytes after step %llu: later steps summarised",
                 (unsigned long long)b->max_bytes, (unsigned long long)b->last_detail_step);
    else
        snprintf(text, sizeof text,
                 "trace: nearing its limit of %llu bytes with no step boundary in sight: what "
                 "follows is summarised",
                 (unsigned long long)b->max_bytes);
    put_note(t, text);
    shim_trace_bound_say(3, text);
}

static int push_event(struct shim_trace_bound *b, const struct shim_trace_event *e)
{
    if (base_array_grow((void **)&b->ev, &b->evcap, b->nev + 1, sizeof *b->ev) != 0) {
        shim_trace_bound_pass_end(); /* fold what is there now, out of order at worst */
        if (b->evcap == 0)
            return -1;
    }
    b->ev[b->nev] = *e;
    b->ev[b->nev].order = (uint32_t)b->nev;
    b->nev++;
    return 0;
}

/* The record reduced to what a summary needs. */
static struct shim_trace_event event_of(const uint8_t *rec, uint16_t kind, uint64_t t)
{
    const uint8_t *body = rec + SHIM_TRACE_RECORD_HEADER;
    struct shim_trace_event e = {.t = t, .kind = kind};
    if (kind == SHIM_TRACE_ALLOC) {
        e.a = u64_at(body);
        e.b = u64_at(body + 16);
        e.sub = (uint16_t)u32_at(body + 32);
    } else if (kind == SHIM_TRACE_FREE) {
        e.a = u64_at(body);
    } else if (kind == SHIM_TRACE_STEP) {
        e.a = u64_at(body);
        e.b = u64_at(body + 8);
    } else if (kind == SHIM_TRACE_MOVE) {
        e.t = u64_at(body + 16);
        e.a = u64_at(body + 8);
        e.b = u32_at(body + 32);
        uint32_t reason = u32_at(body + 36);
        e.sub = (uint16_t)(reason < 0xffffu ? reason : 0xffffu);
    } else if (kind == SHIM_TRACE_STALL) {
        uint64_t start = u64_at(body), end = u64_at(body + 8);
        e.t = start;
        e.a = end > start ? end - start : 0;
    }
    return e;
}

/* The size each kind's fields need: a shorter record (it cannot come from this writer) is
   written as it is, never folded. */
static uint32_t body_needed(uint16_t kind)
{
    switch (kind) {
    case SHIM_TRACE_ALLOC:
        return 36;
    case SHIM_TRACE_FREE:
    case SHIM_TRACE_STEP:
        return 16;
    case SHIM_TRACE_MOVE:
        return 40;
    case SHIM_TRACE_STALL:
        return 16;
    default:
        return 0;
    }
}

/* Contract in shim_trace_internal.h. */
int shim_trace_out_record(const uint8_t *rec, uint32_t size)
{
    struct shim_trace_bound *b = &shim_trace_g.bound;
    if (b->max_bytes == 0)
        return shim_trace_out_append(rec, size);
    uint16_t kind;
    memcpy(&kind, rec, 2);
    uint64_t t = u64_at(rec + 8);
    if (size < SHIM_TRACE_RECORD_HEADER + body_needed(kind))
        return shim_trace_out_append(rec, size);
    struct shim_trace_event e = event_of(rec, kind, t);
    if (!b->summarising) {
        uint64_t after = b->file_bytes + pending() + size;
        if (after > b->soft)
            b->want_switch = 1;
        if (!(after > b->force && kind != SHIM_TRACE_STEP)) {
            if (kind == SHIM_TRACE_ALLOC)
                live_alloc(b, e.a, e.b, e.sub);
            else if (kind == SHIM_TRACE_FREE)
                live_free(b, e.a);
            int rc = shim_trace_out_append(rec, size);
            if (kind == SHIM_TRACE_STEP) {
                b->detail_steps++;
                b->last_detail_step = e.a;
                if (b->want_switch)
                    end_detail(b, t, 1);
            }
            return rc;
        }
        end_detail(b, t > 0 ? t - 1 : 0, 0); /* no step record came: end the detail here */
    }
    if (kept(kind))
        return shim_trace_out_append(rec, size);
    if (e.t <= b->switch_ns) { /* it belongs to the detailed part: written */
        if (kind == SHIM_TRACE_ALLOC)
            live_alloc(b, e.a, e.b, e.sub);
        else if (kind == SHIM_TRACE_FREE)
            live_free(b, e.a);
        if (kind == SHIM_TRACE_STEP && (b->detail_steps++ == 0 || e.a > b->last_detail_step))
            b->last_detail_step = e.a;
        return shim_trace_out_append(rec, size);
    }
    if (push_event(b, &e) != 0)
        fold(b, &e); /* no memory for the pass: at once */
    return 0;
}

/* ---- the session ---- */

/* Frees the live map and the pass's events (the counts stay, for the END chunk). */
static void release(struct shim_trace_bound *b)
{
    base_map_free(&b->live);
    free(b->ev);
    b->ev = NULL;
    b->nev = b->evcap = 0;
}

/* Contract in shim_trace_internal.h. */
void shim_trace_bound_start(uint64_t max_bytes, void (*log)(int level, const char *msg))
{
    struct shim_trace_bound *b = &shim_trace_g.bound;
    release(b);
    memset(b, 0, sizeof *b);
    b->log = log;
    b->max_bytes = max_bytes;
    if (max_bytes == 0)
        return;
    uint64_t room = END_ROOM + NOTE_ROOM;
    b->hard = max_bytes > room ? max_bytes - room : 0;
    b->soft = max_bytes - max_bytes / 4;
    b->force = max_bytes - max_bytes / 8;
    if (b->soft > b->hard)
        b->soft = b->hard;
    if (b->force > b->hard)
        b->force = b->hard;
}

/* Writes one note record in a chunk of its own, straight to the file (past the limit's
   hard line: the room for it was kept). 0, or -1 when the write failed. */
static int final_note(const char *text)
{
    struct shim_trace_state *g = &shim_trace_g;
    uint8_t rec[SHIM_TRACE_RECORD_HEADER + 256] = {0};
    size_t len = strnlen(text, 255);
    uint32_t size = (uint32_t)(SHIM_TRACE_RECORD_HEADER + ((len + 8) & ~(size_t)7));
    uint16_t hdr[2] = {SHIM_TRACE_NOTE, (uint16_t)size};
    uint64_t now = shim_trace_now_ns();
    memcpy(rec, hdr, 4);
    memcpy(rec + 8, &now, 8);
    memcpy(rec + SHIM_TRACE_RECORD_HEADER, text, len);
    if (shim_trace_write_chunk(g->fd, SHIM_TRACE_CHUNK_RECORDS, rec, size) != 0)
        return -1;
    g->records++;
    g->chunks++;
    return 0;
}

/* Contract in shim_trace_internal.h. */
void shim_trace_cut_back(void)
{
    struct shim_trace_state *g = &shim_trace_g;
    /* Fails on what is not a regular file: the reader then stops at the last whole chunk. */
    if (ftruncate(g->fd, (off_t)g->bound.file_bytes) == 0)
        lseek(g->fd, (off_t)g->bound.file_bytes, SEEK_SET);
}

/* Contract in shim_trace_internal.h. */
void shim_trace_bound_finish(void)
{
    struct shim_trace_state *g = &shim_trace_g;
    struct shim_trace_bound *b = &g->bound;
    shim_trace_bound_pass_end();
    if (b->summarising && b->bucket.s.steps > 0) /* the steps read, then what followed them */
        summary_write(b, &b->bucket.s);
    if (b->summarising && b->bucket.tail_events) {
        b->bucket.tail.step = b->bucket.tail.steps = b->bucket.tail.first_seq = 0;
        summary_write(b, &b->bucket.tail);
    }
    shim_trace_out_flush();
    char text[240];
    int error = g->write_error;
    if (error) {
        snprintf(text, sizeof text, "trace: %llu records lost (write error: %s)",
                 (unsigned long long)b->lost_error, strerror(error));
        if (final_note(text) != 0) {
            shim_trace_cut_back();
            release(b);
            return;
        }
    } else if (b->lost_limit) {
        snprintf(text, sizeof text,
                 "trace: %llu records lost at the size limit of %llu bytes (summaries of %llu "
                 "steps among them)",
                 (unsigned long long)b->lost_limit, (unsigned long long)b->max_bytes,
                 (unsigned long long)b->lost_steps);
        if (final_note(text) != 0) {
            g->write_error = errno ? errno : EIO;
            shim_trace_cut_back();
            release(b);
            return;
        }
    }
    if (shim_trace_write_end(g->fd) != 0) {
        if (!g->write_error)
            g->write_error = errno ? errno : EIO;
        shim_trace_cut_back();
    }
    release(b);
}
