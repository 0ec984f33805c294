/* shim_path.c — path patterns (trace.path, log.file) and the rank %r stands for: contracts in
 * shim_path.h. Linked into libshimtrace.a (the trace writer expands trace.path) and from there
 * into libshim.so (the log expands log.file). */
#include "shim_path.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* How much of a pattern an error message shows. */
#define SHOWN 64

/* Writes "OPTION \"PATTERN\": REASON" into err (the pattern cut to SHOWN bytes, with "..."),
   empties out and returns -1. */
static int fail(char *err, size_t errlen, const char *option, const char *pattern, char *out,
                const char *reason)
{
    out[0] = '\0';
    size_t len = strlen(pattern);
    if (errlen > 0)
        snprintf(err, errlen, "%s \"%.*s%s\": %s", option, (int)(len > SHOWN ? SHOWN : len),
                 pattern, len > SHOWN ? "..." : "", reason);
    return -1;
}

int shim_path_expand(const char *option, const char *pattern, int pid, int rank, char *out,
                     size_t outlen, char *err, size_t errlen)
{
    char reason[96], none[1];
    if (outlen == 0)
        return fail(err, errlen, option, pattern ? pattern : "", none, "no room for a path");
    if (pattern == NULL || pattern[0] == '\0')
        return fail(err, errlen, option, "", out, "empty path pattern");
    size_t n = 0;
    for (const char *p = pattern; *p != '\0'; p++) {
        char num[16];
        const char *piece = p;
        size_t len = 1;
        if (*p == '%') {
            p++;
            if (*p == 'p' || *p == 'r') {
                len = (size_t)snprintf(num, sizeof num, "%d", *p == 'p' ? pid : rank);
                piece = num;
            } else if (*p == '%') {
                piece = "%";
            } else {
                if (*p == '\0')
                    snprintf(reason, sizeof reason, "a %% at the end (%%%% is a %%)");
                else if (*p > ' ' && *p < 0x7f)
                    snprintf(reason, sizeof reason,
                             "unknown '%%%c' (%%p: process id, %%r: rank, %%%%: a %%)", *p);
                else
                    snprintf(reason, sizeof reason,
                             "unknown '%%' + byte 0x%02x (%%p: process id, %%r: rank, %%%%: a %%)",
                             (unsigned char)*p);
                return fail(err, errlen, option, pattern, out, reason);
            }
        }
        if (len > outlen - 1 - n) {
            snprintf(reason, sizeof reason, "expands to more than %zu bytes (never cut short)",
                     outlen - 1);
            return fail(err, errlen, option, pattern, out, reason);
        }
        memcpy(out + n, piece, len);
        n += len;
    }
    out[n] = '\0';
    return 0;
}

enum shim_path_rank_status shim_path_rank(const char *value, int *rank)
{
    *rank = 0;
    if (value == NULL)
        return SHIM_RANK_UNSET;
    long v = 0;
    const char *p = value;
    for (; *p >= '0' && *p <= '9'; p++) {
        v = v * 10 + (*p - '0');
        if (v > INT_MAX)
            return SHIM_RANK_BAD;
    }
    if (p == value || *p != '\0')
        return SHIM_RANK_BAD;
    *rank = (int)v;
    return SHIM_RANK_SET;
}
