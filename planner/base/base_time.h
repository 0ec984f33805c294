/* planner/base/base_time.h — the base room's one deadline: the absolute time a given number of
 * nanoseconds from now on a clock, as pthread_cond_timedwait takes it, normalised so that its
 * nanoseconds stay below a second (a timespec with tv_nsec of a second or more is refused by
 * pthread_cond_timedwait with EINVAL, which would turn a bounded wait into a spin).
 *
 * Who may include it: every folder of the project, as base_array.h. It includes only libc and
 * holds no state; header-only, so that no binary links anything more for it. */
#ifndef BASE_TIME_H
#define BASE_TIME_H

#include <stdint.h>
#include <time.h>

#define BASE_NS_PER_SEC 1000000000L

/* The time ns nanoseconds after now on clock (CLOCK_REALTIME for a condition variable made with
   the default attributes, CLOCK_MONOTONIC for one whose attributes say so). Its tv_nsec is in
   [0, 1e9). A clock_gettime that fails (an unknown clock) gives ns after the clock's zero: a
   deadline in the past, so a wait on it returns at once and never hangs. */
static inline struct timespec base_deadline_after(clockid_t clock, uint64_t ns)
{
    struct timespec t = {0, 0};
    (void)clock_gettime(clock, &t);
    uint64_t nsec = (uint64_t)t.tv_nsec + ns % (uint64_t)BASE_NS_PER_SEC;
    t.tv_sec += (time_t)(ns / (uint64_t)BASE_NS_PER_SEC + nsec / (uint64_t)BASE_NS_PER_SEC);
    t.tv_nsec = (long)(nsec % (uint64_t)BASE_NS_PER_SEC);
    return t;
}

#endif
