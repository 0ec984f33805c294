/* shim_scan.c — the allocations a launch touches: every 8-byte word of its parameters looked up in
 * the registry, each allocation once.
 *
 * A launch touches at most one allocation per word, so the words bound the ids. Up to
 * SHIM_SCAN_LOCAL words the ids go to the caller's stack; above, to the calling thread's
 * buffer, grown on demand (no lock is held while it grows). Only when that buffer cannot grow
 * do launches share one static buffer under a mutex, so the contract holds without memory:
 * every touched allocation is found. CUDA caps a kernel's parameters at 32,764 bytes, so
 * SHIM_SCAN_MAX_WORDS words are enough; bytes past that (an oversized parameter buffer) are not
 * parameters and are not read.
 *
 * Duplicates (several pointers into one allocation) are dropped in linear time: a linear
 * search for a few words, an open-addressing set (twice the words, on the stack or in the
 * same buffer) for more. */
#include "shim_core.h"

#include <stdlib.h>
#include <string.h>

#define SCAN_LINEAR 8 /* up to this many words, a linear search beats clearing a set */
#define SCAN_SLOTS  (2 * SHIM_SCAN_LOCAL)

/* room() sizes sets in powers of two up to twice these. */
_Static_assert((SHIM_SCAN_LOCAL & (SHIM_SCAN_LOCAL - 1)) == 0, "SHIM_SCAN_LOCAL a power of two");
_Static_assert((SHIM_SCAN_MAX_WORDS & (SHIM_SCAN_MAX_WORDS - 1)) == 0, "MAX_WORDS a power of two");
_Static_assert(SHIM_SCAN_LOCAL >= 8 && SHIM_SCAN_MAX_WORDS >= SHIM_SCAN_LOCAL, "limits in order");

/* A thread's buffer: cap ids, then a set of 2 * cap slots (cap a power of two). */
struct scan_buf {
    uint32_t cap;
    uint64_t v[];
};

static pthread_key_t buf_key;
static pthread_once_t buf_once = PTHREAD_ONCE_INIT;
static bool buf_key_ok;
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t shared_v[3 * SHIM_SCAN_MAX_WORDS]; /* protected by shared_lock */

static void make_key(void)
{
    buf_key_ok = pthread_key_create(&buf_key, free) == 0;
}

/* Room for the ids and set of `words` words: the thread's buffer, grown if needed; NULL if no
   memory (the thread keeps its smaller buffer). */
static struct scan_buf *thread_buf(uint32_t words)
{
    pthread_once(&buf_once, make_key);
    if (!buf_key_ok)
        return NULL;
    struct scan_buf *b = pthread_getspecific(buf_key);
    if (b && b->cap >= words)
        return b;
    uint32_t cap = SHIM_SCAN_LOCAL;
    while (cap < words)
        cap *= 2;
    struct scan_buf *n = malloc(sizeof *n + 3 * (size_t)cap * sizeof n->v[0]);
    if (!n || pthread_setspecific(buf_key, n) != 0) {
        free(n);
        return NULL;
    }
    free(b);
    n->cap = cap;
    return n;
}

/* Where the ids go, and the set that drops duplicates (NULL: linear search). */
struct dedup {
    uint64_t *ids, *set;
    uint32_t n, mask;
};

static inline __attribute__((always_inline)) void add(struct dedup *d, uint64_t w, bool hashed)
{
    if (w < 4096 || (w >> 48))
        return;
    uint64_t id = shim_registry_find(w);
    if (!id)
        return;
    if (!hashed) {
        for (uint32_t i = 0; i < d->n; i++)
            if (d->ids[i] == id)
                return;
    } else {
        uint32_t h = (uint32_t)((id * 0x9E3779B97F4A7C15ull) >> 32) & d->mask;
        for (; d->set[h]; h = (h + 1) & d->mask)
            if (d->set[h] == id)
                return;
        d->set[h] = id;
    }
    d->ids[d->n++] = id;
}

