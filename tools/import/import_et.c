/* import_et.c — the execution-trace importer: the Kineto trace's kernels are the
 * operations; the ET operators that launched them (import_et_join.c) say which storages each
 * touches; a storage's allocations and their lives follow from its uses (tools/import/IMPORT.md
 * lists every assumption). */
#include "import_et.h"

#include "base_array.h"

#include <stdlib.h>
#include <string.h>

/* A storage id of the ET: its allocations ("pieces": an id is reused by later tensors at the
 * same address) and where each started. */
typedef struct stor {
    int64_t id;
    size_t first_piece, npiece;
    int created;    /* its first use is as an output: made in the step, not before it */
    long last_bump; /* node that started its current piece, -1 */
} stor;

typedef struct bump {
    size_t stor;
    int64_t rf;
} bump;

/* reads parallels touch.v: the bytes each touch reads (0: the whole allocation). */
typedef struct piece {
    uint64_t bytes;
    int cyclic;
    import_ivec touch;
    uint64_t *reads;
    size_t cap_reads;
} piece;

typedef struct ctx {
    ie_trace *e;
    const ik_trace *t;
    stor *st;
    size_t nst;
    bump *bp; /* in rf order */
    size_t nbp, cap_bp;
    piece *pc;
    size_t npc;
    int alone; /* no Kineto trace: operations are leaf operators (build_alone) */
} ctx;

