# tests/shim — tests of the preload library against the simulated device.
# A new test is one file: a script tests/shim/test_NAME.sh, a cmocka test tests/shim/test_NAME.c
# (linked with the core room, the trace writer and the base room's map), or a program tests/shim/NAME_prog.c the
# scripts run (linked with the simulated runtime and driver).
tests_shim_CFLAGS := $(CUDA_INC) -Itests/simgpu -Ishim/core -Ishim/trace -Iplanner/rules -Iconf

SHIM_TEST_PROGS := $(patsubst tests/shim/%.c,$(BUILD)/tests/shim/%,$(sort $(wildcard tests/shim/*_prog.c)))
SHIM_UNIT_TESTS := $(patsubst tests/shim/%.c,$(BUILD)/tests/shim/%,$(sort $(wildcard tests/shim/test_*.c)))

# next_prog links a then b, so b's definition comes after a's in the search order.
$(BUILD)/tests/shim/next_prog: $(BUILD)/tests/shim/next_prog.o $(BUILD)/tests/shim/libnext_a.so $(BUILD)/tests/shim/libnext_b.so
	$(CC) -o $@ $< -L$(BUILD)/tests/shim -Wl,--no-as-needed -lnext_a -lnext_b -Wl,--as-needed -Wl,-rpath,'$$ORIGIN' $(LDFLAGS_ALL)

$(BUILD)/tests/shim/libnext_%.so: tests/shim/next_%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -shared -o $@ $< -ldl $(LDFLAGS_ALL)

# Every other program: the simulated runtime and driver, as far as it uses them.
$(BUILD)/tests/shim/%_prog: $(BUILD)/tests/shim/%_prog.o $(BUILD)/simgpu/libcudart.so $(BUILD)/simgpu/libcuda.so.1
	$(CC) -o $@ $< -L$(BUILD)/simgpu -Wl,--as-needed -lcudart -lcuda -lpthread -ldl $(LDFLAGS_ALL)

# The core room as an archive, so that a unit test links only the objects it needs.
SHIM_CORE_LIB := $(BUILD)/tests/shim/libshimcore.a
$(SHIM_CORE_LIB): $(SHIM_CORE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# test_scan injects malloc failures with --wrap=malloc (test_scan.c's __wrap_malloc).
$(BUILD)/tests/shim/test_scan: SHIM_UNIT_LDFLAGS := -Wl,--wrap=malloc
$(SHIM_UNIT_TESTS): $(BUILD)/tests/shim/test_%: $(BUILD)/tests/shim/test_%.o $(SHIM_CORE_LIB) $(SHIM_TRACE_LIB) $(CONF_LIB) \
                   $(BASE_LIB)
	$(CC) -o $@ $^ $(SHIM_UNIT_LDFLAGS) -lcmocka -ldl -lpthread -lm $(LDFLAGS_ALL)

ALL_TARGETS += $(SHIM_TEST_PROGS)
TESTS += $(SHIM_UNIT_TESTS) $(sort $(wildcard tests/shim/test_*.sh))

# The hostile-input campaign in full: every option with every absurd value, every special file
# (tests/shim/hostile.sh; `make test` runs it at its ci size, as test_hostile.sh).
hostile: $(ALL_TARGETS)
	@BUILD=$(BUILD) SAN=$(SAN) tests/shim/hostile.sh full
.PHONY: hostile
