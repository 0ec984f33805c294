# planner/module.mk — the swap planner, pure C: $(BUILD)/planner/libplanner.a.
# Every planner/plan_*.c belongs to the library; planner/plan.h is its one public header.

planner_CFLAGS := -Iplanner
PLANNER_SRCS := $(sort $(wildcard planner/plan_*.c))
PLANNER_OBJS := $(PLANNER_SRCS:%.c=$(BUILD)/%.o)
PLANNER_LIB := $(BUILD)/planner/libplanner.a

ALL_TARGETS += $(PLANNER_LIB)

$(PLANNER_LIB): $(PLANNER_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^
