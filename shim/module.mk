# shim/ — the preload library, build/libshim.so. It links conf/, the planner and the trace writer
# (libshimtrace.a from shim/trace.mk), has no DT_NEEDED on libcuda or libcudart,
# and exports only the hooks (cu*) and dlsym (shim/shim.map).

shim_CFLAGS := $(CUDA_INC) -Ishim -Iconf -Iplanner -fvisibility=hidden
SHIM_SRCS := $(filter-out shim/shim_trace_% shim/shim_path.c,$(sort $(wildcard shim/shim_*.c)))
SHIM_OBJS := $(SHIM_SRCS:%.c=$(BUILD)/%.o)
SHIM_LIB := $(BUILD)/libshim.so

$(SHIM_LIB): $(SHIM_OBJS) $(BUILD)/shim/libshimtrace.a $(CONF_LIB) $(PLANNER_LIB) shim/shim.map
	$(CC) -shared -Wl,--version-script=shim/shim.map -Wl,-z,defs -o $@ $(SHIM_OBJS) \
		$(BUILD)/shim/libshimtrace.a $(CONF_LIB) $(PLANNER_LIB) $(LDFLAGS_ALL) -ldl -lpthread -lm

ALL_TARGETS += $(SHIM_LIB)
