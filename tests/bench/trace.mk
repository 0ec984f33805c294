# tests/bench/trace.mk — the trace record path's cost per record ($(BUILD)/bench/trace_bench; not a
# test: run it by hand or with `make bench-trace`; it prints a table and never fails on timing).
TRACE_BENCH := $(BUILD)/bench/trace_bench
ALL_TARGETS += $(TRACE_BENCH)

$(BUILD)/tests/bench/trace_bench.o: tests/bench/trace_bench.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SHIM_FORMAT_INC) -Itools/trace -MMD -MP -c $< -o $@

$(TRACE_BENCH): $(BUILD)/tests/bench/trace_bench.o $(TRACE_READER_LIB) $(UTIL_OBJS) \
                $(SHIM_TRACE_LIB) $(BASE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ -lpthread

.PHONY: bench-trace
bench-trace: $(TRACE_BENCH)
	$(TRACE_BENCH)
