/* next_prog.c — dlsym(RTLD_NEXT) from a library must find the definition after that library,
 * also when libshim's dlsym override sits in between (the caller identity is preserved). */
#include <stdio.h>
#include <string.h>

const char *next_probe_follow(void);

int main(void)
{
    const char *got = next_probe_follow();
    int ok = strcmp(got, "b") == 0;
    printf("%s - dlsym(RTLD_NEXT) from a library finds the next definition (got \"%s\")\n",
           ok ? "ok" : "not ok", got);
    return ok ? 0 : 1;
}
