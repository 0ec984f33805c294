/* next_a.c — test library: asks dlsym(RTLD_NEXT) for a symbol that next_b.so also defines. */
#include <dlfcn.h>

const char *next_probe_name(void);
const char *next_probe_name(void)
{
    return "a";
}

/* Returns what the definition after this library says: "b" when caller identity is kept. */
const char *next_probe_follow(void);
const char *next_probe_follow(void)
{
    const char *(*next)(void) = (const char *(*)(void))dlsym(RTLD_NEXT, "next_probe_name");
    return next ? next() : "none";
}
