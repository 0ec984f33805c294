# tests/trace — the trace writer (shim/trace/, $(SHIM_TRACE_LIB)) and the reader and
# report (tools/trace/, tools/report/): cmocka unit tests, the shim-report end-to-end scripts on
# generated and recorded traces (bounded ones too), and the reader's fuzz target. A new test is
# one file: every tests/trace/test_*.c is a cmocka program linked with the writer (and the base
# room's map it uses), the reader, the report and trace_bytes.c (traces built byte by byte,
# trace_bytes.h); every tests/trace/test_*.sh is a script (each says what it checks in its
# header).
# $(SHIM_FORMAT_INC) is the writer's room (shim/trace/): its own headers too, for the writer's tests.
tests_trace_CFLAGS = $(SHIM_FORMAT_INC) -Iplanner/base -Itools/trace -Itools/report

TRACE_TEST_NAMES := $(basename $(notdir $(wildcard tests/trace/test_*.c)))
TRACE_UNIT_TESTS := $(TRACE_TEST_NAMES:%=$(BUILD)/tests/trace/%)
$(TRACE_UNIT_TESTS): $(BUILD)/tests/trace/%: $(BUILD)/tests/trace/%.o \
                     $(BUILD)/tests/trace/trace_bytes.o $(REPORT_LIB) $(TRACE_READER_LIB) \
                     $(UTIL_OBJS) $(SHIM_TRACE_LIB) $(BASE_LIB)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ -lcmocka -lpthread

# Writes traces with known contents (the scripts, the fuzz seeds).
TRACE_GEN := $(BUILD)/trace_gen
$(TRACE_GEN): $(BUILD)/tests/trace/trace_gen.o $(SHIM_TRACE_LIB) $(BASE_LIB)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ -lpthread
ALL_TARGETS += $(TRACE_GEN)

TESTS += $(TRACE_UNIT_TESTS) $(sort $(wildcard tests/trace/test_*.sh))

# The reader fuzzed with every report that reads a whole trace: the subcommands, the step model
# (it reads the planner too, with its options: tools/planopt/, which reads conf/) and the HTML
# page with its style sheet and script as built. Not report_main.c (libFuzzer has the main) nor
# the two subcommands that read the configuration or plan (config, plan).
FUZZ_TRACE := $(BUILD)/fuzz_trace
FUZZ_TRACE_SRCS := $(TRACE_READER_SRCS) $(SHIM_FIGURES_SRC) $(UTIL_SRCS) $(PLANNER_SRCS) \
                   $(HTML_ASSETS_C) $(PLANOPT_SRCS) $(filter-out conf/conf_bytes.c,$(CONF_SRCS)) \
                   $(filter-out %/report_main.c %/report_config.c %/report_plan.c,$(REPORT_SRCS))
$(FUZZ_TRACE): tests/trace/fuzz_trace.c tests/fuzz.h $(FUZZ_TRACE_SRCS) $(wildcard tools/trace/*.h) \
               $(wildcard tools/report/*.h) $(SHIM_FORMAT_HDRS) planner/plan_build.h \
               planner/plan_internal.h tools/planopt/planopt.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(SHIM_FORMAT_INC) -Itools/trace -Itools/report -Itools/util \
		-Itools/planopt -Iplanner/base -Iplanner -Iplanner/rules -Iconf -Itests -o $@ tests/trace/fuzz_trace.c $(FUZZ_TRACE_SRCS) -lm
FUZZ_TARGETS += $(FUZZ_TRACE)
