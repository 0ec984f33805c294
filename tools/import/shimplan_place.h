/* tools/import/shimplan_place.h — what shim-plan prints of the three placements (device, moved on
 * a schedule, host-resident) when host placement is allowed (planner/plan.h, plan_opts). */
#ifndef SHIMPLAN_PLACE_H
#define SHIMPLAN_PLACE_H

#include "plan.h"

#include <stdbool.h>

/* Prints, in text (lines "placement: ..." and one "KEY: VALUE" line per figure) or as JSON
 * fields (", \"KEY\": VALUE" each), what each placement of plan p of model m holds: device-resident
 * bytes, moved allocations and bytes per step, host-resident allocations and bytes (in GiB and as
 * a share of peak), bytes read through the link per step; then libshim's host_resident setting
 * that carries the plan out, and, where its sizes match more allocations than the plan keeps on
 * the host, the step simulated for budget with all of them there (what libshim runs with it). A
 * figure that cannot be computed is said so; nothing fails. */
void shimplan_place_print(const plan_model *m, const plan *p, const plan_stats *st, uint64_t peak,
                          uint64_t budget, bool json);

/* The header line of the proposals' placement table (text), before any shimplan_place_proposal. */
void shimplan_place_proposals_head(void);

/* One proposal's placement: a "proposal_placement ..." line (text), or its JSON fields. */
void shimplan_place_proposal(const plan_proposal *pp, bool json);

#endif
