# tools/shimplan.mk — shim-plan, the planner's command line ($(BUILD)/shim-plan).
# Its object gets an explicit rule so that it sees planner/plan.h and conf/conf.h (--budget is
# read as shim-report plan reads it) without touching tools_CFLAGS.

SHIMPLAN := $(BUILD)/shim-plan
ALL_TARGETS += $(SHIMPLAN)

$(BUILD)/tools/shimplan.o: tools/shimplan.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iplanner -Iconf -MMD -MP -c $< -o $@

$(SHIMPLAN): $(BUILD)/tools/shimplan.o $(PLANNER_LIB) $(CONF_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $< $(PLANNER_LIB) $(CONF_LIB) -lm
