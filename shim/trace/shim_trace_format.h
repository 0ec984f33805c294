/* shim_trace_format.h — the trace file format (version 1.4), shared by the writer and the reader.
 *
 * Pure definitions (no CUDA, no state); tools/trace/TRACE-FORMAT.md is the prose version.
 * Every integer is little-endian. A file is:
 *
 *   preamble  16 bytes: magic "SHIMTRAC", u16 major, u16 minor, u32 preamble bytes (16)
 *   chunk*    16-byte chunk header + payload; the CRC covers header bytes 0..11 and the payload
 *
 * Chunks, in order: INFO (key/value text), SCHEMA (record kinds with their fields), RECORDS
 * (any number), END (totals; absent when the writer died). A reader skips chunk types it does
 * not know (after checking their CRC), record kinds the schema declares but it does not know,
 * and fields it does not know: it finds the fields it needs by name in the schema, so a newer
 * writer may append fields to a kind's fixed part or add kinds without a major version change.
 */
#ifndef SHIM_TRACE_FORMAT_H
#define SHIM_TRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define SHIM_TRACE_MAGIC "SHIMTRAC" /* 8 bytes, no terminator in the file */
#define SHIM_TRACE_MAJOR 1          /* a reader rejects another major version */
/* Minor versions: 1.10 transitions made on the host; 1.11 reason 8, placement (host_resident);
   1.12 the plan record's remap_us; 1.13 the END chunk's device_name; 1.14 kernel_idle records. */
#define SHIM_TRACE_MINOR         14 /* a reader accepts any minor */
#define SHIM_TRACE_PREAMBLE_SIZE 16

/* ---- chunks ---- */

#define SHIM_TRACE_CHUNK_MAGIC  "CHNK"      /* 4 bytes */
#define SHIM_TRACE_CHUNK_HEADER 16          /* magic, u32 type, u32 payload bytes, u32 crc32 */
#define SHIM_TRACE_CHUNK_MAX    (16u << 20) /* a larger payload length is malformed */

enum shim_trace_chunk_type {
    SHIM_TRACE_CHUNK_INFO = 1,    /* key/value pairs about the run */
    SHIM_TRACE_CHUNK_SCHEMA = 2,  /* the record kinds of this file */
    SHIM_TRACE_CHUNK_RECORDS = 3, /* records, whole, one after another */
    SHIM_TRACE_CHUNK_END = 4,     /* key/value totals; the last chunk of a complete trace */
};

/* INFO and END payload: u32 count, then count times {u16 key bytes, key, u32 value bytes,
   value}. Keys are [a-z0-9_], values UTF-8 text (numbers in decimal). */
#define SHIM_TRACE_KEY_MAX   64
#define SHIM_TRACE_VALUE_MAX (1u << 20)

/* ---- schema ---- */

/* SCHEMA payload: u16 kind count, u16 zero; then per kind: u16 kind id, u16 fixed body bytes,
   u8 field count, u8 name bytes, name; then per field: u16 offset in the body, u8 type,
   u8 name bytes, name. A tail field's offset is the fixed body size: it is the rest of the
   record. Names are [a-z0-9_], 1 to SHIM_TRACE_NAME_MAX bytes. */
#define SHIM_TRACE_NAME_MAX   64
#define SHIM_TRACE_FIELDS_MAX 64

enum shim_trace_field_type {
    SHIM_TRACE_U8 = 1,
    SHIM_TRACE_U16 = 2,
    SHIM_TRACE_U32 = 3,
    SHIM_TRACE_U64 = 4,
    SHIM_TRACE_I64 = 5,
    SHIM_TRACE_F64 = 6,       /* IEEE 754 binary64 */
    SHIM_TRACE_TEXT = 16,     /* tail: UTF-8, padded with NUL bytes to the record's end */
    SHIM_TRACE_U64_LIST = 17, /* tail: u64 values up to the record's end */
};

/* ---- records ---- */

/* Every record: u16 kind, u16 size (the whole record, >= 16), u32 thread id, u64 time
   (nanoseconds, CLOCK_MONOTONIC), then size - 16 body bytes. The writer pads records to a
   multiple of 8 bytes; a reader must not rely on it. */
