/* shim_dlsym.c — door 2: dlsym on the driver returns the shim's hooks.
 *
 * The exported dlsym is a small assembly trampoline. It asks shim_dlsym_lookup
 * whether to answer with a hook; if not, it jumps (not calls) to the real
 * dlsym, so the real one sees the program's return address: dlsym(RTLD_NEXT, x)
 * keeps meaning "next after the caller", not "next after libshim".
 *
 * A hooked name is answered with the hook when the caller looks it up with
 * RTLD_NEXT or RTLD_DEFAULT, or on a handle where the real dlsym finds exactly
 * the driver's function (the driver's own handle, or a library depending on
 * it). Anything else gets the real answer. */
#include "shim_hooks.h"

#include <dlfcn.h>

/* The real dlsym the trampoline jumps to; set by shim_dlsym_lookup before the
   first forward (a library constructor may call dlsym before ours run). */
void *shim_dlsym_next __attribute__((used));

#define NOT_INSTRUMENTED __attribute__((no_sanitize("address", "thread", "undefined")))

/* The real dlsym, without instrumentation: sanitizer runtimes call dlsym while
   they initialise, before instrumented code may run. */
NOT_INSTRUMENTED static void *find_next(void)
{
    static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.17", "GLIBC_2.2.5"};
    void *p = NULL;
    for (size_t i = 0; i < sizeof versions / sizeof versions[0] && !p; i++)
        p = dlvsym(RTLD_NEXT, "dlsym", versions[i]);
    return p;
}

static void *lookup_cu(void *handle, const char *name)
{
    if (shim_inside)
        return NULL;
    void *hook = shim_hook_by_name(name);
    if (!hook || !shim_real_ready())
        return NULL;
    if (handle == RTLD_NEXT || handle == RTLD_DEFAULT)
        return hook;
    void *found = shim_real_dlsym(handle, name);
    return found && shim_hook_for_real(found) == hook ? hook : NULL;
}

/* Called by the trampoline: the hook to return, or NULL to forward to the real
   dlsym. Names that cannot be driver entry points leave without running any
   instrumented code. */
NOT_INSTRUMENTED void *shim_dlsym_lookup(void *handle, const char *name) __attribute__((used));

NOT_INSTRUMENTED void *shim_dlsym_lookup(void *handle, const char *name)
{
    if (!__atomic_load_n(&shim_dlsym_next, __ATOMIC_ACQUIRE))
        __atomic_store_n(&shim_dlsym_next, find_next(), __ATOMIC_RELEASE);
    if (!name || name[0] != 'c' || name[1] != 'u')
        return NULL;
    return lookup_cu(handle, name);
}

#if defined(__x86_64__)
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        "    push %rdi\n"
        "    push %rsi\n"
        "    sub $8, %rsp\n"
        "    call shim_dlsym_lookup\n"
        "    add $8, %rsp\n"
        "    pop %rsi\n"
        "    pop %rdi\n"
        "    test %rax, %rax\n"
        "    jnz 1f\n"
        "    jmp *shim_dlsym_next(%rip)\n"
        "1:  ret\n"
        ".size dlsym, .-dlsym\n");
#elif defined(__aarch64__)
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, %function\n"
        "dlsym:\n"
        "    stp x29, x30, [sp, #-32]!\n"
        "    mov x29, sp\n"
        "    stp x0, x1, [sp, #16]\n"
        "    bl shim_dlsym_lookup\n"
        "    cbnz x0, 1f\n"
        "    ldp x0, x1, [sp, #16]\n"
        "    ldp x29, x30, [sp], #32\n"
        "    adrp x16, shim_dlsym_next\n"
        "    ldr x16, [x16, :lo12:shim_dlsym_next]\n"
        "    br x16\n"
        "1:  ldp x29, x30, [sp], #32\n"
        "    ret\n"
        ".size dlsym, .-dlsym\n");
#else
#error "libshim's dlsym trampoline supports x86-64 and AArch64"
#endif
