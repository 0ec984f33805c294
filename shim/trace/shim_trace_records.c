/* shim_trace_records.c — the record functions of shim_trace.h: encode into the thread's ring. */
#include "shim_trace_internal.h"

#include <string.h>

#define REC(body) ((uint32_t)(SHIM_TRACE_RECORD_HEADER + (body)))
#define ROUND8(n) (((n) + 7u) & ~(size_t)7u)

/* The body structs are the layouts the schema announces. */
_Static_assert(sizeof(struct shim_trace_body_alloc) == 40, "alloc body");
_Static_assert(offsetof(struct shim_trace_body_alloc, alloc_kind) == 32, "alloc_kind offset");
_Static_assert(sizeof(struct shim_trace_body_ids) == 16, "two-id body");
_Static_assert(sizeof(struct shim_trace_body_launch) == 32, "launch body");
_Static_assert(offsetof(struct shim_trace_body_launch, n_allocs) == 24, "n_allocs offset");
_Static_assert(sizeof(struct shim_trace_body_kernel_time) == 16, "kernel_time body");
_Static_assert(sizeof(struct shim_trace_body_kernel_idle) == 24, "kernel_idle body");
_Static_assert(sizeof(struct shim_trace_body_link_time) == 24, "link_time body");
_Static_assert(sizeof(struct shim_trace_body_copy) == 40, "copy body");
_Static_assert(offsetof(struct shim_trace_body_copy, dir) == 32, "dir offset");
_Static_assert(sizeof(struct shim_trace_body_sync) == 16, "sync body");
_Static_assert(sizeof(struct shim_trace_body_budget) == 32, "budget body");
_Static_assert(sizeof(struct shim_trace_body_move) == 48, "move body");
_Static_assert(offsetof(struct shim_trace_body_move, reason) == 36, "move reason offset");
_Static_assert(offsetof(struct shim_trace_body_move, device) == 40, "move device offset");
_Static_assert(offsetof(struct shim_trace_body_budget, device) == 24, "budget device offset");
_Static_assert(offsetof(struct shim_trace_body_stall, device) == 20, "stall device offset");
_Static_assert(sizeof(struct shim_trace_body_stall) == 24, "stall body");
_Static_assert(offsetof(struct shim_trace_body_stall, reason) == 16, "stall reason offset");
_Static_assert(sizeof(struct shim_trace_body_transition) == 56, "transition body");
_Static_assert(offsetof(struct shim_trace_body_transition, next_use) == 40, "next_use offset");
_Static_assert(offsetof(struct shim_trace_body_transition, from) == 48, "from offset");
_Static_assert(offsetof(struct shim_trace_body_transition, reason) == 51, "reason offset");
_Static_assert(offsetof(struct shim_trace_body_transition, device) == 52, "transition device");
_Static_assert(sizeof(struct shim_trace_body_slab) == 32, "slab body");
_Static_assert(offsetof(struct shim_trace_body_slab, device) == 24, "slab device offset");
_Static_assert(sizeof(struct shim_trace_body_pin) == 40, "pin body");
_Static_assert(sizeof(struct shim_trace_body_plan) == 144, "plan body");
_Static_assert(offsetof(struct shim_trace_body_plan, native_us) == 64, "native_us offset");
_Static_assert(offsetof(struct shim_trace_body_plan, bytes_to_host) == 96, "plan bytes offset");
_Static_assert(offsetof(struct shim_trace_body_plan, evictions) == 112, "evictions offset");
_Static_assert(offsetof(struct shim_trace_body_plan, feasible) == 120, "feasible offset");
_Static_assert(sizeof(struct shim_trace_body_plan_step) == 80, "plan_step body");
_Static_assert(offsetof(struct shim_trace_body_plan_step, stall_ns) == 72, "stall_ns offset");
_Static_assert(SHIM_TRACE_RECORD_HEADER + 8 + SHIM_TRACE_TEXT_MAX <= SHIM_TRACE_RECORD_MAX,
               "longest text record");
_Static_assert(REC(32 + 8 * SHIM_TRACE_IDS_MAX) <= SHIM_TRACE_RECORD_MAX, "longest launch");
_Static_assert(SHIM_TRACE_RECORD_MAX < SHIM_TRACE_RING_BYTES / 2, "a record fits a ring");

/* A record of a fixed body. */
static inline void put_fixed(uint16_t kind, const void *body, uint32_t size)
{
    struct shim_trace_slot s;
    if (shim_trace_begin(&s, kind, REC(size)) != 0)
        return;
    memcpy(s.at, body, size);
    shim_trace_commit(&s);
}

static inline void put_two(uint16_t kind, uint64_t a, uint64_t b)
{
    struct shim_trace_body_ids body = {a, b};
    put_fixed(kind, &body, sizeof body);
}

