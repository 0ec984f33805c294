# tools/ — shim-report: report_main.c dispatches to one file per subcommand (report_*.c).
# `model` and `plan` use the planner (planner/plan_build.h), sizes are parsed by conf/.
# (tools/shimplan.mk is a separate fragment owned elsewhere.)
REPORT_SRCS := $(sort $(wildcard tools/report_*.c))
REPORT_OBJS := $(REPORT_SRCS:%.c=$(BUILD)/%.o)
SHIM_REPORT := $(BUILD)/shim-report

# Pattern-specific, so that other fragments' tools_CFLAGS settings do not clash with ours.
$(BUILD)/tools/report_%.o: tools_CFLAGS += -Iconf -Iplanner

$(SHIM_REPORT): $(REPORT_OBJS) $(CONF_LIB) $(PLANNER_LIB)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ -lm

ALL_TARGETS += $(SHIM_REPORT)

# shim-run, the launcher (tools/shimrun*.c): runs a command under the libshim.so beside it and
# summarises its traces with the shim-report beside it. It reads the configuration with conf/.
SHIM_RUN := $(BUILD)/shim-run
SHIM_RUN_OBJS := $(BUILD)/tools/shimrun.o $(BUILD)/tools/shimrun_traces.o
$(SHIM_RUN_OBJS): tools_CFLAGS += -Iconf

$(SHIM_RUN): $(SHIM_RUN_OBJS) $(CONF_LIB)
	$(CC) $(LDFLAGS_ALL) -o $@ $^

ALL_TARGETS += $(SHIM_RUN)
