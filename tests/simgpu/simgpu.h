/* simgpu.h — test-facing API of the simulated CUDA device (libcuda.so.1 in build/simgpu/).
 *
 * The simulator implements the CUDA driver API of <cuda.h> on the host: device
 * memory lives in a reserved host address range, kernels are host functions
 * registered here, streams run on worker threads, and time is virtual and
 * deterministic. These functions are exported by the simulated libcuda.so.1
 * in addition to the driver API; link with -lcuda from build/simgpu.
 *
 * Environment (read once, at the first driver call):
 *   SIMGPU_DEVICES   number of devices, 1 to 16; default 1. They share one unified
 *                    address space; each has its own memory, engines, legacy default
 *                    stream and primary context (see simgpu_devices.c)
 *   SIMGPU_MEMORY    device capacity ("2GiB", "512MiB", bytes); default 80GiB. One
 *                    size for every device, or a comma list with one per device
 *   SIMGPU_PEER_GBPS bandwidth of copies between devices; default SIMGPU_H2D_GBPS
 *   SIMGPU_H2D_GBPS  host-to-device link bandwidth in GB/s (1e9 B/s); default 25
 *   SIMGPU_D2H_GBPS  device-to-host link bandwidth in GB/s; default 25
 *   SIMGPU_FAIL      fault injection, comma-separated "ENTRY:N[:sticky]": the Nth
 *                    call of driver entry point ENTRY (exact exported name, e.g.
 *                    cuMemCreate or cuMemAlloc_v2) fails; with :sticky every call
 *                    from the Nth on fails
 *   SIMGPU_FAIL_CALLER  a substring: SIMGPU_FAIL rules apply only to calls whose
 *                    immediate caller's shared object path (dladdr of the entry
 *                    point's return address; the program's is its argv[0])
 *                    contains it, and "ENTRY:N" counts only those calls. Other
 *                    calls are still counted by simgpu_calls() but never fail.
 *                    A caller that tail-calls the entry (return real_fn(...);
 *                    compiled as a jump) leaves its own caller's address, so
 *                    the call is attributed one level up.
 *   SIMGPU_HOST_VMM  0: the device reports no host-located VMM support (device
 *                    attributes 141 and 145 are 0) and cuMemCreate rejects host
 *                    locations
 *   SIMGPU_JITTER    a seed: stream workers sleep a pseudo-random 0–200 µs of
 *                    real time before each command, reordering real execution
 *                    across streams and the host (virtual time is unaffected)
 *   SIMGPU_STATS     path of a JSON file with the statistics, written at exit
 *                    (the struct's fields, plus "caller_calls": the nonzero
 *                    SIMGPU_FAIL_CALLER matched-call counts by entry name)
 *   SIMGPU_QUIET     1: no diagnostics on stderr (they are still counted)
 *
 * Modules and libraries (cuModuleLoadData, cuModuleLoad, cuModuleGetFunction,
 * cuModuleUnload; cuLibraryLoadData, cuLibraryGetKernel, cuKernelGetFunction,
 * cuLibraryUnload): an image is the text "simgpu-module:NAME[,NAME...]"
 * naming kernels already registered here. Each load gives its kernels fresh
 * function handles; unloading frees them, and the next load reuses the most
 * recently freed handle values first, as a real driver may.
 *
 * build/simgpu/old/libcuda.so.1 is the same driver without the entry points
 * named by SIMGPU_OLD_HIDDEN in module.mk, as an older driver: neither dlsym
 * nor cuGetProcAddress finds them.
 */
#ifndef SIMGPU_H
#define SIMGPU_H

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A kernel body: params[i] points at the bytes of parameter i, exactly as the
   kernelParams array of cuLaunchKernel. It runs on a stream worker thread. */
typedef void (*simgpu_body)(void **params);

/* Registers a host function as a kernel with the given parameter sizes (bytes;
   each parameter is aligned to the largest power of two dividing its size, at
   most 8). The returned CUfunction works with cuLaunchKernel and
   cuFuncGetParamInfo; `body` itself works as the func argument of
   cudaLaunchKernel. Registering the same body again returns the same function.
   Returns NULL when name or body is NULL, nparams is negative or above 64, or
   memory is exhausted. */
CUfunction simgpu_register(const char *name, simgpu_body body, int nparams,
                           const size_t *param_sizes);

/* Virtual device time of each later launch of f, in microseconds (default 1).
   The cost is taken when a launch is submitted: launches already queued keep
   theirs, so a program may give each launch of one function its own cost.
   Negative or non-finite values are ignored. */
void simgpu_set_cost(CUfunction f, double usec);

/* The calling thread spends usec microseconds of its own host work now (per-thread host clocks,
   simgpu_clock.c: SIMGPU_HOST_US_PER_LAUNCH or SIMGPU_HOST_CALLER must be set, 0 will do). A
   program charges here what it does between its driver calls, before an interposer sees the
   next one: SIMGPU_HOST_US_PER_LAUNCH can only charge it where the launch reaches the driver.
   Returns 0, or -1 without per-thread clocks or for a negative or non-finite usec. */
int simgpu_host_work(double usec);

/* The function registered for body, or NULL. */
CUfunction simgpu_function_of(simgpu_body body);

