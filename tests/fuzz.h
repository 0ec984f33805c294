/* tests/fuzz.h — what a libFuzzer target here declares: its entry point, and CHECK, which stops the
 * run (a crash libFuzzer keeps the input of) where an invariant does not hold. */
#ifndef TESTS_FUZZ_H
#define TESTS_FUZZ_H

#include <stddef.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            __builtin_trap();                                                                      \
    } while (0)

#endif
