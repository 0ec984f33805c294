/* simgpu_stats.c — statistics through the API and as the SIMGPU_STATS JSON file. */
#include "simgpu_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int simgpu_get_stats(struct simgpu_stats *out)
{
    if (!out)
        return -1;
    sim_ensure_init();
    pthread_mutex_lock(&sim.lock);
    *out = sim.stats;
    pthread_mutex_unlock(&sim.lock);
    return 0;
}

void simgpu_reset_peak(void)
{
    pthread_mutex_lock(&sim.lock);
    sim.stats.window_peak_bytes = sim.stats.device_bytes;
    for (int d = 0; d < sim.ndevices; d++)
        sim.dev[d].window_peak = sim.dev[d].bytes;
    pthread_mutex_unlock(&sim.lock);
}

/* "KEY": {entry: count, ...} of the nonzero counts of counts[] (one per entry point), read
   under the simulator's lock; then trailer. */
static void write_counts(FILE *f, const char *key, const unsigned long *counts, const char *trailer)
{
    unsigned long n[SIM_E_COUNT];
    pthread_mutex_lock(&sim.lock);
    memcpy(n, counts, sizeof n);
    pthread_mutex_unlock(&sim.lock);
    fprintf(f, "  \"%s\": {", key);
    const char *sep = "";
    for (int e = 0; e < SIM_E_COUNT; e++) {
        if (n[e]) {
            fprintf(f, "%s\"%s\": %lu", sep, sim_entry_name(e), n[e]);
            sep = ", ";
        }
    }
    fprintf(f, "}%s", trailer);
}

/* "devices": one object per device, keys as struct simgpu_device_stats. */
static void write_devices(FILE *f)
{
    fputs("  \"devices\": [", f);
    for (int d = 0; d < sim.ndevices; d++) {
        struct simgpu_device_stats s;
        simgpu_get_device_stats(d, &s);
        fprintf(f,
                "%s{\"capacity_bytes\": %llu, \"device_bytes\": %llu, "
                "\"peak_device_bytes\": %llu, \"window_peak_bytes\": %llu, \"kernels\": %llu}",
                d ? ", " : "", (unsigned long long)s.capacity_bytes,
                (unsigned long long)s.device_bytes, (unsigned long long)s.peak_device_bytes,
                (unsigned long long)s.window_peak_bytes, (unsigned long long)s.kernels);
    }
    fputs("],\n", f);
}

/* "threads": with per-thread host clocks (simgpu_clock.c), each host thread that called the
   driver, in the order of its first call: its clock, its own work, its VMM time, and what the
   driver-wide lock held it back. */
static void write_threads(FILE *f)
{
    pthread_mutex_lock(&sim.lock);
    fputs("  \"threads\": [", f);
    for (unsigned i = 0; i < sim.nthreads; i++)
        for (const struct sim_thread *t = sim.threads; t; t = t->next)
            if (t->order == i)
                fprintf(f,
                        "%s\n    {\"vt_us\": %.3f, \"host_us\": %.3f, \"vmm_us\": %.3f, "
                        "\"lock_us\": %.3f}",
                        i ? "," : "", t->vt, t->host_us, t->vmm_us, t->lock_us);
    fputs("],\n", f);
    pthread_mutex_unlock(&sim.lock);
}

int simgpu_write_stats(const char *path)
{
    struct simgpu_stats s;
    if (!path || simgpu_get_stats(&s) != 0) {
        errno = EINVAL;
        return -1;
    }
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f,
            "{\n  \"capacity_bytes\": %llu,\n  \"device_bytes\": %llu,\n"
            "  \"peak_device_bytes\": %llu,\n  \"window_peak_bytes\": %llu,\n"
            "  \"host_mapped_bytes\": %llu,\n"
            "  \"bytes_h2d\": %llu,\n  \"bytes_d2h\": %llu,\n  \"bytes_d2d\": %llu,\n"
            "  \"copies\": %llu,\n  \"kernels\": %llu,\n  \"zero_copy_kernels\": %llu,\n"
            "  \"zero_copy_pages\": %llu,\n  \"illegal_accesses\": %llu,\n"
            "  \"unmap_hazards\": %llu,\n  \"injected_failures\": %llu,\n"
            "  \"device_time_us\": %.3f,\n  \"bytes_peer\": %llu,\n  \"vmm_host_us\": %.3f,\n"
            "  \"vmm_serial_us\": %.3f,\n  \"vmm_handles\": %llu,\n  \"vmm_wait_us\": %.3f,\n"
            "  \"host_us_per_launch\": %.3f,\n  \"host_launch_us\": %.3f,\n"
            "  \"host_driver_us\": %.3f,\n  \"host_caller_us\": %.3f,\n"
            "  \"host_caller_calls\": %llu,\n",
            (unsigned long long)s.capacity_bytes, (unsigned long long)s.device_bytes,
            (unsigned long long)s.peak_device_bytes, (unsigned long long)s.window_peak_bytes,
            (unsigned long long)s.host_mapped_bytes, (unsigned long long)s.bytes_h2d,
            (unsigned long long)s.bytes_d2h, (unsigned long long)s.bytes_d2d,
            (unsigned long long)s.copies, (unsigned long long)s.kernels,
            (unsigned long long)s.zero_copy_kernels, (unsigned long long)s.zero_copy_pages,
            (unsigned long long)s.illegal_accesses, (unsigned long long)s.unmap_hazards,
            (unsigned long long)s.injected_failures, s.device_time_us,
            (unsigned long long)s.bytes_peer, s.vmm_host_us, s.vmm_serial_us,
            (unsigned long long)s.vmm_handles, s.vmm_wait_us, s.host_us_per_launch,
            s.host_launch_us, s.host_driver_us, s.host_caller_us,
            (unsigned long long)s.host_caller_calls);
    write_devices(f);
    write_threads(f);
    /* "calls": every entry point's calls (successful or not), so that tests can check which
       driver calls a run made, such as VMM calls per step; "caller_calls": those matching
       SIMGPU_FAIL_CALLER. */
    write_counts(f, "calls", sim.calls, ",\n");
    write_counts(f, "caller_calls", sim.caller_calls, "");
    fputs("\n}\n", f);
    return fclose(f) == 0 ? 0 : -1;
}

void sim_stats_atexit(void)
{
    if (simgpu_write_stats(sim.stats_path) != 0)
        sim_diag("cannot write SIMGPU_STATS file %s", sim.stats_path);
}
