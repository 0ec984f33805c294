/* report_trace_map.c — a small open-addressing u64 -> u64 hash map for the trace analyses. */
#include "report_trace.h"

#include <stdlib.h>

static size_t slot_of(uint64_t key, size_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

static int rehash(report_map *m, size_t cap)
{
    report_map bigger = {calloc(cap, sizeof(uint64_t)), calloc(cap, sizeof(uint64_t)), cap, 0};
    if (bigger.keys == NULL || bigger.vals == NULL) {
        report_map_free(&bigger);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->vals[i] != 0)
            report_map_put(&bigger, m->keys[i], m->vals[i] - 1);
    report_map_free(m);
    *m = bigger;
    return 0;
}

/* Contract in report_trace.h. */
int report_map_put(report_map *m, uint64_t key, uint64_t value)
{
    if ((m->n + 1) * 2 > m->cap && rehash(m, m->cap ? m->cap * 2 : 64) != 0)
        return -1;
    size_t i = slot_of(key, m->cap);
    while (m->vals[i] != 0 && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (m->vals[i] == 0)
        m->n++;
    m->keys[i] = key;
    m->vals[i] = value + 1;
    return 0;
}

/* Contract in report_trace.h. */
int report_map_get(const report_map *m, uint64_t key, uint64_t *value)
{
    if (m->cap == 0)
        return 0;
    size_t i = slot_of(key, m->cap);
    while (m->vals[i] != 0) {
        if (m->keys[i] == key) {
            *value = m->vals[i] - 1;
            return 1;
        }
        i = (i + 1) & (m->cap - 1);
    }
    return 0;
}

/* Contract in report_trace.h. */
void report_map_free(report_map *m)
{
    free(m->keys);
    free(m->vals);
    *m = (report_map){0};
}
