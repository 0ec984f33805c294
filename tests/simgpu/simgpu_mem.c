/* simgpu_mem.c — the simulated address space: device VA range, physical file, reservations,
 * mappings.
 *
 * Device memory is a reserved PROT_NONE range of the host address space.
 * Physical memory (device- or host-located) is a region of one sparse memfd;
 * mapping a handle maps that region of the file at the device address, so a
 * handle mapped twice shows the same bytes. The whole file is also mapped once
 * at sim.window, through which copies and memsets reach physical bytes without
 * depending on device-range protections. Host-located mappings stay PROT_NONE
 * in the device range: kernels reach them through the zero-copy fault path
 * (simgpu_exec.c), which counts the pages they touch. */
#include "simgpu_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int sim_mem_init(void)
{
    void *va = mmap(NULL, SIM_VA_SIZE + SIM_GRANULE, PROT_NONE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (va == MAP_FAILED)
        return -1;
    sim.va_base = ((uint64_t)(uintptr_t)va + SIM_GRANULE - 1) & ~(SIM_GRANULE - 1);
    sim.phys_fd = memfd_create("simgpu-physical", MFD_CLOEXEC);
    if (sim.phys_fd < 0 || ftruncate(sim.phys_fd, (off_t)SIM_PHYS_MAX) != 0)
        return -1;
    void *w = mmap(NULL, SIM_PHYS_MAX, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
                   sim.phys_fd, 0);
    if (w == MAP_FAILED)
        return -1;
    sim.window = w;
    sim.granule_host = calloc(SIM_VA_SIZE / SIM_GRANULE, 1);
    if (!sim.granule_host)
        return -1;
    /* Device address 0 is never handed out: start one granule in. */
    sim_extents_init(&sim.va_free, sim.va_base + SIM_GRANULE, SIM_VA_SIZE - SIM_GRANULE);
    sim_extents_init(&sim.phys_free, 0, SIM_PHYS_MAX);
    return sim.va_free.v && sim.phys_free.v ? 0 : -1;
}

bool sim_is_device_addr(uint64_t a)
{
    return a >= sim.va_base && a - sim.va_base < SIM_VA_SIZE;
}

struct sim_phys *sim_phys_create(int dev, uint64_t size, bool host, CUresult *rc)
{
    if (!host && sim.dev[dev].bytes + size > sim.dev[dev].capacity) {
        *rc = CUDA_ERROR_OUT_OF_MEMORY;
        return NULL;
    }
    struct sim_phys *p = calloc(1, sizeof *p);
    uint64_t align = size >= SIM_GRANULE ? SIM_GRANULE : SIM_PAGE;
    if (!p || sim_handles_add(&sim.phys_live, p) != 0) {
        free(p);
        *rc = CUDA_ERROR_OUT_OF_MEMORY;
        return NULL;
    }
    if (sim_extents_alloc(&sim.phys_free, size, align, 0, &p->off) != 0) {
        sim_handles_del(&sim.phys_live, p);
        free(p);
        *rc = CUDA_ERROR_OUT_OF_MEMORY;
        return NULL;
    }
    p->size = size;
    p->host = host;
    p->device = dev;
    p->ctx = sim_current_ctx();
    p->handle_refs = 1;
    if (host)
        sim.stats.host_mapped_bytes += size;
    else
        sim_account_device(dev, (int64_t)size);
    *rc = CUDA_SUCCESS;
    return p;
}

bool sim_phys_valid(const struct sim_phys *p)
{
    return sim_handles_has(&sim.phys_live, p) && !p->released;
}

void sim_phys_put(struct sim_phys *p)
{
    if (p->maps > 0 || p->handle_refs > 0)
        return;
    /* Give the pages back to the host; the next owner of the range reads zeros. */
    fallocate(sim.phys_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)p->off,
              (off_t)p->size);
    sim_extents_free(&sim.phys_free, p->off, p->size);
    if (p->host)
        sim.stats.host_mapped_bytes -= p->size;
    else
        sim_account_device(p->device, -(int64_t)p->size);
    sim_handles_del(&sim.phys_live, p);
    free(p);
}

/* The first of n disjoint ranges sorted by address whose end (end(i), exclusive) is above a:
   the one holding a if any holds it, else where a range starting at a goes; n when none. */