/* A record of `fixed` body bytes followed by text, cut at SHIM_TRACE_TEXT_MAX, NUL-padded. */
static void put_text(uint16_t kind, const void *body, uint32_t fixed, const char *text)
{
    size_t len = text ? strnlen(text, SHIM_TRACE_TEXT_MAX) : 0;
    uint32_t tail = (uint32_t)ROUND8(len);
    struct shim_trace_slot s;
    if (shim_trace_begin(&s, kind, REC(fixed + tail)) != 0)
        return;
    if (fixed > 0)
        memcpy(s.at, body, fixed);
    if (len > 0)
        memcpy(s.at + fixed, text, len);
    memset(s.at + fixed + len, 0, tail - len);
    shim_trace_commit(&s);
}

/* Contract in shim_trace.h. */
void shim_trace_alloc(uint64_t alloc_id, uint64_t addr, uint64_t bytes, plan_mem_kind kind,
                      uint64_t stream)
{
    shim_trace_alloc_on(alloc_id, addr, bytes, kind, stream, 0);
}

/* Contract in shim_trace.h. */
void shim_trace_alloc_on(uint64_t alloc_id, uint64_t addr, uint64_t bytes, plan_mem_kind kind,
                         uint64_t stream, uint32_t device)
{
    struct shim_trace_body_alloc body = {alloc_id, addr, bytes, stream, (uint32_t)kind, device};
    put_fixed(SHIM_TRACE_ALLOC, &body, sizeof body);
}

/* Contract in shim_trace.h. */
void shim_trace_free(uint64_t alloc_id, uint64_t stream)
{
    put_two(SHIM_TRACE_FREE, alloc_id, stream);
}

/* Contract in shim_trace.h. Names longer than SHIM_TRACE_TEXT_MAX bytes are cut. */
void shim_trace_func_name(uint64_t func_id, const char *name)
{
    put_text(SHIM_TRACE_FUNC_NAME, &func_id, sizeof func_id, name);
}

/* Contract in shim_trace.h. At most SHIM_TRACE_IDS_MAX ids are kept; n_allocs keeps n. */
void shim_trace_launch(uint64_t seq, uint64_t func_id, uint64_t stream, const uint64_t *alloc_ids,
                       uint32_t n)
{
    uint32_t kept = alloc_ids == NULL ? 0 : n < SHIM_TRACE_IDS_MAX ? n : SHIM_TRACE_IDS_MAX;
    struct shim_trace_body_launch body = {seq, func_id, stream, n, 0};
    struct shim_trace_slot s;
    if (shim_trace_begin(&s, SHIM_TRACE_LAUNCH, REC(sizeof body + 8 * kept)) != 0)
        return;
    memcpy(s.at, &body, sizeof body);
    if (kept <= 8) { /* the common case: a few ids, copied inline */
        for (uint32_t i = 0; i < kept; i++)
            __builtin_memcpy(s.at + sizeof body + 8 * i, &alloc_ids[i], 8);
    } else {
        memcpy(s.at + sizeof body, alloc_ids, 8 * (size_t)kept);
    }
    shim_trace_commit(&s);
}

/* Contract in shim_trace.h. */
void shim_trace_kernel_time(uint64_t seq, double usec)
{
    struct shim_trace_body_kernel_time body = {seq, usec};
    put_fixed(SHIM_TRACE_KERNEL_TIME, &body, sizeof body);
}

/* Contract in shim_trace.h. */
void shim_trace_kernel_idle(uint64_t seq, double usec, double record_us)
{
    struct shim_trace_body_kernel_idle body = {seq, usec, record_us};
    put_fixed(SHIM_TRACE_KERNEL_IDLE, &body, sizeof body);
}

/* Contract in shim_trace.h. */
void shim_trace_link_time(bool to_device, uint64_t bytes, double usec)
{
    struct shim_trace_body_link_time body = {
        bytes, usec, to_device ? SHIM_MOVE_TO_DEVICE : SHIM_MOVE_TO_HOST, 0};
    put_fixed(SHIM_TRACE_LINK_TIME, &body, sizeof body);
}

/* Contract in shim_trace.h. */
void shim_trace_copy(enum shim_copy_dir dir, uint64_t dst_id, uint64_t src_id, uint64_t bytes,
                     uint64_t stream)
{
    struct shim_trace_body_copy body = {dst_id, src_id, bytes, stream, (uint32_t)dir, 0};
    put_fixed(SHIM_TRACE_COPY, &body, sizeof body);
}

/* Contract in shim_trace.h. */
void shim_trace_sync(enum shim_sync_kind kind, uint64_t stream)
{
    struct shim_trace_body_sync body = {stream, (uint32_t)kind, 0};
    put_fixed(SHIM_TRACE_SYNC, &body, sizeof body);
}

/* Contract in shim_trace.h. The run's figures take the mark first, with the time the record
   carries. */
void shim_trace_step(uint64_t step, uint64_t first_seq)
{
    uint64_t t = shim_trace_live_mark(step);
    struct shim_trace_body_ids body = {step, first_seq};
    struct shim_trace_slot s;
    if (shim_trace_begin_at(&s, SHIM_TRACE_STEP, REC(sizeof body), t) != 0)
        return;
    memcpy(s.at, &body, sizeof body);
    shim_trace_commit(&s);
}

/* Contract in shim_trace.h. */
void shim_trace_graph_launch(uint64_t graph_id, uint64_t stream)
{
    put_two(SHIM_TRACE_GRAPH_LAUNCH, graph_id, stream);
}