#define SHIM_TRACE_RECORD_HEADER 16
#define SHIM_TRACE_RECORD_MAX    65528u /* the largest 8-aligned size a u16 holds */
#define SHIM_TRACE_TEXT_MAX      8192u  /* the writer cuts longer names and notes */
#define SHIM_TRACE_IDS_MAX       4096u  /* the writer keeps this many touched ids at most */

enum shim_trace_kind {
    SHIM_TRACE_ALLOC = 1,
    SHIM_TRACE_FREE = 2,
    SHIM_TRACE_FUNC_NAME = 3,
    SHIM_TRACE_LAUNCH = 4,
    SHIM_TRACE_KERNEL_TIME = 5,
    SHIM_TRACE_COPY = 6,
    SHIM_TRACE_SYNC = 7,
    SHIM_TRACE_STEP = 8,
    SHIM_TRACE_GRAPH_LAUNCH = 9,
    SHIM_TRACE_NOTE = 10,
    SHIM_TRACE_DROPPED = 11,      /* written by the writer: records a thread could not buffer */
    SHIM_TRACE_BUDGET = 12,       /* since 1.1 */
    SHIM_TRACE_MOVE = 13,         /* since 1.1 */
    SHIM_TRACE_STALL = 14,        /* since 1.1 */
    SHIM_TRACE_TRANSITION = 15,   /* since 1.2 */
    SHIM_TRACE_SLAB = 16,         /* since 1.2 */
    SHIM_TRACE_PLAN = 17,         /* since 1.3 */
    SHIM_TRACE_PLAN_STEP = 18,    /* since 1.3 */
    SHIM_TRACE_STEP_SUMMARY = 19, /* since 1.4: steps past the detail of a bounded trace */
    SHIM_TRACE_PIN = 20,          /* since 1.5: an allocation pinned on the device for good */
    SHIM_TRACE_LINK_TIME = 21,    /* since 1.9: one move's copy timed on libshim's stream */
    SHIM_TRACE_KERNEL_IDLE = 22,  /* since 1.14: the idle time of a stream before a launch */
};

/* Version 1.5's kinds: X(enum, name, fixed body bytes). A minor version only appends kinds
   (and fields); an id keeps its name and its fields for the life of the major version. */
#define SHIM_TRACE_KIND_LIST(X)                                                                    \
    X(SHIM_TRACE_ALLOC, "alloc", 40)                                                               \
    X(SHIM_TRACE_FREE, "free", 16)                                                                 \
    X(SHIM_TRACE_FUNC_NAME, "func_name", 8)                                                        \
    X(SHIM_TRACE_LAUNCH, "launch", 32)                                                             \
    X(SHIM_TRACE_KERNEL_TIME, "kernel_time", 16)                                                   \
    X(SHIM_TRACE_COPY, "copy", 40)                                                                 \
    X(SHIM_TRACE_SYNC, "sync", 16)                                                                 \
    X(SHIM_TRACE_STEP, "step", 16)                                                                 \
    X(SHIM_TRACE_GRAPH_LAUNCH, "graph_launch", 16)                                                 \
    X(SHIM_TRACE_NOTE, "note", 0)                                                                  \
    X(SHIM_TRACE_DROPPED, "dropped", 16)                                                           \
    X(SHIM_TRACE_BUDGET, "budget", 32)                                                             \
    X(SHIM_TRACE_MOVE, "move", 48)                                                                 \
    X(SHIM_TRACE_STALL, "stall", 24)                                                               \
    X(SHIM_TRACE_TRANSITION, "transition", 56)                                                     \
    X(SHIM_TRACE_SLAB, "slab", 32)                                                                 \
    X(SHIM_TRACE_PLAN, "plan", 144)                                                                \
    X(SHIM_TRACE_PLAN_STEP, "plan_step", 80)                                                       \
    X(SHIM_TRACE_STEP_SUMMARY, "step_summary", 192)                                                \
    X(SHIM_TRACE_PIN, "pin", 40)                                                                   \
    X(SHIM_TRACE_LINK_TIME, "link_time", 24)                                                     \
    X(SHIM_TRACE_KERNEL_IDLE, "kernel_idle", 24)

