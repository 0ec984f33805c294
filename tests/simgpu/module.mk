# tests/simgpu — the simulated CUDA driver, build/simgpu/libcuda.so.1 (+ libcuda.so).
# The runtime (libcudart.so.13) has its own fragment, runtime.mk.

# The simulated device's link model is the planner's (plan_link_place): the driver links
# libplanner.a, whose objects stay local to it (only cu* and simgpu_* are exported).
tests_simgpu_CFLAGS := $(CUDA_INC) -Itests/simgpu -Iplanner -Iplanner/rules

SIMGPU_DRIVER_SRC := $(filter-out tests/simgpu/simgpu_rt_% tests/simgpu/test_%,$(wildcard tests/simgpu/simgpu_*.c))
SIMGPU_DRIVER_OBJ := $(SIMGPU_DRIVER_SRC:%.c=$(BUILD)/%.o)
SIMGPU_LIB := $(BUILD)/simgpu/libcuda.so.1

$(SIMGPU_LIB): $(SIMGPU_DRIVER_OBJ) $(PLANNER_LIB) tests/simgpu/simgpu.map
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libcuda.so.1 -Wl,--version-script=tests/simgpu/simgpu.map \
		-o $@ $(SIMGPU_DRIVER_OBJ) $(PLANNER_LIB) $(LDFLAGS_ALL) -ldl -lpthread -lm
	ln -sf libcuda.so.1 $(BUILD)/simgpu/libcuda.so

ALL_TARGETS += $(SIMGPU_LIB)

# An older driver: the same library without some entry points, hidden from every door (dlsym
# finds none, and cuGetProcAddress answers only exported symbols). The names are made local by
# the version script: an exact name outranks the cu* pattern. For tests that the shim copes.
SIMGPU_OLD_HIDDEN := cuCtxGetDevice cuMemCreate cuMemGetAllocationGranularity cuFuncGetParamInfo \
	cuFuncGetName cuEventRecord_ptsz cuMemAllocAsync_ptsz
SIMGPU_OLD_LIB := $(BUILD)/simgpu/old/libcuda.so.1
$(BUILD)/simgpu/old/simgpu.map: tests/simgpu/module.mk
	@mkdir -p $(dir $@)
	printf '{\n  global: cu*; simgpu_*;\n  local: %s *;\n};\n' "$(SIMGPU_OLD_HIDDEN:%=%;)" >$@
$(SIMGPU_OLD_LIB): $(SIMGPU_DRIVER_OBJ) $(PLANNER_LIB) $(BUILD)/simgpu/old/simgpu.map
	$(CC) -shared -Wl,-soname,libcuda.so.1 -Wl,--version-script=$(BUILD)/simgpu/old/simgpu.map \
		-o $@ $(SIMGPU_DRIVER_OBJ) $(PLANNER_LIB) $(LDFLAGS_ALL) -ldl -lpthread -lm
ALL_TARGETS += $(SIMGPU_OLD_LIB)

# Tests of the simulator's own semantics.
SIMGPU_TESTS := $(patsubst tests/simgpu/%.c,$(BUILD)/tests/simgpu/%,$(wildcard tests/simgpu/test_sim_*.c))
$(BUILD)/tests/simgpu/test_sim_%: tests/simgpu/test_sim_%.c tests/simgpu/simgpu_test.h $(SIMGPU_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(tests_simgpu_CFLAGS) -o $@ $< -L$(BUILD)/simgpu -lcuda -lcmocka -lpthread $(LDFLAGS_ALL)
TESTS += $(SIMGPU_TESTS) tests/simgpu/test_external_program.sh tests/simgpu/test_sim_old_driver.sh tests/simgpu/test_link_shared.sh tests/simgpu/test_link_both.sh \
	tests/simgpu/test_vmm_parallel.sh tests/simgpu/test_host_clock.sh

# test_sim_caller calls the driver from a shared library of its own as well as directly
# (SIMGPU_FAIL_CALLER). No sibling calls in the library: a tail call would hide it as caller.
SIMGPU_CALLER_LIB := $(BUILD)/tests/simgpu/libtest_caller.so
$(SIMGPU_CALLER_LIB): tests/simgpu/test_caller_lib.c tests/simgpu/test_caller_lib.h $(SIMGPU_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(tests_simgpu_CFLAGS) -fno-optimize-sibling-calls -shared -o $@ $< \
		-L$(BUILD)/simgpu -lcuda $(LDFLAGS_ALL)
# test_sim_host charges the library's calls as an interposer's (SIMGPU_HOST_CALLER).
$(BUILD)/tests/simgpu/test_sim_host $(BUILD)/tests/simgpu/test_sim_caller: \
		$(BUILD)/tests/simgpu/test_sim_%: tests/simgpu/test_sim_%.c tests/simgpu/simgpu_test.h \
		$(SIMGPU_LIB) $(SIMGPU_CALLER_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(tests_simgpu_CFLAGS) -o $@ $< -L$(BUILD)/tests/simgpu -ltest_caller \
		-Wl,-rpath,'$$ORIGIN' -L$(BUILD)/simgpu -lcuda -lcmocka -lpthread $(LDFLAGS_ALL)
