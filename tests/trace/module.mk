# tests/trace — the trace writer (shim/trace/shim_trace_*.c) and reader (tools/report_trace_*.c): unit
# tests, the shim-report end-to-end tests on generated and recorded traces (bounded ones too),
# and the reader's fuzz target.
# (This fragment is read before tools/*.mk, so it names the reader's sources itself.)
tests_trace_CFLAGS := -Ishim/trace -Itools

TRACE_REPORT_SRCS := $(sort $(wildcard tools/report_trace_*.c)) tools/report_summary.c \
                     tools/report_summary_ranks.c tools/report_ranks.c \
                     tools/report_summary_plan.c \
                     tools/report_kernels.c tools/report_allocs.c tools/report_moves.c \
                     tools/report_perfetto.c tools/report_memviz.c tools/report_pickle.c
TRACE_REPORT_OBJS := $(TRACE_REPORT_SRCS:%.c=$(BUILD)/%.o)

# trace_bytes.o: traces built byte by byte (trace_bytes.h), for the reader's tests.
TRACE_UNIT_TESTS := $(BUILD)/tests/trace/test_trace_writer $(BUILD)/tests/trace/test_trace_reader \
                    $(BUILD)/tests/trace/test_trace_moves $(BUILD)/tests/trace/test_trace_plan \
                    $(BUILD)/tests/trace/test_pickle
$(TRACE_UNIT_TESTS): $(BUILD)/tests/trace/%: $(BUILD)/tests/trace/%.o $(TRACE_REPORT_OBJS) \
                     $(BUILD)/tests/trace/trace_bytes.o $(SHIM_TRACE_LIB)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ -lcmocka -lpthread

# Writes traces with known contents (test_report.sh, the fuzz seeds).
TRACE_GEN := $(BUILD)/trace_gen
$(TRACE_GEN): $(BUILD)/tests/trace/trace_gen.o $(SHIM_TRACE_LIB)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ -lpthread
ALL_TARGETS += $(TRACE_GEN)

TESTS += $(TRACE_UNIT_TESTS) tests/trace/test_report.sh
# shim-report summary of several traces: the ranks side by side.
TESTS += tests/trace/test_report_ranks.sh
# shim-report model and plan on traces of train_sim recorded by libshim (needs both built).
TESTS += tests/trace/test_report_model.sh
# The in-process plan and the steps under it in traces libshim wrote in auto mode.
TESTS += tests/trace/test_report_plan.sh
# shim-report memviz (memory_viz snapshots, checked by memviz_check.py) and perfetto (the Chrome
# trace event format, checked by chrome_trace_check.py) on generated traces and on traces of
# train_sim recorded by libshim.
TESTS += tests/trace/test_report_memviz.sh tests/trace/test_report_perfetto.sh
# shim-report html of the demo workload (and of generated traces), rendered in headless
# Chromium: the charts drew, the page's numbers are summary --json's, no script error
# (tests/trace/check_report_html.py reads the DOM). Skips the browser checks without chromium.
TESTS += tests/trace/test_report_html.sh
# Bounded traces (trace.max_bytes): 10,000 train_sim steps within 4 MiB, summarised steps'
# figures against train_sim's, libshim's exit line and an unbounded trace, a file size limit.
TESTS += tests/trace/test_trace_bounded.sh
# shim-report html of four ranks (trace_gen, TRACE_GEN_RANK 0 to 3): the ranks side by side and
# each rank's part, against summary --json TRACE... and each trace's own (check_report_html.py).
TESTS += tests/trace/test_report_html_ranks.sh

# The step model (shim-report model) is fuzzed with the reader: it reads the planner too.
FUZZ_TRACE := $(BUILD)/fuzz_trace
# So is the HTML page (shim-report html), with its style sheet and script as built.
FUZZ_TRACE_SRCS := $(TRACE_REPORT_SRCS) tools/report_model.c tools/report_model_opts.c \
                   $(PLANNER_SRCS) $(sort $(wildcard tools/report_html*.c)) $(HTML_ASSETS_C)
$(FUZZ_TRACE): tests/trace/fuzz_trace.c $(FUZZ_TRACE_SRCS) tools/report_trace.h tools/report_html.h \
               tools/report_pickle.h \
               shim/trace/shim_trace_format.h planner/plan_build.h planner/plan_internal.h conf/conf_bytes.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Ishim/trace -Itools -Iplanner -Iconf -o $@ tests/trace/fuzz_trace.c \
		$(FUZZ_TRACE_SRCS) -lm
FUZZ_TARGETS += $(FUZZ_TRACE)
