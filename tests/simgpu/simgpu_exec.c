/* simgpu_exec.c — the data work of commands, run by stream workers without the lock.
 *
 * With several devices, a kernel runs while the device-located memory of every
 * device its own has no peer access to is made inaccessible (simgpu_devices.c),
 * so touching it is an illegal address as well.
 * Kernels run one at a time (the compute engine is serial) under a SIGSEGV /
 * SIGBUS handler. A fault inside a host-located, accessible mapping is a
 * zero-copy access: the page is opened for the rest of the kernel and counted
 * (its link time is added to the kernel's cost). Any other fault makes the
 * kernel fail with a sticky CUDA_ERROR_ILLEGAL_ADDRESS, as on a device, instead
 * of crashing the process. After the kernel, opened granules are closed again. */
#include "simgpu_internal.h"

#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define ZC_MAX_PAGE_GRANTS 8192
#define PAGES_PER_GRANULE  (SIM_GRANULE / SIM_PAGE)
#define ZC_GRANULES        (SIM_VA_SIZE / SIM_GRANULE)

/* Zero-copy state of the running kernel; owned by the compute engine. Indexed by the granule's
   place in the device range, for every granule of it: a kernel may read any amount of
   host-located memory through the link (nothing in the VMM documentation bounds it; an earlier
   table of 256 granules made a kernel reading more than 512 MiB of host memory an illegal
   access). Allocated once at start, since grants happen in the signal handler. */
static struct {
    uint64_t *used;                           /* granules opened by this kernel, in order */
    uint64_t (*bits)[PAGES_PER_GRANULE / 64]; /* per granule: its pages opened */
    uint64_t nused, pages, grants;
} zc;

static bool granule_unopened(uint64_t g)
{
    for (uint64_t i = 0; i < PAGES_PER_GRANULE / 64; i++)
        if (zc.bits[g][i])
            return false;
    return true;
}

static __thread sigjmp_buf *kernel_jmp;
static __thread uint64_t fault_addr;
static struct sigaction prev_segv, prev_bus;

static void chain(int sig, siginfo_t *si, void *uc)
{
    struct sigaction *p = sig == SIGBUS ? &prev_bus : &prev_segv;
    if (p->sa_flags & SA_SIGINFO && p->sa_sigaction) {
        p->sa_sigaction(sig, si, uc);
        return;
    }
    if (p->sa_handler != SIG_IGN && p->sa_handler != SIG_DFL) {
        p->sa_handler(sig);
        return;
    }
    signal(sig, SIG_DFL); /* re-executing the access now kills with the default action */
}

/* Opens the page (or, past the page budget, the granule) for this kernel. */
static bool zero_copy_grant(uint64_t addr, unsigned prot)
{
    uint64_t g = (addr - sim.va_base) / SIM_GRANULE;
    if (!zc.bits || g >= ZC_GRANULES)
        return false;
    bool fresh = granule_unopened(g);
    uint64_t page = (addr - sim.va_base) % SIM_GRANULE / SIM_PAGE;
    if (zc.bits[g][page / 64] & (1ull << (page % 64)))
        return false; /* already open: this access needs more than was granted */
    int p = prot == CU_MEM_ACCESS_FLAGS_PROT_READ ? PROT_READ : PROT_READ | PROT_WRITE;
    uint64_t gbase = sim.va_base + g * SIM_GRANULE;
    if (zc.grants >= ZC_MAX_PAGE_GRANTS) {
        /* Bound the number of memory areas: open the whole granule and count
           all its pages as touched (an over-estimate, documented). */
        if (mprotect((void *)(uintptr_t)gbase, SIM_GRANULE, p) != 0)
            return false;
        for (uint64_t i = 0; i < PAGES_PER_GRANULE / 64; i++) {
            zc.pages += 64 - (uint64_t)__builtin_popcountll(zc.bits[g][i]);
            zc.bits[g][i] = ~0ull;
        }
    } else {
        if (mprotect((void *)(uintptr_t)(gbase + page * SIM_PAGE), SIM_PAGE, p) != 0)
            return false;
        zc.bits[g][page / 64] |= 1ull << (page % 64);
        zc.pages++;
        zc.grants++;
    }
    if (fresh)
        zc.used[zc.nused++] = g;
    return true;
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
    if (!kernel_jmp) {
        chain(sig, si, uc);
        return;
    }
    uint64_t a = (uint64_t)(uintptr_t)si->si_addr;
    if (sim_is_device_addr(a)) {
        unsigned prot = atomic_load(&sim.granule_host[(a - sim.va_base) / SIM_GRANULE]);
        if (prot != CU_MEM_ACCESS_FLAGS_PROT_NONE && zero_copy_grant(a, prot))
            return; /* retry the access */
    }
    fault_addr = a;
    siglongjmp(*kernel_jmp, 1);
}