/* Contract in shim_trace.h. */
void shim_trace_budget(uint64_t budget_bytes, uint64_t host_budget_bytes, uint64_t device_total,
                       uint32_t device)
{
    struct shim_trace_body_budget body = {budget_bytes, host_budget_bytes, device_total, device, 0};
    put_fixed(SHIM_TRACE_BUDGET, &body, sizeof body);
}

/* Contract in shim_trace.h. The record's own time is when it was recorded (after end_ns, as a
   rule); the move's times are in its body. */
void shim_trace_move(enum shim_move_dir dir, uint64_t alloc_id, uint64_t bytes, uint64_t start_ns,
                     uint64_t end_ns, enum shim_move_reason reason, uint32_t device)
{
    struct shim_trace_body_move body = {.alloc_id = alloc_id,
                                        .bytes = bytes,
                                        .start_ns = start_ns,
                                        .end_ns = end_ns,
                                        .dir = (uint32_t)dir,
                                        .reason = (uint32_t)reason,
                                        .device = device};
    put_fixed(SHIM_TRACE_MOVE, &body, sizeof body);
}

/* Contract in shim_trace.h. */
void shim_trace_stall(uint64_t start_ns, uint64_t end_ns, enum shim_move_reason reason,
                      uint32_t device)
{
    struct shim_trace_body_stall body = {start_ns, end_ns, (uint32_t)reason, device};
    put_fixed(SHIM_TRACE_STALL, &body, sizeof body);
}

/* Contract in shim_trace.h. The body is built field by field: the caller's struct has
   padding whose bytes are undefined, and the file's unused bytes are zero. */
void shim_trace_transition(const struct shim_trace_transition *t)
{
    if (t == NULL)
        return;
    shim_trace_live_transition(t);
    struct shim_trace_body_transition body = {.unit_id = t->unit_id,
                                              .bytes = t->bytes,
                                              .stream = t->stream,
                                              .seq = t->seq,
                                              .score = t->score,
                                              .next_use = t->next_use,
                                              .from = t->from,
                                              .to = t->to,
                                              .event = t->event,
                                              .reason = t->reason,
                                              .device = t->device};
    put_fixed(SHIM_TRACE_TRANSITION, &body, sizeof body);
}

/* Contract in shim_trace.h. */
void shim_trace_slab(uint64_t slab_id, uint64_t addr, uint64_t bytes, uint32_t device)
{
    struct shim_trace_body_slab body = {slab_id, addr, bytes, device, 0};
    put_fixed(SHIM_TRACE_SLAB, &body, sizeof body);
}

/* Contract in shim_trace.h. */
void shim_trace_pin(uint64_t alloc_id, uint64_t unit_id, uint64_t addr, uint64_t bytes,
                    uint32_t reason, uint32_t from)
{
    struct shim_trace_body_pin body = {alloc_id, unit_id, addr, bytes, reason, from};
    put_fixed(SHIM_TRACE_PIN, &body, sizeof body);
}

/* Contract in shim_trace.h. Built field by field, as a transition is. */
void shim_trace_plan(const struct shim_trace_plan *p)
{
    if (p == NULL)
        return;
    shim_trace_live_plan(p);
    struct shim_trace_body_plan body = {.first_seq = p->first_seq,
                                        .model_step = p->model_step,
                                        .model_first_seq = p->model_first_seq,
                                        .step_len = p->step_len,
                                        .budget_bytes = p->budget_bytes,
                                        .predicted_peak_bytes = p->predicted_peak_bytes,
                                        .native_peak_bytes = p->native_peak_bytes,
                                        .floor_bytes = p->floor_bytes,
                                        .native_us = p->native_us,
                                        .predicted_us = p->predicted_us,
                                        .stall_us = p->stall_us,
                                        .bound_us = p->bound_us,
                                        .bytes_to_host = p->bytes_to_host,
                                        .bytes_to_device = p->bytes_to_device,
                                        .evictions = p->evictions,
                                        .prefetches = p->prefetches,
                                        .feasible = p->feasible ? 1 : 0,
                                        .slab_max_bytes = p->slab_max_bytes,
                                        .remap_us = p->remap_us};
    put_fixed(SHIM_TRACE_PLAN, &body, sizeof body);
}

/* Contract in shim_trace.h. */
void shim_trace_plan_step(const struct shim_trace_plan_step *s)
{
    if (s == NULL)
        return;
    shim_trace_live_plan_step(s);
    struct shim_trace_body_plan_step body = {
        s->step,       s->first_seq,          s->evictions,     s->prefetches,      s->missing,
        s->departures, s->reactive_evictions, s->bytes_to_host, s->bytes_to_device, s->stall_ns};
    put_fixed(SHIM_TRACE_PLAN_STEP, &body, sizeof body);
}

/* Contract in shim_trace.h. Notes longer than SHIM_TRACE_TEXT_MAX bytes are cut. */
void shim_trace_note(const char *text)
{
    put_text(SHIM_TRACE_NOTE, NULL, 0, text);
}
