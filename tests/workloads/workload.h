/* workload.h — small helpers the workload programs share (train_sim, replay): the integer
 * mixers that make their data and checksums, and a strict integer parser for their flags. */
#ifndef WORKLOAD_H
#define WORKLOAD_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* A 32-bit integer mixer (bijective): data patterns and page offsets. */
static inline uint32_t workload_mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    return x ^ (x >> 16);
}

/* A 64-bit integer mixer (splitmix64's finaliser): checksums. */
static inline uint64_t workload_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Parses s as a decimal int in [min, max] into *out; returns 0, or -1 (nothing written) when s
   is not entirely such a number. */
static inline int workload_parse_int(const char *s, long min, long max, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < min || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

#endif