/* Statistics since the first driver call (all byte counts are exact). */
struct simgpu_stats {
    uint64_t capacity_bytes;    /* SIMGPU_MEMORY, summed over devices */
    uint64_t device_bytes;      /* device-located physical bytes now (all devices) */
    uint64_t peak_device_bytes; /* high-water mark of device_bytes over the whole run */
    uint64_t window_peak_bytes; /* high-water mark since the last simgpu_reset_peak() */
    uint64_t host_mapped_bytes; /* host-located physical bytes now (VMM) */
    uint64_t bytes_h2d;         /* copied host to device (by where bytes live: a device
                                   address mapped to host-located memory is host) */
    uint64_t bytes_d2h;         /* copied device to host */
    uint64_t bytes_d2d;         /* copied device to device */
    uint64_t copies;            /* copy commands executed (a copy spanning device- and
                                   host-located mappings is one per piece) */
    uint64_t kernels;           /* kernels executed */
    uint64_t zero_copy_kernels; /* kernels that touched host-located memory */
    uint64_t zero_copy_pages;   /* distinct 4 KiB pages of host-located memory
                                   touched, summed over kernels */
    uint64_t illegal_accesses;  /* kernels or copies that touched unmapped memory */
    uint64_t unmap_hazards;     /* cuMemUnmap of a range that submitted work not yet
                                   known complete by the host touches */
    uint64_t injected_failures; /* calls failed by SIMGPU_FAIL / simgpu_fail */
    double device_time_us;      /* virtual time of the latest completed command */
    uint64_t bytes_peer;        /* copied between two devices (cuMemcpyPeer, or any copy
                                   whose ends live on different devices) */
    double vmm_host_us;         /* host time charged for VMM calls (SIMGPU_VMM_HOST_COST),
                                   summed over the threads that made them */
    double vmm_serial_us;       /* what VMM calls moved the program's shared host clock: all
                                   of vmm_host_us under SIMGPU_VMM_SERIAL=1, else the time of
                                   threads that then submitted or synchronised; with per-thread
                                   clocks (SIMGPU_HOST_US_PER_LAUNCH), the time threads waited
                                   for the driver-wide lock (SIMGPU_VMM_SERIAL=1) */
    uint64_t vmm_handles;       /* physical handles the charged VMM calls covered */
    double vmm_wait_us;         /* host time submissions waited for a mapping another thread
                                   made accessible later (SIMGPU_VMM_SERIAL=0) */
    double host_us_per_launch;  /* SIMGPU_HOST_US_PER_LAUNCH as applied (0: none) */
    double host_launch_us;      /* the program's own host work charged (before launches, and
                                   by simgpu_host_work) */
    double host_driver_us;      /* host time charged for the driver's own calls (copies,
                                   event records; VMM calls are vmm_host_us) */
    double host_caller_us;      /* host time charged to SIMGPU_HOST_CALLER's calls */
    uint64_t host_caller_calls; /* the calls charged so */
};

/* Fills *out with the current statistics. Returns 0, or -1 if out is NULL. */
int simgpu_get_stats(struct simgpu_stats *out);

/* Memory and work of one device (SIMGPU_DEVICES); struct simgpu_stats sums all devices. */
struct simgpu_device_stats {
    uint64_t capacity_bytes;    /* its SIMGPU_MEMORY */
    uint64_t device_bytes;      /* physical bytes located on it now */
    uint64_t peak_device_bytes; /* high-water mark of device_bytes over the whole run */
    uint64_t window_peak_bytes; /* high-water mark since the last simgpu_reset_peak() */
    uint64_t kernels;           /* kernels executed on its streams */
};

/* Fills *out with device dev's statistics. Returns 0, or -1 if out is NULL or dev is not
   an ordinal. */
int simgpu_get_device_stats(int dev, struct simgpu_device_stats *out);

/* Number of simulated devices (SIMGPU_DEVICES), 0 if the simulator cannot start. */
int simgpu_device_count(void);

/* Starts a new window: window_peak_bytes becomes the current device_bytes.
   peak_device_bytes (the whole run's, also in the SIMGPU_STATS file) is kept. */
void simgpu_reset_peak(void);

/* Writes the statistics as a JSON object (keys as the struct fields) to path.
   Returns 0, or -1 with errno set. */
int simgpu_write_stats(const char *path);

/* Makes the nth later call (1 = the next one) of driver entry point `entry`
   fail, and with sticky every call from then on; nth 0 clears the rule.
   Returns 0, or -1 for an unknown entry name. */
int simgpu_fail(const char *entry, unsigned long nth, int sticky);

/* How many times entry point `entry` has been called (0 for unknown names). */
unsigned long simgpu_calls(const char *entry);

/* Restricts fault injection to calls from one caller, as SIMGPU_FAIL_CALLER:
   only calls whose immediate caller's shared object path contains substring
   are matched against the rules and counted by simgpu_caller_calls(); NULL or
   "" removes the restriction. Restarts the matched-call counts at 0; rules set
   afterwards with simgpu_fail() count matched calls from the next one, so set
   the caller before the rules. Returns 0, or -1 when substring is 256 bytes or
   longer (nothing changes). */
int simgpu_fail_caller(const char *substring);

/* Calls of entry point `entry` that matched the caller restriction since it
   was last set (0 without one, or for unknown names). */
unsigned long simgpu_caller_calls(const char *entry);

#ifdef __cplusplus
}
#endif

#endif
