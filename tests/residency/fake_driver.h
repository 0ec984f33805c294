/* fake_driver.h — a fake driver seam for the residency manager's unit tests (single-threaded
 * use: events complete when recorded unless held, copies are done at once). */
#ifndef FAKE_DRIVER_H
#define FAKE_DRIVER_H

#include "shim_resid_driver.h"

#define FAKE_GRAN ((size_t)2 << 20)

struct fake_stats {
    uint64_t device_chunks, peak_device_chunks, host_chunks; /* physical handles that exist */
    uint64_t bytes_copied, injected, event_syncs;
    uint64_t waits_on_pending; /* stream waits on events not yet done (the device would wait) */
    uint64_t reserves, maps, unmaps, set_accesses; /* VMM calls made (successful ones) */
    uint64_t records, stream_syncs;                /* events recorded, streams synchronised */
};
extern struct fake_stats fake;
extern const struct resid_driver fake_driver;

/* Forgets every handle, mapping, rule and counter. */
void fake_reset(void);
struct resid_ctx;
/* Frees what a manager that was never started holds on the fake driver: its pooled events, its
   pooled chunks and the table of arena slots (their handles and mappings go with fake_reset).
   For tests that end with such a manager on the stack, so that a leak check sees only leaks. */
void fake_ctx_forget(struct resid_ctx *r);
/* The Nth later call of entry (a field name of struct resid_driver) fails with rc; with
   sticky every call from then on. Up to four entries have rules at once; a new rule for an
   entry replaces its old one; entry NULL clears every rule. */
void fake_fail(const char *entry, unsigned long nth, bool sticky, CUresult rc);
/* on: events recorded from now on stay not done; off: every held event completes. */
void fake_hold_events(bool on);
/* Events recorded from now on complete at once; those held so far stay not done (until
   fake_hold_events(false), or an event_sync of one). */
void fake_hold_keep(void);
/* Every later successful map call takes ns of wall time first (0: none), as a real driver's
   VMM calls cost the host. */
void fake_slow_map(uint64_t ns);
/* closed: every later map call waits (at most 10 s) until the gate opens again, counted in
   fake_in_map meanwhile, so a test can see what other threads may do during a remap. */
void fake_gate_map(bool closed);
extern _Atomic int fake_in_map;
/* The bytes behind a mapped address (device or host physical memory), or NULL if unmapped. */
uint8_t *fake_bytes(CUdeviceptr va);
/* Whether va is mapped onto host-located memory. */
bool fake_on_host(CUdeviceptr va);

#endif
