# tests/workloads — training-like programs for the simulated device (docs/simulated-device.md).
# train_sim links the simulated runtime and driver, and finds them through its run path.

tests_workloads_CFLAGS := $(CUDA_INC) -Itests/simgpu

# The run path of the programs built for the simulated device: $(BUILD)/simgpu, beside them, so
# that `build/train_sim` runs without LD_LIBRARY_PATH. RUNPATH (new dtags), not RPATH, so that
# LD_LIBRARY_PATH still wins (the tests pick build/simgpu/old that way). Never for libshim.so,
# which must resolve the host process's own libcuda.so.1.
SIMGPU_RUNPATH := -Wl,--enable-new-dtags,-rpath,'$$ORIGIN/simgpu'

TRAIN_SIM_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(sort $(wildcard tests/workloads/train_sim*.c)))

# Each program also depends on this file, whose link lines (the run path) it was made with.
$(BUILD)/train_sim: $(TRAIN_SIM_OBJS) $(BUILD)/simgpu/libcudart.so $(BUILD)/simgpu/libcuda.so.1 \
                    tests/workloads/module.mk
	$(CC) $(LDFLAGS_ALL) -o $@ $(TRAIN_SIM_OBJS) $(SIMGPU_RUNPATH) -L$(BUILD)/simgpu -lcudart -lcuda

ALL_TARGETS += $(BUILD)/train_sim

# threads_sim: many threads, each with its own stream and buffer, checked word by word.
$(BUILD)/threads_sim: $(BUILD)/tests/workloads/threads_sim.o $(BUILD)/simgpu/libcuda.so.1 \
                      tests/workloads/module.mk
	$(CC) $(LDFLAGS_ALL) -o $@ $< $(SIMGPU_RUNPATH) -L$(BUILD)/simgpu -lcuda -lpthread

ALL_TARGETS += $(BUILD)/threads_sim

# replay: runs any iteration model (planner/MODEL-FORMAT.md) as a program on the simulated
# device, one kernel per operation at its duration; parsed with the planner library.
REPLAY_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(sort $(wildcard tests/workloads/replay_*.c)))
$(REPLAY_OBJS): tests_workloads_CFLAGS += -Iplanner -Iplanner/rules

$(BUILD)/replay: $(REPLAY_OBJS) $(PLANNER_LIB) $(CONF_LIB) $(BUILD)/simgpu/libcudart.so \
                 $(BUILD)/simgpu/libcuda.so.1 tests/workloads/module.mk
	$(CC) $(LDFLAGS_ALL) -o $@ $(REPLAY_OBJS) $(PLANNER_LIB) $(CONF_LIB) $(SIMGPU_RUNPATH) \
		-L$(BUILD)/simgpu -lcudart -lcuda -lm

ALL_TARGETS += $(BUILD)/replay

# twin: writes the model of a twin of one of the H100's two PyTorch jobs (twin.h), for replay.
TWIN_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(sort $(wildcard tests/workloads/twin_*.c)))
$(TWIN_OBJS): tests_workloads_CFLAGS += -Iplanner -Iplanner/rules

$(BUILD)/twin: $(TWIN_OBJS) $(PLANNER_LIB) $(CONF_LIB) tests/workloads/module.mk
	$(CC) $(LDFLAGS_ALL) -o $@ $(TWIN_OBJS) $(PLANNER_LIB) $(CONF_LIB) -lm

ALL_TARGETS += $(BUILD)/twin

# A new test is one file: tests/workloads/test_NAME.sh.
TESTS += $(sort $(wildcard tests/workloads/test_*.sh))
