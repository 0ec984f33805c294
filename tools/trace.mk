# tools/trace.mk — the trace reader and shim-report's trace subcommands (summary, kernels, allocs,
# perfetto) read the format definitions in shim/shim_trace_format.h. tools/module.mk links every
# tools/report_*.c into shim-report; this fragment only adds the include path.
$(BUILD)/tools/report_%.o: tools_CFLAGS += -Ishim

# The reader alone (no subcommand entry points), for tests and the fuzz target.
TRACE_READER_SRCS := $(sort $(wildcard tools/report_trace_*.c))
TRACE_REPORT_SRCS := $(TRACE_READER_SRCS) tools/report_summary.c tools/report_kernels.c \
                     tools/report_allocs.c tools/report_perfetto.c
