/* fake_driver.c — a fake of the residency manager's driver seam (struct resid_driver) for unit
 * tests: physical memory is host memory per handle, mappings are a table, copies happen at
 * once, events complete at once unless held, and any entry can be made to fail on its Nth
 * call (once or from then on). See fake_driver.h. */
#include "fake_driver.h"
#include "shim_resid_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_HANDLES 512
#define MAX_MAPS    2048

struct fake_handle {
    bool live, host;
    uint8_t *mem;
};
struct fake_map {
    CUdeviceptr va;
    size_t size;
    unsigned handle;
};
struct fake_event {
    bool recorded, done;
};

static struct fake_handle handles[MAX_HANDLES + 1];
static struct fake_map maps[MAX_MAPS];
static size_t nmaps;
static CUdeviceptr next_va = 0x10000000000ull;
struct fake_stats fake;

#define MAX_RULES 4
static struct rule {
    char entry[32];
    unsigned long nth, calls;
    bool sticky;
    CUresult rc;
} rules[MAX_RULES];
static bool hold;
static struct fake_event *held[4096];
static size_t nheld;

void fake_reset(void)
{
    for (unsigned i = 1; i <= MAX_HANDLES; i++) {
        free(handles[i].mem);
        handles[i] = (struct fake_handle){0};
    }
    nmaps = 0;
    memset(&fake, 0, sizeof fake);
    memset(rules, 0, sizeof rules);
    hold = false;
    nheld = 0;
}

void fake_ctx_forget(struct resid_ctx *r)
{
    for (size_t i = 0; i < r->nevents; i++)
        free((struct fake_event *)r->events[i]);
    free(r->events);
    struct resid_chunk *lists[] = {r->free_dev, r->free_host, r->aside};
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++)
        for (struct resid_chunk *c = lists[k], *next; c; c = next) {
            next = c->next;
            free(c);
        }
    free(r->slots);
    r->events = NULL;
    r->nevents = r->event_cap = r->nslots = r->slot_cap = 0;
    r->free_dev = r->free_host = r->aside = NULL;
    r->slots = NULL;
}

void fake_fail(const char *entry, unsigned long nth, bool sticky, CUresult rc)
{
    if (!entry) {
        memset(rules, 0, sizeof rules);
        return;
    }
    for (int i = 0; i < MAX_RULES; i++) {
        if (rules[i].nth && strcmp(rules[i].entry, entry) != 0)
            continue;
        rules[i] = (struct rule){"", nth, 0, sticky, rc};
        snprintf(rules[i].entry, sizeof rules[i].entry, "%s", entry);
        return;
    }
}

/* The rule that fails this call of entry, or NULL. */
static const struct rule *failing(const char *entry)
{
    for (int i = 0; i < MAX_RULES; i++) {
        struct rule *r = &rules[i];
        if (!r->nth || strcmp(entry, r->entry) != 0)
            continue;
        r->calls++;
        if (r->calls == r->nth || (r->sticky && r->calls > r->nth)) {
            fake.injected++;
            return r;
        }
    }
    return NULL;
}

#define FAIL_IF(entry)                                                                             \
    do {                                                                                           \
        const struct rule *r_ = failing(entry);                                                    \
        if (r_)                                                                                    \
            return r_->rc;                                                                         \
    } while (0)

void fake_hold_keep(void)
{
    hold = false;
}

void fake_hold_events(bool on)
{
    hold = on;
    if (on)
        return;
    for (size_t i = 0; i < nheld; i++)
        held[i]->done = true;
    nheld = 0;
}

/* The mapping that holds va, or NULL. */
static struct fake_map *map_of(CUdeviceptr va)
{
    for (size_t i = 0; i < nmaps; i++)
        if (va >= maps[i].va && va < maps[i].va + maps[i].size)
            return &maps[i];
    return NULL;
}

uint8_t *fake_bytes(CUdeviceptr va)
{
    struct fake_map *m = map_of(va);
    return m ? handles[m->handle].mem + (va - m->va) : NULL;
}

bool fake_on_host(CUdeviceptr va)
{
    struct fake_map *m = map_of(va);
    return m && handles[m->handle].host;
}

static CUresult device(CUdevice *dev)
{
    FAIL_IF("device");
    *dev = 0;
    return CUDA_SUCCESS;
}

static CUresult attribute(int *v, CUdevice_attribute a, CUdevice dev)
{
    (void)a, (void)dev;
    FAIL_IF("attribute");
    *v = 1; /* VMM and host VMM supported */
    return CUDA_SUCCESS;
}

static CUresult granularity(size_t *g, CUdevice dev)
{
    (void)dev;
    *g = FAKE_GRAN;
    return CUDA_SUCCESS;
}

static CUresult mem_info(size_t *f, size_t *t)
{
    *f = *t = (size_t)1 << 34;
    return CUDA_SUCCESS;
}

static CUresult stream_create(CUstream *s)
{
    static int streams[2];
    static int k;
    *s = (CUstream)&streams[k++ % 2];
    return CUDA_SUCCESS;
}

static CUresult reserve(CUdeviceptr *va, size_t size, size_t align)
{
    (void)align;
    FAIL_IF("reserve");
    fake.reserves++;
    *va = next_va;
    next_va += (size + FAKE_GRAN - 1) / FAKE_GRAN * FAKE_GRAN + FAKE_GRAN;
    return CUDA_SUCCESS;
}

