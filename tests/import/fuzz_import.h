/* tests/import/fuzz_import.h — what the importers' fuzz targets share: bytes as a file an importer
 * can open, and the verdict on one import. */
#ifndef FUZZ_IMPORT_H
#define FUZZ_IMPORT_H

#include "import.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The n bytes at p as a memfd (no disk; zlib reads by path): returns its descriptor and writes its
 * path to path[cap]. Aborts when it cannot be made. */
static inline int fuzz_import_file_of(const void *p, size_t n, char *path, size_t cap)
{
    int fd = memfd_create("trace", 0);
    if (fd < 0 || write(fd, p, n) != (ssize_t)n)
        abort();
    snprintf(path, cap, "/proc/self/fd/%d", fd);
    return fd;
}

/* Aborts unless one import's outcome is consistent: a failed import (failed nonzero) left in msg an
 * error that starts with the file's path and says "error: "; an imported model m passes
 * plan_model_check (msg[cap] its scratch). */
static inline void fuzz_import_judge(int failed, const char *path, plan_model *m, char *msg,
                                     size_t cap)
{
    if (failed) {
        if (strncmp(msg, path, strlen(path)) || !strstr(msg, "error: "))
            abort();
    } else if (plan_model_check(m, NULL, msg, cap)) {
        abort();
    }
}

#endif
