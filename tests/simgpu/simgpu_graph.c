/* simgpu_graph.c — stream capture into graphs, instantiation and replay.
 *
 * A captured graph is the sequence of commands submitted to the capturing
 * stream, replayed in order on the launch stream. Event records and waits
 * inside a capture are not replayed (single-stream capture); memory allocated
 * with cuMemAllocAsync during a capture stays allocated (graph-owned), and a
 * cuMemFreeAsync during a capture is not replayed. */
#include "simgpu_internal.h"

#include <stdlib.h>
#include <string.h>

static struct sim_graph *graph_new(bool exec)
{
    struct sim_graph *g = calloc(1, sizeof *g);
    if (g && sim_handles_add(&sim.graphs_live, g) != 0) {
        free(g);
        return NULL;
    }
    if (g)
        g->exec = exec;
    return g;
}

static struct sim_graph *graph_of(void *h, bool exec)
{
    struct sim_graph *g = h;
    return sim_handles_has(&sim.graphs_live, g) && g->exec == exec ? g : NULL;
}

static void graph_free(struct sim_graph *g)
{
    for (size_t i = 0; i < g->n; i++)
        sim_cmd_unref(g->nodes[i]);
    free(g->nodes);
    sim_handles_del(&sim.graphs_live, g);
    free(g);
}

static int graph_push(struct sim_graph *g, struct sim_cmd *c)
{
    struct sim_cmd **v = sim_grow(g->nodes, &g->cap, g->n + 1, sizeof *v, 16);
    if (!v)
        return -1;
    g->nodes = v;
    g->nodes[g->n++] = c;
    return 0;
}

/* A fresh, unsubmitted copy of a command template. */
static struct sim_cmd *clone_cmd(const struct sim_cmd *t)
{
    struct sim_cmd *c = sim_cmd_new(t->kind, t->engine);
    if (!c)
        return NULL;
    c->u = t->u;
    if (t->kind == CMD_COPY)
        c->u.c.staging = NULL;
    if (t->kind == CMD_KERNEL) {
        size_t n = t->u.k.fn->total ? t->u.k.fn->total : 8;
        c->u.k.params = malloc(n);
        if (!c->u.k.params) {
            free(c);
            return NULL;
        }
        memcpy(c->u.k.params, t->u.k.params, n);
    }
    return c;
}

CUresult sim_capture_begin(struct sim_stream *s, CUstreamCaptureMode mode)
{
    (void)mode;
    if (s->capture)
        return CUDA_ERROR_ILLEGAL_STATE;
    s->capture = graph_new(false);
    if (!s->capture)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->capture_id = ++sim.next_capture_id;
    return CUDA_SUCCESS;
}

CUresult sim_capture_end(struct sim_stream *s, CUgraph *g)
{
    if (!s->capture)
        return CUDA_ERROR_ILLEGAL_STATE;
    *g = (CUgraph)s->capture;
    s->capture = NULL;
    return CUDA_SUCCESS;
}

CUresult sim_capture_status(struct sim_stream *s, CUstreamCaptureStatus *st, cuuint64_t *id,
                            CUgraph *g)
{
    *st = s->capture ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    if (id)
        *id = s->capture ? s->capture_id : 0;
    if (g)
        *g = (CUgraph)s->capture;
    return CUDA_SUCCESS;
}

CUresult sim_capture_append(struct sim_stream *s, struct sim_cmd *c)
{
    if (c->kind == CMD_FREE || c->kind == CMD_MARK) {
        sim_cmd_unref(c);
        return CUDA_SUCCESS;
    }
    if (graph_push(s->capture, c) != 0) {
        sim_cmd_unref(c);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *out, CUgraph h, unsigned long long flags)
{
    SIM_ENTER(cuGraphInstantiateWithFlags);
    (void)flags;
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim.lock);
    struct sim_graph *g = graph_of(h, false), *e = NULL;
    CUresult rc = g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (g && !(e = graph_new(true)))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; rc == CUDA_SUCCESS && i < g->n; i++) {
        struct sim_cmd *c = clone_cmd(g->nodes[i]);
        if (!c || graph_push(e, c) != 0) {
            if (c)
                sim_cmd_unref(c);
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        }
    }
    if (rc == CUDA_SUCCESS)
        *out = (CUgraphExec)e;
    else if (e)
        graph_free(e);
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

CUresult sim_api_graph_launch(CUgraphExec h, CUstream stream, bool per_thread)
{
    SIM_NEED(sim_need_ctx);
    pthread_mutex_lock(&sim.lock);
    struct sim_graph *e = graph_of(h, true);
    struct sim_stream *s = sim_stream_get(stream, per_thread, &rc);
    if (rc == CUDA_SUCCESS && !e)
        rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        rc = sim_sticky();
    if (rc == CUDA_SUCCESS)
        sim_host_launch(); /* one launch of the host's, however many kernels the graph holds */
    for (size_t i = 0; rc == CUDA_SUCCESS && i < e->n; i++) {
        struct sim_cmd *c = clone_cmd(e->nodes[i]);
        rc = c ? sim_submit(s, c) : CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

/* Body of cuGraphDestroy (exec false) and cuGraphExecDestroy (exec true). */
static CUresult destroy(void *h, bool exec)
{
    pthread_mutex_lock(&sim.lock);
    struct sim_graph *g = graph_of(h, exec);
    if (g)
        graph_free(g);
    pthread_mutex_unlock(&sim.lock);
    return g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Destroys a graph, or an instantiated one (exec): CUDA_ERROR_INVALID_VALUE for neither. */
SIM_TWIN_ENTRIES(exec, cuGraphDestroy, (CUgraph h), cuGraphExecDestroy, (CUgraphExec h),
                 destroy(h, exec))
