/* shim_trace_file.c — the trace file: chunk framing, the INFO, SCHEMA and END chunks. */
#include "shim_trace_internal.h"

#include "base_array.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* How many more bytes fd may take under the file size limit (RLIMIT_FSIZE), past which a write
   raises SIGXFSZ, which ends the program: a process-wide signal, so blocking it in this thread
   would not keep it from another. UINT64_MAX without a limit, or for what has no size (a pipe,
   a terminal). */
static uint64_t room_under_limit(int fd)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return UINT64_MAX;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return UINT64_MAX;
    int fl = fcntl(fd, F_GETFL);
    off_t at = fl >= 0 && (fl & O_APPEND) ? st.st_size : lseek(fd, 0, SEEK_CUR);
    if (at < 0)
        return UINT64_MAX;
    return (uint64_t)at >= (uint64_t)rl.rlim_cur ? 0 : (uint64_t)rl.rlim_cur - (uint64_t)at;
}

/* writev that stops at the file size limit: up to it, the bytes that fit; at it, EFBIG. */
static ssize_t writev_limited(int fd, const struct iovec *iov, int cnt)
{
    uint64_t room = room_under_limit(fd), total = 0;
    for (int i = 0; i < cnt; i++)
        total += iov[i].iov_len;
    if (total <= room)
        return writev(fd, iov, cnt);
    if (room == 0) {
        errno = EFBIG;
        return -1;
    }
    return write(fd, iov[0].iov_base, iov[0].iov_len < room ? iov[0].iov_len : (size_t)room);
}

/* Contract in shim_trace.h. */
int shim_trace_write_all(int fd, struct iovec *iov, int cnt)
{
    while (cnt > 0) {
        ssize_t w = writev_limited(fd, iov, cnt);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        size_t left = (size_t)w;
        while (cnt > 0 && left >= iov->iov_len) {
            left -= iov->iov_len;
            iov++;
            cnt--;
        }
        if (cnt > 0) {
            iov->iov_base = (char *)iov->iov_base + left;
            iov->iov_len -= left;
        }
    }
    return 0;
}

/* Contract in shim_trace_internal.h. */
int shim_trace_write_chunk(int fd, uint32_t type, const void *payload, uint32_t len)
{
    uint8_t hdr[SHIM_TRACE_CHUNK_HEADER];
    memcpy(hdr, SHIM_TRACE_CHUNK_MAGIC, 4);
    memcpy(hdr + 4, &type, 4);
    memcpy(hdr + 8, &len, 4);
    uint32_t crc = shim_trace_crc32(shim_trace_g.crc_table, 0, hdr, 12);
    crc = shim_trace_crc32(shim_trace_g.crc_table, crc, payload, len);
    memcpy(hdr + 12, &crc, 4);
    struct iovec iov[2] = {{hdr, sizeof hdr}, {(void *)payload, len}};
    if (shim_trace_write_all(fd, iov, len > 0 ? 2 : 1) != 0)
        return -1;
    shim_trace_g.bound.file_bytes += SHIM_TRACE_CHUNK_HEADER + (uint64_t)len;
    return 0;
}

/* A growing payload; oom sticks once set. */
struct payload {
    uint8_t *p;
    size_t len, cap;
    int oom;
};

