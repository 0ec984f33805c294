/* shim_path.h — the one expander of path patterns (trace.path, log.file) and the rank that %r
 * stands for. Pure functions of their arguments: no allocation, no I/O, no global state
 * (shim/trace/shim_path.c; unit-tested in tests/shim/test_path.c). */
#ifndef SHIM_PATH_H
#define SHIM_PATH_H

#include <stddef.h>

/* Expands `pattern`, the value of option `option` (named in errors: "trace.path", "log.file"),
   into out (outlen bytes, NUL included): %p becomes pid, %r rank (decimal), %% one %; any other
   character after % (or a % at the end) is an error. Returns 0 with out holding the whole
   expansion, or -1 with out[0] = '\0' and err saying why, naming the option and the pattern:
   an empty pattern, an unknown %-sequence, or an expansion longer than outlen - 1 bytes. An
   expansion is never cut: a path that does not fit is an error, not a shorter path. */
int shim_path_expand(const char *option, const char *pattern, int pid, int rank, char *out,
                     size_t outlen, char *err, size_t errlen);

/* What SHIM_PATH_RANK_VAR's value (NULL: the variable is unset) gives %r. */
#define SHIM_PATH_RANK_VAR "RANK"
enum shim_path_rank_status {
    SHIM_RANK_SET,   /* a valid rank: *rank holds it */
    SHIM_RANK_UNSET, /* the variable is not set: *rank = 0 */
    SHIM_RANK_BAD    /* set but not a rank: *rank = 0, and the caller warns once */
};
/* Parses a rank strictly: decimal digits only (no sign, no spaces, no other characters, not
   empty), at most INT_MAX. */
enum shim_path_rank_status shim_path_rank(const char *value, int *rank);

#endif
