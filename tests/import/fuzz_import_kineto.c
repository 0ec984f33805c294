/* tests/import/fuzz_import_kineto.c — libFuzzer target for the Kineto importer and its JSON and
 * gzip reader: any bytes either import or give a "FILE:..." error message; an imported model
 * passes plan_model_check. Any inconsistency aborts. The bytes reach the importer as a file
 * (a memfd: no disk), since zlib reads by path. */
#include "import.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("trace", 0);
    if (fd < 0 || write(fd, data, size) != (ssize_t)size)
        abort();
    char path[64], msg[512];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    import_opts o = {.step = -1};
    plan_model m;
    plan_model_init(&m);
    msg[0] = 0;
    if (import_kineto(path, &o, &m, msg, sizeof msg)) {
        if (strncmp(msg, path, strlen(path)) || !strstr(msg, "error: "))
            abort();
    } else if (plan_model_check(&m, NULL, msg, sizeof msg)) {
        abort();
    }
    plan_model_free(&m);
    close(fd);
    return 0;
}