/* Installs on_fault for sig unless it is already there, remembering the
   handler it displaces (to chain faults that are not a kernel's). */
static int arm(int sig, struct sigaction *prev)
{
    struct sigaction cur, sa;
    if (sigaction(sig, NULL, &cur) != 0)
        return -1;
    if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_fault)
        return 0;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    *prev = cur;
    return sigaction(sig, &sa, NULL);
}

/* Host programs and test frameworks install their own SIGSEGV handlers after
   the driver starts (Python's faulthandler, cmocka around each test): the
   handler is re-armed before every kernel. Kernels run one at a time, so
   prev_segv / prev_bus are only written by the running kernel's worker. */
static int faults_arm(void)
{
    return arm(SIGSEGV, &prev_segv) == 0 && arm(SIGBUS, &prev_bus) == 0 ? 0 : -1;
}

int sim_faults_init(void)
{
    if (!zc.bits) {
        zc.used = calloc(ZC_GRANULES, sizeof *zc.used);
        zc.bits = calloc(ZC_GRANULES, sizeof *zc.bits); /* pages are committed as used */
        if (!zc.used || !zc.bits) {
            free(zc.used), free(zc.bits);
            zc.used = NULL, zc.bits = NULL;
            return -1;
        }
    }
    return faults_arm();
}

/* Closes the granules the kernel opened and forgets them. */
static void zero_copy_close(void)
{
    for (uint64_t i = 0; i < zc.nused; i++) {
        uint64_t g = zc.used[i];
        if (atomic_load(&sim.granule_host[g]) != CU_MEM_ACCESS_FLAGS_PROT_NONE)
            mprotect((void *)(uintptr_t)(sim.va_base + g * SIM_GRANULE), SIM_GRANULE, PROT_NONE);
        memset(zc.bits[g], 0, sizeof zc.bits[g]);
    }
    zc.nused = 0;
}

/* Runs the body; returns true if it faulted outside what it may touch. */
static bool call_body(const struct sim_func *f, void **params)
{
    sigjmp_buf jb;
    if (sigsetjmp(jb, 1) != 0) {
        kernel_jmp = NULL;
        return true;
    }
    kernel_jmp = &jb;
    f->body(params);
    kernel_jmp = NULL;
    return false;
}

static double run_kernel(struct sim_cmd *c)
{
    struct sim_func *f = c->u.k.fn;
    void *params[SIM_MAX_PARAMS];
    for (int i = 0; i < f->nparams; i++)
        params[i] = c->u.k.params + f->offsets[i];
    zc.pages = zc.grants = 0;
    faults_arm();
    bool illegal = call_body(f, params);
    zero_copy_close();
    double link_us = (double)(zc.pages * SIM_PAGE) / (sim.h2d_gbps * 1e3);
    pthread_mutex_lock(&sim.lock);
    sim.stats.kernels++;
    sim.dev[c->stream->device].kernels++;
    if (zc.pages) {
        sim.stats.zero_copy_kernels++;
        sim.stats.zero_copy_pages += zc.pages;
    }
    if (illegal) {
        sim.stats.illegal_accesses++;
        if (sim.sticky == CUDA_SUCCESS)
            sim.sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
        sim_diag("kernel '%s' on device %d touched 0x%llx, which is not mapped for it (or is "
                 "another device's memory without peer access): illegal address (sticky)",
                 f->name, c->stream->device, (unsigned long long)fault_addr);
    }
    pthread_mutex_unlock(&sim.lock);
    return c->u.k.cost_us + link_us;
}

/* One contiguous piece of a copy endpoint; NULL if not mapped for the access. */
static unsigned char *piece(struct sim_ptr p, size_t done, uint64_t *len, bool write)
{
    if (!p.dev)
        return (unsigned char *)(uintptr_t)p.addr + done;
    return sim_translate(p.addr + done, len, write);
}