/* Version 1.5's fields: X(kind, field name, type, offset in the body). The body layouts below
   (struct shim_trace_body_*) match these offsets; bytes not covered by a field are zero. */
#define SHIM_TRACE_FIELD_LIST(X)                                                                   \
    X(SHIM_TRACE_ALLOC, "alloc_id", SHIM_TRACE_U64, 0)                                             \
    X(SHIM_TRACE_ALLOC, "addr", SHIM_TRACE_U64, 8)                                                 \
    X(SHIM_TRACE_ALLOC, "bytes", SHIM_TRACE_U64, 16)                                               \
    X(SHIM_TRACE_ALLOC, "stream", SHIM_TRACE_U64, 24)                                              \
    X(SHIM_TRACE_ALLOC, "alloc_kind", SHIM_TRACE_U32, 32)                                          \
    X(SHIM_TRACE_ALLOC, "device", SHIM_TRACE_U32, 36)                                              \
    X(SHIM_TRACE_FREE, "alloc_id", SHIM_TRACE_U64, 0)                                              \
    X(SHIM_TRACE_FREE, "stream", SHIM_TRACE_U64, 8)                                                \
    X(SHIM_TRACE_FUNC_NAME, "func_id", SHIM_TRACE_U64, 0)                                          \
    X(SHIM_TRACE_FUNC_NAME, "name", SHIM_TRACE_TEXT, 8)                                            \
    X(SHIM_TRACE_LAUNCH, "seq", SHIM_TRACE_U64, 0)                                                 \
    X(SHIM_TRACE_LAUNCH, "func_id", SHIM_TRACE_U64, 8)                                             \
    X(SHIM_TRACE_LAUNCH, "stream", SHIM_TRACE_U64, 16)                                             \
    X(SHIM_TRACE_LAUNCH, "n_allocs", SHIM_TRACE_U32, 24)                                           \
    X(SHIM_TRACE_LAUNCH, "alloc_ids", SHIM_TRACE_U64_LIST, 32)                                     \
    X(SHIM_TRACE_KERNEL_TIME, "seq", SHIM_TRACE_U64, 0)                                            \
    X(SHIM_TRACE_KERNEL_TIME, "usec", SHIM_TRACE_F64, 8)                                           \
    X(SHIM_TRACE_COPY, "dst_id", SHIM_TRACE_U64, 0)                                                \
    X(SHIM_TRACE_COPY, "src_id", SHIM_TRACE_U64, 8)                                                \
    X(SHIM_TRACE_COPY, "bytes", SHIM_TRACE_U64, 16)                                                \
    X(SHIM_TRACE_COPY, "stream", SHIM_TRACE_U64, 24)                                               \
    X(SHIM_TRACE_COPY, "dir", SHIM_TRACE_U32, 32)                                                  \
    X(SHIM_TRACE_SYNC, "stream", SHIM_TRACE_U64, 0)                                                \
    X(SHIM_TRACE_SYNC, "sync_kind", SHIM_TRACE_U32, 8)                                             \
    X(SHIM_TRACE_STEP, "step", SHIM_TRACE_U64, 0)                                                  \
    X(SHIM_TRACE_STEP, "first_seq", SHIM_TRACE_U64, 8)                                             \
    X(SHIM_TRACE_GRAPH_LAUNCH, "graph_id", SHIM_TRACE_U64, 0)                                      \
    X(SHIM_TRACE_GRAPH_LAUNCH, "stream", SHIM_TRACE_U64, 8)                                        \
    X(SHIM_TRACE_NOTE, "text", SHIM_TRACE_TEXT, 0)                                                 \
    X(SHIM_TRACE_DROPPED, "records", SHIM_TRACE_U64, 0)                                            \
    X(SHIM_TRACE_DROPPED, "total", SHIM_TRACE_U64, 8)                                              \
    X(SHIM_TRACE_BUDGET, "budget_bytes", SHIM_TRACE_U64, 0)                                        \
    X(SHIM_TRACE_BUDGET, "host_budget_bytes", SHIM_TRACE_U64, 8)                                   \
    X(SHIM_TRACE_BUDGET, "device_total", SHIM_TRACE_U64, 16)                                       \
    X(SHIM_TRACE_BUDGET, "device", SHIM_TRACE_U32, 24)                                             \
    X(SHIM_TRACE_MOVE, "alloc_id", SHIM_TRACE_U64, 0)                                              \
    X(SHIM_TRACE_MOVE, "bytes", SHIM_TRACE_U64, 8)                                                 \
    X(SHIM_TRACE_MOVE, "start_ns", SHIM_TRACE_U64, 16)                                             \
    X(SHIM_TRACE_MOVE, "end_ns", SHIM_TRACE_U64, 24)                                               \
    X(SHIM_TRACE_MOVE, "dir", SHIM_TRACE_U32, 32)                                                  \
    X(SHIM_TRACE_MOVE, "reason", SHIM_TRACE_U32, 36)                                               \
    X(SHIM_TRACE_MOVE, "device", SHIM_TRACE_U32, 40)                                               \
    X(SHIM_TRACE_STALL, "start_ns", SHIM_TRACE_U64, 0)                                             \
    X(SHIM_TRACE_STALL, "end_ns", SHIM_TRACE_U64, 8)                                               \
    X(SHIM_TRACE_STALL, "reason", SHIM_TRACE_U32, 16)                                              \
    X(SHIM_TRACE_STALL, "device", SHIM_TRACE_U32, 20)                                              \
    X(SHIM_TRACE_TRANSITION, "unit_id", SHIM_TRACE_U64, 0)                                         \
    X(SHIM_TRACE_TRANSITION, "bytes", SHIM_TRACE_U64, 8)                                           \
    X(SHIM_TRACE_TRANSITION, "stream", SHIM_TRACE_U64, 16)                                         \
    X(SHIM_TRACE_TRANSITION, "seq", SHIM_TRACE_U64, 24)                                            \
    X(SHIM_TRACE_TRANSITION, "score", SHIM_TRACE_U64, 32)                                          \
    X(SHIM_TRACE_TRANSITION, "next_use", SHIM_TRACE_U64, 40)                                       \
    X(SHIM_TRACE_TRANSITION, "from", SHIM_TRACE_U8, 48)                                            \
    X(SHIM_TRACE_TRANSITION, "to", SHIM_TRACE_U8, 49)                                              \
    X(SHIM_TRACE_TRANSITION, "event", SHIM_TRACE_U8, 50)                                           \
    X(SHIM_TRACE_TRANSITION, "reason", SHIM_TRACE_U8, 51)                                          \
    X(SHIM_TRACE_TRANSITION, "device", SHIM_TRACE_U32, 52)                                         \
    X(SHIM_TRACE_SLAB, "slab_id", SHIM_TRACE_U64, 0)                                               \
    X(SHIM_TRACE_SLAB, "addr", SHIM_TRACE_U64, 8)                                                  \
    X(SHIM_TRACE_SLAB, "bytes", SHIM_TRACE_U64, 16)                                                \
    X(SHIM_TRACE_SLAB, "device", SHIM_TRACE_U32, 24)                                               \
    X(SHIM_TRACE_PLAN, "first_seq", SHIM_TRACE_U64, 0)                                             \
    X(SHIM_TRACE_PLAN, "model_step", SHIM_TRACE_U64, 8)                                            \
    X(SHIM_TRACE_PLAN, "model_first_seq", SHIM_TRACE_U64, 16)                                      \
    X(SHIM_TRACE_PLAN, "step_len", SHIM_TRACE_U64, 24)                                             \
    X(SHIM_TRACE_PLAN, "budget_bytes", SHIM_TRACE_U64, 32)                                         \
    X(SHIM_TRACE_PLAN, "predicted_peak_bytes", SHIM_TRACE_U64, 40)                                 \
    X(SHIM_TRACE_PLAN, "native_peak_bytes", SHIM_TRACE_U64, 48)                                    \
    X(SHIM_TRACE_PLAN, "floor_bytes", SHIM_TRACE_U64, 56)                                          \
    X(SHIM_TRACE_PLAN, "native_us", SHIM_TRACE_F64, 64)                                            \
    X(SHIM_TRACE_PLAN, "predicted_us", SHIM_TRACE_F64, 72)                                         \
    X(SHIM_TRACE_PLAN, "stall_us", SHIM_TRACE_F64, 80)                                             \
    X(SHIM_TRACE_PLAN, "bound_us", SHIM_TRACE_F64, 88)                                             \
    X(SHIM_TRACE_PLAN, "bytes_to_host", SHIM_TRACE_U64, 96)                                        \
    X(SHIM_TRACE_PLAN, "bytes_to_device", SHIM_TRACE_U64, 104)                                     \
    X(SHIM_TRACE_PLAN, "evictions", SHIM_TRACE_U32, 112)                                           \
    X(SHIM_TRACE_PLAN, "prefetches", SHIM_TRACE_U32, 116)                                          \
    X(SHIM_TRACE_PLAN, "feasible", SHIM_TRACE_U8, 120)                                             \
    X(SHIM_TRACE_PLAN, "slab_max_bytes", SHIM_TRACE_U64, 128)                                      \
    X(SHIM_TRACE_PLAN, "remap_us", SHIM_TRACE_F64, 136)                                            \
    X(SHIM_TRACE_PLAN_STEP, "step", SHIM_TRACE_U64, 0)                                             \
    X(SHIM_TRACE_PLAN_STEP, "first_seq", SHIM_TRACE_U64, 8)                                        \
    X(SHIM_TRACE_PLAN_STEP, "evictions", SHIM_TRACE_U64, 16)                                       \
    X(SHIM_TRACE_PLAN_STEP, "prefetches", SHIM_TRACE_U64, 24)                                      \
    X(SHIM_TRACE_PLAN_STEP, "missing", SHIM_TRACE_U64, 32)                                         \
    X(SHIM_TRACE_PLAN_STEP, "departures", SHIM_TRACE_U64, 40)                                      \
    X(SHIM_TRACE_PLAN_STEP, "reactive_evictions", SHIM_TRACE_U64, 48)                              \
    X(SHIM_TRACE_PLAN_STEP, "bytes_to_host", SHIM_TRACE_U64, 56)                                   \
    X(SHIM_TRACE_PLAN_STEP, "bytes_to_device", SHIM_TRACE_U64, 64)                                 \
    X(SHIM_TRACE_PLAN_STEP, "stall_ns", SHIM_TRACE_U64, 72)                                        \
    X(SHIM_TRACE_PIN, "alloc_id", SHIM_TRACE_U64, 0)                                               \
    X(SHIM_TRACE_PIN, "unit_id", SHIM_TRACE_U64, 8)                                                \
    X(SHIM_TRACE_PIN, "addr", SHIM_TRACE_U64, 16)                                                  \
    X(SHIM_TRACE_PIN, "bytes", SHIM_TRACE_U64, 24)                                                 \
    X(SHIM_TRACE_PIN, "reason", SHIM_TRACE_U32, 32)                                                \
    X(SHIM_TRACE_PIN, "from", SHIM_TRACE_U32, 36)                                                  \
    X(SHIM_TRACE_LINK_TIME, "bytes", SHIM_TRACE_U64, 0)                                            \
    X(SHIM_TRACE_LINK_TIME, "usec", SHIM_TRACE_F64, 8)                                             \
    X(SHIM_TRACE_LINK_TIME, "dir", SHIM_TRACE_U32, 16)                                             \
    X(SHIM_TRACE_KERNEL_IDLE, "seq", SHIM_TRACE_U64, 0)                                            \
    X(SHIM_TRACE_KERNEL_IDLE, "usec", SHIM_TRACE_F64, 8)                                           \
    X(SHIM_TRACE_KERNEL_IDLE, "record_us", SHIM_TRACE_F64, 16)                                     \
    SHIM_TRACE_SUMMARY_FIELDS(X)

