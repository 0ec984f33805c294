/* simgpu_copy.c — copies and memsets: classification, host-memory semantics, submission.
 *
 * Engines follow where the bytes physically live, not the kind of address: a
 * device address mapped to host-located physical memory (cuMemCreate with a
 * HOST / HOST_NUMA location) is a host end, as on a device whose copy crosses
 * the host link. Device-located to host-located is device-to-host (the D2H
 * copy engine at SIMGPU_D2H_GBPS, counted in bytes_d2h), host to device is
 * host-to-device (H2D engine, SIMGPU_H2D_GBPS, bytes_h2d), device to device runs
 * on the compute engine at SIMGPU_DEVICE_GBPS (a copy reads and writes, so it
 * counts twice; bytes_d2d), and host to host uses no device engine and takes no
 * device time. Between two devices (unified addressing tells them apart, as
 * cuMemcpy's "the type of memory is inferred from the pointer values" in cuda.h)
 * it is a peer copy: the stream's device's peer queue at SIMGPU_PEER_GBPS, in
 * bytes_peer; it needs no peer access (cuMemcpyPeer, cuda.h: "Copies from
 * device memory in one context to device memory in another context"). A copy whose ends change
 * location part-way (a range spanning mappings of both kinds) is split into one command per run of
 * bytes with one classification, submitted back to back on the stream. Memsets run on the compute
 * engine; the bytes they write to host-located memory cost link time at SIMGPU_H2D_GBPS instead of
 * device bandwidth, as a kernel's zero-copy writes do (they are not counted as copied bytes).
 *
 * Host memory semantics follow the real driver: an asynchronous copy from
 * pageable memory snapshots the source before it returns, an asynchronous copy
 * into pageable memory is synchronous, pinned memory is read and written when
 * the copy runs. */
#include "simgpu_internal.h"

#include <stdlib.h>
#include <string.h>

struct sim_ptr sim_ptr_of(uint64_t addr)
{
    return (struct sim_ptr){sim_is_device_addr(addr), addr};
}

CUresult sim_sticky(void)
{
    return sim.sticky;
}

/* Whether [addr, addr+n) is mapped with the access; lock held. */
static bool mapped(uint64_t addr, size_t n, bool write)
{
    size_t done = 0;
    while (done < n) {
        uint64_t len = n - done;
        if (!sim_translate(addr + done, &len, write))
            return false;
        done += len;
    }
    return true;
}

/* Where the bytes of end p at offset off live: the ordinal of the device for a
   device address backed by device-located memory, else -1 (host). Shortens
   *len to the piece that lives in one place. Lock held; the range was checked
   mapped. */
static int located(struct sim_ptr p, uint64_t off, uint64_t *len)
{
    if (!p.dev)
        return -1;
    const struct sim_map *m = sim_map_containing(p.addr + off);
    uint64_t room = m->va + m->size - (p.addr + off);
    if (*len > room)
        *len = room;
    return m->phys->host ? -1 : m->phys->device;
}

static bool on_device(struct sim_ptr p, uint64_t off, uint64_t *len)
{
    return located(p, off, len) >= 0;
}

static int engine_of(int dst_at, int src_at)
{
    if (dst_at >= 0 && src_at >= 0)
        return dst_at == src_at ? ENG_COMPUTE : ENG_PEER;
    if (dst_at >= 0)
        return ENG_H2D;
    return src_at >= 0 ? ENG_D2H : ENG_NONE;
}

/* A command copying [off, off+len) of the copy; NULL if memory is exhausted. */
static struct sim_cmd *copy_cmd(struct sim_ptr dst, struct sim_ptr src, uint64_t off, uint64_t len,
                                int engine, bool stage)
{
    struct sim_cmd *c = sim_cmd_new(CMD_COPY, engine);
    if (!c)
        return NULL;
    c->u.c.dst = (struct sim_ptr){dst.dev, dst.addr + off};
    c->u.c.src = (struct sim_ptr){src.dev, src.addr + off};
    c->u.c.bytes = len;
    if (stage) {
        c->u.c.staging = malloc(len);
        if (!c->u.c.staging) {
            sim_cmd_unref(c);
            return NULL;
        }
        memcpy(c->u.c.staging, (const void *)(uintptr_t)(src.addr + off), len);
    }
    return c;
}

static void drop_list(struct sim_cmd *c)
{
    while (c) {
        struct sim_cmd *next = c->next;
        sim_cmd_unref(c);
        c = next;
    }
}

/* Length of the run of bytes from off on in which each end stays in one
   place; its engine in *engine. */
static uint64_t run_at(struct sim_ptr dst, struct sim_ptr src, uint64_t off, uint64_t n,
                       int *engine)
{
    uint64_t end = off;
    do {
        uint64_t piece = n - end;
        int d = located(dst, end, &piece), s = located(src, end, &piece);
        if (end > off && engine_of(d, s) != *engine)
            break;
        *engine = engine_of(d, s);
        end += piece;
    } while (end < n);
    return end - off;
}