static size_t first_ending_above(size_t n, uint64_t (*end)(size_t i), uint64_t a)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (end(mid) <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ---- reservations: sorted array ---- */

static uint64_t resv_end(size_t i)
{
    return sim.resv[i].va + sim.resv[i].size;
}

static size_t resv_lower(uint64_t va)
{
    return first_ending_above(sim.nresv, resv_end, va);
}

CUresult sim_resv_add(uint64_t size, uint64_t align, uint64_t hint, int kind, uint64_t *va)
{
    struct sim_resv *v = sim_grow(sim.resv, &sim.resv_cap, sim.nresv + 1, sizeof *v, 256);
    if (!v)
        return CUDA_ERROR_OUT_OF_MEMORY;
    sim.resv = v;
    if (sim_extents_alloc(&sim.va_free, size, align, hint, va) != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    size_t i = resv_lower(*va);
    memmove(&sim.resv[i + 1], &sim.resv[i], (sim.nresv - i) * sizeof *sim.resv);
    sim.resv[i] = (struct sim_resv){.va = *va, .size = size, .kind = kind};
    sim.nresv++;
    return CUDA_SUCCESS;
}

struct sim_resv *sim_resv_containing(uint64_t va)
{
    size_t i = resv_lower(va);
    if (i < sim.nresv && sim.resv[i].va <= va)
        return &sim.resv[i];
    return NULL;
}

struct sim_resv *sim_resv_find(uint64_t va)
{
    struct sim_resv *r = sim_resv_containing(va);
    return r && r->va == va ? r : NULL;
}

void sim_resv_remove(struct sim_resv *r)
{
    sim_extents_free(&sim.va_free, r->va, r->size);
    size_t i = (size_t)(r - sim.resv);
    memmove(&sim.resv[i], &sim.resv[i + 1], (sim.nresv - i - 1) * sizeof *sim.resv);
    sim.nresv--;
}

/* ---- mappings: sorted array ---- */

static uint64_t map_end(size_t i)
{
    return sim.maps[i].va + sim.maps[i].size;
}

size_t sim_map_lower(uint64_t va)
{
    return first_ending_above(sim.nmaps, map_end, va);
}

struct sim_map *sim_map_containing(uint64_t va)
{
    size_t i = sim_map_lower(va);
    return i < sim.nmaps && sim.maps[i].va <= va ? &sim.maps[i] : NULL;
}

int sim_map_host_prot(const struct sim_map *m)
{
    if (m->phys->host || m->prot == CU_MEM_ACCESS_FLAGS_PROT_NONE)
        return PROT_NONE; /* host-located: reached through the fault path */
    return m->prot == CU_MEM_ACCESS_FLAGS_PROT_READ ? PROT_READ : PROT_READ | PROT_WRITE;
}

static void set_granules(const struct sim_map *m, unsigned char value)
{
    if (!m->phys->host)
        return;
    for (uint64_t g = m->va; g < m->va + m->size; g += SIM_GRANULE)
        atomic_store(&sim.granule_host[(g - sim.va_base) / SIM_GRANULE], value);
}

static int apply_mapping(const struct sim_map *m)
{
    void *r = mmap((void *)(uintptr_t)m->va, m->size, sim_map_host_prot(m), MAP_SHARED | MAP_FIXED,
                   sim.phys_fd, (off_t)(m->phys->off + m->phys_off));
    if (r == MAP_FAILED)
        return -1;
    set_granules(m, (unsigned char)m->prot);
    return 0;
}

static int grow_maps(size_t extra)
{
    struct sim_map *v = sim_grow(sim.maps, &sim.map_cap, sim.nmaps + extra, sizeof *v, 256);
    if (!v)
        return -1;
    sim.maps = v;
    return 0;
}

CUresult sim_map_add(uint64_t va, uint64_t size, struct sim_phys *p, uint64_t off, int prot)
{
    if (grow_maps(1) != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    size_t i = sim_map_lower(va);
    if (i < sim.nmaps && sim.maps[i].va < va + size)
        return CUDA_ERROR_INVALID_VALUE; /* overlaps a mapping */
    /* ready_vt 0: the VMM call that made it says when it became accessible */
    struct sim_map m = {va, size, p, off, prot, ++sim.next_map_id, 0};
    if (apply_mapping(&m) != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    memmove(&sim.maps[i + 1], &sim.maps[i], (sim.nmaps - i) * sizeof *sim.maps);
    sim.maps[i] = m;
    sim.nmaps++;
    p->maps++;
    return CUDA_SUCCESS;
}

void sim_map_remove_at(size_t i)
{
    struct sim_map m = sim.maps[i];
    set_granules(&m, 0);
    mmap((void *)(uintptr_t)m.va, m.size, PROT_NONE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    memmove(&sim.maps[i], &sim.maps[i + 1], (sim.nmaps - i - 1) * sizeof *sim.maps);
    sim.nmaps--;
    m.phys->maps--;
    sim_phys_put(m.phys);
}

bool sim_map_whole(uint64_t va, uint64_t size)
{
    size_t i = sim_map_lower(va), j = i;
    uint64_t a = va;
    for (; a < va + size; j++) {
        if (j >= sim.nmaps || sim.maps[j].va != a || sim.maps[j].size > va + size - a)
            return false;
        a += sim.maps[j].size;
    }
    /* Pieces of one cuMemMap are adjacent in the sorted array. */
    bool cut_before = i > 0 && sim.maps[i - 1].id == sim.maps[i].id;
    bool cut_after = j < sim.nmaps && sim.maps[j].id == sim.maps[j - 1].id;
    return !cut_before && !cut_after;
}

/* Splits the mapping containing va so that one starts exactly at va. */
static int split_at(uint64_t va)
{
    struct sim_map *m = sim_map_containing(va);
    if (!m || m->va == va)
        return 0;
    if (grow_maps(1) != 0)
        return -1;
    m = sim_map_containing(va);
    size_t i = (size_t)(m - sim.maps);
    struct sim_map right = *m;
    right.va = va;
    right.size = m->va + m->size - va;
    right.phys_off += va - m->va;
    m->size = va - m->va;
    memmove(&sim.maps[i + 2], &sim.maps[i + 1], (sim.nmaps - i - 1) * sizeof *sim.maps);
    sim.maps[i + 1] = right;
    sim.nmaps++;
    right.phys->maps++;
    return 0;
}

CUresult sim_map_set_prot(uint64_t va, uint64_t size, int prot)
{
    /* The whole range must be mapped, without holes. */
    uint64_t a = va;
    for (size_t i = sim_map_lower(va); a < va + size; i++) {
        if (i >= sim.nmaps || sim.maps[i].va > a)
            return CUDA_ERROR_INVALID_VALUE;
        a = sim.maps[i].va + sim.maps[i].size;
    }
    if (split_at(va) != 0 || split_at(va + size) != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t i = sim_map_lower(va); i < sim.nmaps && sim.maps[i].va < va + size; i++) {
        sim.maps[i].prot = prot;
        struct sim_map *m = &sim.maps[i];
        if (mprotect((void *)(uintptr_t)m->va, m->size, sim_map_host_prot(m)) != 0)
            return CUDA_ERROR_UNKNOWN;
        set_granules(m, (unsigned char)prot);
    }
    return CUDA_SUCCESS;
}

unsigned char *sim_translate(uint64_t va, uint64_t *len, bool write)
{
    struct sim_map *m = sim_map_containing(va);
    if (!m || m->prot == CU_MEM_ACCESS_FLAGS_PROT_NONE ||
        (write && m->prot != CU_MEM_ACCESS_FLAGS_PROT_READWRITE))
        return NULL;
    uint64_t room = m->va + m->size - va;
    if (*len > room)
        *len = room;
    return sim.window + m->phys->off + m->phys_off + (va - m->va);
}

/* ---- pinned host memory: sorted array of [lo, hi) ---- */

static uint64_t pinned_end(size_t i)
{
    return sim.pinned[i].hi;
}

static size_t pinned_lower(uintptr_t p)
{
    return first_ending_above(sim.npinned, pinned_end, p);
}

struct sim_pinned *sim_pinned_find(uintptr_t p)
{
    size_t i = pinned_lower(p);
    return i < sim.npinned && sim.pinned[i].lo <= p ? &sim.pinned[i] : NULL;
}

int sim_pinned_add(uintptr_t lo, uintptr_t hi, bool registered)
{
    struct sim_pinned *v = sim_grow(sim.pinned, &sim.pinned_cap, sim.npinned + 1, sizeof *v, 64);
    if (!v)
        return -1;
    sim.pinned = v;
    size_t i = pinned_lower(lo);
    if (i < sim.npinned && sim.pinned[i].lo < hi)
        return -1; /* overlaps */
    memmove(&sim.pinned[i + 1], &sim.pinned[i], (sim.npinned - i) * sizeof *sim.pinned);
    sim.pinned[i] = (struct sim_pinned){lo, hi, registered};
    sim.npinned++;
    return 0;
}

void sim_pinned_remove(struct sim_pinned *p)
{
    size_t i = (size_t)(p - sim.pinned);
    memmove(&sim.pinned[i], &sim.pinned[i + 1], (sim.npinned - i - 1) * sizeof *sim.pinned);
    sim.npinned--;
}
