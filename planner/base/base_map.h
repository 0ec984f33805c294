/* planner/base/base_map.h — the base room's map: 64-bit keys (ids, addresses) to 64-bit values
 * or pointers, the one hash table of the planner, the shim and the tools.
 *
 * Open addressing with linear probing over a power-of-two table kept at most half full. An erase
 * moves the entries after it back into the hole (backward-shift deletion), so there are no
 * tombstones: a map that sees as many erases as insertions keeps the size its most keys at once
 * needed, however long it runs. Every 64-bit value is a key, 0 included (key 0 is held beside the
 * table). A map grows (doubling) and never shrinks; base_map_free gives its memory back.
 *
 * A map is not thread-safe: its owner serialises every call on it (a lock, or one thread). It
 * holds no global state: maps on different threads never meet.
 *
 * Who may include it: every folder of the project (planner/, every room of shim/, every room of
 * tools/, the tests). It includes only libc. Its code is $(BASE_LIB) (planner/module.mk), which
 * every program or library that calls it links: libshim.so, and the tests and tools that link
 * the shim's core or trace archives.
 *
 * Error contract (the base room's, same words everywhere): a function returning int returns 0 on
 * success; on failure it returns -1 and leaves every object it was passed as it was. */
#ifndef BASE_MAP_H
#define BASE_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One slot of the table: key 0 marks an empty slot (key 0 itself is held in the map). */
typedef struct base_map_slot {
    uint64_t key, val;
} base_map_slot;

/* A map; all zero (BASE_MAP_INIT, or base_map_init) is an empty one that holds no memory. */
typedef struct base_map {
    base_map_slot *slot; /* cap slots; NULL while cap is 0 */
    size_t cap;          /* 0, or a power of two of at least BASE_MAP_FIRST */
    size_t n;            /* keys in slot[] (key 0 not counted) */
    unsigned shift;      /* 64 - log2(cap): a key's home slot is base_map_hash(key) >> shift */
    bool has_zero;       /* key 0 is held, with value zero_val */
    uint64_t zero_val;
} base_map;

#define BASE_MAP_INIT                                                                              \
    {                                                                                              \
        0                                                                                          \
    }
/* The slots a map takes at its first insertion. */
#define BASE_MAP_FIRST 16

/* The hash of key: its home slot in a table of 2^b slots is the hash's top b bits (Fibonacci
   hashing: ids that count up and addresses aligned to large powers of two spread evenly). */
static inline uint64_t base_map_hash(uint64_t key)
{
    return key * 0x9E3779B97F4A7C15ull;
}

/* An empty map holding no memory. Cannot fail. */
void base_map_init(base_map *m);

/* Frees m's table and leaves m empty (as base_map_init). The values are not touched: pointers
   stored in m are the caller's to free first. Accepts an initialised or freed map. */
void base_map_free(base_map *m);

/* How many keys m holds (key 0 included). */
size_t base_map_count(const base_map *m);

/* Whether m holds key; if so and val is not NULL, *val is its value. */
bool base_map_find(const base_map *m, uint64_t key, uint64_t *val);

/* Sets key's value to val, adding key when m does not hold it. Returns 0, or -1 when the table
   must grow and memory runs out (m unchanged). Setting the value of a key m holds never grows
   the table and never fails. */
int base_map_put(base_map *m, uint64_t key, uint64_t val);

/* Makes room for n keys in all, so that the insertions up to n keys never grow the table. 0, or
   -1 when memory runs out or n is beyond what a table can hold (m unchanged). */
int base_map_reserve(base_map *m, size_t n);

/* Removes key; returns whether m held it, and if so and val is not NULL, *val is the value it
   had. Never allocates; other keys keep their values (entries after it in the table move back
   into its slot). */
bool base_map_erase(base_map *m, uint64_t key, uint64_t *val);

/* Calls fn(key, value, arg) once for every key m holds, in no particular order, until fn returns
   non-zero; returns that value (0 when every key was visited). fn may erase the key it is given
   (base_map_erase) and set the value of any key m holds (base_map_put of a key held), and every
   other key is still visited exactly once; fn must not add keys or erase any key but its own. */
int base_map_each(base_map *m, int (*fn)(uint64_t key, uint64_t val, void *arg), void *arg);

/* The pointer stored at key (base_map_put_ptr), or NULL when m does not hold key. */
static inline void *base_map_find_ptr(const base_map *m, uint64_t key)
{
    uint64_t v = 0;
    return base_map_find(m, key, &v) ? (void *)(uintptr_t)v : NULL;
}

/* base_map_put with a pointer for value: 0, or -1 (m unchanged). */
static inline int base_map_put_ptr(base_map *m, uint64_t key, void *p)
{
    return base_map_put(m, key, (uint64_t)(uintptr_t)p);
}

#endif
