# shim/ — the preload library, build/libshim.so, in rooms (docs/HOUSE.md): each folder has one
# seam header and may use only the rooms its HOUSE_ROOMS entry names (and the CUDA headers, libc;
# planner/base/, the containers, is below every room):
#   hooks/  the intercepted entry points, one file per API family (seam shim_hooks.h)
#   plan/   the in-process planner: studying the step, making the plan (shim_plan.h)
#   resid/  the residency manager (shim_resid.h), rooms of its own one level down: its entry
#           points (resid/ itself), budget/ (making room), moves/ (copies and remaps), pools/
#           (physical chunks), state/ (the manager's state, the state machine), driver/ (the
#           seam to the driver); nothing outside resid/ sees the rooms inside it
#   core/   global state, the resolver, log, registry, launch scan, steps, timing (shim_core.h)
#   trace/  the trace writer and the path expander (shim_trace.h), $(SHIM_TRACE_LIB)
# shim/shim_main.c alone may see every room above residency's inside: configuration, start, fork
# and exit. Each room's include path holds only itself and the rooms it uses, so an include
# against the order does not compile; tests/house/test_rooms.sh checks the objects' symbols the
# same way. libshim.so has no DT_NEEDED on libcuda or libcudart and exports only the hooks (cu*)
# and dlsym (shim/shim.map).
RESID_INSIDE := shim/resid/budget,shim/resid/moves,shim/resid/pools,shim/resid/state,shim/resid/driver
HOUSE_ROOMS += shim:shim/hooks,shim/plan,shim/resid,shim/core,shim/trace,planner,planner/rules,planner/base,conf \
    shim/hooks:shim/plan,shim/resid,shim/core,shim/trace,planner/rules,planner/base,conf \
    shim/plan:shim/resid,shim/core,shim/trace,planner,planner/rules,planner/base,conf \
    shim/resid:$(RESID_INSIDE),shim/core,shim/trace,planner/rules,planner/base,conf \
    shim/resid/budget:shim/resid/moves,shim/resid/pools,shim/resid/state,shim/resid/driver,shim/core,shim/trace,planner/rules,planner/base,conf \
    shim/resid/moves:shim/resid/pools,shim/resid/state,shim/resid/driver,shim/core,shim/trace,planner/rules,planner/base,conf \
    shim/resid/pools:shim/resid/state,shim/resid/driver,shim/core,shim/trace,planner/rules,planner/base,conf \
    shim/resid/state:shim/resid/driver,shim/core,shim/trace,planner/rules,planner/base,conf \
    shim/resid/driver:shim/core,shim/trace,planner/rules,planner/base,conf \
    shim/core:shim/trace,planner/rules,planner/base,conf \
    shim/trace:planner/rules,planner/base
shim_room_cflags = $(if $(filter shim/trace,$(1)),,$(CUDA_INC)) $(call room_inc,$(1)) -fvisibility=hidden
shim_CFLAGS = $(call shim_room_cflags,shim)
shim_hooks_CFLAGS = $(call shim_room_cflags,shim/hooks)
shim_plan_CFLAGS = $(call shim_room_cflags,shim/plan)
shim_resid_CFLAGS = $(call shim_room_cflags,shim/resid)
shim_resid_budget_CFLAGS = $(call shim_room_cflags,shim/resid/budget)
shim_resid_moves_CFLAGS = $(call shim_room_cflags,shim/resid/moves)
shim_resid_pools_CFLAGS = $(call shim_room_cflags,shim/resid/pools)
shim_resid_state_CFLAGS = $(call shim_room_cflags,shim/resid/state)
shim_resid_driver_CFLAGS = $(call shim_room_cflags,shim/resid/driver)
shim_core_CFLAGS = $(call shim_room_cflags,shim/core)
shim_trace_CFLAGS = $(call shim_room_cflags,shim/trace)

shim_room_objs = $(patsubst %.c,$(BUILD)/%.o,$(sort $(wildcard shim/$(1)/*.c)))
SHIM_HOOKS_OBJS := $(call shim_room_objs,hooks)
SHIM_PLAN_OBJS := $(call shim_room_objs,plan)
# Each residency room's objects, and each with the rooms below it (what a unit test of that room
# links: tests/residency/module.mk).
RESID_FRONT_OBJS := $(call shim_room_objs,resid)
RESID_BUDGET_OBJS := $(call shim_room_objs,resid/budget)
RESID_MOVES_OBJS := $(call shim_room_objs,resid/moves)
RESID_POOLS_OBJS := $(call shim_room_objs,resid/pools)
RESID_STATE_OBJS := $(call shim_room_objs,resid/state)
RESID_DRIVER_OBJS := $(call shim_room_objs,resid/driver)
RESID_BELOW_STATE := $(RESID_STATE_OBJS) $(RESID_DRIVER_OBJS)
RESID_BELOW_POOLS := $(RESID_POOLS_OBJS) $(RESID_BELOW_STATE)
RESID_BELOW_MOVES := $(RESID_MOVES_OBJS) $(RESID_BELOW_POOLS)
RESID_BELOW_BUDGET := $(RESID_BUDGET_OBJS) $(RESID_BELOW_MOVES)
SHIM_RESID_OBJS := $(RESID_FRONT_OBJS) $(RESID_BELOW_BUDGET)
SHIM_CORE_OBJS := $(call shim_room_objs,core)
SHIM_TRACE_OBJS := $(call shim_room_objs,trace)
SHIM_OBJS := $(BUILD)/shim/shim_main.o $(SHIM_HOOKS_OBJS) $(SHIM_PLAN_OBJS) $(SHIM_RESID_OBJS) \
             $(SHIM_CORE_OBJS)
SHIM_LIB := $(BUILD)/libshim.so

# The trace writer is an archive of its own: the trace tests and trace_gen link it alone.
$(SHIM_TRACE_LIB): $(SHIM_TRACE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

$(SHIM_LIB): $(SHIM_OBJS) $(SHIM_TRACE_LIB) $(CONF_LIB) $(PLANNER_LIB) $(BASE_LIB) shim/shim.map
	$(CC) -shared -Wl,--version-script=shim/shim.map -Wl,-z,defs -o $@ $(SHIM_OBJS) \
		$(SHIM_TRACE_LIB) $(CONF_LIB) $(PLANNER_LIB) $(BASE_LIB) $(LDFLAGS_ALL) -ldl -lpthread -lm

ALL_TARGETS += $(SHIM_TRACE_LIB) $(SHIM_LIB)