static int cmp_stor(const void *a, const void *b)
{
    const stor *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static size_t stor_of(const ctx *c, int64_t id)
{
    stor q = {.id = id};
    return (size_t)((stor *)bsearch(&q, c->st, c->nst, sizeof(stor), cmp_stor) - c->st);
}

static int is_ancestor(const ie_trace *e, long a, long n)
{
    for (int d = 0; n >= 0 && d < 256; d++, n = e->node[n].parent_ix)
        if (n == a)
            return 1;
    return 0;
}

/* Distinct storages, and where a new allocation starts at one: an output of an aten::empty*
 * operator (the allocating factories) at a storage already used, unless an enclosing operator
 * started the current piece (empty_like calls empty_strided, mm calls empty: one allocation). */
static int find_pieces(ctx *c)
{
    ie_trace *e = c->e;
    if (!(c->st = malloc(e->nref * sizeof(stor) + 1)))
        return -1;
    for (size_t i = 0; i < e->nref; i++)
        c->st[i] = (stor){.id = e->ref[i].storage, .created = -1, .last_bump = -1, .npiece = 1};
    qsort(c->st, e->nref, sizeof(stor), cmp_stor);
    for (size_t i = 0; i < e->nref; i++)
        if (!c->nst || c->st[c->nst - 1].id != c->st[i].id)
            c->st[c->nst++] = c->st[i];
    for (size_t n = 0; n < e->nnode; n++) {
        const ie_node *nd = &e->node[n];
        int alloc = !strncmp(nd->name, "aten::empty", 11);
        for (size_t r = nd->ref_first; r < nd->ref_first + nd->nref; r++) {
            stor *s = &c->st[stor_of(c, e->ref[r].storage)];
            if (s->created < 0) {
                s->created = e->ref[r].out;
                s->last_bump = e->ref[r].out ? (long)n : -1;
                continue;
            }
            if (!alloc || !e->ref[r].out || is_ancestor(e, s->last_bump, (long)n))
                continue;
            if (base_array_grow((void **)&c->bp, &c->cap_bp, c->nbp + 1, sizeof(bump)))
                return -1;
            c->bp[c->nbp++] = (bump){(size_t)(s - c->st), nd->rf};
            s->npiece++, s->last_bump = (long)n;
        }
    }
    for (size_t i = 0; i < c->nst; i++)
        c->st[i].first_piece = c->npc, c->npc += c->st[i].npiece;
    if (!(c->pc = calloc(c->npc + 1, sizeof(piece))))
        return -1;
    for (size_t i = 0; i < c->nst; i++)
        c->pc[c->st[i].first_piece].cyclic = !c->st[i].created;
    return 0;
}

/* Each reference's piece: the storage's piece current when the node started (an input) or when
 * its subtree ended (an output: made by an operator inside it). */
static void assign_pieces(ctx *c)
{
    ie_trace *e = c->e;
    for (size_t n = 0; n < e->nnode; n++) {
        const ie_node *nd = &e->node[n];
        for (size_t r = nd->ref_first; r < nd->ref_first + nd->nref; r++) {
            ie_ref *rf = &e->ref[r];
            size_t si = stor_of(c, rf->storage), gen = 0;
            int64_t when = rf->out ? nd->sub_end : nd->rf;
            for (size_t b = 0; b < c->nbp && c->bp[b].rf <= when; b++)
                gen += c->bp[b].stor == si;
            rf->piece = c->st[si].first_piece + gen;
            piece *p = &c->pc[rf->piece];
            p->bytes = rf->bytes > p->bytes ? rf->bytes : p->bytes;
        }
    }
}

/* Operation op touches piece p, reading `read` bytes of it (0, or all it holds: the whole). */
static int touch_piece(piece *p, int32_t op, uint64_t read)
{
    if (base_array_grow((void **)&p->reads, &p->cap_reads, p->touch.n + 1, sizeof *p->reads) ||
        import_ivec_push(&p->touch, op))
        return -1;
    p->reads[p->touch.n - 1] = read >= p->bytes ? 0 : read;
    return 0;
}

/* Operation op touches every piece that node n uses (only the cyclic ones with cyclic_only),
 * reading what an embedding lookup reads of it (import_et_lookup.c) or the whole. */
static int touch_refs(ctx *c, long n, int32_t op, int cyclic_only)
{
    const ie_node *nd = &c->e->node[n];
    for (size_t r = nd->ref_first; r < nd->ref_first + nd->nref; r++) {
        const ie_ref *rf = &c->e->ref[r];
        if ((!cyclic_only || c->pc[rf->piece].cyclic) &&
            touch_piece(&c->pc[rf->piece], op, rf->read))
            return -1;
    }
    return 0;
}

/* Operation op touches every piece that its ET node, the node's ancestors, and for a backward
 * node the forward nodes of the same sequence number use (a backward may update what its forward
 * read in place without listing it: the embedding tables' fused update does). */
static int touch_node(ctx *c, long n, int32_t op)
{
    return touch_refs(c, n, op, 0);
}

/* A custom autograd function's C++ backward node (CppNode<...>: the embedding tables' fused
 * update), or a backward node whose forward the ET did not record, may update any memory made
 * before the step in place without listing it. (Forward operators carry the thread's current
 * sequence number, so a shared seq_id is weak evidence: it adds touches, never removes any.) */
static int touch_cyclic(ctx *c, int32_t op)
{
    for (size_t i = 0; i < c->npc; i++)
        if (c->pc[i].cyclic && touch_piece(&c->pc[i], op, 0))
            return -1;
    return 0;
}

static int has_seq_ancestor(const ie_trace *e, long n, int64_t seq)
{
    for (int d = 0; n >= 0 && d < 256; d++, n = e->node[n].parent_ix)
        if (e->node[n].seq == seq)
            return 1;
    return 0;
}

/* The forward operator of custom autograd node b (CppNode<...>, sequence number s), as
 * torch::autograd::Function::apply runs it: the node takes s when it is made, just before
 * forward() runs with grad mode off, so forward()'s operators carry no sequence number (-1) and
 * come, on the forward thread, after the last operator carrying s and before the first carrying
 * a later one. Calls touch_refs(cyclic only) for each operator with a namespace there (not
 * inside an operator carrying s) and returns how many there were (0: none found), or -1. */
static long touch_forward(ctx *c, long b, int32_t op, int apply)
{
    const ie_trace *e = c->e;
    int64_t s = e->node[b].seq, r0 = -1, r1 = INT64_MAX, tid = 0;
    for (size_t f = 0; f < e->nnode; f++)
        if (e->node[f].fw_parent <= 0 && e->node[f].seq == s && e->node[f].rf > r0)
            r0 = e->node[f].rf, tid = e->node[f].tid;
    for (size_t f = 0; r0 >= 0 && f < e->nnode; f++)
        if (e->node[f].fw_parent <= 0 && e->node[f].tid == tid && e->node[f].seq > s &&
            e->node[f].rf > r0 && e->node[f].rf < r1)
            r1 = e->node[f].rf;
    long found = 0;
    for (size_t f = 0; r0 >= 0 && f < e->nnode; f++) {
        const ie_node *nd = &e->node[f];
        if (nd->tid != tid || nd->rf <= r0 || nd->rf >= r1 || nd->seq >= 0 || !nd->nref ||
            !strstr(nd->name, "::") || has_seq_ancestor(e, (long)f, s))
            continue;
        found++;
        if (apply && touch_refs(c, (long)f, op, 1))
            return -1;
    }
    return found;
}

/* A custom autograd node's own kernels touch what its forward operator listed that was made
 * before the step (the tables and optimizer state its fused update writes in place), reading
 * what that forward reads of them; the kernels of operators under it (zeros_like, fill_: their
 * own operands are listed) do not. Without a Kineto trace the node has no kernels of its own and
 * the operators under it stand in. A node whose forward is not found touches every cyclic piece
 * (tools/import/IMPORT.md). */
static int touch_custom(ctx *c, long n, int depth, int32_t op)
{
    long found = touch_forward(c, n, op, 0);
    if (found < 0)
        return -1;
    if (!found)
        return touch_cyclic(c, op);
    return depth == 0 || c->alone ? (int)(touch_forward(c, n, op, 1) < 0 ? -1 : 0) : 0;
}

static int touch_op(ctx *c, long n, int32_t op)
{
    ie_trace *e = c->e;
    for (int d = 0; n >= 0 && d < 256; d++, n = e->node[n].parent_ix) {
        if (touch_node(c, n, op))
            return -1;
        if (e->node[n].fw_parent <= 0 || e->node[n].seq < 0)
            continue;
        int forward = 0;
        for (size_t f = 0; f < e->nnode; f++)
            if (e->node[f].seq == e->node[n].seq && e->node[f].fw_parent <= 0) {
                forward = 1;
                if (touch_node(c, (long)f, op))
                    return -1;
            }
        if (strstr(e->node[n].name, "CppNode<") ? touch_custom(c, n, d, op)
                                                : !forward && touch_cyclic(c, op))
            return -1;
    }
    return 0;
}

/* The kernels of the step launched while joined operators ran: the ET's iteration. */
static int sub_step(const ctx *c, const ik_step *s, ik_step *sub)
{
    double lo = 1e300, hi = -1e300;
    for (size_t n = 0; n < c->e->nnode; n++) {
        long k = c->e->node[n].kineto;
        if (k >= 0) {
            lo = c->t->op[k].ts < lo ? c->t->op[k].ts : lo;
            hi = c->t->op[k].end > hi ? c->t->op[k].end : hi;
        }
    }
    *sub = *s;
    sub->n = 0;
    sub->kern = malloc(s->n * sizeof(size_t) + 1);
    sub->launch = malloc(s->n * sizeof(double) + 1);
    sub->tid = malloc(s->n * sizeof(int64_t) + 1);
    sub->ext = malloc(s->n * sizeof(int64_t) + 1);
    if (!sub->kern || !sub->launch || !sub->tid || !sub->ext)
        return -1;
    for (size_t i = 0; i < s->n; i++)
        if (s->launch[i] >= lo && s->launch[i] <= hi) {
            sub->kern[sub->n] = s->kern[i], sub->launch[sub->n] = s->launch[i];
            sub->tid[sub->n] = s->tid[i], sub->ext[sub->n++] = s->ext[i];
        }
    return 0;
}

/* One operation reaching a piece through several operands, or through an operator and its
 * ancestors, reads it once: the duplicates of an operation merge into one touch that reads the
 * most any of them reads (the whole when one reads the whole). Sorts the touches by operation. */
static void merge_touches(piece *p)
{
    size_t n = p->touch.n, k = 0;
    for (size_t i = 1; i < n; i++) { /* insertion sort: the lists are short and nearly sorted */
        int32_t t = p->touch.v[i];
        uint64_t r = p->reads[i];
        size_t j = i;
        for (; j > 0 && p->touch.v[j - 1] > t; j--)
            p->touch.v[j] = p->touch.v[j - 1], p->reads[j] = p->reads[j - 1];
        p->touch.v[j] = t, p->reads[j] = r;
    }
    for (size_t i = 0; i < n; i++) {
        if (k && p->touch.v[k - 1] == p->touch.v[i]) {
            uint64_t *r = &p->reads[k - 1];
            *r = !*r || !p->reads[i] ? 0 : *r > p->reads[i] ? *r : p->reads[i];
            continue;
        }
        p->touch.v[k] = p->touch.v[i], p->reads[k++] = p->reads[i];
    }
    p->touch.n = k;
}

/* Says which lookups read rows rather than tables, where a row width is an upper bound, and
 * how many custom autograd nodes were linked to their forward operator. */
static void note_lookups(ctx *c, const import_opts *o)
{
    size_t lookups = 0, guessed = 0, custom = 0, linked = 0;
    for (size_t n = 0; n < c->e->nnode; n++) {
        lookups += c->e->node[n].lookup != IE_LOOKUP_NONE;
        guessed += c->e->node[n].lookup == IE_LOOKUP_GUESSED;
        if (c->e->node[n].fw_parent > 0 && c->e->node[n].seq >= 0 &&
            strstr(c->e->node[n].name, "CppNode<")) {
            custom++;
            linked += touch_forward(c, (long)n, 0, 0) > 0;
        }
    }
    if (lookups)
        import_note(o, c->e->path,
                    "%zu embedding lookups read the rows their indices name (indices x row width), "
                    "not their tables; %zu of them with tables of mixed widths, read at the widest "
                    "row (max_D: an upper bound)",
                    lookups, guessed);
    if (custom)
        import_note(o, c->e->path,
                    "%zu of %zu custom autograd backward nodes (CppNode<...>) linked to their "
                    "forward operator: their own kernels touch what it listed; the others touch "
                    "everything made before the step",
                    linked, custom);
}

static int add_pieces(ctx *c, const import_opts *o, plan_model *m)
{
    note_lookups(c, o);
    size_t left_out = 0;
    for (size_t i = 0; i < c->npc; i++) {
        piece *p = &c->pc[i];
        if ((!p->touch.n && !p->cyclic) || !p->bytes) {
            left_out++;
            continue;
        }
        int32_t lo = p->touch.n ? p->touch.v[0] : 0, hi = lo;
        for (size_t k = 0; k < p->touch.n; k++) {
            lo = p->touch.v[k] < lo ? p->touch.v[k] : lo;
            hi = p->touch.v[k] > hi ? p->touch.v[k] : hi;
        }
        int32_t first = p->cyclic ? 0 : lo, last = p->cyclic ? (int32_t)m->nops - 1 : hi;
        if (p->cyclic)
            lo = hi = PLAN_NO_OP;
        for (int32_t k = first; o->all_touches && k <= last; k++)
            if (touch_piece(p, k, 0))
                return -1;
        merge_touches(p);
        if (plan_model_add_alloc_reads(m, p->bytes, lo, hi, p->touch.v, p->reads, p->touch.n))
            return -1;
    }
    import_note(
        o, c->e->path,
        "%zu storages (%zu allocations), %zu made in the step and used by no kernel left out",
        c->nst, c->npc, left_out);
    return 0;
}

static int build(ctx *c, const ik_step *s, const import_opts *o, plan_model *m, char *msg,
                 size_t cap)
{
    size_t *order = ie_op_order(c->t);
    long *by_op = malloc(c->t->nop * sizeof(long) + 1);
    ik_step sub = {0};
    long joined = -1;
    int rc = -1;
    if (order && by_op && !find_pieces(c) && (assign_pieces(c), 1) &&
        (joined = ie_join(c->e, c->t, s, order)) > 0 && !sub_step(c, s, &sub) && sub.n) {
        for (size_t i = 0; i < c->t->nop; i++)
            by_op[i] = -1;
        for (size_t n = 0; n < c->e->nnode; n++)
            if (c->e->node[n].kineto >= 0)
                by_op[c->e->node[n].kineto] = (long)n;
        size_t with = 0;
        rc = ik_step_ops(c->t, &sub, m, msg, cap);
        for (size_t i = 0; !rc && i < sub.n; i++) {
            long n = ie_node_at(c->t, order, by_op, sub.tid[i], sub.launch[i]);
            with += n >= 0;
            rc = n >= 0 ? touch_op(c, n, (int32_t)i) : 0;
            if (o->join_map)
                fprintf(o->join_map, "%zu %lld\n", i, n >= 0 ? (long long)c->e->node[n].id : -1LL);
        }
        import_note(o, c->e->path,
                    "%ld of %zu nodes joined to Kineto operators; %zu of %zu kernels launched by a "
                    "joined operator",
                    joined, c->e->nnode, with, sub.n);
        rc = rc ? rc : add_pieces(c, o, m);
    }
    if (rc && joined == 0)
        snprintf(msg, cap, "%s: error: no ET node lines up with an operator of %s", c->e->path,
                 c->t->path);
    else if (rc && joined > 0 && sub.kern && !sub.n)
        snprintf(msg, cap, "%s: error: no kernel of %s was launched by the joined operators",
                 c->e->path, c->t->path);
    else if (rc && !*msg)
        snprintf(msg, cap, "%s: error: out of memory, or too large for a model", c->e->path);
    free(order);
    free(by_op);
    ik_step_free(&sub);
    return rc;
}

/* ---- An execution trace alone: its operators are the operations --------------------------- */

/* An execution trace holds no times: each operator is timed at IMPORT_ET_HBM_GBPS (import.h). */
#define ET_ALONE_HBM_GBPS ((double)IMPORT_ET_HBM_GBPS)

/* Operators that launch no kernel: they make views, allocate, or read metadata. A leaf operator
 * with GPU operands that is none of these (and not an autograd node, whose own work is in the
 * operators under it) is taken to launch one kernel. */
static const char *const no_kernel[] = {
    "aten::empty",
    "aten::empty_strided",
    "aten::empty_like",
    "aten::view",
    "aten::_unsafe_view",
    "aten::view_as",
    "aten::as_strided",
    "aten::_reshape_alias",
    "aten::reshape",
    "aten::t",
    "aten::transpose",
    "aten::permute",
    "aten::expand",
    "aten::expand_as",
    "aten::squeeze",
    "aten::unsqueeze",
    "aten::select",
    "aten::slice",
    "aten::narrow",
    "aten::split",
    "aten::split_with_sizes",
    "aten::chunk",
    "aten::unbind",
    "aten::alias",
    "aten::detach",
    "aten::detach_",
    "aten::lift_fresh",
    "aten::result_type",
    "aten::resolve_conj",
    "aten::resolve_neg",
    "aten::record_stream",
    "aten::to",
    "aten::_to_copy_meta",
    "aten::contiguous",
    "aten::resize_",
    "aten::set_",
    "aten::flatten",
    "aten::unflatten",
    "detach",
    "detach_",
};

/* Whether operator n may launch GPU work itself: it has GPU operands, is not one of the
 * operators above, and is not an autograd node (AddBackward0, CppNode<...>), whose work is done
 * by the operators under it; operators have a namespace (aten::, nccl:, ...) or are generated
 * kernels (triton_...). */
static int kernel_like(const ie_node *nd)
{
    if (!nd->nref)
        return 0;
    for (size_t i = 0; i < sizeof no_kernel / sizeof *no_kernel; i++)
        if (!strcmp(nd->name, no_kernel[i]))
            return 0;
    return strchr(nd->name, ':') || !strncmp(nd->name, "triton_", 7);
}

/* Marks in op[] the operators that are operations: kernel-like with no kernel-like operator
 * under them (aten::linear calls aten::addmm, which launches; aten::mm's own child is
 * aten::empty, which does not, so aten::mm launches). Children follow parents in rf order. */
static int mark_ops(const ie_trace *e, unsigned char *op)
{
    unsigned char *below = calloc(e->nnode + 1, 1);
    if (!below)
        return -1;
    for (size_t n = e->nnode; n-- > 0;) {
        op[n] = kernel_like(&e->node[n]) && !below[n];
        long p = e->node[n].parent_ix;
        if (p >= 0 && (op[n] || below[n]))
            below[p] = 1;
    }
    free(below);
    return 0;
}

static int build_alone(ctx *c, const import_opts *o, plan_model *m, char *msg, size_t cap)
{
    ie_trace *e = c->e;
    ie_step_window w;
    c->alone = 1;
    unsigned char *is_op = calloc(e->nnode + 1, 1);
    if (!is_op || mark_ops(e, is_op))
        goto nomem;
    int st = ie_step_pick(e, o, is_op, &w, msg, cap);
    free(is_op);
    is_op = NULL;
    if (st < 0)
        return -1;
    if (st && ie_keep(e, w.lo, w.hi))
        goto nomem;
    if (!st)
        import_note(o, e->path, "no ProfilerStep annotation: the whole trace is one step");
    /* The operations again, of the nodes kept: the step's own. */
    is_op = calloc(e->nnode + 1, 1);
    if (!is_op || mark_ops(e, is_op) || find_pieces(c))
        goto nomem;
    assign_pieces(c);
    uint64_t moved_all = 0;
    for (size_t n = 0; n < e->nnode; n++) {
        if (!is_op[n])
            continue;
        uint64_t moved = 0;
        for (size_t r = e->node[n].ref_first; r < e->node[n].ref_first + e->node[n].nref; r++)
            moved += e->ref[r].moved;
        moved_all += moved;
        int32_t op = (int32_t)m->nops;
        if (plan_model_add_op(m, (double)moved / (ET_ALONE_HBM_GBPS * 1e3), 0) ||
            touch_op(c, (long)n, op))
            goto nomem;
        if (o->join_map)
            fprintf(o->join_map, "%d %lld\n", op, (long long)e->node[n].id);
    }
    free(is_op);
    is_op = NULL;
    if (!m->nops && st) {
        snprintf(msg, cap, "%s: error: no operator in ProfilerStep#%lld has GPU tensor operands%s",
                 e->path, w.num, o->step < 0 ? " (nor in any other step of the trace)" : "");
        return -1;
    }
    if (!m->nops) {
        snprintf(msg, cap, "%s: error: no operator in the step has GPU tensor operands", e->path);
        return -1;
    }
    import_note(
        o, e->path,
        "no Kineto trace: %zu operators with GPU operands are the operations; their times are not "
        "in the trace: each is its operands' %.1f MiB in all at %.0f GB/s (a lower bound)",
        m->nops, (double)moved_all / 1048576.0, ET_ALONE_HBM_GBPS);
    return add_pieces(c, o, m);
nomem:
    free(is_op);
    snprintf(msg, cap, "%s: error: out of memory, or too large for a model", e->path);
    return -1;
}

int import_et(const char *et_path, const char *kineto_path, const import_opts *o, plan_model *m,
              char *msg, size_t cap)
{
    ik_trace t = {0};
    ik_step s = {0};
    ie_trace e = {0};
    ctx c = {.e = &e, .t = &t};
    msg[0] = 0;
    int rc = 0;
    if (kineto_path) {
        rc = ik_load(kineto_path, &t, msg, cap);
        if (!rc)
            rc = ik_step_select(&t, o, &s, msg, cap);
    } else {
        import_default_hw(m);
    }
    if (!rc)
        rc = ie_load(et_path, &e, msg, cap);
    if (!rc)
        rc = kineto_path ? build(&c, &s, o, m, msg, cap) : build_alone(&c, o, m, msg, cap);
    if (!rc)
        rc = import_check(et_path, m, msg, cap);
    for (size_t i = 0; i < c.npc; i++)
        free(c.pc[i].touch.v), free(c.pc[i].reads);
    free(c.pc);
    free(c.st);
    free(c.bp);
    ie_free(&e);
    ik_step_free(&s);
    ik_free(&t);
    return rc;
}
