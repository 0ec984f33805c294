# shim/ — the preload library, build/libshim.so, in rooms: each folder has one seam header and
# may use only the rooms after it in SHIM_ROOMS (and conf/, planner/, the CUDA headers, libc).
#   hooks/  the intercepted entry points, one file per API family (seam shim_hooks.h)
#   plan/   the in-process planner: recording the step, making the plan (shim_plan.h)
#   resid/  the residency manager (shim_resid.h; its driver seam shim_resid_driver.h)
#   core/   global state, the resolver, log, registry, launch scan, steps, timing (shim_core.h)
#   trace/  the trace writer and the path expander (shim_trace.h), $(SHIM_TRACE_LIB)
# shim/shim_main.c alone may see every room: configuration, start, fork and exit.
# Each room's include path holds only itself and the rooms after it, so an include against the
# order does not compile; tests/shim/test_rooms.sh checks the objects' symbols the same way.
# libshim.so has no DT_NEEDED on libcuda or libcudart and exports only the hooks (cu*) and
# dlsym (shim/shim.map).

SHIM_ROOMS := hooks plan resid core trace
shim_room_inc = $(foreach r,$(wordlist $(1),5,$(SHIM_ROOMS)),-Ishim/$(r))
SHIM_INC_ALL := $(call shim_room_inc,1)
shim_hooks_CFLAGS := $(CUDA_INC) $(call shim_room_inc,1) -Iconf -fvisibility=hidden
shim_plan_CFLAGS := $(CUDA_INC) $(call shim_room_inc,2) -Iconf -Iplanner -fvisibility=hidden
shim_core_CFLAGS := $(CUDA_INC) $(call shim_room_inc,4) -Iconf -fvisibility=hidden
shim_trace_CFLAGS := $(call shim_room_inc,5) -fvisibility=hidden
shim_CFLAGS := $(CUDA_INC) $(SHIM_INC_ALL) -Iconf -Iplanner -fvisibility=hidden

# The residency room is rooms of its own, one level down (docs/HOUSE.md), each using only those
# after it in RESID_ROOMS: its entry points (shim/resid/ itself, seam shim_resid.h), then
# budget/ (making room), moves/ (copies and remaps), pools/ (physical chunks), state/ (the
# manager's state and the state machine), driver/ (the seam to the driver). Below them all: the
# core, the trace writer, conf/ and planner/rules/ (the rules of how libshim holds memory).
# The rooms above residency include only shim/resid/ (its seam).
RESID_ROOMS := . budget moves pools state driver
resid_room_inc = $(foreach r,$(wordlist $(1),6,$(RESID_ROOMS)),-Ishim/resid/$(r)) \
                 $(call shim_room_inc,4) -Iconf -Iplanner
shim_resid_CFLAGS := $(CUDA_INC) $(call resid_room_inc,1) -fvisibility=hidden
shim_resid_budget_CFLAGS := $(CUDA_INC) $(call resid_room_inc,2) -fvisibility=hidden
shim_resid_moves_CFLAGS := $(CUDA_INC) $(call resid_room_inc,3) -fvisibility=hidden
shim_resid_pools_CFLAGS := $(CUDA_INC) $(call resid_room_inc,4) -fvisibility=hidden
shim_resid_state_CFLAGS := $(CUDA_INC) $(call resid_room_inc,5) -fvisibility=hidden
shim_resid_driver_CFLAGS := $(CUDA_INC) $(call resid_room_inc,6) -fvisibility=hidden

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

$(SHIM_LIB): $(SHIM_OBJS) $(SHIM_TRACE_LIB) $(CONF_LIB) $(PLANNER_LIB) shim/shim.map
	$(CC) -shared -Wl,--version-script=shim/shim.map -Wl,-z,defs -o $@ $(SHIM_OBJS) \
		$(SHIM_TRACE_LIB) $(CONF_LIB) $(PLANNER_LIB) $(LDFLAGS_ALL) -ldl -lpthread -lm

ALL_TARGETS += $(SHIM_TRACE_LIB) $(SHIM_LIB)