/* The commands of a copy, chained through next: one per run. Returns the
   head, or NULL if memory is exhausted (nothing is left allocated). */
static struct sim_cmd *copy_runs(struct sim_ptr dst, struct sim_ptr src, size_t n, bool stage)
{
    struct sim_cmd *head = NULL, **link = &head;
    for (uint64_t off = 0, len; off < n; off += len) {
        int engine = ENG_NONE;
        len = run_at(dst, src, off, n, &engine);
        struct sim_cmd *c = copy_cmd(dst, src, off, len, engine, stage);
        if (!c) {
            drop_list(head);
            return NULL;
        }
        *link = c;
        link = &c->next;
    }
    return head;
}

/* Submits the chained commands in order; waits for the last one when wait.
   Takes ownership of the chain. */
static CUresult submit_list(struct sim_stream *s, struct sim_cmd *c, bool wait)
{
    CUresult rc = CUDA_SUCCESS;
    while (c) {
        struct sim_cmd *next = c->next;
        c->next = NULL;
        if (rc != CUDA_SUCCESS) {
            sim_cmd_unref(c);
        } else if (wait && !next) {
            sim_cmd_ref(c);
            rc = sim_submit(s, c);
            if (rc == CUDA_SUCCESS)
                sim_host_wait(c);
            sim_cmd_unref(c);
        } else {
            rc = sim_submit(s, c);
        }
        c = next;
    }
    return rc;
}

CUresult sim_copy(struct sim_stream *s, struct sim_ptr dst, struct sim_ptr src, size_t n,
                  bool async)
{
    if ((dst.dev && !mapped(dst.addr, n, true)) || (src.dev && !mapped(src.addr, n, false)) ||
        (!dst.dev && !dst.addr) || (!src.dev && !src.addr))
        return CUDA_ERROR_INVALID_VALUE;
    if (n == 0)
        return CUDA_SUCCESS;
    bool pageable_src = !src.dev && !sim_pinned_find((uintptr_t)src.addr);
    bool pageable_dst = !dst.dev && !sim_pinned_find((uintptr_t)dst.addr);
    struct sim_cmd *cmds = copy_runs(dst, src, n, async && pageable_src && !s->capture);
    if (!cmds)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult rc = submit_list(s, cmds, (!async || pageable_dst) && !s->capture);
    return rc == CUDA_SUCCESS ? sim_sticky() : rc;
}

/* Bytes of [dst, dst+n) backed by host-located memory; lock held, range mapped. */
static uint64_t host_bytes(uint64_t dst, uint64_t n)
{
    uint64_t host = 0;
    for (uint64_t off = 0, len; off < n; off += len) {
        len = n - off;
        if (!on_device((struct sim_ptr){true, dst}, off, &len))
            host += len;
    }
    return host;
}

CUresult sim_memset(struct sim_stream *s, uint64_t dst, uint32_t value, int elem, size_t count,
                    bool async)
{
    if (!sim_is_device_addr(dst) || !mapped(dst, count * (size_t)elem, true) ||
        (elem == 4 && dst % 4))
        return CUDA_ERROR_INVALID_VALUE;
    if (count == 0)
        return CUDA_SUCCESS;
    struct sim_cmd *c = sim_cmd_new(CMD_MEMSET, ENG_COMPUTE);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    c->u.m.dst = dst;
    c->u.m.value = elem == 1 ? (value & 0xff) * 0x01010101u : value;
    c->u.m.elem = elem;
    c->u.m.count = count;
    c->u.m.host_bytes = host_bytes(dst, count * (size_t)elem);
    (void)async; /* memsets are asynchronous to the host either way, as documented */
    return sim_submit(s, c);
}

CUresult sim_api_copy(uint64_t dst, uint64_t src, size_t n, CUstream h, bool per_thread, bool async)
{
    SIM_NEED(sim_need_ctx);
    pthread_mutex_lock(&sim.lock);
    struct sim_stream *s = sim_stream_for_work(h, per_thread, &rc);
    if (rc == CUDA_SUCCESS)
        rc = sim_copy(s, sim_ptr_of(dst), sim_ptr_of(src), n, async);
    pthread_mutex_unlock(&sim.lock);
    return rc;
}

CUresult sim_api_memset(uint64_t dst, uint32_t value, int elem, size_t count, CUstream h,
                        bool per_thread, bool async)
{
    SIM_NEED(sim_need_ctx);
    pthread_mutex_lock(&sim.lock);
    struct sim_stream *s = sim_stream_for_work(h, per_thread, &rc);
    if (rc == CUDA_SUCCESS)
        rc = sim_memset(s, dst, value, elem, count, async);
    pthread_mutex_unlock(&sim.lock);
    return rc;
}
