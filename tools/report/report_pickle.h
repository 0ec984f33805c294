/* report_pickle.h — a small streaming writer of Python pickles (protocol 2), for the snapshot
 * that `shim-report memviz` writes (pytorch.org/memory_viz reads it with its own unpickler).
 *
 * Only opcodes that both Python's pickle and memory_viz's unpickler read are written: PROTO 2,
 * EMPTY_DICT, EMPTY_LIST, MARK, SETITEMS, APPENDS, BININT, LONG1, BINUNICODE, BINFLOAT, NONE,
 * NEWTRUE, NEWFALSE, TUPLE2 and STOP. No memo: every value is written where it is used.
 *
 * Containers are written as they are filled: pk_list / pk_dict open one, pk_item (list) or
 * pk_key (dict) starts each element, pk_end closes it. Elements go out in batches of at most
 * PK_BATCH between MARK and APPENDS / SETITEMS, as Python's pickler does (memory_viz spreads a
 * batch into a function call, which fails for batches of a few hundred thousand). */
#ifndef REPORT_PICKLE_H
#define REPORT_PICKLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PK_BATCH     1000
#define PK_MAX_DEPTH 16

typedef struct pk {
    FILE *out;
    int depth;
    int is_dict[PK_MAX_DEPTH];
    size_t batch[PK_MAX_DEPTH]; /* elements since the open MARK (0: no MARK open) */
    int error;                  /* nesting too deep, or pk_end without a container */
} pk;

/* Starts a pickle on out: PROTO 2. */
void pk_start(pk *p, FILE *out);

/* Ends it (STOP). 0 when every container was closed and nothing failed, else -1; writing
   errors are the stream's (ferror). */
int pk_finish(pk *p);

/* Values. Integers as BININT when they fit 32 bits, else LONG1 (two's complement, shortest:
   at most 8 bytes below 2^63, 9 bytes from there). Strings as BINUNICODE of s with every
   invalid UTF-8 sequence replaced by U+FFFD, so that Python decodes them. */
void pk_int(pk *p, int64_t v);
/* An unsigned integer, encoded as pk_int encodes integers. */
void pk_uint(pk *p, uint64_t v);
/* A double (BINFLOAT). */
void pk_float(pk *p, double v);
/* True when v is nonzero, else False (NEWTRUE, NEWFALSE). */
void pk_bool(pk *p, int v);
/* None. */
void pk_none(pk *p);
/* A str: s, invalid UTF-8 replaced (as above). */
void pk_str(pk *p, const char *s);

/* A tuple of the two values written just before (TUPLE2). */
void pk_tuple2(pk *p);

/* Containers. */
void pk_list(pk *p);
/* Opens a dict (EMPTY_DICT); pk_key before each value, pk_end closes it. */
void pk_dict(pk *p);
/* Before each element of the innermost list. */
void pk_item(pk *p);
/* Before each value of the innermost dict: its key, a str. */
void pk_key(pk *p, const char *key);
/* Closes the innermost list or dict (the last batch's APPENDS or SETITEMS). */
void pk_end(pk *p);
/* A dict as the next element of the innermost list, in one call (pk_item, then pk_dict). */
void pk_item_dict(pk *p);

/* key and a value in the innermost dict, in one call. */
void pk_key_int(pk *p, const char *key, int64_t v);
/* The same with an unsigned value. */
void pk_key_uint(pk *p, const char *key, uint64_t v);
/* The same with a str value. */
void pk_key_str(pk *p, const char *key, const char *s);
/* The same with a bool value. */
void pk_key_bool(pk *p, const char *key, int v);

#endif
