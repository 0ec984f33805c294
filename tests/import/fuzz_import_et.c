/* tests/import/fuzz_import_et.c — libFuzzer target for the execution-trace importer: the bytes
 * are the ET, imported joined with a fixed small Kineto trace and alone; any input either
 * imports or gives a "FILE:..." error message, and an imported model passes plan_model_check.
 * Any inconsistency aborts. Both files are memfds (zlib reads by path). */
#include "fuzz_import.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One step, two kernels launched by two CPU operators that the seed ETs name. */
static const char kineto[] =
    "{\"traceEvents\": ["
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"ts\":10,\"dur\":10,\"tid\":1},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\",\"ts\":30,\"dur\":10,\"tid\":1},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"ts\":12,\"dur\":1,"
    "\"tid\":1,\"args\":{\"correlation\":1}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"ts\":32,\"dur\":1,"
    "\"tid\":1,\"args\":{\"correlation\":2}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":15,\"dur\":3,\"args\":{\"stream\":7,"
    "\"correlation\":1}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":35,\"dur\":3,\"args\":{\"stream\":7,"
    "\"correlation\":2}}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char et[64], kt[64], msg[512];
    int efd = fuzz_import_file_of(data, size, et, sizeof et),
        kfd = fuzz_import_file_of(kineto, strlen(kineto), kt, sizeof kt);
    import_opts o = {.step = -1};
    for (int alone = 0; alone < 2; alone++) {
        plan_model m;
        plan_model_init(&m);
        msg[0] = 0;
        fuzz_import_judge(import_et(et, alone ? NULL : kt, &o, &m, msg, sizeof msg), et, &m, msg,
                          sizeof msg);
        plan_model_free(&m);
    }
    close(efd);
    close(kfd);
    return 0;
}