static void illegal_copy(const char *what, uint64_t addr)
{
    sim.stats.illegal_accesses++;
    if (sim.sticky == CUDA_SUCCESS)
        sim.sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
    sim_diag("%s reached 0x%llx, which is not mapped: illegal address (sticky)", what,
             (unsigned long long)addr);
}

static double copy_cost(const struct sim_cmd *c)
{
    double bytes = (double)c->u.c.bytes;
    switch (c->engine) {
    case ENG_H2D:
        return bytes / (sim.h2d_gbps * 1e3);
    case ENG_D2H:
        return bytes / (sim.d2h_gbps * 1e3);
    case ENG_COMPUTE:
        return 2 * bytes / (sim.dev_gbps * 1e3);
    case ENG_PEER:
        return bytes / (sim.peer_gbps * 1e3);
    default:
        return 0; /* host to host: no device engine */
    }
}

static double run_copy(struct sim_cmd *c)
{
    struct sim_ptr src = c->u.c.src;
    if (c->u.c.staging)
        src = (struct sim_ptr){false, (uint64_t)(uintptr_t)c->u.c.staging};
    size_t done = 0;
    while (done < c->u.c.bytes) {
        uint64_t n = c->u.c.bytes - done, m = n;
        pthread_mutex_lock(&sim.lock);
        unsigned char *d = piece(c->u.c.dst, done, &n, true);
        unsigned char *s = piece(src, done, &m, false);
        if (!d || !s) {
            illegal_copy("copy", !d ? c->u.c.dst.addr + done : src.addr + done);
            pthread_mutex_unlock(&sim.lock);
            break;
        }
        pthread_mutex_unlock(&sim.lock);
        size_t k = n < m ? n : m;
        memmove(d, s, k);
        done += k;
    }
    pthread_mutex_lock(&sim.lock);
    sim.stats.copies++;
    uint64_t *dir = c->engine == ENG_H2D       ? &sim.stats.bytes_h2d
                    : c->engine == ENG_D2H     ? &sim.stats.bytes_d2h
                    : c->engine == ENG_COMPUTE ? &sim.stats.bytes_d2d
                    : c->engine == ENG_PEER    ? &sim.stats.bytes_peer
                                               : NULL;
    if (dir)
        *dir += done;
    pthread_mutex_unlock(&sim.lock);
    return copy_cost(c);
}

static double run_memset(struct sim_cmd *c)
{
    size_t total = c->u.m.count * (size_t)c->u.m.elem, done = 0;
    while (done < total) {
        uint64_t n = total - done;
        pthread_mutex_lock(&sim.lock);
        unsigned char *d = sim_translate(c->u.m.dst + done, &n, true);
        if (!d)
            illegal_copy("memset", c->u.m.dst + done);
        pthread_mutex_unlock(&sim.lock);
        if (!d)
            break;
        if (c->u.m.elem == 1) {
            memset(d, (int)(c->u.m.value & 0xff), n);
        } else {
            for (size_t i = 0; i < n; i += 4) /* 4-byte pieces never straddle mappings */
                memcpy(d + i, &c->u.m.value, 4);
        }
        done += n;
    }
    /* Bytes written to host-located memory cross the link (see simgpu_copy.c). */
    uint64_t host = c->u.m.host_bytes;
    return (double)(total - host) / (sim.dev_gbps * 1e3) + (double)host / (sim.h2d_gbps * 1e3);
}

double sim_exec(struct sim_cmd *c)
{
    if (c->kind == CMD_FREE) {
        pthread_mutex_lock(&sim.lock);
        sim_release_async(c->u.f.ptr, c->u.f.gen);
        pthread_mutex_unlock(&sim.lock);
        return 0;
    }
    if (c->kind == CMD_HOSTFN) {
        c->u.h.fn(c->u.h.data);
        return 0;
    }
    /* After a sticky error the device executes nothing more. */
    pthread_mutex_lock(&sim.lock);
    bool dead = sim.sticky != CUDA_SUCCESS;
    pthread_mutex_unlock(&sim.lock);
    if (dead)
        return 0;
    switch (c->kind) {
    case CMD_KERNEL:
        return run_kernel(c);
    case CMD_COPY:
        return run_copy(c);
    case CMD_MEMSET:
        return run_memset(c);
    default:
        return 0;
    }
}