/* The step_summary fields (1.4), in body order: every one a u64, at 8 times its position; then
   the tail moves_by_reason (u64 list at 192: element i counts the moves of reason i, 0 for
   reasons outside enum shim_move_reason). X(kind, name, type, offset) like the list above. */
#define SHIM_TRACE_SUMMARY_FIELDS(X)                                                               \
    X(SHIM_TRACE_STEP_SUMMARY, "step", SHIM_TRACE_U64, 0)                                          \
    X(SHIM_TRACE_STEP_SUMMARY, "steps", SHIM_TRACE_U64, 8)                                         \
    X(SHIM_TRACE_STEP_SUMMARY, "first_seq", SHIM_TRACE_U64, 16)                                    \
    X(SHIM_TRACE_STEP_SUMMARY, "start_ns", SHIM_TRACE_U64, 24)                                     \
    X(SHIM_TRACE_STEP_SUMMARY, "end_ns", SHIM_TRACE_U64, 32)                                       \
    X(SHIM_TRACE_STEP_SUMMARY, "records", SHIM_TRACE_U64, 40)                                      \
    X(SHIM_TRACE_STEP_SUMMARY, "launches", SHIM_TRACE_U64, 48)                                     \
    X(SHIM_TRACE_STEP_SUMMARY, "allocations", SHIM_TRACE_U64, 56)                                  \
    X(SHIM_TRACE_STEP_SUMMARY, "frees", SHIM_TRACE_U64, 64)                                        \
    X(SHIM_TRACE_STEP_SUMMARY, "copies", SHIM_TRACE_U64, 72)                                       \
    X(SHIM_TRACE_STEP_SUMMARY, "syncs", SHIM_TRACE_U64, 80)                                        \
    X(SHIM_TRACE_STEP_SUMMARY, "graph_launches", SHIM_TRACE_U64, 88)                               \
    X(SHIM_TRACE_STEP_SUMMARY, "kernel_times", SHIM_TRACE_U64, 96)                                 \
    X(SHIM_TRACE_STEP_SUMMARY, "peak_device_bytes", SHIM_TRACE_U64, 104)                           \
    X(SHIM_TRACE_STEP_SUMMARY, "device_bytes", SHIM_TRACE_U64, 112)                                \
    X(SHIM_TRACE_STEP_SUMMARY, "peak_host_bytes", SHIM_TRACE_U64, 120)                             \
    X(SHIM_TRACE_STEP_SUMMARY, "evictions", SHIM_TRACE_U64, 128)                                   \
    X(SHIM_TRACE_STEP_SUMMARY, "cancelled_evictions", SHIM_TRACE_U64, 136)                         \
    X(SHIM_TRACE_STEP_SUMMARY, "restores", SHIM_TRACE_U64, 144)                                    \
    X(SHIM_TRACE_STEP_SUMMARY, "bytes_to_host", SHIM_TRACE_U64, 152)                               \
    X(SHIM_TRACE_STEP_SUMMARY, "bytes_to_device", SHIM_TRACE_U64, 160)                             \
    X(SHIM_TRACE_STEP_SUMMARY, "cancelled_bytes", SHIM_TRACE_U64, 168)                             \
    X(SHIM_TRACE_STEP_SUMMARY, "stalls", SHIM_TRACE_U64, 176)                                      \
    X(SHIM_TRACE_STEP_SUMMARY, "stall_ns", SHIM_TRACE_U64, 184)                                    \
    X(SHIM_TRACE_STEP_SUMMARY, "moves_by_reason", SHIM_TRACE_U64_LIST, 192)

