/* report_trace_kv.c — the key/value payload of the INFO and END chunks. */
#include "report_trace.h"
#include "report_trace_internal.h"

#include "shim_trace_format.h"

#include <stdlib.h>
#include <string.h>

static int key_ok(const uint8_t *k, size_t n)
{
    if (n == 0 || n > SHIM_TRACE_KEY_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((k[i] >= 'a' && k[i] <= 'z') || (k[i] >= '0' && k[i] <= '9') || k[i] == '_'))
            return 0;
    return 1;
}

/* Contract in report_trace.h. Values are handed over as C strings: a NUL inside one ends it. */
int report_kv_parse(const uint8_t *p, size_t len, uint64_t base,
                    void (*fn)(void *ctx, const char *key, const char *value), void *ctx, char *err,
                    size_t errlen)
{
    if (len < 4)
        return report_bad(err, errlen, base, "key/value payload shorter than its count");
    uint32_t count = (uint32_t)report_get_le(p, 4);
    size_t at = 4;
    for (uint32_t i = 0; i < count; i++) {
        if (len - at < 2)
            return report_bad(err, errlen, base + at, "key length cut by the chunk's end");
        size_t klen = report_get_le(p + at, 2);
        if (len - at - 2 < klen || !key_ok(p + at + 2, klen))
            return report_bad(err, errlen, base + at, "bad key (1 to 64 bytes of [a-z0-9_])");
        char key[SHIM_TRACE_KEY_MAX + 1];
        memcpy(key, p + at + 2, klen);
        key[klen] = '\0';
        at += 2 + klen;
        if (len - at < 4)
            return report_bad(err, errlen, base + at, "value length cut by the chunk's end");
        size_t vlen = report_get_le(p + at, 4);
        if (len - at - 4 < vlen)
            return report_bad(err, errlen, base + at, "value runs past the chunk's end");
        char *value = malloc(vlen + 1);
        if (value == NULL)
            return report_bad(err, errlen, base + at, "out of memory");
        memcpy(value, p + at + 4, vlen);
        value[vlen] = '\0';
        fn(ctx, key, value);
        free(value);
        at += 4 + vlen;
    }
    if (at != len)
        return report_bad(err, errlen, base + at, "bytes after the last key/value pair");
    return 0;
}
