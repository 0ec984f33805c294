# tests/shim — tests of the preload library against the simulated device.
tests_shim_CFLAGS := $(CUDA_INC) -Itests/simgpu -Ishim -Iconf

SHIM_TEST_PROGS := $(BUILD)/tests/shim/doors_prog $(BUILD)/tests/shim/next_prog $(BUILD)/tests/shim/shim_prog \
	$(BUILD)/tests/shim/launch_prog $(BUILD)/tests/shim/free_wait_prog $(BUILD)/tests/shim/pin_prog

$(BUILD)/tests/shim/doors_prog: $(BUILD)/tests/shim/doors_prog.o $(BUILD)/simgpu/libcudart.so $(BUILD)/simgpu/libcuda.so.1
	$(CC) -o $@ $< -L$(BUILD)/simgpu -lcudart -lcuda -ldl $(LDFLAGS_ALL)

$(BUILD)/tests/shim/libnext_%.so: tests/shim/next_%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -shared -o $@ $< -ldl $(LDFLAGS_ALL)

$(BUILD)/tests/shim/shim_prog: $(BUILD)/tests/shim/shim_prog.o $(BUILD)/simgpu/libcuda.so.1
	$(CC) -o $@ $< -L$(BUILD)/simgpu -lcuda -lpthread -ldl $(LDFLAGS_ALL)

$(BUILD)/tests/shim/launch_prog: $(BUILD)/tests/shim/launch_prog.o $(BUILD)/simgpu/libcuda.so.1
	$(CC) -o $@ $< -L$(BUILD)/simgpu -lcuda $(LDFLAGS_ALL)

$(BUILD)/tests/shim/free_wait_prog: $(BUILD)/tests/shim/free_wait_prog.o $(BUILD)/simgpu/libcuda.so.1
	$(CC) -o $@ $< -L$(BUILD)/simgpu -lcuda -lpthread $(LDFLAGS_ALL)

$(BUILD)/tests/shim/pin_prog: $(BUILD)/tests/shim/pin_prog.o $(BUILD)/simgpu/libcuda.so.1
	$(CC) -o $@ $< -L$(BUILD)/simgpu -lcuda $(LDFLAGS_ALL)

# next_prog links a then b, so b's definition comes after a's in the search order.
$(BUILD)/tests/shim/next_prog: $(BUILD)/tests/shim/next_prog.o $(BUILD)/tests/shim/libnext_a.so $(BUILD)/tests/shim/libnext_b.so
	$(CC) -o $@ $< -L$(BUILD)/tests/shim -Wl,--no-as-needed -lnext_a -lnext_b -Wl,--as-needed -Wl,-rpath,'$$ORIGIN' $(LDFLAGS_ALL)

ALL_TARGETS += $(SHIM_TEST_PROGS)
TESTS += tests/shim/test_doors.sh tests/shim/test_behaviour.sh tests/shim/test_train_sim_shim.sh \
	tests/shim/test_log_file.sh tests/shim/test_progress.sh \
	tests/shim/test_old_driver.sh tests/shim/test_wide_launch.sh tests/shim/test_module_reuse.sh \
	tests/shim/test_free_wait.sh tests/shim/test_pin.sh
# shim-run, the launcher (tools/run/shimrun*.c), on train_sim and on small shell commands.
TESTS += tests/shim/test_shim_run.sh

# The launch scan against an oracle, with the shim's own objects; malloc failures are injected
# with --wrap=malloc (test_scan.c's __wrap_malloc).
$(BUILD)/tests/shim/test_scan: $(BUILD)/tests/shim/test_scan.o $(BUILD)/shim/shim_scan.o \
		$(BUILD)/shim/shim_registry.o $(BUILD)/shim/shim_log.o $(BUILD)/shim/shim_path.o
	$(CC) -o $@ $^ -Wl,--wrap=malloc -lcmocka -lpthread $(LDFLAGS_ALL)
TESTS += $(BUILD)/tests/shim/test_scan

# The path expander (trace.path, log.file) and the rank parser: pure functions.
$(BUILD)/tests/shim/test_path: $(BUILD)/tests/shim/test_path.o $(BUILD)/shim/shim_path.o
	$(CC) -o $@ $^ -lcmocka $(LDFLAGS_ALL)
TESTS += $(BUILD)/tests/shim/test_path