/* Record bodies as the writer lays them out (no implicit padding on LP64). */
struct shim_trace_body_alloc {
    uint64_t alloc_id, addr, bytes, stream;
    uint32_t alloc_kind, device; /* device: since 1.6 (0 before, and for pinned host memory) */
};
struct shim_trace_body_ids { /* free, graph_launch, step, dropped: two u64 */
    uint64_t a, b;
};
struct shim_trace_body_launch {
    uint64_t seq, func_id, stream;
    uint32_t n_allocs, zero;
};
struct shim_trace_body_kernel_time {
    uint64_t seq;
    double usec;
};
struct shim_trace_body_kernel_idle {
    uint64_t seq;
    double usec, record_us;
};
struct shim_trace_body_link_time {
    uint64_t bytes;
    double usec;
    uint32_t dir, zero;
};
struct shim_trace_body_copy {
    uint64_t dst_id, src_id, bytes, stream;
    uint32_t dir, zero;
};
struct shim_trace_body_sync {
    uint64_t stream;
    uint32_t sync_kind, zero;
};
struct shim_trace_body_budget {
    uint64_t budget_bytes, host_budget_bytes, device_total;
    uint32_t device, zero; /* device: since 1.7 */
};
struct shim_trace_body_move {
    uint64_t alloc_id, bytes, start_ns, end_ns;
    uint32_t dir, reason;
    uint32_t device, zero; /* device: since 1.7 */
};
struct shim_trace_body_stall {
    uint64_t start_ns, end_ns;
    uint32_t reason, device; /* device: since 1.7 (zero before) */
};
struct shim_trace_body_transition {
    uint64_t unit_id, bytes, stream, seq, score, next_use;
    uint8_t from, to, event, reason;
    uint32_t device; /* since 1.8 (zero before) */
};
struct shim_trace_body_slab {
    uint64_t slab_id, addr, bytes;
    uint32_t device, zero; /* device: since 1.8 */
};
struct shim_trace_body_pin {
    uint64_t alloc_id, unit_id, addr, bytes;
    uint32_t reason, from;
};
/* The plan record's figures, in the order its body holds them (bytes 0..119): the body below and
   the writer's struct shim_trace_plan (shim_trace.h) are both declared from this one list. */
