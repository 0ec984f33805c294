/* tests/import/fuzz_import_kineto.c — libFuzzer target for the Kineto importer and its JSON and
 * gzip reader: any bytes either import or give a "FILE:..." error message; an imported model
 * passes plan_model_check. Any inconsistency aborts. The bytes reach the importer as a file
 * (a memfd: no disk), since zlib reads by path. */
#include "fuzz_import.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], msg[512];
    int fd = fuzz_import_file_of(data, size, path, sizeof path);
    import_opts o = {.step = -1};
    plan_model m;
    plan_model_init(&m);
    msg[0] = 0;
    fuzz_import_judge(import_kineto(path, &o, &m, msg, sizeof msg), path, &m, msg, sizeof msg);
    plan_model_free(&m);
    close(fd);
    return 0;
}
