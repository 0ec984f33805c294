# tests/simgpu/runtime.mk — the simulated CUDA runtime ($(BUILD)/simgpu/libcudart.so.13, SONAME
# libcudart.so.13, plus the libcudart.so link) and its tests. The runtime reaches the simulated
# driver only through dlopen("libcuda.so.1") + cuGetProcAddress_v2: it is never linked
# against libcuda (test_runtime checks that there is no DT_NEEDED on it).
#
# simgpu_rt_ptsz.c defines CUDA_API_PER_THREAD_DEFAULT_STREAM itself, so the runtime header
# gives its functions the _ptsz/_ptds names and prototypes. Only cuda* symbols are exported
# (a version script written beside the library).

SIMGPU_RT_SRCS := $(sort $(wildcard tests/simgpu/simgpu_rt_*.c))
SIMGPU_RT_OBJS := $(SIMGPU_RT_SRCS:%.c=$(BUILD)/%.o)
SIMGPU_RT_LIB := $(BUILD)/simgpu/libcudart.so.13
SIMGPU_RT_TESTS := $(patsubst tests/simgpu/%.c,$(BUILD)/tests/simgpu/%,\
	tests/simgpu/test_runtime.c $(sort $(wildcard tests/simgpu/test_rt_*.c)))

ALL_TARGETS += $(SIMGPU_RT_LIB) $(BUILD)/simgpu/libcudart.so $(SIMGPU_RT_TESTS)
TESTS += $(SIMGPU_RT_TESTS)

$(SIMGPU_RT_LIB): $(SIMGPU_RT_OBJS)
	@mkdir -p $(dir $@)
	printf '{ global: cuda*; local: *; };\n' >$(BUILD)/simgpu/libcudart.map
	$(CC) -shared -Wl,-soname,libcudart.so.13 -Wl,--version-script,$(BUILD)/simgpu/libcudart.map \
		$(LDFLAGS_ALL) -o $@ $(SIMGPU_RT_OBJS) -ldl -lpthread

$(BUILD)/simgpu/libcudart.so: $(SIMGPU_RT_LIB)
	ln -sf libcudart.so.13 $@

# The runtime's tests, test_runtime.c and test_rt_*.c: each is one file, built by one rule.
$(SIMGPU_RT_TESTS): $(BUILD)/tests/simgpu/%: $(BUILD)/tests/simgpu/%.o $(SIMGPU_RT_LIB) \
		$(BUILD)/simgpu/libcudart.so $(BUILD)/simgpu/libcuda.so.1
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $< -L$(BUILD)/simgpu -lcudart -lcuda -lcmocka -lpthread
