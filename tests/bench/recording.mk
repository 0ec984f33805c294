# tests/bench/recording — what recording costs per launch (not a test: `make bench-recording`).
$(BUILD)/bench/null/libcuda.so.1: tests/bench/null_driver.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CUDA_INC) -shared -Wl,-soname,libcuda.so.1 -o $@ $< $(LDFLAGS_ALL)
	ln -sf libcuda.so.1 $(dir $@)libcuda.so

$(BUILD)/bench/launch_bench: tests/bench/launch_bench.c $(BUILD)/bench/null/libcuda.so.1
	$(CC) $(ALL_CFLAGS) $(CUDA_INC) -o $@ $< -L$(BUILD)/bench/null -lcuda $(LDFLAGS_ALL)

.PHONY: bench-recording
bench-recording:
	tests/bench/recording_bench.sh

# Built with everything: tests/shim/test_old_driver.sh runs the shim on the null driver.
ALL_TARGETS += $(BUILD)/bench/null/libcuda.so.1 $(BUILD)/bench/launch_bench
