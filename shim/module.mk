# shim/ — the preload library, build/libshim.so, in rooms: each folder has one seam header and
# may use only the rooms after it in SHIM_ROOMS (and conf/, planner/, planner/base/, the CUDA
# headers, libc).
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
shim_hooks_CFLAGS := $(CUDA_INC) $(call shim_room_inc,1) -Iconf -Iplanner/base -fvisibility=hidden
shim_plan_CFLAGS := $(CUDA_INC) $(call shim_room_inc,2) -Iconf -Iplanner -Iplanner/base \
                    -fvisibility=hidden
shim_resid_CFLAGS := $(CUDA_INC) $(call shim_room_inc,3) -Iconf -Iplanner -Iplanner/base \
                     -fvisibility=hidden
shim_core_CFLAGS := $(CUDA_INC) $(call shim_room_inc,4) -Iconf -Iplanner/base -fvisibility=hidden
shim_trace_CFLAGS := $(call shim_room_inc,5) -Iplanner/base -fvisibility=hidden
shim_CFLAGS := $(CUDA_INC) $(SHIM_INC_ALL) -Iconf -Iplanner -Iplanner/base -fvisibility=hidden

shim_room_objs = $(patsubst %.c,$(BUILD)/%.o,$(sort $(wildcard shim/$(1)/*.c)))
SHIM_HOOKS_OBJS := $(call shim_room_objs,hooks)
SHIM_PLAN_OBJS := $(call shim_room_objs,plan)
SHIM_RESID_OBJS := $(call shim_room_objs,resid)
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