/* The first `words` words: from the parameter block through the layout, or from buf. */
static inline __attribute__((always_inline)) void
scan_words(struct dedup *d, const struct shim_func *fn, void **params, const unsigned char *buf,
           uint32_t words, bool hashed)
{
    for (uint32_t i = 0; i < words; i++) {
        uint64_t w;
        if (buf) {
            memcpy(&w, buf + 8 * (size_t)i, 8);
        } else {
            const unsigned char *p = params[fn->words[i].param];
            if (!p)
                continue;
            memcpy(&w, p + fn->words[i].offset, 8);
        }
        add(d, w, hashed);
    }
}

/* The CU_LAUNCH_PARAM_BUFFER_POINTER block of extra and its size (NULL if none). */
static const unsigned char *extra_buffer(void **extra, size_t *size)
{
    const unsigned char *buf = NULL;
    *size = 0;
    for (int i = 0; i < 64 && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            buf = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1])
            *size = *(const size_t *)extra[i + 1];
    }
    return buf;
}

/* Points d at room for `words` ids and a cleared set of twice as many slots: on the stack up to
   SHIM_SCAN_LOCAL words, else the thread's buffer, else the shared one (then s->locked). */
static void room(struct shim_scan *s, struct dedup *d, uint64_t *stack_set, uint32_t words)
{
    uint64_t *set = stack_set; /* SCAN_SLOTS slots */
    s->ids = s->local;
    if (words > SHIM_SCAN_LOCAL) {
        struct scan_buf *b = thread_buf(words);
        if (b) {
            s->ids = b->v;
            set = b->v + b->cap; /* 2 * cap slots, cap >= words */
        } else {
            SHIM_LOG_ONCE(SHIM_LOG_WARN, "out of memory for a launch's touched allocations: "
                                         "such launches share one buffer, one at a time");
            pthread_mutex_lock(&shared_lock);
            s->locked = true;
            s->ids = shared_v;
            set = shared_v + SHIM_SCAN_MAX_WORDS;
        }
    }
    uint32_t slots = 16;
    while (slots < 2 * words) /* a power of two, at most what set holds */
        slots *= 2;
    memset(set, 0, slots * sizeof *set);
    *d = (struct dedup){s->ids, set, 0, slots - 1};
}

/* Launches with many words, or a parameter buffer. */
static void scan_more(const struct shim_func *fn, void **params, void **extra, struct shim_scan *s)
{
    const unsigned char *buf = NULL;
    size_t words = fn->nwords;
    if (!params) {
        size_t size = 0;
        buf = extra ? extra_buffer(extra, &size) : NULL;
        words = buf ? size / 8 : 0;
    }
    if (words > SHIM_SCAN_MAX_WORDS) {
        SHIM_LOG_ONCE(SHIM_LOG_WARN,
                      "a launch has more than %u bytes of parameters (CUDA's limit): the rest "
                      "is not scanned",
                      8 * SHIM_SCAN_MAX_WORDS);
        words = SHIM_SCAN_MAX_WORDS;
    }
    struct dedup d = {s->local, NULL, 0, 0};
    if (words <= SCAN_LINEAR) {
        if (buf)
            scan_words(&d, fn, NULL, buf, (uint32_t)words, false);
        else
            scan_words(&d, fn, params, NULL, (uint32_t)words, false);
    } else {
        uint64_t stack_set[SCAN_SLOTS];
        room(s, &d, stack_set, (uint32_t)words);
        if (buf)
            scan_words(&d, fn, NULL, buf, (uint32_t)words, true);
        else
            scan_words(&d, fn, params, NULL, (uint32_t)words, true);
    }
    s->n = d.n;
}

void shim_scan_params(const struct shim_func *fn, void **params, void **extra, struct shim_scan *s)
{
    s->ids = s->local;
    s->locked = false;
    if (params && fn->nwords <= SCAN_LINEAR) { /* the common case: a few words */
        struct dedup d = {s->local, NULL, 0, 0};
        scan_words(&d, fn, params, NULL, fn->nwords, false);
        s->n = d.n;
        return;
    }
    scan_more(fn, params, extra, s);
}

void shim_scan_unlock(void)
{
    pthread_mutex_unlock(&shared_lock);
}
