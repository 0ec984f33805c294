/* import_et.h — internal interface of the execution-trace importer: the ET's operators and
 * their GPU tensor operands (import_et_load.c), their join with the Kineto trace's CPU
 * operators (import_et_join.c) and the model built from both (import_et.c). */
#ifndef IMPORT_ET_H
#define IMPORT_ET_H

#include "import_kineto.h"

/* What ie_lookup found of one node. */
typedef enum ie_lookup_kind {
    IE_LOOKUP_NONE,    /* not an embedding lookup: every operand is read whole */
    IE_LOOKUP_EXACT,   /* a lookup whose row width the trace gives */
    IE_LOOKUP_GUESSED, /* a lookup whose row width is an upper bound (tables of mixed widths) */
} ie_lookup_kind;

/* One GPU tensor operand: its storage, the bytes it reaches into the storage, and whether it is
 * an output of the node. piece is filled by import_et.c (the allocation it is part of). */
typedef struct ie_ref {
    int64_t storage;
    uint64_t bytes; /* (offset + numel) * itemsize: how far into the storage it reaches */
    uint64_t moved; /* numel * itemsize: what an operator reads or writes through it */
    uint64_t read;  /* bytes an embedding lookup reads through it (import_et_lookup.c); 0: all */
    int32_t arg;    /* its input's position in the node's inputs (schema order); -1: an output */
    int32_t itemsize;
    int out;
    size_t piece;
} ie_ref;

/* One ET node (operator or annotation). fw_parent > 0 marks a backward node. kineto is the
 * index of the joined Kineto CPU operator in t->op, or -1; parent_ix the parent's index, or -1;
 * sub_end the largest rf_id in its subtree. */
typedef struct ie_node {
    int64_t id, rf, parent, tid, seq, fw_parent, sub_end;
    char *name;
    size_t ref_first, nref;
    long kineto, parent_ix;
    ie_lookup_kind lookup;
} ie_node;

typedef struct ie_trace {
    const char *path;
    ie_node *node; /* sorted by rf_id once loaded */
    size_t nnode, cap_node;
    ie_ref *ref;
    size_t nref, cap_ref;
    int seen_nodes;
} ie_trace;

/* Reads the execution trace at path into the zeroed e; nodes end sorted by rf_id with parent_ix
 * and sub_end set. Errors as in import.h. */
int ie_load(const char *path, ie_trace *e, char *msg, size_t cap);

/* The node's field name: at its top level (older layout) or in its `attrs` list (Chakra), or
 * NULL. */
json_object *ie_field(json_object *o, const char *name);

/* ---- import_et_lookup.c ---- */

/* If node o (its JSON, named name) is an embedding lookup (FBGEMM's table-batched embedding
 * operators, aten::embedding_bag, aten::_embedding_bag, aten::embedding's aten::index_select
 * along dimension 0), sets the read bytes of its tables' operands among ref[0..n) (the node's
 * refs) to the rows its indices look up: indices x row width x itemsize (tools/import/IMPORT.md),
 * and of FBGEMM's optimizer state the same share of it. Reads that reach a whole operand stay 0
 * (whole). Never fails: what it cannot read is not a lookup. */
ie_lookup_kind ie_lookup(json_object *o, const char *name, ie_ref *ref, size_t n);

/* ---- import_et_step.c ---- */

/* The window of one ProfilerStep#N: its number, its own rf_id to the last of its subtree, the
 * operations in it. */
typedef struct ie_step_window {
    long long num;
    int64_t lo, hi;
    size_t ops;
} ie_step_window;

/* The step of the execution trace e alone: ProfilerStep#(o->step), or by default the last step
 * that is complete, judged by the operations each step holds (is_op[i]: node i is an operation;
 * tools/import/IMPORT.md). Notes the step chosen, and why when the last was cut short, to
 * o->notes. Returns 1 with the window in *s, 0 when the trace has no step annotation and no
 * --step was given (the whole trace is the step), or -1 with the error in msg (no such step, out
 * of memory). */
int ie_step_pick(const ie_trace *e, const import_opts *o, const unsigned char *is_op,
                 ie_step_window *s, char *msg, size_t cap);

/* ---- import_et_load.c ---- */

/* Keeps of e's nodes those whose rf_id lies in [lo, hi] (one step's window) with their
 * operands, relinked as ie_load leaves them. Returns 0, or -1 when memory runs out (e then
 * holds the kept nodes, unlinked, and is still for ie_free). */
int ie_keep(ie_trace *e, int64_t lo, int64_t hi);

/* Frees what ie_load kept. */
void ie_free(ie_trace *e);

/* ---- import_et_join.c ---- */

/* t->op's indices ordered by thread, then start time (enclosing operator first): a new array
 * (free() it), or NULL when memory runs out. */
size_t *ie_op_order(const ik_trace *t);

/* Joins e's nodes to t's CPU operators inside the step window of s: each ET thread to the
 * Kineto thread whose operator names line up best, then the names of the two sequences in
 * order (sets node.kineto). order is ie_op_order(t). Returns the number of nodes joined, or -1
 * when memory runs out. */
long ie_join(ie_trace *e, const ik_trace *t, const ik_step *s, const size_t *order);

/* The node joined to the innermost Kineto operator of thread tid whose span holds time ts, or
 * -1. by_op maps t->op indices to node indices (-1: none); order lists t->op by thread, time. */
long ie_node_at(const ik_trace *t, const size_t *order, const long *by_op, int64_t tid, double ts);

#endif
