/* import.h — the import room's seam (tools/import/): shim-plan's importers of PyTorch traces
 * (Kineto chrome-trace JSON, execution traces) into the planner's iteration model, and the JSON
 * reader they share (IMPORT.md, beside this header, gives the rules).
 *
 * Who may include it: shimplan.c (shim-plan, the room's program), the importers and their fuzz
 * targets. The room depends on the planner (plan.h), json-c, zlib and the growable array
 * (tools/util/), on nothing else in tools/; nothing else in tools/ includes this header.
 * import_kineto.h and import_et.h are the room's internal headers.
 *
 * Error contract (same words everywhere): a function returning int returns 0 on success; on
 * failure it returns -1 and writes a NUL-terminated message into msg (truncated to cap) that
 * names the file and, where the input is at fault, the line and column:
 * "FILE:LINE:COL: error: TEXT". Bad input never crashes and never exits. */
#ifndef IMPORT_H
#define IMPORT_H

#include "plan.h"

#include <json-c/json.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

/* ---- import_json.c: streaming reader of one JSON document, plain or gzip ------------------ */

/* Where a value starts in its file: 1-based line and byte column. */
typedef struct import_loc {
    const char *file;
    uint64_t line, col;
} import_loc;

/* Called once per value of the document's top level: for a top-level object, once per element
 * of each member whose value is an array (key = the member's name, index = the element's
 * position) and once per other member (index = SIZE_MAX); for a top-level array, once per
 * element with key "". val is freed after the call (take a reference to keep it). Returns 0 to
 * go on, non-zero to stop the read (the callback then has written msg). */
typedef int (*import_json_cb)(void *ctx, const char *key, size_t index, json_object *val,
                              const import_loc *loc, char *msg, size_t cap);

/* Reads the file at path (gzip or plain: zlib tells them apart) and hands its top-level values
 * to cb in file order, parsing one value at a time so that a large trace is never held whole.
 * Errors: unreadable file, gzip stream damaged or truncated, JSON malformed or truncated (each
 * with the line and column where it happened), or the callback's. */
int import_json_read(const char *path, import_json_cb cb, void *ctx, char *msg, size_t cap);

/* ---- import_field.c: typed access to members, with located errors ------------------------ */

/* Writes "FILE:LINE:COL: error: KEY[INDEX]: " and the formatted text into msg; returns -1. */
int import_fail(char *msg, size_t cap, const import_loc *loc, const char *key, size_t index,
                const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Member name of o as a number (integer or real) into *out. Returns 1 when found, 0 when o has
 * no such member (or it is null), -1 when it has another type. */
int import_get_num(json_object *o, const char *name, double *out);

/* As import_get_num for an integer (a real with no fraction is accepted). */
int import_get_int(json_object *o, const char *name, int64_t *out);

/* The value v itself as import_get_int reads a member: 1 (an integer), 0 (v is NULL), -1. */
int import_int_value(json_object *v, int64_t *out);

/* Member name of o as a string (borrowed from o) into *out; same returns. */
int import_get_str(json_object *o, const char *name, const char **out);

/* Checks a finished import (plan_model_check: sizes, durations and totals within the format's
 * limits, which a trace may exceed); on failure writes "PATH: error: ..." and returns -1. */
int import_check(const char *path, const plan_model *m, char *msg, size_t cap);

/* Sets m's link to the figures that stand in for a trace's missing ones (tools/import/IMPORT.md:
 * the step model builder's defaults). */
void import_default_hw(plan_model *m);

/* A growable array of int32, for touch lists. */
typedef struct import_ivec {
    int32_t *v;
    size_t n, cap;
} import_ivec;

/* Appends x. Returns 0, or -1 when memory runs out (iv is unchanged). */
int import_ivec_push(import_ivec *iv, int32_t x);

/* One entry of an index from ids to positions: an array of them sorted with import_key_cmp
   finds an id's position with bsearch (the Kineto launches by correlation id, the ET nodes by
   id). */
typedef struct import_key {
    int64_t key;
    size_t idx;
} import_key;

/* The qsort and bsearch order of import_key: by key. */
int import_key_cmp(const void *a, const void *b);

/* Options of an import (shim-plan's --step and --touches). */
typedef struct import_opts {
    int64_t step;    /* ProfilerStep#N to import; -1: the default step (tools/import/IMPORT.md) */
    int all_touches; /* non-zero: every operation in an allocation's life touches it */
    FILE *notes;     /* where notes for the user go (what was chosen or assumed); NULL: nowhere */
    FILE *join_map;  /* ET import only: gets "OP NODE_ID" per operation (tools/import/IMPORT.md);
                        NULL */
} import_opts;

/* Writes a note for the user about the trace at path to o->notes, if any: one line,
 * "shim-plan: PATH: " then fmt's text, then a newline (fmt has none of its own). */
void import_note(const import_opts *o, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- Importers -------------------------------------------------------------------------- */

/* ---- import_kineto.c ---- */

/* Builds into the initialised empty model m the step of the Kineto trace at path: operations
 * from its GPU kernels, allocations from its [memory] events (tools/import/IMPORT.md says how
 * touches and memory resident before the trace are modelled). Notes for the user (what was assumed)
 * go to stderr. Errors as above; m is then left for plan_model_free. */
int import_kineto(const char *path, const import_opts *o, plan_model *m, char *msg, size_t cap);

/* ---- import_et.c ---- */

/* An operator moves at least its operands' bytes through the GPU's memory, so bytes over the
 * fastest memory of a GPU this tool plans for bound its time from below: 4.8 TB/s, the H200's
 * HBM3e (NVIDIA's H200 product page). Under-estimating compute hides fewer moves behind it, so
 * slowdowns predicted from such times are the worse case (IMPORT.md). An integer in GB/s, so
 * that messages can quote it (IMPORT_STR). */
#define IMPORT_ET_HBM_GBPS 4800
#define IMPORT_STR_(x)     #x
#define IMPORT_STR(x)      IMPORT_STR_(x)

/* Builds into m the step of the execution trace et_path joined with the Kineto trace
 * kineto_path of the same job: operations and durations from the kernels, touches from the
 * operands of the ET operators that launched them; o->join_map, when set, gets which ET node
 * launched each operation. With kineto_path NULL, from the ET alone: its operators with GPU
 * operands that launch work are the operations, each timed as its operands' bytes at the
 * fastest GPU memory (a lower bound: the trace holds no times), and the step is ProfilerStep#N's
 * window (o->step, or the last), or the whole trace without one. Either layout of an ET
 * (IMPORT.md). Errors as above. */
int import_et(const char *et_path, const char *kineto_path, const import_opts *o, plan_model *m,
              char *msg, size_t cap);

#endif