#define SHIM_TRACE_PLAN_FIGURES                                                                    \
    uint64_t first_seq, model_step, model_first_seq, step_len;                                     \
    uint64_t budget_bytes, predicted_peak_bytes, native_peak_bytes, floor_bytes;                   \
    double native_us, predicted_us, stall_us, bound_us;                                            \
    uint64_t bytes_to_host, bytes_to_device;                                                       \
    uint32_t evictions, prefetches
struct shim_trace_body_plan {
    SHIM_TRACE_PLAN_FIGURES;
    uint8_t feasible, zero[7];
    uint64_t slab_max_bytes; /* 1.9 */
    double remap_us;         /* 1.12 */
};
struct shim_trace_body_plan_step {
    uint64_t step, first_seq, evictions, prefetches, missing, departures, reactive_evictions;
    uint64_t bytes_to_host, bytes_to_device, stall_ns;
};
/* Residency moves as their move records count (shim_trace_count_move in shim_trace_figures.h,
   the writer's step summaries and the reader's totals alike): an eviction is a move to the host
   whose reason is not "cancelled"; a cancelled eviction is counted apart, but its bytes were
   copied, so they are in bytes_to_host. Six u64, as the step_summary body holds them. */
struct shim_trace_move_counts {
    uint64_t evictions, cancelled_evictions, restores;
    uint64_t bytes_to_host, bytes_to_device, cancelled_bytes;
};
#define SHIM_TRACE_SUMMARY_REASONS 8  /* moves_by_reason: 0 other, 1..7 enum shim_move_reason */
struct shim_trace_body_step_summary { /* the fixed part (192 bytes), then the reasons' tail */
    uint64_t step, steps, first_seq, start_ns, end_ns, records;
    uint64_t launches, allocations, frees, copies, syncs, graph_launches, kernel_times;
    uint64_t peak_device_bytes, device_bytes, peak_host_bytes;
    struct shim_trace_move_counts moves; /* evictions .. cancelled_bytes, at 128 */
    uint64_t stalls, stall_ns;
    uint64_t moves_by_reason[SHIM_TRACE_SUMMARY_REASONS];
};

/* ---- checksum: CRC-32 (IEEE 802.3, reflected, the value of zlib's crc32()) ---- */

/* Fills table for shim_trace_crc32. */
static inline void shim_trace_crc32_init(uint32_t table[256])
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
        table[i] = c;
    }
}

/* Continues crc (0 to begin) over n bytes at p. */
static inline uint32_t shim_trace_crc32(const uint32_t table[256], uint32_t crc, const void *p,
                                        size_t n)
{
    const unsigned char *b = p;
    crc = ~crc;
    for (size_t i = 0; i < n; i++)
        crc = table[(crc ^ b[i]) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

#endif
