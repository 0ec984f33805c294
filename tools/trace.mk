# tools/trace.mk — the trace reader and shim-report's trace subcommands (summary, kernels,
# allocs, moves, perfetto) read the format definitions in shim/trace/shim_trace_format.h.
# tools/module.mk links every tools/report_*.c into shim-report; this fragment only adds the
# include path.
$(BUILD)/tools/report_%.o: tools_CFLAGS += -Ishim/trace
