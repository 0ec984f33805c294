# tools/shimplan.mk — shim-plan, the planner's command line ($(BUILD)/shim-plan), with the
# trace importers (tools/import*.c: json-c reads the JSON, zlib the gzip).
# Its objects get explicit rules so that they see planner/plan.h and conf/conf.h (--budget is
# read as shim-report plan reads it) without touching tools_CFLAGS.

SHIMPLAN := $(BUILD)/shim-plan
ALL_TARGETS += $(SHIMPLAN)
IMPORT_SRCS := $(sort $(wildcard tools/import*.c))
IMPORT_OBJS := $(IMPORT_SRCS:%.c=$(BUILD)/%.o)
IMPORT_LIBS := -ljson-c -lz

$(BUILD)/tools/shimplan.o $(IMPORT_OBJS): $(BUILD)/tools/%.o: tools/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iplanner -Iconf -MMD -MP -c $< -o $@

$(SHIMPLAN): $(BUILD)/tools/shimplan.o $(IMPORT_OBJS) $(PLANNER_LIB) $(CONF_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $< $(IMPORT_OBJS) $(PLANNER_LIB) $(CONF_LIB) $(IMPORT_LIBS) -lm
