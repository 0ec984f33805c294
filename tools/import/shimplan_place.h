/* tools/import/shimplan_place.h — what shim-plan prints of the three placements (device, moved on
 * a schedule, host-resident) when host placement is allowed (planner/plan.h, plan_opts). */
#ifndef SHIMPLAN_PLACE_H
#define SHIMPLAN_PLACE_H

#include "plan.h"

#include <stdbool.h>

/* Prints, in text (lines "placement: ..." and one "KEY: VALUE" line per figure) or as JSON
 * fields (", \"KEY\": VALUE" each), what each placement of plan p of model m holds: device-resident
 * bytes, moved allocations and bytes per step, host-resident allocations and bytes (in GiB and as
 * a share of peak), bytes read through the link per step. Cannot fail. */
void shimplan_place_print(const plan_model *m, const plan *p, const plan_stats *st, uint64_t peak,
                          bool json);

/* The header line of the proposals' placement table (text), before any shimplan_place_proposal. */
void shimplan_place_proposals_head(void);

/* One proposal's placement: a "proposal_placement ..." line (text), or its JSON fields. */
void shimplan_place_proposal(const plan_proposal *pp, bool json);

#endif