static CUresult address_free(CUdeviceptr va, size_t size)
{
    (void)va, (void)size;
    FAIL_IF("address_free");
    return CUDA_SUCCESS;
}

static CUresult create(CUmemGenericAllocationHandle *h, size_t size, CUdevice dev, bool host,
                       CUmemLocation loc)
{
    (void)dev, (void)loc;
    FAIL_IF("create");
    for (unsigned i = 1; i <= MAX_HANDLES; i++) {
        if (handles[i].live)
            continue;
        handles[i] = (struct fake_handle){true, host, calloc(1, size)};
        *h = i;
        if (host)
            fake.host_chunks++;
        else if (++fake.device_chunks > fake.peak_device_chunks)
            fake.peak_device_chunks = fake.device_chunks;
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult release(CUmemGenericAllocationHandle h)
{
    FAIL_IF("release");
    if (handles[h].host)
        fake.host_chunks--;
    else
        fake.device_chunks--;
    free(handles[h].mem);
    handles[h] = (struct fake_handle){0};
    return CUDA_SUCCESS;
}

static uint64_t map_ns;

void fake_slow_map(uint64_t ns)
{
    map_ns = ns;
}

static _Atomic bool map_gate;
_Atomic int fake_in_map;

void fake_gate_map(bool closed)
{
    map_gate = closed;
}

/* Waits while the map gate is closed, at most 10 s. */
static void pass_gate(void)
{
    if (!map_gate)
        return;
    fake_in_map++;
    for (int i = 0; map_gate && i < 10000; i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    fake_in_map--;
}

static CUresult map(CUdeviceptr va, size_t size, CUmemGenericAllocationHandle h)
{
    pass_gate();
    FAIL_IF("map");
    if (map_ns) {
        struct timespec t = {(time_t)(map_ns / 1000000000u), (long)(map_ns % 1000000000u)};
        while (nanosleep(&t, &t) != 0) {
        }
    }
    if (nmaps == MAX_MAPS || map_of(va))
        return CUDA_ERROR_INVALID_VALUE;
    maps[nmaps++] = (struct fake_map){va, size, (unsigned)h};
    fake.maps++;
    return CUDA_SUCCESS;
}

static CUresult unmap(CUdeviceptr va, size_t size)
{
    FAIL_IF("unmap");
    fake.unmaps++;
    for (size_t i = 0; i < nmaps;) {
        if (maps[i].va >= va && maps[i].va < va + size)
            maps[i] = maps[--nmaps];
        else
            i++;
    }
    return CUDA_SUCCESS;
}

static CUresult set_access(CUdeviceptr va, size_t size, CUdevice dev)
{
    (void)va, (void)size, (void)dev;
    FAIL_IF("set_access");
    fake.set_accesses++;
    return CUDA_SUCCESS;
}

static CUresult copy(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    (void)s;
    FAIL_IF("copy");
    uint8_t *d = fake_bytes(dst), *from = fake_bytes(src);
    if (!d || !from)
        return CUDA_ERROR_ILLEGAL_ADDRESS;
    memmove(d, from, n);
    fake.bytes_copied += n;
    return CUDA_SUCCESS;
}

static CUresult event_create(CUevent *e)
{
    FAIL_IF("event_create");
    *e = (CUevent)calloc(1, sizeof(struct fake_event));
    return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult record(CUevent e, CUstream s)
{
    (void)s;
    FAIL_IF("record");
    struct fake_event *ev = (struct fake_event *)e;
    ev->recorded = true;
    ev->done = !hold;
    fake.records++;
    if (hold && nheld < sizeof held / sizeof held[0])
        held[nheld++] = ev;
    return CUDA_SUCCESS;
}

static CUresult query(CUevent e)
{
    FAIL_IF("query");
    return ((struct fake_event *)e)->done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

static CUresult event_sync(CUevent e)
{
    FAIL_IF("event_sync");
    fake.event_syncs++;
    /* A held event would block for ever on a real device: the fake answers as a device
       that finished it (the tests that hold events fail this call instead). */
    ((struct fake_event *)e)->done = true;
    return CUDA_SUCCESS;
}

static CUresult wait_event(CUstream s, CUevent e)
{
    (void)s;
    FAIL_IF("wait_event");
    fake.waits_on_pending += !((struct fake_event *)e)->done;
    return CUDA_SUCCESS;
}

static CUresult stream_sync(CUstream s)
{
    (void)s;
    FAIL_IF("stream_sync");
    fake.stream_syncs++;
    return CUDA_SUCCESS;
}

static CUresult ctx_sync(void)
{
    FAIL_IF("ctx_sync");
    return CUDA_SUCCESS;
}

/* The fake runs no queued work: the program is always idle once the call is allowed. */
static CUresult program_sync(void)
{
    FAIL_IF("program_sync");
    return CUDA_SUCCESS;
}

static CUresult host_alloc(void **p, size_t n)
{
    FAIL_IF("host_alloc");
    *p = calloc(1, n);
    return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult host_free(void *p)
{
    free(p);
    return CUDA_SUCCESS;
}

const struct resid_driver fake_driver = {
    device,       attribute,    granularity,  mem_info,   stream_create, reserve,
    address_free, create,       release,      map,        unmap,         set_access,
    copy,         event_create, record,       query,      event_sync,    wait_event,
    stream_sync,  ctx_sync,     program_sync, host_alloc, host_free,
};