static void put(struct payload *b, const void *data, size_t n)
{
    if (b->oom)
        return;
    if (base_array_grow((void **)&b->p, &b->cap, b->len + n, 1) != 0) {
        b->oom = 1;
        return;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

static void put_u8(struct payload *b, uint8_t v)
{
    put(b, &v, 1);
}

static void put_u16(struct payload *b, uint16_t v)
{
    put(b, &v, 2);
}

static void put_u32(struct payload *b, uint32_t v)
{
    put(b, &v, 4);
}

/* One key/value pair; a value longer than SHIM_TRACE_VALUE_MAX is cut. */
static void put_kv(struct payload *b, const char *key, const char *value)
{
    size_t vlen = strlen(value);
    if (vlen > SHIM_TRACE_VALUE_MAX)
        vlen = SHIM_TRACE_VALUE_MAX;
    put_u16(b, (uint16_t)strlen(key));
    put(b, key, strlen(key));
    put_u32(b, (uint32_t)vlen);
    put(b, value, vlen);
}

static void put_kv_u64(struct payload *b, const char *key, uint64_t v)
{
    char text[24];
    snprintf(text, sizeof text, "%llu", (unsigned long long)v);
    put_kv(b, key, text);
}

static void put_kv_int(struct payload *b, const char *key, int v)
{
    char text[16];
    snprintf(text, sizeof text, "%d", v);
    put_kv(b, key, text);
}

static void put_name(struct payload *b, const char *name)
{
    put_u8(b, (uint8_t)strlen(name));
    put(b, name, strlen(name));
}

/* The SCHEMA payload, generated from the format's kind and field lists. */
static void put_schema(struct payload *b)
{
    uint16_t kinds = 0;
#define COUNT_KIND(id, name, fixed) kinds++;
    SHIM_TRACE_KIND_LIST(COUNT_KIND)
#undef COUNT_KIND
    put_u16(b, kinds);
    put_u16(b, 0);
#define COUNT_FIELD(kid, fname, type, off) nfields += (kid) == id;
#define PUT_FIELD(kid, fname, type, off)                                                           \
    if ((kid) == id) {                                                                             \
        put_u16(b, off);                                                                           \
        put_u8(b, type);                                                                           \
        put_name(b, fname);                                                                        \
    }
#define PUT_KIND(kid, name, fixed)                                                                 \
    {                                                                                              \
        const uint16_t id = kid;                                                                   \
        uint8_t nfields = 0;                                                                       \
        SHIM_TRACE_FIELD_LIST(COUNT_FIELD)                                                         \
        put_u16(b, id);                                                                            \
        put_u16(b, fixed);                                                                         \
        put_u8(b, nfields);                                                                        \
        put_name(b, name);                                                                         \
        SHIM_TRACE_FIELD_LIST(PUT_FIELD)                                                           \
    }
    SHIM_TRACE_KIND_LIST(PUT_KIND)
#undef PUT_KIND
#undef PUT_FIELD
#undef COUNT_FIELD
}

static int write_payload(int fd, uint32_t type, struct payload *b)
{
    int rc = -1;
    if (b->oom)
        errno = ENOMEM;
    else if (b->len > SHIM_TRACE_CHUNK_MAX)
        errno = EFBIG;
    else
        rc = shim_trace_write_chunk(fd, type, b->p, (uint32_t)b->len);
    free(b->p);
    *b = (struct payload){0};
    return rc;
}

static void put_info(struct payload *b, const struct shim_trace_info *info, uint64_t start_ns)
{
    struct timespec real;
    clock_gettime(CLOCK_REALTIME, &real);
    put_u32(b, info->command ? 9 : 8);
    put_kv(b, "writer", "libshim trace writer");
    put_kv_int(b, "pid", info->pid);
    put_kv_int(b, "rank", info->rank);
    put_kv(b, "clock", "CLOCK_MONOTONIC");
    put_kv_u64(b, "start_ns", start_ns);
    put_kv_u64(b, "start_realtime_ns",
               (uint64_t)real.tv_sec * 1000000000u + (uint64_t)real.tv_nsec);
    put_kv_u64(b, "ring_bytes", SHIM_TRACE_RING_BYTES);
    put_kv(b, "config", info->config_text ? info->config_text : "");
    if (info->command)
        put_kv(b, "command", info->command);
}

/* Contract in shim_trace_internal.h. */
int shim_trace_write_head(int fd, const struct shim_trace_info *info, uint64_t start_ns)
{
    uint8_t pre[SHIM_TRACE_PREAMBLE_SIZE];
    uint16_t version[2] = {SHIM_TRACE_MAJOR, SHIM_TRACE_MINOR};
    uint32_t size = SHIM_TRACE_PREAMBLE_SIZE;
    memcpy(pre, SHIM_TRACE_MAGIC, 8);
    memcpy(pre + 8, version, 4);
    memcpy(pre + 12, &size, 4);
    struct iovec iov = {pre, sizeof pre};
    if (shim_trace_write_all(fd, &iov, 1) != 0)
        return -1;
    shim_trace_g.bound.file_bytes += sizeof pre;
    struct payload b = {0};
    put_info(&b, info, start_ns);
    if (write_payload(fd, SHIM_TRACE_CHUNK_INFO, &b) != 0)
        return -1;
    put_schema(&b);
    return write_payload(fd, SHIM_TRACE_CHUNK_SCHEMA, &b);
}

/* Contract in shim_trace_internal.h. */
int shim_trace_write_end(int fd)
{
    const struct shim_trace_bound *bd = &shim_trace_g.bound;
    int error = shim_trace_g.write_error;
    struct payload b = {0};
    bool peak = atomic_load(&shim_trace_g.have_resident_peak);
    bool name = atomic_load(&shim_trace_g.have_device_name);
    put_u32(&b, 9u + (bd->summarising ? 5u : 0u) + (error != 0) + peak + name);
    put_kv_u64(&b, "records", shim_trace_g.records);
    put_kv_u64(&b, "dropped", shim_trace_g.dropped);
    put_kv_u64(&b, "chunks", shim_trace_g.chunks);
    put_kv_u64(&b, "end_ns", shim_trace_now_ns());
    put_kv_u64(&b, "max_bytes", bd->max_bytes);
    put_kv_u64(&b, "lost_limit", bd->lost_limit);
    put_kv_u64(&b, "lost_error", bd->lost_error);
    put_kv_u64(&b, "lost_steps", bd->lost_steps);
    put_kv_u64(&b, "summaries", bd->summaries);
    if (bd->summarising) {
        put_kv_u64(&b, "detail_steps", bd->detail_steps);
        put_kv_u64(&b, "last_detail_step", bd->detail_steps ? bd->last_detail_step : 0);
        put_kv_u64(&b, "summarised_steps", bd->summarised_steps);
        put_kv_u64(&b, "summarised_records", bd->summarised);
        put_kv_u64(&b, "summary_from_ns", bd->switch_ns);
    }
    if (error)
        put_kv(&b, "write_error", strerror(error));
    if (peak)
        put_kv_u64(&b, "resident_peak_bytes", atomic_load(&shim_trace_g.resident_peak));
    if (name)
        put_kv(&b, "device_name", shim_trace_g.device_name);
    return write_payload(fd, SHIM_TRACE_CHUNK_END, &b);
}

/* Contract in shim_trace.h. The name is kept printable: a byte outside [ -~] becomes '?'. */
void shim_trace_set_device_name(const char *name)
{
    size_t n = 0;
    for (; name && name[n] && n + 1 < sizeof shim_trace_g.device_name; n++)
        shim_trace_g.device_name[n] = name[n] >= ' ' && name[n] <= '~' ? name[n] : '?';
    shim_trace_g.device_name[n] = '\0';
    atomic_store(&shim_trace_g.have_device_name, true);
}

/* Contract in shim_trace.h. */
void shim_trace_set_resident_peak(uint64_t bytes)
{
    atomic_store(&shim_trace_g.resident_peak, bytes);
    atomic_store(&shim_trace_g.have_resident_peak, true);
}
