# planner/module.mk — the swap planner, pure C: $(BUILD)/planner/libplanner.a.
# Every planner/plan_*.c belongs to the library; planner/plan.h is its one public header.
# Sizes are read with the grammar libshim's options use: conf/conf_bytes.c (libc only) is a
# member of the library too, so that everything linking the planner has it; linked beside
# libconf.a, only one of the two copies of that one object is ever taken.

HOUSE_ROOMS += planner:conf
planner_CFLAGS := -Iplanner -Iconf
PLANNER_SRCS := $(sort $(wildcard planner/plan_*.c)) conf/conf_bytes.c
PLANNER_OBJS := $(PLANNER_SRCS:%.c=$(BUILD)/%.o)
PLANNER_LIB := $(BUILD)/planner/libplanner.a

ALL_TARGETS += $(PLANNER_LIB)

$(PLANNER_LIB): $(PLANNER_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^
