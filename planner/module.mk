# planner/module.mk — the swap planner, pure C: $(BUILD)/planner/libplanner.a.
# Every planner/plan_*.c belongs to the library; planner/plan.h is its one public header.
# Sizes are read with the grammar libshim's options use: conf/conf_bytes.c (libc only) is a
# member of the library too, so that everything linking the planner has it; linked beside
# libconf.a, only one of the two copies of that one object is ever taken.

HOUSE_ROOMS += planner:planner/rules,planner/base,conf planner/rules:
planner_CFLAGS := -Iplanner -Iplanner/rules -Iplanner/base -Iconf
PLANNER_SRCS := $(sort $(wildcard planner/plan_*.c)) conf/conf_bytes.c
PLANNER_OBJS := $(PLANNER_SRCS:%.c=$(BUILD)/%.o)
PLANNER_LIB := $(BUILD)/planner/libplanner.a

ALL_TARGETS += $(PLANNER_LIB)

$(PLANNER_LIB): $(PLANNER_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# planner/base/ — the base room, below everything (planner/, every room of shim/ and of tools/ may
# use it): libc-only containers with no state of their own. base_array.h (the growable array) is
# header-only, so that the planner's archive and everything linking it need nothing more;
# base_map.h's code is $(BASE_LIB), which every binary calling the map links (libshim.so, and
# whatever links the shim's core or trace archives). Hidden visibility: linked into libshim.so,
# base_* must not become part of the preload library's exported interface.
HOUSE_ROOMS += planner/base:
planner_base_CFLAGS := -Iplanner/base -fvisibility=hidden
BASE_SRCS := $(sort $(wildcard planner/base/base_*.c))
BASE_OBJS := $(BASE_SRCS:%.c=$(BUILD)/%.o)

$(BASE_LIB): $(BASE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

ALL_TARGETS += $(BASE_LIB)
