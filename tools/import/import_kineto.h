/* import_kineto.h — internal interface of the Kineto importer: the events it keeps from a
 * trace (import_kineto_load.c) and the step model built from them (import_kineto.c), shared
 * with the execution-trace importer. Times are the trace's microseconds. */
#ifndef IMPORT_KINETO_H
#define IMPORT_KINETO_H

#include "import.h"

#include <stdint.h>

/* A GPU kernel (cat "kernel"). corr and ext are -1 when absent, device 0. */
typedef struct ik_kernel {
    double ts, dur;
    int64_t stream, device, corr, ext;
    uint64_t name; /* a hash of its name: the repeating pattern of a step without annotations */
} ik_kernel;

/* A runtime or driver call (cat "cuda_runtime", "cuda_driver") on a CPU thread. */
typedef struct ik_call {
    double ts;
    int64_t tid, corr, ext;
} ik_call;

/* A CPU span: an operator (cat "cpu_op"), a step (ProfilerStep#N: num = N) or an optimizer
 * annotation. ext (External id) and rf (Record function id) are -1 when absent. name is owned. */
typedef struct ik_span {
    double ts, end;
    int64_t tid, ext, rf, num;
    char *name;
} ik_span;

/* A [memory] instant event. dev_type and dev are -1 when absent; has_total says whether
 * total (Total Allocated after the event) is given. order is its position in the file. */
typedef struct ik_mem {
    double ts;
    int64_t tid, addr, bytes, total, dev_type, dev;
    int has_total;
    size_t order;
} ik_mem;

typedef struct ik_trace {
    const char *path;
    ik_kernel *kern;
    size_t nkern, cap_kern;
    ik_call *call;
    size_t ncall, cap_call;
    ik_span *op; /* cpu_op events */
    size_t nop, cap_op;
    ik_span *step;
    size_t nstep, cap_step;
    ik_span *opt; /* Optimizer.step annotations */
    size_t nopt, cap_opt;
    ik_mem *mem;
    size_t nmem, cap_mem;
    int seen_events;
} ik_trace;

/* Reads the Kineto trace at path into the zeroed t (t->path = path). Errors as in import.h. */
int ik_load(const char *path, ik_trace *t, char *msg, size_t cap);

/* Frees what ik_load kept; t may be partly filled. */
void ik_free(ik_trace *t);

/* The kernels of one step on one device, in GPU start order, with the CPU side of each. */
typedef struct ik_step {
    double start, end; /* CPU window [start, end); -inf, +inf for the whole trace */
    int64_t device;
    size_t n;
    size_t *kern;   /* index into t->kern of operation i */
    double *launch; /* CPU time of operation i's launch call (its own ts without one) */
    int64_t *tid;   /* thread of that call, -1 without one */
    int64_t *ext;   /* External id of that call (else the kernel's), -1 without one */
} ik_step;

/* Chooses the step (o->step, or the default of tools/import/IMPORT.md) and the GPU, and fills s
 * with its kernels. Notes what it chose on stderr. Errors as in import.h. */
int ik_step_select(const ik_trace *t, const import_opts *o, ik_step *s, char *msg, size_t cap);

/* Frees the arrays of s. */
void ik_step_free(ik_step *s);

/* A trace without ProfilerStep annotations (import_kineto_period.c): the step found from the
 * repeating pattern of kernel names on device s->device, ordered by GPU start; calls are the
 * launch calls sorted by correlation id (import_key). Sets s->start and s->end to the CPU launch
 * window of the last whole occurrence that another follows, starting at the launch after the
 * longest host pause in the pattern (where a training loop reads its loss, loads its batch);
 * notes what it found. Returns 1 found, 0 no pattern repeats (s unchanged), -1 out of memory. */
int ik_find_period(const ik_trace *t, const import_key *calls, const import_opts *o, ik_step *s);

/* Adds s's kernels to m as operations, with the link figures of tools/import/IMPORT.md. */
int ik_step_ops(const ik_trace *t, const ik_step *s, plan_model *m, char *msg, size_t cap);

/* The step's operations seen from the CPU (import_kineto_index.c): in launch order, and grouped
 * by the outermost CPU operator (on the launching thread) whose span holds the launch. */
typedef struct ik_top {
    double ts, end;
    int64_t tid;
    size_t first, n; /* its operations: ik_index.top_ops[first .. first + n) */
} ik_top;

typedef struct ik_index {
    size_t nops;
    double *launch;  /* launch times, ascending */
    int32_t *sufmin; /* smallest operation launched at launch[i] or later */
    int32_t *premax; /* largest operation launched at launch[i] or earlier */
    ik_top *top;     /* outermost operators, by thread then time */
    size_t ntop;
    int32_t *top_ops;   /* operations of each outermost operator, ascending */
    unsigned char *opt; /* 1 for an operation launched inside an Optimizer.step annotation */
} ik_index;

/* Builds ix for the step s of t. Returns 0, or -1 when memory runs out (ix then freeable). */
int ik_index_build(const ik_trace *t, const ik_step *s, ik_index *ix);

/* Frees ix. */
void ik_index_free(ik_index *ix);

/* The smallest operation launched at time ts or later; -1 when none is. */
int32_t ik_index_first_from(const ik_index *ix, double ts);

/* The largest operation launched at time ts or earlier; -1 when none is. */
int32_t ik_index_last_by(const ik_index *ix, double ts);

/* The outermost operator of thread tid whose span holds ts, or, with next set, the first one
 * that starts after ts (the next operator the thread ran). -1 when there is none. */
long ik_index_top_at(const ik_index *ix, int64_t tid, double ts, int next);

/* Appends to tv every operation in [birth, death] (-1: the step's first or last). Returns 0, or
 * -1 when memory runs out. */
int ik_index_range(const ik_index *ix, int32_t birth, int32_t death, import_ivec *tv);

/* Appends to tv, inside [birth, death], the operations that the trace suggests touch memory made
 * at ta on thread atid and freed at tf on thread ftid (tools/import/IMPORT.md lists the rule and
 * its holes). Returns 0, or -1 when memory runs out. */
int ik_index_guess(const ik_index *ix, double ta, int64_t atid, double tf, int64_t ftid,
                   int32_t birth, int32_t death, import_ivec *tv);

#endif
