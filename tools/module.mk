# tools/ — shim-report: report_main.c dispatches to one file per subcommand (report_*.c).
# (tools/shimplan.mk is a separate fragment owned elsewhere.)
REPORT_SRCS := $(sort $(wildcard tools/report_*.c))
REPORT_OBJS := $(REPORT_SRCS:%.c=$(BUILD)/%.o)
SHIM_REPORT := $(BUILD)/shim-report

# Pattern-specific, so that other fragments' tools_CFLAGS settings do not clash with ours.
$(BUILD)/tools/report_%.o: tools_CFLAGS += -Iconf

$(SHIM_REPORT): $(REPORT_OBJS) $(CONF_LIB)
	$(CC) $(LDFLAGS_ALL) -o $@ $^

ALL_TARGETS += $(SHIM_REPORT)
